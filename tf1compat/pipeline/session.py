"""SessionIterator: a TF1 queue pipeline behind a plain Python iterator.

One object owns what a TF1 script wired by hand: the ``Session``, the global,
local and table initializers (``num_epochs`` needs the local one), a
``Coordinator`` and every queue-runner thread. It yields numpy values shaped
like the fetches, ends with ``StopIteration`` when the data ends, raises a
queue-runner thread's error in the consumer (same TF error type, message naming
the failing op and file), and stops and joins all its threads on every exit.
"""

import weakref

from tf1compat._tf import tf, v1
from tf1compat.pipeline.fastpath import files_read_by
from tf1compat.pipeline.queues import check_reader_queues
from tf1compat.pipeline.runner_errors import explain_runner_error, failing_op

__all__ = ["SessionIterator"]

_THREAD_PREFIX = "tf1compat-"


def _graph_of(fetches):
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


class _Running:
    """The live parts of a started iterator; shut down exactly once."""

    def __init__(self, session, coordinator, threads):
        self.session = session
        self.coordinator = coordinator
        self.threads = threads

    def shutdown(self, join_timeout):
        self.coordinator.request_stop()
        try:
            self.coordinator.join(self.threads, stop_grace_period_secs=join_timeout,
                                  ignore_live_threads=True)
        except Exception:  # noqa: BLE001 - a runner error was already raised to the consumer
            pass
        self.session.close()


class SessionIterator:
    """Iterate over the values of ``fetches`` from a TF1 queue pipeline.

    ``fetches`` is a tensor, or a dict / list / tuple (nested) of tensors; each
    step yields the same structure with numpy values. ``graph`` defaults to the
    fetches' graph, ``config`` is a ``tf.compat.v1.ConfigProto``. ``timeout``
    (seconds, optional) bounds one step: a pipeline that delivers nothing for
    that long raises ``tf.errors.DeadlineExceededError`` instead of hanging.

    Use it as a context manager, or just iterate (it starts on the first step
    and cleans up at the end, on an error, or when garbage collected)::

        with tf1compat.SessionIterator({"image": images, "label": labels}) as it:
            for batch in it:
                ...

    ``steps`` counts the values delivered so far.
    """

    def __init__(self, fetches, *, graph=None, config=None, timeout=None, join_timeout=5.0):
        self._fetches = fetches
        self._graph = _graph_of(fetches) if graph is None else graph
        self._config = config
        self._run_options = (v1.RunOptions(timeout_in_ms=int(timeout * 1000))
                             if timeout is not None else None)
        self._join_timeout = join_timeout
        self._running = None
        self._finalizer = None
        self._step = None
        self._closed = False
        self.steps = 0

    @property
    def session(self):
        """The ``tf.compat.v1.Session`` (started on first use), e.g. to run a train op."""
        self.start()
        return self._running.session

    @property
    def graph(self):
        return self._graph

    @property
    def fetches(self):
        """The fetches this iterator runs, as given."""
        return self._fetches

    def start(self):
        """Create the session, run the initializers and start the queue runners."""
        if self._closed:
            raise RuntimeError("SessionIterator is closed; build a new one to read again")
        if self._running is not None:
            return self
        check_reader_queues(self._graph)
        with self._graph.as_default():
            init_ops = [v1.global_variables_initializer(),
                        v1.local_variables_initializer(), v1.tables_initializer()]
        session = v1.Session(graph=self._graph, config=self._config)
        try:
            session.run(init_ops)
            step = session.make_callable(self._fetches, accept_options=True)
        except BaseException:
            session.close()
            raise
        coordinator = v1.train.Coordinator()
        threads = self._start_queue_runners(session, coordinator)
        self._running = _Running(session, coordinator, threads)
        self._finalizer = weakref.finalize(self, self._running.shutdown, self._join_timeout)
        self._step = step
        return self

    def _start_queue_runners(self, session, coordinator):
        threads = []
        for runner in self._graph.get_collection(v1.GraphKeys.QUEUE_RUNNERS):
            created = runner.create_threads(session, coord=coordinator, daemon=True, start=False)
            for index, thread in enumerate(created):
                thread.name = f"{_THREAD_PREFIX}{runner.name}-{index}"
                threads.append(thread)
        for thread in threads:
            thread.start()
        return threads

    def close(self):
        """Stop the coordinator, close the queues, join the threads, close the session."""
        self._closed = True
        if self._finalizer is not None:
            self._finalizer()

    def __iter__(self):
        return self

    def __next__(self):
        if self._closed:
            raise StopIteration
        self.start()
        try:
            value = self._step(options=self._run_options)
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
            if op is None or files_read_by(op) is None:
                raise
            raise explain_runner_error(e, self._graph, failed="reading failed") from None
        except BaseException:
            self.close()
            raise
        self.steps += 1
        return value

    def _runner_error(self):
        """The error a queue-runner thread reported, explained; None on a clean end."""
        try:
            self._running.coordinator.raise_requested_exception()
        except tf.errors.OpError as e:
            return explain_runner_error(e, self._graph, self._running.session)
        except Exception as e:  # noqa: BLE001 - a non-TF error from a runner thread
            return e
        return None

    def __enter__(self):
        return self.start()

    def __exit__(self, exc_type, exc, tb):
        self.close()
        return False

    def __repr__(self):
        state = "closed" if self._closed else ("running" if self._running else "not started")
        return f"<SessionIterator {state}, {self.steps} steps>"
