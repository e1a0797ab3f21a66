"""The lowering parses only the features the fetches need: the same values as the queue
pipeline (and as the lowering that parses every key), required keys kept so a record
without one still fails, and the plan naming what was pruned."""

import numpy as np
import pytest

from tf1compat.records.example import make_example
from tf1compat.records.tfrecord import write_records

tf = pytest.importorskip("tensorflow")
import tf1compat as tc  # noqa: E402  (after the skip: needs TensorFlow)
from benchmarks import pruning  # noqa: E402
from tf1compat.migrate.lowering import lower  # noqa: E402

pytestmark = [pytest.mark.tf, pytest.mark.usefixtures("no_thread_leaks")]

FEATURES = {"id": tf.io.FixedLenFeature([], tf.int64),
            "x": tf.io.FixedLenFeature([3], tf.float32, default_value=[0.0, 0.0, 0.0]),
            "name": tf.io.FixedLenFeature([], tf.string, default_value=""),
            "tags": tf.io.VarLenFeature(tf.int64),
            "words": tf.io.RaggedFeature(tf.string),
            "weight": tf.io.FixedLenFeature([], tf.float32, default_value=1.5)}


def write_examples(path, rng, count=9, **overrides):
    """``count`` Examples with every key of FEATURES; ``overrides`` maps a record's index
    to the features it has instead."""
    examples = [{"id": i, "x": rng.random(3), "name": f"n{i}".encode(),
                 "tags": list(range(i % 3 + 1)), "words": [b"w"] * (i % 2 + 1),
                 "weight": float(i)} for i in range(count)]
    for index, features in overrides.items():
        examples[int(index)] = features
    write_records(path, [make_example(e) for e in examples])
    return [path]


def parsed(paths):
    queue = tc.string_input_producer(paths, num_epochs=1, shuffle=False)
    return tf.io.parse_single_example(tc.TFRecordReader().read(queue)[1], FEATURES)


def values_of(dataset):
    """The elements of a dataset built in a legacy_graph(), iterated eagerly outside it."""
    return list(dataset.as_numpy_iterator())


def check_against_queues(fetches, count):
    """The pruned lowering delivers what the queue pipeline delivers; returns it and the
    lowering that parses every key, to compare outside the graph."""
    report = tc.compare(fetches)
    assert report.equal and report.ordered, report
    assert report.legacy_count == count
    return lower(fetches).to_tf_data(), lower(fetches, prune_features=False).to_tf_data()


def assert_same_values(pruned, every_key):
    pruned, every_key = values_of(pruned), values_of(every_key)
    assert len(pruned) == len(every_key)
    for a, b in zip(pruned, every_key, strict=True):
        for x, y in zip(a, b, strict=True):
            np.testing.assert_array_equal(x, y)


def test_slim_decoder_of_8_keys_parses_the_3_its_2_items_need(tmp_path):
    path = str(tmp_path / "eight.tfrecord")
    pruning.write_records(path, 10)
    with tc.legacy_graph():
        fetches = pruning.slim_batches([path], 4)
        plan = tc.describe_lowering(fetches)
        assert "parse: 3 of 8 features (image/class/label, image/encoded, image/format); " \
               "pruned: image/object/class/label, image/embedding, image/filename, " \
               "image/height, image/width" in plan, plan
        assert "parse:" not in lower(fetches, prune_features=False).describe()
        datasets = check_against_queues(fetches, 10)
    assert_same_values(*datasets)


def test_parse_single_example_subset_with_sparse_and_ragged_keys(tmp_path, rng):
    paths = write_examples(str(tmp_path / "a.tfrecord"), rng)
    with tc.legacy_graph():
        example = parsed(paths)
        fetches = tc.batch([example["name"], tf.sparse.to_dense(example["tags"]),
                            tf.size(example["words"])], 4, dynamic_pad=True,
                           allow_smaller_final_batch=True)
        plan = tc.describe_lowering(fetches)
        assert "parse: 4 of 6 features (tags, id, name, words); pruned: weight, x; " \
               "kept unused (required: a record without it fails): id" in plan, plan
        datasets = check_against_queues(fetches, 9)
    assert_same_values(*datasets)


def test_batched_parse_prunes_sparse_ragged_and_defaulted_keys(tmp_path, rng):
    paths = write_examples(str(tmp_path / "a.tfrecord"), rng)
    with tc.legacy_graph():
        example = parsed(paths)
        fetches = tc.batch([example["x"], example["id"]], 4, allow_smaller_final_batch=True)
        plan = tc.describe_lowering(fetches)
        assert "map(vectorized: " in plan and "parse: 2 of 6 features (id, x); " \
               "pruned: tags, name, weight, words" in plan, plan
        datasets = check_against_queues(fetches, 9)
    assert_same_values(*datasets)


