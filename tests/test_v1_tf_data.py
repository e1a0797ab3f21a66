"""`tf1compat run` (by default, and `--tf-data`): unmodified TF1 programs written here
give the same outputs with their batching calls on tf.data, without queue-runner
threads; what cannot be lowered stays on queues with one line saying why (a warning
with --tf-data). examples/legacy's readers are compared on tf.data and on queues in
test_examples_legacy. Programs run in subprocesses (run mode changes the process), as
few as the checks allow."""

import json
import os
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from tf1compat.records.example import example_to_dict, make_example
from tf1compat.records.tfrecord import iter_records, write_records

pytestmark = [pytest.mark.tf, pytest.mark.slow]

# The training loop of both programs: a Session, a Coordinator, start_queue_runners;
# prints what it reads and how many queue-runner threads ran.
LOOP = """
    with tf.Session() as sess:
        sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord)
        print("runner threads", len(threads))
        try:
            while not coord.should_stop():
                batch_ids, batch_xs = sess.run([ids, xs])
                print("batch", batch_ids.tolist(), np.round(batch_xs, 4).tolist())
        except tf.errors.OutOfRangeError:
            print("end of data")
        finally:
            coord.request_stop()
            coord.join(threads)
"""

# A classic program: TFRecordReader + parse_single_example + tf.train.batch.
CLASSIC = """
    import sys
    import numpy as np
    import tensorflow as tf

    files = sys.argv[1:]
    queue = tf.train.string_input_producer(files, num_epochs=2, shuffle=True, seed=3)
    _, value = tf.TFRecordReader().read(queue)
    example = tf.parse_single_example(value, {
        "id": tf.FixedLenFeature([], tf.int64), "x": tf.FixedLenFeature([3], tf.float32)})
    x = example["x"] * 2.0 + MEAN
    ids, xs = tf.train.batch([example["id"], x], 4, allow_smaller_final_batch=True)
    print("shapes", ids.shape.as_list(), xs.shape.as_list())
""" + LOOP

# slim's data layer: DatasetDataProvider + tf.train.batch + slim's prefetch_queue.
SLIM = """
    import sys
    import numpy as np
    import tensorflow as tf
    slim = tf.contrib.slim

    decoder = slim.tfexample_decoder.TFExampleDecoder(
        {"id": tf.FixedLenFeature([], tf.int64), "x": tf.FixedLenFeature([3], tf.float32)},
        {"id": slim.tfexample_decoder.Tensor("id"), "x": slim.tfexample_decoder.Tensor("x")})
    dataset = slim.dataset.Dataset(data_sources=sys.argv[1:], reader=tf.TFRecordReader,
                                   decoder=decoder, num_samples=21, items_to_descriptions={})
    provider = slim.dataset_data_provider.DatasetDataProvider(dataset, shuffle=False,
                                                              num_epochs=1)
    example_id, x = provider.get(["id", "x"])
    batch = tf.train.batch([example_id, x], 5, allow_smaller_final_batch=True)
    ids, xs = slim.prefetch_queue.prefetch_queue(batch, dynamic_pad=True).dequeue()
""" + LOOP


@pytest.fixture
def tfrecords(tmp_path):
    rng = np.random.default_rng(5)
    paths, start = [], 0
    for index, count in enumerate((7, 5, 9)):
        path = tmp_path / f"part-{index}.tfrecord"
        write_records(str(path), [make_example({"id": start + i, "x": rng.random(3)})
                                  for i in range(count)])
        paths.append(str(path))
        start += count
    return paths


