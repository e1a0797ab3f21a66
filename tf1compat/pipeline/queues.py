"""TF1 queue input API (producers, readers, batching) that validates early.

Same names, arguments and defaults as ``tf.compat.v1.train.*`` and
``tf.compat.v1.*Reader``; TensorFlow's own tests of these functions pass with
these in their place. Build the pipeline inside :func:`legacy_graph` (TF2's
eager mode refuses queues) and run it with :class:`tf1compat.SessionIterator`.

What is added to TF1: mistakes that TF1 reports late, opaquely or never raise
:class:`~tf1compat.errors.PipelineConfigError` (a ``ValueError``) while the graph
is built: an empty file list; a missing file, a directory or a glob matching
nothing (checked when a reader is connected to the queue, since
``string_input_producer`` also queues strings that are not files); a fixed
record size that does not divide a file; ``capacity <= min_after_dequeue``; a
non-positive batch size. Batching accepts a single tensor as well as a list or
dict; glob patterns in a file list are expanded; file names may be str, bytes
(not necessarily UTF-8), ``os.PathLike`` or numpy strings.
"""

import contextlib
import dataclasses
import glob
import os
import re
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, Union, cast

import numpy as np
import numpy.typing as npt

from tf1compat._checks import (
    check_index,
    check_non_negative_int,
    check_num_epochs,
    check_queue_capacity,
)
from tf1compat._tf import own_notices_dropped, tf, v1
from tf1compat._typing import FileName, Graph, Queue, Tensor
from tf1compat.errors import PipelineConfigError
from tf1compat.pipeline._validate import (
    check_batching,
    check_positive_int,
    check_shuffling,
    require_graph_mode,
)
from tf1compat.pipeline.graph_model import op_types
from tf1compat.pipeline.graph_model.index import graph_notes, read_ops
from tf1compat.pipeline.graph_model.notes import ProducerNote, UncheckedName

__all__ = [
    "legacy_graph", "string_input_producer", "slice_input_producer", "input_producer",
    "TFRecordReader", "FixedLengthRecordReader", "WholeFileReader", "TextLineReader",
    "batch", "shuffle_batch", "batch_join", "shuffle_batch_join", "prefetch_queue",
    "shard_files", "queue_files", "queue_epochs", "resolve_files", "check_queue_files",
    "check_reader_queues",
]

_GLOB_CHARACTERS = frozenset(b"*?[")
_REMOTE = re.compile(rb"^[A-Za-z][A-Za-z0-9+.-]*://")  # gs://, s3://, hdfs://: TF's file systems
# TensorFlow's glob also matches names that start with "." (Python can from 3.11)
_GLOB_OPTIONS: dict[str, Any] = {"include_hidden": True} if sys.version_info >= (3, 11) else {}
_PRODUCER, _STRING_TENSOR = "string_input_producer", "string_tensor"
# what the producers and shard_files take: a name, names, a numpy array of them, or a
# string tensor
FileNames = Union[FileName, Sequence[FileName], npt.NDArray[Any], Tensor]
# what batching takes and gives: a tensor, or a list or dict of them
Tensors = Union[Tensor, Sequence[Tensor], Mapping[str, Tensor]]


@contextlib.contextmanager
def legacy_graph(graph: Graph | None = None, *, seed: int | None = None) -> Iterator[Graph]:
    """Make a fresh ``tf.Graph`` (or ``graph``) the default, with TF1 semantics.

    Inside, queue ops build as in TF1 even though eager execution stays on
    outside. ``seed`` sets the graph-level random seed. Yields the graph.
    """
    graph = tf.Graph() if graph is None else graph
    with graph.as_default():
        if seed is not None:
            v1.set_random_seed(seed)
        yield graph


# ------------------------------------------------------------------ file names

def _tf_name(name: bytes) -> str | bytes:
    """A file name (bytes) as both TensorFlow and Python take it: str, or the bytes
    themselves when they are not UTF-8 (TensorFlow encodes every str as UTF-8)."""
    try:
        return name.decode("utf-8")
    except UnicodeDecodeError:
        return name


