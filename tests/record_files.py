"""Small record files the cache and fast-path tests share."""

import numpy as np

from tf1compat.records import tfrecord
from tf1compat.records.example import make_example

IMAGE_SHAPE = [4, 4, 3]
IMAGE_COUNTS = (7, 5, 9)   # examples per file; ids 0..20


def write_image_files(tmp_path, rng):
    """Three TFRecord files of {id, image: raw uint8 4x4x3 bytes}; returns (paths,
    {id: image})."""
    paths, images = [], {}
    for index, count in enumerate(IMAGE_COUNTS):
        path = str(tmp_path / f"part-{index}.tfrecord")
        examples = []
        for _ in range(count):
            image = rng.integers(0, 256, IMAGE_SHAPE, dtype=np.uint8)
            images[len(images)] = image
            examples.append(make_example({"id": len(images) - 1, "image": image.tobytes()}))
        tfrecord.write_records(path, examples)
        paths.append(path)
    return paths, images


def write_reader_files(tmp_path, rng, kind):
    """Three files of 5, 2 and 4 records for a reader ``kind``: ``fixed_length`` (2
    header bytes, records of 3, 1 footer byte), ``text_line`` (a header line),
    ``whole_file`` (random bytes) or ``gzip_tfrecord``; returns their paths."""
    paths = []
    for index, size in enumerate((5, 2, 4)):
        path = tmp_path / f"f{index}.{kind}"
        if kind == "fixed_length":
            path.write_bytes(b"HH" + rng.integers(0, 256, 3 * size, dtype=np.uint8).tobytes()
                             + b"F")
        elif kind == "text_line":
            path.write_text("header\n" + "\n".join(f"line {index}.{i}" for i in range(size)))
        elif kind == "whole_file":
            path.write_bytes(rng.integers(0, 256, size, dtype=np.uint8).tobytes())
        else:
            tfrecord.write_records(str(path), [bytes([i]) * (i + 1) for i in range(size)],
                                   compression="GZIP")
        paths.append(str(path))
    return paths
