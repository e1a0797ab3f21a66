"""tf1compat: legacy TensorFlow 1 input pipelines, working and fast on TensorFlow 2.

The public names load lazily, so the pure-Python tools (``tf1compat.tfrecord``,
``tf1compat.example``, ``tf1compat inspect`` / ``verify``) never import TensorFlow.
When tf1compat loads TensorFlow, its start-up notices and the deprecation notices
of tf1compat's own TF1 calls are left out (see :mod:`tf1compat._tf`), unless the
environment variable ``TF1COMPAT_VERBOSE=1`` is set.
"""

import importlib
from typing import Any

from tf1compat.errors import (
    CifarFormatError,
    CorruptRecordError,
    DataServiceError,
    DatasetFormatError,
    ImageFormatError,
    IncompleteOutputError,
    LoweringError,
    PipelineConfigError,
    PipelineMismatchError,
    QueueRunnersNotStartedError,
    Tf1CompatError,
    UnknownItemError,
    UnsupportedTF1Error,
)

__version__ = "0.2.0"  # CHANGELOG.md says what changed

# public name -> module that defines it
_LAZY_NAMES = {
    "legacy_graph": "pipeline.queues",
    "string_input_producer": "pipeline.queues",
    "slice_input_producer": "pipeline.queues",
    "input_producer": "pipeline.queues",
    "TFRecordReader": "pipeline.queues",
    "FixedLengthRecordReader": "pipeline.queues",
    "WholeFileReader": "pipeline.queues",
    "TextLineReader": "pipeline.queues",
    "batch": "pipeline.queues",
    "shuffle_batch": "pipeline.queues",
    "batch_join": "pipeline.queues",
    "shuffle_batch_join": "pipeline.queues",
    "prefetch_queue": "pipeline.queues",
    "shard_files": "pipeline.queues",
    "SessionIterator": "pipeline.session",
    "build_record_batches": "pipeline.fastpath",
    "build_example_batches": "pipeline.fastpath",
    "patch_tf_slim": "slim",
    "unpatch_tf_slim": "slim",
    "to_tf_data": "migrate.tfdata",
    "describe_lowering": "migrate.lowering",
    "compare": "migrate.comparison",
    "ComparisonReport": "migrate.comparison",
}
# public modules: the user-facing ones (tfrecord ... testing), then the wings
_MODULES = ("tfrecord", "example", "imagefolder", "testing", "errors", "records", "pipeline",
            "slim", "cifar10", "convert", "migrate", "v1")

__all__ = sorted([
    "__version__", "CifarFormatError", "CorruptRecordError", "DatasetFormatError",
    "DataServiceError", "ImageFormatError", "IncompleteOutputError", "LoweringError",
    "PipelineConfigError", "PipelineMismatchError",
    "QueueRunnersNotStartedError", "Tf1CompatError", "UnknownItemError", "UnsupportedTF1Error",
    *_LAZY_NAMES, *_MODULES,
])


def __getattr__(name: str) -> Any:
    if name in _LAZY_NAMES:
        module = importlib.import_module(f"tf1compat.{_LAZY_NAMES[name]}")
        value = getattr(module, name)
    elif name in _MODULES:
        value = importlib.import_module(f"tf1compat.{name}")
    else:
        raise AttributeError(f"module 'tf1compat' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
