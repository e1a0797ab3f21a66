"""Paths and URLs: a local path (or ``file://`` URL) goes through ``os`` as always; any
other URL (``s3://``, ``gs://``, ``memory://`` ...) through fsspec, which is imported only
then, with an error naming the tf1compat extra that brings its filesystem."""

import glob as _glob
import os
import re
import sys
from typing import IO, Any, overload

from tf1compat._typing import AnyPath
from tf1compat.errors import UnknownProtocolError

_URL = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")
# the tf1compat extra that installs each protocol's fsspec filesystem
_EXTRAS = {"s3": "s3", "s3a": "s3", "gs": "gcs", "gcs": "gcs"}
# where each protocol's client finds its credentials (docs/clusters.md's table)
_AWS = ("AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, ~/.aws or an instance role; "
        "AWS_ENDPOINT_URL for a store other than AWS")
_CREDENTIALS = {"s3": _AWS, "s3a": _AWS,
                "gs": "Google's application default credentials",
                "gcs": "Google's application default credentials"}
# what a filesystem needs besides its package, said when it cannot start
_HADOOP = ("Java and Hadoop's native client: JAVA_HOME, HADOOP_HOME and CLASSPATH set as "
           "pyarrow's HadoopFileSystem documents")
_NEEDS = {"hdfs": _HADOOP, "viewfs": _HADOOP}
# the argument that names the store's path, where it is not the first (0)
_REMOTE_ARGUMENT = {"put_file": 1, "put": 1}

__all__ = ["is_url", "local_path", "filesystem", "store_error", "join", "open_file", "size",
           "exists", "isfile", "glob", "files_in", "filesystem_package"]


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
    """``(fs, path)``: the fsspec filesystem of ``url`` and the path inside it. The

    Without fsspec or the protocol's filesystem package, a ``ModuleNotFoundError``
    names the extra to install (``pip install 'tf1compat[s3]'``); a protocol fsspec
    does not know is an :class:`~tf1compat.errors.UnknownProtocolError`; a filesystem
    that cannot start here (``hdfs://`` without Java) an ``OSError`` naming the URL."""
    protocol = _protocol(url)
    extra = _EXTRAS.get(protocol or "")
    hint = (f"pip install 'tf1compat[{extra}]'" if extra else
            f"pip install fsspec and the fsspec filesystem for {protocol}://")
    try:
        import fsspec.core
        from fsspec.registry import known_implementations, registry
    except ImportError as e:
        raise ModuleNotFoundError(f"{url}: URLs need fsspec: {hint} ({e})",
                                  name="fsspec") from e
    known = sorted({*known_implementations, *registry})
    if protocol is None or protocol not in known:
        raise UnknownProtocolError(url, protocol or "", known)
    outside = sys.exc_info()[1]     # what a caller handles now is no cause of a failure here
    try:
        fs, path = fsspec.core.url_to_fs(url)
    except ImportError as e:        # fsspec knows the protocol, its package is missing
        raise ModuleNotFoundError(f"{url}: {protocol}:// needs its filesystem: {hint} ({e})",
                                  name=getattr(e, "name", None)) from e
    except Exception as e:          # the filesystem cannot start here (its own errors)
        named = store_error(e, url, outside=outside)
        if type(named) is OSError:
            needs = f" (it needs {_NEEDS[protocol]})" if protocol in _NEEDS else ""
            named = OSError(f"{url}: cannot open the {protocol}:// filesystem{needs}: "
                            f"{_reason(e)}")
        raise named from e
    return _Store(fs, url, path), path


