"""`tf1compat run --tf-data`: unmodified TF1 programs give the same outputs with their
batching calls on tf.data, without queue-runner threads; what cannot be lowered stays
on queues with one warning. Programs run in subprocesses: run mode changes the process."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from tf1compat.records.example import make_example
from tf1compat.records.tfrecord import write_records

pytestmark = [pytest.mark.tf, pytest.mark.slow]

# A classic program: TFRecordReader + parse_single_example + tf.train.batch, a
# Session, a Coordinator and start_queue_runners; prints what it reads and how many
# queue-runner threads ran.
CLASSIC = """
    import sys
    import threading
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
    with tf.Session() as sess:
        sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord)
        print("runner threads", len(threads))
        try:
            while True:
                batch_ids, batch_xs = sess.run([ids, xs])
                print("batch", batch_ids.tolist(), np.round(batch_xs, 4).tolist())
        except tf.errors.OutOfRangeError:
            print("end of data")
        coord.request_stop()
        coord.join(threads)
"""


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


def run_program(tmp_path, source, files, *options):
    program = tmp_path / "program.py"
    program.write_text(textwrap.dedent(source))
    completed = subprocess.run(
        [sys.executable, "-m", "tf1compat", "run", *options, str(program), *files],
        cwd=tmp_path, capture_output=True, text=True, timeout=240,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
    assert completed.returncode == 0, completed.stderr
    return completed


def reading(stdout):
    """The program's output lines about data (not about threads)."""
    return [line for line in stdout.splitlines() if not line.startswith("runner threads")]


@pytest.mark.timeout(600)
def test_classic_program_same_outputs_without_runner_threads(tmp_path, tfrecords):
    queued = run_program(tmp_path, CLASSIC.replace("MEAN", "0.5"), tfrecords)
    lowered = run_program(tmp_path, CLASSIC.replace("MEAN", "0.5"), tfrecords, "--tf-data")
    assert_same_outputs_without_threads(queued, lowered)
    assert "shapes [None] [None, 3]" in lowered.stdout.splitlines()

    # The same values through a variable: that pipeline stays on queues, with a warning.
    source = CLASSIC.replace("MEAN", 'tf.Variable([0.5, 0.5, 0.5], name="mean")')
    fallback = run_program(tmp_path, source, tfrecords, "--tf-data")
    assert reading(fallback.stdout) == reading(queued.stdout)
    assert fallback.stderr.count("stays on queues") == 1
    assert "tf1compat run --tf-data: tf.train.batch stays on queues: cannot lower op 'mean' " \
           "(VariableV2) to tf.data: a variable in the per-example path" in fallback.stderr
    assert "program.py" in fallback.stderr        # the warning names the program's line


@pytest.mark.timeout(600)
def test_slim_program_same_outputs_without_runner_threads(tmp_path, tfrecords):
    queued = run_program(tmp_path, SLIM, tfrecords)
    lowered = run_program(tmp_path, SLIM, tfrecords, "--tf-data")
    assert_same_outputs_without_threads(queued, lowered)


def assert_same_outputs_without_threads(queued, lowered):
    assert reading(lowered.stdout) == reading(queued.stdout)
    assert reading(queued.stdout)[-1] == "end of data"
    assert len([line for line in queued.stdout.splitlines() if line.startswith("batch")]) >= 5
    assert "runner threads 0" in lowered.stdout.splitlines()
    assert "runner threads 0" not in queued.stdout.splitlines()
    assert "stays on queues" not in lowered.stderr
