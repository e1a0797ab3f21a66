"""The queue API in run mode: tf1compat's functions under TF1's names, runner errors
that reach the program naming file, record and offset, and no silent hang.

* :data:`QUEUE_API` maps TF1 names below ``tensorflow`` (``"train.batch"``,
  ``"TFRecordReader"``, ``"contrib.slim.prefetch_queue.prefetch_queue"``, ...) to
  what run mode's ``tensorflow`` hands the program. It is the one place to swap
  them: the ``tensorflow`` module looks entries up on every access.
* :class:`QueueRuntime` is one run mode's queue safety. Its
  :meth:`~QueueRuntime.apply` (undone with the run mode) makes every queue
  runner -- started by ``tf.train.start_queue_runners``, ``Supervisor``,
  ``MonitoredTrainingSession`` or ``slim.learning.train`` -- report its error
  explained (:func:`~tf1compat.pipeline.runner_errors.explain_runner_error`) to
  its coordinator, so ``coord.join`` and ``MonitoredSession.run`` raise that. A
  runner started without a coordinator gets one of its own: its error closes its
  queues instead of leaving the program blocked forever.
  It also makes every session's ``run`` called from the main thread answer Ctrl-C
  and SIGTERM at once: the step runs in a helper thread while the main thread
  waits in Python, where signal handlers run (TensorFlow's wait does not let them);
  the lines some TensorFlow releases log at a process's first session run are left
  out (:func:`~tf1compat.pipeline.tf_log.first_run_lines_dropped`; the end-of-input
  lines of TensorFlow 2.16 are hidden by ``tf1compat run``'s ``TF_CPP_MIN_LOG_LEVEL=2``).
* Its ``Session`` / ``InteractiveSession`` (run mode's ``tf.Session``) raise a
  runner's explained error instead of "FIFOQueue ... is closed and has
  insufficient elements", and stop a ``run`` waiting on queues whose runners were
  never started with :class:`~tf1compat.errors.QueueRunnersNotStartedError` after
  its ``grace_period`` seconds (``inf``: never, as TF1).
* A pipeline moved to tf.data (:mod:`tf1compat.v1.tf_data_mode`) keeps its queues in
  the graph, their runners set aside. A run of any session that reads those queues
  all the same (a fetch of a per-example tensor, a per-example summary in
  ``merge_all`` that a ``Supervisor``'s summary thread runs, a control dependency)
  first starts their runners in that session, once, under a coordinator of the
  session's that stops with it: such a run reads examples of its own, as it would on
  queues, and never waits. An error of the tf.data pipeline names the damaged file,
  record and offset as a runner's would.
"""

import functools
import math
import queue
import threading
import time
import weakref

from tf1compat._tf import tf, v1
from tf1compat.errors import QueueRunnersNotStartedError
from tf1compat.migrate.lowering import queue_end_error, replaced_dequeue
from tf1compat.pipeline import queues
from tf1compat.pipeline.graph_model import op_types
from tf1compat.pipeline.graph_model.index import (
    graph_index,
    graph_notes,
    queue_runners,
    set_aside_runners,
)
from tf1compat.pipeline.runner_errors import explain_runner_error
from tf1compat.pipeline.tf_log import first_run_lines_dropped

__all__ = ["QUEUE_API", "BATCHING_NAMES", "QueueRuntime", "graph_elements"]

QUEUE_API = {
    "train.string_input_producer": queues.string_input_producer,
    "train.slice_input_producer": queues.slice_input_producer,
    "train.input_producer": queues.input_producer,
    "train.batch": queues.batch,
    "train.shuffle_batch": queues.shuffle_batch,
    "train.batch_join": queues.batch_join,
    "train.shuffle_batch_join": queues.shuffle_batch_join,
    "contrib.slim.prefetch_queue.prefetch_queue": queues.prefetch_queue,
    "TFRecordReader": queues.TFRecordReader,
    "FixedLengthRecordReader": queues.FixedLengthRecordReader,
    "WholeFileReader": queues.WholeFileReader,
    "TextLineReader": queues.TextLineReader,
}
# The batching calls of QUEUE_API (what `tf1compat run --tf-data` replaces).
BATCHING_NAMES = ("train.batch", "train.shuffle_batch", "train.batch_join",
                  "train.shuffle_batch_join", "contrib.slim.prefetch_queue.prefetch_queue")

