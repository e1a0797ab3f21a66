"""tf.data service: lowered queue pipelines read through a dispatcher and two workers
started as separate processes on 127.0.0.1 (`tf1compat data-service`), compared
example by example with the same pipeline read locally; a worker killed mid-epoch;
an unreachable dispatcher. Every server is stopped by its fixture's finalizer."""

import os
import queue
import signal
import socket
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

from tf1compat.records.example import make_example
from tf1compat.records.tfrecord import write_records

pytestmark = [pytest.mark.tf, pytest.mark.slow]

_ENV = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Server:
    """One ``tf1compat data-service`` process; ``port`` from the line it prints."""

    def __init__(self, *arguments):
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tf1compat", "data-service", *arguments],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_ENV)
        lines = queue.Queue()
        threading.Thread(target=lambda: lines.put(self.process.stdout.readline()),
                         daemon=True).start()
        try:
            self.line = lines.get(timeout=120)
        except queue.Empty:
            self.stop()
            raise RuntimeError(f"data-service {arguments[0]} printed nothing in 120 s") from None
        if "listening on" not in self.line:
            self.stop()
            raise RuntimeError(f"data-service {arguments[0]}: {self.process.stderr.read()}")
        self.port = int(self.line.split(",")[0].rsplit(":", 1)[1])

    def stop(self, how=signal.SIGTERM):
        """Stop the process; returns its exit status and stderr."""
        if self.process.poll() is None:
            self.process.send_signal(how)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        return self.process.returncode, self.process.stderr.read()


def start_cluster(request, workers=2):
    """A dispatcher and ``workers`` workers; returns ``(service, dispatcher, workers)``
    (a list: a test that restarts a worker puts the new one in its place). The
    finalizer stops whatever is still running."""
    dispatcher, started = None, []

    def stop_all():
        for server in reversed(started):
            server.stop()
        if dispatcher is not None:
            dispatcher.stop()
    request.addfinalizer(stop_all)
    dispatcher = Server("dispatcher", "--port", "0")
    address = f"127.0.0.1:{dispatcher.port}"
    for _ in range(workers):
        started.append(Server("worker", "--dispatcher", address, "--host", "127.0.0.1"))
    return f"grpc://{address}", dispatcher, started


@pytest.fixture(scope="module")
def cluster_servers(request):
    """``(service, dispatcher, [worker, worker])`` shared by the module's tests."""
    return start_cluster(request)


@pytest.fixture(scope="module")
def cluster(cluster_servers):
    return cluster_servers[0]


@pytest.fixture(scope="module")
def lonely_dispatcher(request):
    """A dispatcher without workers, shared by the module's tests (a read there stalls)."""
    dispatcher = Server("dispatcher", "--port", "0")
    request.addfinalizer(dispatcher.stop)
    return dispatcher


@pytest.fixture(scope="module")
def records(tmp_path_factory):
    """Four TFRecord files of 30 examples: an id and 12 random bytes each."""
    folder = tmp_path_factory.mktemp("records")
    rng = np.random.default_rng(20)
    paths = []
    for shard in range(4):
        path = str(folder / f"part-{shard}.tfrecord")
        write_records(path, [make_example({
            "id": shard * 30 + i, "image": rng.integers(0, 256, 12, dtype=np.uint8).tobytes()})
            for i in range(30)])
        paths.append(path)
    return paths


def examples(dataset):
    """Every example of a batched dataset of dicts, as sorted ``(id, image bytes)``."""
    found = []
    for batch in dataset:
        for example_id, image in zip(batch["id"].numpy(), batch["image"].numpy(), strict=True):
            found.append((int(example_id), image.tobytes()))
    return sorted(found)


