"""Run a program until its input pipelines are built, and record them.

``python -m tf1compat.port.pipelines.observe REQUEST.json`` runs the program the
request names under run mode (:func:`tf1compat.v1.program.run_path`), with its
arguments, from the current folder. Each batching call (``tf.train.batch`` & co.,
slim's ``prefetch_queue``) is recorded as the program makes it; the program is
stopped at its first ``sess.run`` that reads a queue (a batch's dequeue, a
reader's read) -- the start of its training or evaluation loop, when its
pipelines are built and nothing has been read yet. No queue runner thread is
started meanwhile. Each pipeline's plan is then read from the graph
(:func:`~tf1compat.migrate.lowering.read_plan`, its shuffle buffers placed as the
uncached lowering places them:
:func:`~tf1compat.migrate.lowering.plan.shuffle_after_reads`) with the program lines
behind its ops, and the :class:`~tf1compat.port.pipelines.observed.Observation` is written as
JSON to the request's ``output``.
"""

import importlib
import json
import os
import sys
import threading
import traceback

from tf1compat._tf import tf, v1
from tf1compat.errors import LoweringError
from tf1compat.migrate.lowering import plan as plan_steps
from tf1compat.migrate.lowering import read_plan
from tf1compat.pipeline.graph_model import op_types
from tf1compat.pipeline.graph_model.index import graph_index
from tf1compat.pipeline.graph_model.structure import ancestors, walk
from tf1compat.pipeline.session import SessionIterator
from tf1compat.port.pipelines._harness import (
    Stream,
    freeze_randomness,
    session_config,
)
from tf1compat.port.pipelines.observed import (
    Frame,
    Observation,
    OpRecord,
    Pipeline,
    Step,
    dump_observation,
)
from tf1compat.v1 import queue_runtime
from tf1compat.v1.program import run_path
from tf1compat.v1.run_mode import RunMode

__all__ = ["Watcher", "ProgramStopped", "observe", "main"]

_PREFETCH = "contrib.slim.prefetch_queue.prefetch_queue"
_QUEUE_READS = op_types.READS | op_types.DEQUEUES


class ProgramStopped(SystemExit):
    """Ends the watched program at its first read from a queue (its ``finally``
    blocks run, as for ``sys.exit``)."""


class _Call:
    """One batching call: its API name, the program frames it was made from, its result."""

    def __init__(self, api, stack, result):
        self.api, self.stack, self.result = api, stack, result


