"""The one place tf1compat imports TensorFlow, quieted unless TF1COMPAT_VERBOSE=1.

TensorFlow 2.21 writes absl start-up lines (oneDNN notice, "All log messages
before absl::InitializeLog()") straight to file descriptor 2 while it loads,
ignoring TF_CPP_MIN_LOG_LEVEL, so the import runs with that descriptor muted.
"""

import contextlib
import logging
import os

VERBOSE = os.environ.get("TF1COMPAT_VERBOSE", "") not in ("", "0")


@contextlib.contextmanager
def _muted_stderr_fd():
    saved = os.dup(2)
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(devnull)


try:
    with contextlib.nullcontext() if VERBOSE else _muted_stderr_fd():
        import tensorflow as tf
except ImportError as e:  # pragma: no cover - depends on the environment
    raise ImportError(
        "tf1compat's pipeline API needs TensorFlow; install it with "
        "`pip install tf1compat[cpu]` (or [gpu]). The TFRecord tools "
        "(tf1compat.tfrecord, tf1compat.example) work without it."
    ) from e

v1 = tf.compat.v1

if not VERBOSE:
    # Deprecation notices of tf.compat.v1 go through TensorFlow's Python logger.
    tf.get_logger().setLevel(logging.ERROR)
    v1.logging.set_verbosity(v1.logging.ERROR)

__all__ = ["tf", "v1", "VERBOSE"]