def _name_bytes(api: str, argument: str, index: int, name: Any) -> bytes:
    """``name`` (str, bytes, os.PathLike) as the bytes the file system sees."""
    try:
        return os.fsencode(name)
    except TypeError as e:
        raise TypeError(
            f"{api}: {argument}[{index}] is {type(name).__name__} {name!r}; expected a "
            "file name (str, bytes or os.PathLike)") from e
    except UnicodeEncodeError as e:
        raise PipelineConfigError(
            f"{api}: {argument}[{index}] {name!r} cannot be a file name ({e.reason})",
            argument=argument, expected="a str the file system can encode, or bytes") from e


def _python_names(api: str, argument: str, value: object) -> list[bytes] | None:
    """The names in a Python name, list or tuple of names, or numpy string array, as
    bytes; None for anything else (a tensor, or a list holding tensors)."""
    if isinstance(value, np.ndarray):
        if value.dtype.kind not in "USO" or value.ndim > 1:
            return None
        value = value.tolist() if value.ndim else [value.item()]
    elif isinstance(value, (str, bytes, os.PathLike)):
        value = [value]
    elif not isinstance(value, (list, tuple)):
        return None
    if any(isinstance(v, (tf.Tensor, tf.Variable, np.ndarray)) for v in value):
        return None
    return [_name_bytes(api, argument, index, v) for index, v in enumerate(value)]


def _is_remote(name: bytes) -> bool:
    return _REMOTE.match(name) is not None


def _without_file_system(name: bytes) -> str | None:
    """The scheme of a URL ``name`` when TensorFlow has no file system for it here
    (``s3://`` and ``hdfs://`` come with tensorflow-io's plugins), else None."""
    try:
        tf.io.gfile.exists(name)
    except tf.errors.UnimplementedError:
        scheme = _REMOTE.match(name)
        return None if scheme is None else scheme.group(0)[:-3].decode("ascii")
    return None


def _exists(name: bytes) -> bool:
    if not _is_remote(name):
        return os.path.exists(name)
    return _without_file_system(name) is None and bool(tf.io.gfile.exists(name))


def _isdir(name: bytes) -> bool:
    if not _is_remote(name):
        return os.path.isdir(name)
    return _without_file_system(name) is None and bool(tf.io.gfile.isdir(name))


def _glob(pattern: bytes) -> list[bytes]:
    """Sorted bytes names matching ``pattern``; local names need not be UTF-8."""
    if not _is_remote(pattern):
        return sorted(glob.glob(pattern, **_GLOB_OPTIONS))
    if _without_file_system(pattern) is not None:
        return []
    try:
        return sorted(os.fsencode(m) for m in tf.io.gfile.glob(pattern.decode("utf-8")))
    except UnicodeDecodeError:
        return []


def _file_size(name: FileName) -> int:
    raw = os.fsencode(name)
    return tf.io.gfile.stat(raw).length if _is_remote(raw) else os.stat(raw).st_size


def _expand(names: Sequence[bytes],
            expand: bool = True) -> tuple[list[bytes], list[UncheckedName]]:
    """The names to queue for ``names`` (bytes; with ``expand``, glob patterns that
    match are replaced by their sorted matches) and the entries among them that
    are not existing files."""
    queued, unchecked = [], []
    for index, name in enumerate(names):
        if _exists(name):
            queued.append(name)
            if _isdir(name):
                unchecked.append(UncheckedName(index, name, name, expand))
        elif expand and _GLOB_CHARACTERS.intersection(name) and (matches := _glob(name)):
            queued.extend(matches)
            unchecked.extend(UncheckedName(index, name, m, expand) for m in matches
                             if _isdir(m) or not _exists(m))  # a folder, a dangling link
        else:
            queued.append(name)
            unchecked.append(UncheckedName(index, name, name, expand))
    return queued, unchecked


