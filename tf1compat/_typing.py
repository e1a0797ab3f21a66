"""Type aliases the annotations of several wings share (no imports beyond the standard
library; a module at the bottom of the layers, beside :mod:`tf1compat.errors`)."""

import os
from typing import Any, TypeAlias, Union

__all__ = ["PathArg", "AnyPath", "Tensor", "Operation", "Graph", "GraphDef", "NodeDef",
           "Dataset", "Queue", "OpError", "FileName"]

# a file or folder as callers give it: a local path or an fsspec URL (``s3://...``)
PathArg = Union[str, "os.PathLike[str]"]
# a path as error messages show it: also bytes, when the file system gave bytes
AnyPath = Union[str, bytes, "os.PathLike[str]", "os.PathLike[bytes]"]

# TensorFlow's objects. TensorFlow ships no annotations, so to a type checker they are
# Any; the names say what is meant, and TF-free modules need no TensorFlow import.
Tensor: TypeAlias = Any     # tf.Tensor (of a graph), or a tf.SparseTensor where said
Operation: TypeAlias = Any  # tf.Operation
Graph: TypeAlias = Any      # tf.Graph
GraphDef: TypeAlias = Any   # tf.compat.v1.GraphDef
NodeDef: TypeAlias = Any    # a GraphDef's node (NodeDef)
Dataset: TypeAlias = Any    # tf.data.Dataset
Queue: TypeAlias = Any      # tf.queue.QueueBase (a TF1 queue)
OpError: TypeAlias = Any    # tf.errors.OpError (an exception raised by an op)

# a file name as the queue API takes it (TensorFlow's file systems take bytes too)
FileName = Union[str, bytes, "os.PathLike[str]", "os.PathLike[bytes]"]
