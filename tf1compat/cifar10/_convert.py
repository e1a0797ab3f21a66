"""CIFAR binary batches -> slim's TFRecords, as a plan of shard tasks run by any of
:mod:`tf1compat.convert`'s runners (no TensorFlow: the workers stay light).

The records are read back by :func:`tf1compat.cifar10.get_split`; the plan is run by
:func:`tf1compat.convert.write_shards`.
"""

import dataclasses
import functools
import itertools
import os
import struct
import tarfile
import time
import zlib
from collections.abc import Iterator, Sequence
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from tf1compat import __version__
from tf1compat._checks import check_choice, check_positive_int
from tf1compat._typing import PathArg
from tf1compat.cifar10._format import (
    _HEIGHT,
    _IMAGE_BYTES,
    _VARIANTS,
    _WIDTH,
    _parse_records,
    _record_count,
    _Variant,
)
from tf1compat.convert.labels import labels_file_text
from tf1compat.convert.plan import Plan, ShardTask, build_tasks, plan_key, shard_names
from tf1compat.convert.runners import Runner, build_runner, write_shards
from tf1compat.errors import CifarFormatError, PipelineConfigError
from tf1compat.records import _fs
from tf1compat.records.example import example_to_dict, make_example
from tf1compat.records.tfrecord import count_records, iter_records

_CHUNK_RECORDS = 1000      # records read, label-checked and encoded at a time
_PART_RECORDS = 2500       # records per task: parts of a shard, so all cores have work


# ------------------------------------------------------------------------ PNG

def _png_chunk(tag: bytes, data: bytes) -> bytes:
    return (struct.pack(">I", len(data)) + tag + data
            + struct.pack(">I", zlib.crc32(tag + data)))


def encode_png(images: npt.ArrayLike) -> list[bytes]:
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
    counts: dict[str, int]          # split -> number of records
    files: dict[str, list[str]]     # split -> output paths
    num_bytes: int
    seconds: float
    skipped: bool

    def __str__(self) -> str:
        counts = ", ".join(f"{split} {n}" for split, n in self.counts.items())
        action = ("up to date, skipped (--overwrite / overwrite=True redoes it)"
                  if self.skipped else
                  f"wrote {self.num_bytes / 1e6:.1f} MB in {self.seconds:.1f} s")
        return (f"{self.dataset} -> {self.output_dir}: {counts} images "
                f"({self.image_format}); {action}")


def _find_variant_folder(directory: str) -> tuple[_Variant, str]:
    """The folder holding the batch files: ``directory`` or its dataset subfolder."""
    for variant in _VARIANTS.values():
        for folder in (_fs.join(directory, variant.folder), directory):
            if any(_fs.exists(_fs.join(folder, name)) for name in variant.file_names):
                return variant, folder
    expected = " or ".join(f"{v.folder}/ ({', '.join(v.file_names)})"
                           for v in _VARIANTS.values())
    raise CifarFormatError(f"{directory}: no CIFAR binary batch files found; expected {expected}",
                           path=directory, expected=expected)


_ArchiveMode = Literal["r:", "r:gz", "r:bz2", "r:xz"]
_COMPRESSION_MAGIC: dict[bytes, _ArchiveMode] = {
    b"\x1f\x8b": "r:gz", b"BZh": "r:bz2", b"\xfd7zXZ\x00": "r:xz"}


def _archive_mode(archive: str) -> _ArchiveMode:
    """tarfile's mode for ``archive`` from its first bytes (tarfile's "r:*" tries each
    decompressor in turn, and its LZMA one reads a long run of zeros to the end)."""
    with _fs.open_file(archive, "rb") as file:
        head = file.read(512)
    for magic, mode in _COMPRESSION_MAGIC.items():
        if head.startswith(magic):
            return mode
    if head[257:262] == b"ustar":
        return "r:"
    raise tarfile.ReadError("no tar or compression signature")


def _extract_archive(archive: str, staging: str) -> str:
    """Extract an archive's regular files into ``staging/source`` (once: a resumed
    run finds them there); returns that folder."""
    target = os.path.join(staging, "source")
    if os.path.isdir(target):
        return target
    try:
        with _fs.open_file(archive, "rb") as file, \
                tarfile.open(fileobj=file, mode=_archive_mode(archive)) as tar:
            tar.extractall(target + ".tmp", members=[m for m in tar if m.isfile()],
                           filter="data")
    except (tarfile.TarError, OSError, EOFError, zlib.error) as e:
        reason = ("not a tar archive (plain or gzip, bz2, xz compressed)"
                  if isinstance(e, tarfile.ReadError) else " ".join(str(e).split()))
        raise CifarFormatError(f"{archive}: cannot extract: {reason}", path=archive,
                               expected="a CIFAR-10/100 binary .tar.gz") from e
    os.replace(target + ".tmp", target)
    return target


