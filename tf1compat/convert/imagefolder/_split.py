"""slim's ``get_split`` for the TFRecords of :func:`tf1compat.imagefolder.convert`
(imports TensorFlow when called)."""

import os
from typing import Any

from tf1compat._typing import PathArg
from tf1compat.convert.imagefolder._convert import SPLITS
from tf1compat.convert.labels import read_labels_file
from tf1compat.errors import PipelineConfigError
from tf1compat.records import _fs
from tf1compat.records.committed import check_committed
from tf1compat.records.tfrecord import count_records

_ITEMS_TO_DESCRIPTIONS = {
    "image": "A color image of varying size (uint8, [height, width, 3]).",
    "label": "The class, an integer between 0 and num_classes - 1 (see labels.txt).",
    "filename": "The image file, relative to the converted folder.",
}


_FILE_PATTERN = "*_%s_*-of-*.tfrecord"      # the converter's shards, of any NAME


def get_split(split_name: str, dataset_dir: PathArg, file_pattern: str | None = None,
              reader: type | None = None) -> Any:
    """The slim ``Dataset`` of a converted split, with the signature of slim's
    ``datasets/flowers.py`` ``get_split``.

    Reads the files matching ``file_pattern % split_name`` in ``dataset_dir``
    (``file_pattern`` as slim's, e.g. ``"flowers_%s_*.tfrecord"``; default: the
    converter's ``NAME_<split>_*-of-*.tfrecord`` of the one NAME in the folder; refused
    with :class:`~tf1compat.errors.IncompleteOutputError` while a conversion into it is
    under way or was cut short).
    Items: ``image`` (uint8 ``[height, width, 3]``, JPEG, PNG or BMP decoded by slim's
    ``Image`` handler), ``label`` (int64) and ``filename``. ``num_samples`` counts the
    records; ``labels_to_names`` and ``num_classes`` come from ``labels.txt``.
    ``reader`` defaults to :class:`tf1compat.TFRecordReader`.
    """
    from tf1compat._tf import tf
    from tf1compat.pipeline import queues
    from tf1compat.slim import dataset, tfexample_decoder

    if split_name not in SPLITS:
        raise PipelineConfigError(f"unknown split {split_name!r}; valid splits: {list(SPLITS)}",
                                  argument="split_name", expected=list(SPLITS))
    dataset_dir = os.fspath(dataset_dir)
    files = _split_files(split_name, dataset_dir, file_pattern)
    labels_to_names = read_labels_file(dataset_dir)
    if labels_to_names is None:
        raise PipelineConfigError(
            f"{dataset_dir} has no labels.txt; expected the converter's output folder",
            argument="dataset_dir", path=_fs.join(dataset_dir, "labels.txt"),
            expected="labels.txt with lines 'id:name'")
    keys_to_features = {
        "image/encoded": tf.io.FixedLenFeature((), tf.string, default_value=""),
        "image/format": tf.io.FixedLenFeature((), tf.string, default_value="jpeg"),
        "image/class/label": tf.io.FixedLenFeature((), tf.int64, default_value=-1),
        "image/filename": tf.io.FixedLenFeature((), tf.string, default_value=""),
    }
    items_to_handlers = {
        "image": tfexample_decoder.Image(channels=3),
        "label": tfexample_decoder.Tensor("image/class/label"),
        "filename": tfexample_decoder.Tensor("image/filename"),
    }
    return dataset.Dataset(
        data_sources=files, reader=reader or queues.TFRecordReader,
        decoder=tfexample_decoder.TFExampleDecoder(keys_to_features, items_to_handlers),
        num_samples=sum(count_records(f) for f in files),
        items_to_descriptions=dict(_ITEMS_TO_DESCRIPTIONS),
        num_classes=len(labels_to_names), labels_to_names=labels_to_names)


def _split_files(split_name: str, dataset_dir: str, file_pattern: str | None) -> list[str]:
    """The sorted files of a split; an error naming what was looked for when there are
    none, or when the default pattern finds the shards of several names."""
    name_pattern = file_pattern or _FILE_PATTERN
    name_pattern = name_pattern % split_name if "%s" in name_pattern else name_pattern
    pattern = _fs.join(dataset_dir, name_pattern)
    files = _fs.files_in(dataset_dir, name_pattern)
    if not files:
        hint = ("; file_pattern is slim's, with %s for the split: e.g. 'flowers_%s_*.tfrecord'"
                if file_pattern and "%s" not in file_pattern else
                "; convert the images first (tf1compat convert-images SOURCE "
                f"{dataset_dir} --name NAME)")
        raise PipelineConfigError(
            f"no file matches {pattern!r}{hint}",
            argument="file_pattern" if file_pattern else "dataset_dir", path=pattern,
            expected="the split's TFRecords")
    names = sorted({os.path.basename(f).rsplit(f"_{split_name}_", 1)[0] for f in files})
    if file_pattern is None and len(names) > 1:
        raise PipelineConfigError(
            f"{dataset_dir} holds the {split_name} shards of {names}; choose one with "
            f"file_pattern, e.g. '{names[0]}_%s_*.tfrecord'", argument="file_pattern",
            path=dataset_dir, expected=[f"{name}_%s_*.tfrecord" for name in names])
    check_committed(files, pattern)
    return files
