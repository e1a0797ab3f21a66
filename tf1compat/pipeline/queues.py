"""TF1 queue input API (producers, readers, batching) that validates early.

Same names, arguments and defaults as ``tf.compat.v1.train.*`` and
``tf.compat.v1.*Reader``. Build the pipeline inside :func:`legacy_graph` (TF2's
eager mode refuses queues) and run it with :class:`tf1compat.SessionIterator`.

What is added to TF1: mistakes that TF1 reports late, opaquely or never (an
empty file list, a glob matching nothing, a missing file, a fixed record size
that does not divide a file, ``capacity <= min_after_dequeue``, a non-positive
batch size) raise :class:`~tf1compat.errors.PipelineConfigError` (a
``ValueError``) at graph-build time; batching accepts a single tensor as well as
a list or dict; glob patterns in a file list are expanded.
"""

import contextlib
import os
import weakref

from tf1compat._tf import tf, v1
from tf1compat.errors import PipelineConfigError
from tf1compat.pipeline._validate import (
    check_batching,
    check_num_epochs,
    check_positive_int,
    check_shuffling,
    require_graph_mode,
)

__all__ = [
    "legacy_graph", "string_input_producer", "slice_input_producer", "input_producer",
    "TFRecordReader", "FixedLengthRecordReader", "WholeFileReader", "TextLineReader",
    "batch", "shuffle_batch", "batch_join", "shuffle_batch_join", "prefetch_queue",
    "shard_files", "queue_files", "resolve_files",
]

_GLOB_CHARACTERS = frozenset("*?[")

# graph -> {queue op name -> tuple of the files a producer put in that queue}
_FILES_BY_QUEUE = weakref.WeakKeyDictionary()


@contextlib.contextmanager
def legacy_graph(graph=None, *, seed=None):
    """Make a fresh ``tf.Graph`` (or ``graph``) the default, with TF1 semantics.

    Inside, queue ops build as in TF1 even though eager execution stays on
    outside. ``seed`` sets the graph-level random seed. Yields the graph.
    """
    graph = tf.Graph() if graph is None else graph
    with graph.as_default():
        if seed is not None:
            v1.set_random_seed(seed)
        yield graph


def queue_files(queue):
    """The files :func:`string_input_producer` put in ``queue`` (a queue or its
    handle tensor), or ``None`` when the queue was not made by it."""
    handle = getattr(queue, "queue_ref", queue)
    return _FILES_BY_QUEUE.get(handle.graph, {}).get(handle.op.name)


def _is_python_file_list(value):
    if isinstance(value, (str, bytes, os.PathLike)):
        return True
    return isinstance(value, (list, tuple)) and all(
        isinstance(v, (str, bytes, os.PathLike)) for v in value)


def resolve_files(api, argument, names):
    """Expand glob patterns in ``names`` and check every file exists; returns a list.

    ``api`` and ``argument`` name the caller in the PipelineConfigError raised
    for an empty list, a pattern matching nothing, a missing file or a directory.
    """
    if isinstance(names, (str, bytes, os.PathLike)):
        names = [names]
    if not names:
        raise PipelineConfigError(
            f"{api}: {argument} is empty; expected at least one file name",
            argument=argument, expected="a non-empty list of file names")
    files = []
    for index, name in enumerate(names):
        name = os.fsdecode(name)
        if tf.io.gfile.exists(name):
            if tf.io.gfile.isdir(name):
                raise PipelineConfigError(
                    f"{api}: {argument}[{index}] {name!r} is a directory; expected a "
                    "file (use a glob such as 'dir/*.tfrecord' for its files)",
                    argument=argument, path=name, expected="a file")
            files.append(name)
        elif _GLOB_CHARACTERS.intersection(name):
            matches = sorted(tf.io.gfile.glob(name))
            if not matches:
                raise PipelineConfigError(
                    f"{api}: {argument}[{index}] pattern {name!r} matches no file",
                    argument=argument, path=name, expected="a pattern matching at least one file")
            files.extend(matches)
        else:
            raise PipelineConfigError(
                f"{api}: {argument}[{index}] file {name!r} does not exist",
                argument=argument, path=name, expected="an existing file")
    return files