def _check_source(source: PathArg) -> str:
    source = _fs.local_path(os.fspath(source))
    if not _fs.exists(source):
        raise PipelineConfigError(
            f"source {source!r} does not exist; expected a CIFAR binary folder or .tar.gz",
            argument="source", path=source, expected="a CIFAR binary folder or .tar.gz")
    return source


def _source_identity(source: str) -> list[tuple[str, int, Any]]:
    """Name, size and modification time of the source files: part of the plan's key."""
    if _fs.isfile(source):
        paths = [source]
    else:
        variant, folder = _find_variant_folder(source)
        paths = [_fs.join(folder, name)
                 for name in (*variant.file_names, *variant.label_files)]
    if _fs.is_url(source):      # an object's identity: its size and ETag (or mtime)
        identity = []
        for path in filter(_fs.isfile, paths):
            fs, inner = _fs.filesystem(path)
            info = fs.info(inner)
            identity.append((path, info["size"], str(
                info.get("ETag") or info.get("mtime") or info.get("LastModified"))))
        return identity
    return [(os.path.abspath(p), os.stat(p).st_size, os.stat(p).st_mtime_ns)
            for p in paths if os.path.isfile(p)]


def _open_source(source: str, staging: str) -> tuple[_Variant, str]:
    """``(variant, folder)`` of an extracted folder or a ``.tar.gz`` source."""
    if _fs.isfile(source):
        source = _extract_archive(source, staging)
    variant, folder = _find_variant_folder(source)
    for names in variant.splits.values():
        for name in names:
            path = _fs.join(folder, name)
            if not _fs.isfile(path):
                expected = list(variant.file_names)
                raise CifarFormatError(
                    f"{folder}: missing {name}; a {variant.name} binary folder has {expected}",
                    path=path, expected=expected)
    return variant, folder


def _shard_names(prefix: str, split: str, num_shards: int) -> list[str]:
    """slim's ``cifar10_train.tfrecord``; with more shards ``cifar10_train-00000-of-...``."""
    if num_shards == 1:
        return [f"{prefix}_{split}.tfrecord"]
    return shard_names(f"{prefix}_{split}", num_shards)


def _read_records(path: str, count: int, record_bytes: int,
                 local: npt.NDArray[np.int64]) -> npt.NDArray[np.uint8]:
    """The records at the ascending indices ``local`` of a batch file of ``count``
    records: a memory map of a local file; from an object, the range they span."""
    if not _fs.is_url(path):
        mapped: npt.NDArray[np.uint8] = np.memmap(path, np.uint8, "r",
                                                  shape=(count, record_bytes))[local]
        return mapped
    first, end = int(local[0]), int(local[-1]) + 1
    fs, inner = _fs.filesystem(path)
    data = fs.cat_file(inner, start=first * record_bytes, end=end * record_bytes)
    spanned: npt.NDArray[np.uint8] = np.frombuffer(data, np.uint8).reshape(end - first,
                                                                          record_bytes)
    records: npt.NDArray[np.uint8] = spanned[local - first]   # Any in NumPy 1.26's stubs
    return records


def _iter_examples(indices: Sequence[int], *, sources: Sequence[tuple[str, int]],
                   label_bytes: int, image_format: str,
                   extra_label_keys: Sequence[str]) -> Iterator[bytes]:
    """The serialized ``tf.train.Example`` of the records at ``indices`` (ascending, into
    the concatenation of ``sources``, ``[(path, record count)]``): a task's records.
    Runs in the workers."""
    record_bytes = label_bytes + _IMAGE_BYTES
    starts = np.cumsum([0] + [count for _, count in sources])
    for first in range(0, len(indices), _CHUNK_RECORDS):
        chunk = np.asarray(indices[first:first + _CHUNK_RECORDS])
        in_file = np.searchsorted(starts, chunk, side="right") - 1
        for source in np.unique(in_file):
            path, count = sources[source]
            local = chunk[in_file == source] - starts[source]
            records = _read_records(path, count, record_bytes, local)
            images, labels = _parse_records(records, label_bytes, path, local)
            labels = labels.reshape(len(images), label_bytes)
            encoded = (encode_png(images) if image_format == "png"
                       else [image.tobytes() for image in images])
            for image, image_labels in zip(encoded, labels.tolist(), strict=True):
                features = {"image/encoded": image, "image/format": image_format.encode(),
                            "image/class/label": image_labels[-1],
                            "image/height": _HEIGHT, "image/width": _WIDTH}
                features.update(zip(extra_label_keys, image_labels[:-1], strict=True))
                yield make_example(features)


