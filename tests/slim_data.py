"""Tiny seeded slim datasets in the real format, and both pipelines over them.

Shared by test_compare.py, test_tfdata.py and test_differences.py. TensorFlow is
imported only inside the functions that need it, so pure-numpy tests can import
this module too.
"""

import os

import numpy as np

from tf1compat.cifar10 import encode_png
from tf1compat.records.example import make_example
from tf1compat.records.tfrecord import write_records

IMAGE_SHAPE = (8, 8, 3)


def make_examples(rng, count):
    """``count`` examples ``{"image": uint8 [8, 8, 3], "label": int64}``."""
    images = rng.integers(0, 256, size=(count, *IMAGE_SHAPE), dtype=np.uint8)
    labels = rng.integers(0, 10, size=count)
    return [{"image": image, "label": np.int64(label)}
            for image, label in zip(images, labels, strict=True)]


def write_slim_files(directory, examples, num_files=4, image_format=None):
    """Write ``examples`` as slim image TFRecords, dealt round-robin over
    ``num_files`` files; returns the glob pattern matching them. ``image_format``
    gives each example's (``b"png"`` or ``b"raw"``) from its index; PNG for all
    by default."""
    image_format = image_format or (lambda index: b"png")
    encoded = encode_png(np.stack([e["image"] for e in examples]))
    records = []
    for index, (png, e) in enumerate(zip(encoded, examples, strict=True)):
        kind = image_format(index)
        records.append(make_example({
            "image/encoded": png if kind == b"png" else e["image"].tobytes(),
            "image/format": kind, "image/class/label": int(e["label"])}))
    for index in range(num_files):
        write_records(os.path.join(directory, f"train-{index:05d}.tfrecord"),
                      records[index::num_files])
    return os.path.join(directory, "train-*.tfrecord")


def get_split_factory(pattern, num_samples):
    """A slim ``get_split``-style factory ``f(split_name, dataset_dir)`` for ``pattern``.

    Like a classic slim script it builds its tensors (feature defaults) when
    called, so call it inside the graph that will use the dataset.
    """
    def get_split(split_name="train", dataset_dir=None):
        from tf1compat import slim
        from tf1compat._tf import tf

        keys_to_features = {
            "image/encoded": tf.io.FixedLenFeature((), tf.string, default_value=""),
            "image/format": tf.io.FixedLenFeature((), tf.string, default_value="png"),
            "image/class/label": tf.io.FixedLenFeature(
                [], tf.int64, default_value=tf.zeros([], dtype=tf.int64)),
        }
        items_to_handlers = {
            "image": slim.tfexample_decoder.Image(shape=list(IMAGE_SHAPE)),
            "label": slim.tfexample_decoder.Tensor("image/class/label"),
        }
        decoder = slim.tfexample_decoder.TFExampleDecoder(keys_to_features,
                                                          items_to_handlers)
        return slim.dataset.Dataset(
            data_sources=pattern, reader=tf.compat.v1.TFRecordReader, decoder=decoder,
            num_samples=num_samples,
            items_to_descriptions={"image": "an 8x8 color image", "label": "0..9"})
    return get_split


def legacy_items(get_split, items=("image", "label"), **provider_kwargs):
    """``{item: tensor}`` from a DatasetDataProvider; call inside ``legacy_graph()``."""
    from tf1compat import slim

    provider_kwargs.setdefault("num_epochs", 1)
    provider = slim.dataset_data_provider.DatasetDataProvider(get_split(), **provider_kwargs)
    return dict(zip(items, provider.get(list(items)), strict=True))
