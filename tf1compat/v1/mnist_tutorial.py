"""The MNIST helpers TensorFlow 1.x shipped beside its API, for run mode.

TF1 tutorials import them as ``tensorflow.examples.tutorials.mnist.input_data``
/ ``.mnist`` and ``tensorflow.contrib.learn.python.learn.datasets.mnist`` (also
``tf.contrib.learn.datasets.mnist`` and ``load_dataset("mnist")``). They behave as
TF 1.15's: ``read_data_sets`` reads the four standard ``*-idx*-ubyte.gz`` files,
splits off the first ``validation_size`` training examples, and returns
``Datasets(train, validation, test)`` of :class:`DataSet`, whose ``next_batch``
shuffles with NumPy's global generator seeded as TF1 seeded it. Nothing is
downloaded: missing files raise ``FileNotFoundError`` naming the folder and the
files to put there.
"""

import collections
import gzip
import math
import os
import zlib

import numpy as np

from tf1compat._tf import v1
from tf1compat.errors import DatasetFormatError, display_path

__all__ = ["DataSet", "Datasets", "read_data_sets", "load_mnist", "load_dataset",
           "extract_images", "extract_labels", "dense_to_one_hot",
           "inference", "loss", "training", "evaluation",
           "NUM_CLASSES", "IMAGE_SIZE", "IMAGE_PIXELS", "MNIST_FILES"]

Datasets = collections.namedtuple("Datasets", ["train", "validation", "test"])

MNIST_FILES = {"train_images": "train-images-idx3-ubyte.gz",
               "train_labels": "train-labels-idx1-ubyte.gz",
               "test_images": "t10k-images-idx3-ubyte.gz",
               "test_labels": "t10k-labels-idx1-ubyte.gz"}
_IMAGES_MAGIC = 2051
_LABELS_MAGIC = 2049

NUM_CLASSES = 10
IMAGE_SIZE = 28
IMAGE_PIXELS = IMAGE_SIZE * IMAGE_SIZE


def _file_name(f):
    return display_path(getattr(f, "name", "<stream>"))


def _read_idx(f, magic, dims):
    """The uint8 payload of an idx file (gzip stream ``f``) and its ``dims`` sizes. A
    gzip stream cut short, damaged or missing is a DatasetFormatError naming the file."""
    try:
        return _read_idx_stream(f, magic, dims)
    except EOFError as e:       # the compressed stream ends before its end marker
        raise DatasetFormatError(
            f"{_file_name(f)}: MNIST data cut short: the gzip stream ends before its "
            f"end-of-stream marker ({e}); download the file again", path=_file_name(f),
            expected="a whole gzip file") from None
    except (gzip.BadGzipFile, zlib.error) as e:
        raise DatasetFormatError(
            f"{_file_name(f)}: not a readable gzip file ({e}); expected MNIST's "
            f"{'images' if magic == _IMAGES_MAGIC else 'labels'} as downloaded "
            "(*-idx*-ubyte.gz)", path=_file_name(f), expected="a gzip file") from None


def _read_idx_stream(f, magic, dims):
    with gzip.GzipFile(fileobj=f) as stream:
        header = stream.read(4 * (1 + dims))
        if len(header) < 4 * (1 + dims):
            raise DatasetFormatError(
                f"{_file_name(f)}: MNIST header cut short ({len(header)} of "
                f"{4 * (1 + dims)} bytes)", path=_file_name(f), expected=f"magic {magic}")
        found, *sizes = np.frombuffer(header, dtype=">u4").tolist()
        if found != magic:
            kind = "image" if magic == _IMAGES_MAGIC else "label"
            raise DatasetFormatError(
                f"Invalid magic number {found} in MNIST {kind} file: {_file_name(f)} "
                f"(expected {magic})", path=_file_name(f), expected=f"magic {magic}")
        want = math.prod(sizes)
        data = stream.read(want)
        while stream.read(1 << 20):     # to the end, where gzip checks the stream's CRC
            pass
    if len(data) != want:
        raise DatasetFormatError(
            f"{_file_name(f)}: MNIST data cut short: {len(data)} of {want} bytes "
            f"for shape {tuple(sizes)}", path=_file_name(f), expected=f"{want} bytes")
    return np.frombuffer(data, dtype=np.uint8), sizes


