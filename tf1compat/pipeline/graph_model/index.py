"""The queues of one graph, their queue runners and enqueue ops, the walk upstream
through them, and what tf1compat noted about the graph.

:func:`graph_index` builds a :class:`GraphIndex` from the graph's queue runners as
they are now (reading them is cheap; an index kept between calls would keep its graph
alive). :func:`queue_runners` is the one place the runners' collection is read,
:func:`set_aside_queue_runners` the one place it is changed: the runners of queues
moved to tf.data go to a collection of their own, which nothing starts from
(``start_queue_runners``, ``Supervisor`` and ``MonitoredSession`` read
``QUEUE_RUNNERS``); the walk upstream goes through them, and run mode starts them in
a session when a run reads those queues after all.
"""

from collections.abc import Iterable
from typing import Any, cast

from tf1compat._typing import Graph, Operation, Tensor
from tf1compat.pipeline.graph_model import op_types
from tf1compat.pipeline.graph_model.notes import graph_notes
from tf1compat.pipeline.graph_model.structure import walk

__all__ = ["GraphIndex", "graph_index", "graph_notes", "files_read", "queue_runners",
           "set_aside_queue_runners", "set_aside_runners", "read_ops"]

# A graph collection (the graph owns its runners; exported in a MetaGraph as the names
# of their queues): the runners of the queues moved to tf.data.
_SET_ASIDE = "tf1compat_set_aside_queue_runners"


def files_read(read: Operation) -> tuple[str | bytes, ...] | None:
    """The files the reader of read op ``read`` reads, when its queue's are known."""
    handle = cast(Tensor, op_types.queue_handle(read))    # a read op has one
    note = graph_notes(read.graph).producers.get(handle.op.name)
    return None if note is None else note.names


def queue_runners(graph: Graph) -> list[Any]:
    """The queue runners of ``graph`` (its ``QUEUE_RUNNERS`` collection), in order."""
    runners: list[Any] = graph.get_collection(op_types.QUEUE_RUNNERS)
    return runners


def set_aside_queue_runners(graph: Graph, queues: Iterable[str]) -> None:
    """Move the runners of the queues named ``queues`` out of ``graph``'s
    ``QUEUE_RUNNERS`` into its runners set aside (:func:`set_aside_runners`); the graph
    then notes those queues as lowered (``GraphNotes.queues_lowered``)."""
    runners = graph.get_collection_ref(op_types.QUEUE_RUNNERS)
    moved = [r for r in runners if op_types.runner_queue_name(r) in queues]
    runners[:] = [r for r in runners if op_types.runner_queue_name(r) not in queues]
    graph.get_collection_ref(_SET_ASIDE).extend(moved)
    graph_notes(graph).queues_lowered.update(queues)


def set_aside_runners(graph: Graph) -> list[Any]:
    """The queue runners :func:`set_aside_queue_runners` took out of ``graph``, in order
    (a MetaGraph imported again holds only their queues' names there: skipped)."""
    return [r for r in graph.get_collection(_SET_ASIDE) if hasattr(r, "enqueue_ops")]


def read_ops(graph: Graph) -> list[Operation]:
    """The read ops (``op_types.READS``) of ``graph``."""
    return [op for op in graph.get_operations() if op.type in op_types.READS]


class GraphIndex:
    """The queue runners of a graph by queue, what follows from them, and the graph's
    notes (:class:`~tf1compat.pipeline.graph_model.notes.GraphNotes`)."""

    def __init__(self, graph: Graph) -> None:
        self.notes = graph_notes(graph)
        # queue op name -> its QueueRunners; those of the queues moved to tf.data
        self.runners = _by_queue(queue_runners(graph))
        self.set_aside = _by_queue(set_aside_runners(graph))

    def enqueue_ops(self, queue_name: str | None = None) -> list[Operation]:
        """The enqueue ops the queue runners of queue ``queue_name`` (of all queues) run,
        set aside or not."""
        found: list[Operation] = []
        for runners in (self.runners, self.set_aside):
            names = runners if queue_name is None else [queue_name]
            found += [op for name in names for runner in runners.get(name, ())
                      for op in runner.enqueue_ops]
        return found

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


def _by_queue(runners: Iterable[Any]) -> dict[str, list[Any]]:
    by_queue: dict[str, list[Any]] = {}
    for runner in runners:
        by_queue.setdefault(op_types.runner_queue_name(runner), []).append(runner)
    return by_queue


def graph_index(graph: Graph) -> GraphIndex:
    """The :class:`GraphIndex` of ``graph`` as it is now."""
    return GraphIndex(graph)
