"""Synthetic data in the real formats the corpus programs read, small and seeded.

Each recipe is ``recipe(folder, rng, **options) -> [paths written]``: it writes the
files the program expects, at the paths the program names (relative ones under
``folder``, the program's working folder; absolute ones as they are). The recipe a
program needs, with its options, is its ``data`` entry in ``programs.json``.
No TensorFlow here: records are written with :mod:`tf1compat.tfrecord` and
:mod:`tf1compat.example`, images with Pillow, MNIST's idx files with ``gzip``,
CIFAR-10's binary batches and slim's TFRecords of them with :mod:`tf1compat.cifar10`
(its Python version pickled from the binary batches).
"""

import csv
import gzip
import io
import os
import pickle
import struct
import tarfile
import tempfile

import numpy as np

from tf1compat import cifar10
from tf1compat.example import make_example
from tf1compat.tfrecord import write_records

__all__ = ["RECIPES", "make_data"]


def _path(folder, relative):
    path = os.path.join(folder, relative)  # an absolute ``relative`` stays as it is
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    return path


def _jpeg(pixels):
    from PIL import Image

    buffer = io.BytesIO()
    Image.fromarray(pixels).save(buffer, format="JPEG", quality=90)
    return buffer.getvalue()


def csv_rows(folder, rng, path, columns, rows=40, header=None, delimiter=","):
    """CSV rows; ``columns`` lists each column's kind: ``float``, ``int`` or a list
    of words to draw from (a text column); ``delimiter`` separates the cells (``" "``
    for a program that splits its lines on spaces)."""
    out = _path(folder, path)
    with open(out, "w", newline="") as f:
        writer = csv.writer(f, delimiter=delimiter)
        if header:
            writer.writerow(header)
        for _ in range(rows):
            writer.writerow([_cell(rng, kind) for kind in columns])
    return [out]


def _cell(rng, kind):
    if kind == "float":
        return f"{rng.uniform(0, 100):.2f}"
    if kind == "int":
        return str(int(rng.integers(0, 2)))
    return str(rng.choice(kind))


def raw_image_records(folder, rng, path, shape, count=30, label="int", label_key="label",
                      image_key="image", ints=None):
    """TFRecords of ``{image_key: raw uint8 bytes of shape, label_key: label}``; the
    label is an int64 class (``int``) or a bytes string (``bytes``); ``ints`` adds
    the same int64 features to every example (``{"pixels": 784}``)."""
    out = _path(folder, path)
    records = []
    for i in range(count):
        pixels = rng.integers(0, 256, size=shape, dtype=np.uint8)
        value = int(i % 10) if label == "int" else f"age{i % 5}".encode()
        records.append(make_example({image_key: pixels.tobytes(), label_key: value,
                                     **(ints or {})}))
    write_records(out, records)
    return [out]


def mixed_records(folder, rng, path, count=20):
    """TFRecords of ``a`` (one float), ``b`` (two int64) and ``c`` (6 raw bytes)."""
    out = _path(folder, path)
    write_records(out, [make_example({
        "a": float(rng.uniform()), "b": [int(i), int(2 * i)],
        "c": rng.integers(0, 256, size=6, dtype=np.uint8).tobytes()}) for i in range(count)])
    return [out]


def video_level_records(folder, rng, path, count=50, classes=3862, features=None):
    """TFRecords of YouTube-8M's video-level Examples: ``id`` (bytes), ``labels`` (one to
    three int64 classes below ``classes``) and, for each ``features`` entry (default
    ``{"mean_rgb": 1024, "mean_audio": 128}``), that many floats."""
    out = _path(folder, path)
    sizes = features or {"mean_rgb": 1024, "mean_audio": 128}
    name = os.path.splitext(os.path.basename(out))[0]
    records = []
    for i in range(count):
        labels = sorted(rng.choice(classes, size=int(rng.integers(1, 4)), replace=False))
        records.append(make_example({
            "id": f"{name}-{i}".encode(), "labels": [int(label) for label in labels],
            **{key: rng.uniform(-2, 2, size=size).astype(np.float32)
               for key, size in sizes.items()}}))
    write_records(out, records)
    return [out]


def jpeg_files(folder, rng, paths, size=(48, 64)):
    """RGB JPEG files of ``size`` (height, width) at ``paths``."""
    written = []
    for relative in paths:
        out = _path(folder, relative)
        with open(out, "wb") as f:
            f.write(_jpeg(rng.integers(0, 256, size=(*size, 3), dtype=np.uint8)))
        written.append(out)
    return written


def _write_idx(path, magic, array):
    with gzip.open(path, "wb") as f:
        f.write(struct.pack(f">{1 + array.ndim}I", magic, *array.shape) + array.tobytes())


