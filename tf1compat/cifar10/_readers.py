"""What reads CIFAR data in a TF1 graph: slim's ``get_split`` over the converted
TFRecords and the tutorial's queue pipelines over the binary batch files.
TensorFlow is imported when these functions are called.
"""

import os
from collections.abc import Sequence
from typing import Any

from tf1compat._typing import PathArg, Queue, Tensor
from tf1compat.cifar10._convert import _first_example
from tf1compat.cifar10._format import (
    _CIFAR10,
    _CIFAR100,
    _HEIGHT,
    _IMAGE_BYTES,
    _VARIANTS,
    _WIDTH,
    _record_count,
)
from tf1compat.convert.labels import read_labels_file
from tf1compat.errors import CifarFormatError, PipelineConfigError
from tf1compat.records import _fs
from tf1compat.records.committed import check_committed
from tf1compat.records.tfrecord import count_records

# The canonical sizes of slim's splits; get_split's num_samples counts the files.
SPLITS_TO_SIZES = {"train": 50000, "test": 10000}
IMAGE_SIZE = 24                        # the tutorial's crop
_TUTORIAL_QUEUE_FRACTION = 0.4         # min_after_dequeue = 0.4 * examples per epoch


_ITEMS_TO_DESCRIPTIONS = {
    "image": "A [32 x 32 x 3] color image (uint8).",
    "label": "The class, an integer between 0 and num_classes - 1.",
}


def _split_files(split_name: str, dataset_dir: PathArg, file_pattern: str | None) -> list[str]:
    """The TFRecord files of a split, sorted: single file, shards, or a pattern (in a
    folder or at a URL)."""
    dataset_dir = os.fspath(dataset_dir)
    if file_pattern is not None:
        name_pattern = file_pattern % split_name if "%s" in file_pattern else file_pattern
        pattern = _fs.join(dataset_dir, name_pattern)
        files = _fs.files_in(dataset_dir, name_pattern)
        if not files:
            raise PipelineConfigError(f"file_pattern {pattern!r} matches no file",
                                      argument="file_pattern", path=pattern,
                                      expected="a pattern matching the split's TFRecords")
        check_committed(files, pattern)
        return files
    candidates = [name % split_name for variant in _VARIANTS.values() for name in (
        f"{variant.name}_%s.tfrecord", f"{variant.name}_%s-*-of-*.tfrecord")]
    for name in candidates:
        files = _fs.files_in(dataset_dir, name)
        if files:
            check_committed(files, _fs.join(dataset_dir, name))
            return files
    raise PipelineConfigError(
        f"{dataset_dir}: no {' or '.join(candidates)}; convert the binary data first "
        "(tf1compat convert-cifar10 SOURCE OUTPUT_DIR)",
        argument="dataset_dir", path=dataset_dir, expected=candidates)


def get_split(split_name: str, dataset_dir: PathArg, file_pattern: str | None = None,
              reader: type | None = None) -> Any:
    """The slim ``Dataset`` of a converted split, as slim's ``datasets/cifar10.py``.

    Reads ``cifar10_<split>.tfrecord`` or its shards (or the files matching
    ``file_pattern``, where ``%s`` is replaced by the split name) in
    ``dataset_dir`` (refused with :class:`~tf1compat.errors.IncompleteOutputError`
    while a conversion into it is under way or was cut short). Items: ``image``
    (uint8 [32, 32, 3], PNG or raw records) and ``label`` (int64), plus
    ``coarse_label`` for CIFAR-100. ``num_samples`` is the number of records actually
    in the files (so it is right for small or partial data; the full dataset gives
    ``SPLITS_TO_SIZES``). ``labels_to_names`` comes from ``labels.txt`` when present.
    ``reader`` defaults to :class:`tf1compat.TFRecordReader`.
    """
    from tf1compat._tf import tf
    from tf1compat.pipeline import queues
    from tf1compat.slim import dataset, tfexample_decoder

    if split_name not in SPLITS_TO_SIZES:
        raise PipelineConfigError(
            f"unknown split {split_name!r}; valid splits: {sorted(SPLITS_TO_SIZES)}",
            argument="split_name", expected=sorted(SPLITS_TO_SIZES))
    files = _split_files(split_name, dataset_dir, file_pattern)
    counts = [count_records(f) for f in files]
    first: dict[str, Any] = next(
        (_first_example(f) for f, count in zip(files, counts, strict=True) if count), {})
    variant = _CIFAR100 if "image/coarse_label" in first else _CIFAR10
    label_keys = (*variant.extra_label_keys, "image/class/label")
    keys_to_features = {
        "image/encoded": tf.io.FixedLenFeature((), tf.string, default_value=""),
        "image/format": tf.io.FixedLenFeature((), tf.string, default_value="png"),
        **{key: tf.io.FixedLenFeature((), tf.int64, default_value=0) for key in label_keys},
    }
    items_to_handlers = {
        "image": tfexample_decoder.Image(shape=[_HEIGHT, _WIDTH, 3]),
        "label": tfexample_decoder.Tensor("image/class/label"),
    }
    descriptions = dict(_ITEMS_TO_DESCRIPTIONS)
    if variant is _CIFAR100:
        items_to_handlers["coarse_label"] = tfexample_decoder.Tensor("image/coarse_label")
        descriptions["coarse_label"] = "The superclass, an integer between 0 and 19."
    labels_to_names = (read_labels_file(os.fspath(dataset_dir))
                       or dict(enumerate(variant.label_names[-1])))
    return dataset.Dataset(
        data_sources=files, reader=reader or queues.TFRecordReader,
        decoder=tfexample_decoder.TFExampleDecoder(keys_to_features, items_to_handlers),
        num_samples=sum(counts), items_to_descriptions=descriptions,
        num_classes=variant.num_classes[-1], labels_to_names=labels_to_names)


