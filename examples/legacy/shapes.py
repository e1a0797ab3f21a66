"""The dataset written by build_image_records.py, described for tf-slim the way
slim's datasets/flowers.py describes its own: `get_split(split_name, dataset_dir)`."""

import os

import tensorflow as tf

slim = tf.contrib.slim

_FILE_PATTERN = "shapes_%s-*.tfrecord"
_ITEMS_TO_DESCRIPTIONS = {
    "image": "A color image of varying size.",
    "label": "A single integer between 0 and 2",
}


def read_label_file(dataset_dir):
  with tf.gfile.Open(os.path.join(dataset_dir, "labels.txt")) as f:
    lines = [line.strip() for line in f if line.strip()]
  return {int(line.split(":")[0]): line.split(":", 1)[1] for line in lines}


def get_split(split_name, dataset_dir, file_pattern=None, reader=None):
  if split_name not in ("train", "validation"):
    raise ValueError("split name %s was not recognized." % split_name)
  file_pattern = os.path.join(dataset_dir, (file_pattern or _FILE_PATTERN) % split_name)
  if reader is None:
    reader = tf.TFRecordReader
  keys_to_features = {
      "image/encoded": tf.FixedLenFeature((), tf.string, default_value=""),
      "image/format": tf.FixedLenFeature((), tf.string, default_value="png"),
      "image/class/label": tf.FixedLenFeature(
          [], tf.int64, default_value=tf.zeros([], dtype=tf.int64)),
  }
  items_to_handlers = {
      "image": slim.tfexample_decoder.Image(),
      "label": slim.tfexample_decoder.Tensor("image/class/label"),
  }
  decoder = slim.tfexample_decoder.TFExampleDecoder(keys_to_features, items_to_handlers)
  labels_to_names = read_label_file(dataset_dir)
  num_samples = sum(1 for path in tf.gfile.Glob(file_pattern)
                    for _ in tf.python_io.tf_record_iterator(path))
  return slim.dataset.Dataset(
      data_sources=file_pattern, reader=reader, decoder=decoder, num_samples=num_samples,
      items_to_descriptions=_ITEMS_TO_DESCRIPTIONS, num_classes=len(labels_to_names),
      labels_to_names=labels_to_names)
