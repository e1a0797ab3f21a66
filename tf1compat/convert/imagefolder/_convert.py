"""A folder of images, one subfolder per class -> slim's TFRecords, as a plan of shard
tasks (no TensorFlow: planning lists and stats files, workers read bytes and headers)."""

import dataclasses
import functools
import glob
import hashlib
import math
import os
import time
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, NoReturn

from tf1compat import __version__
from tf1compat._checks import check_choice, check_fraction, check_positive_int, check_seed
from tf1compat._typing import PathArg
from tf1compat.convert.imagefolder._headers import SUPPORTED, read_image_header
from tf1compat.convert.labels import labels_file_text
from tf1compat.convert.plan import (
    Plan,
    ShardTask,
    SkippedInput,
    build_tasks,
    plan_key,
    shard_names,
)
from tf1compat.convert.runners import Runner, build_runner, write_shards
from tf1compat.errors import ImageFormatError, PipelineConfigError
from tf1compat.records import _fs
from tf1compat.records.example import make_example
from tf1compat.records.tfrecord import ON_ERROR_CHOICES

SPLITS = ("train", "validation")
_SHARD_BYTES = 128 << 20    # num_shards=None: about this much image data per shard
_PART_IMAGES = 512          # images per task (one fsync each)
# a file to convert: (path relative to the source, label, size, version: mtime or ETag)
_File = tuple[str, int, int, Any]


@dataclasses.dataclass(frozen=True)
class ImageFolderSummary:
    """What :func:`convert` did: classes, images per split, output files, the files
    left out with ``on_error="skip"``."""

    name: str
    output_dir: str
    classes: tuple[str, ...]
    counts: dict[str, int]          # split -> number of images written
    files: dict[str, list[str]]     # split -> output paths
    skipped: tuple[SkippedInput, ...]   # file (relative to the source) and reason
    num_bytes: int
    seconds: float

    def __str__(self) -> str:
        counts = ", ".join(f"{split} {n}" for split, n in self.counts.items())
        text = (f"{self.name} -> {self.output_dir}: {counts} images in "
                f"{len(self.classes)} classes; wrote {self.num_bytes / 1e6:.1f} MB in "
                f"{self.seconds:.1f} s")
        if self.skipped:
            text += f"; skipped {len(self.skipped)} file(s):" + "".join(
                f"\n  {skipped}" for skipped in self.skipped)
        return text


def _rank(seed: int, purpose: str, relative_path: str) -> bytes:
    """A stable pseudo-random position of a file, the same on every machine and run."""
    return hashlib.sha256(f"{seed}\0{purpose}\0".encode() + os.fsencode(relative_path)).digest()


def _location(path: PathArg) -> str:
    """A folder argument as used: an fsspec URL without its trailing slash, or an
    absolute local path (``file://`` URLs too)."""
    path = _fs.local_path(os.fspath(path))
    return path.rstrip("/") if _fs.is_url(path) else os.path.abspath(path)


def _list_object_classes(source_url: str) -> tuple[list[str], list[_File]]:
    """:func:`_list_classes` of a folder in an object store: ``[(relative path, label,
    size, version)]``, the version being the object's ETag (or modification time)."""
    fs, base = _fs.filesystem(source_url)
    fs.invalidate_cache()
    base = base.rstrip("/")
    found = []
    for path, info in sorted(fs.find(base, detail=True).items()):
        parts = path[len(base) + 1:].split("/")
        if len(parts) > 1 and not any(part.startswith(".") for part in parts):
            version = str(info.get("ETag") or info.get("mtime") or info.get("LastModified"))
            found.append(("/".join(parts), parts[0], info["size"], version))
    classes = sorted({folder for _, folder, _, _ in found})
    if not classes:
        raise PipelineConfigError(
            f"source_dir {source_url!r} has no class subfolders; expected "
            "source_dir/<class name>/<image files>", argument="source_dir", path=source_url,
            expected="one subfolder per class")
    labels = {name: label for label, name in enumerate(classes)}
    return classes, [(relative, labels[folder], size, version)
                     for relative, folder, size, version in found]