def classic_pipeline(paths, num_epochs, batch_size=8, drop_remainder=True, slow=False):
    """string_input_producer + TFRecordReader + parse_single_example + decode + batch."""
    import tensorflow as tf

    import tf1compat as tc
    with tc.legacy_graph():
        files = tc.string_input_producer(paths, num_epochs=num_epochs, shuffle=True, seed=3)
        _, value = tc.TFRecordReader().read(files)
        parsed = tf.io.parse_single_example(value, {
            "id": tf.io.FixedLenFeature([], tf.int64),
            "image": tf.io.FixedLenFeature([], tf.string)})
        image = tf.reshape(tf.io.decode_raw(parsed["image"], tf.uint8), [12])
        example_id = parsed["id"]
        if slow:   # a stateful op: the per-example map runs in order, one example at a time
            example_id = tf.numpy_function(lambda i: (time.sleep(0.05), i)[1], [example_id],
                                           tf.int64, stateful=True)
            example_id.set_shape([])
        return tc.batch({"id": example_id, "image": image}, batch_size,
                        allow_smaller_final_batch=not drop_remainder)


def slim_pipeline(paths):
    """slim's Dataset + DatasetDataProvider (2 readers, shuffled) + tf.train.batch."""
    import tensorflow as tf

    import tf1compat as tc
    from tf1compat import slim
    decoder = slim.tfexample_decoder.TFExampleDecoder(
        {"id": tf.io.FixedLenFeature([], tf.int64),
         "image": tf.io.FixedLenFeature([], tf.string)},
        {"id": slim.tfexample_decoder.Tensor("id"),
         "image": slim.tfexample_decoder.Tensor("image")})
    with tc.legacy_graph():
        dataset = slim.dataset.Dataset(data_sources=paths, reader=tf.compat.v1.TFRecordReader,
                                       decoder=decoder, num_samples=120,
                                       items_to_descriptions={})
        provider = slim.dataset_data_provider.DatasetDataProvider(
            dataset, num_readers=2, shuffle=True, num_epochs=1, common_queue_capacity=64,
            common_queue_min=16, seed=5)
        example_id, image = provider.get(["id", "image"])
        image = tf.io.decode_raw(image, tf.uint8)
        image.set_shape([12])
        return tc.batch({"id": example_id, "image": image}, 16, allow_smaller_final_batch=True)


def test_classic_pipeline_same_examples_every_epoch(cluster, records):
    """Two epochs, batches of 8 with the remainder dropped as TF1 drops it: each example
    exactly twice, the same values as locally, TF1's batch sizes (no worker drops its
    own remainder); a second pass over the dataset (a new job) reads it all again."""
    import tf1compat as tc
    fetches = classic_pipeline(records, num_epochs=2)
    local = examples(tc.to_tf_data(fetches))
    served = tc.to_tf_data(fetches, service=cluster)
    sizes = [len(batch["id"]) for batch in served]
    assert sizes == [8] * 30                  # 240 examples in batches of 8
    first, second = examples(served), examples(served)
    assert first == local and second == local
    ids = [example_id for example_id, _ in first]
    assert ids == sorted(list(range(120)) * 2)


def test_remainder_kept_as_tf1_keeps_it(cluster, records):
    """allow_smaller_final_batch: one smaller batch at the end, as on queues."""
    import tf1compat as tc
    fetches = classic_pipeline(records, num_epochs=1, batch_size=7, drop_remainder=False)
    served = tc.to_tf_data(fetches, service=cluster)
    assert sorted(len(batch["id"]) for batch in served) == [1] + [7] * 17
    assert examples(served) == examples(tc.to_tf_data(fetches))


def test_slim_provider_same_examples(cluster, records):
    import tf1compat as tc
    fetches = slim_pipeline(records)
    local = examples(tc.to_tf_data(fetches))
    assert [example_id for example_id, _ in local] == list(range(120))
    assert examples(tc.to_tf_data(fetches, service=cluster)) == local


