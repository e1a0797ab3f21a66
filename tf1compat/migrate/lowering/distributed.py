"""A lowered plan cut for a tf.data service (:mod:`tf1compat.migrate.service`): what
its workers run, what runs here (:func:`build_distributed`).

- the source: a file producer with ``num_epochs`` set becomes the list of its file
  names over all epochs, in TF1's order, computed here once, so each file of each
  epoch is one split the dispatcher hands out; any other source (a producer of
  tensors, ``num_epochs=None``, a file list known only when the session runs) keeps
  its epochs as the splits: one worker produces a whole epoch;
- the workers run everything up to the last batch, batching with the remainder
  kept, and the batch-then-parse map after it; here the batches are cut into
  examples and batched again as the queue pipeline batches (``batch_size``,
  remainder dropped or kept), so batch sizes and counts are TF1's and no worker
  drops its own remainder; a ``padded_batch`` is done here; what follows the batch
  (ops on the dequeued batch) runs here too.

It sits in the lowering because it cuts the lowering's plans; the service module it
reads through knows nothing of plans.
"""

import math

from tf1compat._tf import tf, v1
from tf1compat.errors import PipelineConfigError
from tf1compat.migrate.lowering.batch_then_parse import VectorizedMap
from tf1compat.migrate.lowering.plan import Batch, Interleave, Prefetch, Read, Values
from tf1compat.migrate.service import (
    PROCESSING_MODE,
    SERVICE_TIMEOUT,
    bounded_read,
    call_within,
    check_reachable,
    check_service_timeout,
    parse_service,
)
from tf1compat.pipeline.graph_model import op_types

__all__ = ["build_distributed"]


def _evaluate(tensors):
    """The numpy values of ``tensors``: eager ones' own, graph ones' from a session of
    their graph (run mode has no eager execution)."""
    if tf.executing_eagerly():
        return tf.nest.map_structure(lambda tensor: tensor.numpy(), tensors)
    with v1.Session(graph=tf.nest.flatten(tensors)[0].graph) as session:
        return session.run(tensors)


def _file_splits(values):
    """The file names of producer ``values`` over all its epochs, as a
    ``from_tensor_slices`` source (each name one split), or None when they are not
    known here (``num_epochs=None``, files matched when the session runs)."""
    if values.num_epochs is None or values.initial:
        return None
    everything = values.build()
    count = values.length * values.num_epochs if values.length else 2 ** 31 - 1
    names = _evaluate(everything.batch(count).get_single_element())
    return tf.data.Dataset.from_tensor_slices(names)


def _cut(plan):
    """``(worker steps, client steps, batch)``: where the plan runs; ``batch`` is the
    batch the client redoes (None when the workers' elements pass as they come)."""
    steps = plan.chain()
    batches = [i for i, step in enumerate(steps) if isinstance(step, Batch)]
    if not batches:
        end = len(steps)
        while end > 1 and isinstance(steps[end - 1], Prefetch):
            end -= 1
        return steps[:end], steps[end:], None
    last = batches[-1]
    for step in steps[:last]:
        if isinstance(step, Batch) and step.drop_remainder:
            raise PipelineConfigError(
                f"to_tf_data: service: a {step.text()} before the last batch would drop "
                "each worker's remainder (examples TF1 delivers); this pipeline cannot be "
                "distributed", argument="service", expected="one batch, or no remainder dropped")
    batch = steps[last]
    if batch.padded:      # padding follows the longest element of each batch: batch here
        return steps[:last], steps[last:], None
    end = last + 1
    while end < len(steps) and isinstance(steps[end], VectorizedMap):
        end += 1
    keep_remainder = Batch(batch.upstream, batch.batch_size, False, batch.padded)
    return steps[:last] + [keep_remainder] + steps[last + 1:end], steps[end:], batch


def _apply(steps, dataset=None):
    for step in steps:
        dataset = step.apply(dataset)
    return dataset


def _worker_dataset(steps):
    first = steps[0]
    if isinstance(first, Values) and len(steps) > 1 and isinstance(steps[1], (Read, Interleave)):
        source = _file_splits(first)
        if source is not None:
            return _apply(steps[1:], source)
    return _apply(steps)


def _check_no_python(dataset):
    """PipelineConfigError when ``dataset`` calls Python (``tf.py_func``,
    ``numpy_function``): the function lives in this process, not in the workers."""
    graph_def = tf.compat.v1.GraphDef.FromString(_evaluate(dataset._as_serialized_graph()))
    nodes = [*graph_def.node, *(node for function in graph_def.library.function
                                for node in function.node_def)]
    for node in nodes:
        if node.op in op_types.PY_FUNCS:
            raise PipelineConfigError(
                f"to_tf_data: service: the pipeline calls Python (op '{node.name}' "
                f"({node.op}): tf.py_func, tf.numpy_function); tf.data service workers are "
                "other processes and cannot call this process's functions",
                argument="service", expected="a pipeline of TensorFlow ops only")


def _register(service, dataset, timeout):
    """The id the dispatcher at ``service`` gives ``dataset``, waited for at most
    ``timeout`` seconds (a dispatcher stopped since it was checked). In a graph the op
    is made here and run in :func:`call_within`'s thread (a graph is the default per
    thread); eagerly, making it is the call."""
    if tf.executing_eagerly():
        def register():
            return tf.data.experimental.service.register_dataset(service, dataset).numpy()
    else:
        registered = tf.data.experimental.service.register_dataset(service, dataset)

        def register():
            return _evaluate(registered)
    return call_within(service, timeout, "registering the pipeline", register)


def build_distributed(plan, service, service_timeout=None, api="to_tf_data"):
    """The dataset of ``plan`` (a lowered plan) with its work done by the tf.data
    service at ``service`` (``grpc://HOST:PORT``), in the current context: eager, or
    a graph (the dataset then captures only constants, so a one-shot iterator takes it).
    Each element of the workers is waited for at most ``service_timeout`` seconds
    (None: :data:`SERVICE_TIMEOUT`; inf: TensorFlow's client reads them, unbounded).
    """
    parse_service(service, api)
    service_timeout = check_service_timeout(
        api, SERVICE_TIMEOUT if service_timeout is None else service_timeout)
    worker_steps, client_steps, batch = _cut(plan)   # refuses before any waiting
    check_reachable(service, api=api)
    on_workers = _worker_dataset(worker_steps)
    _check_no_python(on_workers)
    dataset_id = _register(service, on_workers, service_timeout)
    if math.isinf(service_timeout):     # TensorFlow's own client: its unbounded waits
        dataset = tf.data.experimental.service.from_dataset_id(
            PROCESSING_MODE, service, dataset_id, on_workers.element_spec)
    else:
        dataset = bounded_read(service, dataset_id, on_workers.element_spec, service_timeout)
    if batch is not None:
        dataset = dataset.unbatch().batch(batch.batch_size, drop_remainder=batch.drop_remainder)
    dataset = _apply(client_steps, dataset)
    if not any(isinstance(step, Prefetch) for step in client_steps):
        dataset = dataset.prefetch(tf.data.AUTOTUNE)
    return dataset