def _make_plan(variant: _Variant, folder: str, num_shards: int,
               image_format: str) -> tuple[list[ShardTask], dict[str, int]]:
    """``(tasks, counts)``: record ``i`` of a split goes to shard ``i % num_shards``."""
    tasks, counts = [], {}
    for split, names in variant.splits.items():
        sources = tuple((path, _record_count(path, variant.label_bytes))
                        for path in (os.path.join(folder, name) for name in names))
        counts[split] = sum(count for _, count in sources)
        to_records = functools.partial(
            _iter_examples, sources=sources, label_bytes=variant.label_bytes,
            image_format=image_format, extra_label_keys=variant.extra_label_keys)
        for shard, name in enumerate(_shard_names(variant.name, split, num_shards)):
            tasks.extend(build_tasks(name, range(shard, counts[split], num_shards), to_records,
                                     max_part_inputs=_PART_RECORDS))
    return tasks, counts


def _label_names(variant: _Variant, folder: str) -> list[tuple[str, ...]]:
    """Names per label byte, from the dataset's names files when present."""
    result = []
    for names_file, fallback in zip(variant.label_files, variant.label_names, strict=True):
        path = _fs.join(folder, names_file)
        if _fs.isfile(path):
            try:
                with _fs.open_file(path, "rb") as f:
                    names = tuple(line.strip() for line in f.read().decode().splitlines()
                                  if line.strip())
            except UnicodeDecodeError as e:
                raise CifarFormatError(
                    f"{path}: not UTF-8 text ({e}); expected one class name per line",
                    path=path, expected="UTF-8 text, one class name per line") from e
            if len(names) != len(fallback):
                raise CifarFormatError(
                    f"{path}: {len(names)} class names, expected {len(fallback)}",
                    path=path, expected=f"{len(fallback)} non-empty lines")
            result.append(names)
        else:
            result.append(fallback)
    return result


def _labels_file_texts(variant: _Variant,
                      names_per_byte: Sequence[tuple[str, ...]]) -> dict[str, str]:
    """``labels.txt`` (last label byte: the class) and for CIFAR-100 ``coarse_labels.txt``."""
    texts = {"labels.txt": names_per_byte[-1]}
    if variant.label_bytes == 2:
        texts["coarse_labels.txt"] = names_per_byte[0]
    return {name: labels_file_text(names) for name, names in texts.items()}


def _outputs_valid(tasks: Sequence[ShardTask], output_dir: str, image_format: str,
                   label_texts: dict[str, str]) -> bool:
    """Whether ``output_dir`` already holds this conversion's complete, intact outputs."""
    for name, text in label_texts.items():
        path = _fs.join(output_dir, name)
        if not _fs.exists(path):
            return False
        with _fs.open_file(path, "rb") as f:
            if f.read() != text.encode():
                return False
    sizes: dict[str, int] = {}
    for task in tasks:
        sizes[task.name] = sizes.get(task.name, 0) + len(task.inputs)
    try:
        for name, size in sizes.items():
            path = _fs.join(output_dir, name)
            if not _fs.exists(path) or count_records(path) != size:
                return False
            if size and _first_example(path)["image/format"][0] != image_format.encode():
                return False
    except (OSError, ValueError):   # damaged (CorruptRecordError is a ValueError): redo it
        return False
    return True


def _first_example(path: str) -> dict[str, npt.NDArray[Any]]:
    return example_to_dict(next(iter(iter_records(path))))


def _stale_patterns(variant: _Variant) -> tuple[str, ...]:
    """Glob patterns of earlier outputs of the same dataset (e.g. another shard count)."""
    return tuple(pattern for split in variant.splits
                 for pattern in (f"{variant.name}_{split}.tfrecord",
                                 f"{variant.name}_{split}-*-of-*.tfrecord"))


def _check_convert_arguments(image_format: str, num_shards: int) -> None:
    check_choice(None, "image_format", image_format, ("png", "raw"))
    check_positive_int(None, "num_shards", num_shards)


def _checked_output_dir(output_dir: PathArg) -> str:
    output_dir = _fs.local_path(os.fspath(output_dir))
    if _fs.is_url(output_dir):      # an object store: prefixes need no creating
        _fs.filesystem(output_dir)  # a missing extra is named now, before any work
        return output_dir.rstrip("/")
    output_dir = os.path.abspath(output_dir)
    if os.path.exists(output_dir) and not os.path.isdir(output_dir):
        raise PipelineConfigError(
            f"output_dir {output_dir!r} is a file; expected a directory (created if missing)",
            argument="output_dir", path=output_dir, expected="a directory")
    return output_dir