# --------------------------------------------------------------------- producers

def string_input_producer(string_tensor, num_epochs=None, shuffle=True, seed=None,
                          capacity=32, shared_name=None, name=None, cancel_op=None):
    """Queue of file names, as ``tf.compat.v1.train.string_input_producer``.

    A Python list (or a single name) is checked: it must be non-empty, every
    file must exist, and glob patterns are expanded (sorted) and must match.
    A string tensor (e.g. from ``match_filenames_once``) is passed through.
    """
    api = "string_input_producer"
    require_graph_mode(api)
    check_num_epochs(api, num_epochs)
    check_positive_int(api, "capacity", capacity)
    files = None
    if _is_python_file_list(string_tensor):
        files = resolve_files(api, "string_tensor", string_tensor)
        string_tensor = files
    queue = v1.train.string_input_producer(
        string_tensor, num_epochs=num_epochs, shuffle=shuffle, seed=seed,
        capacity=capacity, shared_name=shared_name, name=name, cancel_op=cancel_op)
    if files is not None:
        registry = _FILES_BY_QUEUE.setdefault(queue.queue_ref.graph, {})
        registry[queue.queue_ref.op.name] = tuple(files)
    return queue


def slice_input_producer(tensor_list, num_epochs=None, shuffle=True, seed=None,
                         capacity=32, shared_name=None, name=None):
    """One slice of each tensor per step, as ``tf.compat.v1.train.slice_input_producer``.

    ``tensor_list`` may also be a single tensor or array; then one tensor is returned.
    """
    api = "slice_input_producer"
    require_graph_mode(api)
    check_num_epochs(api, num_epochs)
    check_positive_int(api, "capacity", capacity)
    single = not isinstance(tensor_list, (list, tuple))
    tensors = [tf.convert_to_tensor(t) for t in ([tensor_list] if single else tensor_list)]
    if not tensors:
        raise PipelineConfigError(
            f"{api}: tensor_list is empty; expected at least one tensor",
            argument="tensor_list", expected="a non-empty list of tensors")
    lengths = {t.shape[0] if t.shape.rank else None for t in tensors}
    lengths.discard(None)
    if len(lengths) > 1:
        raise PipelineConfigError(
            f"{api}: tensors in tensor_list have different first dimensions "
            f"{[t.shape[0] for t in tensors]}; expected one length to slice along",
            argument="tensor_list", expected="equal first dimensions")
    if 0 in lengths:
        raise PipelineConfigError(
            f"{api}: tensor_list has no rows to slice (first dimension 0)",
            argument="tensor_list", expected="at least one row")
    slices = v1.train.slice_input_producer(
        tensors, num_epochs=num_epochs, shuffle=shuffle, seed=seed,
        capacity=capacity, shared_name=shared_name, name=name)
    return slices[0] if single else slices


def input_producer(input_tensor, element_shape=None, num_epochs=None, shuffle=True,
                   seed=None, capacity=32, shared_name=None, summary_name=None,
                   name=None, cancel_op=None):
    """Queue of the rows of ``input_tensor``, as ``tf.compat.v1.train.input_producer``."""
    api = "input_producer"
    require_graph_mode(api)
    check_num_epochs(api, num_epochs)
    check_positive_int(api, "capacity", capacity)
    input_tensor = tf.convert_to_tensor(input_tensor)
    if input_tensor.shape.rank == 0:
        raise PipelineConfigError(
            f"{api}: input_tensor is a scalar; expected a tensor with at least one dimension",
            argument="input_tensor", expected="rank >= 1")
    if input_tensor.shape.rank and input_tensor.shape[0] == 0:
        raise PipelineConfigError(
            f"{api}: input_tensor has no rows (first dimension 0)",
            argument="input_tensor", expected="at least one row")
    return v1.train.input_producer(
        input_tensor, element_shape=element_shape, num_epochs=num_epochs,
        shuffle=shuffle, seed=seed, capacity=capacity, shared_name=shared_name,
        summary_name=summary_name, name=name, cancel_op=cancel_op)


# ----------------------------------------------------------------------- readers