class Watcher:
    """Watches a program in run mode: its batching calls, and its first ``sess.run``
    that reads a queue, where it stops the program (see the module docstring).
    ``files``: the program's own files (their real paths)."""

    def __init__(self, files):
        self.files = frozenset(os.path.realpath(f) for f in files)
        self.calls = []
        self.stopped = None       # (program frames of the sess.run, its fetches)
        self.stopping = threading.Event()   # set when the main thread is stopped
        self.runners_allowed = False

    def program_stack(self, summary):
        """The frames of ``summary`` (a traceback) in the program's own files."""
        return tuple(Frame(os.path.realpath(f.filename), f.lineno, f.name) for f in summary
                     if os.path.realpath(f.filename) in self.files)

    def watch(self, table):
        """Record the batching calls of the queue API ``table`` (changed in place)."""
        for name in queue_runtime.BATCHING_NAMES:
            table[name] = self._recording(name, table[name])

    def _recording(self, name, function):
        api = "prefetch_queue" if name == _PREFETCH else name

        def record(*args, **kwargs):
            result = function(*args, **kwargs)
            stack = self.program_stack(_caller_stack())
            self.calls.append(_Call(api, stack, result))
            return result
        return record

    def session_run(self, original):
        """``Session.run`` stopping the program at its first read from a queue."""
        watcher = self

        def run(session, fetches, feed_dict=None, *args, **kwargs):
            if watcher.runners_allowed is False:
                elements = queue_runtime.graph_elements(session.graph, (fetches, feed_dict))
                ops = ancestors(elements, lambda op: op.type in _QUEUE_READS)
                if any(op.type in _QUEUE_READS for op in ops):
                    # Another thread's read (a Supervisor's summary thread, whose
                    # summaries read the batch) would wait forever on a queue no runner
                    # fills: it ends too, once the main thread's read stopped the program.
                    if not _in_main_thread():
                        watcher.stopping.wait()
                    elif watcher.stopped is None:
                        watcher.stopped = (watcher.program_stack(_caller_stack()),
                                           queue_runtime.graph_elements(session.graph, fetches))
                        watcher.stopping.set()
                    raise ProgramStopped()
            return original(session, fetches, feed_dict, *args, **kwargs)
        return run

    def create_threads(self, original):
        """``QueueRunner.create_threads`` starting nothing while the program is watched."""
        watcher = self

        def create_threads(runner, *args, **kwargs):
            if not watcher.runners_allowed:
                return []
            return original(runner, *args, **kwargs)
        return create_threads

    # ------------------------------------------------------------ what it saw

    def pipelines(self):
        """The :class:`Pipeline` of each batching call, in the order the program made
        them (a batch feeding a ``prefetch_queue`` is part of the prefetch's), then the
        examples the stopping ``sess.run`` fetched with no batching call."""
        prefetched = set()
        pipelines = []
        for call in self.calls:
            if call.api != "prefetch_queue":
                continue
            pipeline, inner = self._prefetch_pipeline(call)
            prefetched.update(inner)
            pipelines.append((call, pipeline))
        for call in self.calls:
            if call.api == "prefetch_queue" or id(call) in prefetched:
                continue
            pipelines.append((call, describe(call.result, call.api, call.stack, self)))
        order = {id(call): index for index, call in enumerate(self.calls)}
        pipelines.sort(key=lambda item: order[id(item[0])])
        for call, pipeline in pipelines:
            if call.stack:
                pipeline.occurrence = [id(c) for c in self._calls_at(*_top(call.stack))].index(
                    id(call))
        found = [pipeline for _, pipeline in pipelines]
        fetched = self._fetched_examples()
        if fetched is not None:
            found.append(fetched)
        return found

    def _prefetch_pipeline(self, call):
        """The pipeline ending in a ``prefetch_queue``'s dequeues, and the ids of the
        batching calls inside it."""
        handle = call.result.queue_ref
        dequeues = [op for op in handle.consumers() if op.type in op_types.DEQUEUES]
        inner_ops = {op.name for op in ancestors(tf.nest.flatten(_enqueued(handle)),
                                                 lambda op: op.type in _QUEUE_READS)}
        inner = {id(c) for c in self.calls if c is not call and c.api != "prefetch_queue"
                 and tf.nest.flatten(c.result)[0].op.name in inner_ops}
        if not dequeues:
            pipeline = Pipeline(call.api, call.stack, "list", error=(
                "its queue is never dequeued before the program's first read"))
            return pipeline, inner
        pipeline = describe(list(dequeues[0].outputs), call.api, call.stack, self)
        pipeline.dequeues = [self.op_record(op) for op in dequeues]
        batches = [c for c in self.calls if id(c) in inner]
        if len(batches) == 1:
            pipeline.batch_api, pipeline.batch_stack = batches[0].api, batches[0].stack
        return pipeline, inner

    def _fetched_examples(self):
        """The pipeline of the examples the stopping ``sess.run`` fetched straight from
        a reader (no batching call), or None."""
        if self.stopped is None:
            return None
        stack, fetched = self.stopped
        batches = {t.name for call in self.calls for t in _flat_tensors(call.result)}
        examples = [t for t in fetched if isinstance(t, tf.Tensor) and t.name not in batches
                    and _reads_without_batch(t)]
        if not examples:
            return None
        pipeline = describe(examples, "fetch", stack, self)
        pipeline.fetched = [self.op_record(t.op) for t in examples]
        pipeline.keys = [t.name for t in examples]
        return pipeline

    def _calls_at(self, file, line):
        """The batching calls made at ``file``:``line``, in the order they were made."""
        return [call for call in self.calls if call.stack and _top(call.stack) == (file, line)]

    def fetches_at(self, file, line, occurrence=0):
        """The tensors of the pipeline whose batching call (or, fetched one at a time,
        whose read) is at ``file``:``line``, made there after ``occurrence`` others
        (:attr:`Pipeline.occurrence`), or None."""
        calls = self._calls_at(file, line)
        if len(calls) > occurrence:
            call = calls[occurrence]
            if call.api != "prefetch_queue":
                return call.result
            dequeues = [op for op in call.result.queue_ref.consumers()
                        if op.type in op_types.DEQUEUES]
            return list(dequeues[0].outputs) if dequeues else None
        if calls:
            return None
        if self.stopped is not None:
            examples = [t for t in self.stopped[1] if isinstance(t, tf.Tensor)
                        and _reads_without_batch(t)]
            reads = {op for t in examples for op in ancestors([t], _is_queue_read)
                     if op.type in op_types.READS}
            if any(self.program_stack(op.traceback)[-1:] and
                   (self.program_stack(op.traceback)[-1].file,
                    self.program_stack(op.traceback)[-1].line) == (file, line)
                   for op in reads):
                return examples
        return None

    def op_record(self, op):
        return OpRecord(op.name, op.type, self.program_stack(op.traceback))