def _not_a_file_error(api: str, argument: str, entry: UncheckedName,
                      context: str = "") -> PipelineConfigError | None:
    """The PipelineConfigError for ``entry`` if it is (still) not a file, else None."""
    where, name = f"{api}: {argument}[{entry.index}]", _tf_name(entry.name)
    expected = "an existing file"
    if _exists(entry.name):
        if not _isdir(entry.name):
            return None
        expected = "a file"
        if entry.given != entry.name:
            message = (f"{where} pattern {_tf_name(entry.given)!r} matches {name!r}, "
                       "which is a directory")
        else:
            message = (f"{where} {name!r} is a directory; expected a file (use a glob "
                       "such as 'dir/*.tfrecord' for its files)")
    elif b"\0" in entry.name:
        message = f"{where} {name!r} contains a NUL byte, which no file name can"
    elif _is_remote(entry.name) and (scheme := _without_file_system(entry.name)):
        message = (f"{where} {name!r}: TensorFlow has no file system for {scheme}:// here "
                   "(its readers take local paths and gs://; s3:// and hdfs:// need "
                   "tensorflow-io's file system plugins); read such files with "
                   "tf1compat.tfrecord.iter_records, or copy them to a local folder")
        expected = "a file TensorFlow's readers can open"
    elif entry.expanded and _GLOB_CHARACTERS.intersection(entry.name):
        message = f"{where} pattern {name!r} matches no file"
        expected = "a pattern matching at least one file"
    elif not _is_remote(entry.name) and os.path.islink(entry.name):
        message = f"{where} {name!r} is a symbolic link to a missing file"
    else:
        message = f"{where} file {name!r} does not exist"
        if _GLOB_CHARACTERS.intersection(entry.name):
            message += " (glob patterns are expanded in a Python list of names, not in a tensor)"
    return PipelineConfigError(message + context, argument=argument, path=name,
                               expected=expected)


def _raise_for_non_files(api: str, argument: str, unchecked: Sequence[UncheckedName],
                         context: str = "") -> None:
    for entry in unchecked:
        error = _not_a_file_error(api, argument, entry, context)
        if error is not None:
            raise error


def _empty_error(api: str, argument: str, context: str = "") -> PipelineConfigError:
    return PipelineConfigError(
        f"{api}: {argument} is empty; expected at least one file name{context}",
        argument=argument, expected="a non-empty list of file names")


def resolve_files(api: str, argument: str, names: FileNames) -> list[str | bytes]:
    """Expand glob patterns in ``names`` and check every file exists; returns a list.

    ``names`` is a name or a list of names (str, bytes, os.PathLike). The files
    come back as str, or as bytes for names that are not UTF-8 (both TensorFlow
    and Python's ``open`` take those). ``api`` and ``argument`` name the caller in
    the PipelineConfigError raised for an empty list, a pattern matching nothing,
    a missing file or a directory.
    """
    raw_names = _python_names(api, argument, names)
    if raw_names is None:
        raise TypeError(f"{api}: {argument} must be a file name or a list of file names, "
                        f"got {type(names).__name__}")
    if not raw_names:
        raise _empty_error(api, argument)
    queued, unchecked = _expand(raw_names)
    _raise_for_non_files(api, argument, unchecked)
    return [_tf_name(name) for name in queued]


def queue_files(queue: Queue | Tensor) -> tuple[str | bytes, ...] | None:
    """The names :func:`string_input_producer` put in ``queue`` (a queue or its handle
    tensor), or ``None`` when the queue was not made by it (or from a tensor whose
    value is unknown while the graph is built)."""
    queued = _queued_names(queue)
    return None if queued is None else queued.names


def queue_epochs(queue: Queue | Tensor) -> int | None:
    """The ``num_epochs`` of the :func:`string_input_producer` whose names
    :func:`queue_files` gives (None: forever, or another queue)."""
    queued = _queued_names(queue)
    return None if queued is None else queued.num_epochs


def _queued_names(queue: Queue | Tensor) -> ProducerNote | None:
    handle: Tensor = getattr(queue, "queue_ref", queue)
    return graph_notes(handle.graph).producers.get(handle.op.name)


def check_queue_files(queue: Queue | Tensor, reader: str) -> None:
    """Check that every name :func:`string_input_producer` put in ``queue`` is a file.

    Called when ``reader`` (a name for messages) is connected to the queue: only
    then are the names known to be files. Raises PipelineConfigError naming
    ``string_tensor`` and the index of the first name that is not a file.
    """
    queued = _queued_names(queue)
    if queued is None or (queued.names and not queued.unchecked):
        return
    context = f" ({reader} reads file names from this queue)"
    if not queued.names:
        raise _empty_error(_PRODUCER, _STRING_TENSOR, context)
    _raise_for_non_files(_PRODUCER, _STRING_TENSOR, queued.unchecked, context)
    handle: Tensor = getattr(queue, "queue_ref", queue)
    graph_notes(handle.graph).producers[handle.op.name] = dataclasses.replace(
        queued, unchecked=())


