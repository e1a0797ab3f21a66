"""Argument checks shared by the queue API and its fast paths.

Each raises :class:`~tf1compat.errors.PipelineConfigError` (a ``ValueError``)
naming the API, the argument, the value given and what was expected.
"""

from tf1compat._tf import tf
from tf1compat.errors import PipelineConfigError

__all__ = ["require_graph_mode", "check_positive_int", "check_num_epochs",
           "check_batching", "check_shuffling"]


def require_graph_mode(api):
    if tf.executing_eagerly():
        raise RuntimeError(
            f"{api} builds a TF1 queue pipeline, which needs graph mode; build it "
            "inside `with tf1compat.legacy_graph():` and run it with "
            "tf1compat.SessionIterator")


def check_positive_int(api, argument, value, allow_tensor=False):
    if allow_tensor and isinstance(value, (tf.Tensor, tf.Variable)):
        return
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise PipelineConfigError(
            f"{api}: {argument} must be a positive integer, got {value!r}",
            argument=argument, expected="an integer >= 1")


def check_num_epochs(api, num_epochs):
    if num_epochs is not None:
        check_positive_int(api, "num_epochs", num_epochs)


def check_batching(api, batch_size, capacity, num_threads=1):
    require_graph_mode(api)
    check_positive_int(api, "batch_size", batch_size, allow_tensor=True)
    check_positive_int(api, "capacity", capacity)
    check_positive_int(api, "num_threads", num_threads)


def check_shuffling(api, capacity, min_after_dequeue):
    if isinstance(min_after_dequeue, bool) or not isinstance(min_after_dequeue, int) \
            or min_after_dequeue < 0:
        raise PipelineConfigError(
            f"{api}: min_after_dequeue must be a non-negative integer, got {min_after_dequeue!r}",
            argument="min_after_dequeue", expected="an integer >= 0")
    if capacity <= min_after_dequeue:
        raise PipelineConfigError(
            f"{api}: capacity={capacity} must be larger than min_after_dequeue="
            f"{min_after_dequeue} (the queue could never release an element); "
            f"TF1's guide uses capacity = min_after_dequeue + 3 * batch_size",
            argument="capacity", expected=f"capacity > {min_after_dequeue}")