def test_padded_batch_is_done_by_the_reader(cluster, records):
    """dynamic_pad pads to the longest example of each batch: batched in the reading
    process, so every batch is padded as the queue pipeline pads it."""
    import tensorflow as tf

    import tf1compat as tc
    with tc.legacy_graph():
        files = tc.string_input_producer(records, num_epochs=1, shuffle=False)
        _, value = tc.TFRecordReader().read(files)
        parsed = tf.io.parse_single_example(value, {
            "id": tf.io.FixedLenFeature([], tf.int64),
            "image": tf.io.FixedLenFeature([], tf.string)})
        length = tf.cast(parsed["id"] % 5 + 1, tf.int32)       # 1 to 5 values
        image = tf.io.decode_raw(parsed["image"], tf.uint8)[:length]
        fetches = tc.batch({"id": parsed["id"], "image": image}, 8, dynamic_pad=True,
                           allow_smaller_final_batch=True)
    local = tc.to_tf_data(fetches)
    served = tc.to_tf_data(fetches, service=cluster)

    def padded_examples(dataset):
        """(id, image) of every example, each batch checked to be padded with zeros to
        its longest example; and the batch sizes. The workers interleave their files,
        so which examples share a batch (and its padding) varies: the examples do not."""
        found, sizes = [], []
        for batch in dataset:
            ids, images = batch["id"].numpy(), batch["image"].numpy()
            lengths = ids % 5 + 1
            assert images.shape[1] == lengths.max()
            for example_id, row, length in zip(ids, images, lengths, strict=True):
                assert not row[length:].any()
                found.append((int(example_id), row[:length].tobytes()))
            sizes.append(len(ids))
        return sorted(found), sorted(sizes)
    assert padded_examples(served) == padded_examples(local)


def test_batch_dropping_remainder_before_the_last_batch_is_refused(records):
    """Each worker would drop its own remainder: refused, naming the batch, before
    anything waits for a dispatcher (none listens here)."""
    import tf1compat as tc
    inner = classic_pipeline(records, num_epochs=1, batch_size=7)
    with inner["id"].graph.as_default():
        fetches = tc.batch(inner, 4, enqueue_many=True, allow_smaller_final_batch=True)
    with pytest.raises(tc.PipelineConfigError, match=r"batch\(7, drop remainder\) before the "
                       "last batch would drop each worker's remainder") as e:
        tc.to_tf_data(fetches, service=f"grpc://127.0.0.1:{free_port()}")
    assert e.value.argument == "service"


def test_python_in_the_pipeline_is_refused_naming_the_op(cluster, records):
    import tf1compat as tc
    fetches = classic_pipeline(records, num_epochs=1, slow=True)
    with pytest.raises(tc.PipelineConfigError, match=r"calls Python \(op '.*' \(PyFunc\)") as e:
        tc.to_tf_data(fetches, service=cluster)
    assert e.value.argument == "service"


def test_unreachable_dispatcher_one_clear_error_within_seconds(records):
    import tf1compat as tc
    fetches = classic_pipeline(records, num_epochs=1)
    service = f"grpc://127.0.0.1:{free_port()}"
    started = time.monotonic()
    with pytest.raises(tc.DataServiceError, match="no tf.data service dispatcher answers at "
                       + service) as e:
        tc.to_tf_data(fetches, service=service)
    assert time.monotonic() - started < 15
    assert e.value.address == service and isinstance(e.value, ConnectionError)


@pytest.mark.parametrize("service", ["127.0.0.1:5050", "http://127.0.0.1:5050",
                                     "grpc://127.0.0.1", "grpc://:5050"])
def test_service_that_is_not_an_address_is_refused(records, service):
    import tf1compat as tc
    fetches = classic_pipeline(records, num_epochs=1)
    with pytest.raises(tc.PipelineConfigError) as e:
        tc.to_tf_data(fetches, service=service)
    assert str(e.value) == (f"to_tf_data: service must be grpc://HOST:PORT (a tf.data "
                            f"service dispatcher), got {service!r}")
    assert e.value.argument == "service"