def _top(stack):
    """``(file, line)`` of the innermost frame of ``stack``."""
    return stack[-1].file, stack[-1].line


def _is_queue_read(op):
    return op.type in _QUEUE_READS


def _in_main_thread():
    """Whether this is the program's main thread (or run mode's step thread running
    its ``sess.run``)."""
    current = threading.current_thread()
    return current is threading.main_thread() or \
        current.name.startswith("tf1compat-session-step")


def _caller_stack():
    """The current stack; in run mode's step thread (which runs the main thread's
    ``sess.run``), the main thread's."""
    if threading.current_thread().name.startswith("tf1compat-session-step"):
        return traceback.extract_stack(sys._current_frames()[threading.main_thread().ident])
    return traceback.extract_stack()


def _flat_tensors(value):
    leaves = tf.nest.flatten(value) if not hasattr(value, "queue_ref") else []
    return [t for t in leaves if isinstance(t, tf.Tensor)]


def _enqueued(handle):
    return [t for op in handle.consumers() if op.type in op_types.ENQUEUES
            for t in op_types.enqueued(op)]


def _reads_without_batch(tensor):
    """Whether ``tensor`` is computed from a reader's read with no queue in between."""
    ops = ancestors([tensor], lambda op: op.type in _QUEUE_READS)
    return any(op.type in op_types.READS for op in ops) and not any(
        op.type in op_types.DEQUEUES for op in ops)


def _structure(fetches):
    if isinstance(fetches, dict):
        return "dict", sorted(fetches)
    if isinstance(fetches, (list, tuple)):
        return type(fetches).__name__, []
    return "tensor", []


def describe(fetches, api, stack, watcher):
    """The :class:`Pipeline` behind ``fetches`` made by the call ``api`` at ``stack``."""
    structure, keys = _structure(fetches)
    pipeline = Pipeline(api, stack, structure, keys)
    try:
        read = read_plan(fetches, prune_features=False)
    except (LoweringError, TypeError) as e:
        pipeline.error = str(e)
        name = getattr(e, "op", None)
        graph = tf.nest.flatten(fetches)[0].graph
        try:
            pipeline.error_stack = watcher.op_record(graph.get_operation_by_name(name)).stack
        except (KeyError, ValueError, TypeError):
            pipeline.error_stack = ()
        return pipeline
    plan = plan_steps.shuffle_after_reads(read.plan)   # the order the port writes
    chain = plan.chain()
    pipeline.plan = [_step(step, watcher) for step in chain]
    pipeline.text = plan.describe()
    pipeline.deterministic = plan.is_deterministic()
    pipeline.batched = read.batched
    flat = tf.nest.flatten(fetches)
    ops, _ = graph_index(flat[0].graph).upstream(flat)
    reads = sorted((op for op in ops if op.type in op_types.READS), key=lambda op: op.name)
    pipeline.reads = [watcher.op_record(op) for op in reads]
    pipeline.readers = [watcher.op_record(op_types.reader_op(op)) for op in reads]
    pipeline.side_ops, pipeline.summaries = _side_ops(chain, stack, watcher)
    return pipeline


def _side_ops(chain, stack, watcher):
    """Ops outside the pipeline that use the values of its per-example maps: the
    program needs them where tf.data cannot give them; and, apart, the summaries of
    one example (``tf.summary.image`` in a preprocessing function), which a map
    function can make but TensorFlow does not collect."""
    side, summaries = [], []
    used = None    # the ops the graph or the stopping sess.run uses otherwise than by value
    for step in _all_steps(chain):
        if isinstance(step, plan_steps.Batch):
            break    # what follows takes batches: the program's own use of them
        if not isinstance(step, plan_steps.Map):
            continue
        inside = {op.name for op in step.function.ops}
        tensors = [t for op in step.function.ops for t in op.outputs]
        tensors += list(step.function.inputs)
        for tensor in tensors:
            for consumer in tensor.consumers():
                if consumer.name in inside or consumer.type in op_types.ENQUEUES or \
                        _unused_plumbing(consumer, inside):
                    continue
                if used is None:
                    used = _used_otherwise(consumer.graph, watcher)
                if _unused_values(consumer, inside, used):
                    continue
                record = watcher.op_record(consumer)
                if record.stack == stack:
                    continue
                found = summaries if _feeds_summaries_only(consumer, inside) else side
                if record not in found:
                    found.append(record)
    return side, summaries


