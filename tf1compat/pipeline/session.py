"""SessionIterator: a TF1 queue pipeline behind a plain Python iterator.

One object owns what a TF1 script wired by hand: the ``Session``, the global,
local and table initializers (``num_epochs`` needs the local one), a
``Coordinator`` and every queue-runner thread. It yields numpy values shaped
like the fetches, ends with ``StopIteration`` when the data ends, raises a
queue-runner thread's error in the consumer (same TF error type, message naming
the failing op and file), and stops and joins all its threads on every exit.

Steps run in a helper thread while the consumer waits in Python, so Ctrl-C (or
any signal handler) takes effect at once even while a step waits for data; a
thread TensorFlow cannot cancel (a reader stuck opening a FIFO) is reported
with a warning instead of making ``close()`` wait for it forever. The lines the
installed TensorFlow logs by itself at the end of input and at a process's first
session run are left out of standard error meanwhile (:mod:`tf1compat.pipeline.tf_log`).
"""

import queue
import threading
import time
import warnings
import weakref
from collections.abc import Callable
from types import TracebackType
from typing import Any, Literal, cast

from tf1compat._checks import check_seconds
from tf1compat._tf import tf, v1
from tf1compat._typing import Graph, Operation
from tf1compat.pipeline.graph_model import op_types
from tf1compat.pipeline.graph_model.index import files_read, graph_notes, queue_runners
from tf1compat.pipeline.graph_model.structure import ancestors
from tf1compat.pipeline.queues import check_reader_queues
from tf1compat.pipeline.runner_errors import explain_runner_error, failing_op
from tf1compat.pipeline.tf_log import session_lines_dropped

__all__ = ["SessionIterator"]

_THREAD_PREFIX = "tf1compat-"


def _graph_of(fetches: Any) -> Graph:
    """The graph the fetches live in (the default graph when they name none)."""
    graphs = {getattr(f, "graph", None) for f in tf.nest.flatten(fetches)}
    graphs.discard(None)
    if len(graphs) > 1:
        raise ValueError("SessionIterator: fetches come from more than one graph; "
                         "build the whole pipeline inside one legacy_graph()")
    if graphs:
        return graphs.pop()
    if any(isinstance(f, tf.Tensor) for f in tf.nest.flatten(fetches)):
        raise ValueError("SessionIterator: fetches are eager tensors; build the "
                         "pipeline inside `with tf1compat.legacy_graph():`")
    return v1.get_default_graph()


def _files_read_by_runner(runner: Any) -> list[str | bytes]:
    """Files the readers behind a queue runner's enqueue ops read, where known."""
    def is_read(op: Operation) -> bool:
        return op.type in op_types.READS

    reads = sorted(filter(is_read, ancestors(runner.enqueue_ops, is_read)), key=lambda op: op.name)
    return list(dict.fromkeys(f for op in reads for f in files_read(op) or ()))


def _check_arguments(fetches: Any, config: Any, timeout: float | None,
                     join_timeout: float) -> None:
    if not tf.nest.flatten(fetches):
        raise ValueError(f"SessionIterator: fetches {fetches!r} holds no tensor; expected a "
                         "tensor, or a dict / list / tuple of tensors (an empty one would "
                         "yield empty values forever)")
    if config is not None and not isinstance(config, v1.ConfigProto):
        raise TypeError(f"SessionIterator: config must be a tf.compat.v1.ConfigProto or None, "
                        f"got {type(config).__name__}")
    check_seconds("SessionIterator", "timeout", timeout, minimum=0.001, allow_none=True)
    check_seconds("SessionIterator", "join_timeout", join_timeout)


