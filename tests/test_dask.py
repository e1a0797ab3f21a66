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
from tf1compat.errors import DaskClusterError, PipelineConfigError
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


@pytest.mark.parametrize("address", ["tcp:/x", "localhost", "tcp://127.0.0.1:notaport",
                                     "tcp://127.0.0.1:99999", "udp://127.0.0.1:8786", ":8786",
                                     "tcp://::1:8786"])
def test_a_malformed_scheduler_address_is_one_line_at_once(tmp_path, address):
    """Refused before Dask sees it: a malformed address made distributed.Client fail
    half-made, and its clean-up stalled 10 s, then printed a traceback."""
    run = subprocess.run(
        [sys.executable, "-m", "tf1compat", "convert-images", str(tmp_path), "s3://b/out",
         "--name", "f", "--runner", "dask", "--scheduler", address],
        capture_output=True, text=True, timeout=60)
    assert run.returncode == 2
    assert run.stderr == (
        "tf1compat convert-images: error: --scheduler must be a distributed.Client or a "
        "scheduler address such as 'tcp://host:8786' (protocol tcp, tls, ws, wss, ucx or "
        f"inproc), got {address!r}\n")
    with pytest.raises(PipelineConfigError) as e:
        convert.build_runner("dask", scheduler=address)
    assert e.value.argument == "scheduler" and not isinstance(e.value, TypeError)


def test_a_scheduler_of_the_wrong_type_is_a_type_error():
    """One check, one behaviour: the wrong kind of value is an ArgumentTypeError (a
    TypeError) whatever the runner, a bad value of the right kind a PipelineConfigError."""
    from tf1compat.errors import ArgumentTypeError
    for value in (8786, b"tcp://h:1", ["tcp://h:1"]):
        with pytest.raises(ArgumentTypeError) as e:
            convert.build_runner("dask", scheduler=value)
        assert isinstance(e.value, TypeError) and e.value.argument == "scheduler"
    with pytest.raises(ArgumentTypeError) as e:
        convert.build_runner("local", workers="2")
    assert isinstance(e.value, TypeError) and e.value.argument == "workers"


def own_cluster(request, tmp_path, env=None, worker_command=None):
    """A scheduler of this test and one worker (``worker_command`` instead of a plain
    ``dask worker``); returns ``(address, scheduler process, worker process)``."""
    from servers import start, wait_for_port
    env = env or {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    port = free_port()
    address = f"tcp://127.0.0.1:{port}"
    scheduler = start([sys.executable, "-m", "distributed.cli.dask_scheduler", "--host",
                       "127.0.0.1", "--port", str(port), "--no-dashboard"], env)
    request.addfinalizer(lambda: stop(scheduler))
    wait_for_port(port, scheduler)
    worker = (start(worker_command(address), env) if worker_command
              else start_dask_worker(address, env, tmp_path))
    request.addfinalizer(lambda: stop(worker))
    with Client(address, timeout=30, set_as_default=False) as client:
        client.wait_for_workers(1, timeout=90)
    return address, scheduler, worker


def worker_lacking(module):
    """The command of a real dask worker (for own_cluster) on which ``module`` cannot
    be imported."""
    def command(address):
        code = (f"import sys; sys.modules[{module!r}] = None\n"
                "from distributed.cli.dask_worker import main\n"
                "sys.argv[0] = 'dask-worker'; main()")
        return [sys.executable, "-c", code, address, "--host", "127.0.0.1", "--nthreads", "1",
                "--no-nanny", "--no-dashboard"]
    return command


def test_a_worker_that_cannot_import_tf1compat_is_named_before_any_task(request, tmp_path):
    """Such a worker died unpickling its first task and the conversion waited forever."""
    address, _, _ = own_cluster(request, tmp_path,   # importing tf1compat fails there
                                worker_command=worker_lacking("tf1compat"))
    source = cifar10.make_synthetic(tmp_path / "cifar", 10, 10, seed=1)
    started = time.monotonic()
    run = subprocess.run([sys.executable, "-m", "tf1compat", "convert-cifar10", str(source),
                          str(tmp_path / "out"), "--runner", "dask", "--scheduler", address],
                         capture_output=True, text=True, timeout=120)
    assert time.monotonic() - started < 60
    assert run.returncode == 2 and run.stderr.count("\n") == 1, run.stderr
    assert run.stderr.startswith("tf1compat convert-cifar10: error: Dask worker tcp://127.0.0.1:")
    assert (f"of the scheduler at {address} cannot import what the tasks need "
            "(ModuleNotFoundError: No module named 'tf1compat.convert'") in run.stderr
    assert not (tmp_path / "out").exists()


def test_a_worker_without_the_stores_filesystem_is_named_before_any_task(request, s3,
                                                                         tmp_path):
    """A worker that has tf1compat but not s3fs, for a conversion into s3://: named with
    the package it lacks and the extra that brings it, before any task, nothing written
    (the store's clean-up, looking for a journal that is not there, said 'cannot reach
    the store' with the worker's error as the reason)."""
    address, _, _ = own_cluster(request, tmp_path, worker_command=worker_lacking("s3fs"))
    source = cifar10.make_synthetic(tmp_path / "cifar", 10, 10, seed=1)
    started = time.monotonic()
    run = subprocess.run([sys.executable, "-m", "tf1compat", "convert-cifar10", str(source),
                          "s3://cluster/no-s3fs", "--runner", "dask", "--scheduler", address],
                         capture_output=True, text=True, timeout=120)
    assert time.monotonic() - started < 60
    assert run.returncode == 2 and run.stderr.count("\n") == 1, run.stderr
    assert run.stderr.startswith("tf1compat convert-cifar10: error: Dask worker tcp://127.0.0.1:")
    assert (f"of the scheduler at {address} cannot import what the tasks need "
            "(ModuleNotFoundError: import of s3fs halted") in run.stderr
    assert "install tf1compat on every worker (with the extra of the output's filesystem, " \
        "e.g. tf1compat[s3]); nothing was committed" in run.stderr
    s3.invalidate_cache()
    assert s3.find("cluster/no-s3fs") == []


def test_a_worker_dying_on_its_first_task_ends_the_run(request, tmp_path, monkeypatch):
    """The tasks' functions come from a module the scheduler has and the worker lacks:
    the worker dies unpickling its first task, the scheduler then waits for a worker
    forever; the run ends after NO_WORKER_SECONDS, naming the worker that left."""
    import tf1compat.convert.dask as dask_runner
    (tmp_path / "module").mkdir()
    (tmp_path / "module" / "site_encoders.py").write_text(
        "from tf1compat.records.example import make_example\n"
        "def encode(i):\n    return make_example({'i': i})\n")
    paths = os.pathsep.join(sys.path)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path / "module"), paths])}
    address, _, _ = own_cluster(request, tmp_path, env, lambda address: [
        sys.executable, "-c", "import sys; sys.path[:] = [p for p in sys.path if 'module' "
        "not in p]; from distributed.cli.dask_worker import main; sys.argv[0] = 'w'; main()",
        address, "--host", "127.0.0.1", "--nthreads", "1", "--no-nanny", "--no-dashboard"])
    monkeypatch.syspath_prepend(str(tmp_path / "module"))
    monkeypatch.setattr(dask_runner, "NO_WORKER_SECONDS", 5)
    import site_encoders
    started = time.monotonic()
    with pytest.raises(DaskClusterError) as e:
        convert.write_sharded(range(20), tmp_path / "out" / "t.tfrecord", 2,
                              encode=site_encoders.encode, runner="dask", scheduler=address)
    assert time.monotonic() - started < 60
    assert str(e.value).startswith(f"the Dask scheduler at {address} has had no worker for "
                                   "5 s (this run saw tcp://127.0.0.1:")
    assert e.value.scheduler == address and len(e.value.workers_lost) == 1
    assert isinstance(e.value, ConnectionError) and not (tmp_path / "out").exists()


