"""A Dask cluster as a runner of shard plans: the ``tf1compat[dask]`` extra, imported only
when ``runner="dask"`` is asked for.

Each :class:`~tf1compat.convert.plan.ShardTask` is one Dask task calling
``write_shard`` on a worker (tasks travel pickled by cloudpickle, so their functions may
come from a script or a notebook). ``write_shard`` writes a temporary name or a whole
object, so when a worker dies, the scheduler's rerun of its tasks elsewhere writes the
same bytes. The output must be a location every worker reaches under the same name: an
object-store URL (``s3://...``) or a shared mount.

Nothing waits on the cluster silently. Before the tasks, every worker is asked to import
what they need (tf1compat, the output's filesystem package): a worker that cannot would
die unpickling its first task. While they run, the scheduler is asked every second for
its workers, within ``ANSWER_SECONDS``: a scheduler lost or not answering, or a cluster
left without a worker for ``NO_WORKER_SECONDS`` (the scheduler waits for one forever),
ends the run with a :class:`~tf1compat.errors.DaskClusterError`, as does a task whose
workers kept dying (Dask's ``KilledWorker``).
"""

import asyncio
import concurrent.futures
import functools
import queue
import time
import weakref

from tf1compat.convert.plan import write_shard
from tf1compat.errors import DaskClusterError, PipelineConfigError
from tf1compat.records import _fs

try:
    import distributed
except ImportError as e:
    raise ModuleNotFoundError(
        f"the Dask runner needs Dask's distributed scheduler, which is the tf1compat[dask] "
        f"extra: pip install 'tf1compat[dask]' ({e})", name="distributed") from e

CONNECT_SECONDS = 5     # how long to try to reach a scheduler given by its address
ANSWER_SECONDS = 10     # how long the scheduler may take to answer during a run
NO_WORKER_SECONDS = 30  # how long a run waits while the cluster has no worker
_POLL_SECONDS = 1.0     # how often a run looks at the cluster
_CLOSE_SECONDS = 2      # how long closing a client this runner made may take
# what Dask raises for a call or a future the lost scheduler cut (its own and asyncio's)
_CANCELLED = (asyncio.CancelledError, concurrent.futures.CancelledError)


def connect(scheduler, timeout=CONNECT_SECONDS):
    """A ``distributed.Client`` of ``scheduler`` (a Client, returned as it is, or an
    address checked by :func:`tf1compat._checks.check_scheduler`); ``(client, owned)``.
    An unreachable address is a ``ConnectionError`` naming it, after ``timeout``
    seconds at most."""
    if isinstance(scheduler, distributed.Client):
        return scheduler, False
    try:
        return distributed.Client(scheduler, timeout=timeout, set_as_default=False), True
    except (OSError, TimeoutError) as e:
        raise ConnectionError(f"cannot reach the Dask scheduler at {scheduler} within "
                              f"{timeout} s ({e})") from None
    except ValueError as e:     # an address Dask cannot parse
        raise PipelineConfigError(f"scheduler {scheduler!r}: {e}", argument="scheduler",
                                  expected="'tcp://host:port'") from e


class _Watch:
    """What a run sees of the cluster: raises a DaskClusterError when its scheduler
    is lost or does not answer, or when it has had no worker for too long."""

    def __init__(self, client):
        self.client = client
        self.address = client.scheduler.address
        self.seen = set()
        self.idle_since = None

    def workers(self):
        """The cluster's workers, asked of the scheduler within ANSWER_SECONDS."""
        try:
            workers = self.client.nthreads(callback_timeout=ANSWER_SECONDS)
        except TimeoutError:
            raise self.error(f"has not answered for {ANSWER_SECONDS} s (stopped or "
                             "overloaded)") from None
        except (OSError, *_CANCELLED) as e:
            raise self.lost(e) from None
        self.seen |= set(workers)
        return workers

    def check(self):
        if self.workers():
            self.idle_since = None
            return
        self.idle_since = self.idle_since or time.monotonic()
        if time.monotonic() - self.idle_since >= NO_WORKER_SECONDS:
            raise self.error(
                f"has had no worker for {NO_WORKER_SECONDS} s"
                + (f" (this run saw {', '.join(sorted(self.seen))} leave: a worker that "
                   "cannot import what a task needs, such as tf1compat or the module of "
                   "its functions, dies on its first task; see the workers' logs)"
                   if self.seen else "") + "; start workers and run the conversion again")

    def lost(self, error):
        return self.error(f"was lost ({type(error).__name__}: the scheduler stopped or "
                          "died, or the network failed)")

    def error(self, what):
        return DaskClusterError(
            f"the Dask scheduler at {self.address} {what}; nothing was committed",
            scheduler=self.address, workers_lost=sorted(self.seen))