class TFRecordReader(v1.TFRecordReader):
    """``tf.compat.v1.TFRecordReader`` that explains when it is built in eager mode."""

    def __init__(self, name=None, options=None):
        require_graph_mode("TFRecordReader")
        super().__init__(name=name, options=options)


class WholeFileReader(v1.WholeFileReader):
    """``tf.compat.v1.WholeFileReader`` that explains when it is built in eager mode."""

    def __init__(self, name=None):
        require_graph_mode("WholeFileReader")
        super().__init__(name=name)


class TextLineReader(v1.TextLineReader):
    """``tf.compat.v1.TextLineReader`` that explains when it is built in eager mode."""

    def __init__(self, skip_header_lines=None, name=None):
        require_graph_mode("TextLineReader")
        super().__init__(skip_header_lines=skip_header_lines, name=name)


class FixedLengthRecordReader(v1.FixedLengthRecordReader):
    """``tf.compat.v1.FixedLengthRecordReader`` that checks file sizes.

    When it reads from a :func:`string_input_producer` queue of uncompressed
    files, each file's size minus ``header_bytes`` and ``footer_bytes`` must be
    a multiple of ``record_bytes`` (TF1 silently drops or misreads the rest).
    """

    def __init__(self, record_bytes, header_bytes=None, footer_bytes=None,
                 hop_bytes=None, name=None, encoding=None):
        api = "FixedLengthRecordReader"
        require_graph_mode(api)
        check_positive_int(api, "record_bytes", record_bytes)
        for argument, value in (("header_bytes", header_bytes),
                                ("footer_bytes", footer_bytes), ("hop_bytes", hop_bytes)):
            if value is not None and (not isinstance(value, int) or value < 0):
                raise PipelineConfigError(
                    f"{api}: {argument} must be a non-negative integer, got {value!r}",
                    argument=argument, expected="an integer >= 0")
        super().__init__(record_bytes, header_bytes=header_bytes, footer_bytes=footer_bytes,
                         hop_bytes=hop_bytes, name=name, encoding=encoding)
        self._layout = (record_bytes, header_bytes or 0, footer_bytes or 0)
        self._checkable = not hop_bytes and not encoding

    def read(self, queue, name=None):
        self._check_file_sizes(queue)
        return super().read(queue, name=name)

    def read_up_to(self, queue, num_records, name=None):
        self._check_file_sizes(queue)
        return super().read_up_to(queue, num_records, name=name)

    def _check_file_sizes(self, queue):
        files = queue_files(queue)
        if not self._checkable or not files:
            return
        record_bytes, header_bytes, footer_bytes = self._layout
        for path in files:
            size = tf.io.gfile.stat(path).length
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

def _is_single_tensor(value):
    return isinstance(value, (tf.Tensor, tf.SparseTensor, tf.Variable))


def _call_with_structure(fn, tensors):
    """Call a TF1 batching function, also for a single tensor (TF1 refuses one)."""
    if not _is_single_tensor(tensors):
        return fn(tensors)
    result = fn([tensors])
    return result[0] if isinstance(result, (list, tuple)) else result


def _check_join_list(api, tensors_list):
    if not isinstance(tensors_list, (list, tuple)) or not tensors_list:
        raise PipelineConfigError(
            f"{api}: tensors_list must be a non-empty list (one entry per reader), "
            f"got {tensors_list!r}", argument="tensors_list",
            expected="a non-empty list of tensors, lists or dicts")
    return [[t] if _is_single_tensor(t) else t for t in tensors_list]


def _unwrap_single_join(tensors_list, result):
    if _is_single_tensor(tensors_list[0]) and isinstance(result, (list, tuple)):
        return result[0]
    return result


def batch(tensors, batch_size, num_threads=1, capacity=32, enqueue_many=False,
          shapes=None, dynamic_pad=False, allow_smaller_final_batch=False,
          shared_name=None, name=None):
    """Batches in arrival order, as ``tf.compat.v1.train.batch``.

    Like TF1, a final partial batch is dropped unless ``allow_smaller_final_batch``.
    """
    check_batching("batch", batch_size, capacity, num_threads)
    return _call_with_structure(lambda t: v1.train.batch(
        t, batch_size, num_threads=num_threads, capacity=capacity,
        enqueue_many=enqueue_many, shapes=shapes, dynamic_pad=dynamic_pad,
        allow_smaller_final_batch=allow_smaller_final_batch,
        shared_name=shared_name, name=name), tensors)


