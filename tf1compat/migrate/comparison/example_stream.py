"""Both sides of a comparison as streams of single examples.

An example is a flat dict ``item -> ndarray``: dict fetches keep their keys,
list/tuple positions become ``"0"``, ``"1"``, ..., nesting joins with ``/`` and a
single tensor is the item ``"value"``. Batches are split along their leading
dimension; legacy graph fetches run in a :class:`~tf1compat.SessionIterator`;
a ``tf.data.Dataset`` is iterated eagerly. Each example reduces to a 64-bit
content fingerprint for multiset comparison. TensorFlow is touched only when
the caller already imported it.
"""

import collections.abc
import concurrent.futures
import contextlib
import hashlib
import itertools
import sys

import numpy as np

from tf1compat.pipeline.graph_model import op_types
from tf1compat.pipeline.graph_model.index import graph_index
from tf1compat.pipeline.graph_model.structure import fixpoint, walk

__all__ = ["dtype_name", "endless_source", "fingerprint", "infer_legacy_batched",
           "item_digest", "iter_examples", "opened", "why_endless"]



def _flatten(structure, path=()):
    """Yield ``(item name, leaf)`` for a nested dict / list / tuple; dict keys sorted."""
    if isinstance(structure, dict):
        for key in sorted(structure, key=str):
            yield from _flatten(structure[key], path + (str(key),))
    elif isinstance(structure, (list, tuple)):
        for position, value in enumerate(structure):
            yield from _flatten(value, path + (str(position),))
    else:
        yield "/".join(path) or "value", structure


def _as_array(leaf):
    """``leaf`` as an ndarray; strings become an object array, as TF returns them."""
    value = np.asarray(leaf)
    return value.astype(object) if value.dtype.kind in "SU" else value


def dtype_name(value):
    return "string" if value.dtype.kind == "O" else value.dtype.name


def _to_example(structure):
    return {name: _as_array(leaf) for name, leaf in _flatten(structure)}


def _iter_unbatched(structures, side):
    """Split each structure along its leading (batch) dimension into examples."""
    for batch_index, structure in enumerate(structures):
        batch = _to_example(structure)
        sizes = {value.shape[0] if value.ndim else None for value in batch.values()}
        if len(sizes) != 1 or None in sizes:
            shapes = {name: value.shape for name, value in batch.items()}
            raise ValueError(
                f"{side} batch {batch_index}: cannot unbatch, the items do not share a "
                f"leading batch dimension (shapes {shapes}); pass {side}_batched=False "
                f"if the {side} side yields single examples")
        for row in range(sizes.pop()):
            yield {name: _as_array(value[row]) for name, value in batch.items()}


def _hash_content(digest, value):
    """Hash ``value``'s elements: a ``str`` and the ``bytes`` of its UTF-8 differ, as
    the pairwise comparison says (``b'abc' != 'abc'``), so the multiset agrees."""
    if value.dtype.kind != "O":
        digest.update(np.ascontiguousarray(value).data)  # no copy of a contiguous array
        return
    for element in value.ravel():
        text = isinstance(element, str)
        data = element.encode("utf-8", "surrogatepass") if text else bytes(element)
        digest.update(b"s" if text else b"b")
        digest.update(len(data).to_bytes(8, "little"))
        digest.update(data)


def item_digest(name, value):
    """8-byte hash of one item: its name, dtype, shape and content."""
    digest = hashlib.blake2b(digest_size=8)
    digest.update(repr((name, dtype_name(value), value.shape)).encode())
    _hash_content(digest, value)
    return digest.digest()


def fingerprint(example):
    """Signed 64-bit content fingerprint of a whole example."""
    digest = hashlib.blake2b(digest_size=8)
    for name, value in example.items():
        digest.update(item_digest(name, value))
    return int.from_bytes(digest.digest(), "little", signed=True)



def _tf_if_loaded():
    """TensorFlow if something already imported it (then inputs may be TF objects)."""
    if "tensorflow" not in sys.modules:
        return None
    from tf1compat._tf import tf
    return tf


def _is_graph_fetches(source, tf):
    leaves = [leaf for _, leaf in _flatten(source)]
    return bool(leaves) and all(isinstance(leaf, tf.Tensor) and not hasattr(leaf, "numpy")
                                for leaf in leaves)


