"""Any TF1 queue pipeline as ``tf.data``: read the graph behind the fetches, build the same.

Everything a queue pipeline does is in its graph: :mod:`.graph_reader` reads it
into the steps of :mod:`.plan` (producer, reader, per-example map,
shuffle buffer, batch, ...), :mod:`.feature_pruning` has parse ops parse only the
features the fetches need, :mod:`.batch_then_parse` runs per-example maps on
whole batches where that gives the same values, and a final ``prefetch`` does
what the queue runners' threads did: work ahead of the consumer. The plan builds
the dataset (:func:`lower_to_tf_data`, eagerly; :func:`replace_with_tf_data`,
inside the legacy graph) and describes it (:func:`describe_lowering`).

What cannot be lowered raises :class:`~tf1compat.errors.LoweringError` naming the
op: the lowering never builds a silently different pipeline.
"""

import concurrent.futures
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple, TypeVar

from tf1compat._tf import tf, v1
from tf1compat._typing import Dataset, Graph, GraphDef, Operation, OpError, Tensor
from tf1compat.migrate.lowering.batch_then_parse import vectorize
from tf1compat.migrate.lowering.caching import plan_cache
from tf1compat.migrate.lowering.distributed import build_distributed
from tf1compat.migrate.lowering.graph_function import check_fetch
from tf1compat.migrate.lowering.graph_reader import GraphReader
from tf1compat.migrate.lowering.plan import (
    Batch,
    Interleave,
    Prefetch,
    Read,
    RoundRobin,
    Step,
    shuffle_after_reads,
)
from tf1compat.pipeline.cache_budget import cache_budget
from tf1compat.pipeline.graph_model import op_types
from tf1compat.pipeline.graph_model.index import graph_notes, set_aside_queue_runners
from tf1compat.pipeline.graph_model.notes import FastPathNote
from tf1compat.pipeline.graph_model.op_seeds import op_seeds_kept

__all__ = ["Lowering", "ReadPlan", "read_plan", "lower", "lower_to_tf_data",
           "replace_with_tf_data", "describe_lowering", "is_graph_fetches", "note_reading",
           "replaced_dequeue", "queue_end_error"]

_T = TypeVar("_T")


def is_graph_fetches(value: object) -> bool:
    """Whether ``value`` is a (nested) structure of graph tensors (or SparseTensors of
    them): a pipeline's fetches."""
    leaves = tf.nest.flatten(value)
    leaves = [leaf.values if isinstance(leaf, tf.SparseTensor) else leaf for leaf in leaves]
    return bool(leaves) and all(isinstance(leaf, tf.Tensor) and not hasattr(leaf, "numpy")
                                for leaf in leaves)


class Lowering:
    """A queue pipeline's fetches as a tf.data plan: ``describe()``, ``build()``.

    ``batched``: whether the fetches are batches (computed from a batching dequeue,
    also behind ``prefetch_queue``, and none of them a scalar); ``queues``: the
    names of the queue ops the plan replaces.
    """

    def __init__(self, fetches: Any, plan: Step, batched: bool, queues: frozenset[str],
                 cached: Step | None = None, not_cached: str | None = None) -> None:
        self.fetches = fetches
        self.plan = plan
        self.batched = batched
        self.queues = queues      # names of the queue ops the plan replaces
        self.cached, self.not_cached = cached, not_cached

    @property
    def compression(self) -> str | None:
        """The compression of the TFRecord files the pipeline reads ("GZIP", "ZLIB"),
        else None."""
        return next((step.reading.compression for step in _steps(self.plan)
                     if isinstance(step, Read) and step.reading.compression), None)

    @property
    def deterministic(self) -> bool:
        """Whether TF1 delivers one order every run and the lowering delivers the same."""
        return self.plan.is_deterministic()

    def describe(self) -> str:
        if self.cached is not None:
            return self.cached.describe()
        return f"{self.plan.describe()}; not cached: {self.not_cached}"

    def to_tf_data(self, service: str | None = None,
                   service_timeout: float | None = None) -> Dataset:
        """The ``tf.data.Dataset``, built eagerly (see :func:`lower_to_tf_data`)."""
        return _eagerly(lambda: self.build(service, service_timeout))

    def build(self, service: str | None = None,
              service_timeout: float | None = None) -> Dataset:
        """The ``tf.data.Dataset`` in the current context (eager, or a graph for a
        ``tf.compat.v1`` iterator), elements shaped like the fetches; with ``service``
        (``grpc://HOST:PORT``) its work runs on that tf.data service
        (:mod:`.distributed`), each wait for it bounded by
        ``service_timeout`` seconds (None: the service module's default); not cached
        there."""
        fetches = self.fetches
        if service is None:
            dataset = (self.cached or self.plan).build()
        else:
            dataset = build_distributed(self.plan, service, service_timeout)

        @tf.autograph.experimental.do_not_convert
        def restructure(*components: Any) -> Any:
            return tf.nest.pack_sequence_as(fetches, list(components))
        return dataset.map(restructure)

    def __repr__(self) -> str:
        return f"<Lowering {self.describe()}>"


