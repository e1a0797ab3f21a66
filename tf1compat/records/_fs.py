"""Paths and URLs: a local path (or ``file://`` URL) goes through ``os`` as always; any
other URL (``s3://``, ``gs://``, ``memory://`` ...) through fsspec, which is imported only
then, with an error naming the tf1compat extra that brings its filesystem."""

import os
import re
from typing import IO, Any, overload

from tf1compat._typing import AnyPath

_URL = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")
# the tf1compat extra that installs each protocol's fsspec filesystem
_EXTRAS = {"s3": "s3", "s3a": "s3", "gs": "gcs", "gcs": "gcs"}

__all__ = ["is_url", "local_path", "filesystem", "join", "open_file", "size", "exists",
           "glob"]


def _protocol(path: object) -> str | None:
    match = _URL.match(path) if isinstance(path, str) else None
    return match.group(1).lower() if match else None


def is_url(path: object) -> bool:
    """Whether ``path`` is a URL that fsspec handles (``file://`` URLs are local paths)."""
    return _protocol(path) not in (None, "file")


@overload
def local_path(path: str) -> str: ...
@overload
def local_path(path: AnyPath) -> AnyPath: ...
def local_path(path: AnyPath) -> AnyPath:
    """``path`` with a ``file://`` scheme removed; other paths and URLs as they are."""
    if isinstance(path, str) and _protocol(path) == "file":
        return path[len("file://"):]
    return path


def filesystem(url: str) -> tuple[Any, str]:
    """``(fs, path)``: the fsspec filesystem of ``url`` and the path inside it.

    Without fsspec or the protocol's filesystem package, a ``ModuleNotFoundError``
    names the extra to install (``pip install 'tf1compat[s3]'``)."""
    protocol = _protocol(url)
    extra = _EXTRAS.get(protocol or "")
    hint = (f"pip install 'tf1compat[{extra}]'" if extra else
            f"pip install fsspec and the fsspec filesystem for {protocol}://")
    try:
        import fsspec.core
    except ImportError as e:
        raise ModuleNotFoundError(f"{url}: URLs need fsspec: {hint} ({e})",
                                  name="fsspec") from e
    try:
        fs, inner = fsspec.core.url_to_fs(url)
        return fs, inner
    except ImportError as e:        # fsspec knows the protocol, its package is missing
        raise ModuleNotFoundError(f"{url}: {protocol}:// needs its filesystem: {hint} ({e})",
                                  name=getattr(e, "name", None)) from e
    except ValueError as e:         # a protocol fsspec does not know
        raise ValueError(f"{url}: {e}") from e


def join(base: str, name: str) -> str:
    """``base/name`` for a URL, ``os.path.join`` for a local path."""
    if is_url(base):
        return f"{base.rstrip('/')}/{name}"
    return os.path.join(base, name)


def open_file(path: AnyPath, mode: str = "rb", **kwargs: Any) -> IO[Any]:
    """``open`` for a local path, the fsspec filesystem's ``open`` for a URL."""
    if not isinstance(path, str) or not is_url(path):
        return open(local_path(path), mode, **kwargs)
    fs, inner = filesystem(path)
    opened: IO[Any] = fs.open(inner, mode)
    return opened


def size(path: str | bytes) -> int:
    """The size of the file or object ``path`` in bytes."""
    if not isinstance(path, str) or not is_url(path):
        return os.stat(local_path(path)).st_size
    fs, inner = filesystem(path)
    try:
        return int(fs.size(inner))
    except FileNotFoundError as e:
        raise FileNotFoundError(2, "No such file or object", path) from e


def exists(path: str | bytes) -> bool:
    """Whether the file or object ``path`` exists."""
    if not isinstance(path, str) or not is_url(path):
        return os.path.exists(local_path(path))
    fs, inner = filesystem(path)
    fs.invalidate_cache(inner)
    return bool(fs.exists(inner))


def glob(url: str) -> list[str]:
    """The URLs of the objects ``url`` names or, with ``*``, ``?`` or ``[``, matches,
    sorted."""
    fs, inner = filesystem(url)
    fs.invalidate_cache()
    if not any(c in inner for c in "*?["):
        return [url] if fs.isfile(inner) else []
    return sorted(fs.unstrip_protocol(path) for path in fs.glob(inner) if fs.isfile(path))