def _consumers(op):
    return [c for output in op.outputs for c in output.consumers()]


def _feeds_summaries_only(op, inside):
    """Whether everything ``op`` leads to, outside the map, ends in summaries."""
    reached = walk([op], lambda current: [c for c in _consumers(current)
                                          if c.name not in inside])
    return any(current.type in op_types.SUMMARIES for current in reached) and all(
        current.type in op_types.SUMMARIES or _consumers(current) for current in reached)


_PASSING = op_types.PLUMBING | op_types.COND_SWITCHES | op_types.COND_MERGES


def _unused_plumbing(op, inside):
    """Whether ``op`` and what follows it outside the map only pass values on, to
    nothing else (TF1's ``cond`` makes an identity of its predicate that nothing reads,
    and switches of branches the map does not take)."""
    reached = walk([op], lambda current: [c for c in _consumers(current)
                                          if c.name not in inside],
                   stop=lambda current: current.type not in _PASSING)
    return all(current.type in _PASSING for current in reached)


def _used_otherwise(graph, watcher):
    """The names of the ops of ``graph`` that another op waits for (a control input)
    or that the stopping ``sess.run`` fetched."""
    names = {c.name for op in graph.get_operations() for c in op.control_inputs}
    if watcher.stopped is not None:
        names |= {getattr(e, "op", e).name for e in watcher.stopped[1]
                  if hasattr(getattr(e, "op", e), "name")}
    return names


def _unused_values(op, inside, used):
    """Whether ``op`` and what follows it outside the map are stateless ops whose
    values nothing reads (``used``: see :func:`_used_otherwise`): what the program
    computed from an example and dropped, as a reading function's label returned to
    ``_``. The map computes and drops them alike; a Python name the program still
    uses after the map is the region's to find."""
    reached = walk([op], lambda current: [c for c in _consumers(current)
                                          if c.name not in inside])
    return all(not getattr(current.op_def, "is_stateful", True) and current.name not in used
               and current.type not in op_types.SUMMARIES for current in reached)


def _all_steps(chain):
    for step in chain:
        yield step
        if isinstance(step, plan_steps.Interleave):
            yield from _all_steps(step.template.chain())
        if isinstance(step, plan_steps.RoundRobin):
            for branch in step.branches:
                yield from _all_steps(branch.chain())


def _jsonable(value):
    if isinstance(value, bytes):
        return value.decode("utf-8", "backslashreplace")
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    return value


def _step(step, watcher):
    """A plan step as a :class:`Step` record."""
    text = step.text()
    if isinstance(step, plan_steps.Values):
        settings = {"length": step.length, "num_epochs": step.num_epochs,
                    "seeds": list(step.seeds) if step.seeds is not None else None,
                    "noun": step.noun, "set_once": bool(step.initial)}
        return Step("values", text, settings, [watcher.op_record(op) for op in step.function.ops])
    if isinstance(step, plan_steps.Read):
        reading = step.reading
        settings = {"dataset": reading.dataset_name, "reader": reading.op_type,
                    "arguments": {k: _jsonable(v) for k, v in reading.arguments().items()},
                    "with_keys": step.with_keys}
        return Step("read", text, settings)
    if isinstance(step, plan_steps.Map):
        function = step.function
        settings = {"threads": step.threads, "stateful": list(step.stateful),
                    "after_shuffle": step.after_shuffle,
                    "unbatch": step.unbatch, "selection": function.is_selection,
                    "inputs": [[t.op.name, t.op.type, t.value_index] for t in function.inputs],
                    "outputs": len(function.outputs)}
        records = [watcher.op_record(op) for op in function.ops]
        inputs = {t.op for t in function.inputs}
        records += [watcher.op_record(op) for op in inputs]
        return Step("map", text, settings, records)
    if isinstance(step, plan_steps.Shuffle):
        return Step("shuffle", text, {"buffer_size": step.buffer_size,
                                      "seeds": list(step.seeds)})
    if isinstance(step, plan_steps.Batch):
        return Step("batch", text, {"batch_size": step.batch_size,
                                    "drop_remainder": step.drop_remainder,
                                    "padded": step.padded})
    if isinstance(step, plan_steps.Prefetch):
        return Step("prefetch", text, {"buffer_size": step.buffer_size})
    if isinstance(step, plan_steps.Interleave):
        return Step("interleave", text, {"count": step.count},
                    steps=[[_step(s, watcher) for s in step.template.chain()]])
    if isinstance(step, plan_steps.RoundRobin):
        return Step("round_robin", text, steps=[[_step(s, watcher) for s in branch.chain()]
                                                for branch in step.branches])
    return Step(type(step).__name__.lower(), text)


