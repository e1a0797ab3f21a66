"""Drop-in fidelity: what TF1's queue API accepts, tf1compat's accepts and delivers alike.

Each test is a behaviour where tf1compat used to differ from
``tf.compat.v1.train.*`` / ``tf.compat.v1.*Reader`` (found by running
TensorFlow's own ``input_test.py`` and ``reader_ops_test.py`` against it), or
a TF1 mistake now caught while the graph is built. The reference is always
TensorFlow's own function on the same input.
"""

import numpy as np
import pytest

import tf1compat as tc
from tf1compat.errors import PipelineConfigError

tf = pytest.importorskip("tensorflow")
pytestmark = [pytest.mark.tf, pytest.mark.usefixtures("no_thread_leaks")]

v1 = tf.compat.v1


def drain(fetch):
    """Every value of ``fetch`` until the pipeline ends, as Python objects."""
    with tc.SessionIterator(fetch) as it:
        return [np.asarray(value).tolist() for value in it]


def both(build):
    """``build(api)`` run with TensorFlow's functions and with tf1compat's."""
    results = []
    for api in (v1.train, tc):
        with tc.legacy_graph(seed=3):
            results.append(drain(build(api)))
    return results


# ------------------------------------------------ strings that are not files

def test_strings_that_are_not_files_are_queued_as_tf1_queues_them():
    strings = [b"to", b"be", b"or", b"not", b"to", b"be"]
    tf1, ours = both(lambda api: api.string_input_producer(
        strings, num_epochs=2, shuffle=False).dequeue_many(4))
    assert ours == tf1 == [[b"to", b"be", b"or", b"not"], [b"to", b"be", b"to", b"be"],
                           [b"or", b"not", b"to", b"be"]]


def test_shuffled_strings_and_their_queue_files():
    with tc.legacy_graph(seed=5):
        queue = tc.string_input_producer(["a", "b", "c"], num_epochs=3, seed=1)
        assert tc.pipeline.queues.queue_files(queue) == ("a", "b", "c")
        epochs = drain(queue.dequeue_many(3))
    assert [sorted(epoch) for epoch in epochs] == [[b"a", b"b", b"c"]] * 3


def test_empty_list_is_a_value_error_even_in_eager_mode():
    # TF1 refuses an empty Python list before it looks at the execution mode
    with pytest.raises(PipelineConfigError, match="string_tensor is empty"):
        tc.string_input_producer([])
    with pytest.raises(RuntimeError, match="legacy_graph"):
        tc.string_input_producer([b"not a file"])


@pytest.mark.parametrize("batching", [
    lambda t: tc.batch([t], 2),
    lambda t: tc.shuffle_batch([t], 2, capacity=10, min_after_dequeue=2),
    lambda t: tc.batch_join([[t]], 2),
    lambda t: tc.shuffle_batch_join([[t]], 2, capacity=10, min_after_dequeue=2),
])
def test_batching_in_eager_mode_raises_tf1s_value_error(batching):
    with pytest.raises(ValueError, match="legacy_graph"):
        batching(tf.constant(1))


def test_a_tensor_of_names_is_passed_through_and_checked_when_read(tmp_path):
    missing = str(tmp_path / "missing.txt")
    with tc.legacy_graph():
        queue = tc.string_input_producer(tf.constant([missing]))
        assert tc.pipeline.queues.queue_files(queue) == (missing,)
        with pytest.raises(PipelineConfigError, match=r"string_tensor\[0\] file .* does not "
                                                      r"exist.*TextLineReader") as excinfo:
            tc.TextLineReader().read(queue)
    assert excinfo.value.path == missing


def test_a_pattern_in_a_tensor_stays_literal_as_in_tf1(tmp_path):
    (tmp_path / "a.txt").write_text("x\n")
    pattern = str(tmp_path / "*.txt")
    with tc.legacy_graph():
        queue = tc.string_input_producer(tf.constant([pattern]))
        with pytest.raises(PipelineConfigError, match="not in a tensor"):
            tc.TextLineReader().read(queue)