def mnist_idx(folder, rng, path, train=5500, test=500):
    """The four MNIST ``*-idx*-ubyte.gz`` files in ``path`` (TF 1.x's read_data_sets
    splits 5000 training images off for validation, so ``train`` must exceed it)."""
    directory = os.path.join(folder, path)
    os.makedirs(directory, exist_ok=True)
    written = []
    for prefix, count in (("train", train), ("t10k", test)):
        images = rng.integers(0, 256, size=(count, 28, 28), dtype=np.uint8)
        labels = rng.integers(0, 10, size=count, dtype=np.uint8)
        for kind, magic, array in (("images-idx3", 2051, images), ("labels-idx1", 2049, labels)):
            out = os.path.join(directory, f"{prefix}-{kind}-ubyte.gz")
            _write_idx(out, magic, array)
            written.append(out)
    return written


def cifar10_binary(folder, rng, path=".", train=500, test=100):
    """CIFAR-10's binary version in ``path``: ``cifar-10-batches-bin/`` (the five
    ``data_batch_N.bin`` and ``test_batch.bin``) and ``cifar-10-binary.tar.gz`` of it,
    which the tutorial's ``maybe_download_and_extract`` takes for its download."""
    directory = os.path.join(folder, path)
    os.makedirs(directory, exist_ok=True)
    seed = int(rng.integers(2**31))
    archive = cifar10.make_synthetic(directory, train, test, seed, archive=True)
    return [archive, os.path.join(directory, "cifar-10-batches-bin")]


def cifar10_python(folder, rng, path=".", train=500, test=100):
    """CIFAR-10's Python version in ``path``: ``cifar-10-batches-py/`` (pickled dicts
    of ``b"data"``, uint8 rows of 3072 channel-first bytes, and ``b"labels"``) and
    ``cifar-10-python.tar.gz`` of it, which slim's ``download_and_convert_cifar10``
    takes for its download (it then reads the folder)."""
    directory = os.path.join(folder, path)
    batches = os.path.join(directory, "cifar-10-batches-py")
    os.makedirs(batches, exist_ok=True)
    seed = int(rng.integers(2**31))
    with tempfile.TemporaryDirectory() as binary:
        source = cifar10.make_synthetic(binary, train, test, seed)
        for name in sorted(os.listdir(source)):
            if not name.endswith(".bin"):
                continue
            images, labels = cifar10.read_batch_file(os.path.join(source, name))
            batch = {b"batch_label": name.encode(), b"labels": labels.tolist(),
                     b"data": images.transpose(0, 3, 1, 2).reshape(len(images), -1),
                     b"filenames": [b"%s_%d.png" % (name.encode(), i) for i in range(len(images))]}
            with open(os.path.join(batches, name[:-len(".bin")]), "wb") as f:
                pickle.dump(batch, f)
    with open(os.path.join(batches, "batches.meta"), "wb") as f:
        pickle.dump({b"label_names": [name.encode() for name in cifar10.LABELS]}, f)
    archive = os.path.join(directory, "cifar-10-python.tar.gz")
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(batches, arcname="cifar-10-batches-py")
    return [archive, batches]


def cifar10_slim_records(folder, rng, path=".", train=500, test=100):
    """``cifar10_train.tfrecord``, ``cifar10_test.tfrecord`` and ``labels.txt`` in
    ``path``, as slim's ``download_and_convert_cifar10`` writes them (PNG Examples),
    converted by :func:`tf1compat.cifar10.convert` from synthetic binary batches."""
    directory = os.path.join(folder, path)
    seed = int(rng.integers(2**31))
    with tempfile.TemporaryDirectory() as binary:
        cifar10.convert(cifar10.make_synthetic(binary, train, test, seed), directory,
                        workers=0, quiet=True)
    return [os.path.join(directory, name) for name in sorted(os.listdir(directory))]


RECIPES = {
    "csv_rows": csv_rows,
    "raw_image_records": raw_image_records,
    "mixed_records": mixed_records,
    "video_level_records": video_level_records,
    "jpeg_files": jpeg_files,
    "mnist_idx": mnist_idx,
    "cifar10_binary": cifar10_binary,
    "cifar10_python": cifar10_python,
    "cifar10_slim_records": cifar10_slim_records,
}


def make_data(folder, specs, seed=0):
    """Write each ``{"recipe": name, **options}`` of ``specs`` under ``folder``;
    returns the paths written."""
    rng = np.random.default_rng(seed)
    written = []
    for spec in specs:
        options = dict(spec)
        name = options.pop("recipe")
        if name not in RECIPES:
            raise ValueError(f"unknown data recipe {name!r}; valid recipes: "
                             f"{', '.join(sorted(RECIPES))}")
        written += RECIPES[name](folder, rng, **options)
    return written
