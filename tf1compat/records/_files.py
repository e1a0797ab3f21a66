"""Files written safely: atomic output (a temporary name beside the target, renamed over
it only when complete) and the locks that tell a live writer's temporary file from one
a dead writer left. Portable: ``fcntl`` where there is one, else nothing is assumed."""

import contextlib
import os
from collections.abc import Iterator
from typing import IO, Any

try:
    import fcntl
except ImportError:         # Windows: a file open in a process cannot be removed
    fcntl = None  # type: ignore[assignment]  # (checked before each use)

__all__ = ["atomic_output", "name_path", "lock_while_open", "remove_unless_locked"]


@contextlib.contextmanager
def atomic_output(path: str) -> Iterator[str]:
    """Yield a temporary path beside ``path`` that replaces it only if the block
    succeeds; otherwise the temporary file is removed. The extension is kept, so
    writers that choose a format by it (``savefig``) still can. An OS error without a
    file name (a full disk) is raised naming ``path``."""
    root, extension = os.path.splitext(path)
    temporary = f"{root}.{os.getpid()}.tmp{extension}"
    try:
        yield temporary
        os.replace(temporary, path)
    except OSError as e:
        name_path(e, path)
        raise
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.remove(temporary)


def name_path(error: OSError, path: str | bytes) -> None:
    """Make the OS ``error`` name ``path`` when it names no file (a full disk's
    ``[Errno 28] No space left on device``)."""
    if error.filename is None:
        error.filename = os.fsdecode(path)


def lock_while_open(file: IO[Any]) -> None:
    """Lock the open ``file`` until it is closed (or its process dies), where the system
    has such locks (flock); on Windows being open is the lock."""
    if fcntl is not None:
        with contextlib.suppress(OSError):  # a file system without locks
            fcntl.flock(file.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)


def remove_unless_locked(path: str) -> None:
    """Remove ``path`` unless a live process holds it (see :func:`lock_while_open`);
    raises ``OSError`` when it does. Without flock outside Windows nothing tells a live
    writer's file from a dead one's, so nothing is removed."""
    if fcntl is None:
        if os.name != "nt":
            raise BlockingIOError(f"{path}: cannot tell whether its writer lives (no flock)")
        os.remove(path)     # refused while open in another process
        return
    with open(path, "rb") as file:
        fcntl.flock(file.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        os.remove(path)