def check_reader_queues(graph: Graph) -> None:
    """:func:`check_queue_files` for every reader op in ``graph`` (TensorFlow's
    readers too) that reads a :func:`string_input_producer` queue."""
    producers = graph_notes(graph).producers
    if all(queued.names and not queued.unchecked for queued in producers.values()):
        return
    for op in read_ops(graph):
        handle = cast(Tensor, op_types.queue_handle(op))     # a read op has one
        if handle.op.name in producers:
            check_queue_files(handle, op_types.reader_op(op).type)


def _static_names(string_tensor: Tensor) -> list[bytes] | None:
    """The bytes in a string tensor whose value is known while the graph is built."""
    try:
        value = tf.get_static_value(string_tensor)
    except (TypeError, ValueError):
        return None
    if value is None or np.ndim(value) != 1:
        return None
    return [bytes(v) for v in value]


# --------------------------------------------------------------------- producers

@own_notices_dropped()
def string_input_producer(string_tensor: FileNames, num_epochs: int | None = None,
                          shuffle: bool = True, seed: int | None = None, capacity: int = 32,
                          shared_name: str | None = None, name: str | None = None,
                          cancel_op: Any = None) -> Queue:
    """Queue of strings, usually file names, as ``tf.compat.v1.train.string_input_producer``.

    ``string_tensor`` is a list of names (or one name, or a numpy array of them:
    str, bytes, os.PathLike), or a string tensor (e.g. ``match_filenames_once``).
    In a list, glob patterns that match files are expanded (sorted). Like TF1 it
    queues any strings; whether they are files is checked when one of tf1compat's
    readers or fast paths reads the queue, or a :class:`~tf1compat.SessionIterator`
    starts on a graph where any reader does.
    """
    api = _PRODUCER
    names = _python_names(api, _STRING_TENSOR, string_tensor)
    if names is not None and not names:
        raise _empty_error(api, _STRING_TENSOR)
    require_graph_mode(api)
    num_epochs = check_num_epochs(api, num_epochs)
    check_queue_capacity(api, capacity)
    if isinstance(string_tensor, tf.Variable):  # TF 2's v1 API refuses a Variable; TF1 took it
        string_tensor = tf.convert_to_tensor(string_tensor)
    queued: list[bytes] | None
    unchecked: Sequence[UncheckedName]
    if names is not None:
        queued, unchecked = _expand(names)
        string_tensor = queued
    elif isinstance(string_tensor, tf.Tensor):
        static = _static_names(string_tensor)
        queued, unchecked = (None, ()) if static is None else _expand(static, expand=False)
    else:
        queued, unchecked = None, ()
    queue = v1.train.string_input_producer(
        string_tensor, num_epochs=num_epochs, shuffle=shuffle, seed=seed,
        capacity=capacity, shared_name=shared_name, name=name, cancel_op=cancel_op)
    if queued is not None:
        graph_notes(queue.queue_ref.graph).producers[queue.queue_ref.op.name] = ProducerNote(
            tuple(_tf_name(n) for n in queued), tuple(unchecked), num_epochs)
    return queue


def _first_dimension(tensor: Tensor) -> int | None:
    """The static first dimension as an int (also under TF1 behaviour's ``Dimension``)."""
    return tf.compat.dimension_value(tensor.shape[0]) if tensor.shape.rank else None


def _check_rows(api: str, argument: str, tensor: Tensor, num_epochs: int | None) -> None:
    """Refuse a tensor without rows when the producer would loop forever on it."""
    if num_epochs is None and _first_dimension(tensor) == 0:
        raise PipelineConfigError(
            f"{api}: {argument} has no rows (first dimension 0) and num_epochs=None: "
            "the queue runner would loop forever without producing anything",
            argument=argument, expected="at least one row, or num_epochs set")


