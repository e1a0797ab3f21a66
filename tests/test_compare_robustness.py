"""compare() facing endless pipelines, odd values and odd arguments: refused up
front or reported naming the side, example and item; never a hang."""

import numpy as np
import pytest
from slim_data import get_split_factory, legacy_items, make_examples, write_slim_files

import tf1compat as tc
from tf1compat.errors import PipelineConfigError
from tf1compat.migrate.comparison import compare
from tf1compat.migrate.example_stream import endless_source

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