def run_program(cwd, program, *arguments, tf_data=True, options=()):
    """``python -m tf1compat run --tf-data PROGRAM ARGUMENTS`` in ``cwd`` (``tf_data``
    False: ``--queues``; None: neither, the default)."""
    options = [*{True: ["--tf-data"], False: ["--queues"], None: []}[tf_data], *options]
    completed = subprocess.run(
        [sys.executable, "-m", "tf1compat", "run", *options, str(program), *map(str, arguments)],
        cwd=cwd, capture_output=True, text=True, timeout=240,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
    assert completed.returncode == 0, completed.stderr[-3000:]
    return completed


def write_program(folder, source):
    folder.mkdir(parents=True, exist_ok=True)
    program = folder / "program.py"
    program.write_text(textwrap.dedent(source))
    return program


def reading(stdout):
    """The program's output lines about data (not about threads)."""
    return [line for line in stdout.splitlines() if not line.startswith("runner threads")]


@pytest.mark.timeout(600)
def test_by_default_each_pipeline_runs_where_it_can_and_says_so_once(tmp_path, tfrecords):
    """Plain ``tf1compat run``: a pipeline that lowers runs on tf.data, without
    runner threads, one that cannot stays on TF1's queues (no warning: a notice saying
    why), each said in one line; ``--quiet`` says nothing; ``--queues`` runs both on
    queues; ``--tf-data`` keeps the one that cannot be lowered on queues with one
    warning naming the program's line. The same output every way."""
    movable = write_program(tmp_path / "a", CLASSIC.replace("MEAN", "0.5"))
    stuck = write_program(tmp_path / "b", CLASSIC.replace(
        "MEAN", 'tf.Variable([0.5, 0.5, 0.5], name="mean")'))
    runs = {(program.parent.name, tuple(flags)): run_program(
                tmp_path, program, *tfrecords, tf_data=None, options=flags)
            for program, flags in [(movable, []), (movable, ["--quiet"]),
                                   (movable, ["--queues"]), (stuck, []), (stuck, ["--quiet"]),
                                   (stuck, ["--queues"]), (stuck, ["--tf-data"])]}
    outputs = {reading(done.stdout) == reading(runs["a", ("--queues",)].stdout)
               for done in runs.values()}
    assert outputs == {True}
    assert reading(runs["a", ()].stdout)[-1] == "end of data"
    assert len([line for line in runs["a", ()].stdout.splitlines()
                if line.startswith("batch")]) == 11
    assert "shapes [None] [None, 3]" in runs["a", ()].stdout.splitlines()
    assert "runner threads 0" in runs["a", ()].stdout.splitlines()
    assert "runner threads 0" not in runs["b", ()].stdout.splitlines()
    assert "runner threads 0" not in runs["b", ("--tf-data",)].stdout.splitlines()
    assert runs["b", ("--tf-data",)].stderr.count("stays on queues") == 1
    assert re.search(r"tf1compat run --tf-data: tf.train.batch \(program.py:\d+\) stays on "
                     r"queues: cannot lower op 'mean' \(VariableV2\) to tf.data: a variable in "
                     "the per-example path", runs["b", ("--tf-data",)].stderr)
    said = {key: [line for line in done.stderr.splitlines() if line.startswith("tf1compat")]
            for key, done in runs.items()}
    assert len(said["a", ()]) == 1 and re.fullmatch(
        r"tf1compat run: tf.train.batch \(program.py:\d+\) runs on tf.data, its parsed "
        r"examples kept in memory after their first reading \(about \d+ bytes\)",
        said["a", ()][0])   # 2 epochs: cached
    assert len(said["b", ()]) == 1 and re.fullmatch(
        r"tf1compat run: tf.train.batch \(program.py:\d+\) stays on TF1's queues: cannot "
        r"lower op 'mean' \(VariableV2\) to tf.data: a variable in the per-example path: .*",
        said["b", ()][0])
    assert "Warning" not in runs["b", ()].stderr
    for key in [("a", ("--quiet",)), ("b", ("--quiet",)), ("a", ("--queues",)),
                ("b", ("--queues",))]:
        assert said[key] == [], key


@pytest.mark.timeout(600)
def test_slim_program_reads_every_record_in_order_without_runner_threads(tmp_path, tfrecords):
    lowered = run_program(tmp_path, write_program(tmp_path, SLIM), *tfrecords)
    records = [example_to_dict(r) for path in tfrecords for r in iter_records(path)]
    expected = [f"batch {[int(r['id'][0]) for r in part]} "
                f"{np.round(np.stack([r['x'] for r in part]), 4).tolist()}"
                for part in (records[i:i + 5] for i in range(0, 21, 5))]
    assert lowered.stdout.splitlines() == ["runner threads 0", *expected, "end of data"]
    assert "stays on queues" not in lowered.stderr


def test_each_prefetch_dequeue_on_tf_data_takes_its_own_batch(monkeypatch, tmp_path):
    """slim's model_deploy dequeues once per clone: two dequeues fetched in one
    sess.run give two consecutive batches, as on queues; every value comes once.
    start_queue_runners finds no runners, and TensorFlow's notice about it is dropped."""
    import logging

    import tf1compat as tc
    from tf1compat._tf import tf, v1
    from tf1compat.v1 import RunMode

    logger = tf.get_logger()
    notices = []
    handler = logging.Handler()
    handler.emit = lambda record: notices.append(record.getMessage())
    monkeypatch.setattr(logger, "handlers", [*logger.handlers, handler])
    with RunMode([tmp_path], tf_data=True) as run_mode, tc.legacy_graph():
        tf1 = run_mode.tensorflow
        queue = tf1.train.input_producer(v1.range(12), num_epochs=1, shuffle=False)
        batch = tf1.train.batch({"x": queue.dequeue()}, 2)
        assert batch["x"].op.type == "IteratorGetNext"  # lowered, not a queue
        prefetched = tf1.contrib.slim.prefetch_queue.prefetch_queue(batch)
        clones = [prefetched.dequeue()["x"] for _ in range(2)]
        with v1.Session() as sess:
            sess.run(v1.local_variables_initializer())
            assert tf1.train.start_queue_runners(sess) == []
            runs = [sorted(b.tolist() for b in sess.run(clones)) for _ in range(3)]
            with pytest.raises(v1.errors.OutOfRangeError):
                sess.run(clones)
    assert runs == [[[4 * i, 4 * i + 1], [4 * i + 2, 4 * i + 3]] for i in range(3)]
    assert [n for n in notices if "no queue runners" in n] == []


# A seeded numpy augmentation in tf.py_func: one runner thread calls it in record order.
PY_FUNC = """
    import sys
    import numpy as np
    import tensorflow as tf

    state = np.random.RandomState(11)
    queue = tf.train.string_input_producer(sys.argv[1:], num_epochs=5, shuffle=False)
    _, value = tf.TFRecordReader().read(queue)
    example = tf.parse_single_example(value, {"id": tf.FixedLenFeature([], tf.int64),
                                              "x": tf.FixedLenFeature([3], tf.float32)})
    x = tf.py_func(lambda x: (x + state.uniform(size=3)).astype(np.float32),
                   [example["x"]], tf.float32)
    x.set_shape([3])
    ids, xs = tf.train.batch([example["id"], x], 4, allow_smaller_final_batch=True)
""" + LOOP


@pytest.mark.timeout(600)
def test_seeded_py_func_gives_the_queue_values_on_tf_data(tmp_path, tfrecords):
    program = write_program(tmp_path, PY_FUNC)
    queued = run_program(tmp_path, program, *tfrecords, tf_data=False)
    lowered = run_program(tmp_path, program, *tfrecords)
    assert reading(lowered.stdout) == reading(queued.stdout)
    values = [v for line in reading(queued.stdout) if line.startswith("batch")
              for row in json.loads(line.split("] ", 1)[1]) for v in row]
    assert len(values) == 5 * 21 * 3 and len(set(values)) > 100
    assert "runner threads 0" in lowered.stdout.splitlines()
    assert "stays on queues" not in lowered.stderr


# A reader's output fetched with the batch built from it (a dict of both), and a
# per-example op that the step depends on: both read the queues moved to tf.data.
ROW_AND_BATCH = """
    import sys
    import tensorflow as tf

    queue = tf.train.string_input_producer(sys.argv[1:], shuffle=False)
    _, value = tf.TFRecordReader().read(queue)
    length = tf.strings.length(value)
    batch = tf.train.shuffle_batch([value], 4, capacity=20, min_after_dequeue=5, seed=1)
    with tf.control_dependencies([tf.Assert(length > 0, ["an empty record"])]):
        step = tf.size(batch)
    with tf.Session() as sess:
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord)
        print("runner threads", len(threads))
        fetched = sess.run({"row": value, "batch": batch})
        records = b"".join(open(path, "rb").read() for path in sys.argv[1:])
        print(sorted(fetched), fetched["row"] in records,
              [len(row) for row in fetched["batch"]] == [len(fetched["row"])] * 4)
        print("steps", [int(sess.run(step)) for _ in range(3)])
        coord.request_stop()
        coord.join(threads)
"""


@pytest.mark.timeout(600)
def test_a_reader_read_outside_its_moved_batching_call_is_served_not_waited_on(
        tmp_path, tfrecords):
    program = write_program(tmp_path, ROW_AND_BATCH)
    expected = ["['batch', 'row'] True True", "steps [4, 4, 4]"]
    queued = run_program(tmp_path, program, *tfrecords, tf_data=False)
    assert queued.stdout.splitlines()[1:] == expected
    lowered = subprocess.run(
        [sys.executable, "-m", "tf1compat", "run", "--tf-data", "--grace-period", "1",
         str(program), *tfrecords], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert lowered.returncode == 0, lowered.stderr[-3000:]
    assert lowered.stdout.splitlines() == ["runner threads 0", *expected]


# slim's cifarnet preprocessing adds a per-example tf.summary.image; merge_all takes it,
# and a Supervisor's summary thread runs it from the start, in a thread of its own.
SUPERVISED_SUMMARY = """
    import sys
    import tensorflow as tf

    files, logdir = sys.argv[1:-1], sys.argv[-1]
    queue = tf.train.string_input_producer(files, shuffle=False)
    _, value = tf.TFRecordReader().read(queue)
    example = tf.parse_single_example(value, {
        "id": tf.FixedLenFeature([], tf.int64), "x": tf.FixedLenFeature([3], tf.float32)})
    image = tf.reshape(example["x"], [1, 3, 1])
    tf.summary.image("image", tf.expand_dims(image, 0))
    ids, xs = tf.train.batch([example["id"], image], 4)
    tf.summary.scalar("mean", tf.reduce_mean(xs))
    global_step = tf.train.get_or_create_global_step()
    train = tf.assign_add(global_step, 1)
    merged = tf.summary.merge_all()
    supervisor = tf.train.Supervisor(logdir=logdir, save_summaries_secs=1, save_model_secs=0)
    with supervisor.managed_session() as sess:
        for _ in range(5):
            batch_ids, _ = sess.run([ids, train])
        in_order = [(int(i) - int(batch_ids[0])) % 21 for i in batch_ids] == [0, 1, 2, 3]
        print("in order", in_order, "summaries", len(sess.run(merged)) > 0)
"""


@pytest.mark.timeout(600)
def test_a_supervisor_summary_thread_reading_a_per_example_summary_is_served(
        tmp_path, tfrecords):
    """Issue 31: the summary thread waited two minutes on the moved reader's queue,
    then the Supervisor stopped with "Coordinator stopped with threads still running"."""
    import time

    from tf1compat._tf import v1

    program = write_program(tmp_path, SUPERVISED_SUMMARY)
    started = time.monotonic()
    lowered = run_program(tmp_path, program, *tfrecords, tmp_path / "logs")
    assert time.monotonic() - started < 100     # the Supervisor's join would wait 120 s
    # the batch's own summary ("mean") takes batches, as on queues: ids vary by timing
    assert lowered.stdout.splitlines() == ["in order True summaries True"]
    tags = {value.tag for events in (tmp_path / "logs").glob("events.out.tfevents.*")
            for event in v1.train.summary_iterator(str(events))
            for value in event.summary.value}
    assert {tag.partition("/")[0].partition("_")[0] for tag in tags} >= {"image", "mean"}, tags


# A damaged record in a pipeline moved to tf.data: the batch before it comes, then the
# error names the file, the record and its offset, as a queue-runner's would.
DAMAGED = """
    import sys
    import tensorflow as tf

    queue = tf.train.string_input_producer([sys.argv[1]], num_epochs=1, shuffle=False)
    _, value = tf.TFRecordReader().read(queue)
    batch = tf.train.batch([value], 2)
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        try:
            while True:
                print("batch", len(sess.run(batch)))
        except tf.errors.DataLossError as e:
            print("error", e.message.splitlines()[-1])
"""


@pytest.mark.timeout(600)
def test_a_damaged_record_on_tf_data_is_named_as_on_queues(tmp_path):
    data = tmp_path / "train.tfrecord"
    write_records(str(data), [b"x" * 10] * 6)
    damaged = bytearray(data.read_bytes())
    damaged[3 * 26 + 12 + 4] ^= 0xFF  # a data byte of record 3
    data.write_bytes(bytes(damaged))
    lowered = run_program(tmp_path, write_program(tmp_path, DAMAGED), data).stdout
    assert lowered.splitlines() == [
        "batch 2", "error [tf1compat] the tf.data pipeline replacing queue "
        "'batch/fifo_queue' failed in op 'tf_data/IteratorGetNext' (IteratorGetNext); "
        f"{data}: record 3 at byte 78: data CRC mismatch (stored 0xd1b72bcf, "
        "computed 0x15d00e59)"]


# A seeded linear regression reading a shuffled producer through tf.train.batch: the
# weights and the dropout draws come from op-level seeds built after the batching call.
SEEDED_REGRESSION = """
    import numpy as np
    import tensorflow as tf

    tf.set_random_seed(1)
    xs = np.linspace(0, 10, 76, dtype=np.float32)
    x, y = tf.train.slice_input_producer([xs, 3 * xs + 2], num_epochs=1, seed=4)
    batch = tf.train.batch([x, y], 8, allow_smaller_final_batch=ALLOW_SMALLER)
    bx, by = batch
    w = tf.Variable(tf.random_normal([1]), name="w")
    b = tf.Variable(tf.random_uniform([1]), name="b")
    predicted = tf.nn.dropout(w * bx + b, rate=0.25)
    cost = tf.reduce_mean(tf.square(predicted - by))
    train = tf.train.GradientDescentOptimizer(0.001).minimize(cost)
    print("batching call returns", type(batch).__name__)
    with tf.Session() as sess:
        sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord)
        print("initial weights", repr(sess.run([w, b])))
        print("fetched", *(type(sess.run(f)).__name__ for f in (batch, (bx, by), {"x": bx}, bx)))
        try:
            for step in range(100):
                print("loss", repr(sess.run([cost, train])[0]))
        except tf.errors.OutOfRangeError as e:
            print("end", type(e).__name__, e.op.name)
            print("message", *(line for line in e.message.splitlines() if "insufficient" in line))
            print("note", *(line for line in e.message.splitlines() if line.startswith("(")))
        coord.request_stop()
        coord.join(threads)
"""


@pytest.mark.timeout(600)
@pytest.mark.parametrize("allow_smaller", ["True", "False"])
def test_seeded_program_trains_the_same_on_tf_data(tmp_path, allow_smaller):
    program = write_program(tmp_path, SEEDED_REGRESSION.replace("ALLOW_SMALLER", allow_smaller))
    queued = run_program(tmp_path, program, tf_data=False).stdout.splitlines()
    lowered = run_program(tmp_path, program).stdout.splitlines()
    losses = [line for line in queued if line.startswith("loss ")]
    # 76 examples: 4 batches fetched above, 5 trained on, and a short one when allowed
    assert len(losses) == (6 if allow_smaller == "True" else 5)
    # Same weights, same draws, same batches: equal floats, step by step.
    assert lowered[:-2] == queued[:-2]
    assert queued[:2] == ["batching call returns list", queued[1]]
    assert queued[1].startswith("initial weights [array([")
    assert queued[2] == "fetched list tuple dict ndarray"
    assert queued[-3] == "end OutOfRangeError batch"
    # The lowered end says where it came from (in every mode that lowers; the default here)
    assert (queued[-1], lowered[-1]) == (
        "note", "note (tf1compat run: the end of the tf.data pipeline that replaced this queue)")
    queued, lowered = queued[:-1], lowered[:-1]
    # The end: TF1's queue message naming the program's queue, on tf.data as on queues.
    # Without allow_smaller_final_batch TF1 counts what the last dequeue still lacked
    # (requested 4 when 4 were left); tf.data dropped them: "less than 8".
    numbers = ("8, current size 0" if allow_smaller == "True"
               else r"\d, current size (\d|less than 8)")
    message = re.compile(r"message FIFOQueue '(_\d+_)?batch/fifo_queue' is closed and has "
                         rf"insufficient elements \(requested {numbers}\)")
    assert message.fullmatch(queued[-1]) and message.fullmatch(lowered[-1]), (queued[-1],
                                                                               lowered[-1])


# A cond holding an Assert (tf.case(exclusive=True), as slim's Image handler decodes)
# and a checked op after it (an Assert guarding an identity, as tf.random_crop checks
# its shape): tf.function's automatic control dependencies made the lowered function
# return nothing ("No return value for index 0") when the graph was imported there.
CASE_AND_CHECK = """
    import sys
    import numpy as np
    import tensorflow as tf

    queue = tf.train.string_input_producer(sys.argv[1:], num_epochs=1, shuffle=False)
    _, value = tf.TFRecordReader().read(queue)
    example = tf.parse_single_example(value, {
        "id": tf.FixedLenFeature([], tf.int64), "x": tf.FixedLenFeature([3], tf.float32)})
    x = tf.case([(tf.equal(example["id"] % 2, 0), lambda: example["x"] * 2.0)],
                default=lambda: -example["x"], exclusive=True)
    check = tf.Assert(tf.reduce_all(tf.shape(x) > 0), ["empty x"])
    with tf.control_dependencies([check]):
        x = tf.identity(x)
    ids, xs = tf.train.batch([example["id"], x], 4, allow_smaller_final_batch=True)
""" + LOOP


@pytest.mark.timeout(600)
def test_a_cond_holding_an_assert_and_a_checked_op_lower_and_give_the_queue_values(
        tmp_path, tfrecords):
    program = write_program(tmp_path, CASE_AND_CHECK)
    queued = run_program(tmp_path, program, *tfrecords, tf_data=False)
    lowered = run_program(tmp_path, program, *tfrecords)
    assert reading(lowered.stdout) == reading(queued.stdout)
    batches = [line for line in reading(queued.stdout) if line.startswith("batch")]
    assert len(batches) == 6 and "end of data" in queued.stdout
    assert "runner threads 0" in lowered.stdout.splitlines()
    assert "stays on queues" not in lowered.stderr
