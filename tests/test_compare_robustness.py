"""compare() facing endless pipelines, odd values and odd arguments: refused up
front or reported naming the side, example and item; never a hang."""

import subprocess
import sys
import textwrap

import numpy as np
import pytest
from slim_data import get_split_factory, legacy_items, make_examples, write_slim_files

import tf1compat as tc
from tf1compat.errors import PipelineConfigError
from tf1compat.migrate.comparison import compare
from tf1compat.migrate.comparison.example_stream import endless_source

# ------------------------------------------------------------ endless pipelines


@pytest.fixture
def tf():
    return pytest.importorskip("tensorflow")


def counting(tf, num_epochs, n=6):
    return tc.input_producer(tf.range(n), num_epochs=num_epochs, shuffle=False).dequeue()


@pytest.mark.tf
@pytest.mark.timeout(60, method="thread")
def test_endless_producer_is_refused_naming_max_examples(tf):
    with tc.legacy_graph():
        endless = tc.batch(counting(tf, None), 2)
        reference = [np.arange(6, dtype=np.int32)]
        with pytest.raises(PipelineConfigError, match="max_examples") as excinfo:
            compare(endless, reference, reference_batched=True)
        report = compare(endless, reference, max_examples=6, reference_batched=True)
    error = excinfo.value
    assert error.argument == "max_examples"
    assert str(error).startswith(
        "compare: the legacy pipeline never ends: queue 'input_producer/FIFOQueueV2' is "
        "refilled forever by its queue runner (a producer built with num_epochs=None")
    assert report.equal and report.legacy_count == 6


@pytest.mark.tf
@pytest.mark.timeout(60, method="thread")
def test_endless_reader_pipelines_behind_shuffle_and_prefetch_are_refused(tf, tmp_path, rng):
    get_split = get_split_factory(write_slim_files(str(tmp_path), make_examples(rng, 6), 2), 6)
    with tc.legacy_graph():
        items = legacy_items(get_split, num_epochs=None, shuffle=True, num_readers=2)
        batch = tc.shuffle_batch(items, 2, capacity=8, min_after_dequeue=2)
        prefetched = tc.prefetch_queue(batch).dequeue()
        with pytest.raises(PipelineConfigError, match="never ends: queue '.*' is refilled"):
            compare(prefetched, [], ordered=False)
        with tc.SessionIterator(prefetched) as iterator:  # a SessionIterator too
            with pytest.raises(PipelineConfigError, match="legacy pipeline never ends"):
                compare(iterator, [], ordered=False)


@pytest.mark.tf
@pytest.mark.timeout(60, method="thread")
def test_pipelines_that_can_end_are_not_refused(tf):
    with tc.legacy_graph():
        finite = counting(tf, 1)
        assert compare(finite, [np.int32(i) for i in range(6)]).equal
        # Two readers joined, one endless: the batch queue never closes.
        mixed = tc.batch_join([[counting(tf, 1)], [counting(tf, None)]], 2)
        with pytest.raises(PipelineConfigError, match="never ends"):
            compare(mixed, [])
    with tc.legacy_graph() as graph:
        # A queue without a runner is fed (and closed) by the caller: it may end.
        fed = tf.queue.FIFOQueue(4, tf.int32, shapes=[]).dequeue()
        assert endless_source(fed, graph) is None
        assert endless_source(tc.batch(fed + counting(tf, None), 2), graph) is None
        # py_func generators end with StopIteration
        generated = tf.reshape(tf.compat.v1.py_func(lambda: np.int32(1), [], tf.int32), [])
        assert endless_source(tc.batch(generated, 2), graph) is None
        assert endless_source(tc.batch(counting(tf, None) + 1, 2), graph) is not None


@pytest.mark.tf
def test_infinite_tf_data_reference_is_refused(tf):
    dataset = tf.data.Dataset.range(3).repeat()
    with pytest.raises(PipelineConfigError, match="reference pipeline never ends: its "
                                                  "tf.data.Dataset is infinite"):
        compare([np.int64(0)], dataset)
    assert compare([np.int64(0)], dataset, max_examples=1).equal
    with tc.legacy_graph(), pytest.raises(PipelineConfigError, match="is infinite"):
        compare([np.int64(0)], dataset)  # also while a legacy graph is the default


# ------------------------------------------------------------ odd values and arguments

@pytest.mark.parametrize("legacy, message", [
    ([{"image": np.zeros(2), "label": None}],
     "compare: legacy example #0, item 'label': got None; expected numbers"),
    ([[np.zeros(2), 1], [np.zeros(2), None]],
     "compare: legacy example #1, item '1': got None"),
    ([{"names": np.array([b"a", {"b": 1}], dtype=object)}],
     "compare: legacy example #0, item 'names': got dict (element 1)"),
])
def test_items_compare_cannot_hold_are_named(legacy, message):
    with pytest.raises(TypeError) as excinfo:
        compare(legacy, legacy)
    assert str(excinfo.value).startswith(message)


