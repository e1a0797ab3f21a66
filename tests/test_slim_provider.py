"""The six-step slim workflow, end to end, with TF2 eager execution left on.

Dataset -> DatasetDataProvider -> get(items) -> preprocessing -> batch /
shuffle_batch -> prefetch_queue -> dequeue(), run by SessionIterator.
"""

import itertools
import os
import pathlib
import runpy

import numpy as np
import pytest

import tf1compat as tc
from tf1compat.errors import PipelineConfigError, UnknownItemError
from tf1compat.records import tfrecord

tf = pytest.importorskip("tensorflow")
slim = pytest.importorskip("tf1compat.slim")
pytestmark = [pytest.mark.tf, pytest.mark.usefixtures("no_thread_leaks")]

v1 = tf.compat.v1

NUM_FILES = 3
PER_FILE = 8
NUM_RECORDS = NUM_FILES * PER_FILE
IMAGE_SHAPE = (4, 4, 3)

KEYS_TO_FEATURES = {
    "image/encoded": tf.io.FixedLenFeature((), tf.string),
    "image/format": tf.io.FixedLenFeature((), tf.string, default_value="png"),
    "image/class/label": tf.io.FixedLenFeature((), tf.int64),
    "record/id": tf.io.FixedLenFeature((), tf.int64),
}


def int64_feature(value):
    return tf.train.Feature(int64_list=tf.train.Int64List(value=[value]))


def bytes_feature(value):
    return tf.train.Feature(bytes_list=tf.train.BytesList(value=[value]))


@pytest.fixture(scope="module")
def split_dir(tmp_path_factory):
    """Three TFRecord shards of PNG Examples; record ids 0..23, labels id % 10."""
    directory = tmp_path_factory.mktemp("slim_split")
    rng = np.random.default_rng(1234)
    for shard in range(NUM_FILES):
        with tf.io.TFRecordWriter(str(directory / f"train-{shard}.tfrecord")) as writer:
            for index in range(PER_FILE):
                record_id = shard * PER_FILE + index
                image = rng.integers(0, 256, size=IMAGE_SHAPE, dtype=np.uint8)
                writer.write(tf.train.Example(features=tf.train.Features(feature={
                    "image/encoded": bytes_feature(tf.io.encode_png(image).numpy()),
                    "image/format": bytes_feature(b"png"),
                    "image/class/label": int64_feature(record_id % 10),
                    "record/id": int64_feature(record_id),
                })).SerializeToString())
    return directory


def get_split(split_dir, pattern="train-*.tfrecord", keys_to_features=KEYS_TO_FEATURES):
    """Step 1: the classic slim ``get_split`` Dataset."""
    handlers = {
        "image": slim.tfexample_decoder.Image(shape=IMAGE_SHAPE),
        "label": slim.tfexample_decoder.Tensor("image/class/label"),
        "id": slim.tfexample_decoder.Tensor("record/id"),
    }
    return slim.dataset.Dataset(
        data_sources=os.path.join(split_dir, pattern),
        reader=v1.TFRecordReader,
        decoder=slim.tfexample_decoder.TFExampleDecoder(keys_to_features, handlers),
        num_samples=NUM_RECORDS,
        items_to_descriptions={"image": "4x4 RGB", "label": "0..9", "id": "record number"})


def build_pipeline(dataset, *, num_readers, shuffle, seed=None, shuffle_batches=False,
                   common_queue_min=8):
    """Steps 2-6 for one epoch; returns the dequeued (images, labels, ids) batch."""
    provider = slim.dataset_data_provider.DatasetDataProvider(
        dataset, num_readers=num_readers, common_queue_capacity=NUM_RECORDS + 8,
        common_queue_min=common_queue_min, shuffle=shuffle, num_epochs=1, seed=seed)
    image, label, record_id = provider.get(["image", "label", "id"])
    image = tf.image.convert_image_dtype(image, tf.float32) * 2.0 - 1.0
    if shuffle_batches:
        batch = v1.train.shuffle_batch([image, label, record_id], batch_size=5, capacity=16,
                                       min_after_dequeue=4, seed=seed,
                                       allow_smaller_final_batch=True)
    else:
        batch = v1.train.batch([image, label, record_id], batch_size=5, capacity=16,
                               allow_smaller_final_batch=True)
    batch_queue = slim.prefetch_queue.prefetch_queue(batch, capacity=2, dynamic_pad=True)
    return batch_queue.dequeue()


def read_ids(dataset, **pipeline_args):
    """Every record id the pipeline delivers, in order; checks images and labels."""
    with tc.legacy_graph():
        fetches = build_pipeline(dataset, **pipeline_args)
        ids = []
        with tc.SessionIterator(fetches, timeout=60) as batches:
            for images, labels, batch_ids in batches:
                assert images.shape[1:] == IMAGE_SHAPE and images.dtype == np.float32
                assert images.min() >= -1.0 and images.max() <= 1.0
                np.testing.assert_array_equal(labels, batch_ids % 10)
                ids.extend(int(i) for i in batch_ids)
    return ids


def test_eager_execution_stays_on():
    assert tf.executing_eagerly()


@pytest.mark.parametrize("num_readers", [1, 4])
@pytest.mark.parametrize("shuffle", [False, True])
def test_one_epoch_delivers_every_record_once(split_dir, num_readers, shuffle):
    ids = read_ids(get_split(split_dir), num_readers=num_readers, shuffle=shuffle, seed=3)
    assert sorted(ids) == list(range(NUM_RECORDS))
    assert tf.executing_eagerly()


