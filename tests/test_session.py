"""SessionIterator: structures, clean ends, surfaced runner errors, no thread leaks."""

import gc
import os
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest
from conftest import live_pipeline_threads, wait_no_pipeline_threads

import tf1compat as tc

tf = pytest.importorskip("tensorflow")
pytestmark = [pytest.mark.tf, pytest.mark.usefixtures("no_thread_leaks")]

v1 = tf.compat.v1


def counting_batches(num_epochs=1, batch_size=2, n=6):
    """Batches of 0..n-1 through an input producer and a batch queue."""
    row = tc.input_producer(tf.range(n), num_epochs=num_epochs, shuffle=False).dequeue()
    return tc.batch(row, batch_size, capacity=8, allow_smaller_final_batch=True)


def write_records(path, records):
    with tf.io.TFRecordWriter(str(path)) as writer:
        for record in records:
            writer.write(record)


def tfrecord_pipeline(paths, num_epochs=1):
    queue = tc.string_input_producer([str(p) for p in paths], num_epochs=num_epochs,
                                     shuffle=False)
    _, value = tc.TFRecordReader().read(queue)
    return tc.batch(value, 2, allow_smaller_final_batch=True)


# ------------------------------------------------------------ structures

def test_yields_structures_mirroring_fetches():
    with tc.legacy_graph():
        b = counting_batches()
        fetches = {"d": {"x": b}, "t": (b, b + 1), "l": [b * 2]}
        with tc.SessionIterator(fetches) as it:
            first = next(it)
    assert set(first) == {"d", "t", "l"}
    assert isinstance(first["t"], tuple) and isinstance(first["l"], list)
    np.testing.assert_array_equal(first["d"]["x"], [0, 1])
    np.testing.assert_array_equal(first["t"][1], [1, 2])
    np.testing.assert_array_equal(first["l"][0], [0, 2])


def test_single_tensor_yields_arrays_until_the_data_ends():
    with tc.legacy_graph():
        it = tc.SessionIterator(counting_batches(n=5))
        batches = list(it)
    assert [b.tolist() for b in batches] == [[0, 1], [2, 3], [4]]
    assert it.steps == 3
    assert next(it, "done") == "done"


def test_local_and_table_initializers_run():
    with tc.legacy_graph():
        table = tf.lookup.StaticHashTable(
            tf.lookup.KeyValueTensorInitializer(["a", "b"], [1, 2]), default_value=-1)
        counter = v1.get_local_variable("c", initializer=tf.constant(5))
        with tc.SessionIterator([table.lookup(tf.constant("b")), counter]) as it:
            assert next(it) == [2, 5]


def test_iterating_without_with_closes_at_the_end():
    with tc.legacy_graph():
        assert sum(len(b) for b in tc.SessionIterator(counting_batches(n=7))) == 7
    assert not wait_no_pipeline_threads()


def test_closed_iterator_cannot_restart():
    with tc.legacy_graph():
        it = tc.SessionIterator(counting_batches())
        with it:
            next(it)
        with pytest.raises(RuntimeError, match="closed"):
            it.start()


def test_fetches_from_eager_mode_are_explained():
    with pytest.raises(ValueError, match="legacy_graph"):
        tc.SessionIterator(tf.constant([1, 2]))


# ------------------------------------------------------------ exits never hang

def infinite_pipeline():
    return counting_batches(num_epochs=None, batch_size=3)


def test_break_from_infinite_pipeline_stops_all_threads_within_5s():
    with tc.legacy_graph():
        with tc.SessionIterator(infinite_pipeline()) as it:
            assert live_pipeline_threads()
            for step, _ in enumerate(it):
                if step == 4:
                    break
        start = time.monotonic()
        assert not wait_no_pipeline_threads(5.0)
        assert time.monotonic() - start < 5.0


@pytest.mark.parametrize("error", [ValueError("in the loop body"), KeyboardInterrupt()])
def test_exception_in_loop_body_stops_threads(error):
    with tc.legacy_graph():
        with pytest.raises(type(error)):
            with tc.SessionIterator(infinite_pipeline()) as it:
                for _ in it:
                    raise error
    assert not wait_no_pipeline_threads(5.0)


def test_garbage_collection_stops_threads():
    with tc.legacy_graph():
        it = tc.SessionIterator(infinite_pipeline())
        next(it)
        assert live_pipeline_threads()
        del it
        gc.collect()
    assert not wait_no_pipeline_threads(5.0)


def test_timeout_turns_a_starved_queue_into_an_error():
    with tc.legacy_graph():
        starved = tf.queue.FIFOQueue(4, tf.int32, shapes=[]).dequeue()
        start = time.monotonic()
        with pytest.raises(tf.errors.DeadlineExceededError, match="queue runner"):
            with tc.SessionIterator(starved, timeout=0.3) as it:
                next(it)
    assert time.monotonic() - start < 5


# ------------------------------------------------------------ runner errors surface