def test_the_scheduler_dying_mid_run_is_one_line(request, tmp_path):
    """SIGKILL to the scheduler while a conversion's tasks run: one line and exit 2
    (it was a 57-line FutureCancelledError traceback), nothing committed."""
    address, scheduler, _ = own_cluster(request, tmp_path)
    source = cifar10.make_synthetic(tmp_path / "cifar", 3000, 10, seed=1)
    run = subprocess.Popen(
        [sys.executable, "-m", "tf1compat", "convert-cifar10", str(source),
         str(tmp_path / "out"), "--shards", "30", "--runner", "dask", "--scheduler", address],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    request.addfinalizer(run.kill)
    with Client(address, set_as_default=False) as client:
        deadline = time.monotonic() + 60
        while not any(client.processing().values()):
            assert time.monotonic() < deadline, "no task started"
            time.sleep(0.05)
    stop(scheduler)
    killed = time.monotonic()
    out, err = run.communicate(timeout=120)
    assert time.monotonic() - killed < 30
    assert run.returncode == 2 and out == "", err
    assert err.splitlines()[-1] == (
        f"tf1compat convert-cifar10: error: the Dask scheduler at {address} was lost "
        "(FutureCancelledError: the scheduler stopped or died, or the network failed); "
        "nothing was committed")
    assert "Traceback" not in err, err
    assert not (tmp_path / "out").exists()


def test_a_scheduler_that_stops_answering_ends_the_run(request, tmp_path, monkeypatch):
    """SIGSTOP to the scheduler mid-run (the connection stays open, nothing answers):
    the run ends after ANSWER_SECONDS instead of waiting for ever."""
    import signal

    import tf1compat.convert.dask as dask_runner
    address, scheduler, _ = own_cluster(request, tmp_path)
    monkeypatch.setattr(dask_runner, "ANSWER_SECONDS", 3)
    failure = []

    def run():
        try:
            convert.write_sharded(range(200), tmp_path / "out" / "t.tfrecord", 4,
                                  encode=slow_example, runner="dask", scheduler=address)
        except BaseException as e:      # checked below
            failure.append(e)
    thread = threading.Thread(target=run)
    thread.start()
    with Client(address, set_as_default=False) as client:
        deadline = time.monotonic() + 60
        while not any(client.processing().values()):
            assert time.monotonic() < deadline, "no task started"
            time.sleep(0.05)
    os.killpg(scheduler.pid, signal.SIGSTOP)
    request.addfinalizer(lambda: os.killpg(scheduler.pid, signal.SIGCONT))
    stopped = time.monotonic()
    thread.join(timeout=60)
    assert not thread.is_alive() and time.monotonic() - stopped < 30
    (error,) = failure
    assert isinstance(error, DaskClusterError), error
    assert str(error) == (f"the Dask scheduler at {address} has not answered for 3 s "
                          "(stopped or overloaded); nothing was committed")
    assert not (tmp_path / "out").exists()
