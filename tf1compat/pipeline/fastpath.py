"""Batched fast paths for TF1 queue pipelines: read, parse and queue whole batches.

A classic pipeline (``reader.read`` -> ``parse_single_example`` -> ``batch``) pays
one Python ``session.run`` step in a queue-runner thread per example. Here each
step reads ``records_per_read`` records (a multiple of ``batch_size``) with
``reader.read_up_to``, parses them with one vectorized parser call and enqueues
them as whole batches, so a step's cost is shared by many examples and no
example is queued one by one. The outputs are those of the classic pipeline:

* ``shuffle=False``: a FIFO queue of whole batches of exactly ``batch_size``
  examples, in reading order with ``num_threads=1`` (more threads interleave
  reads, as TF1's ``batch`` with several threads does). ``read_up_to`` stops at
  each file's end; the few rows left over are carried to the thread's next step
  (the only copies), and the final partial batch is enqueued when the data ends
  only with ``allow_smaller_final_batch``.
* ``shuffle=True``: examples go through a ``RandomShuffleQueue`` with the same
  ``capacity`` / ``min_after_dequeue`` / ``seed`` meaning as ``shuffle_batch``.

Epochs and file shuffling come from the filename queue (``string_input_producer``
with ``num_epochs``), reader errors surface through :class:`~tf1compat.SessionIterator`
naming the file, and the queue runners are ordinary ``QueueRunner`` s.
:mod:`tf1compat.slim.batched_provider` builds on :func:`build_record_batches`.
"""

import math

from tf1compat._tf import tf, v1
from tf1compat.errors import PipelineConfigError
from tf1compat.pipeline._validate import (
    check_batching,
    check_positive_int,
    check_shuffling,
    require_graph_mode,
)
from tf1compat.pipeline.queues import TFRecordReader

__all__ = ["build_record_batches", "build_example_batches"]


def _check_chunk(api, chunk):
    """``chunk`` must map names to dense tensors whose per-example shape is known."""
    if not isinstance(chunk, dict) or not chunk:
        raise PipelineConfigError(
            f"{api}: parse_batch must return a non-empty dict of tensors, got {chunk!r}",
            argument="parse_batch", expected="a dict of name -> batched tensor")
    for key, tensor in chunk.items():
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


def _read_chunk(api, reader, filename_queue, num_records, parse_batch):
    """Read up to ``num_records`` records and parse them: one chunk (dict of tensors)."""
    keys, values = reader.read_up_to(filename_queue, num_records)
    chunk = parse_batch(keys, values)
    _check_chunk(api, chunk)
    return chunk


def _queue_of(chunk, capacity, queue_class=tf.queue.FIFOQueue, **options):
    names = sorted(chunk)
    return queue_class(capacity=capacity, dtypes=[chunk[k].dtype for k in names],
                       names=names, **options)


def _with_shapes(batch, chunk, batch_size):
    """Give dequeued tensors back their static per-example shapes."""
    for key, tensor in batch.items():
        tensor.set_shape(tf.TensorShape([batch_size]).concatenate(chunk[key].shape[1:]))
    return batch


def _local_variable(initial_value, shape, name):
    return v1.Variable(initial_value, shape=shape, trainable=False, validate_shape=False,
                       use_resource=True, collections=[v1.GraphKeys.LOCAL_VARIABLES],
                       name=name)


def _count(tensors):
    """Number of rows of a dict of tensors, as int64."""
    return tf.shape(next(iter(tensors.values())), out_type=tf.int64)[0]


def _gate(tensors, pred):
    """``(when_false, when_true)`` copies of a dict of tensors: ops fed by the other one
    do not run. Dataflow ``Switch`` rather than ``tf.cond``, whose ``If`` op costs a
    function call (~130 us here) on every step."""
    pairs = {key: tf.raw_ops.Switch(data=value, pred=pred) for key, value in tensors.items()}
    return ({key: pair[0] for key, pair in pairs.items()},
            {key: pair[1] for key, pair in pairs.items()})


def _enqueue_in_order(queue, chunk, parts):
    """Enqueue ``chunk`` as ``parts`` equal batches, in order; splitting along the first
    dimension shares the chunk's buffer, so nothing is copied."""
    pieces = {key: tf.split(value, parts) for key, value in chunk.items()}
    enqueue = tf.no_op()
    for index in range(parts):
        with tf.control_dependencies([enqueue]):
            enqueue = queue.enqueue({key: pieces[key][index] for key in chunk})
    return enqueue