# An unmodified TF1 program: string_input_producer (2 epochs) + TFRecordReader + parse +
# shuffle_batch, a Session loop until OutOfRangeError; prints every example it read.
PROGRAM = """
import sys
import tensorflow as tf

queue = tf.train.string_input_producer(sys.argv[1:], num_epochs=2, shuffle=True)
_, value = tf.TFRecordReader().read(queue)
example = tf.parse_single_example(value, {"id": tf.FixedLenFeature([], tf.int64),
                                          "image": tf.FixedLenFeature([], tf.string)})
image = tf.reshape(tf.decode_raw(example["image"], tf.uint8), [12])
ids, images = tf.train.shuffle_batch([example["id"], image], 16, capacity=64,
                                     min_after_dequeue=32)
seen = []
with tf.Session() as sess:
    sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
    coord = tf.train.Coordinator()
    threads = tf.train.start_queue_runners(sess, coord)
    try:
        while True:
            batch_ids, batch_images = sess.run([ids, images])
            seen.extend(zip(batch_ids.tolist(), map(bytes, batch_images)))
    except tf.errors.OutOfRangeError:
        print("end of data after", len(seen))
    finally:
        coord.request_stop()
        coord.join(threads)
for example_id, image in sorted(seen):
    print(example_id, image.hex())
"""


def run_cli(*arguments, cwd=None, timeout=240):
    return subprocess.run([sys.executable, "-m", "tf1compat", *arguments], cwd=cwd,
                          capture_output=True, text=True, timeout=timeout, env=_ENV)


def test_program_on_the_service_reads_what_it_reads_on_tf_data(cluster, records, tmp_path):
    """The program's examples, values and end (OutOfRangeError) with --data-service are
    those of --tf-data alone: every example twice (2 epochs, 240 = 15 batches of 16)."""
    program = tmp_path / "program.py"
    program.write_text(PROGRAM)
    local = run_cli("run", "--tf-data", str(program), *records)
    served = run_cli("run", "--tf-data", "--data-service", cluster, str(program), *records)
    assert local.returncode == 0, local.stderr[-3000:]
    assert served.returncode == 0, served.stderr[-3000:]
    assert served.stdout.splitlines()[0] == local.stdout.splitlines()[0] == \
        "end of data after 240"
    assert served.stdout.splitlines()[1:] == local.stdout.splitlines()[1:]   # sorted
    ids = [int(line.split()[0]) for line in served.stdout.splitlines()[1:]]
    assert ids == sorted(list(range(120)) * 2)


def test_program_with_unreachable_dispatcher_exits_2_with_one_line(tmp_path, records):
    program = tmp_path / "program.py"
    program.write_text(PROGRAM)
    service = f"grpc://127.0.0.1:{free_port()}"
    started = time.monotonic()
    completed = run_cli("run", "--tf-data", "--data-service", service, str(program), *records)
    assert time.monotonic() - started < 60      # TensorFlow's import included
    assert completed.returncode == 2
    assert completed.stderr.strip().splitlines() == [
        f"tf1compat run: error: run --data-service: no tf.data service dispatcher answers at "
        f"{service} (waited 5 s); start one with `tf1compat data-service dispatcher --port "
        f"{service.rsplit(':', 1)[1]}`"]
    assert completed.stdout == ""


def test_data_service_with_queues_is_a_usage_error(tmp_path):
    completed = run_cli("run", "--queues", "--data-service", "grpc://127.0.0.1:1",
                        str(tmp_path / "x.py"))
    assert completed.returncode == 2
    assert completed.stderr.strip() == (
        "tf1compat run: error: --data-service cannot be used with --queues: the service runs "
        "the pipelines on tf.data, and --queues keeps every pipeline on TF1's queues")


def test_worker_with_unreachable_dispatcher_exits_2_with_one_line():
    port = free_port()
    completed = run_cli("data-service", "worker", "--dispatcher", f"127.0.0.1:{port}")
    assert completed.returncode == 2
    assert completed.stderr.strip().splitlines() == [
        f"tf1compat data-service worker: no tf.data service dispatcher answers at "
        f"grpc://127.0.0.1:{port} (waited 5 s); start one with `tf1compat data-service "
        f"dispatcher --port {port}`"]


def test_dispatcher_on_a_port_in_use_exits_2_naming_it():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        completed = run_cli("data-service", "dispatcher", "--port", str(port))
    assert completed.returncode == 2
    assert completed.stderr.strip().splitlines() == [
        f"tf1compat data-service dispatcher: port {port} is in use (Address already in use)"]


