"""Atomic file output: written under a temporary name beside the target, renamed over
it only when complete."""

import contextlib
import os

__all__ = ["atomic_output"]


@contextlib.contextmanager
def atomic_output(path):
    """Yield a temporary path beside ``path`` that replaces it only if the block
    succeeds; otherwise the temporary file is removed. The extension is kept, so
    writers that choose a format by it (``savefig``) still can."""
    root, extension = os.path.splitext(path)
    temporary = f"{root}.{os.getpid()}.tmp{extension}"
    try:
        yield temporary
        os.replace(temporary, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.remove(temporary)
