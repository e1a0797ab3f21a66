"""Staging and commit: the shards of one run are written into a hidden folder inside the
output folder and moved into place together, as one journaled step.

A run killed outright leaves its staging folder behind; the next run of the same plan
reuses its completed tasks, any other run into the folder clears it, and a run killed
while committing is finished by the next one. One live conversion per output folder:
each run locks its staging folder (a lock that dies with its process) and then looks
for another live one, so of two runs started at once at most one goes ahead.
"""

import contextlib
import glob
import json
import os
import random
import shutil
import socket
import sys
import time
import warnings
from collections import Counter

with warnings.catch_warnings():     # no flock (not Windows either): its soft lock, which
    warnings.filterwarnings(        # knows dead owners, is what we want; no warning
        "ignore", "only soft file lock is available", UserWarning)
    import filelock

from tf1compat.convert.local import LocalRunner
from tf1compat.convert.plan import read_result, write_json
from tf1compat.records._files import atomic_output
from tf1compat.records._progress import progress_bar
from tf1compat.records.committed import JOURNAL as _JOURNAL
from tf1compat.records.committed import MANIFEST, STAGING_PREFIX

_LOCK = ".lock"
_OWNER = ".owner.json"
_CHUNK = 1 << 20
_WAIT_SECONDS = 0.5         # wait=True: how often the output folder is looked at again


def _lock(path):
    """A held lock on ``path`` (created if missing), or None if another live process
    holds it. The lock dies with its process."""
    lock = filelock.FileLock(path)
    try:
        lock.acquire(timeout=0)
    except filelock.Timeout:
        return None
    return lock


def _roll_forward(staging):
    """Finish the commit journaled in ``staging`` (if any), then remove the folder."""
    journal = os.path.join(staging, _JOURNAL)
    if os.path.exists(journal):
        with open(journal) as f:
            commit = json.load(f)
        output_dir = os.path.dirname(staging)
        with contextlib.suppress(FileNotFoundError):    # a copied object store's, now stale
            os.remove(os.path.join(output_dir, MANIFEST))
        for name in commit["move"]:
            with contextlib.suppress(FileNotFoundError):  # moved before the crash
                os.replace(os.path.join(staging, name), os.path.join(output_dir, name))
        for name in commit["remove"]:
            with contextlib.suppress(FileNotFoundError):
                os.remove(os.path.join(output_dir, name))
    shutil.rmtree(staging, ignore_errors=True)


def _live_stagings(output_dir, own):
    """The staging folders in ``output_dir`` other than ``own`` that a live run holds;
    those of dead runs are finished (a journaled commit) or removed on the way."""
    with os.scandir(output_dir) as entries:
        stagings = sorted(e.path for e in entries if e.name.startswith(STAGING_PREFIX)
                          and e.is_dir(follow_symlinks=False) and e.path != own)
    live = []
    for staging in stagings:
        try:
            lock = _lock(os.path.join(staging, _LOCK))
        except FileNotFoundError:   # another run cleared it first
            continue
        if lock is None:
            live.append(staging)
            continue
        try:
            _roll_forward(staging)
        finally:
            lock.release()
    return live


