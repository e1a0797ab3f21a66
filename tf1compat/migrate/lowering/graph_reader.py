"""Reading a TF1 queue pipeline out of its graph, into the steps of a tf.data plan.

Walking back from the fetches:

- the fetches are computed from one **dequeue** (``dequeue_many`` -> ``batch``
  dropping the remainder, ``dequeue_up_to`` -> keeping it, a ``PaddingFIFOQueue``
  -> ``padded_batch``) or one reader;
- a queue's elements come from the **enqueue ops its QueueRunner runs**; each
  distinct op is a branch (``batch_join``, ``num_readers``), run by as many threads
  as the runner lists it; the ops between the branch's source and the enqueue
  become a map function (:mod:`tf1compat.migrate.lowering.graph_function`);
- a branch's source is a **reader** (``ReaderReadV2``: its type and attributes give
  the tf.data reader, the files come from the queue it reads) or a **dequeue** of
  another queue; a queue filled by ``enqueue_many`` from no source is a
  **producer** (``string_input_producer`` & co.: values, ``num_epochs`` from its
  ``CountUpTo``, its ``RandomShuffle`` op);
- a ``RandomShuffleQueue`` becomes a shuffle buffer, a queue that only buffers
  batches (``prefetch_queue``) becomes ``prefetch``.

Anything else raises :class:`~tf1compat.errors.LoweringError` naming the op, with
the steps lowered downstream of it.
"""


import collections
import contextlib

from tf1compat._tf import tf, v1
from tf1compat.errors import LoweringError
from tf1compat.migrate.lowering.graph_function import trace_function
from tf1compat.migrate.lowering.plan import (
    Batch,
    Element,
    Interleave,
    Map,
    Prefetch,
    Read,
    RoundRobin,
    Shuffle,
    Values,
)
from tf1compat.pipeline.graph_model import op_types
from tf1compat.pipeline.graph_model.index import files_read, graph_index
from tf1compat.pipeline.graph_model.readers import reader_settings, spec_of_reader_op

__all__ = ["GraphReader"]

_BATCH_DEQUEUES = {op_types.DEQUEUE_MANY: True, op_types.DEQUEUE_UP_TO: False}  # drop remainder
_SOURCES = frozenset({op_types.DEQUEUE, op_types.READ, *_BATCH_DEQUEUES, op_types.READ_UP_TO})
_ENQUEUES = frozenset({op_types.ENQUEUE, op_types.ENQUEUE_MANY})


@contextlib.contextmanager
def _downstream_of(step):
    """Add ``step`` to the plan of a LoweringError raised while lowering its upstream."""
    try:
        yield
    except LoweringError as e:
        text = step.text() if step is not None else ""
        if text:
            e.plan = f"{e.plan} -> {text}" if e.plan else text
        raise


def _upstream_queue(source):
    return op_types.queue_handle(source).op


