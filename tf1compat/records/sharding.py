"""Conversion as a plan of shard tasks, without TensorFlow.

A plan is a deterministic list of :class:`ShardTask`: the output file, the references to
its inputs (file names, record indices, items) and how to turn them into records. Big
shards are cut into parts (uncompressed TFRecord framing concatenates into the same
bytes one writer would produce), so that every core has work even for one output file.
:func:`write_shard` writes one task to a temporary name and renames it, so a retried
task writes the same bytes. A :class:`Staging` folder inside the output folder collects
the shards of one run: a run killed outright leaves it behind, the next run with the same
plan reuses its completed tasks, any other run clears it; :meth:`Staging.commit` moves
everything into place at once, or, after a crash in the middle, the next run finishes it.

Runners run the tasks: :class:`LocalRunner` (processes on this machine, see
:mod:`tf1compat.records._shard_worker`) here, Apache Beam in :mod:`tf1compat.convert`.
A runner is any callable ``runner(tasks, directory, progress)`` that calls
``write_shard(task, directory)`` for each task, anywhere; ``progress(n)``, if it can,
after each ``n`` inputs. :func:`tf1compat.records.tfrecord.write_sharded`, the CIFAR and
the image-folder converters are plans run this way.
"""

import contextlib
import dataclasses
import errno
import fcntl
import hashlib
import json
import marshal
import os
import pickle
import queue
import shutil
import subprocess
import sys
import threading
import time
import traceback
from collections import Counter
from collections.abc import Callable
from multiprocessing.connection import Connection, wait

import cloudpickle
from tqdm import tqdm

from tf1compat._checks import check_non_negative_int
from tf1compat.records._files import atomic_output
from tf1compat.records.tfrecord import TFRecordWriter

STAGING_PREFIX = ".tf1compat-staging-"
_LOCK = ".lock"
_JOURNAL = ".commit.json"
_RESULT_SUFFIX = ".result.json"
_CHUNK = 1 << 20
_PROGRESS_SECONDS = 0.2     # how often a worker reports its progress


@dataclasses.dataclass(frozen=True)
class SkippedInput:
    """An input a task left out (``on_error="skip"``): its reference and why."""

    reference: str
    reason: str

    def __str__(self):
        return f"{self.reference} ({self.reason})"


@dataclasses.dataclass(frozen=True)
class ShardTask:
    """One output shard, or one part of it: everything a worker needs, picklable.

    ``inputs`` is a sequence (tuple, list, range) of references, one per input;
    ``to_records(inputs)`` yields the records (``bytes``) of the task in order, or a
    :class:`SkippedInput` for an input it leaves out; it must give the same records
    every time it runs. Part ``p`` of ``num_parts`` of shard ``name`` is written as
    ``name.part-0000p-of-0000N`` and the parts are concatenated at the commit.
    """

    name: str
    inputs: tuple
    to_records: Callable
    part: int = 0
    num_parts: int = 1
    compression: str | None = None

    @property
    def file_name(self):
        """The name this task writes in the staging folder."""
        if self.num_parts == 1:
            return self.name
        return f"{self.name}.part-{self.part:05d}-of-{self.num_parts:05d}"


@dataclasses.dataclass(frozen=True)
class ShardResult:
    """What :func:`write_shard` wrote: ``records`` records, ``size_bytes`` bytes, and the
    inputs it ``skipped``."""

    file_name: str
    records: int
    size_bytes: int
    skipped: tuple = ()


def build_tasks(name, inputs, to_records, *, max_part_inputs, compression=None):
    """The tasks writing ``inputs`` (a sequence that slices: tuple, list, range) into
    shard ``name``: parts of at most ``max_part_inputs`` inputs (one part for a
    compressed shard, whose stream cannot be concatenated into the same bytes)."""
    size = max(len(inputs), 1) if compression else max_part_inputs
    starts = range(0, len(inputs), size) or [0]     # an empty shard is one empty part
    return [ShardTask(name, inputs[start:start + size], to_records, part, len(starts),
                      compression) for part, start in enumerate(starts)]


