"""CIFAR-10 and CIFAR-100: the binary format, a converter to slim's TFRecords,
slim's ``get_split`` and the tutorial's queue ``inputs`` / ``distorted_inputs``.

- :func:`read_batch_file`, :func:`iter_batch_file`, :func:`make_synthetic`: the
  binary batches (``_format``);
- :func:`convert`, :func:`encode_png`: binary -> ``cifar10_{train,test}.tfrecord``
  + ``labels.txt`` (``_convert``);
- :func:`get_split`, :func:`inputs`, :func:`distorted_inputs`: reading in a TF1
  graph (``_readers``).

Importing this package does not import TensorFlow; only the graph-building
functions do, when called.
"""

from tf1compat.cifar10._convert import ConversionSummary, convert, encode_png
from tf1compat.cifar10._format import (
    CIFAR100_COARSE_LABELS,
    CIFAR100_FINE_LABELS,
    LABELS,
    iter_batch_file,
    make_synthetic,
    read_batch_file,
)
from tf1compat.cifar10._readers import (
    IMAGE_SIZE,
    SPLITS_TO_SIZES,
    distorted_inputs,
    get_split,
    inputs,
)

__all__ = [
    "LABELS", "CIFAR100_COARSE_LABELS", "CIFAR100_FINE_LABELS", "SPLITS_TO_SIZES",
    "IMAGE_SIZE", "ConversionSummary", "read_batch_file", "iter_batch_file",
    "make_synthetic", "encode_png", "convert", "get_split", "inputs", "distorted_inputs",
]
