"""The queue API and tf-slim facing what TF1 fails on late or opaquely: a glob that
matches a dangling symbolic link, provider arguments of zero."""

import os

import pytest
from slim_data import get_split_factory, legacy_items, make_examples, write_slim_files

import tf1compat as tc
from tf1compat.errors import PipelineConfigError

tf = pytest.importorskip("tensorflow")
pytestmark = pytest.mark.tf


@pytest.fixture
def pattern(tmp_path, rng):
    pattern = write_slim_files(str(tmp_path), make_examples(rng, 6), 2)
    os.symlink(tmp_path / "gone.tfrecord", tmp_path / "train-00009.tfrecord")
    return pattern


def test_a_glob_matching_a_dangling_symlink_is_named_while_building(pattern, tmp_path):
    dangling = str(tmp_path / "train-00009.tfrecord")
    with tc.legacy_graph():
        queue = tc.string_input_producer([pattern], num_epochs=1)
        with pytest.raises(PipelineConfigError) as excinfo:
            tc.TFRecordReader().read(queue)
    assert excinfo.value.path == dangling
    assert f"{dangling!r} is a symbolic link to a missing file" in str(excinfo.value)
    with tc.legacy_graph(), pytest.raises(PipelineConfigError, match="symbolic link"):
        legacy_items(get_split_factory(pattern, 6))  # slim's get_data_files too


@pytest.mark.parametrize("options, message", [
    ({"num_readers": 0}, "DatasetDataProvider: num_readers must be a positive integer, got 0"),
    ({"common_queue_capacity": 0}, "DatasetDataProvider: common_queue_capacity must be a "
                                   "positive integer (or negative for no limit), got 0"),
    ({"common_queue_capacity": float("nan")}, "DatasetDataProvider: common_queue_capacity "
                                              "must be a positive integer (or negative for no "
                                              "limit), got nan"),
    ({"common_queue_min": -1}, "DatasetDataProvider: common_queue_min must be a "
                               "non-negative integer, got -1"),
])
def test_slim_provider_arguments_tf1_fails_on_opaquely_are_named(tmp_path, rng, options,
                                                                  message):
    examples = make_examples(rng, 4)
    get_split = get_split_factory(write_slim_files(str(tmp_path), examples, 1), 4)
    with tc.legacy_graph(), pytest.raises(PipelineConfigError) as excinfo:
        legacy_items(get_split, **options)
    assert str(excinfo.value) == message
    assert excinfo.value.argument == next(iter(options))
    with tc.legacy_graph():  # valid arguments still read every record, in order
        items = legacy_items(get_split, num_readers=1, shuffle=False)
        labels = [int(example["label"]) for example in tc.SessionIterator(items)]
    assert labels == [int(example["label"]) for example in examples]