@own_notices_dropped()
def slice_input_producer(tensor_list: Tensor | Sequence[Tensor], num_epochs: int | None = None,
                         shuffle: bool = True, seed: int | None = None, capacity: int = 32,
                         shared_name: str | None = None,
                         name: str | None = None) -> Tensor | list[Tensor]:
    """One slice of each tensor per step, as ``tf.compat.v1.train.slice_input_producer``.

    ``tensor_list`` may also be a single tensor or array; then one tensor is returned.
    """
    api = "slice_input_producer"
    require_graph_mode(api)
    num_epochs = check_num_epochs(api, num_epochs)
    check_queue_capacity(api, capacity)
    single = not isinstance(tensor_list, (list, tuple))
    tensors = [tf.convert_to_tensor(t) for t in ([tensor_list] if single else tensor_list)]
    if not tensors:
        raise PipelineConfigError(
            f"{api}: tensor_list is empty; expected at least one tensor",
            argument="tensor_list", expected="a non-empty list of tensors")
    firsts = [_first_dimension(t) for t in tensors]
    if len(set(firsts) - {None}) > 1:
        raise PipelineConfigError(
            f"{api}: tensors in tensor_list have different first dimensions "
            f"{firsts}; expected one length to slice along",
            argument="tensor_list", expected="equal first dimensions")
    for tensor in tensors:
        _check_rows(api, "tensor_list", tensor, num_epochs)
    slices = v1.train.slice_input_producer(
        tensors, num_epochs=num_epochs, shuffle=shuffle, seed=seed,
        capacity=capacity, shared_name=shared_name, name=name)
    return slices[0] if single else slices


@own_notices_dropped()
def input_producer(input_tensor: Tensor, element_shape: Any = None,
                   num_epochs: int | None = None, shuffle: bool = True,
                   seed: int | None = None, capacity: int = 32, shared_name: str | None = None,
                   summary_name: str | None = None, name: str | None = None,
                   cancel_op: Any = None) -> Queue:
    """Queue of the rows of ``input_tensor``, as ``tf.compat.v1.train.input_producer``."""
    api = "input_producer"
    require_graph_mode(api)
    num_epochs = check_num_epochs(api, num_epochs)
    check_queue_capacity(api, capacity)
    input_tensor = tf.convert_to_tensor(input_tensor)
    if input_tensor.shape.rank == 0:
        raise PipelineConfigError(
            f"{api}: input_tensor is a scalar; expected a tensor with at least one dimension",
            argument="input_tensor", expected="rank >= 1")
    _check_rows(api, "input_tensor", input_tensor, num_epochs)
    return v1.train.input_producer(
        input_tensor, element_shape=element_shape, num_epochs=num_epochs,
        shuffle=shuffle, seed=seed, capacity=capacity, shared_name=shared_name,
        summary_name=summary_name, name=name, cancel_op=cancel_op)


# ----------------------------------------------------------------------- readers

class _FileQueueReader:
    """Checks the names of a :func:`string_input_producer` queue when connected to it."""

    def read(self, queue: Queue | Tensor, name: str | None = None) -> tuple[Tensor, Tensor]:
        self._check_queue(queue)
        return super().read(queue, name=name)  # type: ignore[misc,no-any-return]  # a mixin

    def read_up_to(self, queue: Queue | Tensor, num_records: int | Tensor,
                   name: str | None = None) -> tuple[Tensor, Tensor]:
        check_positive_int(type(self).__name__, "num_records", num_records, allow_tensor=True)
        self._check_queue(queue)
        return super().read_up_to(  # type: ignore[misc,no-any-return]  # a mixin
            queue, num_records, name=name)

    def _check_queue(self, queue: Queue | Tensor) -> None:
        reader = type(self).__name__
        if not isinstance(getattr(queue, "queue_ref", queue), tf.Tensor):
            raise TypeError(
                f"{reader}: queue must be a queue of file names or its handle "
                f"tensor, got {type(queue).__name__}; give the files to "
                "string_input_producer(files) and read from the queue it returns")
        check_queue_files(queue, reader)


