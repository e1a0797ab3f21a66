"""Argument checks shared by the queue API and its fast paths.

Each raises :class:`~tf1compat.errors.PipelineConfigError` (a ``ValueError``)
naming the API, the argument, the value given and what was expected. Integer
arguments accept numpy integers too, as TensorFlow does.
"""

import math
import numbers

from tf1compat._tf import tf
from tf1compat.errors import PipelineConfigError

__all__ = ["require_graph_mode", "check_positive_int", "check_non_negative_int",
           "check_num_epochs", "check_queue_capacity", "check_batching", "check_shuffling"]


def require_graph_mode(api, error=RuntimeError):
    """Raise ``error`` (TensorFlow's type for ``api``) when executing eagerly."""
    if tf.executing_eagerly():
        raise error(
            f"{api} builds a TF1 queue pipeline, which needs graph mode; build it "
            "inside `with tf1compat.legacy_graph():` and run it with "
            "tf1compat.SessionIterator")


def _as_int(value, allow_float):
    """``value`` as an int if it is an integer (numpy too) or, when ``allow_float``,
    a float with an integral value; otherwise None. Booleans are not integers here."""
    if isinstance(value, bool):
        return None
    if isinstance(value, numbers.Integral):
        return int(value)
    if allow_float and isinstance(value, numbers.Real) and float(value).is_integer():
        return int(value)
    return None


def _check_int(api, argument, value, minimum, allow_float):
    number = _as_int(value, allow_float)
    if number is None or number < minimum:
        kind = "a positive integer" if minimum == 1 else "a non-negative integer"
        raise PipelineConfigError(
            f"{api}: {argument} must be {kind}, got {value!r}",
            argument=argument, expected=f"an integer >= {minimum}")
    return number


def check_positive_int(api, argument, value, allow_tensor=False, allow_float=False):
    """Return ``value`` as an int >= 1 (a tensor passes through with ``allow_tensor``).

    ``allow_float`` also takes integral floats such as ``2.0``, which TF1 turns
    into ints for op attributes."""
    if allow_tensor and isinstance(value, (tf.Tensor, tf.Variable)):
        return value
    return _check_int(api, argument, value, 1, allow_float)


def check_non_negative_int(api, argument, value, allow_float=False):
    """Return ``value`` as an int >= 0."""
    return _check_int(api, argument, value, 0, allow_float)


def check_num_epochs(api, num_epochs):
    """``None`` (repeat forever) or the number of epochs as an int >= 1."""
    if num_epochs is None:
        return None
    return check_positive_int(api, "num_epochs", num_epochs, allow_float=True)


def check_queue_capacity(api, capacity, argument="capacity"):
    """A TF1 queue capacity: a number whose integer part is not 0 (negative means
    no limit, as TensorFlow's queue ops document). Capacity 0 would block every
    enqueue forever; TF1 fails on it with a ZeroDivisionError or not at all."""
    if isinstance(capacity, bool) or not isinstance(capacity, numbers.Real) \
            or not math.isfinite(capacity) or int(capacity) == 0:
        raise PipelineConfigError(
            f"{api}: {argument} must be a positive integer (or negative for no limit), "
            f"got {capacity!r}", argument=argument,
            expected="an integer >= 1, or < 0 for an unbounded queue")
    return capacity


def check_batching(api, batch_size, capacity, num_threads=1, *, eager_error=RuntimeError,
                   unbounded=False):
    """Graph mode (else ``eager_error``), a positive ``batch_size`` (or a tensor) and
    ``num_threads``, and a positive ``capacity``, or with ``unbounded`` a TF1 queue
    capacity (negative: no limit)."""
    require_graph_mode(api, eager_error)
    check_positive_int(api, "batch_size", batch_size, allow_tensor=True)
    if unbounded:
        check_queue_capacity(api, capacity)
    else:
        check_positive_int(api, "capacity", capacity)
    check_positive_int(api, "num_threads", num_threads)


def check_shuffling(api, capacity, min_after_dequeue):
    check_non_negative_int(api, "min_after_dequeue", min_after_dequeue)
    if capacity <= min_after_dequeue:
        raise PipelineConfigError(
            f"{api}: capacity={capacity} must be larger than min_after_dequeue="
            f"{min_after_dequeue} (the queue could never release an element); "
            f"TF1's guide uses capacity = min_after_dequeue + 3 * batch_size",
            argument="capacity", expected=f"capacity > {min_after_dequeue}")