def test_servers_say_where_they_listen_and_stop_cleanly(request, tmp_path):
    """SIGTERM: exit 143 'terminated'; Ctrl-C (SIGINT): exit 130 'interrupted'; a
    dispatcher with --work-dir journals there."""
    work_dir = tmp_path / "journal"
    dispatcher = Server("dispatcher", "--port", "0", "--work-dir", str(work_dir))
    request.addfinalizer(dispatcher.stop)
    assert dispatcher.line.startswith("tf1compat data-service dispatcher: listening on grpc://")
    assert dispatcher.line.strip().endswith(f", journal in {work_dir}")
    worker = Server("worker", "--dispatcher", f"127.0.0.1:{dispatcher.port}", "--host",
                    "127.0.0.1")
    request.addfinalizer(worker.stop)
    assert worker.line.strip() == (f"tf1compat data-service worker: listening on 127.0.0.1:"
                                   f"{worker.port}, dispatcher 127.0.0.1:{dispatcher.port}")
    assert worker.stop(signal.SIGINT) == (130, "tf1compat data-service worker: interrupted\n")
    assert dispatcher.stop(signal.SIGTERM) == (
        143, "tf1compat data-service dispatcher: terminated\n")
    assert any(work_dir.iterdir())


def test_worker_killed_mid_epoch_and_restarted_epoch_completes(cluster_servers, records):
    """TensorFlow's guarantee for dynamic sharding: a worker killed mid-epoch (SIGKILL)
    and restarted on its address registers again; the reader, which waited for it,
    finishes the epoch: no example twice (at most once), each with its local values.
    (It replaces one of the module's workers.)"""
    import tf1compat as tc
    service, _, workers = cluster_servers
    fetches = classic_pipeline(records, num_epochs=1, batch_size=4)
    local = dict(examples(tc.to_tf_data(fetches)))
    seen = []
    started = time.monotonic()
    for index, batch in enumerate(tc.to_tf_data(fetches, service=service)):
        seen.extend(zip(batch["id"].numpy().tolist(), map(bytes, batch["image"].numpy()),
                        strict=True))
        time.sleep(0.1)                    # a slow reader: the epoch is still running
        if index == 3:
            killed = workers[1]
            killed.process.kill()
            killed.process.wait()
            workers[1] = Server("worker", "--dispatcher", service.removeprefix("grpc://"),
                                "--host", "127.0.0.1", "--port", str(killed.port))
    assert time.monotonic() - started < 240
    ids = [example_id for example_id, _ in seen]
    assert len(ids) == len(set(ids)) and set(ids) <= set(local)
    assert all(local[example_id] == image for example_id, image in seen)
    assert len(ids) >= 16                  # the batches read before the kill


# The program of PROGRAM, reading slowly (one batch per 0.2 s) and saying so, so that a
# test can kill a server while it reads.
SLOW_PROGRAM = PROGRAM.replace(
    "seen.extend(zip(batch_ids.tolist(), map(bytes, batch_images)))",
    "seen.extend(zip(batch_ids.tolist(), map(bytes, batch_images)))\n"
    "            print('read', len(seen), flush=True)\n"
    "            __import__('time').sleep(0.2)").replace("num_epochs=2", "num_epochs=50")


# An unmodified program that reads its files in a `multiprocessing` child started with
# "spawn" (a new interpreter), then itself; the child says what it read or what failed.
SPAWNING_PROGRAM = """
import multiprocessing
import sys
import tensorflow as tf


def read(paths):
    queue = tf.train.string_input_producer(paths, num_epochs=1, shuffle=False)
    _, value = tf.TFRecordReader().read(queue)
    example = tf.parse_single_example(value, {"id": tf.FixedLenFeature([], tf.int64)})
    ids = tf.train.batch([example["id"]], 8, allow_smaller_final_batch=True)
    seen = []
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        tf.train.start_queue_runners(sess)
        while True:
            try:
                seen += sess.run(ids).tolist()
            except tf.errors.OutOfRangeError:
                return sorted(seen)


def child(paths, results):
    try:
        results.put(read(paths))
    except Exception as e:
        results.put(f"{type(e).__name__}: {e}")


if __name__ == "__main__":
    context = multiprocessing.get_context("spawn")
    results = context.Queue()
    process = context.Process(target=child, args=(sys.argv[1:], results))
    process.start()
    print("child", results.get(timeout=240), flush=True)
    process.join()
    print("parent", read(sys.argv[1:]), flush=True)
"""