def test_a_none_in_a_batch_names_the_example_after_unbatching():
    batches = [{"x": np.arange(3)}, {"x": np.array([1, None, 3], dtype=object)}]
    with pytest.raises(TypeError, match=r"reference example #4, item 'x': got None"):
        compare([{"x": np.int64(i)} for i in range(6)], batches, reference_batched=True)


@pytest.mark.parametrize("legacy, message", [
    (5, "compare: the legacy side is int 5; expected an iterable of examples or batches, "
        "graph fetches or a SessionIterator"),
    ("data/train-*.tfrecord", "compare: the legacy side is str 'data/train-*.tfrecord'"),
    ({"image": np.zeros(3)}, "compare: the legacy side is a dict, whose iteration gives its "
                             "keys; pass an iterable of examples (e.g. a list of dicts), or "
                             "graph tensors built in legacy_graph()"),
])
def test_sides_that_are_not_iterables_of_examples_are_refused(legacy, message):
    with pytest.raises(TypeError) as excinfo:
        compare(legacy, [])
    assert str(excinfo.value).startswith(message)


@pytest.mark.parametrize("options, error, message", [
    ({"ordered": "no"}, TypeError, "compare: ordered must be True, False or None, got 'no'"),
    ({"legacy_batched": 1}, TypeError, "compare: legacy_batched must be True, False or None"),
    ({"rtol": float("nan")}, ValueError, "compare: rtol must be a number >= 0, got nan"),
    ({"atol": True}, ValueError, "compare: atol must be a number >= 0, got True"),
    ({"max_examples": 2.0}, ValueError, "compare: max_examples must be a positive integer"),
    ({"ordered": False, "atol": 0.5}, ValueError, "compare: ordered=False matches examples by "
     "exact content fingerprints, so rtol and atol must be 0 (got rtol=0, atol=0.5)"),
])
def test_odd_arguments_are_refused_naming_them(options, error, message):
    with pytest.raises(error) as excinfo:
        compare([], [], **options)
    assert str(excinfo.value).startswith(message)


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_compare_with_eager_execution_off_in_the_process_says_so():
    program = textwrap.dedent("""
        import numpy as np
        import tensorflow as tf
        import tf1compat as tc
        tf.compat.v1.disable_eager_execution()
        with tc.legacy_graph():
            producer = tc.slice_input_producer([np.arange(6)], num_epochs=1, shuffle=False)
            tc.compare(tc.batch(producer, 2))
    """)
    completed = subprocess.run([sys.executable, "-c", program], capture_output=True,
                               text=True, timeout=110)
    assert completed.returncode == 1
    assert completed.stderr.strip().splitlines()[-1].endswith(
        "compare iterates tf.data eagerly, and eager execution is off in this process "
        "(disable_eager_execution(), disable_v2_behavior() or tf1compat run); compare in a "
        "process that keeps it on")


# ------------------------------------------------------------ memory

def test_large_differing_examples_are_diffed_in_memory_near_one_example(rng):
    import tracemalloc

    shape = (1000, 1000, 3)  # 3 MB each
    legacy = [{"image": rng.integers(0, 255, shape, dtype=np.uint8)} for _ in range(3)]
    reference = [{"image": e["image"] + np.uint8(1)} for e in legacy]  # all values differ
    tracemalloc.start()
    try:
        report = compare(iter(legacy), iter(reference))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert report.mismatched_pairs == 3 and report.first_mismatch.max_abs_diff == 1
    assert report.first_mismatch.detail == "3000000 of 3000000 values differ, max abs diff 1"
    example_bytes = legacy[0]["image"].nbytes
    assert peak < 4 * example_bytes, f"peak {peak / 1e6:.0f} MB for {example_bytes / 1e6} MB"


@pytest.mark.parametrize("ordered", [True, False])
def test_bytes_and_text_of_the_same_letters_differ_once(ordered):
    """b'abc' (what TensorFlow's strings are) against 'abc': different examples, said
    once, both ways; the report said "values differ" and, from the multiset, "same
    examples on both sides, in a different order" at once."""
    for legacy, reference in (([{"a": b"abc"}], [{"a": "abc"}]), ([b"abc", b"x"], ["abc", "x"])):
        report = compare(legacy, reference, ordered=ordered)
        assert not report.equal
        text = str(report)
        assert "in a different order" not in text, text
        assert "legacy b'abc', reference 'abc'" in text, text
    same = compare([{"a": b"abc"}, {"a": "abc"}], [{"a": "abc"}, {"a": b"abc"}], ordered=True)
    assert "same examples on both sides, in a different order" in str(same)
