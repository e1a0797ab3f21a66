"""The one place tf1compat imports TensorFlow: a quiet start-up that changes none of
the user's settings (all of it off with ``TF1COMPAT_VERBOSE=1``).

- ``TF_CPP_MIN_LOG_LEVEL`` is 1 (no INFO lines) while TensorFlow loads, unless the
  user set it; the environment is restored afterwards.
- TensorFlow 2.21 writes two notices to file descriptor 2 before it reads any
  setting (absl's "All log messages before absl::InitializeLog()" and oneDNN's
  "custom operations are on"). While it loads, descriptor 2 goes through a small
  filter process that drops exactly those lines and passes everything else on as
  it comes, so a crash while TensorFlow loads still prints.
- Importing it changes nothing else. The deprecation notices TensorFlow logs for
  tf1compat's own calls of its TF1 APIs are dropped while those calls run
  (:func:`own_notices_dropped`: a filter on TensorFlow's logger, there only while a
  call that needs it runs); the logger's level, handlers and filters are otherwise as
  the user left them, and everything else logged to it (the user's warnings,
  notices for the user's own calls) appears as before.

:func:`drop_lines` is the descriptor-2 filter for later: the pipeline drops the lines
some TensorFlow releases write while its sessions run (the graph model's
``op_types.TENSORFLOW_LOG_LINES``), and with them the start-up notices above, which
some releases write at the first session run instead of at load.
"""

import contextlib
import os
import subprocess
import sys
import threading
from collections.abc import Iterator

VERBOSE = os.environ.get("TF1COMPAT_VERBOSE", "") not in ("", "0")

_START_UP_NOISE = (
    r"WARNING: All log messages before absl::InitializeLog\(\) is called are written to STDERR"
    r"|I\d{4} [\d:.]+ +\d+ port\.cc:\d+\] oneDNN custom operations are on\. .*")
# Passes on what it reads as it comes, a line not ended yet too (a progress bar's),
# and drops each whole line that is noise and the tab-indented lines right after it
# (the ops of a status TensorFlow logs). TensorFlow writes a log line in one write,
# which one read takes whole. It ignores the keys a terminal sends to its whole
# foreground group (Ctrl-C, Ctrl-\): what the program says after them still prints.
_LINE_FILTER = """\
import os, re, signal, sys
signal.signal(signal.SIGINT, signal.SIG_IGN)
signal.signal(signal.SIGQUIT, signal.SIG_IGN)
os.close(1)  # ready: the process that started it goes on
noise = re.compile(sys.argv[1].encode())

def put(data):
    while data:
        data = data[os.write(2, data):]

pending, dropping, mid_line = b"", False, False
while chunk := os.read(0, 1 << 20):
    *lines, pending = (pending + chunk).split(b"\\n")
    kept = []
    for line in lines:
        if not mid_line and (noise.fullmatch(line.rstrip(b"\\r"))
                             or dropping and line.startswith(b"\\t")):
            dropping = True
            continue
        kept.append(line + b"\\n")
        dropping = mid_line = False
    if pending and not (dropping and pending.startswith(b"\\t")):
        kept.append(pending)
        pending, dropping, mid_line = b"", False, True
    put(b"".join(kept))
put(pending)
"""
_FILTER_WAIT = 5.0  # seconds closing waits for the filter (a child process may hold the pipe)
_LIBRARIES = frozenset({"tensorflow", "tf_slim", "keras", "tf_keras", "logging", "absl"})


@contextlib.contextmanager
def _environment_default(name, value):
    """``os.environ[name]`` is ``value`` inside the block unless it was set already."""
    if name in os.environ:
        yield
        return
    os.environ[name] = value
    try:
        yield
    finally:
        os.environ.pop(name, None)


class _LineFilter:
    """Descriptor 2 through a filter process dropping the lines ``pattern`` matches
    whole, until :meth:`close`; nothing changes when there is no descriptor 2 to
    filter or no interpreter to start (an embedded Python)."""

    def __init__(self, pattern):
        self._saved = self._child = None
        try:
            saved = os.dup(2)
        except OSError:
            return
        read_end, write_end = os.pipe()
        try:
            child = subprocess.Popen([sys.executable, "-I", "-S", "-c", _LINE_FILTER, pattern],
                                     stdin=read_end, stdout=subprocess.PIPE, stderr=saved)
        except OSError:
            os.close(write_end)
            os.close(saved)
            return
        finally:
            os.close(read_end)
        with child.stdout:  # it ignores Ctrl-C before descriptor 2 goes through it
            child.stdout.read()
        sys.stderr.flush()
        os.dup2(write_end, 2)
        os.close(write_end)
        self._saved, self._child = saved, child

    def close(self):
        """Descriptor 2 as it was; the filter passes on the rest and ends."""
        if self._child is None:
            return
        sys.stderr.flush()
        os.dup2(self._saved, 2)
        os.close(self._saved)
        try:
            self._child.wait(_FILTER_WAIT)
        except subprocess.TimeoutExpired:  # a child process still writes through it
            pass
        self._child = None