def test_an_empty_constant_tensor_is_caught_when_a_reader_reads_it():
    # TF1 lets the queue runner fail at run time; the test of it is in input_test.py
    with tc.legacy_graph():
        queue = tc.string_input_producer(tf.constant([], tf.string))
        with pytest.raises(PipelineConfigError, match="string_tensor is empty"):
            tc.TFRecordReader().read(queue)


def test_match_filenames_once_feeds_the_producer_as_in_tf1(tmp_path):
    # TF 2's tf.compat.v1.train.string_input_producer refuses the variable
    # (a symbolic tensor used as a Python bool); TF1 took it.
    for i in range(3):
        (tmp_path / f"lines-{i}.txt").write_text(f"{i}a\n{i}b\n")
    with tc.legacy_graph():
        files = v1.train.match_filenames_once(str(tmp_path / "lines-*.txt"))
        with pytest.raises(TypeError):
            v1.train.string_input_producer(files)
        queue = tc.string_input_producer(files, num_epochs=1, shuffle=False)
        _, line = tc.TextLineReader().read(queue)
        lines = drain(tc.batch(line, 6))
    assert sorted(lines[0]) == [b"0a", b"0b", b"1a", b"1b", b"2a", b"2b"]


def test_a_tf_reader_on_a_bad_file_list_is_caught_when_the_iterator_starts(tmp_path):
    missing = str(tmp_path / "gone.tfrecord")
    with tc.legacy_graph():
        queue = tc.string_input_producer([missing])
        _, value = v1.TFRecordReader().read(queue)  # TensorFlow's reader: no check here
        iterator = tc.SessionIterator(value)
        with pytest.raises(PipelineConfigError, match=r"does not exist \(TFRecordReaderV2 "):
            iterator.start()
        iterator.close()


# ------------------------------------------------ argument values TF1 accepts

def test_numpy_integers_are_accepted_wherever_tf1_takes_ints():
    def build(api):
        row = api.input_producer(tf.range(10), num_epochs=np.int64(1), shuffle=False,
                                 capacity=np.int32(4)).dequeue()
        return api.shuffle_batch([row], np.int64(5), capacity=np.int64(8),
                                 min_after_dequeue=np.int32(0), num_threads=np.int64(1),
                                 seed=1, allow_smaller_final_batch=True)
    tf1, ours = both(build)
    assert sorted(sum(ours, [])) == sorted(sum(tf1, [])) == list(range(10))


@pytest.mark.parametrize("capacity", [-1, 10.0, 2.5])
def test_tf1_capacities_are_accepted(capacity):
    # negative: no limit (TensorFlow's queue ops document it); floats: truncated
    tf1, ours = both(lambda api: api.batch(
        [api.input_producer(tf.range(7), num_epochs=1, shuffle=False).dequeue()], 3,
        capacity=capacity, allow_smaller_final_batch=True))
    assert ours == tf1 == [[0, 1, 2], [3, 4, 5], [6]]


@pytest.mark.parametrize("capacity", [0, 0.5, float("inf"), "32", True])
def test_capacities_that_hang_or_crash_tf1_are_refused(capacity):
    with tc.legacy_graph(), pytest.raises(PipelineConfigError) as excinfo:
        tc.string_input_producer([b"x"], capacity=capacity)
    assert excinfo.value.argument == "capacity"
    assert "or negative for no limit" in str(excinfo.value)


def test_integral_float_epochs_are_accepted_and_fractions_refused():
    tf1, ours = both(lambda api: api.string_input_producer(
        [b"a"], num_epochs=2.0, shuffle=False).dequeue())
    assert ours == tf1 == [b"a", b"a"]
    with tc.legacy_graph(), pytest.raises(PipelineConfigError, match="got 1.5"):
        tc.string_input_producer([b"a"], num_epochs=1.5)  # TF1 silently runs 1 epoch


