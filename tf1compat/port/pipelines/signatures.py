"""TF1's queue-API calls as the program wrote them: which call it is, and its arguments.

:func:`bind` matches a LibCST call's arguments to the TF1 function's parameters
(:data:`PARAMETERS`, TF1's own names and order), so the rewrite reuses the program's
own expressions (``batch_size=FLAGS.batch_size``) in the tf.data code it writes.
"""

import libcst as cst

__all__ = ["PARAMETERS", "PRODUCERS", "READERS", "BATCHING", "dotted", "bind", "Bound",
           "ArgumentsNotBound"]

# TF1's parameters, in order (tensorflow/python/training/input.py, io_ops.py, tf-slim).
PARAMETERS = {
    "string_input_producer": ("string_tensor", "num_epochs", "shuffle", "seed", "capacity",
                              "shared_name", "name", "cancel_op"),
    "slice_input_producer": ("tensor_list", "num_epochs", "shuffle", "seed", "capacity",
                             "shared_name", "name"),
    "input_producer": ("input_tensor", "element_shape", "num_epochs", "shuffle", "seed",
                       "capacity", "shared_name", "summary_name", "name", "cancel_op"),
    "range_input_producer": ("limit", "num_epochs", "shuffle", "seed", "capacity",
                             "shared_name", "name"),
    "batch": ("tensors", "batch_size", "num_threads", "capacity", "enqueue_many", "shapes",
              "dynamic_pad", "allow_smaller_final_batch", "shared_name", "name"),
    "shuffle_batch": ("tensors", "batch_size", "capacity", "min_after_dequeue", "num_threads",
                      "seed", "enqueue_many", "shapes", "allow_smaller_final_batch",
                      "shared_name", "name"),
    "batch_join": ("tensors_list", "batch_size", "capacity", "enqueue_many", "shapes",
                   "dynamic_pad", "allow_smaller_final_batch", "shared_name", "name"),
    "shuffle_batch_join": ("tensors_list", "batch_size", "capacity", "min_after_dequeue",
                           "seed", "enqueue_many", "shapes", "allow_smaller_final_batch",
                           "shared_name", "name"),
    "prefetch_queue": ("tensors", "capacity", "num_threads", "dynamic_pad", "shared_name",
                       "name"),
    "TFRecordReader": ("name", "options"),
    "FixedLengthRecordReader": ("record_bytes", "header_bytes", "footer_bytes", "hop_bytes",
                                "name", "encoding"),
    "TextLineReader": ("skip_header_lines", "name"),
    "WholeFileReader": ("name",),
    "read": ("queue", "name"),
    "read_up_to": ("queue", "num_records", "name"),
    "DatasetDataProvider": ("dataset", "num_readers", "reader_kwargs", "shuffle", "num_epochs",
                            "common_queue_capacity", "common_queue_min", "record_key", "seed",
                            "scope"),
    "get": ("items",),
}
PRODUCERS = ("string_input_producer", "slice_input_producer", "input_producer",
             "range_input_producer")
READERS = ("TFRecordReader", "FixedLengthRecordReader", "TextLineReader", "WholeFileReader")
BATCHING = ("batch", "shuffle_batch", "batch_join", "shuffle_batch_join")


class ArgumentsNotBound(ValueError):
    """A call's arguments cannot be matched to the TF1 function's (``*args``, an
    unknown keyword)."""


def dotted(node):
    """``a.b.c`` for a Name/Attribute chain, else None."""
    parts = []
    while isinstance(node, cst.Attribute):
        parts.append(node.attr.value)
        node = node.value
    if isinstance(node, cst.Name):
        return ".".join([node.value, *parts[::-1]])
    return None


class Bound:
    """A call's arguments by TF1 parameter name: ``bound[name]`` is the expression
    the program passed, or None when it left the default."""

    def __init__(self, function, call, arguments):
        self.function, self.call, self.arguments = function, call, arguments

    def __getitem__(self, name):
        return self.arguments.get(name)

    def __contains__(self, name):
        return name in self.arguments


def bind(function, call):
    """The :class:`Bound` arguments of ``call`` (a ``cst.Call``) to TF1's ``function``."""
    names = PARAMETERS[function]
    arguments = {}
    for position, argument in enumerate(call.args):
        if argument.star:
            raise ArgumentsNotBound(f"{function} is called with {argument.star}arguments")
        if argument.keyword is None:
            if position >= len(names):
                raise ArgumentsNotBound(f"{function} takes {len(names)} arguments")
            arguments[names[position]] = argument.value
        elif argument.keyword.value in names:
            arguments[argument.keyword.value] = argument.value
        else:
            raise ArgumentsNotBound(f"{function} has no argument {argument.keyword.value!r}")
    return Bound(function, call, arguments)