def _steps(plan: Step) -> Iterator[Step]:
    """Every step of ``plan``, those of interleaves' templates and joined branches too."""
    for step in plan.chain():
        yield step
        if isinstance(step, Interleave):
            yield from _steps(step.template)
        elif isinstance(step, RoundRobin):
            for branch in step.branches:
                yield from _steps(branch)


def _prefetched(plan: Step) -> Step:
    """``plan`` ending in a prefetch: what the queue runners' threads did."""
    if any(isinstance(step, Prefetch) for step in plan.chain()):
        return plan
    return Prefetch(plan, tf.data.AUTOTUNE)


class ReadPlan(NamedTuple):
    """A queue pipeline's plan as its graph has it (see :func:`read_plan`)."""

    plan: Step
    batched: bool               # the fetches are batches (see Lowering)
    queues: frozenset[str]      # names of the queue ops the plan replaces
    graph_def: GraphDef         # the graph's GraphDef the plan's functions copy from


def read_plan(fetches: Any, prune_features: bool = True) -> ReadPlan:
    """The plan of the queue pipeline behind ``fetches`` as its graph has it: each map
    where the graph runs its ops (per example before a batch; not vectorized), each
    shuffle buffer where the graph fills it, not cached, without the prefetch
    :func:`lower` adds. ``tf1compat port`` writes the program's tf.data code from it,
    in the order of :func:`~tf1compat.migrate.lowering.plan.shuffle_after_reads`, as
    the uncached :func:`lower` builds it. Raises as :func:`lower` does."""
    for fetch in tf.nest.flatten(fetches):
        check_fetch(fetch)
    if not is_graph_fetches(fetches):
        raise TypeError("lowering needs fetches: a graph tensor, or a tuple, list or dict of "
                        f"graph tensors built in a legacy_graph(); got {type(fetches).__name__}")
    flat = tf.nest.flatten(fetches)
    graphs = {t.graph for t in flat}
    if len(graphs) > 1:
        raise TypeError("lowering: the fetches come from more than one graph")
    reader = GraphReader(graphs.pop(), prune_features)
    function = reader.function(flat)
    source = reader.single_source(function, "the fetches", flat[0].op)
    plan = reader.mapped(source, function)
    batched = isinstance(plan.upstream, (Batch, Prefetch)) and all(
        t.shape.rank != 0 for t in flat)
    return ReadPlan(plan, batched, frozenset(reader.lowered_queues), reader.graph_def)


def lower(fetches: Any, prune_features: bool = True,
          cache: bool | int | str | None = None) -> Lowering:
    """Read the queue pipeline behind ``fetches``; returns a :class:`Lowering`.

    ``prune_features``: parse ops parse only the features the fetches need
    (:mod:`.feature_pruning`); ``False`` parses every key, as the program does.
    ``cache``: the in-memory cache's budget (see :func:`~tf1compat.to_tf_data`).
    Raises :class:`~tf1compat.errors.LoweringError` for what cannot be lowered (also
    a SparseTensor among the fetches), ``TypeError`` when ``fetches`` are not graph
    tensors of one graph.
    """
    plan, batched, queues, graph_def = read_plan(fetches, prune_features)
    budget = cache_budget(cache)
    cached, not_cached = _eagerly(lambda: plan_cache(plan, graph_def, budget))
    plan = _prefetched(vectorize(shuffle_after_reads(plan), graph_def))
    if cached is not None:
        cached.upstream = _prefetched(cached.upstream)
    return Lowering(fetches, plan, batched, queues, cached, not_cached)


def _eagerly(build: Callable[[], _T]) -> _T:
    """Run ``build()`` with eager execution: here when it is on, else in a helper thread
    (the default graph is per thread, so a legacy_graph() around the call stays out)."""
    if tf.executing_eagerly():
        return build()
    with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="tf1compat-lower") as pool:
        return pool.submit(build).result()


def lower_to_tf_data(fetches: Any, service: str | None = None,
                     service_timeout: float | None = None,
                     cache: bool | int | str | None = None) -> Dataset:
    """The ``tf.data.Dataset`` delivering what ``fetches`` deliver, built eagerly; on the
    tf.data service at ``service`` (``grpc://HOST:PORT``) when given, each wait for it
    bounded by ``service_timeout`` seconds; ``cache``: the in-memory cache's budget (see
    :func:`~tf1compat.to_tf_data`)."""
    return lower(fetches, cache=cache).to_tf_data(service, service_timeout)


