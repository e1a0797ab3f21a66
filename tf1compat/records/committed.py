"""Whether files in a folder are the complete output of a tf1compat conversion.

A conversion commits its shards into the output folder one file at a time (a rename
on disk, a copy in an object store), so while it commits, and after a kill inside the
commit until the next run finishes it, a glob of the final names can see part of the
new set. Two marks tell a reader (see :mod:`tf1compat.convert.staging` and
:mod:`tf1compat.convert.objstore`):

- the **journal** ``.commit.json`` inside a hidden ``.tf1compat-staging-*`` entry of
  the folder: a commit is decided and not finished (on disk and in object stores);
- the **manifest** ``.tf1compat-manifest.json`` (object stores; written last by each
  commit): every committed file of the folder with its size.

Checking a folder costs one small read (the manifest), or when there is none one
listing of the folder. A folder with neither mark was not being written by tf1compat
and is read as it is.
"""

import fnmatch
import glob as _glob
import json
import os
from collections.abc import Callable, Iterable
from typing import Any

from tf1compat._typing import PathArg
from tf1compat.errors import IncompleteOutputError, display_path
from tf1compat.records import _fs

MANIFEST = ".tf1compat-manifest.json"
STAGING_PREFIX = ".tf1compat-staging-"
JOURNAL = ".commit.json"

__all__ = ["JOURNAL", "MANIFEST", "STAGING_PREFIX", "check_committed", "committed_files"]


def _split(path: str | bytes) -> tuple[str, str]:
    """``(folder, name)`` of a local path or URL."""
    if isinstance(path, str) and _fs.is_url(path):
        folder, _, name = path.rstrip("/").rpartition("/")
        return folder, name
    folder, name = os.path.split(_fs.local_path(os.fsdecode(path)))
    return folder or ".", name


def _read_json(read: Callable[[str], bytes], path: str) -> Any:
    try:
        return json.loads(read(path))
    except (OSError, ValueError):
        return None


class _FolderState:
    """The marks of one folder: ``manifest`` (``{name: size}`` or None) and
    ``journal`` (the unfinished commit's journal, ``{"move": [...], ...}``, or None)
    with ``staging``, the entry that holds it."""

    def __init__(self, folder: str) -> None:
        self.folder = folder
        self.staging: str | None = None
        self.journal: dict[str, Any] | None = None
        self._size: Callable[[str], int]
        self.manifest: dict[str, int] | None
        if _fs.is_url(folder):
            fs, base = _fs.filesystem(folder)
            base = base.rstrip("/")
            self._size = lambda name: fs.size(f"{base}/{name}")
            self.manifest = self._files(_read_json(fs.cat_file, f"{base}/{MANIFEST}"))
            if self.manifest is None:
                fs.invalidate_cache(base)
                try:
                    entries = fs.ls(base, detail=False)
                except (FileNotFoundError, NotADirectoryError):
                    entries = []
                self._find_journal(fs.cat_file, (e.rstrip("/") for e in entries), "/")
            return
        self._size = lambda name: os.stat(os.path.join(folder, name)).st_size
        self.manifest = self._files(_read_json(
            lambda path: open(path, "rb").read(), os.path.join(folder, MANIFEST)))
        if self.manifest is None:
            try:
                with os.scandir(folder) as entries:
                    found = [e.path for e in entries if e.name.startswith(STAGING_PREFIX)]
            except OSError:         # not listable (/proc, no permission): no marks seen
                found = []
            self._find_journal(lambda path: open(path, "rb").read(), found, os.sep)

    @staticmethod
    def _files(manifest: object) -> dict[str, int] | None:
        files = manifest.get("files") if isinstance(manifest, dict) else None
        return files if isinstance(files, dict) else None

    def _find_journal(self, read: Callable[[str], bytes], entries: Iterable[str],
                      sep: str) -> None:
        for entry in sorted(entries):
            if entry.rpartition(sep)[2].startswith(STAGING_PREFIX):
                journal = _read_json(read, f"{entry}{sep}{JOURNAL}")
                if isinstance(journal, dict):
                    self.staging, self.journal = entry, journal
                    return

    def check(self, names: list[str], pattern: str | None = None) -> None:
        """Raise IncompleteOutputError unless ``names`` (files of this folder; with
        ``pattern``, all that the glob pattern of names matched) are committed."""
        shown = display_path(self.folder)
        if self.journal is not None:
            expected = [n for n in self.journal.get("move", [])
                        if (fnmatch.fnmatchcase(n, pattern) if pattern else n in names)]
            missing = sorted(set(expected) - set(names))
            raise IncompleteOutputError(
                f"{shown}: a tf1compat conversion into this folder is under way or was cut "
                f"short (its commit journal is in {display_path(self.staging or '')})"
                + (f"; not in place yet: {_listed(missing)}" if missing else "")
                + ": run the conversion again to finish it", path=self.folder,
                missing=missing, extra=[])
        if self.manifest is None:
            return
        listed = set(self.manifest)
        missing = sorted(n for n in listed if pattern and fnmatch.fnmatchcase(n, pattern)
                         and n not in names)
        extra = sorted(n for n in names if n not in listed)
        changed = sorted(n for n in names if n in listed and self._size(n) != self.manifest[n])
        if not (missing or extra or changed):
            return
        found = [f"missing {_listed(missing)}" if missing else "",
                 f"not listed {_listed(extra)}" if extra else "",
                 "another size than listed: " + _listed(
                     [f"{n} ({self._size(n):,} bytes, listed {self.manifest[n]:,})"
                      for n in changed]) if changed else ""]
        raise IncompleteOutputError(
            f"{shown}: the files do not match the manifest {MANIFEST} of the last tf1compat "
            f"conversion into this folder ({'; '.join(f for f in found if f)}): a conversion "
            "may be under way, or the folder was changed since; run the conversion again",
            path=self.folder, missing=missing, extra=sorted(extra + changed))


