"""Batched fast paths for TF1 queue pipelines: tf.data inside the legacy graph.

A classic pipeline (``reader.read`` -> ``parse_single_example`` -> ``batch``) pays
one Python ``session.run`` step in a queue-runner thread per example. Here the files
the filename queue hands out are read, batched, parsed with one vectorized call per
``records_per_read`` records (by default about 1024) and prefetched by tf.data,
inside the graph; the result is an iterator's
``get_next()``, and ``local_variables_initializer()`` (which ``SessionIterator`` and
every TF1 loop already run, as ``num_epochs`` needs it) starts the iterator. No
thread runs besides the producer's queue runner and tf.data's own, so TensorFlow's
default session config is fine. The outputs are those of the classic pipeline:

* ``shuffle=False``: batches of exactly ``batch_size`` examples in reading order
  (files in the queue's order; several readers read that many files at once,
  interleaved chunk by chunk in a fixed order); ``num_threads`` parse in parallel and
  keep the order. The final partial batch comes only with ``allow_smaller_final_batch``.
* ``shuffle=True``: examples are shuffled with ``seed`` in a buffer of
  ``min_after_dequeue + batch_size`` (what a ``RandomShuffleQueue`` holds at least
  before a dequeue), so epochs mix as they do in TF1.

Epochs and file shuffling come from the filename queue (``string_input_producer``
with ``num_epochs``). A damaged record raises ``DataLossError``, which
:class:`~tf1compat.SessionIterator` explains with the file, record and byte offset;
it names the files read for other errors (a parse error, for instance).
:mod:`tf1compat.slim.batched_provider` builds on :func:`build_batches`.
"""

import math
from collections.abc import Callable, Mapping
from typing import Any

from tf1compat._tf import tf, v1
from tf1compat._typing import Dataset, Queue, Tensor
from tf1compat.errors import PipelineConfigError
from tf1compat.pipeline._validate import (
    check_batching,
    check_positive_int,
    check_shuffling,
    require_graph_mode,
)
from tf1compat.pipeline.cache_budget import cache_budget
from tf1compat.pipeline.epoch_cache import plan_epoch_cache
from tf1compat.pipeline.graph_model import op_types
from tf1compat.pipeline.graph_model.index import graph_notes
from tf1compat.pipeline.graph_model.notes import FastPathNote
from tf1compat.pipeline.graph_model.readers import ReaderSpec, spec_of_readers
from tf1compat.pipeline.queues import (
    TFRecordReader,
    check_queue_files,
    queue_epochs,
    queue_files,
)

__all__ = ["build_record_batches", "build_example_batches", "build_batches",
           "parse_examples", "describe_cache"]

# Records read and parsed per tf.data call by default: each call has a fixed cost
# (~0.1-0.2 ms of CPU here, a hundred CIFAR records' parsing), paid 8 times as often
# with a call per batch of 128.
RECORDS_PER_READ = 1024

# rows by name, each tensor a row per record or example
Rows = Mapping[str, Tensor]
# records (a 1-D string tensor) and a function giving their reader keys, to parsed rows
Parse = Callable[[Tensor, Callable[[], Tensor]], Rows]


def describe_cache(batch: dict[str, Tensor] | Tensor) -> str:
    """Whether the fast path giving ``batch`` (its dict, or one of its tensors) keeps
    its parsed rows in memory between epochs: ``cached: 3 files read once into
    memory, about 2 MB of a 4,096 MB budget``, or ``not cached:`` and why."""
    tensor = next(iter(batch.values())) if isinstance(batch, dict) else batch
    note = graph_notes(tensor.graph).fast_paths.get(tensor.op.name)
    if note is None:
        raise PipelineConfigError(
            f"describe_cache: {tensor.name!r} is not the output of a fast path",
            argument="batch", expected="what build_example_batches, build_record_batches "
            "or BatchedDatasetDataProvider.get returns")
    return note.cache


def _file_names(filename_queue: Queue | Tensor) -> Dataset:
    """The names dequeued from ``filename_queue`` (a queue or its handle), until it is
    closed and empty: the dequeue's OutOfRangeError ends a (v1) map dataset."""
    handle = getattr(filename_queue, "queue_ref", filename_queue)

    def dequeue(_: Tensor) -> Tensor:
        dequeue_one = getattr(tf.raw_ops, op_types.DEQUEUE)
        name = dequeue_one(handle=handle, component_types=[tf.string])[0]
        name.set_shape([])
        return name

    return v1.data.Dataset.from_tensors(0).repeat().map(dequeue)


