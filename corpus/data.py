"""Synthetic data in the real formats the corpus programs read, small and seeded.

Each recipe is ``recipe(folder, rng, **options) -> [paths written]``: it writes the
files the program expects, at the paths the program names (relative ones under
``folder``, the program's working folder; absolute ones as they are). The recipe a
program needs, with its options, is its ``data`` entry in ``programs.json``.
No TensorFlow here: records are written with :mod:`tf1compat.tfrecord` and
:mod:`tf1compat.example`, images with Pillow, MNIST's idx files with ``gzip``.
"""

import csv
import gzip
import io
import os
import struct

import numpy as np

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


def csv_rows(folder, rng, path, columns, rows=40, header=None):
    """CSV rows; ``columns`` lists each column's kind: ``float``, ``int`` or a list
    of words to draw from (a text column)."""
    out = _path(folder, path)
    with open(out, "w", newline="") as f:
        writer = csv.writer(f)
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


RECIPES = {
    "csv_rows": csv_rows,
    "raw_image_records": raw_image_records,
    "mixed_records": mixed_records,
    "jpeg_files": jpeg_files,
    "mnist_idx": mnist_idx,
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