class GraphReader:
    """Turns the queue ops of one graph into plan steps (see the module docstring)."""

    def __init__(self, graph, prune_features=True):
        self.graph_def = graph.as_graph_def()
        self.prune_features = prune_features
        self.index = graph_index(graph)
        self.lowered_queues = set()

    def function(self, outputs):
        return trace_function(self.graph_def, outputs, lambda op: op.type in _SOURCES,
                              self.prune_features)

    def single_source(self, function, what, op):
        """The one reader or dequeue op ``function`` starts from."""
        sources = list(dict.fromkeys(t.op for t in function.inputs))
        if len(sources) == 1:
            source = sources[0]
            if source.type == op_types.READ_UP_TO:
                raise LoweringError(source.name, source.type, "read_up_to is not lowered (it "
                                    "is what the fast paths use); read one record at a time")
            return source
        if not sources:
            raise LoweringError(op.name, op.type, f"{what} come from no reader or queue: "
                                "there is no input pipeline to lower")
        names = ", ".join(f"'{s.name}' ({s.type})" for s in sources)
        raise LoweringError(op.name, op.type, f"{what} combine {len(sources)} sources "
                            f"({names}); one reader or queue per element can be lowered")

    def mapped(self, source, function, upstream=None, **options):
        """``function`` mapped over what ``source`` yields; ``upstream`` gives the
        elements of the queue ``source`` reads (lowered here when None)."""
        step = Map(None, function, **options)
        with _downstream_of(step):
            upstream, components = self.source_step(source, function.inputs, upstream)
        return step.link(upstream, components)

    # ------------------------------------------------------------ sources

    def source_step(self, source, needed, upstream=None):
        """``(step, components)`` for what ``source`` yields."""
        queue = _upstream_queue(source)
        batch = None
        if source.type in _BATCH_DEQUEUES:
            batch_size = tf.get_static_value(op_types.batch_size_input(source))
            if batch_size is None:
                raise LoweringError(source.name, source.type, "the batch size is not a constant")
            batch = Batch(None, int(batch_size), _BATCH_DEQUEUES[source.type],
                          queue.type == op_types.PADDING_QUEUE)
        if upstream is None:
            with _downstream_of(batch):
                upstream = self.queue_elements(queue, [source])
        if source.type == op_types.READ:
            return self.read_step(upstream, source, needed)
        if batch is not None:
            batch.upstream, upstream = upstream, batch
        return upstream, list(source.outputs)

    def read_step(self, upstream, read, needed):
        reader = op_types.reader_op(read)
        spec = spec_of_reader_op(reader)
        if spec is None:
            raise LoweringError(reader.name, reader.type, "a reader without a tf.data "
                                f"equivalent; lowered readers: {sorted(op_types.READERS)}")
        if spec.hop_bytes and spec.compression:
            raise LoweringError(reader.name, reader.type, "hop_bytes with a compressed "
                                "encoding has no tf.data equivalent")
        key, value = read.outputs
        with_keys = key.name in {t.name for t in needed}
        step = Read(upstream, spec, with_keys, files_read(read))
        return step, ([key, value] if with_keys else [value])

    # ------------------------------------------------------------ queues

    def queue_elements(self, queue, consumers):
        """The step giving ``queue``'s elements in order; ``consumers`` are the
        dequeues or reads being lowered, and must be all that read the queue."""
        if queue.type not in op_types.INPUT_QUEUES:
            raise LoweringError(queue.name, queue.type, "not a queue that TF1's input "
                                f"functions build; lowered queues: "
                                f"{sorted(op_types.INPUT_QUEUES)}")
        if queue.name in self.lowered_queues:
            raise LoweringError(queue.name, queue.type, "this queue is read twice")
        self.lowered_queues.add(queue.name)
        handle = queue.outputs[0]
        others = [op for op in handle.consumers() if op.type in _SOURCES and op not in consumers]
        if others:
            raise LoweringError(queue.name, queue.type, f"also read by '{others[0].name}' "
                                f"({others[0].type}); TF1 gives each element to one reader only")
        branches = self.branches(queue, handle)
        shuffle = None
        if queue.type == op_types.SHUFFLE_QUEUE:
            buffer_size = (op_types.min_after_dequeue(queue) or
                           op_types.queue_capacity(queue))
            shuffle = Shuffle(None, buffer_size, op_types.op_seeds(queue))
        # values enqueued as they are (a producer, or shuffle_batch(enqueue_many=True) over
        # in-memory values): the queue's values, shuffled when it is a RandomShuffleQueue
        step = self.producer(branches, consumers)
        if step is None:
            with _downstream_of(shuffle):
                groups = collections.defaultdict(list)   # upstream queue -> [(enqueue, ...)]
                for enqueue, threads in branches.items():
                    function = self.function(op_types.enqueued(enqueue))
                    source = self.single_source(function, "the values enqueued", enqueue)
                    groups[_upstream_queue(source).name].append(
                        (enqueue, threads, function, source))
                steps = [self.group_step(group) for group in groups.values()]
            step = steps[0] if len(steps) == 1 else RoundRobin(steps)
        if shuffle is not None:
            shuffle.upstream = step
            return shuffle
        if isinstance(step, Map) and step.function.is_selection and \
                isinstance(step.upstream, Batch):
            return Prefetch(step, op_types.queue_capacity(queue))
        return step

    def branches(self, queue, handle):
        """``{enqueue op: threads}`` of the queue runners feeding ``queue``."""
        runners = self.index.runners.get(queue.name)
        if not runners:
            raise LoweringError(queue.name, queue.type, "no queue runner feeds this queue "
                                "(is it filled from Python?); lowered queues are fed by "
                                "QueueRunners such as tf.train.batch builds")
        branches = collections.Counter()
        for runner in runners:
            if type(runner) is not v1.train.QueueRunner:
                raise LoweringError(queue.name, queue.type, "fed by a custom queue runner "
                                    f"({type(runner).__name__}): its Python code is not "
                                    "in the graph")
            branches.update(runner.enqueue_ops)
        for op in handle.consumers():
            if op.type in _ENQUEUES and op not in branches:
                raise LoweringError(op.name, op.type, f"enqueues into '{queue.name}' outside "
                                    "its queue runners (from Python?)")
        for op in branches:
            if op.type not in _ENQUEUES:
                raise LoweringError(op.name, op.type, f"a queue runner of '{queue.name}' "
                                    "runs an op that is not an enqueue")
        return dict(branches)

    def producer(self, branches, consumers):
        """A :class:`Values` step when a producer fills the queue, else None."""
        if len(branches) != 1:
            return None
        (enqueue, _), = branches.items()
        if enqueue.type != op_types.ENQUEUE_MANY or len(op_types.enqueued(enqueue)) != 1:
            return None
        (values,), num_epochs = op_types.enqueued(enqueue), None
        counters = [c for c in values.op.control_inputs if c.type in op_types.COUNT_UP_TO]
        if values.op.type == op_types.IDENTITY and counters:
            values, num_epochs = op_types.value_input(values.op), op_types.count_limit(counters[0])
        function = trace_function(self.graph_def, [values],
                                  lambda op: op.type in _SOURCES or _set_once(op) is not None)
        initial = [trace_function(self.graph_def, [_set_once(t.op)]) for t in function.inputs
                   if t.op.type not in _SOURCES]
        if len(initial) < len(function.inputs) or any(f.inputs for f in initial):
            return None
        seeds = None
        if values.op.type == op_types.RANDOM_SHUFFLE:
            seeds = op_types.op_seeds(values.op)
        length = values.shape[0] if values.shape.rank else None
        noun = "files" if all(c.type == op_types.READ for c in consumers) else "values"
        return Values(function, initial, length, num_epochs, seeds, noun)

    def group_step(self, group):
        """The step of the branches (enqueue ops) that share one upstream queue."""
        enqueue, threads, function, source = group[0]
        options = {"threads": threads, "unbatch": enqueue.type == op_types.ENQUEUE_MANY}
        if len(group) == 1:
            return self.mapped(source, function, **options)
        for other, _, other_function, other_source in group[1:]:
            if (other.type, other_source.type) != (enqueue.type, source.type) or \
                    other_function.signature() != function.signature() or \
                    _reader_settings(other_source) != _reader_settings(source):
                raise LoweringError(other.name, other.type, f"the {len(group)} branches "
                                    f"feeding '{_upstream_queue(enqueue).name}' differ from "
                                    f"'{enqueue.name}'; branches reading one queue are lowered "
                                    "when they run the same ops")
        if source.type in _BATCH_DEQUEUES:
            raise LoweringError(source.name, source.type,
                                f"{len(group)} branches each dequeue batches from one queue")
        template = self.mapped(source, function, upstream=Element(), **options)
        interleave = Interleave(None, template, len(group))
        with _downstream_of(interleave):
            interleave.upstream = self.queue_elements(_upstream_queue(source),
                                                      [s for _, _, _, s in group])
        return interleave


def _set_once(read):
    """The value of the variable ``read`` reads when only its initializer sets it
    (``match_filenames_once``), else None."""
    variable = op_types.read_variable(read)
    if read.type == op_types.READ_VARIABLE and variable.type == op_types.RESOURCE_VARIABLE:
        assign = op_types.ASSIGN_VARIABLE
    elif read.type == op_types.IDENTITY and variable is not None and \
            variable.type in op_types.REF_VARIABLES:
        assign = op_types.REF_ASSIGN
    else:
        return None
    writers = [op for op in variable.outputs[0].consumers()
               if op.type not in op_types.VARIABLE_READS]
    if len(writers) != 1 or writers[0].type != assign:
        return None
    return op_types.assigned_value(writers[0])


def _reader_settings(source):
    """The reader type and attributes behind a read (None for a dequeue)."""
    return reader_settings(op_types.reader_op(source)) if source.type == op_types.READ else None