def _file_chunks(reading: ReaderSpec, chunk_size: int) -> Callable[[Tensor], Dataset]:
    """``file_chunks(filename)``: the dataset of chunks ``{"records", "file", "start"}``
    of up to ``chunk_size`` records of one file (``start``: the position of its first
    record, which gives the reader keys), read as ``reading`` (a
    :class:`~tf1compat.pipeline.graph_model.readers.ReaderSpec`) says."""

    def file_chunks(filename: Tensor) -> Dataset:
        def chunk(start: Tensor, records: Tensor) -> tuple[Tensor, dict[str, Tensor]]:
            return reading.advance(start, records), {"records": records, "file": filename,
                                                     "start": start}

        return reading.records(filename).batch(chunk_size).scan(
            tf.constant(0, tf.int64), chunk)

    return file_chunks


def _record_chunks(filename_queue: Queue | Tensor, reading: ReaderSpec, chunk_size: int,
                   parallel_files: int = 1) -> Dataset:
    """Dataset of the chunks of :func:`_file_chunks` of the files of ``filename_queue``
    in its order; ``parallel_files`` files are read at once, interleaved chunk by
    chunk in a fixed order."""
    file_chunks = _file_chunks(reading, chunk_size)
    names = _file_names(filename_queue)
    if parallel_files == 1:
        return names.flat_map(file_chunks)
    return names.interleave(file_chunks, cycle_length=parallel_files,
                            num_parallel_calls=parallel_files, deterministic=True)


def _check_parsed(api: str, parsed: object) -> None:
    """``parsed`` must map names to dense tensors whose per-example shape is known."""
    if not isinstance(parsed, dict) or not parsed:
        raise PipelineConfigError(
            f"{api}: parse_batch must return a non-empty dict of tensors, got {parsed!r}",
            argument="parse_batch", expected="a dict of name -> batched tensor")
    for key, tensor in parsed.items():
        if not isinstance(tensor, tf.Tensor):
            raise PipelineConfigError(
                f"{api}: {key!r} is a {type(tensor).__name__}; batches hold dense "
                "tensors (densify sparse features, e.g. with tf.sparse.to_dense)",
                argument="parse_batch", expected="dense tensors")
        if tensor.shape.rank is None or not tensor.shape[1:].is_fully_defined():
            raise PipelineConfigError(
                f"{api}: {key!r} has shape {tensor.shape}; every example must have a "
                "fully defined shape (reshape it, or give the feature a shape)",
                argument="parse_batch", expected="shape [batch, fully defined ...]")


def _check_options(api: str, batch_size: int, capacity: int, num_threads: int, shuffle: bool,
                   min_after_dequeue: int | None) -> None:
    check_batching(api, batch_size, capacity, num_threads)
    if isinstance(batch_size, tf.Tensor):
        raise PipelineConfigError(
            f"{api}: batch_size must be a Python int, got a tensor",
            argument="batch_size", expected="an integer >= 1")
    if shuffle:
        if min_after_dequeue is None:
            raise PipelineConfigError(
                f"{api}: shuffle=True needs min_after_dequeue (examples left in the "
                f"buffer after each batch), e.g. {capacity // 2}",
                argument="min_after_dequeue", expected="an integer >= 0")
        check_shuffling(api, capacity, min_after_dequeue)


def _records_per_read(api: str, records_per_read: int | None, batch_size: int,
                      reading: ReaderSpec) -> int:
    """``records_per_read``, checked, or by default the multiple of ``batch_size``
    nearest :data:`RECORDS_PER_READ` (one batch of whole files)."""
    if records_per_read is None:
        if reading.op_type == op_types.WHOLE_FILE_READER:
            return batch_size
        return batch_size * max(1, round(RECORDS_PER_READ / batch_size))
    check_positive_int(api, "records_per_read", records_per_read)
    if records_per_read % batch_size:
        raise PipelineConfigError(
            f"{api}: records_per_read={records_per_read} must be a multiple of "
            f"batch_size={batch_size}", argument="records_per_read",
            expected=f"a multiple of {batch_size}")
    return records_per_read


