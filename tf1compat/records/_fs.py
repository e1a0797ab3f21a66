"""Paths and URLs: a local path (or ``file://`` URL) goes through ``os`` as always; any
other URL (``s3://``, ``gs://``, ``memory://`` ...) through fsspec, which is imported only
then, with an error naming the tf1compat extra that brings its filesystem."""

import os
import re

_URL = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")
# the tf1compat extra that installs each protocol's fsspec filesystem
_EXTRAS = {"s3": "s3", "s3a": "s3", "gs": "gcs", "gcs": "gcs"}

__all__ = ["is_url", "local_path", "filesystem", "join", "open_file", "size", "exists",
           "glob"]


def _protocol(path):
    match = _URL.match(path) if isinstance(path, str) else None
    return match.group(1).lower() if match else None


def is_url(path):
    """Whether ``path`` is a URL that fsspec handles (``file://`` URLs are local paths)."""
    return _protocol(path) not in (None, "file")


def local_path(path):
    """``path`` with a ``file://`` scheme removed; other paths and URLs as they are."""
    return path[len("file://"):] if _protocol(path) == "file" else path


def filesystem(url):
    """``(fs, path)``: the fsspec filesystem of ``url`` and the path inside it.

    Without fsspec or the protocol's filesystem package, a ``ModuleNotFoundError``
    names the extra to install (``pip install 'tf1compat[s3]'``)."""
    protocol = _protocol(url)
    extra = _EXTRAS.get(protocol)
    hint = (f"pip install 'tf1compat[{extra}]'" if extra else
            f"pip install fsspec and the fsspec filesystem for {protocol}://")
    try:
        import fsspec.core
    except ImportError as e:
        raise ModuleNotFoundError(f"{url}: URLs need fsspec: {hint} ({e})",
                                  name="fsspec") from e
    try:
        return fsspec.core.url_to_fs(url)
    except ImportError as e:        # fsspec knows the protocol, its package is missing
        raise ModuleNotFoundError(f"{url}: {protocol}:// needs its filesystem: {hint} ({e})",
                                  name=getattr(e, "name", None)) from e
    except ValueError as e:         # a protocol fsspec does not know
        raise ValueError(f"{url}: {e}") from e


def join(base, name):
    """``base/name`` for a URL, ``os.path.join`` for a local path."""
    if is_url(base):
        return f"{base.rstrip('/')}/{name}"
    return os.path.join(base, name)


def open_file(path, mode="rb", **kwargs):
    """``open`` for a local path, the fsspec filesystem's ``open`` for a URL."""
    if not is_url(path):
        return open(local_path(path), mode, **kwargs)
    fs, inner = filesystem(path)
    return fs.open(inner, mode)


def size(path):
    """The size of the file or object ``path`` in bytes."""
    if not is_url(path):
        return os.stat(local_path(path)).st_size
    fs, inner = filesystem(path)
    try:
        return fs.size(inner)
    except FileNotFoundError as e:
        raise FileNotFoundError(2, "No such file or object", path) from e


def exists(path):
    """Whether the file or object ``path`` exists."""
    if not is_url(path):
        return os.path.exists(local_path(path))
    fs, inner = filesystem(path)
    fs.invalidate_cache(inner)
    return fs.exists(inner)


def glob(url):
    """The URLs of the objects ``url`` names or, with ``*``, ``?`` or ``[``, matches,
    sorted."""
    fs, inner = filesystem(url)
    fs.invalidate_cache()
    if not any(c in inner for c in "*?["):
        return [url] if fs.isfile(inner) else []
    return sorted(fs.unstrip_protocol(path) for path in fs.glob(inner) if fs.isfile(path))
