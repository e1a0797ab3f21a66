"""Staging and commit into an object store (``s3://``, ``gs://``, any fsspec URL), which
has no rename and no lock: the counterpart of :mod:`.staging` for output URLs.

- Each task's shard is uploaded as one object under the hidden prefix
  ``OUTPUT/.tf1compat-staging-<plan>/`` (an object appears whole or not at all), with
  its result beside it. ``*`` in a glob never crosses ``/``, so neither slim's
  ``NAME_SPLIT_*`` patterns nor a ``tf.data`` glob of the final names see them.
- The commit concatenates the parts of each shard (in a local file, uploaded as one
  object) and writes the extra files, all still under the staging prefix; then the
  journal ``.commit.json`` (what to copy, what stale outputs to remove), which decides
  the commit; then removes the manifest ``OUTPUT/.tf1compat-manifest.json`` of the
  previous commit, copies each staged object to its final name and deletes it, removes
  the stale outputs, and writes the new manifest last: the folder's committed files and
  their sizes (this commit's, and the earlier commits' it did not replace).
  Every step can be repeated, so a run killed after the journal is finished by the
  next conversion into ``OUTPUT``; one killed before it left only staged objects.
- A prefix of final names appears one object at a time: between the first copy and
  the manifest a glob can see some shards of the new set. ``tf1compat``'s readers
  check the journal and the manifest (:mod:`tf1compat.records.committed`), and
  ``tfrecord.committed_files`` does it for yours.
- Liveness without locks: a run's ``.owner.json`` holds a lease it renews every
  ``_LEASE_SECONDS / 3`` seconds; staging whose lease ran out, or whose owner was a
  process of this machine that is gone, belongs to a dead run (resumed by a run of the
  same plan, finished if journaled, else removed). An object store has no atomic
  create-if-absent that fsspec offers for every store, so a run looks at the prefix
  again after writing its owner and withdraws if another live run is there: of two
  runs started at once, at most one goes ahead (both may withdraw; with ``wait`` they
  try again at random times).
"""

import contextlib
import json
import os
import random
import shutil
import socket
import tempfile
import threading
import time

from tf1compat.convert.plan import write_json
from tf1compat.convert.scratch import scratch_folder
from tf1compat.convert.staging import _JOURNAL, _OWNER, _WAIT_SECONDS, STAGING_PREFIX, Staging
from tf1compat.records import _fs
from tf1compat.records.committed import MANIFEST

_LEASE_SECONDS = 30.0
_CHUNK = 1 << 20


def _read_json(fs, path):
    """The JSON object ``path`` holds, or None if there is none (or it is not JSON)."""
    try:
        return json.loads(fs.cat_file(path))
    except (FileNotFoundError, ValueError):
        return None


def _remove(fs, path, recursive=False):
    try:
        fs.rm(path, recursive=recursive)
    except FileNotFoundError:
        pass


def read_manifest(output_url):
    """The manifest of the last commit into ``output_url`` (``{"files": {name: size},
    ...}``), or None while there is none (a commit not finished, or none yet)."""
    fs, base = _fs.filesystem(output_url)
    fs.invalidate_cache()
    return _read_json(fs, f"{base.rstrip('/')}/{MANIFEST}")


def _roll_forward(fs, staging, output):
    """Finish the commit journaled in ``staging`` (if any), then remove its objects."""
    commit = _read_json(fs, f"{staging}/{_JOURNAL}")
    if commit is not None:
        _remove(fs, f"{output}/{MANIFEST}")
        for name in commit["move"]:
            source = f"{staging}/{name}"
            if fs.exists(source):       # else copied and deleted before a crash
                fs.copy(source, f"{output}/{name}")
                _remove(fs, source)
        for name in commit["remove"]:
            _remove(fs, f"{output}/{name}")
        fs.pipe_file(f"{output}/{MANIFEST}", json.dumps(
            {"files": commit["files"], "plan": commit["plan"], "committed": time.time()},
            indent=1).encode())
    _remove(fs, staging, recursive=True)
    fs.invalidate_cache()


def _alive(owner):
    """Whether the run that wrote ``owner`` may still live: its lease runs, and if it
    was a process of this machine, that process exists."""
    if owner.get("expires", 0) <= time.time():
        return False
    if owner.get("host") == socket.gethostname() and os.name == "posix":
        try:
            os.kill(owner["pid"], 0)
        except ProcessLookupError:
            return False
        except PermissionError:     # another user's process
            return True
    return True