def _started_by_local_init(iterator: Any) -> None:
    """Make ``local_variables_initializer()`` (re)start ``iterator``: a local variable
    whose initial value depends on the iterator's initializer."""
    with tf.control_dependencies([iterator.initializer]):
        started = tf.identity(True)
    v1.Variable(started, trainable=False, collections=[v1.GraphKeys.LOCAL_VARIABLES],
                use_resource=True, name="iterator_started")


def build_batches(api: str, filename_queue: Queue | Tensor, batch_size: int, parse: Parse, *,
                  with_keys: bool = False, reader: Any = None, num_threads: int = 1,
                  capacity: int | None = None, shuffle: bool = False,
                  min_after_dequeue: int | None = None, seed: int | None = None,
                  allow_smaller_final_batch: bool = False, records_per_read: int | None = None,
                  cache: bool | int | str | None = None,
                  name: str | None = None) -> tuple[dict[str, Tensor], Tensor | None]:
    """``(batch, keys)``: the batched dict of tensors and, ``with_keys``, the records'
    reader keys (else None), which are made only when fetched.

    ``parse(records, names)`` maps a 1-D string tensor of records to a dict of dense
    tensors, one row per record; ``names()`` gives the records' reader keys. The
    other arguments are :func:`build_record_batches`'.
    """
    capacity = 4 * batch_size if capacity is None and isinstance(batch_size, int) else capacity
    _check_options(api, batch_size, capacity, num_threads, shuffle, min_after_dequeue)
    budget = cache_budget(cache)
    readers = reader if isinstance(reader, (list, tuple)) else [reader or TFRecordReader()]
    reading = spec_of_readers(api, readers)
    check_queue_files(filename_queue, api)  # the names are files: they are read
    records_per_read = _records_per_read(api, records_per_read, batch_size, reading)
    files = queue_files(filename_queue)
    if with_keys and files is None:
        raise PipelineConfigError(
            f"{api}: record keys need the filename queue of a string_input_producer "
            "of a list of files", argument="filename_queue",
            expected="string_input_producer([...])")

    @tf.autograph.experimental.do_not_convert   # graph code, and our errors unwrapped
    def parse_chunk(chunk: Mapping[str, Tensor]) -> tuple[Mapping[str, Tensor], Any]:
        parsed = parse(chunk["records"], lambda: reading.chunk_keys(chunk))
        _check_parsed(api, parsed)
        return parsed, reading.key_parts(chunk, tf.constant(files)) if with_keys else ()

    epoch_cache, not_cached = plan_epoch_cache(
        files, queue_epochs(filename_queue), budget, reading,
        _file_chunks(reading, records_per_read), parse_chunk)
    shuffled = (min_after_dequeue or 0) + batch_size    # with shuffle (it needs the count)
    with tf.name_scope(name or "record_batches"):
        parsed = None
        if epoch_cache is not None:   # the rows of each file, parsed once (the same rows)
            parsed, not_cached = epoch_cache.chunks(_file_names(filename_queue), len(readers),
                                                    num_threads)
        if parsed is None:
            epoch_cache = None
            chunks = _record_chunks(filename_queue, reading, records_per_read, len(readers))
            if shuffle:
                chunks = chunks.map(reading.per_record).unbatch() \
                    .shuffle(shuffled, seed=seed).batch(records_per_read)
            parsed = chunks.map(parse_chunk, num_parallel_calls=num_threads)
        elif shuffle:
            parsed = parsed.unbatch().shuffle(shuffled, seed=seed).batch(records_per_read)
        batches = parsed.rebatch(batch_size, drop_remainder=not allow_smaller_final_batch) \
            .prefetch(max(2, math.ceil(capacity / batch_size)))
        iterator = v1.data.make_initializable_iterator(batches)
        _started_by_local_init(iterator)
        batch, key_parts = iterator.get_next()
    size = None if allow_smaller_final_batch else batch_size
    for tensor in [*batch.values(), *key_parts]:
        tensor.set_shape(tf.TensorShape([size]).concatenate(tensor.shape[1:]))
    get_next = next(iter(batch.values())).op
    graph_notes(get_next.graph).fast_paths[get_next.name] = FastPathNote(
        files, reading.compression,
        epoch_cache.text() if epoch_cache else f"not cached: {not_cached}")
    if not with_keys:
        return batch, None
    numbers, positions = key_parts
    return batch, reading.keys(tf.gather(tf.constant(files), numbers), positions)