@pytest.mark.timeout(600)
def test_a_spawned_child_reads_from_the_service_as_its_parent_does(
        cluster, lonely_dispatcher, records, tmp_path):
    """Under `run --tf-data --data-service`, a spawned child gets the run's settings
    whole: it reads the examples its parent reads, and it reads them from the service,
    bounded as its parent is (with a dispatcher that has no worker, both wait the
    bound and fail naming the service; the child read its files locally before)."""
    program = tmp_path / "program.py"
    program.write_text(SPAWNING_PROGRAM)
    served = run_cli("run", "--tf-data", "--data-service", cluster, str(program), *records,
                     timeout=500)
    assert served.returncode == 0, served.stderr[-3000:]
    ids = sorted(range(120))
    assert served.stdout.splitlines() == [f"child {ids}", f"parent {ids}"]

    lonely = f"grpc://127.0.0.1:{lonely_dispatcher.port}"
    stalled = run_cli("run", "--tf-data", "--data-service", lonely, "--data-service-timeout",
                      "3", str(program), *records, timeout=500)
    port = lonely.rsplit(":", 1)[1]
    why = (f"no element from the tf.data service at {lonely} in 3 s: the dispatcher "
           f"answers and has no worker; start one (`tf1compat data-service worker "
           f"--dispatcher HOST:{port}`)")
    assert stalled.stdout.splitlines() == [f"child DataServiceError: {why}"]
    assert stalled.returncode == 2
    assert stalled.stderr.strip().splitlines()[-1] == f"tf1compat run: error: {why}"


def test_data_service_timeout_is_checked_before_anything_runs(tmp_path):
    program = tmp_path / "program.py"
    program.write_text("raise SystemExit('the program ran')")
    completed = run_cli("run", "--data-service-timeout", "5", str(program))
    assert completed.returncode == 2
    assert completed.stderr.strip() == ("tf1compat run: error: --data-service-timeout needs "
                                        "--data-service: it bounds the waits for the service")
    completed = run_cli("run", "--tf-data", "--data-service", "grpc://127.0.0.1:1",
                        "--data-service-timeout", "0", str(program))
    assert completed.returncode == 2
    assert completed.stderr.strip().splitlines() == [
        "tf1compat run: error: --data-service-timeout must be a positive number of seconds "
        "(inf: no limit), got 0.0"]


@pytest.mark.parametrize("timeout, expected", [
    (0, "to_tf_data: service_timeout must be a positive number of seconds (inf: no limit), "
        "got 0"),
    ("5", "to_tf_data: service_timeout must be a positive number of seconds (inf: no "
          "limit), got '5'")])
def test_service_timeout_is_checked_before_anything_waits(records, timeout, expected):
    import tf1compat as tc
    fetches = classic_pipeline(records, num_epochs=1)
    with pytest.raises(tc.PipelineConfigError) as e:     # no dispatcher listens there
        tc.to_tf_data(fetches, service=f"grpc://127.0.0.1:{free_port()}",
                      service_timeout=timeout)
    assert str(e.value) == expected and e.value.argument == "service_timeout"
    with pytest.raises(tc.PipelineConfigError) as e:
        tc.to_tf_data(fetches, service_timeout=10)
    assert str(e.value) == ("to_tf_data: service_timeout needs service: it bounds the waits "
                            "for the service")
    assert (e.value.argument, e.value.expected) == ("service_timeout", "service")