def _list_classes(source_dir: str) -> tuple[list[str], list[_File]]:
    """``(classes, files)``: sorted class folder names and ``[(relative path, label,
    size, mtime_ns)]`` of the files in them (recursively; hidden names left out)."""
    if _fs.is_url(source_dir):
        return _list_object_classes(source_dir)
    with os.scandir(source_dir) as entries:
        classes = sorted(e.name for e in entries
                         if e.is_dir() and not e.name.startswith("."))
    if not classes:
        raise PipelineConfigError(
            f"source_dir {source_dir!r} has no class subfolders; expected "
            "source_dir/<class name>/<image files>", argument="source_dir", path=source_dir,
            expected="one subfolder per class")
    files = []
    for label, name in enumerate(classes):
        for root, folders, names in os.walk(os.path.join(source_dir, name), onerror=_raise):
            folders[:] = sorted(f for f in folders if not f.startswith("."))
            for file_name in sorted(names):
                path = os.path.join(root, file_name)
                dangling = os.path.islink(path) and not os.path.exists(path)
                if file_name.startswith(".") or not (os.path.isfile(path) or dangling):
                    continue
                stat = os.lstat(path) if dangling else os.stat(path)
                relative = os.path.relpath(path, source_dir).replace(os.sep, "/")
                files.append((relative, label, stat.st_size, stat.st_mtime_ns))
    empty = sorted(set(classes) - {classes[file[1]] for file in files})
    if empty:
        raise PipelineConfigError(
            f"source_dir {source_dir!r}: class folder(s) {empty} hold no files; add their "
            "images or remove them (each class folder is a label)", argument="source_dir",
            path=os.path.join(source_dir, empty[0]), expected="image files in every class folder")
    return classes, files


def _raise(error: OSError) -> None:
    """os.walk's onerror: a folder that cannot be listed stops the conversion."""
    raise error


def _split(files: Sequence[_File], validation_fraction: float,
           seed: int) -> dict[str, list[_File]]:
    """``{split: files}``: per class, the first ``round(n * fraction)`` files in a seeded
    order go to validation (stable: adding a file moves at most one other); each split
    then in its own seeded order."""
    by_class: dict[int, list[_File]] = {}
    for file in files:
        by_class.setdefault(file[1], []).append(file)
    splits: dict[str, list[_File]] = (
        {"train": [], "validation": []} if validation_fraction else {"train": []})
    for members in by_class.values():
        members.sort(key=lambda f: _rank(seed, "split", f[0]))
        count = math.floor(len(members) * validation_fraction + 0.5)
        if validation_fraction:
            splits["validation"].extend(members[:count])
        splits["train"].extend(members[count:])
    for members in splits.values():
        members.sort(key=lambda f: _rank(seed, "order", f[0]))
    return splits


def _shard_names(name: str, split: str, num_shards: int) -> list[str]:
    """slim's converters' names: ``flowers_train_00000-of-00005.tfrecord``."""
    return shard_names(f"{name}_{split}", num_shards, separator="_")


def _stale_patterns(name: str) -> tuple[str, ...]:
    """Glob patterns of earlier outputs of ``name`` (another shard count), also in the
    layout of earlier tf1compat versions (``NAME_SPLIT-00000-of-...``)."""
    prefix = glob.escape(name)
    return tuple(f"{prefix}_{split}{separator}*-of-*.tfrecord" for split in SPLITS
                 for separator in ("_", "-"))


def _iter_examples(inputs: Iterable[tuple[str, int]], *, source_dir: str,
                   on_error: str) -> Iterator[bytes | SkippedInput]:
    """The serialized ``tf.train.Example`` of each ``(relative path, label)``; a file
    that is not a supported image raises ImageFormatError, or with ``on_error="skip"``
    is a SkippedInput. Runs in the workers."""
    for relative, label in inputs:
        path = _fs.join(source_dir, relative)
        try:
            with _fs.open_file(path, "rb") as f:
                data = f.read()
            image_format, height, width = read_image_header(data)
        except (OSError, ValueError) as e:
            reason = _unreadable(path, e) if isinstance(e, OSError) else str(e)
            if on_error == "skip":
                yield SkippedInput(relative, reason)
                continue
            raise ImageFormatError(f"{path}: {reason}; expected {SUPPORTED}", path=path,
                                   expected=SUPPORTED) from e
        yield make_example({"image/encoded": data, "image/format": image_format,
                            "image/class/label": label, "image/height": height,
                            "image/width": width, "image/filename": os.fsencode(relative)})