def build_record_batches(filename_queue: Queue | Tensor, batch_size: int,
                         parse_batch: Callable[[Tensor, Tensor], Mapping[str, Tensor]], *,
                         reader: Any = None, num_threads: int = 1, capacity: int | None = None,
                         shuffle: bool = False, min_after_dequeue: int | None = None,
                         seed: int | None = None, allow_smaller_final_batch: bool = False,
                         records_per_read: int | None = None,
                         cache: bool | int | str | None = None,
                         name: str | None = None) -> dict[str, Tensor]:
    """Batches of parsed records from ``filename_queue``, read and parsed many at a time.

    ``parse_batch(keys, values)`` gets up to ``records_per_read`` reader keys and
    records of one file (1-D string tensors; by default the multiple of
    ``batch_size`` nearest 1024 records, one batch for a ``WholeFileReader``: lower
    it for large records) and returns a dict of dense tensors with one row per
    record; the result is a dict of the same names, each ``[batch_size, ...]``.
    ``reader`` is a reader instance (default :class:`~tf1compat.TFRecordReader`;
    ``TFRecordReader``, ``FixedLengthRecordReader`` without ``hop_bytes``,
    ``TextLineReader`` or ``WholeFileReader``) or a list of them, which read that
    many files at once. ``num_threads`` parse in parallel.
    ``capacity`` (examples prefetched, default ``4 * batch_size``), ``shuffle``,
    ``min_after_dequeue``, ``seed`` and ``allow_smaller_final_batch`` mean what they
    mean for ``batch`` / ``shuffle_batch``; see the module docstring for order.
    ``cache``: the budget of the in-memory cache of the parsed rows between epochs
    (:mod:`tf1compat.pipeline.epoch_cache`; as for :func:`~tf1compat.to_tf_data`:
    None for the ``TF1COMPAT_CACHE_BUDGET`` setting or the default, False for none,
    or a size such as ``"500M"``); :func:`describe_cache` says whether it applies.
    """
    batch, _ = build_batches(
        "build_record_batches", filename_queue, batch_size,
        lambda records, names: parse_batch(names(), records),
        reader=reader, num_threads=num_threads, capacity=capacity, shuffle=shuffle,
        min_after_dequeue=min_after_dequeue, seed=seed,
        allow_smaller_final_batch=allow_smaller_final_batch,
        records_per_read=records_per_read, cache=cache, name=name)
    return batch


def parse_examples(features: Mapping[str, Any]) -> Parse:
    """``parse(records, names)`` for :func:`build_batches`: ``tf.io.parse_example`` with
    ``features``. The names are not given to it: a key string per record costs a
    large share of the parse's own time (measured), and
    :class:`~tf1compat.SessionIterator` names the files read when parsing fails."""
    return lambda records, names: tf.io.parse_example(records, features)


def build_example_batches(filename_queue: Queue | Tensor, features: Mapping[str, Any],
                          batch_size: int, *,
                          decode: Callable[[Rows], Rows] | None = None,
                          **options: Any) -> dict[str, Tensor]:
    """Batches of ``tf.train.Example`` records parsed with ``features``, fast.

    The same batches as the classic
    ``batch(parse_single_example(reader.read(filename_queue)[1], features), batch_size)``
    (or ``shuffle_batch`` with ``shuffle=True``), built with
    :func:`build_record_batches`, which takes the other keyword ``options``.
    ``features`` are ``FixedLenFeature`` s (a batch holds dense tensors).
    ``decode`` optionally maps the dict of parsed batched tensors to the dict to
    batch, inside tf.data: write it for a batch, e.g. ``tf.io.decode_raw`` of all
    images at once.
    """
    api = "build_example_batches"
    require_graph_mode(api)
    parse_records = parse_examples(features)

    def parse(records: Tensor, names: Callable[[], Tensor]) -> Mapping[str, Tensor]:
        parsed = parse_records(records, names)
        return parsed if decode is None else decode(parsed)

    batch, _ = build_batches(api, filename_queue, batch_size, parse, **options)
    return batch
