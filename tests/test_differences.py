"""Known differences between TF1 queue pipelines and tf.data, each demonstrated.

docs/tf-data.md's "Known differences" section cites these tests by name: every claim
there is one of the assertions below.
"""

import os

import numpy as np
import pytest
from slim_data import get_split_factory, legacy_items, make_examples, write_slim_files

tf = pytest.importorskip("tensorflow")
import tf1compat as tc  # noqa: E402  (after the skip: needs TensorFlow)

pytestmark = [pytest.mark.tf, pytest.mark.usefixtures("no_thread_leaks")]

NUM_EXAMPLES = 30


@pytest.fixture
def slim_split(tmp_path, rng):
    return get_split_factory(write_slim_files(str(tmp_path), make_examples(rng, NUM_EXAMPLES)),
                             NUM_EXAMPLES)


def legacy_labels(fetch):
    with tc.SessionIterator(fetch) as iterator:
        return [int(label) for value in iterator for label in np.ravel(value)]


def test_tf1_batch_drops_the_remainder_dataset_batch_keeps_it(slim_split):
    reference = tc.to_tf_data(slim_split()).batch(8)
    assert [int(b["label"].shape[0]) for b in reference] == [8, 8, 8, 6]
    with tc.legacy_graph():
        report = tc.compare(tc.batch(legacy_items(slim_split, shuffle=False), 8),
                            reference, reference_batched=True)
    assert (report.legacy_count, report.reference_count) == (24, 30)
    assert len(report.missing_from_legacy) == 6


def test_random_shuffle_queue_and_shuffle_buffer_orders_differ(slim_split):
    reference = tc.to_tf_data(slim_split(), shuffle=True, seed=1, common_queue_capacity=16)
    with tc.legacy_graph(seed=1):
        items = legacy_items(slim_split, shuffle=True, seed=1,
                             common_queue_capacity=16, common_queue_min=8)
        ordered = tc.compare(items, reference)
    with tc.legacy_graph(seed=1):
        items = legacy_items(slim_split, shuffle=True, seed=1,
                             common_queue_capacity=16, common_queue_min=8)
        unordered = tc.compare(items, reference, ordered=False)
    assert not ordered.equal and ordered.diffs == ()   # same examples, other order
    assert unordered.equal


def test_several_tf1_readers_change_the_order_run_to_run(slim_split):
    def legacy_order():
        with tc.legacy_graph():
            return tuple(legacy_labels(legacy_items(
                slim_split, ["label"], shuffle=False, num_readers=4)["label"]))

    def tf_data_order():
        dataset = tc.to_tf_data(slim_split(), ["label"], num_parallel_reads=4)
        return tuple(int(e["label"]) for e in dataset)

    orders = {legacy_order()}
    for _ in range(4):
        if len(orders) > 1:
            break
        orders.add(legacy_order())
    assert len(orders) > 1, "five runs with 4 readers all gave the same order"
    assert sorted(orders.pop()) == sorted(tf_data_order())
    assert tf_data_order() == tf_data_order()              # tf.data: deterministic


def test_shuffle_batch_mixes_epochs(slim_split):
    one_epoch = tc.to_tf_data(slim_split())
    with tc.legacy_graph(seed=2):
        items = legacy_items(slim_split, shuffle=False, num_epochs=2)
        batch = tc.shuffle_batch(items, 5, capacity=40, min_after_dequeue=20, seed=2)
        tf1_first_epoch = tc.compare(batch, one_epoch, ordered=False,
                                     max_examples=NUM_EXAMPLES)
    assert not tf1_first_epoch.equal
    assert tf1_first_epoch.missing_from_legacy and tf1_first_epoch.duplicated_in_legacy

    # tf.data: shuffle, then repeat keeps each epoch whole ...
    separate = tc.to_tf_data(slim_split(), shuffle=True, seed=2).repeat(2)
    assert tc.compare(separate, one_epoch, ordered=False, max_examples=NUM_EXAMPLES).equal
    # ... while to_tf_data(num_epochs=2) mixes them, as TF1 does.
    mixed = tc.to_tf_data(slim_split(), shuffle=True, seed=2, num_epochs=2)
    assert not tc.compare(mixed, one_epoch, ordered=False, max_examples=NUM_EXAMPLES).equal


def test_file_order_is_reshuffled_every_epoch(tmp_path):
    files = []
    for index in range(6):
        files.append(str(tmp_path / f"file-{index}"))
        with open(files[-1], "wb") as f:
            f.write(os.path.basename(files[-1]).encode())
    with tc.legacy_graph(seed=4):
        queue = tc.string_input_producer(files, num_epochs=3, shuffle=True, seed=4)
        tf1_names = [os.path.basename(bytes(n).decode())
                     for n in tc.SessionIterator(queue.dequeue())]
    tf_data_names = [bytes(n).decode() for n in tc.to_tf_data(
        files, reader=tc.WholeFileReader, shuffle=True, seed=4, num_epochs=3,
        common_queue_capacity=1).as_numpy_iterator()]
    for names in (tf1_names, tf_data_names):
        epochs = [tuple(names[i:i + 6]) for i in range(0, 18, 6)]
        assert all(sorted(epoch) == sorted(epochs[0]) for epoch in epochs)
        assert len(set(epochs)) > 1                       # a new order each epoch
    assert tf1_names != tf_data_names                     # same seed, other order


def test_record_key_exists_only_on_the_queue_side(slim_split, tmp_path):
    with tc.legacy_graph():
        keys = legacy_items(slim_split, ["record_key"], shuffle=False)["record_key"]
        with tc.SessionIterator(keys) as iterator:
            first_key = bytes(next(iterator)).decode()
    assert first_key.startswith(str(tmp_path / "train-00000.tfrecord:"))
    with pytest.raises(tc.UnknownItemError, match="unknown item 'record_key'"):
        tc.to_tf_data(slim_split(), ["record_key"])