def test_file_deleted_after_build_raises_not_found_with_file(tmp_path):
    path = tmp_path / "vanishing.tfrecord"
    write_records(path, [b"a", b"b"])
    with tc.legacy_graph():
        batches = tfrecord_pipeline([path])
        path.unlink()
        with pytest.raises(tf.errors.NotFoundError) as excinfo:
            list(tc.SessionIterator(batches))
    message = str(excinfo.value)
    assert str(path) in message
    assert "ReaderReadV2" in message and "queue-runner thread" in message
    assert "insufficient elements" not in message


def test_corrupt_record_raises_data_loss_naming_file_and_record(tmp_path):
    good, bad = tmp_path / "good.tfrecord", tmp_path / "bad.tfrecord"
    write_records(good, [b"x" * 10] * 3)
    write_records(bad, [b"y" * 10] * 3)
    data = bytearray(bad.read_bytes())
    record_size = 8 + 4 + 10 + 4
    data[record_size + 12 + 3] ^= 0xFF  # a data byte of record 1
    bad.write_bytes(bytes(data))
    with tc.legacy_graph():
        batches = tfrecord_pipeline([good, bad])
        with pytest.raises(tf.errors.DataLossError) as excinfo:
            list(tc.SessionIterator(batches))
    message = str(excinfo.value)
    assert f"{bad}: record 1 at byte {record_size}: data CRC mismatch" in message
    assert "ReaderReadV2" in message


def test_bad_csv_row_raises_invalid_argument_naming_the_op(tmp_path):
    path = tmp_path / "rows.csv"
    path.write_text("1,2\n3,4\n5,not-a-number\n")
    with tc.legacy_graph():
        queue = tc.string_input_producer([str(path)], num_epochs=1, shuffle=False)
        _, line = tc.TextLineReader().read(queue)
        a, b = tf.io.decode_csv(line, record_defaults=[[0], [0]], name="parse_row")
        batches = tc.batch([a, b], 1)
        with pytest.raises(tf.errors.InvalidArgumentError) as excinfo:
            list(tc.SessionIterator(batches))
    assert "parse_row" in str(excinfo.value)
    assert "not-a-number" in str(excinfo.value)


def test_bad_reshape_and_bad_image_surface(tmp_path):
    path = tmp_path / "not-an-image.png"
    path.write_bytes(b"definitely not a PNG")
    with tc.legacy_graph():
        queue = tc.string_input_producer([str(path)], num_epochs=1)
        _, contents = tc.WholeFileReader().read(queue)
        image = tf.io.decode_png(contents, channels=3, name="decode_image")
        with pytest.raises(tf.errors.InvalidArgumentError, match="decode_image"):
            list(tc.SessionIterator(tc.batch(tf.image.resize(image, [4, 4]), 1)))
    with tc.legacy_graph():
        row = tc.input_producer(tf.constant([b"ten bytes!"] * 2), num_epochs=1).dequeue()
        wrong = tf.reshape(tf.io.decode_raw(row, tf.uint8), [3, 3], name="bad_reshape")
        with pytest.raises(tf.errors.InvalidArgumentError, match="bad_reshape"):
            list(tc.SessionIterator(tc.batch(wrong, 2)))


# ------------------------------------------------------------ processes

def run_python(code, **env):
    result = subprocess.run([sys.executable, "-c", textwrap.dedent(code)],
                            capture_output=True, text=True, timeout=120,
                            env={**os.environ, **env})
    assert result.returncode == 0, result.stderr
    return result


PIPELINE_SCRIPT = """
    import tf1compat as tc
    from tf1compat.pipeline import queues  # loads TensorFlow quietly, before the script's import
    import tensorflow as tf
    {prelude}
    with tc.legacy_graph():
        row = tc.input_producer(tf.range(4), num_epochs=1, shuffle=False).dequeue()
        print(sum(len(b) for b in tc.SessionIterator(tc.batch(row, 2))))
"""


@pytest.mark.slow
def test_works_after_disable_eager_execution_and_on_the_default_graph():
    result = run_python(PIPELINE_SCRIPT.format(
        prelude="tf.compat.v1.disable_eager_execution()"))
    assert result.stdout.split() == ["4"]
    result = run_python("""
        import tensorflow as tf
        import tf1compat as tc
        tf.compat.v1.disable_eager_execution()
        # a classic script: no legacy_graph, the global default graph
        row = tc.input_producer(tf.range(4), num_epochs=1, shuffle=False).dequeue()
        print(sum(len(b) for b in tc.SessionIterator(tc.batch(row, 2))))
    """)
    assert result.stdout.split() == ["4"]


@pytest.mark.slow
def test_tensorflow_logs_are_quiet_unless_asked():
    quiet = run_python(PIPELINE_SCRIPT.format(prelude=""), TF1COMPAT_VERBOSE="0")
    assert quiet.stderr == ""
    assert quiet.stdout.split() == ["4"]
    loud = run_python(PIPELINE_SCRIPT.format(prelude=""), TF1COMPAT_VERBOSE="1",
                      TF_CPP_MIN_LOG_LEVEL="0")
    assert "deprecated" in loud.stderr
