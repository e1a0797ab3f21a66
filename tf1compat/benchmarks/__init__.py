"""Benchmarks behind ``tf1compat bench`` / ``scripts/bench``: ``reading`` (queue
pipelines vs tf.data) and ``conversion`` (CIFAR-10 converters). Each module has
``run(quick, out_dir) -> int`` that prints its table and writes it under ``out_dir``
(atomically, with :func:`atomic_output`)."""

import contextlib
import os


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
        if os.path.exists(temporary):
            os.remove(temporary)


def write_text(path, text):
    """Write ``text`` to ``path`` atomically."""
    with atomic_output(path) as temporary, open(temporary, "w") as f:
        f.write(text)
