"""The queues of one graph, their queue runners and enqueue ops, the walk upstream
through them, and what tf1compat noted about the graph.

:func:`graph_index` builds a :class:`GraphIndex` from the graph's queue runners as
they are now (reading them is cheap; an index kept between calls would keep its graph
alive). :func:`queue_runners` is the one place the runners' collection is read,
:func:`drop_queue_runners` the one place it is changed.
"""

from collections.abc import Iterable
from typing import Any, cast

from tf1compat._typing import Graph, Operation, Tensor
from tf1compat.pipeline.graph_model import op_types
from tf1compat.pipeline.graph_model.notes import graph_notes
from tf1compat.pipeline.graph_model.structure import walk

__all__ = ["GraphIndex", "graph_index", "graph_notes", "files_read", "queue_runners",
           "drop_queue_runners", "read_ops"]


def files_read(read: Operation) -> tuple[str | bytes, ...] | None:
    """The files the reader of read op ``read`` reads, when its queue's are known."""
    handle = cast(Tensor, op_types.queue_handle(read))    # a read op has one
    note = graph_notes(read.graph).producers.get(handle.op.name)
    return None if note is None else note.names


def queue_runners(graph: Graph) -> list[Any]:
    """The queue runners of ``graph`` (its ``QUEUE_RUNNERS`` collection), in order."""
    runners: list[Any] = graph.get_collection(op_types.QUEUE_RUNNERS)
    return runners


def drop_queue_runners(graph: Graph, queues: Iterable[str]) -> None:
    """Take the runners of the queues named ``queues`` out of ``graph``, which then
    notes those queues as lowered (``GraphNotes.queues_lowered``)."""
    runners = graph.get_collection_ref(op_types.QUEUE_RUNNERS)
    runners[:] = [r for r in runners if op_types.runner_queue_name(r) not in queues]
    graph_notes(graph).queues_lowered.update(queues)


def read_ops(graph: Graph) -> list[Operation]:
    """The read ops (``op_types.READS``) of ``graph``."""
    return [op for op in graph.get_operations() if op.type in op_types.READS]


class GraphIndex:
    """The queue runners of a graph by queue, what follows from them, and the graph's
    notes (:class:`~tf1compat.pipeline.graph_model.notes.GraphNotes`)."""

    def __init__(self, graph: Graph) -> None:
        self.notes = graph_notes(graph)
        self.runners: dict[str, list[Any]] = {}  # queue op name -> its QueueRunners
        for runner in queue_runners(graph):
            self.runners.setdefault(op_types.runner_queue_name(runner), []).append(runner)

    def enqueue_ops(self, queue_name: str | None = None) -> list[Operation]:
        """The enqueue ops the queue runners of queue ``queue_name`` (of all queues) run."""
        names = self.runners if queue_name is None else [queue_name]
        return [op for name in names for runner in self.runners.get(name, ())
                for op in runner.enqueue_ops]

    def upstream(self, tensors_or_ops: Iterable[Tensor | Operation],
                 fed: Iterable[Tensor] = ()) -> tuple[set[Operation], frozenset[str]]:
        """``(ops, queue names)``: the ops ``tensors_or_ops`` wait for, directly or through
        the enqueue ops of queue runners, and the queues on the way; tensors in ``fed``
        cut the path."""
        fed, queues = set(fed), set()

        def expand(op: Operation) -> list[Operation]:
            following = [t.op for t in op.inputs if t not in fed] + list(op.control_inputs)
            if op.type in op_types.DEQUEUES or op.type in op_types.READS:
                queue = cast(Tensor, op_types.queue_handle(op)).op.name
                queues.add(queue)
                following += self.enqueue_ops(queue)
            return following
        ops = walk((getattr(t, "op", t) for t in tensors_or_ops), expand)
        return set(ops), frozenset(queues)


def graph_index(graph: Graph) -> GraphIndex:
    """The :class:`GraphIndex` of ``graph`` as it is now."""
    return GraphIndex(graph)
