"""What tf1compat did to a graph: one :class:`GraphNotes` record per graph.

The queue API notes the names each ``string_input_producer`` queued, the fast paths
the files their ``get_next`` reads and whether they cache, the lowering the queues
whose runners it took and the dequeues its iterators replaced. Every wing writes and
reads them through :func:`graph_notes` (or ``GraphIndex.notes``). A record lives as
long as its graph and holds names, never ops: it keeps no graph alive.
"""

import dataclasses
import weakref

from tf1compat._typing import Graph

__all__ = ["FastPathNote", "GraphNotes", "ProducerNote", "UncheckedName", "graph_notes"]

_NOTES: "weakref.WeakKeyDictionary[Graph, GraphNotes]" = weakref.WeakKeyDictionary()


@dataclasses.dataclass(frozen=True)
class UncheckedName:
    """A name a producer queued that was not known to be a file when it was queued."""

    index: int       # position in the list given
    given: bytes     # the name or pattern given
    name: bytes      # the name queued (a match of ``given``, or ``given`` itself)
    expanded: bool   # whether glob patterns were expanded (Python lists, not tensors)


@dataclasses.dataclass(frozen=True)
class ProducerNote:
    """What ``string_input_producer`` put in one queue."""

    names: tuple[str | bytes, ...]         # in queue order; bytes for a name not UTF-8
    unchecked: tuple[UncheckedName, ...]   # checked when a reader is connected
    num_epochs: int | None                 # None: repeated forever


@dataclasses.dataclass(frozen=True)
class FastPathNote:
    """What one tf.data reading in the graph (its ``get_next`` op: a fast path's, or a
    pipeline run mode moved to tf.data) reads, and whether it caches."""

    files: tuple[str | bytes, ...] | None  # None: not known while the graph was built
    compression: str | None                # "GZIP", "ZLIB" or None
    cache: str                             # ``describe_cache``'s text


@dataclasses.dataclass
class GraphNotes:
    """What tf1compat did to one graph, by op name."""

    producers: dict[str, ProducerNote] = dataclasses.field(default_factory=dict)
    """By queue op name: what the producer filling it queued."""
    fast_paths: dict[str, FastPathNote] = dataclasses.field(default_factory=dict)
    """By the name of a fast path's (or a lowered pipeline's) ``get_next`` op."""
    queues_lowered: set[str] = dataclasses.field(default_factory=set)
    """Queue op names whose runners the lowering set aside (``replace_with_tf_data``)."""
    dequeues_replaced: dict[str, str] = dataclasses.field(default_factory=dict)
    """By the name of a lowering's iterator op: the dequeue op its ``get_next`` replaced."""

    def fast_path_files(self, op_name: str) -> tuple[tuple[str | bytes, ...], str | None] | None:
        """``(files, compression)`` the fast path whose ``get_next`` is ``op_name``
        reads, or None (not a fast path, or its files are unknown)."""
        note = self.fast_paths.get(op_name)
        return None if note is None or note.files is None else (note.files, note.compression)


def graph_notes(graph: Graph) -> GraphNotes:
    """The notes of ``graph`` (an empty record for a graph tf1compat did nothing to)."""
    notes = _NOTES.get(graph)
    if notes is None:
        notes = _NOTES[graph] = GraphNotes()
    return notes