def shuffle_batch(tensors, batch_size, capacity, min_after_dequeue, num_threads=1,
                  seed=None, enqueue_many=False, shapes=None,
                  allow_smaller_final_batch=False, shared_name=None, name=None):
    """Batches drawn at random from a buffer, as ``tf.compat.v1.train.shuffle_batch``."""
    api = "shuffle_batch"
    check_batching(api, batch_size, capacity, num_threads)
    check_shuffling(api, capacity, min_after_dequeue)
    return _call_with_structure(lambda t: v1.train.shuffle_batch(
        t, batch_size, capacity, min_after_dequeue, num_threads=num_threads,
        seed=seed, enqueue_many=enqueue_many, shapes=shapes,
        allow_smaller_final_batch=allow_smaller_final_batch,
        shared_name=shared_name, name=name), tensors)


def batch_join(tensors_list, batch_size, capacity=32, enqueue_many=False, shapes=None,
               dynamic_pad=False, allow_smaller_final_batch=False, shared_name=None,
               name=None):
    """Batches from several readers (one thread each), as ``tf.compat.v1.train.batch_join``."""
    api = "batch_join"
    check_batching(api, batch_size, capacity)
    wrapped = _check_join_list(api, tensors_list)
    result = v1.train.batch_join(
        wrapped, batch_size, capacity=capacity, enqueue_many=enqueue_many,
        shapes=shapes, dynamic_pad=dynamic_pad,
        allow_smaller_final_batch=allow_smaller_final_batch,
        shared_name=shared_name, name=name)
    return _unwrap_single_join(tensors_list, result)


def shuffle_batch_join(tensors_list, batch_size, capacity, min_after_dequeue, seed=None,
                       enqueue_many=False, shapes=None, allow_smaller_final_batch=False,
                       shared_name=None, name=None):
    """Shuffled batches from several readers, as ``tf.compat.v1.train.shuffle_batch_join``."""
    api = "shuffle_batch_join"
    check_batching(api, batch_size, capacity)
    check_shuffling(api, capacity, min_after_dequeue)
    wrapped = _check_join_list(api, tensors_list)
    result = v1.train.shuffle_batch_join(
        wrapped, batch_size, capacity, min_after_dequeue, seed=seed,
        enqueue_many=enqueue_many, shapes=shapes,
        allow_smaller_final_batch=allow_smaller_final_batch,
        shared_name=shared_name, name=name)
    return _unwrap_single_join(tensors_list, result)


def prefetch_queue(tensors, capacity=8, num_threads=1, dynamic_pad=False,
                   shared_name=None, name=None):
    """A queue kept filled by background threads, as tf-slim's ``prefetch_queue``.

    ``tensors`` is a tensor, a list or a dict (usually a batch); call
    ``.dequeue()`` on the returned queue to get the same structure back.
    """
    api = "prefetch_queue"
    require_graph_mode(api)
    check_positive_int(api, "capacity", capacity)
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

def shard_files(files, num_workers, worker_index):
    """The files worker ``worker_index`` of ``num_workers`` should read.

    ``files`` (names or glob patterns) are expanded, deduplicated and sorted, then
    dealt round-robin, so every worker gets a fixed, disjoint share on every run.
    """
    api = "shard_files"
    check_positive_int(api, "num_workers", num_workers)
    if isinstance(worker_index, bool) or not isinstance(worker_index, int) \
            or not 0 <= worker_index < num_workers:
        raise PipelineConfigError(
            f"{api}: worker_index={worker_index!r} is out of range for "
            f"num_workers={num_workers}; valid: 0..{num_workers - 1}",
            argument="worker_index", expected=f"an integer in [0, {num_workers})")
    resolved = sorted(set(resolve_files(api, "files", files)))
    if len(resolved) < num_workers:
        raise PipelineConfigError(
            f"{api}: {len(resolved)} file(s) cannot be shared by {num_workers} workers; "
            "each worker needs at least one file", argument="num_workers",
            expected=f"num_workers <= {len(resolved)}")
    return resolved[worker_index::num_workers]
