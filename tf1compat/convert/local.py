"""The local runner: shard tasks in fresh worker processes on this machine.

Each worker is ``python -m tf1compat.convert._worker`` with a pipe each way; tasks reach
it pickled by cloudpickle, so functions from a script without a main guard, ``-c``,
stdin or a notebook work, and it never re-runs the caller's ``__main__``. A worker
exits as soon as its task pipe closes, which the kernel does when the caller dies,
even by SIGKILL. (loky, a maintained cloudpickle process pool, was measured for this
job: it needs no main guard either, but its workers outlived a SIGKILLed caller by
minutes, still writing.)
"""

import contextlib
import os
import pickle
import queue
import subprocess
import sys
import threading
import time
import traceback
from collections.abc import Callable, Sequence
from multiprocessing.connection import Connection, wait
from typing import Any, NoReturn

import cloudpickle

from tf1compat import _process_groups as process_groups
from tf1compat._checks import check_non_negative_int
from tf1compat.convert.plan import ShardTask, write_shard

_PROGRESS_SECONDS = 0.2     # how often a worker reports its progress


class _WorkerTraceback(Exception):
    """The traceback of an exception raised in a worker process (its ``__cause__``)."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text

    def __str__(self) -> str:
        return self.text


class _Worker:
    """A fresh ``python -m tf1compat.convert._worker`` with a pipe each way.

    It never imports the caller's ``__main__`` (so scripts without a main guard, ``-c``,
    stdin and notebooks work) and exits as soon as its task pipe closes, which the
    kernel does when this process dies, even by SIGKILL.
    """

    def __init__(self) -> None:
        task_read, task_write = os.pipe()
        result_read, result_write = os.pipe()
        package_root = os.path.dirname(os.path.dirname(os.path.dirname(__file__)))
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [package_root,
                                                          env.get("PYTHONPATH")]))
        try:
            self.process = process_groups.start(
                [sys.executable, "-m", "tf1compat.convert._worker"],
                stdin=task_read, stdout=result_write, env=env)
        except BaseException:
            os.close(task_write)
            os.close(result_read)
            raise
        finally:
            os.close(task_read)
            os.close(result_write)
        self.tasks = Connection(task_write, readable=False)
        self.results = Connection(result_read, writable=False)
        self.tasks.send_bytes(pickle.dumps(list(sys.path)))
        self.running: list[int] = []     # indices of the tasks sent and not finished

    def send(self, index: int, task: ShardTask, directory: str) -> None:
        try:
            message = pickle.dumps((index, directory, cloudpickle.dumps(task)))
        except Exception as e:
            raise TypeError(f"shard task {task.file_name!r} cannot be sent to a worker "
                            f"process: {e}; make its inputs and functions picklable, "
                            "or run it in this process (workers=1)") from e
        self.tasks.send_bytes(message)
        self.running.append(index)

    def stop(self) -> None:
        """Close the pipes (the worker exits) and reap the process, then end what is left
        of its process group (a process a task's function started, the worker itself if
        it lingers)."""
        self.tasks.close()
        self.results.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=5)
        process_groups.end(self.process, grace=0)

    def describe_death(self) -> str:
        try:
            code = self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            return f"conversion worker (pid {self.process.pid}) stopped answering"
        how = f"signal {-code}" if code < 0 else f"exit code {code}"
        return f"conversion worker (pid {self.process.pid}) died ({how})"


def _receive(worker: _Worker, tasks: Sequence[ShardTask]) -> tuple[Any, ...]:
    """The next message of ``worker``; a RuntimeError naming its task if it died."""
    try:
        message: tuple[Any, ...] = pickle.loads(worker.results.recv_bytes())
        return message
    except (EOFError, OSError) as e:
        names = [tasks[i].file_name for i in worker.running]
        raise RuntimeError(f"{worker.describe_death()} while writing {names}") from e


def _raise_task_error(message: tuple[Any, ...], tasks: Sequence[ShardTask]) -> NoReturn:
    _, index, pickled, text = message
    error = None
    if pickled is not None:
        with contextlib.suppress(Exception):
            error = pickle.loads(pickled)
    if not isinstance(error, BaseException):
        error = RuntimeError(f"writing {tasks[index].file_name} failed in a worker process")
    raise error from _WorkerTraceback(text)


class LocalRunner:
    """Runs shard tasks in ``workers`` worker processes on this machine (default: one
    per usable core); with ``workers`` 0 or 1, or a single task, in this process.

    Workers are fresh interpreters that receive the tasks pickled with cloudpickle, so
    functions defined in a script or notebook work, and they never re-run the calling
    script. Each worker gets one task ahead; the first error stops all of them and is
    raised here with its original type (the worker's traceback as its cause).
    """

    def __init__(self, workers: int | None = None) -> None:
        workers = check_non_negative_int("LocalRunner", "workers", workers, allow_none=True)
        self.workers = default_workers() if workers is None else workers

    def __call__(self, tasks: Sequence[ShardTask], directory: str,
                 progress: Callable[[int], object] | None = None) -> None:
        if self.workers <= 1 or len(tasks) <= 1:
            for task in tasks:
                write_shard(task, directory, progress)
            return
        workers: list[_Worker] = []
        try:
            for _ in range(min(self.workers, len(tasks))):
                workers.append(_Worker())
            self._run(workers, list(tasks), directory, progress)
        finally:
            for worker in workers:
                worker.stop()

    @staticmethod
    def _run(workers: list[_Worker], tasks: list[ShardTask], directory: str,
             progress: Callable[[int], object] | None) -> None:
        queued = iter(enumerate(tasks))

        def send_next(worker: _Worker) -> None:
            item = next(queued, None)
            if item is not None:
                worker.send(*item, directory)

        for worker in workers * 2:            # one task running and one waiting each
            send_next(worker)
        by_connection: dict[object, _Worker] = {worker.results: worker for worker in workers}
        while any(worker.running for worker in workers):
            for connection in wait([w.results for w in workers if w.running]):
                worker = by_connection[connection]
                message = _receive(worker, tasks)
                if message[0] == "error":
                    _raise_task_error(message, tasks)
                if message[0] == "progress":
                    if progress is not None:
                        progress(message[1])
                else:
                    worker.running.remove(message[1])
                    send_next(worker)


def default_workers() -> int:
    """The number of cores this process may use."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def run_worker(tasks_in: Connection, results_out: Connection) -> None:
    """The worker loop of :mod:`tf1compat.convert._worker`: the first message is
    the caller's ``sys.path``, then ``(index, directory, pickled task)``. A reader thread
    ends the process as soon as the task pipe closes (the caller finished or died)."""
    inbox: queue.SimpleQueue[bytes] = queue.SimpleQueue()

    def read_until_closed() -> None:
        while True:
            try:
                inbox.put(tasks_in.recv_bytes())
            except (EOFError, OSError):
                os._exit(0)

    def send(*message: object) -> None:
        try:
            results_out.send_bytes(pickle.dumps(message))
        except OSError:         # the caller stopped listening: it finished or died
            os._exit(0)

    threading.Thread(target=read_until_closed, daemon=True).start()
    sys.path[:] = pickle.loads(inbox.get())
    while True:
        index, directory, pickled_task = pickle.loads(inbox.get())
        pending = [0, time.monotonic()]     # inputs not reported yet, time of last report

        def report(n: int, pending: list[float] = pending) -> None:
            pending[0] += n
            if time.monotonic() - pending[1] >= _PROGRESS_SECONDS:
                send("progress", pending[0])
                pending[:] = [0, time.monotonic()]

        try:
            write_shard(pickle.loads(pickled_task), directory, report)
        except BaseException as e:  # every failure goes back to the caller
            try:
                pickled = cloudpickle.dumps(e)
            except Exception:
                pickled = None
            send("error", index, pickled, traceback.format_exc())
            continue
        send("progress", pending[0])
        send("done", index)