def observe(entry, argv, files):
    """Run the program ``entry`` with ``argv`` until its first read from a queue;
    returns ``(Observation, watcher)`` (the watcher holds the graph's tensors)."""
    watcher = Watcher(files)
    # on TF1's queues (run mode's default puts pipelines on tf.data): the pipelines
    # are read from their queue graphs
    run_mode = RunMode([os.path.dirname(os.path.abspath(entry))], grace_period=float("inf"),
                       tf_data=False)
    watcher.watch(run_mode.queue_api)
    module_name, name = op_types.SESSION_RUN
    session_class = getattr(importlib.import_module(module_name), name)
    runner_class = v1.train.QueueRunner
    original_run, original_threads = session_class.run, runner_class.create_threads
    session_class.run = watcher.session_run(original_run)
    runner_class.create_threads = watcher.create_threads(original_threads)
    try:
        status = run_path(entry, argv, run_mode=run_mode)
    finally:
        session_class.run, runner_class.create_threads = original_run, original_threads
    stopped = watcher.stopped is not None
    observation = Observation(watcher.pipelines(), watcher.stopped[0] if stopped else (),
                              None if stopped else status)
    return observation, watcher


def _prepare_for_verify(epochs):
    """The original side of ``port --verify`` (:mod:`._harness`): randomness frozen,
    endless producers bounded to ``epochs`` epochs."""
    freeze_randomness(op_types.RANDOM_OP_MODULE, op_types.RANDOM_OP_FUNCTIONS)
    module_name, name = op_types.EPOCH_LIMIT
    module = importlib.import_module(module_name)
    limit_epochs = getattr(module, name)

    def bounded(tensor, num_epochs=None, name=None):
        return limit_epochs(tensor, epochs if num_epochs is None else num_epochs, name)
    setattr(module, name, bounded)


def _stream(watcher, sites, stream):
    """Read the pipeline of each ``(file, line, occurrence)`` of ``sites`` (its
    batching call, or the read of examples fetched one at a time) to its end, into
    ``stream``."""
    for index, (file, line, occurrence) in enumerate(sites):
        fetches = watcher.fetches_at(os.path.realpath(file), line, occurrence)
        if fetches is None:
            stream.end(index, f"the program made no pipeline at {file}:{line}"
                       + (f" (call {occurrence + 1} there)" if occurrence else ""))
            continue
        try:
            graph = tf.nest.flatten(fetches)[0].graph
            if graph.finalized:   # by the program's Supervisor or MonitoredSession
                getattr(graph, op_types.GRAPH_UNFINALIZE)()
            stream.seed(index, graph)
            with SessionIterator(fetches, graph=graph, config=session_config()) as batches:
                for batch in batches:
                    stream.batch(index, batch)
            stream.end(index)
        except Exception as e:  # noqa: BLE001 - reported by the parent
            stream.end(index, f"{type(e).__name__}: {e}")


def main(argv=None):
    """``python -m tf1compat.port.pipelines.observe REQUEST.json``: see the module
    docstring; with ``verify`` in the request, the original side of ``port --verify``
    (its pipelines at the request's sites read to their end, onto its pipe)."""
    argv = sys.argv[1:] if argv is None else argv
    with open(argv[0], encoding="utf-8") as f:
        request = json.load(f)
    verify = request.get("verify")
    if verify is not None:
        _prepare_for_verify(verify["epochs"])
    observation, watcher = observe(request["entry"], request["argv"], request["files"])
    if verify is None:
        dump_observation(observation, request["output"])
        return 0
    stream = Stream(verify["fd"])
    _stream(watcher, [tuple(site) for site in verify["sites"]], stream)
    stream.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