def _listed(names: list[str], limit: int = 5) -> str:
    shown = ", ".join(names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")


def check_committed(paths: Iterable[str | bytes], pattern: str | None = None) -> None:
    """Raise :class:`~tf1compat.errors.IncompleteOutputError` when a file of ``paths``
    (local paths or URLs) lies in a folder where a tf1compat commit is under way or was
    cut short, or is not what that folder's manifest lists (name and size). With
    ``pattern`` (the glob that matched ``paths``), a listed file the pattern matches
    and ``paths`` lacks is missing too."""
    by_folder: dict[str, list[str]] = {}
    for path in paths:
        folder, name = _split(path)
        by_folder.setdefault(folder, []).append(name)
    pattern_name = _split(pattern)[1] if pattern else None
    for folder, names in by_folder.items():
        _FolderState(folder).check(names, pattern_name)


def _has_magic(path: str) -> bool:
    return any(c in _split(path)[1] for c in "*?[")


def committed_files(location: PathArg) -> list[str]:
    """The files of a tf1compat conversion at ``location``, checked complete: a folder
    (a local path or a URL: the files its manifest lists, or when it has none, its
    files not starting with ``.``), a glob pattern (the files it matches) or a file.

    Raises :class:`~tf1compat.errors.IncompleteOutputError` while a conversion into
    the folder is under way or after one was cut short (until the next run finishes
    it), or when the files differ from the manifest (missing, not listed, another
    size); ``FileNotFoundError`` when nothing is there. Use it to choose the files of
    your own readers (``tf.data.TFRecordDataset(committed_files(...))``)."""
    location = os.fspath(location)
    url = _fs.is_url(location)
    if _has_magic(location):
        if url:
            files = _fs.glob(location)
        else:
            files = sorted(f for f in _glob.glob(_fs.local_path(location))
                           if os.path.isfile(f))
        if not files:
            raise FileNotFoundError(2, "No file matches the pattern", location)
        check_committed(files, location)
        return files
    if url:
        fs, inner = _fs.filesystem(location)
        fs.invalidate_cache()
        is_folder = fs.isdir(inner)
    else:
        is_folder = os.path.isdir(_fs.local_path(location))
    if not is_folder:
        if not _fs.exists(location):
            raise FileNotFoundError(2, "No such file, folder or object", location)
        check_committed([location])
        return [location]
    if url:
        folder = location.rstrip("/")
        found = {entry["name"].rstrip("/").rpartition("/")[2]
                 for entry in fs.ls(inner, detail=True) if entry["type"] == "file"}
    else:
        folder = _fs.local_path(location)
        with os.scandir(folder) as entries:
            found = {e.name for e in entries if e.is_file()}
    listing = sorted(name for name in found if not name.startswith("."))
    state = _FolderState(folder)
    if state.manifest is not None:      # its files only: others were not converted
        listing = [name for name in listing if name in state.manifest]
    state.check(listing, "*")
    return [_fs.join(folder, name) for name in listing]