class DroppedLines:
    """One use of :func:`drop_lines`; :meth:`undo` ends it (once, from any thread)."""

    def __init__(self, pattern: str | None) -> None:
        self._pattern = pattern
        self._done = pattern is None
        if not self._done:
            _acquire(pattern)

    def undo(self) -> None:
        with _FILTERS_LOCK:
            if self._done:
                return
            self._done = True
        _release(self._pattern)


_FILTERS = {}  # pattern -> [_LineFilter, uses]
_FILTERS_LOCK = threading.Lock()


def _acquire(pattern):
    with _FILTERS_LOCK:
        entry = _FILTERS.get(pattern)
        if entry is None:
            entry = _FILTERS[pattern] = [_LineFilter(pattern), 0]
        entry[1] += 1


def _release(pattern):
    with _FILTERS_LOCK:
        entry = _FILTERS[pattern]
        entry[1] -= 1
        if entry[1]:
            return
        del _FILTERS[pattern]
        entry[0].close()


def drop_lines(pattern: str | None) -> DroppedLines:
    """Leave out of descriptor 2 the lines (and the tab-indented lines right after
    each) that the regular expression ``pattern`` matches whole, and TensorFlow's
    start-up notices, until the returned object's ``undo()``. Uses at the same time
    with one pattern share one filter process. Nothing is dropped with
    ``TF1COMPAT_VERBOSE`` set or a ``pattern`` of None."""
    if VERBOSE or pattern is None:
        return DroppedLines(None)
    return DroppedLines(f"{_START_UP_NOISE}|{pattern}")


def _not_a_notice_for_tf1compat(record):
    """False for a deprecation notice of a TF1 API that tf1compat called: the first
    caller on the stack outside TensorFlow, tf-slim and logging is tf1compat's."""
    if "is deprecated and will be removed" not in str(record.msg):
        return True
    frame = sys._getframe(1)
    while frame is not None:
        package = frame.f_globals.get("__name__", "").partition(".")[0]
        if package not in _LIBRARIES:
            return package != "tf1compat"
        frame = frame.f_back
    return True


try:
    with contextlib.ExitStack() as start_up:
        if not VERBOSE:
            start_up.enter_context(_environment_default("TF_CPP_MIN_LOG_LEVEL", "1"))
            start_up.callback(DroppedLines(_START_UP_NOISE).undo)
        import tensorflow as tf
except ImportError as e:
    raise ImportError(
        f"tf1compat's pipeline API needs TensorFlow ({e}): pip install \".[cpu]\" (or "
        "\".[gpu]\") in tf1compat's folder; the TFRecord tools (tf1compat.tfrecord, "
        "tf1compat.example, inspect, verify) work without it") from e

v1 = tf.compat.v1

_dropping = threading.Lock()
_dropping_calls = 0     # calls inside own_notices_dropped() now, on any thread


@contextlib.contextmanager
def own_notices_dropped() -> Iterator[None]:
    """Inside (a ``with`` block, or a function it decorates): TensorFlow's deprecation
    notices for tf1compat's own calls of its TF1 APIs are left out; the filter doing
    it is on TensorFlow's logger while at least one such block runs, on any thread
    (it looks at the calling stack, so another thread's notices still show), and off
    with ``TF1COMPAT_VERBOSE=1``."""
    global _dropping_calls
    if VERBOSE:
        yield
        return
    with _dropping:
        if not _dropping_calls:
            tf.get_logger().addFilter(_not_a_notice_for_tf1compat)
        _dropping_calls += 1
    try:
        yield
    finally:
        with _dropping:
            _dropping_calls -= 1
            if not _dropping_calls:
                tf.get_logger().removeFilter(_not_a_notice_for_tf1compat)


__all__ = ["tf", "v1", "VERBOSE", "own_notices_dropped", "drop_lines",
           "DroppedLines"]