def _split_batches(rows, batch_size):
    """``rows`` (dict of [n, ...]) as ``[n // batch_size, batch_size, ...]`` full batches
    and the remaining rows."""
    cut = _count(rows) // batch_size * batch_size
    full = {key: tf.reshape(value[:cut], tf.concat([[-1, batch_size], tf.shape(value)[1:]], 0))
            for key, value in rows.items()}
    return full, {key: value[cut:] for key, value in rows.items()}


def _join_and_carry(carried, chunk, carry, carried_count, batch_queue, batch_size):
    """Op: enqueue the full batches of carried rows + ``chunk`` (copies) and carry the rest."""
    rows = {key: tf.concat([carried[key], chunk[key]], 0) for key in chunk}
    full, rest = _split_batches(rows, batch_size)
    return tf.group(batch_queue.enqueue_many(full), carried_count.assign(_count(rest)),
                    *[carry[key].assign(value, read_value=False) for key, value in rest.items()])


def _flush_and_close(carries, batch_queue, batch_size, allow_smaller_final_batch):
    """Close op: batch what the threads still carry (the final partial batch only when
    allowed), then close ``batch_queue``."""
    rows = {key: tf.concat([carry[key].read_value() for carry in carries], 0)
            for key in carries[0]}
    full, rest = _split_batches(rows, batch_size)
    flushes = [batch_queue.enqueue_many(full)]
    if allow_smaller_final_batch:
        # [1, r, ...] for r > 0 remaining rows, [0, 0, ...] (nothing) for r = 0.
        count = _count(rest)
        partial = {key: tf.reshape(value, tf.concat([tf.stack([tf.minimum(count, 1), count]),
                                                     tf.shape(value, out_type=tf.int64)[1:]], 0))
                   for key, value in rest.items()}
        flushes.append(batch_queue.enqueue_many(partial))
    with tf.control_dependencies(flushes):
        return batch_queue.close()