def convert(source: PathArg, output_dir: PathArg, image_format: str = "png", num_shards: int = 1,
            workers: int | None = None, overwrite: bool = False, *,
            runner: str | Runner = "local", beam_options: Sequence[str] | None = None,
            scheduler: Any = None, wait: bool = False, quiet: bool = False) -> ConversionSummary:
    """Convert CIFAR-10 (or CIFAR-100) binary batches to slim's TFRecord layout.

    ``source`` is the extracted folder (``cifar-10-batches-bin`` or its parent)
    or the ``.tar.gz``; ``source`` and ``output_dir`` are paths or fsspec URLs
    (``s3://bucket/cifar10``, the ``tf1compat[s3]`` extra; see
    :mod:`tf1compat.convert.objstore`). An archive is extracted on this machine, so on
    a cluster of other machines give the extracted folder's URL. Writes
    ``cifar10_train.tfrecord`` and ``cifar10_test.tfrecord`` (with ``num_shards > 1``:
    ``cifar10_train-00000-of-0000N.tfrecord`` ..., record ``i`` of a split in
    shard ``i % N``) and ``labels.txt`` (``0:airplane`` ...). Records keep source order
    (``data_batch_1..5``, then ``test_batch``) with keys ``image/encoded`` (PNG,
    or the HWC bytes for ``image_format="raw"``), ``image/format``,
    ``image/class/label``, ``image/height``, ``image/width``. CIFAR-100 gives
    ``cifar100_*`` files, the fine label as ``image/class/label`` plus
    ``image/coarse_label``, and ``coarse_labels.txt``.

    The conversion is a plan of shard tasks (parts of at most 2500 records) run by
    ``runner``: ``"local"``, ``workers`` processes (default: all usable cores; 0 or
    1: in this process), ``"dask"``, a Dask cluster's workers (``scheduler``: a
    ``distributed.Client`` or an address, ``tcp://host:8786``; the ``tf1compat[dask]``
    extra), or ``"beam"``, Apache Beam with ``beam_options`` (the ``tf1compat[beam]``
    extra); the output bytes are the same for every runner and worker count. Memory stays
    bounded whatever the dataset size (1000 records at a time per worker).
    Everything is written into a hidden staging folder inside ``output_dir`` and
    moved into place at the end: a failure or Ctrl-C leaves ``output_dir`` as it
    was; a run killed outright is resumed (completed tasks reused) by the next run.
    When ``output_dir`` already holds valid outputs (names, record counts,
    image format, labels) nothing is done unless ``overwrite``; damaged outputs
    and outputs of an earlier conversion with another shard count are replaced.
    Another live conversion into ``output_dir`` is refused naming it, or with
    ``wait`` waited for. Shows a progress bar on a terminal unless ``quiet``; returns
    a :class:`ConversionSummary` (its ``str`` is the summary the CLI prints).
    """
    _check_convert_arguments(image_format, num_shards)
    runner = build_runner(runner, workers, beam_options, scheduler)   # it checks workers
    source = _check_source(source)
    output_dir = _checked_output_dir(output_dir)
    start = time.perf_counter()
    key = plan_key("cifar10.convert", __version__, _source_identity(source), image_format,
                   num_shards)
    planned: dict[str, Any] = {}

    def plan(staging_dir: str) -> Plan | None:
        """Planned inside the staging folder (an archive is extracted there) and under
        its lock (whether valid outputs exist)."""
        variant, folder = _open_source(source, staging_dir)
        tasks, counts = _make_plan(variant, folder, num_shards, image_format)
        label_texts = _labels_file_texts(variant, _label_names(variant, folder))
        planned.update(variant=variant, counts=counts)
        if not overwrite and _outputs_valid(tasks, output_dir, image_format, label_texts):
            return None
        return Plan(tasks, label_texts, _stale_patterns(variant))

    results = write_shards(plan, output_dir, key=key, runner=runner, wait=wait, quiet=quiet,
                           what="cifar10.convert", unit="img")
    variant = planned["variant"]
    files = {split: [_fs.join(output_dir, name)
                     for name in _shard_names(variant.name, split, num_shards)]
             for split in variant.splits}
    return ConversionSummary(
        variant.name, output_dir, image_format, planned["counts"], files,
        sum(_fs.size(p) for p in itertools.chain.from_iterable(files.values())),
        time.perf_counter() - start, results is None)