class TFRecordReader(_FileQueueReader, v1.TFRecordReader):  # type: ignore[misc]
    """``tf.compat.v1.TFRecordReader`` that checks its queue's files when it reads."""

    @own_notices_dropped()
    def __init__(self, name: str | None = None, options: Any = None) -> None:
        require_graph_mode("TFRecordReader")
        super().__init__(name=name, options=options)


class WholeFileReader(_FileQueueReader, v1.WholeFileReader):  # type: ignore[misc]
    """``tf.compat.v1.WholeFileReader`` that checks its queue's files when it reads."""

    @own_notices_dropped()
    def __init__(self, name: str | None = None) -> None:
        require_graph_mode("WholeFileReader")
        super().__init__(name=name)


class TextLineReader(_FileQueueReader, v1.TextLineReader):  # type: ignore[misc]
    """``tf.compat.v1.TextLineReader`` that checks its queue's files when it reads."""

    @own_notices_dropped()
    def __init__(self, skip_header_lines: int | None = None, name: str | None = None) -> None:
        api = "TextLineReader"
        require_graph_mode(api)
        skip_header_lines = check_non_negative_int(
            api, "skip_header_lines", skip_header_lines, allow_none=True, allow_float=True)
        super().__init__(skip_header_lines=skip_header_lines, name=name)


_FIXED_LENGTH_ENCODINGS = ("", "ZLIB", "GZIP")


class FixedLengthRecordReader(_FileQueueReader,
                              v1.FixedLengthRecordReader):  # type: ignore[misc]
    """``tf.compat.v1.FixedLengthRecordReader`` that checks its queue's files and sizes.

    When it reads from a :func:`string_input_producer` queue of uncompressed
    files, each file's size minus ``header_bytes`` and ``footer_bytes`` must be
    a multiple of ``record_bytes`` (TF1 silently drops or misreads the rest).
    ``encoding`` must be None, "ZLIB" or "GZIP" (TF1 reads any other value as
    uncompressed data).
    """

    @own_notices_dropped()
    def __init__(self, record_bytes: int, header_bytes: int | None = None,
                 footer_bytes: int | None = None, hop_bytes: int | None = None,
                 name: str | None = None, encoding: str | bytes | None = None) -> None:
        api = "FixedLengthRecordReader"
        require_graph_mode(api)
        record_bytes = check_positive_int(api, "record_bytes", record_bytes, allow_float=True)
        header_bytes, footer_bytes, hop_bytes = (
            check_non_negative_int(api, argument, value, allow_none=True, allow_float=True)
            for argument, value in (("header_bytes", header_bytes),
                                    ("footer_bytes", footer_bytes), ("hop_bytes", hop_bytes)))
        text = encoding.decode() if isinstance(encoding, bytes) else encoding
        if text is not None and text not in _FIXED_LENGTH_ENCODINGS:
            raise PipelineConfigError(
                f"{api}: encoding must be None, 'ZLIB' or 'GZIP', got {encoding!r} (TF1 "
                "reads any other value as uncompressed data)",
                argument="encoding", expected="None, 'ZLIB' or 'GZIP'")
        super().__init__(record_bytes, header_bytes=header_bytes, footer_bytes=footer_bytes,
                         hop_bytes=hop_bytes, name=name, encoding=encoding)
        self._layout = (record_bytes, header_bytes or 0, footer_bytes or 0)
        self._checkable = not hop_bytes and not text

    def _check_queue(self, queue: Queue | Tensor) -> None:
        super()._check_queue(queue)
        files = queue_files(queue)
        if not self._checkable or not files:
            return
        record_bytes, header_bytes, footer_bytes = self._layout
        for path in files:
            size = _file_size(path)
            body = size - header_bytes - footer_bytes
            if body >= 0 and body % record_bytes == 0:
                continue
            records = max(body, 0) // record_bytes
            raise PipelineConfigError(
                f"FixedLengthRecordReader: {path!r} has {size} bytes, which is not "
                f"header_bytes={header_bytes} + k * record_bytes={record_bytes} + "
                f"footer_bytes={footer_bytes} (expected a size of "
                f"{header_bytes + records * record_bytes + footer_bytes} or "
                f"{header_bytes + (records + 1) * record_bytes + footer_bytes}); "
                "is record_bytes right for this file?",
                argument="record_bytes", path=path,
                expected=f"file size = {header_bytes} + k * {record_bytes} + {footer_bytes}")