def test_an_unused_variable_length_dense_key_leaves_the_parse_batched(tmp_path, rng):
    paths = write_examples(str(tmp_path / "a.tfrecord"), rng)
    features = {**FEATURES, "tags": tf.io.FixedLenSequenceFeature([], tf.int64,
                                                                  allow_missing=True)}
    with tc.legacy_graph():
        queue = tc.string_input_producer(paths, num_epochs=1, shuffle=False)
        example = tf.io.parse_single_example(tc.TFRecordReader().read(queue)[1], features)
        fetches = tc.batch([example["id"], example["x"]], 4, allow_smaller_final_batch=True)
        assert "map(vectorized: " in tc.describe_lowering(fetches)
        assert "vectorized" not in lower(fetches, prune_features=False).describe()
        datasets = check_against_queues(fetches, 9)
    assert_same_values(*datasets)


@pytest.mark.parametrize("dynamic_pad", [False, True], ids=["batched parse", "per example"])
def test_a_record_without_a_required_unused_feature_still_fails(tmp_path, rng, dynamic_pad):
    paths = write_examples(str(tmp_path / "a.tfrecord"), rng, **{"3": {"name": b"no id"}})
    missing = r"Feature: id \(data type: int64\) is required but could not be found"
    with tc.legacy_graph():
        example = parsed(paths)
        fetches = tc.batch([example["name"]], 2, dynamic_pad=dynamic_pad)
        plan = tc.describe_lowering(fetches)
        assert "kept unused (required: a record without it fails): id" in plan
        assert ("map(vectorized" in plan) is not dynamic_pad
        with pytest.raises(tf.errors.InvalidArgumentError, match=missing):
            with tc.SessionIterator(fetches) as batches:
                list(batches)
        dataset = tc.to_tf_data(fetches)
    with pytest.raises(tf.errors.InvalidArgumentError, match=missing):
        list(dataset)


def test_a_record_without_a_pruned_defaulted_feature_gives_the_same_values(tmp_path, rng):
    paths = write_examples(str(tmp_path / "a.tfrecord"), rng,
                           **{"2": {"id": 2, "name": b"bare"}})
    with tc.legacy_graph():
        example = parsed(paths)
        fetches = tc.batch([example["id"], example["name"]], 4, allow_smaller_final_batch=True)
        datasets = check_against_queues(fetches, 9)
    assert_same_values(*datasets)


def test_a_pruned_feature_of_the_wrong_type_fails_only_unpruned(tmp_path, rng):
    # The documented difference: TF1 fails on a record whose unused feature has the
    # wrong type; the pruned lowering never reads it.
    paths = write_examples(str(tmp_path / "a.tfrecord"), rng,
                           **{"1": {"id": 1, "name": b"odd", "weight": [b"not a float"]}})
    wrong_type = r"Key: weight.*Data types don't match"
    with tc.legacy_graph():
        example = parsed(paths)
        fetches = tc.batch([example["id"]], 3)
        with pytest.raises(tf.errors.InvalidArgumentError, match=wrong_type):
            with tc.SessionIterator(fetches) as batches:
                list(batches)
        every_key = lower(fetches, prune_features=False).to_tf_data()
        pruned = tc.to_tf_data(fetches)
    with pytest.raises(tf.errors.InvalidArgumentError, match=wrong_type):
        values_of(every_key)
    assert [list(ids) for ids in values_of(pruned)] == [[0, 1, 2], [3, 4, 5], [6, 7, 8]]


def test_parse_example_of_a_batch_of_records_prunes_too(tmp_path, rng):
    paths = write_examples(str(tmp_path / "a.tfrecord"), rng)
    with tc.legacy_graph():
        queue = tc.string_input_producer(paths, num_epochs=1, shuffle=False)
        records = tc.batch(tc.TFRecordReader().read(queue)[1], 4, allow_smaller_final_batch=True)
        example = tf.io.parse_example(records, FEATURES)
        fetches = (example["weight"], tf.sparse.to_dense(example["tags"]))
        plan = tc.describe_lowering(fetches)
        assert plan.index("batch(4") < plan.index("parse: 3 of 6 features (tags, id, weight); "
                                                  "pruned: name, x, words"), plan
        datasets = check_against_queues(fetches, 9)
    assert_same_values(*datasets)