def _is_batch_output(tensor):
    """Whether a graph tensor comes out of a batching dequeue (tf.train.batch & co.),
    also through identities and single-element queues such as ``prefetch_queue``."""
    op = tensor.op
    while op.type == op_types.IDENTITY:
        tensor = op_types.value_input(op)
        op = tensor.op
    if op.type in op_types.DEQUEUES_BATCH:
        return True
    if op.type in op_types.DEQUEUES_ONE:
        enqueues = [c for c in op_types.queue_handle(op).consumers()
                    if c.type in op_types.ENQUEUES_ONE]
        return bool(enqueues) and _is_batch_output(
            op_types.enqueued(enqueues[0])[tensor.value_index])
    return False


def _queue_consumed(op):
    """The queue op that ``op`` takes elements from (a dequeue or a reader), or None."""
    if op.type not in op_types.DEQUEUES and op.type not in op_types.READS:
        return None
    queue = op_types.queue_handle(op).op
    return queue if queue.type in op_types.QUEUES else None


def _inputs(op):
    """The ops ``op`` takes data or control from, queue handles aside."""
    return [t.op for t in op.inputs if t.op.type not in op_types.QUEUES] + \
        list(op.control_inputs)


def _upstream(op, index):
    """The ops whose end can end ``op``: its inputs and, for a dequeue or a read, the
    enqueue ops feeding that queue."""
    queue = _queue_consumed(op)
    return _inputs(op) + (index.enqueue_ops(queue.name) if queue is not None else [])


def _can_end(op, ends, index):
    """Whether ``op`` can stop delivering, given the ops known to end so far (``ends``)."""
    if op.type in op_types.ENDING:
        return True
    queue = _queue_consumed(op)
    if queue is not None:
        enqueues = index.enqueue_ops(queue.name)
        # Without a runner the caller feeds (and closes) the queue, which may end it;
        # otherwise it closes once every enqueue op of its runners has ended.
        if not enqueues or all(e in ends for e in enqueues):
            return True
    return any(i in ends for i in _inputs(op))


def endless_source(fetches, graph):
    """The name of a queue that keeps graph ``fetches`` coming forever, or None when
    they can end: some input is bounded (a producer's ``num_epochs``, a queue fed
    by the caller, a py_func or a tf.data iterator).

    A queue fed by queue runners closes once all of their enqueue ops end; an op
    ends when any of its inputs can. The fixpoint runs over the ops upstream of the
    fetches; of the endless queues the one farthest upstream (the producer) is named.
    """
    index = graph_index(graph)
    fetched = [t.op for _, t in _flatten(fetches)]
    ops = walk(fetched, lambda op: _upstream(op, index))   # breadth-first from the fetches
    ends = set()

    def end(op):
        if op in ends or not _can_end(op, ends, index):
            return False
        ends.add(op)
        return True
    fixpoint(ops, end)
    if any(op in ends for op in fetched):
        return None
    endless = [queue.name for op in ops
               if op not in ends and (queue := _queue_consumed(op)) is not None]
    return endless[-1] if endless else None


def infer_legacy_batched(fetches):
    """Whether graph ``fetches`` come out of a batching queue (all or none of them)."""
    batched = {_is_batch_output(tensor) for _, tensor in _flatten(fetches)}
    if len(batched) > 1:
        raise ValueError(
            "compare: some legacy fetches come out of a batching queue and some do "
            "not; pass legacy_batched=True or False explicitly")
    return batched.pop()


@contextlib.contextmanager
def _eager_caller(tf):
    """Yield ``call(function, *args)``, which runs ``function`` in eager mode, also while
    a legacy graph is the default: the graph stack is per thread, so a helper thread
    runs it then."""
    if tf.executing_eagerly():
        yield lambda function, *args: function(*args)
        return
    with concurrent.futures.ThreadPoolExecutor(
            1, thread_name_prefix="tf1compat-compare") as helper:
        yield lambda function, *args: helper.submit(function, *args).result()