def extract_images(f):
    """Images of an idx3 gzip stream as uint8 ``[index, rows, cols, 1]``."""
    data, (count, rows, cols) = _read_idx(f, _IMAGES_MAGIC, 3)
    return data.reshape(count, rows, cols, 1)


def dense_to_one_hot(labels_dense, num_classes):
    """Class labels ``[n]`` as float64 one-hot rows ``[n, num_classes]``."""
    one_hot = np.zeros((labels_dense.shape[0], num_classes))
    one_hot[np.arange(labels_dense.shape[0]), labels_dense.ravel()] = 1
    return one_hot


def extract_labels(f, one_hot=False, num_classes=10):
    """Labels of an idx1 gzip stream as uint8 ``[index]`` (or one-hot rows)."""
    labels, _ = _read_idx(f, _LABELS_MAGIC, 1)
    return dense_to_one_hot(labels, num_classes) if one_hot else labels


def _image_dtype(dtype):
    """``np.uint8`` or ``np.float32`` from a TensorFlow or NumPy dtype (or its name)."""
    resolved = np.dtype(getattr(getattr(dtype, "base_dtype", dtype), "as_numpy_dtype", dtype))
    if resolved not in (np.uint8, np.float32):
        raise TypeError(f"Invalid image dtype {dtype!r}, expected uint8 or float32")
    return resolved


class DataSet:
    """A split of MNIST held in memory; ``next_batch`` walks it in shuffled epochs."""

    def __init__(self, images, labels, fake_data=False, one_hot=False,
                 dtype=np.float32, reshape=True, seed=None):
        graph_seed, op_seed = v1.get_seed(seed)
        np.random.seed(graph_seed if seed is None else op_seed)
        dtype = _image_dtype(dtype)
        if fake_data:
            self._num_examples = 10000
            self.one_hot = one_hot
        else:
            images, labels = np.asarray(images), np.asarray(labels)
            if images.shape[0] != labels.shape[0]:
                raise ValueError(f"images.shape: {images.shape} labels.shape: {labels.shape}: "
                                 "expected one label per image")
            self._num_examples = images.shape[0]
            if reshape:
                if images.ndim != 4 or images.shape[3] != 1:
                    raise ValueError(f"reshape=True expects images [n, rows, cols, 1], "
                                     f"got shape {images.shape}")
                images = images.reshape(images.shape[0], images.shape[1] * images.shape[2])
            if dtype == np.float32:
                images = np.multiply(images.astype(np.float32), 1.0 / 255.0)
        self._images = images
        self._labels = labels
        self._epochs_completed = 0
        self._index_in_epoch = 0

    @property
    def images(self):
        return self._images

    @property
    def labels(self):
        return self._labels

    @property
    def num_examples(self):
        return self._num_examples

    @property
    def epochs_completed(self):
        return self._epochs_completed

    def _shuffle(self):
        order = np.arange(self._num_examples)
        np.random.shuffle(order)
        self._images = self._images[order]
        self._labels = self._labels[order]

    def next_batch(self, batch_size, fake_data=False, shuffle=True):
        """The next ``batch_size`` (images, labels); an epoch's tail is completed
        from the next epoch, reshuffled first when ``shuffle``."""
        if fake_data:
            label = [1] + [0] * 9 if self.one_hot else 0
            return [[1] * IMAGE_PIXELS] * batch_size, [label] * batch_size
        start = self._index_in_epoch
        if self._epochs_completed == 0 and start == 0 and shuffle:
            self._shuffle()
        if start + batch_size <= self._num_examples:
            self._index_in_epoch = end = start + batch_size
            return self._images[start:end], self._labels[start:end]
        self._epochs_completed += 1
        rest_images, rest_labels = self._images[start:], self._labels[start:]
        if shuffle:
            self._shuffle()
        self._index_in_epoch = batch_size - (self._num_examples - start)
        end = self._index_in_epoch
        return (np.concatenate((rest_images, self._images[:end]), axis=0),
                np.concatenate((rest_labels, self._labels[:end]), axis=0))