_CLOSE_THREAD_SUFFIX = "-close_on_stop"  # name QueueRunner gives its closing thread
_UPSTREAM_CACHE_SIZE = 64
_CLOSE_WAIT_WHEN_INTERRUPTED = 0.25  # seconds


class _StepThread:
    """Runs the main thread's session steps in a daemon helper thread, so that the
    main thread waits in Python, where signal handlers run at once (inside
    TensorFlow's wait they would run only when the step ends)."""

    def __init__(self, on_interrupt):
        self._requests = queue.SimpleQueue()
        self._thread = None
        self._on_interrupt = on_interrupt

    def _serve(self):
        while (request := self._requests.get()) is not None:
            function, args, kwargs, done, outcome = request
            try:
                outcome.append((True, function(*args, **kwargs)))
            except BaseException as e:  # noqa: BLE001 - re-raised in the caller
                outcome.append((False, e))
            done.set()
            del request, function, args, kwargs, done, outcome

    def call(self, function, *args, **kwargs):
        """``function(*args, **kwargs)`` in the helper thread; its result or its error."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._serve, name="tf1compat-session-step",
                                            daemon=True)
            self._thread.start()
        done, outcome = threading.Event(), []
        self._requests.put((function, args, kwargs, done, outcome))
        try:
            done.wait()  # a signal's handler runs here
        except BaseException:  # KeyboardInterrupt, SystemExit: the step goes on alone
            self._on_interrupt()
            raise
        succeeded, value = outcome.pop()
        if succeeded:
            return value
        try:
            raise value
        finally:
            del value

    def stop(self):
        """End the helper thread after the steps asked before; a later call starts
        another."""
        self._requests.put(None)
        self._thread = None


class _SessionState:
    """What run mode tracks per session: the runners started, their errors, the
    coordinators of its runners, the thread that runs its main-thread steps, the
    queues moved to tf.data whose runners it started after all (and their threads)."""

    def __init__(self, on_interrupt):
        self.started = weakref.WeakSet()
        self.errors = []
        self.coordinators = []
        self.upstream = {}  # names of fetches and feeds -> queue names the fetches wait on
        self.steps = _StepThread(on_interrupt)
        self.served = set()         # names of moved queues whose runners run in this session
        self.serving = None         # their Coordinator
        self.served_threads = []
        self.lock = threading.Lock()


# ------------------------------------------------------------------ queue runners

class _ExplainingCoordinator:
    """Stands in for a ``Coordinator`` inside one runner's threads: an error is
    explained (file, record, offset) and recorded before the coordinator gets it."""

    def __init__(self, coordinator, session, state):
        self._coordinator = coordinator
        self._session = session
        self._state = state
        if coordinator not in state.coordinators:
            state.coordinators.append(coordinator)

    def request_stop(self, ex=None):
        if isinstance(ex, tf.errors.OpError) and not isinstance(
                ex, (tf.errors.OutOfRangeError, tf.errors.CancelledError)):
            try:
                explained = explain_runner_error(ex, self._session.graph, self._session)
            except Exception:  # noqa: BLE001 - never lose the runner's own error
                explained = ex
            self._state.errors.append(explained)
            ex = (type(explained), explained, ex.__traceback__)
        return self._coordinator.request_stop(ex)

    def __getattr__(self, name):
        return getattr(self._coordinator, name)


def _create_threads_reporting(original, runtime):
    def create_threads(self, sess, coord=None, daemon=False, start=False):
        state = runtime.state(sess)
        own = coord is None
        if own:
            coord = v1.train.Coordinator()
        threads = original(self, sess, _ExplainingCoordinator(coord, sess, state),
                           daemon, False)
        if threads:
            state.started.add(self)
        if own:
            closers = [t for t in threads if t.name.endswith(_CLOSE_THREAD_SUFFIX)]
            for closer in closers:  # waits for an error; never keeps the process alive
                closer.daemon = True
                closer.start()
            threads = [t for t in threads if t not in closers]
        if start:
            for thread in threads:
                thread.start()
        return threads

    return create_threads


def _run_answering_signals(original, runtime):
    def run(self, *args, **kwargs):
        runtime.serve_moved_queues(self, *_fetches_and_feeds(args, kwargs))
        try:
            with first_run_lines_dropped():  # what TensorFlow logs at a first run
                if threading.current_thread() is not threading.main_thread():
                    return original(self, *args, **kwargs)  # signals reach the main thread only
                runtime.interrupted = False  # the program goes on after an interrupted step
                return runtime.state(self).steps.call(original, self, *args, **kwargs)
        except tf.errors.OutOfRangeError as end:
            explained = queue_end_error(end, self.graph)  # --tf-data ends as the queue did
            if explained is None:
                raise
        except tf.errors.OpError as error:
            explained = _moved_pipeline_error(error, self.graph)
            if explained is None:
                raise
        raise explained

    return run


def _moved_pipeline_error(error, graph):
    """``error`` of the tf.data pipeline of a batching call moved to tf.data, explained
    as a runner's (the damaged file, record and offset); None for another error."""
    dequeue = replaced_dequeue(error, graph)
    if dequeue is None:
        return None
    return explain_runner_error(
        error, graph, failed=f"the tf.data pipeline replacing queue "
        f"'{op_types.queue_handle(dequeue).op.name}' failed")