def _iter_dataset(dataset, tf):
    """Iterate a ``tf.data.Dataset`` eagerly (see _eager_caller)."""
    with _eager_caller(tf) as call:
        try:
            iterator = call(dataset.as_numpy_iterator)
        except (RuntimeError, TypeError, ValueError) as e:
            advice = ("build it in eager mode, outside `with legacy_graph():`"
                      if call(tf.executing_eagerly) else
                      "compare iterates tf.data eagerly, and eager execution is off in this "
                      "process (disable_eager_execution(), disable_v2_behavior() or "
                      "tf1compat run); compare in a process that keeps it on")
            raise ValueError(
                "compare: cannot iterate the reference tf.data.Dataset "
                f"({str(e).splitlines()[0]}); {advice}") from e
        end = object()
        while (value := call(next, iterator, end)) is not end:
            yield value


def why_endless(source, side):
    """Why ``source`` (one side of a comparison) can never end, or None: a
    ``tf.data.Dataset`` of infinite cardinality, or graph fetches (also of a
    ``SessionIterator``) fed by a producer without ``num_epochs``."""
    tf = _tf_if_loaded()
    if tf is None:
        return None
    if isinstance(source, tf.data.Dataset):
        try:
            with _eager_caller(tf) as call:
                cardinality = call(lambda: int(source.cardinality()))
        except (RuntimeError, TypeError, ValueError):  # built in a graph: iterating says so
            return None
        if cardinality == tf.data.INFINITE_CARDINALITY:
            return "its tf.data.Dataset is infinite (a repeat() without a count?)"
        return None
    from tf1compat.pipeline.session import SessionIterator
    if isinstance(source, SessionIterator):
        source, graph = source.fetches, source.graph
    elif side == "legacy" and _is_graph_fetches(source, tf):
        graph = next(_flatten(source))[1].graph
    else:
        return None
    queue = endless_source(source, graph)
    if queue is None:
        return None
    return (f"queue {queue!r} is refilled forever by its queue runner (a producer "
            "built with num_epochs=None, the TF1 default)")


@contextlib.contextmanager
def opened(source, side, batched):
    """Yield ``(structures, batched)`` for one side; a pipeline compare starts is
    stopped and joined on exit."""
    tf = _tf_if_loaded()
    if tf is not None and isinstance(source, tf.data.Dataset):
        yield _iter_dataset(source, tf), bool(batched)
        return
    if tf is not None and side == "legacy":
        from tf1compat.pipeline.session import SessionIterator
        if _is_graph_fetches(source, tf):
            if batched is None:
                batched = infer_legacy_batched(source)
            with SessionIterator(source) as iterator:
                yield iterator, batched
            return
        if isinstance(source, SessionIterator) and batched is None:
            batched = infer_legacy_batched(source.fetches)
    _check_iterable(source, side)
    yield source, bool(batched)


def _check_iterable(source, side):
    """TypeError for a side that is not an iterable of examples or batches."""
    if isinstance(source, dict):
        problem = ("a dict, whose iteration gives its keys; pass an iterable of examples "
                   "(e.g. a list of dicts)" + (", or graph tensors built in legacy_graph()"
                                              if side == "legacy" else ""))
    elif isinstance(source, (str, bytes)) or not isinstance(source, collections.abc.Iterable):
        problem = (f"{type(source).__name__} {source!r:.60}; expected an iterable of examples "
                   "or batches" + (", graph fetches or a SessionIterator" if side == "legacy"
                                   else " or a tf.data.Dataset"))
    else:
        return
    raise TypeError(f"compare: the {side} side is {problem}")


def _checked(examples, side):
    """``examples``, each checked to hold only what compare can compare (numbers,
    arrays, bytes, str): a None item is named with its side, example and item."""
    for index, example in enumerate(examples):
        for name, value in example.items():
            if value.dtype.kind != "O":
                continue
            for position, element in enumerate(value.flat):
                if not isinstance(element, (bytes, str)):
                    where = f" (element {position})" if value.ndim else ""
                    raise TypeError(
                        f"compare: {side} example #{index}, item {name!r}: got "
                        f"{'None' if element is None else type(element).__name__}{where}; "
                        "expected numbers, numpy arrays, bytes or str")
        yield example


def iter_examples(structures, side, batched, max_examples):
    examples = (_iter_unbatched(structures, side) if batched
                else (_to_example(s) for s in structures))
    return _checked(itertools.islice(examples, max_examples), side)