class ObjectStaging(Staging):
    """The hidden prefix ``OUTPUT/.tf1compat-staging-<key>/`` of one conversion into an
    object store (see the module's docstring); :class:`~.staging.Staging`'s interface.
    ``work_dir`` is a local folder for what the plan prepares (an extracted archive)."""

    def __init__(self, output_dir, key, *, wait=False, what="a conversion"):
        self.output_dir = os.fspath(output_dir).rstrip("/")
        self.fs, base = _fs.filesystem(self.output_dir)
        self._base = base.rstrip("/")
        self.key = key
        self.path = f"{self.output_dir}/{STAGING_PREFIX}{key[:16]}"
        self._own = f"{self._base}/{STAGING_PREFIX}{key[:16]}"
        self.wait = wait
        self.what = what
        self.work_dir = None
        self._scratch = contextlib.ExitStack()
        self._started = time.time()
        self._stop = threading.Event()
        self._renewer = None

    def __enter__(self):
        while True:
            try:
                self._enter_once()
                break
            except BlockingIOError:
                if not self.wait:
                    raise
            except OSError as e:        # no such bucket, no permission: name the folder
                named = type(e)(f"{self.output_dir}: {e.strerror or e}")
                named.strerror = e.strerror
                raise named from e
            time.sleep(_WAIT_SECONDS * random.uniform(0.5, 1.5))
        self._scratch = contextlib.ExitStack()
        self.work_dir = self._scratch.enter_context(scratch_folder("work"))
        self._renewer = threading.Thread(target=self._renew, daemon=True,
                                         name="conversion lease")
        self._renewer.start()
        return self

    def _stagings(self):
        self.fs.invalidate_cache()
        try:
            names = self.fs.ls(self._base, detail=False)
        except FileNotFoundError:
            return []
        return sorted(name.rstrip("/") for name in names
                      if name.rstrip("/").rsplit("/", 1)[-1].startswith(STAGING_PREFIX))

    def _owner(self, staging):
        return _read_json(self.fs, f"{staging}/{_OWNER}")

    def _enter_once(self):
        for staging in self._stagings():
            owner = self._owner(staging)
            if owner is not None and _alive(owner):
                self._refuse(staging)
            if staging != self._own:
                _roll_forward(self.fs, staging, self._base)
        if self.fs.exists(f"{self._own}/{_JOURNAL}"):
            _roll_forward(self.fs, self._own, self._base)  # a killed run was committing
        self._write_owner(time.time() + _LEASE_SECONDS)
        # No create-if-absent: a run that listed before this owner was written may have
        # gone ahead too. Each looks again after writing its own; one that sees another
        # live run withdraws (of two at once, at most one goes ahead).
        rivals = [staging for staging in self._stagings() if staging != self._own
                  and (owner := self._owner(staging)) is not None and _alive(owner)]
        if rivals:
            _remove(self.fs, f"{self._own}/{_OWNER}")
            self._refuse(rivals[0])

    def _write_owner(self, expires):
        write_json(f"{self.path}/{_OWNER}", {
            "what": self.what, "pid": os.getpid(), "host": socket.gethostname(),
            "started": self._started, "expires": expires})

    def _refuse(self, staging):
        owner = self._owner(staging) or {}
        started = time.strftime("%Y-%m-%d %H:%M:%S",
                                time.localtime(owner.get("started", 0)))
        raise BlockingIOError(
            f"{self.output_dir}: another tf1compat conversion is writing here "
            f"({owner.get('what')}, pid {owner.get('pid')} on {owner.get('host')}, "
            f"started {started}; staging prefix {staging}); wait for it to end "
            "(wait=True, --wait) or write elsewhere")

    def _renew(self):
        while not self._stop.wait(_LEASE_SECONDS / 3):
            try:
                self._write_owner(time.time() + _LEASE_SECONDS)
            except Exception:   # a store briefly unreachable (whatever the filesystem
                continue        # raises): the next renewal may work

    def _stop_renewing(self):
        """No more lease renewals (one after the commit would stage an owner again)."""
        self._stop.set()
        if self._renewer is not None:
            self._renewer.join()

    def __exit__(self, exc_type, exc_value, traceback_):
        self._stop_renewing()
        try:
            if self.fs.exists(f"{self._own}/{_JOURNAL}"):
                # a commit that failed midway is decided: the next run finishes it now
                self._write_owner(0)
            else:
                _remove(self.fs, self._own, recursive=True)
        finally:
            self._scratch.close()

    def commit(self, tasks, extra_files=None, stale=()):
        """Concatenate each shard's parts, stage ``extra_files`` (``{name: text}``),
        journal the commit, then copy everything into place, remove the outputs
        matching the glob patterns ``stale`` and write the manifest (see the module)."""
        shards = {}
        for task in tasks:
            shards.setdefault(task.name, []).append(task.file_name)
        for name, parts in shards.items():
            target = f"{self._own}/{name}"
            if parts != [name] and not self.fs.exists(target):
                self._concatenate([f"{self._own}/{part}" for part in parts], target)
                for part in parts:
                    _remove(self.fs, f"{self._own}/{part}")
        for name, text in (extra_files or {}).items():
            self.fs.pipe_file(f"{self._own}/{name}", text.encode("utf-8", "surrogateescape"))
        moves = [*shards, *(extra_files or {})]
        sizes = {name: self.fs.size(f"{self._own}/{name}") for name in moves}
        self.fs.invalidate_cache()
        found = {path.rsplit("/", 1)[-1] for pattern in stale
                 for path in self.fs.glob(f"{self._base}/{pattern}")}
        earlier = (read_manifest(self.output_dir) or {}).get("files", {})
        files = {**{name: size for name, size in earlier.items() if name not in found},
                 **sizes}     # the folder's committed files: other conversions' stay listed
        self._stop_renewing()
        write_json(f"{self.path}/{_JOURNAL}", {
            "move": moves, "remove": sorted(found - set(moves)), "files": files,
            "plan": self.key})
        _roll_forward(self.fs, self._own, self._base)

    def _concatenate(self, sources, target):
        """``sources`` joined into the object ``target``, uploaded whole from a local file."""
        with tempfile.NamedTemporaryFile(dir=self.work_dir, suffix=".concat") as out:
            for source in sources:
                with self.fs.open(source, "rb") as f:
                    shutil.copyfileobj(f, out, _CHUNK)
            out.flush()
            self.fs.put_file(out.name, target)