def _task_modules(directory):
    """What every worker must import to run a task writing into ``directory``."""
    modules = ["tf1compat.convert.plan"]
    if _fs.is_url(directory):
        modules.append(_fs.filesystem_package(directory))
    return modules


def _import_error(error):
    """The ImportError ``error`` is, or was raised from, or None."""
    while error is not None and not isinstance(error, ImportError):
        error = error.__cause__ or error.__context__
    return error


class DaskRunner:
    """Runs shard tasks on a Dask cluster: ``scheduler`` is a ``distributed.Client`` or
    the scheduler's address (connected now, so an unreachable one is named before any
    work; a client made here is closed after the run). A task's error is raised here
    with its own type and attributes (Dask re-raises it); the first one cancels the
    rest. A worker that dies has its tasks rerun on the others by the scheduler; what
    the cluster cannot do is a :class:`~tf1compat.errors.DaskClusterError` (see the
    module)."""

    def __init__(self, scheduler):
        self.client, owned = connect(scheduler)
        self._close = (weakref.finalize(self, functools.partial(
            self.client.close, timeout=_CLOSE_SECONDS)) if owned else None)

    def __call__(self, tasks, directory, progress=None):
        watch = _Watch(self.client)
        try:
            self._check_imports(watch, directory)
            futures = {self.client.submit(write_shard, task, directory, pure=False): task
                       for task in tasks}
            try:
                self._wait(watch, futures, progress)
            except DaskClusterError:
                futures.clear()         # released when collected: no call to the scheduler
                raise
            finally:
                if futures:
                    self.client.cancel(list(futures))
        finally:
            if self._close is not None:
                self._close()

    def _check_imports(self, watch, directory):
        """Every worker imports what the tasks need, or a DaskClusterError names it."""
        modules = _task_modules(directory)
        try:
            answers = self.client.run(exec, "\n".join(f"import {m}" for m in modules),
                                      on_error="return", callback_timeout=ANSWER_SECONDS)
        except TimeoutError:
            raise watch.error(f"has not answered for {ANSWER_SECONDS} s") from None
        except (OSError, *_CANCELLED) as e:
            raise watch.lost(e) from None
        watch.seen |= set(answers)
        failed = {worker: answer for worker, answer in answers.items()
                  if isinstance(answer, BaseException)}
        if failed:
            worker, error = sorted(failed.items())[0]
            raise DaskClusterError(
                f"Dask worker {worker}{f' (and {len(failed) - 1} more)' if len(failed) > 1 else ''}"
                f" of the scheduler at {watch.address} cannot import what the tasks need "
                f"({type(error).__name__}: {error}): install tf1compat on every worker (with "
                f"the extra of the output's filesystem, e.g. tf1compat[s3]); nothing was "
                "committed", scheduler=watch.address, workers_lost=[])

    @staticmethod
    def _wait(watch, futures, progress):
        finished = queue.SimpleQueue()
        for future in futures:
            future.add_done_callback(finished.put)     # called in a thread of Dask's
        for _ in range(len(futures)):
            while True:
                try:
                    future = finished.get(timeout=_POLL_SECONDS)
                    break
                except queue.Empty:
                    watch.check()
            task = futures[future]
            try:
                future.result()             # a task's error, raised with its own type
            except _CANCELLED as e:
                raise watch.lost(e) from None
            except Exception as e:
                if type(e).__name__ == "KilledWorker":
                    raise watch.error(
                        f"lost every worker that ran shard task {task.file_name} ({e}): "
                        "a worker that cannot import what a task needs dies on it") from e
                missing = _import_error(e)
                if missing is not None and not hasattr(e, "task"):  # not the task's own
                    raise watch.error(
                        f"could not load shard task {task.file_name} ({type(missing).__name__}"
                        f": {missing}): the scheduler and every worker need the modules the "
                        "tasks use") from e
                raise
            if progress is not None:
                progress(len(task.inputs))
