"""The queue API's checks that need TensorFlow: graph mode, and counts that may be
tensors. Every other rule is in :mod:`tf1compat._checks`, which these build on."""

from typing import Any

from tf1compat import _checks
from tf1compat._tf import tf
from tf1compat.errors import PipelineConfigError

__all__ = ["require_graph_mode", "check_positive_int", "check_batching", "check_shuffling"]


def require_graph_mode(api: str, error: type[Exception] = RuntimeError) -> None:
    """Raise ``error`` (TensorFlow's type for ``api``) when executing eagerly."""
    if tf.executing_eagerly():
        raise error(
            f"{api} builds a TF1 queue pipeline, which needs graph mode; build it "
            "inside `with tf1compat.legacy_graph():` and run it with "
            "tf1compat.SessionIterator")


def check_positive_int(api: str, argument: str, value: Any, allow_tensor: bool = False,
                       allow_float: bool = False) -> Any:
    """:func:`tf1compat._checks.check_positive_int`, letting a tensor pass through
    with ``allow_tensor``."""
    if allow_tensor and isinstance(value, (tf.Tensor, tf.Variable)):
        return value
    return _checks.check_positive_int(api, argument, value, allow_float=allow_float)


def check_batching(api: str, batch_size: Any, capacity: Any, num_threads: int = 1, *,
                   eager_error: type[Exception] = RuntimeError, unbounded: bool = False) -> None:
    """Graph mode (else ``eager_error``), a positive ``batch_size`` (or a tensor) and
    ``num_threads``, and a positive ``capacity``, or with ``unbounded`` a TF1 queue
    capacity (negative: no limit)."""
    require_graph_mode(api, eager_error)
    check_positive_int(api, "batch_size", batch_size, allow_tensor=True)
    if unbounded:
        _checks.check_queue_capacity(api, capacity)
    else:
        check_positive_int(api, "capacity", capacity)
    check_positive_int(api, "num_threads", num_threads)


def check_shuffling(api: str, capacity: int, min_after_dequeue: int) -> None:
    _checks.check_non_negative_int(api, "min_after_dequeue", min_after_dequeue)
    if capacity <= min_after_dequeue:
        raise PipelineConfigError(
            f"{api}: capacity={capacity} must be larger than min_after_dequeue="
            f"{min_after_dequeue} (the queue could never release an element); "
            f"TF1's guide uses capacity = min_after_dequeue + 3 * batch_size",
            argument="capacity", expected=f"capacity > {min_after_dequeue}")