def _close_not_waiting_when_interrupted(original, runtime):
    def close(self):
        # its step thread ends now, not when the session is collected: a coordinator's
        # error (its traceback's frames) can keep the session alive for good
        runtime.stop_steps(self)
        runtime.stop_serving(self)
        if not runtime.interrupted:
            return original(self)
        # The interrupted step (a py_func that sleeps, a reader's open) may keep
        # TensorFlow's close waiting (``with Session()`` waits up to 30 s for it
        # after an exception): let it finish in the background.
        closer = threading.Thread(target=original, args=(self,), daemon=True,
                                  name="tf1compat-session-close")
        closer.start()
        closer.join(_CLOSE_WAIT_WHEN_INTERRUPTED)
        return None

    return close


def _join_not_waiting_when_interrupted(original, runtime):
    def join(self, threads=None, stop_grace_period_secs=120, ignore_live_threads=False):
        if runtime.interrupted:  # the threads may be inside a step TensorFlow cannot cancel
            self.request_stop()
            stop_grace_period_secs = min(stop_grace_period_secs, _CLOSE_WAIT_WHEN_INTERRUPTED)
            ignore_live_threads = True
        return original(self, threads, stop_grace_period_secs, ignore_live_threads)

    return join


def _defining_class(name):
    """The class of ``tf.compat.v1.Session``'s ancestry that defines method ``name``."""
    return next(cls for cls in v1.Session.__mro__ if name in vars(cls))


# ----------------------------------------------------------------------- sessions

def _leaves(values):
    """The leaves of ``Session.run``'s fetches or feeds: dict values (their keys may be
    anything: ``MonitoredSession`` keys them by hook), list and tuple items."""
    if isinstance(values, dict):
        return [leaf for value in values.values() for leaf in _leaves(value)]
    if isinstance(values, (list, tuple)):
        return [leaf for value in values for leaf in _leaves(value)]
    return [values]


def graph_elements(graph, values):
    """The graph elements (tensors, ops) of the fetches or feeds ``values`` in ``graph``;
    a SparseTensor's three tensors; what the graph does not hold is left out."""
    elements = []
    for value in _leaves(values):
        if isinstance(value, tf.SparseTensor):
            elements.extend((value.indices, value.values, value.dense_shape))
            continue
        try:
            elements.append(graph.as_graph_element(value))
        except (TypeError, ValueError, KeyError):
            continue
    return elements


