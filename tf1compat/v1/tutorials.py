"""Run mode's modules for what TF 1.x shipped beside its API: the MNIST tutorial
(``tensorflow.examples.tutorials.mnist``) and ``tf.contrib.learn``'s datasets.

:func:`build_examples` is ``tensorflow.examples``; :func:`build_learn` is
``tensorflow.contrib.learn``: a module without counterpart (every other name a
placeholder naming the alternative) whose ``datasets`` -- also reached as
``learn.python.learn.datasets``, the path tutorials imported -- are real. The
functions themselves are :mod:`tf1compat.v1.mnist_tutorial`'s and the CSV loaders
here. A name TF 1.15 had there but run mode cannot give (a download, a data set
TensorFlow shipped) is a placeholder; any other missing name is an
``AttributeError``, and a missing module under them says run mode does not provide it.
"""

import collections
import csv

import numpy as np

from tf1compat.errors import DatasetFormatError, display_path
from tf1compat.v1 import mnist_tutorial
from tf1compat.v1.proxy import ProxyModule, tf1_name, unsupported, unsupported_module

__all__ = ["Dataset", "load_csv_with_header", "load_csv_without_header", "build_examples",
           "build_learn", "MNIST_MODULES", "MNIST_ALIASES"]

Dataset = collections.namedtuple("Dataset", ["data", "target"])

# TF 1.x's MNIST modules -> the names of mnist_tutorial they hold: what run mode gives a
# program, and what `tf1compat port` writes beside a ported one
MNIST_MODULES = {
    "tensorflow.examples.tutorials.mnist.input_data": (
        "read_data_sets", "DataSet", "extract_images", "extract_labels", "dense_to_one_hot"),
    "tensorflow.examples.tutorials.mnist.mnist": (
        "NUM_CLASSES", "IMAGE_SIZE", "IMAGE_PIXELS", "inference", "loss", "training",
        "evaluation"),
    "tensorflow.contrib.learn.datasets.mnist": (
        "read_data_sets", "load_mnist", "DataSet", "extract_images", "extract_labels",
        "dense_to_one_hot"),
}
# the same module under the path tutorials imported it by
MNIST_ALIASES = {"tensorflow.contrib.learn.python.learn.datasets.mnist":
                 "tensorflow.contrib.learn.datasets.mnist"}

_NO_DOWNLOAD = "the files, downloaded yourself and read with read_data_sets (run mode does " \
               "not download)"
_SHIPPED_DATA = "sklearn.datasets (TF 1.x read it from a file it shipped)"


def _csv_rows(filename):
    with open(filename, newline="") as f:
        yield from enumerate(csv.reader(f), start=1)


def _csv_error(filename, line, problem, expected):
    where = f"line {line}: " if line is not None else ""
    return DatasetFormatError(f"{display_path(filename)}: {where}{problem}",
                              path=display_path(filename), index=line, expected=expected)


def _row_arrays(filename, line, row, target_column, target_dtype, features_dtype):
    try:
        target = np.asarray(row.pop(target_column), dtype=target_dtype)
        return np.asarray(row, dtype=features_dtype), target
    except (ValueError, IndexError) as e:
        raise _csv_error(filename, line, e, "a row of numbers with a target column") from e