class _StepThread:
    """Runs the steps of one iterator in a helper thread.

    ``session.run`` blocks inside TensorFlow, where Python cannot deliver a
    signal: Ctrl-C during a step that waits for data would be ignored until the
    data came. The consumer instead waits here, in Python, where every signal
    handler runs at once (KeyboardInterrupt, or a handler that only sets a flag
    and lets the step go on).
    """

    def __init__(self, name: str) -> None:
        self._requests: queue.SimpleQueue[tuple[Callable[..., Any], dict[str, Any]] | None] = (
            queue.SimpleQueue())
        self._results: queue.SimpleQueue[tuple[bool, Any]] = queue.SimpleQueue()
        self.thread = threading.Thread(target=self._serve, name=name, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while (request := self._requests.get()) is not None:
            function, kwargs = request
            try:
                self._results.put((True, function(**kwargs)))
            except BaseException as e:  # noqa: BLE001 - re-raised in the consumer
                self._results.put((False, e))
            del request, function, kwargs

    def call(self, function: Callable[..., Any], **kwargs: Any) -> Any:
        """``function(**kwargs)`` run in the helper thread; its result or its error."""
        self._requests.put((function, kwargs))
        succeeded, value = self._results.get()
        if not succeeded:
            try:
                raise value
            finally:
                del value
        return value

    def stop(self) -> None:
        self._requests.put(None)


class _Running:
    """The live parts of a started iterator; shut down exactly once."""

    def __init__(self, session: Any, coordinator: Any,
                 runner_threads: list[tuple[Any, threading.Thread]], step_thread: _StepThread,
                 dropped_lines: Any) -> None:
        self.session = session
        self.coordinator = coordinator
        self.runner_threads = runner_threads  # [(QueueRunner, Thread)]
        self.step_thread = step_thread
        self.dropped_lines = dropped_lines  # TensorFlow's own lines, left out

    def shutdown(self, join_timeout: float) -> None:
        try:
            self._shut_down(join_timeout)
        finally:
            self.dropped_lines.undo()

    def _shut_down(self, join_timeout: float) -> None:
        self.coordinator.request_stop()
        # Joined here, not with Coordinator.join: after that, a late error of a
        # thread that was stuck would be raised in that thread as a traceback.
        deadline = time.monotonic() + join_timeout
        for _, thread in self.runner_threads:
            if thread.ident is not None:  # started
                thread.join(max(0.0, deadline - time.monotonic()))
        self.step_thread.stop()
        stuck = [(runner, thread) for runner, thread in self.runner_threads
                 if thread.is_alive()]
        if not stuck:
            self.session.close()  # also cancels a step still waiting for data
            self.step_thread.thread.join(join_timeout)
            return
        # A thread blocked where TensorFlow cannot cancel it (opening a FIFO nobody
        # writes, a hung network file system) makes Session.close() wait for it.
        threading.Thread(target=self.session.close, name=f"{_THREAD_PREFIX}close",
                         daemon=True).start()
        names = ", ".join(thread.name for _, thread in stuck)
        files = list(dict.fromkeys(
            f for runner, _ in stuck for f in _files_read_by_runner(runner)))
        reading = f", reading from {', '.join(map(repr, files))}" if files else ""
        warnings.warn(
            f"SessionIterator: {len(stuck)} queue-runner thread(s) did not stop within "
            f"{join_timeout:g} s ({names}{reading}); they are blocked in an operation "
            "TensorFlow cannot cancel, such as opening a FIFO that nobody writes to or a "
            "file on a hung network file system. The session is closed in the background "
            "once they return.", RuntimeWarning, stacklevel=6)


class SessionIterator:
    """Iterate over the values of ``fetches`` from a TF1 queue pipeline.

    ``fetches`` is a tensor, or a dict / list / tuple (nested) of tensors; each
    step yields the same structure with numpy values. ``graph`` defaults to the
    fetches' graph, ``config`` is a ``tf.compat.v1.ConfigProto``. ``timeout``
    (seconds, optional) bounds one step: a pipeline that delivers nothing for
    that long raises ``tf.errors.DeadlineExceededError`` instead of hanging.
    ``join_timeout`` (seconds) is how long closing waits for the queue runners;
    one still blocked then (e.g. opening a FIFO nobody writes to) is named in a
    ``RuntimeWarning`` and its session closed in the background.

    Use it as a context manager, or just iterate (it starts on the first step
    and cleans up at the end, on an error, or when garbage collected)::

        with tf1compat.SessionIterator({"image": images, "label": labels}) as it:
            for batch in it:
                ...

    ``steps`` counts the values delivered so far.
    """

    def __init__(self, fetches: Any, *, graph: Graph | None = None, config: Any = None,
                 timeout: float | None = None, join_timeout: float = 5.0) -> None:
        _check_arguments(fetches, config, timeout, join_timeout)
        self._fetches = fetches
        self._graph = _graph_of(fetches) if graph is None else graph
        self._config = config
        self._run_options = (v1.RunOptions(timeout_in_ms=int(timeout * 1000))
                             if timeout is not None else None)
        self._join_timeout = join_timeout
        self._running: _Running | None = None
        self._finalizer: weakref.finalize[Any, Any] | None = None
        self._step: Callable[..., Any] | None = None
        self._closed = False
        self.steps = 0

    @property
    def session(self) -> Any:
        """The ``tf.compat.v1.Session`` (started on first use), e.g. to run a train op."""
        self.start()
        return cast(_Running, self._running).session   # set by start

    @property
    def graph(self) -> Graph:
        return self._graph

    @property
    def fetches(self) -> Any:
        """The fetches this iterator runs, as given."""
        return self._fetches

    def start(self) -> "SessionIterator":
        """Create the session, run the initializers and start the queue runners."""
        if self._closed:
            raise RuntimeError("SessionIterator is closed; build a new one to read again")
        if self._running is not None:
            return self
        check_reader_queues(self._graph)
        with self._graph.as_default():
            init_ops = [v1.global_variables_initializer(),
                        v1.local_variables_initializer(), v1.tables_initializer()]
        dropped_lines = session_lines_dropped()
        try:
            session = v1.Session(graph=self._graph, config=self._config)
            try:
                session.run(init_ops)
                step = session.make_callable(self._fetches, accept_options=True)
            except BaseException:
                session.close()
                raise
        except BaseException:
            dropped_lines.undo()
            raise
        coordinator = v1.train.Coordinator()
        runner_threads = self._queue_runner_threads(session, coordinator)
        step_thread = _StepThread(f"{_THREAD_PREFIX}step")
        self._running = _Running(session, coordinator, runner_threads, step_thread,
                                 dropped_lines)
        self._finalizer = weakref.finalize(self, self._running.shutdown, self._join_timeout)
        self._step = step
        try:  # owned before they start: Ctrl-C while starting them still stops them
            for _, thread in runner_threads:
                thread.start()
        except BaseException:
            self.close()
            raise
        return self

    def _queue_runner_threads(self, session: Any,
                              coordinator: Any) -> list[tuple[Any, threading.Thread]]:
        """Every queue runner's threads, not started yet: ``[(runner, thread)]``."""
        runner_threads = []
        for runner in queue_runners(self._graph):
            created = runner.create_threads(session, coord=coordinator, daemon=True, start=False)
            for index, thread in enumerate(created):
                thread.name = f"{_THREAD_PREFIX}{runner.name}-{index}"
                runner_threads.append((runner, thread))
        return runner_threads

    def close(self) -> None:
        """Stop the coordinator, close the queues, join the threads, close the session."""
        self._closed = True
        if self._finalizer is not None:
            self._finalizer()

    def __iter__(self) -> "SessionIterator":
        return self

    def __next__(self) -> Any:
        if self._closed:
            raise StopIteration
        self.start()
        try:
            running, step = cast(_Running, self._running), cast(Callable[..., Any], self._step)
            value = running.step_thread.call(step, options=self._run_options)
        except (tf.errors.OutOfRangeError, tf.errors.CancelledError) as end:
            runner_error = self._runner_error()
            self.close()
            if runner_error is not None:
                raise runner_error from None
            if isinstance(end, tf.errors.OutOfRangeError):
                raise StopIteration from None
            raise
        except tf.errors.DeadlineExceededError as e:
            self.close()
            raise type(e)(e.node_def, e.op, (
                f"{e.message}\n[tf1compat] no value arrived within the step timeout; "
                "is every queue fed by a queue runner, and is the input non-empty?"
            )) from None
        except tf.errors.OpError as e:
            self.close()
            op = failing_op(e, self._graph)
            if op is None or graph_notes(self._graph).fast_path_files(op.name) is None:
                raise
            raise explain_runner_error(e, self._graph, failed="reading failed") from None
        except BaseException:
            self.close()
            raise
        self.steps += 1
        return value

    def _runner_error(self) -> BaseException | None:
        """The error a queue-runner thread reported, explained; None on a clean end."""
        running = cast(_Running, self._running)     # called on a started iterator
        try:
            running.coordinator.raise_requested_exception()
        except tf.errors.OpError as e:
            explained: BaseException = explain_runner_error(e, self._graph, running.session)
            return explained
        except Exception as e:  # noqa: BLE001 - a non-TF error from a runner thread
            return e
        return None

    def __enter__(self) -> "SessionIterator":
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> Literal[False]:
        self.close()
        return False

    def __repr__(self) -> str:
        state = "closed" if self._closed else ("running" if self._running else "not started")
        return f"<SessionIterator {state}, {self.steps} steps>"
