"""Local scratch folders of conversions whose output is elsewhere (an object store): an
extracted archive, a shard written before its upload, the parts of a shard joined
before theirs. Each is ``<temp dir>/tf1compat-scratch-*`` holding a ``.lock`` that its
process keeps locked while it lives (:func:`~tf1compat.records._files.lock_while_open`).
A run killed outright cannot remove its folder (a CIFAR-10 extraction is 180 MB); the
next scratch folder made on the machine removes every one whose lock no live process
holds. A folder is made under a hidden name (``.tf1compat-scratch-*``) and renamed once
its lock is held, so no other process sees it unlocked and removes it while it is
being made; a hidden one (a process killed in those microseconds) and one found without
its lock (made by an older tf1compat) are removed once they are a minute old.
"""

import contextlib
import os
import shutil
import tempfile
import time

from tf1compat.records._files import lock_while_open, remove_unless_locked

PREFIX = "tf1compat-scratch-"
_LOCK = ".lock"
_UNLOCKED_SECONDS = 60.0    # age after which a folder without its lock is a dead run's

__all__ = ["PREFIX", "scratch_folder"]


def _remove_dead_folders(parent):
    """Remove the scratch folders in ``parent`` that no live process holds."""
    with contextlib.suppress(OSError), os.scandir(parent) as entries:
        folders = [entry.path for entry in entries if entry.is_dir(follow_symlinks=False)
                   and entry.name.startswith((PREFIX, "." + PREFIX))]
    for folder in folders:
        if os.path.basename(folder).startswith("."):
            with contextlib.suppress(OSError):
                if time.time() - os.stat(folder).st_mtime >= _UNLOCKED_SECONDS:
                    shutil.rmtree(folder, ignore_errors=True)
            continue
        try:
            remove_unless_locked(os.path.join(folder, _LOCK))
        except FileNotFoundError:
            with contextlib.suppress(OSError):
                if time.time() - os.stat(folder).st_mtime < _UNLOCKED_SECONDS:
                    continue
        except OSError:         # held by a live process (or no way to tell): kept
            continue
        shutil.rmtree(folder, ignore_errors=True)


@contextlib.contextmanager
def scratch_folder(what):
    """Yield a new local folder for ``what`` (a word in its name), removed when the
    block ends; first remove the scratch folders of dead runs."""
    parent = tempfile.gettempdir()
    _remove_dead_folders(parent)
    folder = made = tempfile.mkdtemp(prefix=f".{PREFIX}{what}-", dir=parent)
    try:
        with open(os.path.join(made, _LOCK), "wb") as lock:
            lock_while_open(lock)
            folder = os.path.join(parent, os.path.basename(made)[1:])
            os.rename(made, folder)
            yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)
