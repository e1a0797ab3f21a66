"""runner="dask" on a real cluster: a ``dask scheduler`` and two ``dask worker``
processes on 127.0.0.1 (separate processes, no shared Python state), writing into a moto
S3 server started here. The bytes must be those the local runner writes on disk, also
when a worker is killed mid-run; an unreachable scheduler is one line, within seconds."""

import os
import subprocess
import sys
import threading
import time

import pytest
from distributed import Client
from servers import dask_cluster, free_port, s3_filesystem, start_dask_worker, stop

from tf1compat import cifar10, convert
from tf1compat.errors import PipelineConfigError
from tf1compat.records.example import make_example

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]
MANIFEST = ".tf1compat-manifest.json"


@pytest.fixture(scope="module")
def s3():
    with s3_filesystem() as fs:
        fs.mkdir("cluster")
        yield fs


@pytest.fixture(scope="module")
def cluster(s3, tmp_path_factory):
    """``(scheduler address, env of its processes)``; the workers import tf1compat and
    this module (its functions reach them by reference) from this process's sys.path."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    with dask_cluster(env, 2, tmp_path_factory.mktemp("dask")) as (address, _):
        yield address, env


def objects(s3, prefix):
    s3.invalidate_cache()
    return {path[len(prefix) + 1:]: s3.cat_file(path) for path in s3.find(prefix)}


def files_of(directory):
    return {name: (directory / name).read_bytes() for name in sorted(os.listdir(directory))}


def slow_example(i):
    """An item's record, slowly: a worker is still busy when the test kills it."""
    time.sleep(0.02)
    return make_example({"i": i, "text": f"item {i}".encode() * (i % 5)})


def test_dask_writes_the_bytes_of_the_local_runner(s3, cluster, tmp_path):
    address, _ = cluster
    source = cifar10.make_synthetic(tmp_path / "cifar", 60, 20, seed=4)
    cifar10.convert(source, tmp_path / "disk", num_shards=3, workers=0, quiet=True)
    summary = cifar10.convert(source, "s3://cluster/cifar", num_shards=3, runner="dask",
                              scheduler=address, quiet=True)
    assert summary.counts == {"train": 60, "test": 20}
    stored = objects(s3, "cluster/cifar")
    stored.pop(MANIFEST)
    assert stored == files_of(tmp_path / "disk")

    items = [{"i": i, "text": b"x" * (i % 9)} for i in range(2500)]     # 3 parts a shard
    convert.write_sharded(items, tmp_path / "w" / "t.tfrecord", 2, workers=0,
                          encode=make_example)
    with Client(address, set_as_default=False) as client:       # a client of the user's
        convert.write_sharded(items, "s3://cluster/w/t.tfrecord", 2, encode=make_example,
                              runner="dask", scheduler=client)
        assert client.status == "running"                       # left open for its owner
    stored = objects(s3, "cluster/w")
    stored.pop(MANIFEST)
    assert stored == files_of(tmp_path / "w")


def test_a_failing_task_keeps_its_type_and_names_its_shard(s3, cluster):
    address, _ = cluster
    items = [{"i": i} for i in range(12)]
    items[7] = {"i": 7j}                # make_example refuses complex numbers
    with pytest.raises(TypeError, match="feature 'i': got a complex") as e:
        convert.write_sharded(items, "s3://cluster/bad/t.tfrecord", 2, encode=make_example,
                              runner="dask", scheduler=address)
    assert e.value.task == "t-00001-of-00002.tfrecord" and e.value.input_index == 3
    assert e.value.input == {"i": 7j}
    s3.invalidate_cache()
    assert not s3.exists("cluster/bad")     # all or nothing: no staging left either


def test_a_worker_killed_mid_run_and_the_job_completes_with_the_same_bytes(s3, cluster,
                                                                         tmp_path):
    address, env = cluster
    convert.write_sharded(range(600), tmp_path / "disk" / "t.tfrecord", 6, workers=0,
                          encode=slow_example)
    with Client(address, set_as_default=False) as client:
        before = set(client.scheduler_info()["workers"])
        extra = start_dask_worker(address, env, tmp_path)
        try:
            client.wait_for_workers(3, timeout=60)
            (victim,) = set(client.scheduler_info()["workers"]) - before
            failure = []

            def run():
                try:
                    convert.write_sharded(range(600), "s3://cluster/k/t.tfrecord", 6,
                                          encode=slow_example, runner="dask",
                                          scheduler=address)
                except BaseException as e:      # raised in the test below
                    failure.append(e)

            thread = threading.Thread(target=run)
            thread.start()
            deadline = time.monotonic() + 60
            while not client.processing(workers=[victim])[victim]:
                assert time.monotonic() < deadline, "the extra worker got no task"
                time.sleep(0.05)
            extra.kill()                        # SIGKILL, mid-task
            extra.wait()
            thread.join(timeout=120)
            assert not thread.is_alive() and not failure, failure
        finally:
            stop(extra)
    stored = objects(s3, "cluster/k")
    stored.pop(MANIFEST)
    assert stored == files_of(tmp_path / "disk")


def test_an_unreachable_scheduler_is_one_line_within_seconds(tmp_path):
    source = cifar10.make_synthetic(tmp_path / "cifar", 10, 10, seed=1)
    address = f"tcp://127.0.0.1:{free_port()}"
    start = time.monotonic()
    run = subprocess.run(
        [sys.executable, "-m", "tf1compat", "convert-cifar10", str(source),
         str(tmp_path / "out"), "--runner", "dask", "--scheduler", address],
        capture_output=True, text=True, timeout=60,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert time.monotonic() - start < 20
    assert run.returncode == 2, run.stderr
    assert run.stderr.startswith(f"tf1compat convert-cifar10: error: cannot reach the Dask "
                                 f"scheduler at {address} within 5 s")
    assert run.stderr.count("\n") == 1
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("arguments, argument", [
    ({"runner": "dask"}, "scheduler"),
    ({"runner": "dask", "scheduler": "tcp://h:1", "workers": 2}, "workers"),
    ({"runner": "local", "scheduler": "tcp://h:1"}, "scheduler"),
    ({"runner": "dask", "scheduler": 8786}, "scheduler")])
def test_dask_arguments_that_do_not_fit_are_named(arguments, argument):
    with pytest.raises(PipelineConfigError) as e:
        convert.build_runner(**arguments)
    assert e.value.argument == argument