def _upstream_queues(graph, fetches, feed_dict):
    """Names of the queues whose elements the fetches wait for; fed tensors cut the path."""
    return graph_index(graph).upstream(
        graph_elements(graph, fetches), fed=graph_elements(graph, list(feed_dict or ())))[1]


def _element_names(graph, values):
    return tuple(getattr(element, "name", None) for element in graph_elements(graph, values))


def _waited_on(state, session, fetches, feed_dict):
    """The names of the queues the run of ``fetches`` waits on (remembered per fetches)."""
    key = (_element_names(session.graph, fetches),
           _element_names(session.graph, list(feed_dict or ())))
    with state.lock:
        waited = state.upstream.get(key)
    if waited is None:
        waited = _upstream_queues(session.graph, fetches, feed_dict)
        with state.lock:
            if len(state.upstream) >= _UPSTREAM_CACHE_SIZE:
                state.upstream.clear()
            state.upstream[key] = waited
    return waited


def _queues_never_fed(state, session, fetches, feed_dict):
    """The queues this run would wait on whose queue runners were never started
    in ``session`` (empty in the usual case, cheaply); the queues moved to tf.data are
    served (:meth:`QueueRuntime.serve_moved_queues`), not waited on."""
    idle = {op_types.runner_queue_name(runner) for runner in queue_runners(session.graph)
            if runner not in state.started}
    if not idle:
        return ()
    return sorted(_waited_on(state, session, fetches, feed_dict) & idle)


def _fetches_and_feeds(args, kwargs):
    """``(fetches, feed_dict)`` of ``Session.run``'s arguments."""
    fetches = args[0] if args else kwargs.get("fetches")
    feed_dict = args[1] if len(args) > 1 else kwargs.get("feed_dict")
    return fetches, feed_dict


class _RunModeSession:
    """``run`` and ``close`` of run mode's sessions (mixed into TF's classes)."""

    _runtime = None  # the QueueRuntime whose session class this is

    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        grace = self._runtime.grace_period
        state = self._runtime.state(self)
        waiting = math.isfinite(grace) and _queues_never_fed(state, self, fetches, feed_dict)
        if not waiting:
            return self._run_reporting(fetches, feed_dict, options, run_metadata)
        grace_ms = int(grace * 1000)
        if options is not None and 0 < options.timeout_in_ms <= grace_ms:
            return self._run_reporting(fetches, feed_dict, options, run_metadata)
        bounded = v1.RunOptions()
        if options is not None:
            bounded.CopyFrom(options)
        bounded.timeout_in_ms = grace_ms
        try:
            return super().run(fetches, feed_dict, bounded, run_metadata)
        except tf.errors.DeadlineExceededError:
            still_waiting = _queues_never_fed(state, self, fetches, feed_dict)
            if still_waiting:
                raise QueueRunnersNotStartedError(still_waiting, grace) from None
        # Another thread started the runners while this run waited: run it again.
        return self._run_reporting(fetches, feed_dict, options, run_metadata)

    def _run_reporting(self, fetches, feed_dict, options, run_metadata):
        try:
            return super().run(fetches, feed_dict, options, run_metadata)
        except (tf.errors.OutOfRangeError, tf.errors.CancelledError):
            errors = self._runtime.state(self).errors
            if errors:  # the queue was closed because a runner failed: say why
                error = errors[0]
                raise type(error)(error.node_def, error.op, error.message) from None
            raise
        except tf.errors.UnknownError as e:  # tf.data's wrapping of a Python error
            from tf1compat.migrate.service import stalled_error
            stalled = stalled_error(e)      # a read on the tf.data service ran out of time
            if stalled is None:
                raise
            raise stalled from None

    def close(self):
        for coordinator in self._runtime.state(self).coordinators:
            coordinator.request_stop()
        super().close()