def write_shard(task, directory, progress=None):
    """Write ``task``'s records to ``directory/task.file_name`` (a temporary name first,
    renamed when complete) and record the result beside it; returns the ShardResult.
    ``progress(n)`` is called after each input."""
    path = os.path.join(directory, task.file_name)
    skipped = []
    with TFRecordWriter(path, task.compression) as writer:
        for record in task.to_records(task.inputs):
            if isinstance(record, SkippedInput):
                skipped.append(record)
            else:
                writer.write(record)
            if progress is not None:
                progress(1)
    result = ShardResult(task.file_name, writer.count, os.path.getsize(path), tuple(skipped))
    _write_json(path + _RESULT_SUFFIX, {"records": result.records,
                                        "size_bytes": result.size_bytes,
                                        "skipped": [[s.reference, s.reason] for s in skipped]})
    return result


def _read_result(directory, task):
    """The task's ShardResult if it completed in ``directory`` (its file, or the shard
    its parts were concatenated into, is still there), else None."""
    path = os.path.join(directory, task.file_name)
    if not (os.path.exists(path) or os.path.exists(os.path.join(directory, task.name))):
        return None
    try:
        with open(path + _RESULT_SUFFIX) as f:
            data = json.load(f)
    except FileNotFoundError:
        return None
    return ShardResult(task.file_name, data["records"], data["size_bytes"],
                       tuple(SkippedInput(*s) for s in data["skipped"]))


def _write_json(path, data):
    """Write ``data`` as JSON to ``path`` atomically."""
    with atomic_output(path) as temporary, open(temporary, "w") as f:
        json.dump(data, f)


def plan_key(*parts):
    """A hex digest identifying a plan: of ``parts`` (names, settings, the identity of
    the inputs) and, for functions among them, their code, so that an edited encode
    function is not mistaken for the one whose shards a killed run left."""
    digest = hashlib.sha256()
    for part in parts:
        digest.update(cloudpickle.dumps(part, protocol=5))
        code = getattr(part, "__code__", None)
        if code is not None:
            digest.update(marshal.dumps(code))
    return digest.hexdigest()


# ------------------------------------------------------------------------- staging