# ---------------------------------------------------------------------- batching

def _check_batching(api: str, batch_size: int | Tensor, capacity: int,
                    num_threads: int = 1) -> None:
    # TF1's batching raises ValueError in eager mode; its queues take any capacity but 0
    check_batching(api, batch_size, capacity, num_threads, eager_error=ValueError,
                   unbounded=True)


def _is_single_tensor(value: object) -> bool:
    return isinstance(value, (tf.Tensor, tf.SparseTensor, tf.Variable))


def _call_with_structure(fn: Callable[[Any], Any], tensors: Tensors) -> Any:
    """Call a TF1 batching function, also for a single tensor (TF1 refuses one)."""
    if not _is_single_tensor(tensors):
        return fn(tensors)
    result = fn([tensors])
    return result[0] if isinstance(result, (list, tuple)) else result


def _check_join_list(api: str, tensors_list: Sequence[Tensors]) -> list[Any]:
    if not isinstance(tensors_list, (list, tuple)) or not tensors_list:
        raise PipelineConfigError(
            f"{api}: tensors_list must be a non-empty list (one entry per reader), "
            f"got {tensors_list!r}", argument="tensors_list",
            expected="a non-empty list of tensors, lists or dicts")
    return [[t] if _is_single_tensor(t) else t for t in tensors_list]


def _unwrap_single_join(tensors_list: Sequence[Tensors], result: Any) -> Any:
    if _is_single_tensor(tensors_list[0]) and isinstance(result, (list, tuple)):
        return result[0]
    return result


@own_notices_dropped()
def batch(tensors: Tensors, batch_size: int | Tensor, num_threads: int = 1, capacity: int = 32,
          enqueue_many: bool = False, shapes: Any = None, dynamic_pad: bool = False,
          allow_smaller_final_batch: bool = False, shared_name: str | None = None,
          name: str | None = None) -> Any:
    """Batches in arrival order, as ``tf.compat.v1.train.batch``.

    Like TF1, a final partial batch is dropped unless ``allow_smaller_final_batch``.
    """
    _check_batching("batch", batch_size, capacity, num_threads)
    return _call_with_structure(lambda t: v1.train.batch(
        t, batch_size, num_threads=num_threads, capacity=capacity,
        enqueue_many=enqueue_many, shapes=shapes, dynamic_pad=dynamic_pad,
        allow_smaller_final_batch=allow_smaller_final_batch,
        shared_name=shared_name, name=name), tensors)


@own_notices_dropped()
def shuffle_batch(tensors: Tensors, batch_size: int | Tensor, capacity: int,
                  min_after_dequeue: int, num_threads: int = 1, seed: int | None = None,
                  enqueue_many: bool = False, shapes: Any = None,
                  allow_smaller_final_batch: bool = False, shared_name: str | None = None,
                  name: str | None = None) -> Any:
    """Batches drawn at random from a buffer, as ``tf.compat.v1.train.shuffle_batch``."""
    api = "shuffle_batch"
    _check_batching(api, batch_size, capacity, num_threads)
    check_shuffling(api, capacity, min_after_dequeue)
    return _call_with_structure(lambda t: v1.train.shuffle_batch(
        t, batch_size, capacity, min_after_dequeue, num_threads=num_threads,
        seed=seed, enqueue_many=enqueue_many, shapes=shapes,
        allow_smaller_final_batch=allow_smaller_final_batch,
        shared_name=shared_name, name=name), tensors)


@own_notices_dropped()
def batch_join(tensors_list: Sequence[Tensors], batch_size: int | Tensor, capacity: int = 32,
               enqueue_many: bool = False, shapes: Any = None, dynamic_pad: bool = False,
               allow_smaller_final_batch: bool = False, shared_name: str | None = None,
               name: str | None = None) -> Any:
    """Batches from several readers (one thread each), as ``tf.compat.v1.train.batch_join``."""
    api = "batch_join"
    _check_batching(api, batch_size, capacity)
    wrapped = _check_join_list(api, tensors_list)
    result = v1.train.batch_join(
        wrapped, batch_size, capacity=capacity, enqueue_many=enqueue_many,
        shapes=shapes, dynamic_pad=dynamic_pad,
        allow_smaller_final_batch=allow_smaller_final_batch,
        shared_name=shared_name, name=name)
    return _unwrap_single_join(tensors_list, result)


