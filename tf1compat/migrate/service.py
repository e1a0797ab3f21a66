"""A lowered queue pipeline read through a tf.data service cluster (TensorFlow's own
``DispatchServer`` and ``WorkerServer``, started by :mod:`.service_servers`).

The processing mode is ``ShardingPolicy.DYNAMIC`` (TF's "distributed_epoch"): the
dispatcher owns the pipeline's source and hands its elements ("splits") to the
workers one at a time, so without a worker failure every example is produced once
per epoch, by one worker; when a worker dies the splits it was reading are not
finished (TensorFlow promises at most once) and the epoch still ends.
``ShardingPolicy.OFF`` ("parallel_epochs") would make every worker produce the whole
epoch (each example once per worker) and the static policies need a fixed worker
list; neither keeps the pipeline's epochs.

How the lowered plan is cut (:func:`build_distributed`):

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

Bounded waits: TensorFlow's client waits for a worker that died until the dispatcher
drops it, and for a dispatcher that died forever. Here the workers' elements are taken
from the service in a session of their own, each wait bounded by ``service_timeout``
seconds (``RunOptions.timeout_in_ms``, which cancels the read); past it the reading
raises :class:`~tf1compat.errors.DataServiceError` naming the dispatcher, the wait and
what to restart, and the service's reading ends. tf.data passes the error on as
``tf.errors.UnknownError`` carrying its message; :func:`stalled_error` gives the
:class:`~tf1compat.errors.DataServiceError` itself.
"""

import math
import threading
import urllib.parse

from tf1compat._checks import check_seconds, check_service_address
from tf1compat._tf import tf, v1
from tf1compat.errors import DataServiceError, PipelineConfigError
from tf1compat.migrate.lowering.batch_then_parse import VectorizedMap
from tf1compat.migrate.lowering.plan import Batch, Interleave, Prefetch, Read, Values
from tf1compat.pipeline.graph_model import op_types

__all__ = ["CONNECT_TIMEOUT", "SERVICE_TIMEOUT", "build_distributed", "check_reachable",
           "check_service_timeout", "parse_service", "stalled_error"]

CONNECT_TIMEOUT = 5.0   # seconds a client waits for the dispatcher before giving up
# Seconds the reader waits for one element of the workers before it gives up: longer
# than a worker's start (its shuffle buffer filled: TF1's min_after_dequeue of a few
# thousand decoded images at tens per second), far shorter than TensorFlow's wait.
SERVICE_TIMEOUT = 120.0
_PROBE_TIMEOUT = 2.0    # seconds the dispatcher gets to answer when a wait ran out
PROCESSING_MODE = "distributed_epoch"   # ShardingPolicy.DYNAMIC
_SCHEME = "grpc"


def parse_service(service, api="to_tf_data"):
    """``"grpc://HOST:PORT"`` -> ``"HOST:PORT"``; anything else raises PipelineConfigError
    (:func:`~tf1compat._checks.check_service_address`)."""
    return urllib.parse.urlsplit(check_service_address(api, "service", service)).netloc


def check_reachable(service, timeout=CONNECT_TIMEOUT, api="to_tf_data"):
    """Raise :class:`DataServiceError` unless a gRPC server answers at ``service``
    (``grpc://HOST:PORT``) within ``timeout`` seconds. TensorFlow's client would
    retry an absent dispatcher for an hour."""
    import grpc
    address = parse_service(service, api)
    channel = grpc.insecure_channel(address)
    try:
        grpc.channel_ready_future(channel).result(timeout=timeout)
    except grpc.FutureTimeoutError:
        raise DataServiceError(
            f"{api}: no tf.data service dispatcher answers at {service} (waited "
            f"{timeout:g} s); start one with `tf1compat data-service dispatcher --port "
            f"{address.rsplit(':', 1)[1]}`", address=service, timeout=timeout) from None
    finally:
        channel.close()
    return address


def check_service_timeout(api, value, argument="service_timeout"):
    """``value`` as positive seconds (inf: wait as TensorFlow does), or a
    PipelineConfigError naming ``api``'s ``argument``."""
    return check_seconds(api, argument, value, positive=True, allow_inf=True)


_stalls = []        # the DataServiceErrors raised while reading, newest last
_stalls_lock = threading.Lock()


def stalled_error(error):
    """The :class:`DataServiceError` behind ``error`` (a TensorFlow error the reading
    raised, or what it was raised from), or None when it is not about a stalled read."""
    text = str(error)
    with _stalls_lock:
        return next((stall for stall in reversed(_stalls) if str(stall) in text), None)


def _stalled(service, timeout):
    """The DataServiceError for a read that waited ``timeout`` seconds: whether the
    dispatcher still answers says which server to restart."""
    port = service.rsplit(":", 1)[1]
    try:
        check_reachable(service, _PROBE_TIMEOUT)
    except DataServiceError:
        what = (f"the dispatcher stopped answering; restart it (`tf1compat data-service "
                f"dispatcher --port {port} --work-dir DIR`: with the same DIR it carries on "
                "its jobs) and run again")
    else:
        what = ("the dispatcher answers, so a worker holding part of this job is gone; "
                "restart it on its address (`tf1compat data-service worker --dispatcher "
                f"HOST:{port} --port PORT`), or give a slow pipeline a longer bound "
                "(service_timeout=, --data-service-timeout)")
    error = DataServiceError(f"no element from the tf.data service at {service} in "
                             f"{timeout:g} s: {what}", address=service, timeout=timeout)
    with _stalls_lock:
        del _stalls[:-9]
        _stalls.append(error)
    return error


def _bounded_read(service, dataset_id, element_spec, timeout):
    """The job's elements, each waited for at most ``timeout`` seconds (see the module),
    as a dataset that starts a new job each time it is iterated."""
    options = v1.RunOptions(timeout_in_ms=max(1, round(timeout * 1000)))

    def elements():
        graph = tf.Graph()
        with graph.as_default():
            source = tf.data.experimental.service.from_dataset_id(
                PROCESSING_MODE, service, dataset_id, element_spec)
            next_element = v1.data.make_one_shot_iterator(source).get_next()
        # not `with session`: each resumption may run on another thread of tf.data's
        session = v1.Session(graph=graph)
        try:
            while True:
                try:
                    yield session.run(next_element, options=options)
                except tf.errors.OutOfRangeError:
                    return
                except tf.errors.DeadlineExceededError:
                    raise _stalled(service, timeout) from None
        finally:
            session.close()     # cancels the service's reading
    return tf.data.Dataset.from_generator(elements, output_signature=element_spec)


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
    names = _evaluate(tf.data.experimental.get_single_element(everything.batch(count)))
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
    dataset_id = _evaluate(tf.data.experimental.service.register_dataset(service, on_workers))
    if math.isinf(service_timeout):     # TensorFlow's own client: its unbounded waits
        dataset = tf.data.experimental.service.from_dataset_id(
            PROCESSING_MODE, service, dataset_id, on_workers.element_spec)
    else:
        dataset = _bounded_read(service, dataset_id, on_workers.element_spec, service_timeout)
    if batch is not None:
        dataset = dataset.unbatch().batch(batch.batch_size, drop_remainder=batch.drop_remainder)
    dataset = _apply(client_steps, dataset)
    if not any(isinstance(step, Prefetch) for step in client_steps):
        dataset = dataset.prefetch(tf.data.AUTOTUNE)
    return dataset
