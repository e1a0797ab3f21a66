"""tf-slim's data API (``tf_slim.data``), working on current TensorFlow.

``from tf1compat import slim`` is a drop-in for the old ``slim =
tf.contrib.slim`` / ``import tf_slim as slim`` in data code::

    slim.dataset.Dataset, slim.tfexample_decoder.TFExampleDecoder (and handlers),
    slim.dataset_data_provider.DatasetDataProvider, slim.parallel_reader,
    slim.prefetch_queue.prefetch_queue, slim.data_decoder, slim.data_provider,
    slim.queues.QueueRunners

They are tf-slim's own module objects, so classes are shared with scripts that
import ``tf_slim`` directly. Importing this package changes nothing; each use of
one of these modules through it (``slim.dataset``, ``from tf1compat.slim import
dataset``) applies :func:`patch_tf_slim` unless it is in place (tf-slim's modules
only, never TensorFlow's; see ``_patch`` for what is fixed and how), and
:func:`unpatch_tf_slim` undoes it: nothing patched outlives it until the next use.
:class:`BatchedDatasetDataProvider` (tf1compat's own) reads and decodes whole
batches per step: the fast path for the same items.
"""

import importlib
from typing import Any

from tf1compat.slim._patch import TfSlimRepair, patch_tf_slim, tf_slim_patched, unpatch_tf_slim

# name -> the tf-slim module handed out, repaired, on each use
_TF_SLIM_MODULES = {
    "queues": "tf_slim.queues",
    "data_decoder": "tf_slim.data.data_decoder",
    "data_provider": "tf_slim.data.data_provider",
    "dataset": "tf_slim.data.dataset",
    "dataset_data_provider": "tf_slim.data.dataset_data_provider",
    "parallel_reader": "tf_slim.data.parallel_reader",
    "prefetch_queue": "tf_slim.data.prefetch_queue",
    "tfexample_decoder": "tf_slim.data.tfexample_decoder",
}
__all__ = ["BatchedDatasetDataProvider", "TfSlimRepair", "patch_tf_slim", "tf_slim_patched",
           "unpatch_tf_slim", *_TF_SLIM_MODULES]


def __getattr__(name: str) -> Any:
    if name in _TF_SLIM_MODULES:   # not kept here: each use repairs again after an unpatch
        patch_tf_slim()
        return importlib.import_module(_TF_SLIM_MODULES[name])
    if name != "BatchedDatasetDataProvider":
        raise AttributeError(f"module 'tf1compat.slim' has no attribute {name!r}")
    from tf1compat.slim.batched_provider import BatchedDatasetDataProvider
    globals()[name] = BatchedDatasetDataProvider
    return BatchedDatasetDataProvider


def __dir__() -> list[str]:
    return sorted(__all__)