def _lock(path):
    """An open descriptor holding an exclusive lock on ``path`` (created if missing),
    or None if another live process holds it. The lock dies with its process."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    return fd


def _roll_forward(staging):
    """Finish the commit journaled in ``staging`` (if any), then remove the folder."""
    journal = os.path.join(staging, _JOURNAL)
    if os.path.exists(journal):
        with open(journal) as f:
            commit = json.load(f)
        output_dir = os.path.dirname(staging)
        for name in commit["move"]:
            with contextlib.suppress(FileNotFoundError):  # moved before the crash
                os.replace(os.path.join(staging, name), os.path.join(output_dir, name))
        for name in commit["remove"]:
            with contextlib.suppress(FileNotFoundError):
                os.remove(os.path.join(output_dir, name))
    shutil.rmtree(staging, ignore_errors=True)


def _clear_dead_stagings(output_dir, keep):
    """Finish or remove the staging folders in ``output_dir`` that no live run holds,
    except ``keep``."""
    with os.scandir(output_dir) as entries:
        stagings = [e.path for e in entries if e.name.startswith(STAGING_PREFIX)
                    and e.is_dir(follow_symlinks=False) and e.path != keep]
    for staging in stagings:
        with contextlib.suppress(FileNotFoundError):   # another run cleared it first
            fd = _lock(os.path.join(staging, _LOCK))
            if fd is not None:
                try:
                    _roll_forward(staging)
                finally:
                    os.close(fd)


def _concatenate(sources, target):
    """Concatenate ``sources`` into ``target`` (written to a temporary name, then renamed)."""
    with atomic_output(target) as temporary, open(temporary, "wb") as out:
        for source in sources:
            with open(source, "rb") as f:
                shutil.copyfileobj(f, out, _CHUNK)
        out.flush()
        os.fsync(out.fileno())


class Staging:
    """The hidden folder ``output_dir/.tf1compat-staging-<key>`` of one conversion.

    Entering it clears the staging folders of dead runs (finishing their commit if
    they were in one), then creates or reuses this plan's folder and locks it: a
    second live run of the same plan into the same folder gets ``BlockingIOError``.
    :meth:`write` runs the tasks not already completed there; :meth:`commit` moves
    the shards and ``extra_files`` into ``output_dir`` and removes ``stale`` files.
    Leaving the block removes the folder, so without a commit (an exception, Ctrl-C)
    ``output_dir`` is as it was; only a run killed outright (or a commit failing
    midway) leaves it behind, for the next run to reuse, clear (or finish).
    """

    def __init__(self, output_dir, key):
        self.output_dir = os.path.abspath(os.fspath(output_dir))
        self.path = os.path.join(self.output_dir, STAGING_PREFIX + key[:16])
        self._lock_fd = None

    def __enter__(self):
        _clear_dead_stagings(self.output_dir, keep=self.path)
        self._lock_own()
        if os.path.exists(os.path.join(self.path, _JOURNAL)):
            _roll_forward(self.path)          # a killed run of this plan was committing
            self._unlock()
            self._lock_own()
        return self

    def _lock_own(self):
        os.makedirs(self.path, exist_ok=True)
        self._lock_fd = _lock(os.path.join(self.path, _LOCK))
        if self._lock_fd is None:
            raise BlockingIOError(
                errno.EWOULDBLOCK, f"another tf1compat conversion is writing the same "
                f"outputs into {self.output_dir} (its staging folder {self.path} is "
                "locked); wait for it to finish")

    def __exit__(self, exc_type, exc_value, traceback_):
        try:
            # gone after a commit; kept if a journaled commit failed midway (an OSError
            # while moving): the commit is decided, the next run finishes it
            if not os.path.exists(os.path.join(self.path, _JOURNAL)):
                shutil.rmtree(self.path, ignore_errors=True)
        finally:
            self._unlock()

    def _unlock(self):
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None

    def write(self, tasks, runner=None, *, desc=None, unit="rec"):
        """Run the tasks not completed by an earlier run with ``runner`` (default: a
        :class:`LocalRunner` on all cores); returns every task's ShardResult, in order.
        Shows a progress bar (inputs done) on a terminal."""
        repeated = [n for n, count in Counter(t.file_name for t in tasks).items() if count > 1]
        if repeated:
            raise ValueError(f"shard tasks must write distinct files; repeated: "
                             f"{sorted(repeated)}")
        done = {task.file_name for task in tasks if _read_result(self.path, task)}
        pending = [task for task in tasks if task.file_name not in done]
        total = sum(len(task.inputs) for task in tasks)
        with tqdm(total=total, initial=total - sum(len(t.inputs) for t in pending),
                  unit=unit, disable=None, file=sys.stderr, desc=desc) as bar:
            if pending:
                (runner or LocalRunner())(pending, self.path, bar.update)
            bar.update(total - bar.n)         # runners that cannot report (Beam) end here
        results = [_read_result(self.path, task) for task in tasks]
        missing = [task.file_name for task, result in zip(tasks, results, strict=True)
                   if result is None]
        if missing:
            raise RuntimeError(f"the runner finished without writing {missing[:5]} "
                               f"({len(missing)} task(s)) into {self.path}")
        return results

    def commit(self, tasks, extra_files=None, stale=()):
        """Concatenate the parts of each shard, then move the shards and ``extra_files``
        (``{name: text}``) into the output folder and remove the ``stale`` file names
        there, as one journaled step; removes the staging folder."""
        shards = {}
        for task in tasks:
            shards.setdefault(task.name, []).append(task.file_name)
        for name, parts in shards.items():
            target = os.path.join(self.path, name)
            if parts != [name] and not os.path.exists(target):
                _concatenate([os.path.join(self.path, p) for p in parts], target)
                for part in parts:
                    os.remove(os.path.join(self.path, part))
        for name, text in (extra_files or {}).items():
            # UTF-8; a name that is not (a POSIX file name's bytes) is written as it was
            with open(os.path.join(self.path, name), "w", encoding="utf-8",
                      errors="surrogateescape") as f:
                f.write(text)
        moves = [*shards, *(extra_files or {})]
        _write_json(os.path.join(self.path, _JOURNAL),
                    {"move": moves, "remove": [n for n in stale if n not in moves]})
        _roll_forward(self.path)


# --------------------------------------------------------------------- local runner

class _WorkerTraceback(Exception):
    """The traceback of an exception raised in a worker process (its ``__cause__``)."""

    def __init__(self, text):
        super().__init__(text)
        self.text = text

    def __str__(self):
        return self.text


class _Worker:
    """A fresh ``python -m tf1compat.records._shard_worker`` with a pipe each way.

    It never imports the caller's ``__main__`` (so scripts without a main guard, ``-c``,
    stdin and notebooks work) and exits as soon as its task pipe closes, which the
    kernel does when this process dies, even by SIGKILL.
    """

    def __init__(self):
        task_read, task_write = os.pipe()
        result_read, result_write = os.pipe()
        package_root = os.path.dirname(os.path.dirname(os.path.dirname(__file__)))
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [package_root,
                                                          env.get("PYTHONPATH")]))
        try:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "tf1compat.records._shard_worker"],
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
        self.running = []           # indices of the tasks sent and not finished

    def send(self, index, task, directory):
        try:
            message = pickle.dumps((index, directory, cloudpickle.dumps(task)))
        except Exception as e:
            raise TypeError(f"shard task {task.file_name!r} cannot be sent to a worker "
                            f"process: {e}; make its inputs and functions picklable, "
                            "or run it in this process (workers=1)") from e
        self.tasks.send_bytes(message)
        self.running.append(index)

    def stop(self):
        """Close the pipes (the worker exits) and reap the process; kill it if it lingers."""
        self.tasks.close()
        self.results.close()
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()

    def describe_death(self):
        try:
            code = self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            return f"conversion worker (pid {self.process.pid}) stopped answering"
        how = f"signal {-code}" if code < 0 else f"exit code {code}"
        return f"conversion worker (pid {self.process.pid}) died ({how})"


def _receive(worker, tasks):
    """The next message of ``worker``; a RuntimeError naming its task if it died."""
    try:
        return pickle.loads(worker.results.recv_bytes())
    except (EOFError, OSError) as e:
        names = [tasks[i].file_name for i in worker.running]
        raise RuntimeError(f"{worker.describe_death()} while writing {names}") from e


def _raise_task_error(message, tasks):
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

    def __init__(self, workers=None):
        workers = check_non_negative_int("LocalRunner", "workers", workers, allow_none=True)
        self.workers = default_workers() if workers is None else workers

    def __call__(self, tasks, directory, progress=None):
        if self.workers <= 1 or len(tasks) <= 1:
            for task in tasks:
                write_shard(task, directory, progress)
            return
        workers = []
        try:
            for _ in range(min(self.workers, len(tasks))):
                workers.append(_Worker())
            self._run(workers, list(tasks), directory, progress)
        finally:
            for worker in workers:
                worker.stop()

    @staticmethod
    def _run(workers, tasks, directory, progress):
        queued = iter(enumerate(tasks))

        def send_next(worker):
            item = next(queued, None)
            if item is not None:
                worker.send(*item, directory)

        for worker in workers * 2:            # one task running and one waiting each
            send_next(worker)
        by_connection = {worker.results: worker for worker in workers}
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


def default_workers():
    """The number of cores this process may use."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def run_worker(tasks_in, results_out):
    """The worker loop of :mod:`tf1compat.records._shard_worker`: the first message is
    the caller's ``sys.path``, then ``(index, directory, pickled task)``. A reader thread
    ends the process as soon as the task pipe closes (the caller finished or died)."""
    inbox = queue.SimpleQueue()

    def read_until_closed():
        while True:
            try:
                inbox.put(tasks_in.recv_bytes())
            except (EOFError, OSError):
                os._exit(0)

    def send(*message):
        try:
            results_out.send_bytes(pickle.dumps(message))
        except OSError:         # the caller stopped listening: it finished or died
            os._exit(0)

    threading.Thread(target=read_until_closed, daemon=True).start()
    sys.path[:] = pickle.loads(inbox.get())
    while True:
        index, directory, pickled_task = pickle.loads(inbox.get())
        pending = [0, time.monotonic()]     # inputs not reported yet, time of last report

        def report(n, pending=pending):
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