def replace_with_tf_data(fetches: Any, service: str | None = None,
                         service_timeout: float | None = None,
                         cache: bool | int | str | None = None, *,
                         lowering: Lowering | None = None) -> Any:
    """Lower the pipeline behind ``fetches`` inside its own graph: returns an iterator's
    ``get_next()`` in the fetches' structure (a list stays a list), and sets the lowered
    queues' runners aside
    (:func:`~tf1compat.pipeline.graph_model.index.set_aside_queue_runners`), so
    ``start_queue_runners`` starts no thread for them; the queues stay in the graph
    for whatever else reads them (a per-example summary, a fetch of a reader's output),
    whose runs start those runners (run mode does). The ops it adds leave the op-level
    seeds of the graph's later ops as they were
    (:func:`~tf1compat.pipeline.graph_model.op_seeds.op_seeds_kept`): a seeded program
    draws the same weights as on queues. The iterator is one-shot (the lowered dataset
    captures nothing): each session starts it on first use, whatever initializers the
    program runs; its end raises what the queue's would (:func:`queue_end_error`). The
    graph's notes name the queues replaced (``GraphNotes.queues_lowered``), the dequeue
    the iterator replaced and the files its ``get_next`` reads (to say where a damaged
    record is).

    ``service``: run it on that tf.data service (``grpc://HOST:PORT``), each wait for
    it bounded by ``service_timeout`` seconds; ``cache``: the in-memory cache's budget
    (see :func:`~tf1compat.to_tf_data`); ``lowering``: the :class:`Lowering` of
    ``fetches`` made already (``cache`` is then its own)."""
    flat = tf.nest.flatten(fetches)
    graph = flat[0].graph
    with op_seeds_kept(graph):
        if lowering is None:
            lowering = lower(fetches, cache=cache)
        with graph.as_default(), tf.name_scope("tf_data"):
            values = tf.nest.flatten(
                v1.data.make_one_shot_iterator(lowering.build(service, service_timeout)).get_next())
    for fetch, value in zip(flat, values, strict=True):
        value.set_shape(fetch.shape)
    set_aside_queue_runners(graph, lowering.queues)
    iterator = op_types.iterator_of(values[0].op).op.name
    graph_notes(graph).dequeues_replaced[iterator] = flat[0].op.name
    note_reading(values[0].op, lowering)
    return tf.nest.pack_sequence_as(fetches, values)   # a list stays a list (tf.data: tuples)


def note_reading(get_next: Operation, lowering: Lowering) -> None:
    """Note in the graph what the iterator op ``get_next`` of ``lowering``'s dataset
    reads: the files its producers queued and their compression, so an error in it
    names the damaged record."""
    notes = graph_notes(get_next.graph)
    files = [name for queue in sorted(lowering.queues)
             if (producer := notes.producers.get(queue)) is not None for name in producer.names]
    notes.fast_paths[get_next.name] = FastPathNote(
        tuple(files) if files else None, lowering.compression, lowering.describe())


def replaced_dequeue(error: OpError, graph: Graph) -> Operation | None:
    """The dequeue op of the batching call whose tf.data pipeline raised ``error`` (at
    an iterator of ``graph`` that :func:`replace_with_tf_data` built), or None."""
    op = error.op
    if op is None or op.graph is not graph or op.type not in op_types.ITERATOR_OUTPUTS:
        return None
    dequeue = graph_notes(graph).dequeues_replaced.get(op_types.iterator_of(op).op.name)
    return None if dequeue is None else graph.get_operation_by_name(dequeue)


def queue_end_error(error: OpError, graph: Graph) -> OpError | None:
    """The OutOfRangeError the queue pipeline would raise at its end in place of
    ``error``, the end of an iterator of ``graph`` that :func:`replace_with_tf_data`
    built (None for any other error): the dequeue op of the batching call, and TF1's
    message naming its queue, e.g. ``FIFOQueue 'batch/fifo_queue' is closed and has
    insufficient elements (requested 32, current size 0)``."""
    dequeue = replaced_dequeue(error, graph)
    if dequeue is None:
        return None
    handle: Tensor = op_types.queue_handle(dequeue)  # a dequeue has one
    queue = handle.op
    requested = tf.get_static_value(op_types.batch_size_input(dequeue))
    # A short final batch was delivered (current size 0), or tf.data dropped it.
    size = 0 if dequeue.type in op_types.DEQUEUES_UP_TO else f"less than {requested}"
    message = (op_types.QUEUE_END_MESSAGE.format(kind=op_types.queue_kind(queue),
                                                 name=queue.name, requested=requested,
                                                 size=size)
               + f"\n\t [[{{{{node {dequeue.name}}}}}]]\n(tf1compat run: the end of the "
               "tf.data pipeline that replaced this queue)")
    return tf.errors.OutOfRangeError(dequeue.node_def, dequeue, message)


def describe_lowering(fetches: Any, cache: bool | int | str | None = None) -> str:
    """The tf.data chain :func:`~tf1compat.to_tf_data` builds for ``fetches``, e.g.
    ``3 files, 1 epoch, reshuffled every epoch (seed 5) -> TFRecordDataset ->
    shuffle(buffer 64, seed 7) -> batch(8, keep remainder) -> map(vectorized: 3 ops:
    ParseExampleV2, DecodeRaw, Reshape, 2 threads -> parallel) -> prefetch(autotune);
    not cached: the files are read once (1 epoch)``; a cached pipeline shows its
    ``cache(...)`` step (``cache`` as for :func:`~tf1compat.to_tf_data`)."""
    return lower(fetches, cache=cache).describe()
