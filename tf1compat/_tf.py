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
_LINE_FILTER = """\
import re, sys
noise = re.compile(sys.argv[1].encode())
for line in sys.stdin.buffer:
    if not noise.fullmatch(line.rstrip(b"\\r\\n")):
        sys.stderr.buffer.write(line)
        sys.stderr.buffer.flush()
"""
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


@contextlib.contextmanager
def _start_up_noise_dropped():
    """Descriptor 2 through a filter process dropping ``_START_UP_NOISE`` lines."""
    try:
        saved = os.dup(2)
    except OSError:  # no descriptor 2 to filter
        yield
        return
    read_end, write_end = os.pipe()
    try:
        child = subprocess.Popen([sys.executable, "-I", "-S", "-c", _LINE_FILTER, _START_UP_NOISE],
                                 stdin=read_end, stdout=subprocess.DEVNULL, stderr=saved)
    except OSError:  # no interpreter to start (an embedded Python): no filtering
        child = None
    os.close(read_end)
    if child is None:
        os.close(write_end)
        os.close(saved)
        yield
        return
    sys.stderr.flush()
    os.dup2(write_end, 2)
    os.close(write_end)
    try:
        yield
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)  # the filter sees the end of its input, passes the rest, exits
        os.close(saved)
        child.wait()


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
            start_up.enter_context(_start_up_noise_dropped())
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


__all__ = ["tf", "v1", "VERBOSE", "own_notices_dropped"]