def test_one_epoch_with_shuffle_batch(split_dir):
    ids = read_ids(get_split(split_dir), num_readers=4, shuffle=True, seed=3,
                   shuffle_batches=True)
    assert sorted(ids) == list(range(NUM_RECORDS))


def test_one_reader_unshuffled_reads_in_file_order(split_dir):
    assert read_ids(get_split(split_dir), num_readers=1, shuffle=False) == list(range(NUM_RECORDS))


def test_seed_and_one_reader_repeat_the_order(split_dir):
    # The common queue holds the whole epoch before its first dequeue, so the
    # order depends on the seed only, not on thread timing.
    def seeded_order(seed):
        return read_ids(get_split(split_dir), num_readers=1, shuffle=True, seed=seed,
                        common_queue_min=NUM_RECORDS)

    first = seeded_order(11)
    assert first == seeded_order(11)
    assert first != list(range(NUM_RECORDS))
    assert seeded_order(12) != first


def test_pattern_matching_no_file_is_named(split_dir):
    pattern = os.path.join(split_dir, "validation-*.tfrecord")
    with tc.legacy_graph(), pytest.raises(PipelineConfigError) as caught:
        slim.dataset_data_provider.DatasetDataProvider(
            get_split(split_dir, pattern="validation-*.tfrecord"), num_epochs=1)
    assert isinstance(caught.value, ValueError)
    assert caught.value.path == pattern
    assert caught.value.argument == "data_sources"
    assert pattern in str(caught.value)


def test_unknown_item_names_valid_items(split_dir):
    with tc.legacy_graph():
        provider = slim.dataset_data_provider.DatasetDataProvider(
            get_split(split_dir), num_epochs=1)
        with pytest.raises(UnknownItemError) as caught:
            provider.get(["image", "lable"])
    assert isinstance(caught.value, ValueError)
    assert caught.value.item == "lable"
    assert caught.value.valid_items == ["id", "image", "label", "record_key"]


def test_missing_key_error_names_key_file_and_record(split_dir):
    keys_to_features = dict(KEYS_TO_FEATURES, **{"image/height": tf.io.FixedLenFeature(
        (), tf.int64)})
    dataset = get_split(split_dir, pattern="train-1.tfrecord", keys_to_features=keys_to_features)
    with pytest.raises(tf.errors.InvalidArgumentError) as caught:
        read_ids(dataset, num_readers=1, shuffle=False)
    message = caught.value.message
    assert "Feature: image/height (data type: int64) is required" in message
    # The reader key: "<file>:<byte offset of the record>"; the first record is at 0.
    assert f"Name: {os.path.join(split_dir, 'train-1.tfrecord')}:0," in message


def _labels_and_ids(dataset):
    """A DatasetDataProvider's labels and ids batched: parsed on the batch when lowered."""
    provider = slim.dataset_data_provider.DatasetDataProvider(dataset, shuffle=False,
                                                              num_epochs=1)
    return v1.train.batch(provider.get(["label", "id"]), batch_size=5,
                          allow_smaller_final_batch=True)


@pytest.mark.parametrize("pipeline, lowered_as", [
    (lambda dataset: build_pipeline(dataset, num_readers=1, shuffle=False),
     "TFRecordDataset with reader keys -> map("),
    (_labels_and_ids, "TFRecordDataset with reader keys -> batch(5, keep remainder) -> map(")],
    ids=["parsed per example", "parsed per batch"])
def test_a_record_missing_a_key_is_named_alike_on_queues_and_lowered(tmp_path, pipeline,
                                                                     lowered_as):
    """The lowered pipeline names the record a parse fails on as TF1's reader key does:
    the second file's sixth record, at its byte offset."""
    rng = np.random.default_rng(5)
    for shard in range(2):
        with tf.io.TFRecordWriter(str(tmp_path / f"train-{shard}.tfrecord")) as writer:
            for index in range(PER_FILE):
                feature = {"image/encoded": bytes_feature(tf.io.encode_png(rng.integers(
                    0, 256, size=IMAGE_SHAPE, dtype=np.uint8)).numpy()),
                    "image/class/label": int64_feature(index)}
                if (shard, index) != (1, 5):
                    feature["record/id"] = int64_feature(shard * PER_FILE + index)
                writer.write(tf.train.Example(features=tf.train.Features(
                    feature=feature)).SerializeToString())
    path = str(tmp_path / "train-1.tfrecord")
    offset = sum(tfrecord.framed_size(len(record))
                 for record in itertools.islice(tfrecord.iter_records(path), 5))
    messages = []
    with tc.legacy_graph():
        fetches = pipeline(get_split(tmp_path))
        assert lowered_as in tc.describe_lowering(fetches)
        with pytest.raises(tf.errors.InvalidArgumentError) as caught:
            with tc.SessionIterator(fetches, timeout=60) as batches:
                list(batches)
        messages.append(caught.value.message)
        dataset = tc.to_tf_data(fetches)
    with pytest.raises(tf.errors.InvalidArgumentError) as caught:
        list(dataset)
    messages.append(caught.value.message)
    for message in messages:
        assert f"Name: {path}:{offset}, Feature: record/id (data type: int64) is required" \
            in message, message


def test_example_slim_get_split_runs(capsys):
    example = pathlib.Path(__file__).resolve().parent.parent / "examples" / "slim_get_split.py"
    label_batches = runpy.run_path(str(example))["main"](["--steps", "3"])
    assert len(label_batches) == 3
    assert all(len(labels) == 4 and set(labels) <= set(range(5)) for labels in label_batches)
    assert "step 2: images (4, 8, 8, 3) float32" in capsys.readouterr().out
