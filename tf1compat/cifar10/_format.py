"""The CIFAR binary format and seeded synthetic data in it (no TensorFlow).

Both datasets are files of fixed-size records: ``label_bytes`` label bytes
(CIFAR-10: the class; CIFAR-100: coarse, then fine) followed by 3072 image
bytes, the R, G and B planes of a 32x32 image, each row-major. The converter
(:mod:`._convert`) and the tutorial pipelines (:mod:`._readers`) read them.
"""

import dataclasses
import itertools
import os
import tarfile
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from tf1compat._checks import check_choice, check_int_at_least
from tf1compat._typing import PathArg
from tf1compat.errors import CifarFormatError
from tf1compat.records import _fs

LABELS = ("airplane", "automobile", "bird", "cat", "deer",
          "dog", "frog", "horse", "ship", "truck")
CIFAR100_COARSE_LABELS = tuple("""
aquatic_mammals fish flowers food_containers fruit_and_vegetables
household_electrical_devices household_furniture insects large_carnivores
large_man-made_outdoor_things large_natural_outdoor_scenes
large_omnivores_and_herbivores medium_mammals non-insect_invertebrates people
reptiles small_mammals trees vehicles_1 vehicles_2""".split())
CIFAR100_FINE_LABELS = tuple("""
apple aquarium_fish baby bear beaver bed bee beetle bicycle bottle bowl boy
bridge bus butterfly camel can castle caterpillar cattle chair chimpanzee clock
cloud cockroach couch crab crocodile cup dinosaur dolphin elephant flatfish
forest fox girl hamster house kangaroo keyboard lamp lawn_mower leopard lion
lizard lobster man maple_tree motorcycle mountain mouse mushroom oak_tree orange
orchid otter palm_tree pear pickup_truck pine_tree plain plate poppy porcupine
possum rabbit raccoon ray road rocket rose sea seal shark shrew skunk skyscraper
snail snake spider squirrel streetcar sunflower sweet_pepper table tank
telephone television tiger tractor train trout tulip turtle wardrobe whale
willow_tree wolf woman worm""".split())

_HEIGHT = _WIDTH = 32
_IMAGE_BYTES = _HEIGHT * _WIDTH * 3


@dataclasses.dataclass(frozen=True)
class _Variant:
    """Where one dataset's files are and what its labels look like."""

    name: str                   # output prefix: cifar10_train.tfrecord
    folder: str                 # inside the archive
    archive: str
    splits: dict[str, tuple[str, ...]]   # split name -> binary file names, in source order
    label_files: tuple[str, ...]         # one names file per label byte
    label_names: tuple[tuple[str, ...], ...]    # fallback names per label byte
    extra_label_keys: tuple[str, ...]    # Example keys for all but the last label byte

    @property
    def file_names(self) -> tuple[str, ...]:
        """All binary batch files, in source order."""
        return tuple(itertools.chain.from_iterable(self.splits.values()))

    @property
    def label_bytes(self) -> int:
        return len(self.label_names)

    @property
    def num_classes(self) -> tuple[int, ...]:
        return tuple(len(names) for names in self.label_names)


_CIFAR10 = _Variant(
    "cifar10", "cifar-10-batches-bin", "cifar-10-binary.tar.gz",
    {"train": tuple(f"data_batch_{i}.bin" for i in range(1, 6)), "test": ("test_batch.bin",)},
    ("batches.meta.txt",), (LABELS,), ())
_CIFAR100 = _Variant(
    "cifar100", "cifar-100-binary", "cifar-100-binary.tar.gz",
    {"train": ("train.bin",), "test": ("test.bin",)},
    ("coarse_label_names.txt", "fine_label_names.txt"),
    (CIFAR100_COARSE_LABELS, CIFAR100_FINE_LABELS), ("image/coarse_label",))
_VARIANTS = {v.name: v for v in (_CIFAR10, _CIFAR100)}


def _variant_for_label_bytes(label_bytes: int) -> _Variant:
    by_label_bytes = {v.label_bytes: v for v in _VARIANTS.values()}
    return by_label_bytes[check_choice(None, "label_bytes", label_bytes, by_label_bytes)]


# ------------------------------------------------------------------ binary format

def _record_count(path: str, label_bytes: int) -> int:
    """Number of records in a batch file, checking that its size fits the layout."""
    record_bytes = label_bytes + _IMAGE_BYTES
    size = _fs.size(path)
    if size == 0 or size % record_bytes:
        raise CifarFormatError(
            f"{path}: size {size} bytes is not a positive multiple of the "
            f"{record_bytes}-byte record ({label_bytes} label byte(s) + {_IMAGE_BYTES} "
            "image bytes); the file is truncated or not a CIFAR binary batch",
            path=path, expected=f"a size of k * {record_bytes} bytes, k >= 1")
    return size // record_bytes


def _parse_records(data: bytes | npt.NDArray[np.uint8], label_bytes: int, path: str,
                   indices: Sequence[int]) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.int64]]:
    """Split raw records into HWC images and labels, checking the label ranges;
    ``indices[i]`` is the record number of row ``i`` in ``path`` (for errors)."""
    records = np.frombuffer(data, np.uint8).reshape(-1, label_bytes + _IMAGE_BYTES)
    labels = records[:, :label_bytes].astype(np.int64)
    for column, num_classes in enumerate(_variant_for_label_bytes(label_bytes).num_classes):
        bad = np.flatnonzero(labels[:, column] >= num_classes)
        if bad.size:
            index = int(indices[bad[0]])
            raise CifarFormatError(
                f"{path}: record {index}: label byte {column} is "
                f"{labels[bad[0], column]}, expected 0..{num_classes - 1}",
                path=path, index=index, expected=f"label in 0..{num_classes - 1}")
    images = records[:, label_bytes:].reshape(-1, 3, _HEIGHT, _WIDTH).transpose(0, 2, 3, 1)
    return images, (labels[:, 0] if label_bytes == 1 else labels)


