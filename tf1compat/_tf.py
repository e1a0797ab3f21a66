"""The one place tf1compat imports TensorFlow, quieted unless TF1COMPAT_VERBOSE=1."""

import logging
import os

try:
    import tensorflow as tf
except ImportError as e:  # pragma: no cover - depends on the environment
    raise ImportError(
        "tf1compat's pipeline API needs TensorFlow; install it with "
        "`pip install tf1compat[cpu]` (or [gpu]). The TFRecord tools "
        "(tf1compat.tfrecord, tf1compat.example) work without it."
    ) from e

v1 = tf.compat.v1

if os.environ.get("TF1COMPAT_VERBOSE", "") in ("", "0"):
    # Deprecation notices of tf.compat.v1 go through TensorFlow's Python logger.
    tf.get_logger().setLevel(logging.ERROR)
    v1.logging.set_verbosity(v1.logging.ERROR)

__all__ = ["tf", "v1"]