def _reason(error: BaseException, limit: int = 300) -> str:
    """``error``'s message as one line of at most ``limit`` characters: its first line
    and clause (a library's message can be a page: pyarrow lists every library path it
    tried for Java)."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    first = lines[0].split("; ", 1)[0] if lines else type(error).__name__
    return first if len(first) <= limit else first[:limit - 3] + "..."


def _unreachable(error: BaseException | None,
                 outside: BaseException | None) -> BaseException | None:
    """The error, ``error`` or one it was raised from (up to ``outside``), that says the
    store cannot be reached (fsspec's HTTP filesystem reports a refused connection as a
    missing file), or None."""
    while error is not None and error is not outside:
        kind = type(error).__name__
        if isinstance(error, (ConnectionError, TimeoutError)) or "Connect" in kind \
                or "Timeout" in kind:
            return error
        error = error.__cause__ or error.__context__
    return None


def store_error(error: BaseException, url: str, *,
                outside: BaseException | None = None) -> OSError:
    """``error`` (raised by an fsspec filesystem, or the client library under it)
    as an ``OSError`` of the kind a caller catches, one line naming ``url``:
    ``PermissionError`` for refused or missing credentials (with where the
    protocol's credentials come from), ``ConnectionError`` for a store that cannot
    be reached, ``FileNotFoundError`` kept, any other failure an ``OSError``.
    ``outside`` is the exception the caller was handling when the failing call began:
    the errors ``error`` was raised from are looked at up to it (a missing file looked
    for while a run fails for another reason is not that reason)."""
    protocol = _protocol(url)
    reason = _reason(error)
    kind = type(error).__name__
    cls: type[OSError]
    if isinstance(error, PermissionError) or "Credential" in kind:
        where = _CREDENTIALS.get(protocol or "", "the credentials of its filesystem")
        message = f"access denied ({reason}): check the credentials ({where})"
        cls = PermissionError
    elif (unreachable := _unreachable(error, outside)) is not None:
        message = f"cannot reach the store ({_reason(unreachable)})"
        cls = ConnectionError
    elif isinstance(error, FileNotFoundError):
        missing = reason in ("", "FileNotFoundError") or url.endswith(reason.strip("/'"))
        message, cls = "no such file or object" if missing else reason, FileNotFoundError
    elif isinstance(error, OSError):
        message, cls = reason, type(error)
    else:
        message, cls = f"{kind}: {reason}", OSError
    named = cls(f"{url}: {message}")
    named.strerror = message        # what "cannot read (...)" shows beside the URL
    return named


class _Store:
    """An fsspec filesystem whose failures are :func:`store_error` errors naming the URL
    they were about (a path argument, else the URL the filesystem was opened for).
    ``exists``, ``isfile`` and ``isdir`` are False only for what is not there: fsspec's
    own versions also say False for a refused request or a store that cannot be
    reached."""

    def __init__(self, fs: Any, url: str, path: str) -> None:
        self._fs = fs
        self._url = url
        # what the filesystem's paths lack of a URL (the protocol, and for some the host)
        self._prefix = url[:-len(path)] if path and url.endswith(path) else None

    def url(self, path: str) -> str:
        """The URL of ``path``, a path of this filesystem."""
        if self._prefix is not None:
            return self._prefix + path
        unstripped: str = self._fs.unstrip_protocol(path)
        return unstripped

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self._fs, name)
        if not callable(attribute):
            return attribute
        position = _REMOTE_ARGUMENT.get(name, 0)

        def call(*args: Any, **kwargs: Any) -> Any:
            outside = sys.exc_info()[1]
            try:
                return attribute(*args, **kwargs)
            except Exception as e:  # noqa: BLE001 - the store's (and its client's) failures
                path = args[position] if len(args) > position else ""
                raise store_error(e, self.url(path) if isinstance(path, str) and path
                                  else self._url, outside=outside) from e
        return call

    def exists(self, path: str) -> bool:
        try:
            self.info(path)
        except FileNotFoundError:
            return False
        return True

    def isfile(self, path: str) -> bool:
        try:
            return bool(self.info(path)["type"] == "file")
        except FileNotFoundError:
            return False

    def isdir(self, path: str) -> bool:
        try:
            return bool(self.info(path)["type"] == "directory")
        except FileNotFoundError:
            return False


def filesystem_package(url: str) -> str:
    """The package of ``url``'s fsspec filesystem (``s3fs`` for ``s3://``): what a
    process writing there must be able to import."""
    fs, _ = filesystem(url)
    return type(fs._fs).__module__.partition(".")[0]


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


def isfile(path: str | bytes) -> bool:
    """Whether ``path`` (a local path or a URL) is a file or object."""
    if not isinstance(path, str) or not is_url(path):
        return os.path.isfile(local_path(path))
    fs, inner = filesystem(path)
    return bool(fs.isfile(inner))


def glob(url: str) -> list[str]:
    """The URLs of the objects ``url`` names or, with ``*``, ``?`` or ``[``, matches,
    sorted."""
    fs, inner = filesystem(url)
    fs.invalidate_cache()
    if not any(c in inner for c in "*?["):
        return [url] if fs.isfile(inner) else []
    return sorted(fs.url(path)
                  for path, info in fs.glob(inner, detail=True).items() if info["type"] == "file")


def files_in(folder: str, pattern: str) -> list[str]:
    """The files in ``folder`` (a local path or a URL) whose names match the glob
    ``pattern``, sorted (the folder's own name is taken literally)."""
    if is_url(folder):
        return glob(join(folder, pattern))
    return sorted(_glob.glob(os.path.join(_glob.escape(local_path(folder)), pattern)))
