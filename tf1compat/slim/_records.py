"""Example parsing whose run-time errors name the file and record being decoded.

A TF1 reader emits ``(key, value)`` with ``key = "<file>:<byte offset>"``, and
tf-slim's common queue carries both together. When the serialized example
handed to :func:`parse_single_example` is that value, the key is passed to
``tf.io.parse_example`` as the example's name, so a missing ``keys_to_features``
key fails with ``Name: train.tfrecord:1234, Feature: image/class/label (data
type: int64) is required but could not be found.`` -- key, file and offset.
TensorFlow's single-example parser drops names, hence the batch of one.
"""

from tf1compat._tf import tf, v1
from tf1compat.pipeline.graph_model import op_types

# Ops whose outputs are (key, value) for one record: a reader's read, or a
# dequeue from a two-string queue such as tf-slim's common_queue.
_KEY_VALUE_OPS = op_types.READS_ONE | op_types.DEQUEUES_ONE


def record_key_of(serialized):
    """The reader key travelling with the graph tensor ``serialized``, or None."""
    if not tf.is_symbolic_tensor(serialized):
        return None
    op = serialized.op
    if op.type not in _KEY_VALUE_OPS or len(op.outputs) != 2 or serialized.value_index != 1:
        return None
    key = op.outputs[0]
    if key.dtype != tf.string or key.shape.rank not in (None, 0):
        return None
    return key


def _first_example(parsed):
    """Drop the batch dimension of one ``parse_example`` result."""
    if isinstance(parsed, tf.SparseTensor):
        return tf.SparseTensor(parsed.indices[:, 1:], parsed.values, parsed.dense_shape[1:])
    return parsed[0]


def parse_single_example(serialized, features, name=None, example_names=None):
    """``tf.compat.v1.io.parse_single_example`` that names the record in its errors.

    ``example_names`` defaults to the reader key of ``serialized`` (see
    :func:`record_key_of`); without one this is TensorFlow's function unchanged.
    """
    if example_names is None:
        example_names = record_key_of(serialized)
    if example_names is None:
        return v1.io.parse_single_example(serialized, features, name=name)
    parsed = v1.io.parse_example(
        tf.expand_dims(serialized, 0), features, name=name,
        example_names=tf.reshape(example_names, [1]))
    return {key: _first_example(value) for key, value in parsed.items()}