def _iter_file_chunks(path: str, record_bytes: int, count: int,
                      chunk_records: int) -> Iterator[tuple[int, bytes]]:
    """``(index of first record, bytes)`` of consecutive chunks of a batch file."""
    with open(path, "rb") as f:
        for first in range(0, count, chunk_records):
            yield first, f.read(min(chunk_records, count - first) * record_bytes)


def iter_batch_file(path: PathArg, label_bytes: int = 1, chunk_records: int = 1000
                    ) -> Iterator[tuple[npt.NDArray[np.uint8], npt.NDArray[np.int64]]]:
    """Yield ``(images, labels)`` chunks of at most ``chunk_records`` records.

    Same values as :func:`read_batch_file`, in bounded memory.
    """
    path = os.fspath(path)
    count = _record_count(path, _variant_for_label_bytes(label_bytes).label_bytes)
    for first, data in _iter_file_chunks(path, label_bytes + _IMAGE_BYTES, count,
                                         chunk_records):
        yield _parse_records(data, label_bytes, path, range(first, first + count))


def read_batch_file(path: PathArg,
                    label_bytes: int = 1) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.int64]]:
    """Read a CIFAR binary batch file.

    Returns ``(images, labels)``: images uint8 ``[N, 32, 32, 3]`` (HWC, RGB) and
    labels int64, ``[N]`` for CIFAR-10 (``label_bytes=1``) or ``[N, 2]``
    (coarse, fine) for CIFAR-100 (``label_bytes=2``). Raises
    :class:`~tf1compat.errors.CifarFormatError` when the size is not a multiple
    of the record size or a label is out of range.
    """
    images, labels = zip(*iter_batch_file(path, label_bytes), strict=True)
    return np.concatenate(images), np.concatenate(labels)


def _records_bytes(images: npt.NDArray[np.uint8], labels: npt.NDArray[Any]) -> bytes:
    """The binary records of HWC images and their label columns."""
    planes = images.transpose(0, 3, 1, 2).reshape(len(images), _IMAGE_BYTES)
    label_columns = 1 if labels.ndim == 1 else labels.shape[1]
    records: npt.NDArray[np.uint8] = np.concatenate(
        [labels.reshape(len(images), label_columns).astype(np.uint8), planes], axis=1)
    return records.tobytes()


def _synthetic_split(rng: np.random.Generator, count: int,
                     variant: _Variant) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.int64]]:
    """Blotchy random images (PNG-compressible like photos) around a label-dependent
    mean colour, so that a net can learn the classes."""
    labels = np.stack([rng.integers(0, n, count) for n in variant.num_classes], axis=1)
    palette = np.random.default_rng(len(variant.num_classes)).integers(
        40, 216, (variant.num_classes[-1], 3))
    blobs = rng.integers(-48, 49, (count, _HEIGHT // 4, _WIDTH // 4, 3), dtype=np.int16)
    grain = rng.integers(-12, 13, (count, _HEIGHT, _WIDTH, 3), dtype=np.int16)
    images = (palette[labels[:, -1]][:, None, None, :] + grain
              + np.repeat(np.repeat(blobs, 4, axis=1), 4, axis=2))
    return np.clip(images, 0, 255).astype(np.uint8), labels


def make_synthetic(directory: PathArg, num_train: int = 500, num_test: int = 100,
                   seed: int = 0, *, dataset: str = "cifar10", archive: bool = False) -> str:
    """Write a seeded synthetic CIFAR-10 (or ``dataset="cifar100"``) in the real layout.

    Creates ``directory/cifar-10-batches-bin/`` with ``data_batch_1..5.bin``
    (``num_train`` images split as evenly as possible), ``test_batch.bin`` and
    ``batches.meta.txt`` (CIFAR-100: ``cifar-100-binary/`` with ``train.bin``,
    ``test.bin`` and the two names files). Each image is noise around a
    label-dependent colour. With ``archive=True`` also writes
    ``cifar-10-binary.tar.gz`` next to the folder. Returns the folder's path,
    or the archive's when ``archive`` is set.
    """
    variant = _VARIANTS[check_choice(None, "dataset", dataset, sorted(_VARIANTS))]
    totals = {split: check_int_at_least(
        "make_synthetic", f"num_{split}", total, len(variant.splits[split]),
        f"one image for each of its {len(variant.splits[split])} batch file(s)")
        for split, total in (("train", num_train), ("test", num_test))}
    folder = os.path.join(directory, variant.folder)
    os.makedirs(folder, exist_ok=True)
    rng = np.random.default_rng(seed)
    for split, total in totals.items():
        names = variant.splits[split]
        for name, count in zip(names, np.array_split(np.arange(total), len(names)), strict=True):
            images, labels = _synthetic_split(rng, len(count), variant)
            with open(os.path.join(folder, name), "wb") as f:
                f.write(_records_bytes(images, labels))
    for names_file, names in zip(variant.label_files, variant.label_names, strict=True):
        with open(os.path.join(folder, names_file), "w") as f:
            f.write("\n".join(names) + "\n\n")
    if not archive:
        return folder
    archive_path = os.path.join(directory, variant.archive)
    with tarfile.open(archive_path, "w:gz") as tar:
        tar.add(folder, arcname=variant.folder)
    return archive_path
