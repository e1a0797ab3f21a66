"""Where a program's batching calls build their pipelines: tf.data or TF1's queues.

:func:`batch_on_tf_data` swaps the batching entries (``tf.train.batch`` & co.) of a
run mode's queue API table (a copy of :data:`~tf1compat.v1.queue_runtime.QUEUE_API`).
Each call first builds the queue pipeline as usual (so every argument is validated as
before), then, as the run mode's settings say when it is made (``tf_data``):

* ``"auto"`` (``tf1compat run``'s default): lowers it inside the program's graph
  when it can (:func:`~tf1compat.migrate.lowering.replace_with_tf_data`), else it
  stays on queues; either way one :class:`PipelineNotice` says so, naming the call's
  line (and why, when it stays). The same run: a pipeline that delivers one order
  every run (one thread, files in order or seeded) delivers it on tf.data, with the
  same values and the same end; one whose order TF1's timing decides (several
  threads or readers, a ``RandomShuffleQueue``) gets one of its orders; a per-example
  tensor read outside the call is served from the pipeline's own queues
  (:mod:`tf1compat.v1.queue_runtime`).
* ``True`` (``--tf-data``): the same, but a pipeline that cannot be lowered stays on
  queues with a :class:`TFDataFallbackWarning`.
* ``False`` (``--queues``): the queue pipeline as it is.

A lowered call returns a one-shot iterator's ``get_next()``; the lowered queues'
runners are set aside, so no runner thread reads for them (and TensorFlow's notice
that ``start_queue_runners`` found none is dropped by :func:`drop_no_runners_notice`,
a filter the run mode puts on TensorFlow's logger). With a tf.data service
(``--data-service``) the lowered pipelines run there
(:mod:`tf1compat.migrate.service`); one the service cannot run (it calls Python)
runs on tf.data in this process, with one warning naming why.
slim's ``prefetch_queue`` over batches straight from tf.data takes them from the
same iterator (the dataset prefetches already), one element per ``dequeue()``;
over anything else it stays a queue.
"""

import functools
import os
import sys
import warnings

from tf1compat._tf import tf
from tf1compat.errors import LoweringError, PipelineConfigError
from tf1compat.migrate.lowering import lower, replace_with_tf_data
from tf1compat.pipeline.cache_budget import size_text
from tf1compat.pipeline.graph_model import op_types
from tf1compat.pipeline.graph_model.index import graph_notes
from tf1compat.v1 import queue_runtime

__all__ = ["batch_on_tf_data", "drop_no_runners_notice", "PipelineNotice",
           "TFDataFallbackWarning"]

_PREFETCH = "contrib.slim.prefetch_queue.prefetch_queue"


class TFDataFallbackWarning(UserWarning):
    """A batching call of ``tf1compat run --tf-data`` stayed on queues (or, with
    ``--data-service``, on tf.data in this process)."""


class PipelineNotice(UserWarning):
    """Where a batching call's pipeline runs (tf.data or TF1's queues), said once per
    call: one line, which ``tf1compat run`` prints on stderr (``--quiet``: not)."""


def _call_site(depth):
    """``file.py:line`` of the frame ``depth`` levels up (the program's batching call)."""
    frame = sys._getframe(depth + 1)
    return f"{os.path.basename(frame.f_code.co_filename)}:{frame.f_lineno}"


def _on_tf_data(name, batching, settings):
    @functools.wraps(batching)
    def batch_on_tf_data(*args, **kwargs):
        fetches = batching(*args, **kwargs)
        now = settings()
        if now.tf_data is False:
            return fetches
        call = f"tf.{name} ({_call_site(1)})"
        try:
            lowering = lower(fetches, cache=now.cache_budget)
        except LoweringError as e:
            reason = str(e).splitlines()[0]   # the op and why; not the plan after it
            if now.tf_data is True:
                warnings.warn(f"tf1compat run --tf-data: {call} stays on queues: {reason}",
                              TFDataFallbackWarning, stacklevel=2)
            else:
                warnings.warn(f"{call} stays on TF1's queues: {reason}", PipelineNotice,
                              stacklevel=2)
            return fetches
        where = "tf.data"
        try:
            moved = replace_with_tf_data(fetches, now.data_service, now.data_service_timeout,
                                         lowering=lowering)
            if now.data_service is not None:
                where = f"the tf.data service at {now.data_service}"
        except PipelineConfigError as e:
            if e.argument != "service":
                raise
            warnings.warn(f"tf1compat run --data-service: {call} runs on tf.data here: {e}",
                          TFDataFallbackWarning, stacklevel=2)
            moved = replace_with_tf_data(fetches, lowering=lowering)
        if where == "tf.data":
            where += _kept(lowering)
        warnings.warn(f"{call} runs on {where}", PipelineNotice, stacklevel=2)
        return moved
    return batch_on_tf_data


def _kept(lowering):
    """What a notice says of the in-memory cache of ``lowering``."""
    if lowering.cached is None:
        return ""
    return (f", its parsed examples kept in memory after their first reading (about "
            f"{size_text(lowering.cached.cache.estimate)})")


class _Prefetched:
    """What ``prefetch_queue`` returns over batches from tf.data (which already
    prefetches): each ``dequeue()`` takes the next element from the same iterator,
    as each dequeue of a queue takes its own batch (slim's model_deploy dequeues
    once per clone)."""

    def __init__(self, tensors):
        self._tensors = tensors

    def dequeue(self, name=None):
        with tf.name_scope(name or "prefetched"):
            taken = {}  # IteratorGetNext op -> this dequeue's outputs of it

            def take(tensor):
                op = tensor.op
                if op not in taken:
                    taken[op] = tf.raw_ops.IteratorGetNext(**op_types.next_element_arguments(op))
                    notes = graph_notes(op.graph)   # it reads what the batching call's does
                    if op.name in notes.fast_paths:
                        notes.fast_paths[taken[op][0].op.name] = notes.fast_paths[op.name]
                value = taken[op][tensor.value_index]
                value.set_shape(tensor.shape)
                return value

            return tf.nest.map_structure(take, self._tensors)


def _prefetch_on_tf_data(prefetch_queue):
    @functools.wraps(prefetch_queue)
    def prefetch_on_tf_data(tensors, *args, **kwargs):
        leaves = tf.nest.flatten(tensors)
        if leaves and all(getattr(t, "op", None) is not None
                          and t.op.type == op_types.ITERATOR_GET_NEXT for t in leaves):
            return _Prefetched(tensors)
        return prefetch_queue(tensors, *args, **kwargs)
    return prefetch_on_tf_data


def drop_no_runners_notice(record):
    """The lowered pipelines' runners are gone: TensorFlow's "start_queue_runners()
    was called when no queue runners were defined" is about that, not the program."""
    return op_types.NO_QUEUE_RUNNERS_NOTICE not in record.getMessage()


def batch_on_tf_data(table, settings):
    """Make the batching entries of the queue API ``table`` build tf.data (in place), as
    the :class:`~tf1compat.v1.settings.RunSettings` that ``settings()`` gives when each
    is called say: on the tf.data service at ``data_service`` when given, each wait for
    it bounded by ``data_service_timeout`` seconds (None: the service module's
    default), cached within ``cache_budget`` bytes."""
    for name in queue_runtime.BATCHING_NAMES:
        table[name] = (_prefetch_on_tf_data(table[name]) if name == _PREFETCH
                       else _on_tf_data(name, table[name], settings))
