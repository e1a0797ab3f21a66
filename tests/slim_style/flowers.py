"""A flowers-style dataset: slim's ``flowers.py`` reads ``flowers_%s_*.tfrecord``."""

import os

from slim_style import dataset_utils
from tf1compat import slim
from tf1compat._tf import tf

_FILE_PATTERN = "flowers_%s_*.tfrecord"

SPLITS_TO_SIZES = {"train": 27, "validation": 3}

_NUM_CLASSES = 3

_ITEMS_TO_DESCRIPTIONS = {
    "image": "A color image of varying size.",
    "label": "A single integer between 0 and 2",
}


def get_split(split_name, dataset_dir, file_pattern=None, reader=None):
    if split_name not in SPLITS_TO_SIZES:
        raise ValueError("split name %s was not recognized." % split_name)
    if not file_pattern:
        file_pattern = _FILE_PATTERN
    file_pattern = os.path.join(dataset_dir, file_pattern % split_name)
    if reader is None:
        reader = tf.compat.v1.TFRecordReader
    keys_to_features = {
        "image/encoded": tf.io.FixedLenFeature((), tf.string, default_value=""),
        "image/format": tf.io.FixedLenFeature((), tf.string, default_value="png"),
        "image/class/label": tf.io.FixedLenFeature(
            [], tf.int64, default_value=tf.zeros([], dtype=tf.int64)),
    }
    items_to_handlers = {
        "image": slim.tfexample_decoder.Image(),
        "label": slim.tfexample_decoder.Tensor("image/class/label"),
    }
    decoder = slim.tfexample_decoder.TFExampleDecoder(keys_to_features, items_to_handlers)
    labels_to_names = None
    if dataset_utils.has_labels(dataset_dir):
        labels_to_names = dataset_utils.read_label_file(dataset_dir)
    return slim.dataset.Dataset(
        data_sources=file_pattern, reader=reader, decoder=decoder,
        num_samples=SPLITS_TO_SIZES[split_name], items_to_descriptions=_ITEMS_TO_DESCRIPTIONS,
        num_classes=_NUM_CLASSES, labels_to_names=labels_to_names)