class _OrderedThread:
    """One reading thread of the ordered path and the rows it carries between steps.

    A step reads ``records_per_read - carried`` records, so after a file's short last
    read the next step realigns. An aligned step (nothing carried, a full read) only
    splits and enqueues; the rare other steps join carried rows and the chunk.
    """

    def __init__(self, api, reader, filename_queue, parse_batch, records_per_read, index):
        self.carried_count = _local_variable(tf.constant(0, tf.int64), [], f"carried_{index}")
        self.records_per_read = records_per_read
        self.index = index
        self._count_now = self.carried_count.read_value()
        self.chunk = _read_chunk(api, reader, filename_queue,
                                 records_per_read - self._count_now, parse_batch)
        self.carry = {
            key: _local_variable(tf.zeros([0] + tensor.shape[1:].as_list(), tensor.dtype),
                                 tf.TensorShape([None]).concatenate(tensor.shape[1:]),
                                 f"carry_{index}_{position}")
            for position, (key, tensor) in enumerate(sorted(self.chunk.items()))}

    def step(self, batch_queue, batch_size):
        aligned = tf.logical_and(tf.equal(self._count_now, 0),
                                 tf.equal(_count(self.chunk), self.records_per_read))
        chunk_to_join, whole_chunk = _gate(self.chunk, aligned)
        carried, _ = _gate({key: v.read_value() for key, v in self.carry.items()}, aligned)
        return tf.group(
            _enqueue_in_order(batch_queue, whole_chunk, self.records_per_read // batch_size),
            _join_and_carry(carried, chunk_to_join, self.carry, self.carried_count,
                            batch_queue, batch_size))


def _ordered_batches(api, readers, filename_queue, parse_batch, batch_size, records_per_read,
                     num_threads, capacity, allow_smaller_final_batch):
    """Reading threads -> FIFO queue of whole batches; see :class:`_OrderedThread`."""
    threads = [_OrderedThread(api, readers[index % len(readers)], filename_queue, parse_batch,
                              records_per_read, index) for index in range(num_threads)]
    first = threads[0].chunk
    shapes = None if allow_smaller_final_batch else [
        tf.TensorShape([batch_size]).concatenate(first[key].shape[1:]) for key in sorted(first)]
    batch_queue = _queue_of(first, max(2, math.ceil(capacity / batch_size)),
                            shapes=shapes, name="batches")
    close = _flush_and_close([thread.carry for thread in threads], batch_queue, batch_size,
                             allow_smaller_final_batch)
    v1.train.add_queue_runner(v1.train.QueueRunner(
        batch_queue, [thread.step(batch_queue, batch_size) for thread in threads],
        close_op=close))
    return batch_queue.dequeue(), first


def _shuffled_batches(api, readers, filename_queue, parse_batch, batch_size,
                      records_per_read, num_threads, capacity, min_after_dequeue, seed,
                      allow_smaller_final_batch):
    """Chunks -> RandomShuffleQueue of examples -> dequeue a batch, as ``shuffle_batch``."""
    chunks = [_read_chunk(api, readers[index % len(readers)], filename_queue,
                          records_per_read, parse_batch) for index in range(num_threads)]
    shapes = [chunks[0][key].shape[1:] for key in sorted(chunks[0])]
    queue = _queue_of(chunks[0], capacity, tf.queue.RandomShuffleQueue,
                      min_after_dequeue=min_after_dequeue, seed=seed, shapes=shapes,
                      name="shuffled_examples")
    v1.train.add_queue_runner(v1.train.QueueRunner(
        queue, [queue.enqueue_many(chunk) for chunk in chunks]))
    if allow_smaller_final_batch:
        return queue.dequeue_up_to(batch_size), chunks[0]
    return queue.dequeue_many(batch_size), chunks[0]


def build_record_batches(filename_queue, batch_size, parse_batch, *, reader=None,
                         num_threads=1, capacity=None, shuffle=False,
                         min_after_dequeue=None, seed=None,
                         allow_smaller_final_batch=False, records_per_read=None, name=None):
    """Batches of parsed records from ``filename_queue``, read and parsed many at a time.

    ``parse_batch(keys, values)`` gets up to ``records_per_read`` (default
    ``batch_size``) reader keys and records (1-D string tensors) and returns a dict
    of dense tensors with one row per record; the result is a dict of the same
    names, each ``[batch_size, ...]``.
    ``reader`` is a reader instance (default :class:`~tf1compat.TFRecordReader`)
    or a list of them, shared round-robin by ``num_threads`` reading threads.
    ``capacity`` (examples, default ``4 * batch_size``), ``shuffle``,
    ``min_after_dequeue``, ``seed`` and ``allow_smaller_final_batch`` mean what they
    mean for ``batch`` / ``shuffle_batch``; see the module docstring for order.
    """
    api = "build_record_batches"
    capacity = 4 * batch_size if capacity is None and isinstance(batch_size, int) else capacity
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
    records_per_read = batch_size if records_per_read is None else records_per_read
    check_positive_int(api, "records_per_read", records_per_read)
    if records_per_read % batch_size:
        raise PipelineConfigError(
            f"{api}: records_per_read={records_per_read} must be a multiple of "
            f"batch_size={batch_size}", argument="records_per_read",
            expected=f"a multiple of {batch_size}")
    readers = reader if isinstance(reader, (list, tuple)) else [reader or TFRecordReader()]
    reading = (api, readers, filename_queue, parse_batch, batch_size,
               records_per_read, num_threads, capacity)
    with tf.name_scope(name or "record_batches"):
        if shuffle:
            batch, chunk = _shuffled_batches(*reading, min_after_dequeue, seed,
                                             allow_smaller_final_batch)
        else:
            batch, chunk = _ordered_batches(*reading, allow_smaller_final_batch)
    return _with_shapes(batch, chunk, None if allow_smaller_final_batch else batch_size)


def build_example_batches(filename_queue, features, batch_size, *, decode=None, **options):
    """Batches of ``tf.train.Example`` records parsed with ``features``, fast.

    The same batches as the classic
    ``batch(parse_single_example(reader.read(filename_queue)[1], features), batch_size)``
    (or ``shuffle_batch`` with ``shuffle=True``), built with
    :func:`build_record_batches`, which takes the other keyword ``options``.
    ``features`` are ``FixedLenFeature`` s (a batch holds dense tensors).
    ``decode`` optionally maps the dict of parsed batched tensors to the dict to
    batch, inside the reading threads: write it for a batch, e.g.
    ``tf.io.decode_raw`` of all images at once. Parse errors name the record's
    file and offset.
    """
    require_graph_mode("build_example_batches")

    def parse_batch(keys, values):
        parsed = tf.io.parse_example(values, features, example_names=keys)
        return decode(parsed) if decode is not None else parsed

    return build_record_batches(filename_queue, batch_size, parse_batch, **options)
