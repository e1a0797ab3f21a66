"""TensorFlow's own log lines while tf1compat runs sessions: the installed release's
rows of the graph model's table (``op_types.TENSORFLOW_LOG_LINES``) are left out of
standard error through :func:`tf1compat._tf.drop_lines`, with TensorFlow's start-up
notices, and shown with ``TF1COMPAT_VERBOSE=1``.

A ``SessionIterator`` leaves out the end-of-input lines from its start to its close,
and the first-run lines too if no session ran before it (:func:`session_lines_dropped`);
run mode's sessions leave out the first-run lines around the first run of the process
(:func:`first_run_lines_dropped`).
"""

import contextlib
import threading
from collections.abc import Iterator

from tf1compat._tf import DroppedLines, drop_lines, tf
from tf1compat._versions import minor_version
from tf1compat.pipeline.graph_model import op_types

__all__ = ["session_lines_dropped", "first_run_lines_dropped"]

_FIRST_RUN_DONE = threading.Event()  # a session of this process has run


def _tensorflow_lines_dropped(whens: tuple[str, ...]) -> DroppedLines:
    """The installed TensorFlow's own lines left out until the returned object's
    ``undo()``, if it writes any at ``whens`` (nothing changes on a release that
    writes none). Every use leaves out all of the release's lines, so uses at the same
    time share one filter and can end in any order."""
    minor = minor_version(tf.__version__)
    if op_types.log_lines(minor, whens) is None:
        return drop_lines(None)
    return drop_lines(op_types.log_lines(minor))


class _SessionLines:
    """What :func:`session_lines_dropped` returns."""

    def __init__(self) -> None:
        first_run = () if _FIRST_RUN_DONE.is_set() else (op_types.FIRST_SESSION_RUN,)
        self._dropped = _tensorflow_lines_dropped((op_types.END_OF_INPUT, *first_run))

    def undo(self) -> None:
        _FIRST_RUN_DONE.set()
        self._dropped.undo()


def session_lines_dropped() -> _SessionLines:
    """For a session open until the returned object's ``undo()`` (once, from any
    thread): the lines the installed TensorFlow writes at the end of input left out,
    and those it writes at a process's first session run if no session ran before."""
    return _SessionLines()


@contextlib.contextmanager
def first_run_lines_dropped() -> Iterator[None]:
    """Around a session run: the lines TensorFlow writes at the first session run of a
    process left out, if no session ran before."""
    if _FIRST_RUN_DONE.is_set():
        yield
        return
    dropped = _tensorflow_lines_dropped((op_types.FIRST_SESSION_RUN,))
    try:
        yield
    finally:
        _FIRST_RUN_DONE.set()
        dropped.undo()