def test_the_dispatcher_protocol_tf1compat_relies_on(cluster_servers):
    """Contract: a DispatchServer answers DispatcherService/GetVersion and lists its
    workers in GetWorkers' repeated field 1; a WorkerServer answers neither
    (UNIMPLEMENTED), which is how a worker's port given as the dispatcher is told."""
    import grpc

    from tf1compat.migrate.service import _ask
    from tf1compat.pipeline.graph_model import service_rpc
    service, dispatcher, workers = cluster_servers
    address = service.removeprefix("grpc://")
    assert _ask(address, service_rpc.DISPATCHER_VERSION, 10)
    listed = _ask(address, service_rpc.DISPATCHER_WORKERS, 10)
    assert service_rpc.count_workers(listed) == len(workers)
    for worker in workers:
        assert f"127.0.0.1:{worker.port}".encode() in listed
        with pytest.raises(grpc.RpcError) as e:
            _ask(f"127.0.0.1:{worker.port}", service_rpc.DISPATCHER_VERSION, 10)
        assert e.value.code() == grpc.StatusCode.UNIMPLEMENTED


def test_a_workers_address_given_as_the_dispatcher_is_named(cluster_servers, records, tmp_path):
    """It answers gRPC, so it passed for a dispatcher: `run` died in the program's
    tf.train.batch with a 90-line UnimplementedError ('Failed to get dispatcher
    version'), `data-service worker` with a NotImplementedError traceback."""
    import tf1compat as tc
    _, _, workers = cluster_servers
    wrong = f"grpc://127.0.0.1:{workers[0].port}"
    what = (f"the server at {wrong} is not a tf.data service dispatcher (it does not answer "
            "a dispatcher's calls: a worker's port?); give the address `tf1compat "
            "data-service dispatcher` printed")
    program = tmp_path / "program.py"
    program.write_text(PROGRAM)
    run = run_cli("run", "--tf-data", "--data-service", wrong, str(program), *records)
    assert run.returncode == 2 and run.stdout == ""
    assert run.stderr.splitlines() == [f"tf1compat run: error: run --data-service: {what}"]
    worker = run_cli("data-service", "worker", "--dispatcher", wrong.removeprefix("grpc://"))
    assert worker.returncode == 2
    assert worker.stderr.splitlines() == [f"tf1compat data-service worker: {what}"]
    with pytest.raises(tc.DataServiceError, match="is not a tf.data service dispatcher"):
        tc.to_tf_data(classic_pipeline(records, num_epochs=1), service=wrong)


def test_a_dispatcher_without_workers_is_named_when_the_read_stalls(lonely_dispatcher,
                                                                     records):
    import tensorflow as tf

    import tf1compat as tc
    from tf1compat.migrate.service import stalled_error
    dispatcher = lonely_dispatcher
    service = f"grpc://127.0.0.1:{dispatcher.port}"
    started = time.monotonic()
    with pytest.raises(tf.errors.UnknownError) as e:
        for _ in tc.to_tf_data(classic_pipeline(records, num_epochs=1), service=service,
                               service_timeout=3):
            pass
    assert time.monotonic() - started < 60
    assert str(stalled_error(e.value)) == (
        f"no element from the tf.data service at {service} in 3 s: the dispatcher answers "
        f"and has no worker; start one (`tf1compat data-service worker --dispatcher "
        f"HOST:{dispatcher.port}`)")


def start_slow_run(request, service, records, tmp_path):
    """``tf1compat run --tf-data --data-service SERVICE --data-service-timeout 5`` of
    SLOW_PROGRAM over ``records``, once it has read its first batch (killed after the
    test)."""
    program = tmp_path / "program.py"
    program.write_text(SLOW_PROGRAM)
    run = subprocess.Popen(
        [sys.executable, "-m", "tf1compat", "run", "--tf-data", "--data-service", service,
         "--data-service-timeout", "5", str(program), *records],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_ENV)
    request.addfinalizer(run.kill)
    first = run.stdout.readline()
    assert first.startswith("read "), run.stderr.read()[-3000:]
    return run