def load_csv_with_header(filename, target_dtype, features_dtype, target_column=-1):
    """contrib.learn's loader: a CSV whose first row is ``n_samples,n_features,...``;
    returns ``Dataset(data, target)``."""
    rows = _csv_rows(filename)
    line, header = next(rows, (1, []))
    try:
        n_samples, n_features = int(header[0]), int(header[1])
    except (ValueError, IndexError) as e:
        raise _csv_error(filename, line, f"header {header!r} is not n_samples,n_features,...",
                         "a header row n_samples,n_features,...") from e
    data = np.zeros((n_samples, n_features), dtype=features_dtype)
    target = np.zeros((n_samples,), dtype=target_dtype)
    count = 0
    for count, (line, row) in enumerate(rows, start=1):
        if count > n_samples:
            raise _csv_error(filename, line, f"more rows than the header's {n_samples}",
                             f"{n_samples} rows")
        features, label = _row_arrays(filename, line, row, target_column, target_dtype,
                                      features_dtype)
        if features.shape != (n_features,):
            raise _csv_error(filename, line, f"{features.size} features, the header says "
                             f"{n_features}", f"{n_features} features and a target")
        data[count - 1], target[count - 1] = features, label
    if count < n_samples:
        raise _csv_error(filename, None, f"{count} rows, the header says {n_samples}",
                         f"{n_samples} rows")
    return Dataset(data=data, target=target)


def load_csv_without_header(filename, target_dtype, features_dtype, target_column=-1):
    """contrib.learn's loader for a headerless CSV; returns ``Dataset(data, target)``."""
    data, target = [], []
    for line, row in _csv_rows(filename):
        features, label = _row_arrays(filename, line, row, target_column, target_dtype,
                                      features_dtype)
        data.append(features)
        target.append(label)
    return Dataset(data=np.array(data), target=np.array(target, dtype=target_dtype))


def _module(name, names, placeholders=None):
    """A module of ``names`` (attributes); ``placeholders`` TF1 names -> alternative."""
    attributes = dict(names)
    attributes.update({n: unsupported(tf1_name(name, n), alternative)
                       for n, alternative in (placeholders or {}).items()})
    return ProxyModule(name, attributes=attributes,
                       doc=f"{tf1_name(name)} in tf1compat run mode")


def _mnist_names(*names):
    return {name: getattr(mnist_tutorial, name) for name in names}


def build_examples():
    """``tensorflow.examples``, holding ``tutorials.mnist.input_data`` and ``.mnist``."""
    package = "tensorflow.examples.tutorials.mnist"
    input_data = _module(f"{package}.input_data",
                         _mnist_names(*MNIST_MODULES[f"{package}.input_data"]),
                         {"maybe_download": _NO_DOWNLOAD})
    mnist = _module(f"{package}.mnist", _mnist_names(*MNIST_MODULES[f"{package}.mnist"]))
    tutorials = _module("tensorflow.examples.tutorials", {
        "mnist": _module(package, {"input_data": input_data, "mnist": mnist})})
    return _module("tensorflow.examples", {"tutorials": tutorials})


def _build_datasets():
    package = "tensorflow.contrib.learn.datasets"
    mnist = _module(f"{package}.mnist", _mnist_names(*MNIST_MODULES[f"{package}.mnist"]),
                    {"maybe_download": _NO_DOWNLOAD})
    base = _module(f"{package}.base", {
        "Datasets": mnist_tutorial.Datasets, "Dataset": Dataset,
        "load_csv_with_header": load_csv_with_header,
        "load_csv_without_header": load_csv_without_header}, {
        "load_iris": _SHIPPED_DATA, "load_boston": _SHIPPED_DATA,
        "maybe_download": _NO_DOWNLOAD, "urlretrieve_with_retry": _NO_DOWNLOAD})
    return _module(package, {"base": base, "mnist": mnist,
                             "load_dataset": mnist_tutorial.load_dataset})


def build_learn(alternative, constants):
    """``tensorflow.contrib.learn``: names are placeholders naming ``alternative``
    (``constants``: class name -> TF1 constants, see
    :func:`~tf1compat.v1.proxy.unsupported_module`) except ``datasets``, which is
    also ``python.learn.datasets``."""
    learn = unsupported_module("tensorflow.contrib.learn", alternative, constants)
    datasets = _build_datasets()
    vars(learn)["datasets"] = datasets
    vars(learn)["python"] = _module("tensorflow.contrib.learn.python", {
        "learn": _module("tensorflow.contrib.learn.python.learn", {"datasets": datasets})})
    return learn
