"""tf1compat: legacy TensorFlow 1 input pipelines, working and fast on TensorFlow 2.

The public names load lazily, so the pure-Python tools (``tf1compat.tfrecord``,
``tf1compat.example``, ``tf1compat inspect`` / ``verify``) never import TensorFlow.
TensorFlow's C++ log lines and deprecation warnings are silenced on import unless
the environment variable ``TF1COMPAT_VERBOSE=1`` is set.
"""

import importlib
import os

from tf1compat.errors import (
    CifarFormatError,
    CorruptRecordError,
    PipelineConfigError,
    PipelineMismatchError,
    Tf1CompatError,
    UnknownItemError,
)

__version__ = "0.1.0"

if os.environ.get("TF1COMPAT_VERBOSE", "") in ("", "0"):
    # Must be set before TensorFlow's C++ runtime loads; user settings win.
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

# public name -> submodule that defines it
_LAZY_NAMES = {
    "legacy_graph": "queues",
    "string_input_producer": "queues",
    "slice_input_producer": "queues",
    "input_producer": "queues",
    "TFRecordReader": "queues",
    "FixedLengthRecordReader": "queues",
    "WholeFileReader": "queues",
    "TextLineReader": "queues",
    "batch": "queues",
    "shuffle_batch": "queues",
    "batch_join": "queues",
    "shuffle_batch_join": "queues",
    "prefetch_queue": "queues",
    "shard_files": "queues",
    "SessionIterator": "session",
    "build_record_batches": "fastpath",
    "build_example_batches": "fastpath",
    "patch_tf_slim": "slim",
    "to_tf_data": "tfdata",
    "compare": "comparison",
    "ComparisonReport": "comparison",
}
_SUBMODULES = ("cifar10", "comparison", "errors", "example", "fastpath", "queues", "session",
               "slim", "testing", "tfdata", "tfrecord")

__all__ = sorted([
    "__version__", "CifarFormatError", "CorruptRecordError", "PipelineConfigError",
    "PipelineMismatchError", "Tf1CompatError", "UnknownItemError",
    *_LAZY_NAMES, *_SUBMODULES,
])


def __getattr__(name):
    if name in _LAZY_NAMES:
        module = importlib.import_module(f"tf1compat.{_LAZY_NAMES[name]}")
        value = getattr(module, name)
    elif name in _SUBMODULES:
        value = importlib.import_module(f"tf1compat.{name}")
    else:
        raise AttributeError(f"module 'tf1compat' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__():
    return __all__
