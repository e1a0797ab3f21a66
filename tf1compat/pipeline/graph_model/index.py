"""The queues of one graph, their queue runners and enqueue ops, and the walks over them.

:func:`graph_index` builds a :class:`GraphIndex` once per graph and builds it again
only when ops or queue runners were added or removed since.
"""

import weakref

from tf1compat.pipeline.graph_model import op_types
from tf1compat.pipeline.queues import queue_files

__all__ = ["GraphIndex", "graph_index", "ancestors", "files_read"]

_INDEXES = weakref.WeakKeyDictionary()  # graph -> (version, GraphIndex)


def ancestors(tensors_or_ops, stop=lambda op: False):
    """Ops reachable backwards from ``tensors_or_ops`` through data and control inputs;
    ``stop(op)`` True ends a path (the op itself is included)."""
    pending = [getattr(t, "op", t) for t in tensors_or_ops]
    seen = set()
    while pending:
        op = pending.pop()
        if op in seen:
            continue
        seen.add(op)
        if stop(op):
            continue
        pending.extend(t.op for t in op.inputs)
        pending.extend(op.control_inputs)
    return seen


def files_read(read):
    """The files the reader of read op ``read`` reads, when its queue's are known."""
    return queue_files(op_types.queue_handle(read))


class GraphIndex:
    """The queue runners of a graph by queue, and what follows from them."""

    def __init__(self, graph):
        self.runners = {}          # queue op name -> its QueueRunners
        for runner in graph.get_collection(op_types.QUEUE_RUNNERS):
            self.runners.setdefault(op_types.runner_queue_name(runner), []).append(runner)

    def enqueue_ops(self, queue_name=None):
        """The enqueue ops the queue runners of queue ``queue_name`` (of all queues) run."""
        names = self.runners if queue_name is None else [queue_name]
        return [op for name in names for runner in self.runners.get(name, ())
                for op in runner.enqueue_ops]

    def upstream(self, tensors_or_ops, fed=()):
        """``(ops, queue names)``: the ops ``tensors_or_ops`` wait for, directly or through
        the enqueue ops of queue runners, and the queues on the way; tensors in ``fed``
        cut the path."""
        fed = set(fed)
        pending = [getattr(t, "op", t) for t in tensors_or_ops]
        seen, queues = set(), set()
        while pending:
            op = pending.pop()
            if op in seen:
                continue
            seen.add(op)
            if op.type in op_types.DEQUEUES or op.type in op_types.READS:
                queue = op_types.queue_handle(op).op.name
                queues.add(queue)
                pending.extend(self.enqueue_ops(queue))
            pending.extend(t.op for t in op.inputs if t not in fed)
            pending.extend(op.control_inputs)
        return seen, frozenset(queues)


def graph_index(graph):
    """The :class:`GraphIndex` of ``graph``, cached while its ops and runners stay."""
    version = (graph.version,
               tuple(map(id, graph.get_collection(op_types.QUEUE_RUNNERS))))
    cached = _INDEXES.get(graph)
    if cached is None or cached[0] != version:
        cached = _INDEXES[graph] = (version, GraphIndex(graph))
    return cached[1]