@own_notices_dropped()
def shuffle_batch_join(tensors_list: Sequence[Tensors], batch_size: int | Tensor,
                       capacity: int, min_after_dequeue: int, seed: int | None = None,
                       enqueue_many: bool = False, shapes: Any = None,
                       allow_smaller_final_batch: bool = False,
                       shared_name: str | None = None, name: str | None = None) -> Any:
    """Shuffled batches from several readers, as ``tf.compat.v1.train.shuffle_batch_join``."""
    api = "shuffle_batch_join"
    _check_batching(api, batch_size, capacity)
    check_shuffling(api, capacity, min_after_dequeue)
    wrapped = _check_join_list(api, tensors_list)
    result = v1.train.shuffle_batch_join(
        wrapped, batch_size, capacity, min_after_dequeue, seed=seed,
        enqueue_many=enqueue_many, shapes=shapes,
        allow_smaller_final_batch=allow_smaller_final_batch,
        shared_name=shared_name, name=name)
    return _unwrap_single_join(tensors_list, result)


@own_notices_dropped()
def prefetch_queue(tensors: Tensors, capacity: int = 8, num_threads: int = 1,
                   dynamic_pad: bool = False, shared_name: str | None = None,
                   name: str | None = None) -> Queue:
    """A queue kept filled by background threads, as tf-slim's ``prefetch_queue``.

    ``tensors`` is a tensor, a list or a dict (usually a batch); call
    ``.dequeue()`` on the returned queue to get the same structure back.
    """
    api = "prefetch_queue"
    require_graph_mode(api)
    check_queue_capacity(api, capacity)
    check_positive_int(api, "num_threads", num_threads)
    if isinstance(tensors, dict):
        names = sorted(tensors)
        values = [tensors[key] for key in names]
    else:
        names = None
        values = [tensors] if _is_single_tensor(tensors) else list(tensors)
    if not values:
        raise PipelineConfigError(
            f"{api}: tensors is empty; expected a tensor, or a non-empty list or dict",
            argument="tensors", expected="at least one tensor")
    values = [tf.convert_to_tensor(v) for v in values]
    with tf.name_scope(name or "prefetch_queue"):
        queue_class = tf.queue.PaddingFIFOQueue if dynamic_pad else tf.queue.FIFOQueue
        queue = queue_class(
            capacity=capacity, dtypes=[v.dtype for v in values],
            shapes=[v.shape for v in values], names=names, shared_name=shared_name)
        enqueue = queue.enqueue(dict(zip(names, values, strict=True)) if names else
                                (values[0] if _is_single_tensor(tensors) else values))
        v1.train.add_queue_runner(v1.train.QueueRunner(queue, [enqueue] * num_threads))
        v1.summary.scalar(
            "fraction_of_%d_full" % capacity,
            tf.cast(queue.size(), tf.float32) * (1.0 / capacity))
    return queue


# ---------------------------------------------------------------------- sharding

def shard_files(files: FileNames, num_workers: int, worker_index: int) -> list[str | bytes]:
    """The files worker ``worker_index`` of ``num_workers`` should read.

    ``files`` (names or glob patterns) are expanded, deduplicated and sorted, then
    dealt round-robin, so every worker gets a fixed, disjoint share on every run.
    """
    api = "shard_files"
    num_workers = check_positive_int(api, "num_workers", num_workers)
    worker_index = check_index(api, "worker_index", worker_index, num_workers)
    resolved = sorted(set(resolve_files(api, "files", files)), key=os.fsencode)
    if len(resolved) < num_workers:
        raise PipelineConfigError(
            f"{api}: {len(resolved)} file(s) cannot be shared by {num_workers} workers; "
            "each worker needs at least one file", argument="num_workers",
            expected=f"num_workers <= {len(resolved)}")
    return resolved[worker_index::num_workers]
