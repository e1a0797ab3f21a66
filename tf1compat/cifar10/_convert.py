"""CIFAR binary batches -> slim's TFRecords, in parallel, streaming and atomic
(no TensorFlow: the spawned encoding processes stay light).

The records are read back by :func:`tf1compat.cifar10.get_split`; the framing
and the sharded parallel writing are :mod:`tf1compat.records.tfrecord`'s.
"""

import dataclasses
import functools
import glob
import itertools
import os
import struct
import tarfile
import tempfile
import time
import zlib

import numpy as np

from tf1compat.cifar10._format import (
    _HEIGHT,
    _IMAGE_BYTES,
    _VARIANTS,
    _WIDTH,
    _iter_file_chunks,
    _parse_records,
    _record_count,
    _Variant,
)
from tf1compat.errors import CifarFormatError, PipelineConfigError
from tf1compat.records.example import example_to_dict, make_example
from tf1compat.records.tfrecord import count_records, iter_records, write_sharded

_CHUNK_RECORDS = 1000      # records read and label-checked at a time


# ------------------------------------------------------------------------ PNG

def _png_chunk(tag, data):
    return (struct.pack(">I", len(data)) + tag + data
            + struct.pack(">I", zlib.crc32(tag + data)))


def encode_png(images):
    """PNG-encode uint8 RGB images ``[N, H, W, 3]``; returns a list of ``bytes``.

    Every row uses PNG's "Up" filter, computed for the whole batch in numpy,
    then zlib at level 6 (libpng's default). About 3x faster than Pillow on
    32x32 images; ``tf.io.decode_png`` returns exactly the input pixels.
    """
    images = np.asarray(images)
    if images.ndim != 4 or images.shape[3] != 3 or images.dtype != np.uint8:
        raise ValueError(f"encode_png: expected uint8 [N, H, W, 3], got "
                         f"{images.dtype} {list(images.shape)}")
    n, height, width, _ = images.shape
    rows = images.reshape(n, height, width * 3)
    filtered = np.empty((n, height, width * 3 + 1), np.uint8)
    filtered[:, :, 0] = 2                                   # filter type Up
    filtered[:, 0, 1:] = rows[:, 0]
    np.subtract(rows[:, 1:], rows[:, :-1], out=filtered[:, 1:, 1:])
    head = b"\x89PNG\r\n\x1a\n" + _png_chunk(
        b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
    tail = _png_chunk(b"IEND", b"")
    return [head + _png_chunk(b"IDAT", zlib.compress(image.tobytes(), 6)) + tail
            for image in filtered]


# ------------------------------------------------------------------ conversion

@dataclasses.dataclass(frozen=True)
class ConversionSummary:
    """What :func:`convert` did: per-split record counts and output files."""

    dataset: str
    output_dir: str
    image_format: str
    counts: dict            # split -> number of records
    files: dict             # split -> output paths
    num_bytes: int
    seconds: float
    skipped: bool

    def __str__(self):
        counts = ", ".join(f"{split} {n}" for split, n in self.counts.items())
        action = "up to date, skipped (overwrite=True redoes it)" if self.skipped else \
            f"wrote {self.num_bytes / 1e6:.1f} MB in {self.seconds:.1f} s"
        return (f"{self.dataset} -> {self.output_dir}: {counts} images "
                f"({self.image_format}); {action}")


@dataclasses.dataclass(frozen=True)
class _Plan:
    """The binary inputs of one conversion and the outputs they map to."""

    variant: _Variant
    sources: dict           # split -> [(binary path, record count)]
    outputs: dict           # split -> [(output file name, record count)]

    @property
    def counts(self):
        return {split: sum(n for _, n in files) for split, files in self.sources.items()}


def _find_variant_folder(directory):
    """The folder holding the batch files: ``directory`` or its dataset subfolder."""
    for variant in _VARIANTS.values():
        for folder in (os.path.join(directory, variant.folder), directory):
            if any(os.path.exists(os.path.join(folder, name)) for name in variant.file_names):
                return variant, folder
    expected = " or ".join(f"{v.folder}/ ({', '.join(v.file_names)})"
                           for v in _VARIANTS.values())
    raise CifarFormatError(f"{directory}: no CIFAR binary batch files found; expected {expected}",
                           path=directory, expected=expected)


def _extract_archive(archive, staging):
    """Extract an archive's regular files into ``staging``; returns that folder."""
    target = os.path.join(staging, "source")
    try:
        with tarfile.open(archive) as tar:
            tar.extractall(target, members=[m for m in tar if m.isfile()], filter="data")
    except (tarfile.TarError, OSError) as e:
        raise CifarFormatError(f"{archive}: cannot extract: {e}", path=archive,
                               expected="a CIFAR-10/100 binary .tar.gz") from e
    return target


def _open_source(source, staging):
    """``(variant, folder)`` of an extracted folder or a ``.tar.gz`` source."""
    source = os.fspath(source)
    if os.path.isfile(source):
        source = _extract_archive(source, staging)
    elif not os.path.isdir(source):
        raise PipelineConfigError(
            f"source {source!r} does not exist; expected a CIFAR binary folder or .tar.gz",
            argument="source", path=source, expected="a CIFAR binary folder or .tar.gz")
    variant, folder = _find_variant_folder(source)
    for names in variant.splits.values():
        for name in names:
            path = os.path.join(folder, name)
            if not os.path.isfile(path):
                expected = list(variant.file_names)
                raise CifarFormatError(
                    f"{folder}: missing {name}; a {variant.name} binary folder has {expected}",
                    path=path, expected=expected)
    return variant, folder


def _shard_names(prefix, split, num_shards):
    if num_shards == 1:
        return [f"{prefix}_{split}.tfrecord"]
    return [f"{prefix}_{split}-{i:05d}-of-{num_shards:05d}.tfrecord" for i in range(num_shards)]


def _make_plan(variant, folder, num_shards):
    sources, outputs = {}, {}
    for split, names in variant.splits.items():
        paths = [os.path.join(folder, name) for name in names]
        sources[split] = [(p, _record_count(p, variant.label_bytes)) for p in paths]
        total = sum(n for _, n in sources[split])
        sizes = [len(part) for part in np.array_split(np.arange(total), num_shards)]
        names = _shard_names(variant.name, split, num_shards)
        outputs[split] = list(zip(names, sizes, strict=True))
    return _Plan(variant, sources, outputs)


def _label_names(variant, folder):
    """Names per label byte, from the dataset's names files when present."""
    result = []
    for names_file, fallback in zip(variant.label_files, variant.label_names, strict=True):
        path = os.path.join(folder, names_file)
        if os.path.isfile(path):
            with open(path) as f:
                names = tuple(line.strip() for line in f if line.strip())
            if len(names) != len(fallback):
                raise CifarFormatError(
                    f"{path}: {len(names)} class names, expected {len(fallback)}",
                    path=path, expected=f"{len(fallback)} non-empty lines")
            result.append(names)
        else:
            result.append(fallback)
    return result


def _labels_file_texts(variant, names_per_byte):
    """``labels.txt`` (last label byte: the class) and for CIFAR-100 ``coarse_labels.txt``."""
    texts = {"labels.txt": names_per_byte[-1]}
    if variant.label_bytes == 2:
        texts["coarse_labels.txt"] = names_per_byte[0]
    return {name: "".join(f"{i}:{n}\n" for i, n in enumerate(names))
            for name, names in texts.items()}


def _encode_record(record, label_bytes, image_format, extra_label_keys):
    """The serialized ``tf.train.Example`` of one binary record (runs in workers)."""
    pixels = np.frombuffer(record, np.uint8, offset=label_bytes)
    image = pixels.reshape(1, 3, _HEIGHT, _WIDTH).transpose(0, 2, 3, 1)
    labels = list(record[:label_bytes])
    features = {"image/encoded": encode_png(image)[0] if image_format == "png"
                else image.tobytes(),
                "image/format": image_format.encode(), "image/class/label": labels[-1],
                "image/height": _HEIGHT, "image/width": _WIDTH}
    features.update(zip(extra_label_keys, labels[:-1], strict=True))  # coarse label of CIFAR-100
    return make_example(features)


@dataclasses.dataclass(frozen=True)
class _RecordStream:
    """The raw records of some batch files, in order, labels checked; sized, so
    that the progress bar knows the total."""

    sources: list           # [(path, record count)]
    label_bytes: int

    def __len__(self):
        return sum(count for _, count in self.sources)

    def __iter__(self):
        record_bytes = self.label_bytes + _IMAGE_BYTES
        for path, count in self.sources:
            for first, data in _iter_file_chunks(path, record_bytes, count, _CHUNK_RECORDS):
                _parse_records(data, self.label_bytes, path, first)
                for offset in range(0, len(data), record_bytes):
                    yield data[offset:offset + record_bytes]


def _write_split(plan, split, staging, image_format, workers):
    """Encode one split into ``staging``; returns ``[(staged path, final name)]``."""
    encode = functools.partial(_encode_record, label_bytes=plan.variant.label_bytes,
                               image_format=image_format,
                               extra_label_keys=plan.variant.extra_label_keys)
    names = [name for name, _ in plan.outputs[split]]
    paths = write_sharded(_RecordStream(plan.sources[split], plan.variant.label_bytes),
                          os.path.join(staging, f"{plan.variant.name}_{split}.tfrecord"),
                          len(names), workers=workers, encode=encode)
    return list(zip(paths, names, strict=True))


def _outputs_valid(plan, output_dir, image_format, label_texts):
    """Whether ``output_dir`` already holds this conversion's complete outputs."""
    for name, text in label_texts.items():
        path = os.path.join(output_dir, name)
        if not os.path.isfile(path):
            return False
        with open(path) as f:
            if f.read() != text:
                return False
    for name, size in itertools.chain.from_iterable(plan.outputs.values()):
        path = os.path.join(output_dir, name)
        if not os.path.isfile(path) or count_records(path) != size:
            return False
        if size and _first_example(path)["image/format"][0] != image_format.encode():
            return False
    return True


def _first_example(path):
    return example_to_dict(next(iter(iter_records(path))))


def _stale_outputs(variant, output_dir, keep):
    """Earlier outputs of the same dataset (e.g. another shard count) not in ``keep``."""
    stale = []
    for split in variant.splits:
        for pattern in (f"{variant.name}_{split}.tfrecord",
                        f"{variant.name}_{split}-*-of-*.tfrecord"):
            stale.extend(p for p in glob.glob(os.path.join(glob.escape(output_dir), pattern))
                         if os.path.basename(p) not in keep)
    return stale


def _commit(plan, staged, output_dir):
    """Move ``[(staged path, final name)]`` into place in order, then drop stale shards."""
    for path, name in staged:
        os.replace(path, os.path.join(output_dir, name))
    keep = {name for name, _ in itertools.chain.from_iterable(plan.outputs.values())}
    for path in _stale_outputs(plan.variant, output_dir, keep):
        os.remove(path)


def _check_positive_int(argument, value):
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise PipelineConfigError(f"{argument} must be a positive integer, got {value!r}",
                                  argument=argument, expected="an integer >= 1")


def _check_convert_arguments(image_format, num_shards, workers):
    if image_format not in ("png", "raw"):
        raise PipelineConfigError(
            f"image_format must be 'png' or 'raw', got {image_format!r}",
            argument="image_format", expected=["png", "raw"])
    _check_positive_int("num_shards", num_shards)
    if workers is not None:
        _check_positive_int("workers", workers)


def _prepare_output_dir(output_dir):
    output_dir = os.path.abspath(os.fspath(output_dir))
    if os.path.exists(output_dir) and not os.path.isdir(output_dir):
        raise PipelineConfigError(
            f"output_dir {output_dir!r} is a file; expected a directory (created if missing)",
            argument="output_dir", path=output_dir, expected="a directory")
    os.makedirs(output_dir, exist_ok=True)
    return output_dir


def _default_workers():
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def convert(source, output_dir, image_format="png", num_shards=1, workers=None,
            overwrite=False, *, quiet=False):
    """Convert CIFAR-10 (or CIFAR-100) binary batches to slim's TFRecord layout.

    ``source`` is the extracted folder (``cifar-10-batches-bin`` or its parent)
    or the ``.tar.gz``. Writes ``cifar10_train.tfrecord`` and
    ``cifar10_test.tfrecord`` (with ``num_shards > 1``:
    ``cifar10_train-00000-of-0000N.tfrecord`` ..., record ``i`` of a split in
    shard ``i % N``) and ``labels.txt`` (``0:airplane`` ...). Records keep source order
    (``data_batch_1..5``, then ``test_batch``) with keys ``image/encoded`` (PNG,
    or the HWC bytes for ``image_format="raw"``), ``image/format``,
    ``image/class/label``, ``image/height``, ``image/width``. CIFAR-100 gives
    ``cifar100_*`` files, the fine label as ``image/class/label`` plus
    ``image/coarse_label``, and ``coarse_labels.txt``.

    Encoding runs in ``workers`` spawned processes (default: all usable cores).
    Files are read 1000 images at a time and few encoding tasks are in flight,
    so memory stays bounded whatever the dataset size.
    Everything is written into a temporary folder inside ``output_dir`` and
    moved into place at the end: a failure or Ctrl-C leaves no output file.
    When ``output_dir`` already holds valid outputs (names, record counts,
    image format, labels) nothing is done unless ``overwrite``; outputs of an
    earlier conversion with another shard count are replaced. Shows a progress
    bar on a terminal; prints the summary unless ``quiet``; returns it as a
    :class:`ConversionSummary`.
    """
    _check_convert_arguments(image_format, num_shards, workers)
    output_dir = _prepare_output_dir(output_dir)
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix=".tf1compat-convert-", dir=output_dir) as staging:
        variant, folder = _open_source(source, staging)
        plan = _make_plan(variant, folder, num_shards)
        label_texts = _labels_file_texts(variant, _label_names(variant, folder))
        skipped = not overwrite and _outputs_valid(plan, output_dir, image_format, label_texts)
        if not skipped:
            staged = [item for split in plan.outputs for item in _write_split(
                plan, split, staging, image_format, workers or _default_workers())]
            for name, text in label_texts.items():
                with open(os.path.join(staging, name), "w") as f:
                    f.write(text)
                staged.append((f.name, name))
            _commit(plan, staged, output_dir)
    files = {split: [os.path.join(output_dir, name) for name, _ in outputs]
             for split, outputs in plan.outputs.items()}
    summary = ConversionSummary(
        variant.name, output_dir, image_format, plan.counts, files,
        sum(os.path.getsize(p) for p in itertools.chain.from_iterable(files.values())),
        time.perf_counter() - start, skipped)
    if not quiet:
        print(summary)
    return summary