@pytest.mark.parametrize("producer", [
    lambda n: tc.input_producer(np.zeros([0, 2]), num_epochs=n),
    lambda n: tc.slice_input_producer([np.zeros([0, 2])], num_epochs=n),
])
def test_no_rows_end_the_data_with_epochs_and_are_refused_without(producer):
    with tc.legacy_graph():
        produced = producer(1)
        value = produced.dequeue() if hasattr(produced, "dequeue") else produced
        assert drain(value) == []                       # TF1: OutOfRange at once
    with tc.legacy_graph(), pytest.raises(PipelineConfigError, match="loop forever"):
        producer(None)                                  # TF1: its runner spins forever


def test_slice_input_producer_under_tf1_tensor_shapes():
    # TF1 programs (disable_v2_behavior) see Dimension objects in shapes
    v1.disable_v2_tensorshape()
    try:
        with tc.legacy_graph():
            name, label = tc.slice_input_producer(
                [[b"a", b"b", b"c"], [1, 2, 3]], num_epochs=1, shuffle=False)
            got = drain(tc.batch([name, label], 3))
        with tc.legacy_graph(), pytest.raises(PipelineConfigError, match=r"\[3, 2\]"):
            tc.slice_input_producer([[1, 2, 3], [1, 2]])
    finally:
        v1.enable_v2_tensorshape()
    assert got == [[[b"a", b"b", b"c"], [1, 2, 3]]]


# ------------------------------------------------ reader arguments

def test_reader_arguments_as_tf1_takes_them(tmp_path):
    path = tmp_path / "f.bin"
    path.write_bytes(b"HH" + b"abcdef" + b"F")
    lines = tmp_path / "t.csv"
    lines.write_text("h1\nh2\nrow\n")
    with tc.legacy_graph():
        queue = tc.string_input_producer([str(path)], num_epochs=1)
        _, record = tc.FixedLengthRecordReader(np.int64(3), header_bytes=2.0,
                                               footer_bytes=np.int32(1)).read(queue)
        records = drain(record)
    with tc.legacy_graph():
        queue = tc.string_input_producer([str(lines)], num_epochs=1)
        _, line = tc.TextLineReader(skip_header_lines=2.0).read(queue)
        rows = drain(line)
    assert (records, rows) == ([b"abc", b"def"], [b"row"])


@pytest.mark.parametrize("make_reader, argument, fragment", [
    (lambda: tc.TextLineReader(skip_header_lines=-1), "skip_header_lines",
     "non-negative integer or None, got -1"),
    (lambda: tc.FixedLengthRecordReader(4, hop_bytes=-2), "hop_bytes",
     "non-negative integer or None, got -2"),
    (lambda: tc.FixedLengthRecordReader(4, footer_bytes=1.5), "footer_bytes",
     "non-negative integer or None, got 1.5"),
    (lambda: tc.FixedLengthRecordReader(4, encoding="zlib"), "encoding",
     "None, 'ZLIB' or 'GZIP', got 'zlib'"),
])
def test_reader_arguments_tf1_fails_on_late_or_misreads(make_reader, argument, fragment):
    with tc.legacy_graph(), pytest.raises(PipelineConfigError) as excinfo:
        make_reader()
    assert excinfo.value.argument == argument
    assert fragment in str(excinfo.value)


def test_read_up_to_needs_a_positive_count():
    with tc.legacy_graph():
        queue = tf.queue.FIFOQueue(4, [tf.string], shapes=[[]])
        with pytest.raises(PipelineConfigError, match="num_records must be a positive"):
            tc.TFRecordReader().read_up_to(queue, 0)
        keys, _ = tc.TFRecordReader().read_up_to(queue, tf.constant(3, tf.int64))
    assert keys.dtype == tf.string


def test_reading_a_file_list_instead_of_a_queue_says_what_to_do(tmp_path):
    # TF1: AttributeError: 'list' object has no attribute 'queue_ref'
    with tc.legacy_graph(), pytest.raises(TypeError, match=r"TextLineReader: queue must "
                                                           r"be a queue .* got list; give the "
                                                           r"files to string_input_producer"):
        tc.TextLineReader().read([str(tmp_path / "a.csv")])