def test_a_dispatcher_that_stops_answering_mid_epoch_ends_the_run(request, cluster_servers,
                                                                    records, tmp_path):
    """SIGSTOP, not a kill: the connection stays open and nothing answers. With
    --data-service-timeout 5 the run ends with one line and exit 2 (it waited 40 s and
    more: the read's close blocked in TensorFlow's client, and then Python's exit). On
    the module's cluster, its dispatcher continued (SIGCONT) after the test: the last
    but one of the module's tests."""
    service, dispatcher, _ = cluster_servers
    run = start_slow_run(request, service, records, tmp_path)
    dispatcher.process.send_signal(signal.SIGSTOP)
    request.addfinalizer(lambda: dispatcher.process.send_signal(signal.SIGCONT))
    stopped = time.monotonic()
    out, err = run.communicate(timeout=150)
    assert time.monotonic() - stopped < 60           # the bound is 5 s; a loaded machine
    assert run.returncode == 2, err[-3000:]
    port = service.rsplit(":", 1)[1]
    assert err.strip().splitlines()[-1] == (
        f"tf1compat run: error: no element from the tf.data service at {service} in 5 s: "
        "the dispatcher stopped answering; restart it (`tf1compat data-service dispatcher "
        f"--port {port} --work-dir DIR`: with the same DIR it carries on its jobs) and run "
        "again")
    assert "Traceback" not in err and "end of data" not in out


def test_a_server_gone_for_good_ends_the_read_within_the_bound(request, cluster_servers,
                                                                records, tmp_path):
    """A worker killed (SIGKILL) mid-epoch and never restarted: TensorFlow's client
    would wait for its task (more than 6 minutes measured); with a bound of 5 s the
    iteration raises, naming the dispatcher, the wait and the worker to restart. Then
    an unmodified program reading on the same cluster whose dispatcher is killed
    mid-run ends with one line and exit 2, saying to restart the dispatcher. On the
    module's cluster, whose servers it kills: the module's last test."""
    import tensorflow as tf

    import tf1compat as tc
    from tf1compat.migrate.service import stalled_error
    service, dispatcher, workers = cluster_servers
    fetches = classic_pipeline(records, num_epochs=2, batch_size=4)
    read = 0
    with pytest.raises(tf.errors.UnknownError) as e:
        for index, _ in enumerate(tc.to_tf_data(fetches, service=service, service_timeout=5)):
            read += 1
            time.sleep(0.1)                # a slow reader: the epoch is still running
            if index == 3:
                workers[1].process.kill()
                workers[1].process.wait()
                killed = time.monotonic()
    assert time.monotonic() - killed < 60           # hang guard: the bound is 5 s
    stalled = stalled_error(e.value)
    port = service.rsplit(":", 1)[1]
    assert str(stalled) == (
        f"no element from the tf.data service at {service} in 5 s: the dispatcher answers, "
        "so a worker holding part of this job is gone; restart it on its address "
        f"(`tf1compat data-service worker --dispatcher HOST:{port} --port PORT`), or give "
        "a slow pipeline a longer bound (service_timeout=, --data-service-timeout)")
    assert str(stalled) in str(e.value) and isinstance(stalled, tc.DataServiceError)
    assert stalled.address == service and stalled.timeout == 5 and read >= 4

    run = start_slow_run(request, service, records, tmp_path)
    dispatcher.process.kill()
    dispatcher.process.wait()
    killed = time.monotonic()
    out, err = run.communicate(timeout=120)
    assert time.monotonic() - killed < 60           # hang guard: the bound is 5 s
    assert run.returncode == 2, err[-3000:]
    assert err.strip().splitlines()[-1] == (
        f"tf1compat run: error: no element from the tf.data service at {service} in 5 s: "
        "the dispatcher stopped answering; restart it (`tf1compat "
        f"data-service dispatcher --port {port} --work-dir DIR`: with the same DIR it "
        "carries on its jobs) and run again")
    assert "end of data" not in out
    # a worker whose dispatcher is gone outlasts SIGTERM (the finalizer's stop waited 20 s
    # for it before its kill): the module's cluster is done with
    workers[0].stop(signal.SIGKILL)