def _unreadable(path: str, error: OSError) -> str:
    """Why the file at ``path`` cannot be read."""
    if os.path.islink(path) and not os.path.exists(path):
        return f"dangling symbolic link to {os.readlink(path)!r}"
    return error.strerror or str(error)


def _make_plan(splits: dict[str, list[_File]], name: str, num_shards: int | None,
               source_dir: str, on_error: str) -> tuple[list[ShardTask], dict[str, list[str]]]:
    """The shard tasks: each split cut into ``num_shards`` consecutive blocks (None: one
    per 128 MiB of images), each block into parts of 512 images."""
    to_records = functools.partial(_iter_examples, source_dir=source_dir, on_error=on_error)
    tasks, names = [], {}
    for split, files in splits.items():
        count = num_shards or max(1, math.ceil(sum(f[2] for f in files) / _SHARD_BYTES))
        names[split] = _shard_names(name, split, count)
        for shard, shard_name in enumerate(names[split]):
            block = files[len(files) * shard // count:len(files) * (shard + 1) // count]
            tasks.extend(build_tasks(shard_name, [f[:2] for f in block], to_records,
                                     max_part_inputs=_PART_IMAGES))
    return tasks, names


def _check_arguments(source_dir: str, output_dir: str, name: object,
                     validation_fraction: float, num_shards: int | None, seed: int,
                     on_error: str) -> None:
    def refuse(argument: str, message: str, expected: str) -> NoReturn:
        raise PipelineConfigError(f"{argument} {message}", argument=argument,
                                  expected=expected)

    if _fs.is_url(source_dir):
        fs, inner = _fs.filesystem(source_dir)
        if not fs.isdir(inner):
            refuse("source_dir", f"{source_dir!r} holds no objects",
                   "a folder of class folders")
    elif not os.path.isdir(source_dir):
        refuse("source_dir", f"{source_dir!r} is not a directory", "a folder of class folders")
    real_output, real_source = os.path.realpath(output_dir), os.path.realpath(source_dir)
    if _fs.is_url(output_dir) or _fs.is_url(source_dir):
        if _fs.is_url(output_dir):
            _fs.filesystem(output_dir)  # a missing extra is named now, before any work
        if output_dir == source_dir or output_dir.startswith(source_dir + "/"):
            refuse("output_dir", f"{output_dir!r} is inside source_dir {source_dir!r}",
                   "a folder outside the source")
    elif real_output == real_source or real_output.startswith(real_source + os.sep):
        inside = "is" if real_output == output_dir and real_source == source_dir else \
            f"resolves to {real_output!r}, which is"
        refuse("output_dir", f"{output_dir!r} {inside} inside source_dir {source_dir!r}",
               "a folder outside the source")
    if not _fs.is_url(output_dir) and os.path.exists(output_dir) \
            and not os.path.isdir(output_dir):
        refuse("output_dir", f"{output_dir!r} is a file", "a directory (created if missing)")
    if not isinstance(name, str) or not name or "/" in name or os.sep in name:
        refuse("name", f"must be a non-empty file name prefix, got {name!r}", "e.g. 'flowers'")
    check_fraction(None, "validation_fraction", validation_fraction)
    check_positive_int(None, "num_shards", num_shards, allow_none=True)
    check_seed(None, "seed", seed)
    check_choice(None, "on_error", on_error, ON_ERROR_CHOICES)


def convert(source_dir: PathArg, output_dir: PathArg, *, name: str,
            validation_fraction: float = 0.1, num_shards: int | None = None, seed: int = 0,
            runner: str | Runner = "local", on_error: str = "raise",
            workers: int | None = None, beam_options: Sequence[str] | None = None,
            scheduler: Any = None, wait: bool = False, quiet: bool = False) -> ImageFolderSummary:
    """Convert a folder of images, one subfolder per class, to slim's TFRecords.
    ``source_dir`` and ``output_dir`` are folders or fsspec URLs (``s3://bucket/photos``;
    the ``tf1compat[s3]`` extra).

    Writes ``NAME_train_00000-of-0000N.tfrecord`` ..., ``NAME_validation_...`` (not
    with ``validation_fraction=0``; the names slim's converters give, which slim's
    dataset modules' ``NAME_%s_*.tfrecord`` patterns find) and ``labels.txt``
    (``0:class``, the class folders sorted). Each record has ``image/encoded`` (the
    file's own bytes, never re-encoded), ``image/format`` (``jpeg``, ``png`` or
    ``bmp``), ``image/class/label``, ``image/height`` and ``image/width`` (from the
    header; pixels are not decoded) and
    ``image/filename`` (relative to ``source_dir``). Files and folders whose name
    starts with a dot are left out.

    The split is seeded and stable: per class, ``validation_fraction`` of the files
    (rounded) go to validation, chosen by a hash of ``seed`` and the file name, so
    adding files moves at most one other; each split is in a seeded shuffled order,
    in ``num_shards`` shards (default: about 128 MiB of images each).

    A file that is not a JPEG, PNG or BMP slim can decode, is cut off or damaged where
    that is cheap to see (a JPEG without its end-of-image marker, a PNG whose chunks
    and CRCs do not run whole to IEND, a BMP short of its pixel rows) or cannot be read
    (a dangling link) raises :class:`~tf1compat.errors.ImageFormatError` naming it,
    and nothing is written; with ``on_error="skip"`` it is left out and listed in the
    summary. A class folder without files is refused, naming it. ``runner``,
    ``workers``, ``beam_options`` and ``scheduler`` as in :func:`tf1compat.cifar10.convert`; all or
    nothing, resumed after a kill, the same bytes for every runner; earlier outputs of
    ``name`` (another shard count) are replaced. Another live conversion into
    ``output_dir`` is refused naming it, or with ``wait`` waited for. Shows a
    progress bar on a terminal unless ``quiet``; returns an
    :class:`ImageFolderSummary` (its ``str`` is the summary the CLI prints).
    """
    source_dir, output_dir = _location(source_dir), _location(output_dir)
    _check_arguments(source_dir, output_dir, name, validation_fraction, num_shards, seed,
                     on_error)
    runner = build_runner(runner, workers, beam_options, scheduler)
    start = time.perf_counter()
    classes, files = _list_classes(source_dir)
    splits = _split(files, validation_fraction, seed)
    tasks, names = _make_plan(splits, name, num_shards, source_dir, on_error)
    listing = hashlib.sha256(repr(files).encode("utf-8", "surrogateescape")).hexdigest()
    key = plan_key("imagefolder.convert", __version__, source_dir, listing, name,
                   validation_fraction, num_shards, seed, on_error)
    results = write_shards(
        Plan(tasks, {"labels.txt": labels_file_text(classes)}, _stale_patterns(name)),
        output_dir, key=key, runner=runner, wait=wait, quiet=quiet, unit="img",
        what=f"imagefolder.convert {name}")
    split_of = {shard: split for split, shards in names.items() for shard in shards}
    counts = {split: 0 for split in splits}
    for task, result in zip(tasks, results, strict=True):
        counts[split_of[task.name]] += result.records
    files_out = {split: [_fs.join(output_dir, n) for n in split_names]
                 for split, split_names in names.items()}
    summary = ImageFolderSummary(
        name, output_dir, tuple(classes), counts, files_out,
        tuple(s for result in results for s in result.skipped),
        sum(_fs.size(p) for paths in files_out.values() for p in paths),
        time.perf_counter() - start)
    return summary