# -------------------------------------------------------------- tutorial inputs

def _tutorial_files(data_dir: PathArg, names: Sequence[str]) -> tuple[list[str], int]:
    """Paths of binary batch files in ``data_dir`` (or its cifar-10-batches-bin/),
    checked, and their total number of records."""
    data_dir = os.fspath(data_dir)
    nested = os.path.join(data_dir, _CIFAR10.folder)
    folder = nested if os.path.isdir(nested) else data_dir
    paths = [os.path.join(folder, name) for name in names]
    for path in paths:
        if not os.path.isfile(path):
            raise CifarFormatError(f"{folder}: missing {os.path.basename(path)}; "
                                   f"the tutorial reads {list(names)}",
                                   path=path, expected=list(names))
    return paths, sum(_record_count(p, 1) for p in paths)


def _read_cifar10(filename_queue: Queue) -> tuple[Tensor, Tensor]:
    """One ``(uint8 image [32, 32, 3], int32 label [1])`` from a queue of batch files."""
    from tf1compat._tf import tf
    from tf1compat.pipeline import queues
    reader = queues.FixedLengthRecordReader(record_bytes=1 + _IMAGE_BYTES)
    _, value = reader.read(filename_queue)
    record = tf.io.decode_raw(value, tf.uint8)
    label = tf.cast(tf.reshape(record[:1], [1]), tf.int32)
    image = tf.transpose(tf.reshape(record[1:], [3, _HEIGHT, _WIDTH]), [1, 2, 0])
    return image, label


def _op_seed(seed: int | None, offset: int) -> int | None:
    return None if seed is None else seed + offset


def inputs(eval_data: bool, data_dir: PathArg, batch_size: int, *, num_epochs: int | None = None,
           num_threads: int = 1) -> tuple[Tensor, Tensor]:
    """The tutorial's evaluation input: ``(images, labels)`` batch tensors.

    Reads ``test_batch.bin`` (``eval_data`` true) or ``data_batch_1..5.bin``
    from ``data_dir`` (the ``cifar-10-batches-bin`` folder or its parent),
    center-crops to 24x24 (``IMAGE_SIZE``) and applies per-image
    standardization; images float32 ``[batch_size, 24, 24, 3]``, labels int32
    ``[batch_size]``. Unlike the tutorial (16 threads, shuffled file list) the
    defaults deliver the records in file order. ``num_epochs`` stops after that
    many passes (the last batch may then be smaller); the default repeats forever.
    Build inside :func:`tf1compat.legacy_graph`.
    """
    from tf1compat._tf import tf
    from tf1compat.pipeline import queues
    files, count = _tutorial_files(data_dir, _CIFAR10.splits["test" if eval_data else "train"])
    queue = queues.string_input_producer(files, num_epochs=num_epochs, shuffle=False)
    image, label = _read_cifar10(queue)
    image = tf.image.resize_with_crop_or_pad(tf.cast(image, tf.float32), IMAGE_SIZE, IMAGE_SIZE)
    image = tf.image.per_image_standardization(image)
    images, labels = queues.batch(
        [image, label], batch_size, num_threads=num_threads,
        capacity=int(count * _TUTORIAL_QUEUE_FRACTION) + 3 * batch_size,
        allow_smaller_final_batch=num_epochs is not None)
    return images, tf.reshape(labels, [-1 if num_epochs else batch_size])


def distorted_inputs(data_dir: PathArg, batch_size: int, *, min_after_dequeue: int | None = None,
                     num_threads: int = 16, seed: int | None = None) -> tuple[Tensor, Tensor]:
    """The tutorial's training input: ``(images, labels)`` shuffled, augmented batches.

    Reads ``data_batch_1..5.bin`` from ``data_dir`` (the folder or its parent)
    forever; each image gets a random 24x24 crop, a random left-right flip,
    brightness (max delta 63) and contrast (0.2..1.8) changes and per-image
    standardization. ``shuffle_batch`` keeps ``min_after_dequeue`` images in its
    buffer: by default 40% of the training records, as in the tutorial (20000
    for the full dataset; lower it for a faster start). ``seed`` makes the file
    order, distortions and shuffling repeatable (single-threaded). Images
    float32 ``[batch_size, 24, 24, 3]``, labels int32 ``[batch_size]``.
    """
    from tf1compat._tf import tf
    from tf1compat.pipeline import queues
    files, count = _tutorial_files(data_dir, _CIFAR10.splits["train"])
    if min_after_dequeue is None:
        min_after_dequeue = int(count * _TUTORIAL_QUEUE_FRACTION)
    queue = queues.string_input_producer(files, seed=_op_seed(seed, 0))
    image, label = _read_cifar10(queue)
    image = tf.image.random_crop(tf.cast(image, tf.float32), [IMAGE_SIZE, IMAGE_SIZE, 3],
                                 seed=_op_seed(seed, 1))
    image = tf.image.random_flip_left_right(image, seed=_op_seed(seed, 2))
    image = tf.image.random_brightness(image, max_delta=63, seed=_op_seed(seed, 3))
    image = tf.image.random_contrast(image, lower=0.2, upper=1.8, seed=_op_seed(seed, 4))
    image = tf.image.per_image_standardization(image)
    images, labels = queues.shuffle_batch(
        [image, label], batch_size, capacity=min_after_dequeue + 3 * batch_size,
        min_after_dequeue=min_after_dequeue, num_threads=num_threads, seed=_op_seed(seed, 5))
    return images, tf.reshape(labels, [batch_size])