def _describe_owner(staging):
    """Who holds ``staging``: its owner file's work, process, host and start time."""
    try:
        with open(os.path.join(staging, _OWNER)) as f:
            owner = json.load(f)
    except (OSError, ValueError):       # between its lock and its owner file
        return f"staging folder {staging}"
    started = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(owner["started"]))
    return (f"{owner['what']}, pid {owner['pid']} on {owner['host']}, started {started}; "
            f"staging folder {staging}")


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

    Entering it locks it (creating it and ``output_dir`` if missing, or reusing what a
    killed run of the same plan left) and clears the staging folders of dead runs
    (finishing their commit if they were in one). While another live conversion
    writes into ``output_dir``, whatever its plan, entering raises ``BlockingIOError``
    naming it, or with ``wait=True`` waits for it to end. ``what`` describes this run
    to a second one. :meth:`write` runs the tasks not already completed;
    :meth:`commit` moves the shards and extra files into ``output_dir``. Leaving the
    block removes the folder, so without a commit (an exception, Ctrl-C) ``output_dir``
    is as it was (gone, if this run created it); only a run killed outright (or a
    commit failing midway) leaves it behind, for the next run to reuse, clear (or
    finish). ``work_dir`` (here the staging folder itself) is where a plan prepares its
    inputs.
    """

    def __init__(self, output_dir, key, *, wait=False, what="a conversion"):
        self.output_dir = os.path.abspath(os.fspath(output_dir))
        self.path = os.path.join(self.output_dir, STAGING_PREFIX + key[:16])
        self.work_dir = self.path
        self.wait = wait
        self.what = what
        self._lock = None
        self._created_output = False    # the output folder is ours to remove if unused
        self._committed = False

    def __enter__(self):
        real_output = os.path.realpath(self.output_dir)     # a link to a missing folder too
        self._created_output = not os.path.isdir(real_output)
        try:
            os.makedirs(real_output, exist_ok=True)
            while not self._enter_once():
                time.sleep(_WAIT_SECONDS * random.uniform(0.5, 1.5))   # apart from a twin
            return self
        except BaseException:
            self._remove_unused_output()
            raise

    def _remove_unused_output(self):
        """Remove the output folder if this run created it and it stayed empty."""
        if self._created_output and not self._committed:
            with contextlib.suppress(OSError):
                os.rmdir(os.path.realpath(self.output_dir))

    def _enter_once(self):
        """Lock this run's staging folder, or refuse naming the live conversion that
        writes into the output folder; False when that one is to be waited for."""
        existed = os.path.isdir(self.path)
        os.makedirs(self.path, exist_ok=True)
        self._lock = _lock(os.path.join(self.path, _LOCK))   # recreates a cleared folder
        if self._lock is None:                  # a live run of this very plan
            live = [self.path]
        else:
            live = _live_stagings(self.output_dir, own=self.path)
            if live:
                self._unlock()
                if not existed:
                    shutil.rmtree(self.path, ignore_errors=True)
        if live:
            if self.wait:
                return False
            self._refuse(live[0])
        if os.path.exists(os.path.join(self.path, _JOURNAL)):
            _roll_forward(self.path)          # a killed run of this plan was committing
            self._unlock()
            return self._enter_once()
        write_json(os.path.join(self.path, _OWNER), {
            "what": self.what, "pid": os.getpid(), "host": socket.gethostname(),
            "started": time.time()})
        return True

    def _refuse(self, staging):
        raise BlockingIOError(
            f"{self.output_dir}: another tf1compat conversion is writing into this folder "
            f"({_describe_owner(staging)}); wait for it to end (wait=True, --wait) or "
            "write elsewhere")

    def __exit__(self, exc_type, exc_value, traceback_):
        try:
            # gone after a commit; kept if a journaled commit failed midway (an OSError
            # while moving): the commit is decided, the next run finishes it
            if not os.path.exists(os.path.join(self.path, _JOURNAL)):
                shutil.rmtree(self.path, ignore_errors=True)
        finally:
            self._unlock()
        self._remove_unused_output()

    def _unlock(self):
        if self._lock is not None:
            self._lock.release()
            self._lock = None

    def write(self, tasks, runner=None, *, desc=None, unit="rec", quiet=False):
        """Run the tasks not completed by an earlier run with ``runner`` (default: a
        :class:`~tf1compat.convert.local.LocalRunner` on all cores); returns every
        task's ShardResult, in order. Shows a progress bar (inputs done) on a terminal,
        unless ``quiet`` or the environment sets ``TQDM_DISABLE``."""
        repeated = [n for n, count in Counter(t.file_name for t in tasks).items() if count > 1]
        if repeated:
            raise ValueError(f"shard tasks must write distinct files; repeated: "
                             f"{sorted(repeated)}")
        done = {task.file_name for task in tasks if read_result(self.path, task)}
        pending = [task for task in tasks if task.file_name not in done]
        total = sum(len(task.inputs) for task in tasks)
        with progress_bar(total=total, initial=total - sum(len(t.inputs) for t in pending),
                          unit=unit, file=sys.stderr, desc=desc,
                          **({"disable": True} if quiet else {})) as bar:
            if pending:
                (runner or LocalRunner())(pending, self.path, bar.update)
            bar.update(total - bar.n)         # runners that cannot report (Beam) end here
        results = [read_result(self.path, task) for task in tasks]
        missing = [task.file_name for task, result in zip(tasks, results, strict=True)
                   if result is None]
        if missing:
            raise RuntimeError(f"the runner finished without writing {missing[:5]} "
                               f"({len(missing)} task(s)) into {self.path}")
        return results

    def commit(self, tasks, extra_files=None, stale=()):
        """Concatenate the parts of each shard, then move the shards and ``extra_files``
        (``{name: text}``) into the output folder and remove the files there matching
        the glob patterns ``stale`` (listed now, under the lock: earlier outputs this
        run replaces), as one journaled step; removes the staging folder."""
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
            with atomic_output(os.path.join(self.path, name)) as temporary, \
                    open(temporary, "w", encoding="utf-8", errors="surrogateescape") as f:
                f.write(text)
        moves = [*shards, *(extra_files or {})]
        found = {os.path.basename(path) for pattern in stale
                 for path in glob.glob(os.path.join(glob.escape(self.output_dir), pattern))}
        write_json(os.path.join(self.path, _JOURNAL),
                   {"move": moves, "remove": sorted(found - set(moves))})
        self._committed = True
        _roll_forward(self.path)