class QueueRuntime:
    """One run mode's queue safety: its grace period (of the run mode's settings, which
    ``settings()`` gives), what it tracks per session,
    its ``Session`` / ``InteractiveSession`` classes, and (:meth:`apply`) the
    changes to TensorFlow's classes that report runner errors and answer signals."""

    def __init__(self, settings):
        self._settings = settings
        self.interrupted = False  # a signal ended a main-thread step's wait
        self._states = weakref.WeakKeyDictionary()
        self._lock = threading.Lock()
        self.Session, self.InteractiveSession = (
            type(base.__name__, (_RunModeSession, base), {
                "_runtime": self, "__module__": __name__,
                "__doc__": f"``tf.{base.__name__}`` in run mode; see {__name__}."})
            for base in (v1.Session, v1.InteractiveSession))

    @property
    def grace_period(self):
        """Seconds a ``sess.run`` waits on queues whose runners were never started."""
        return self._settings().grace_period

    def state(self, session):
        """What this runtime tracks for ``session`` (created on first use)."""
        with self._lock:
            state = self._states.get(session)
            if state is None:
                state = self._states[session] = _SessionState(self._note_interrupt)
                weakref.finalize(session, state.steps.stop)
            return state

    def stop_steps(self, session):
        """End the thread that runs ``session``'s main-thread steps, if it has one."""
        with self._lock:
            state = self._states.get(session)
        if state is not None:
            state.steps.stop()

    def serve_moved_queues(self, session, fetches, feed_dict):
        """Before a run of ``session``: start, once per session, the runners set aside
        of the queues moved to tf.data that the run reads (and of those they read), so
        it gets examples instead of waiting. Cheap when nothing was moved."""
        moved = graph_notes(session.graph).queues_lowered
        if not moved:
            return
        state = self.state(session)
        if moved <= state.served:
            return
        needed = (_waited_on(state, session, fetches, feed_dict) & moved) - state.served
        if not needed:
            return
        with state.lock:
            needed -= state.served
            runners = [r for r in set_aside_runners(session.graph)
                       if op_types.runner_queue_name(r) in needed]
            if state.serving is None:
                state.serving = v1.train.Coordinator()
            state.served |= needed
            for runner in runners:
                state.served_threads += runner.create_threads(
                    session, coord=state.serving, daemon=True, start=True)

    def stop_serving(self, session, timeout=_CLOSE_WAIT_WHEN_INTERRUPTED):
        """Stop the runners :meth:`serve_moved_queues` started in ``session`` (as it
        closes): their queues are closed, their threads end."""
        with self._lock:
            state = self._states.get(session)
        if state is None or state.serving is None:
            return
        state.serving.request_stop()
        deadline = time.monotonic() + timeout
        for thread in state.served_threads:
            thread.join(max(0.0, deadline - time.monotonic()))

    def _note_interrupt(self):
        self.interrupted = True

    def apply(self, patches):
        """Make every queue runner report explained errors, every main-thread session
        run answer signals at once, and a session closed (or a coordinator joined)
        after such a signal not wait for the interrupted steps; the changes are
        recorded in ``patches``."""
        patches.wrap_method(v1.train.QueueRunner, "create_threads",
                            functools.partial(_create_threads_reporting, runtime=self))
        patches.wrap_method(_defining_class("run"), "run",
                            functools.partial(_run_answering_signals, runtime=self))
        patches.wrap_method(_defining_class("close"), "close",
                            functools.partial(_close_not_waiting_when_interrupted, runtime=self))
        patches.wrap_method(v1.train.Coordinator, "join",
                            functools.partial(_join_not_waiting_when_interrupted, runtime=self))

    def stop_sessions(self, timeout=0.5):
        """Stop every tracked session's coordinators and close the session (which
        cancels its waiting steps): what an interrupted program leaves. A close that
        TensorFlow cannot finish within ``timeout`` seconds goes on in the background."""
        with self._lock:
            sessions = list(self._states.items())
        for _, state in sessions:
            for coordinator in [*state.coordinators, state.serving]:
                if coordinator is not None:
                    coordinator.request_stop()
        closers = [threading.Thread(target=session.close, daemon=True,
                                    name="tf1compat-session-close")
                   for session, _ in sessions]
        for closer in closers:
            closer.start()
        deadline = time.monotonic() + timeout
        for closer in closers:
            closer.join(max(0.0, deadline - time.monotonic()))