def _open_mnist_files(train_dir):
    """Paths of the four MNIST files in ``train_dir``; a missing one is named with the rest."""
    paths = {key: os.path.join(train_dir, name) for key, name in MNIST_FILES.items()}
    missing = [MNIST_FILES[key] for key, path in paths.items() if not os.path.isfile(path)]
    if missing:
        raise FileNotFoundError(
            2, f"MNIST data not found in {display_path(train_dir)}: missing "
               f"{', '.join(missing)} (run mode does not download; put the four files "
               f"{', '.join(MNIST_FILES.values())} there)", os.fspath(train_dir))
    return paths


def read_data_sets(train_dir, fake_data=False, one_hot=False, dtype=np.float32, reshape=True,
                   validation_size=5000, seed=None, source_url=None):
    """MNIST from the four ``*-idx*-ubyte.gz`` files in ``train_dir``, as TF 1.x's
    ``input_data.read_data_sets`` returned it (``source_url`` is accepted and unused)."""
    del source_url
    if fake_data:
        return Datasets(*(DataSet([], [], fake_data=True, one_hot=one_hot, dtype=dtype,
                                  seed=seed) for _ in range(3)))
    paths = _open_mnist_files(train_dir)
    with open(paths["train_images"], "rb") as f:
        train_images = extract_images(f)
    with open(paths["train_labels"], "rb") as f:
        train_labels = extract_labels(f, one_hot=one_hot)
    with open(paths["test_images"], "rb") as f:
        test_images = extract_images(f)
    with open(paths["test_labels"], "rb") as f:
        test_labels = extract_labels(f, one_hot=one_hot)
    if not 0 <= validation_size <= len(train_images):
        raise ValueError(f"Validation size should be between 0 and {len(train_images)}. "
                         f"Received: {validation_size}.")
    options = {"dtype": dtype, "reshape": reshape, "seed": seed}
    return Datasets(
        train=DataSet(train_images[validation_size:], train_labels[validation_size:], **options),
        validation=DataSet(train_images[:validation_size], train_labels[:validation_size],
                           **options),
        test=DataSet(test_images, test_labels, **options))


def load_mnist(train_dir="MNIST-data"):
    """``read_data_sets(train_dir)`` with its defaults, as contrib.learn's ``load_mnist``."""
    return read_data_sets(train_dir)


def load_dataset(name, size="small", test_with_fake_data=False):
    """contrib.learn's ``load_dataset``: only ``"mnist"`` reads local files; the others
    (iris, boston, dbpedia) came with TF's own data or a download and are refused."""
    del size
    if name != "mnist":
        raise ValueError(f"load_dataset({name!r}): run mode provides only 'mnist' "
                         "(read from ./MNIST-data); the other data sets were downloaded")
    return read_data_sets("MNIST-data", fake_data=test_with_fake_data)


def _layer(inputs, fan_in, units):
    weights = v1.Variable(v1.truncated_normal([fan_in, units], stddev=1.0 / math.sqrt(fan_in)),
                          name="weights")
    biases = v1.Variable(v1.zeros([units]), name="biases")
    return v1.matmul(inputs, weights) + biases


def inference(images, hidden1_units, hidden2_units):
    """The tutorial's two ReLU layers and a linear softmax layer; returns the logits."""
    with v1.name_scope("hidden1"):
        hidden1 = v1.nn.relu(_layer(images, IMAGE_PIXELS, hidden1_units))
    with v1.name_scope("hidden2"):
        hidden2 = v1.nn.relu(_layer(hidden1, hidden1_units, hidden2_units))
    with v1.name_scope("softmax_linear"):
        return _layer(hidden2, hidden2_units, NUM_CLASSES)


def loss(logits, labels):
    """Mean sparse softmax cross-entropy of ``logits`` against int ``labels``."""
    return v1.losses.sparse_softmax_cross_entropy(labels=v1.to_int64(labels), logits=logits)


def training(loss, learning_rate):
    """A gradient-descent train op that also counts ``global_step`` and logs the loss."""
    v1.summary.scalar("loss", loss)
    optimizer = v1.train.GradientDescentOptimizer(learning_rate)
    global_step = v1.Variable(0, name="global_step", trainable=False)
    return optimizer.minimize(loss, global_step=global_step)


def evaluation(logits, labels):
    """How many of ``labels`` are the top-1 class of ``logits``."""
    return v1.reduce_sum(v1.cast(v1.nn.in_top_k(logits, labels, 1), v1.int32))
