"""tf-slim's data API (``tf_slim.data``), working on current TensorFlow.

Importing this package applies :func:`patch_tf_slim` and re-exports the
patched tf-slim modules, so ``from tf1compat import slim`` is a drop-in for the
old ``slim = tf.contrib.slim`` / ``import tf_slim as slim`` in data code::

    slim.dataset.Dataset, slim.tfexample_decoder.TFExampleDecoder (and handlers),
    slim.dataset_data_provider.DatasetDataProvider, slim.parallel_reader,
    slim.prefetch_queue.prefetch_queue, slim.data_decoder, slim.data_provider,
    slim.queues.QueueRunners

They are tf-slim's own module objects, so classes are shared with scripts that
import ``tf_slim`` directly. See ``_patch`` for what is fixed and how.
:class:`BatchedDatasetDataProvider` (tf1compat's own) reads and decodes whole
batches per step: the fast path for the same items.
"""

from tf1compat.slim._patch import patch_tf_slim

patch_tf_slim()

# Imported after patching on purpose: these are the patched tf-slim modules.
from tf_slim import queues  # noqa: E402
from tf_slim.data import (  # noqa: E402
    data_decoder,
    data_provider,
    dataset,
    dataset_data_provider,
    parallel_reader,
    prefetch_queue,
    tfexample_decoder,
)

from tf1compat.slim.batched_provider import BatchedDatasetDataProvider  # noqa: E402

__all__ = [
    "BatchedDatasetDataProvider", "data_decoder", "data_provider", "dataset",
    "dataset_data_provider", "parallel_reader", "patch_tf_slim", "prefetch_queue", "queues",
    "tfexample_decoder",
]
