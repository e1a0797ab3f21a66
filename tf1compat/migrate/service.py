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

The plan is cut between the workers and this process by
:mod:`tf1compat.migrate.lowering.distributed`, which reads with :func:`bounded_read`.

Bounded waits: TensorFlow's client waits for a worker that died until the dispatcher
drops it, and for a dispatcher that died forever. Here the workers' elements are taken
from the service in a session of their own, each wait bounded by ``service_timeout``
seconds (``RunOptions.timeout_in_ms``, which cancels the read); past it the reading
raises :class:`~tf1compat.errors.DataServiceError` naming the dispatcher, the wait and
what to restart, and the service's reading ends. tf.data passes the error on as
``tf.errors.UnknownError`` carrying its message; :func:`stalled_error` gives the
:class:`~tf1compat.errors.DataServiceError` itself.
"""

import contextlib
import math
import threading
import urllib.parse

from tf1compat._checks import check_seconds, check_service_address
from tf1compat._tf import tf, v1
from tf1compat.errors import DataServiceError
from tf1compat.pipeline.graph_model import service_rpc

__all__ = ["CONNECT_TIMEOUT", "PROCESSING_MODE", "SERVICE_TIMEOUT", "bounded_read",
           "call_within", "check_reachable", "check_service_timeout", "parse_service",
           "stalled_error"]

CONNECT_TIMEOUT = 5.0   # seconds a client waits for the dispatcher before giving up
# Seconds the reader waits for one element of the workers before it gives up: longer
# than a worker's start (its shuffle buffer filled: TF1's min_after_dequeue of a few
# thousand decoded images at tens per second), far shorter than TensorFlow's wait.
SERVICE_TIMEOUT = 120.0
_PROBE_TIMEOUT = 2.0    # seconds the dispatcher gets to answer when a wait ran out
_CLOSE_TIMEOUT = 2.0    # seconds a read's close may wait on the service (its heartbeat)
PROCESSING_MODE = "distributed_epoch"   # ShardingPolicy.DYNAMIC


def parse_service(service, api="to_tf_data"):
    """``"grpc://HOST:PORT"`` -> ``"HOST:PORT"``; anything else raises PipelineConfigError
    (:func:`~tf1compat._checks.check_service_address`)."""
    return urllib.parse.urlsplit(check_service_address(api, "service", service)).netloc


def _ask(address, method, timeout):
    """The dispatcher at ``address``'s answer (its wire bytes) to ``method`` of
    :mod:`~tf1compat.pipeline.graph_model.service_rpc`, waited for at most ``timeout``
    seconds (also for the connection); raises ``grpc.RpcError``."""
    import grpc
    channel = grpc.insecure_channel(address)
    try:
        call = channel.unary_unary(method)
        return call(service_rpc.EMPTY_REQUEST, timeout=timeout, wait_for_ready=True)
    finally:
        channel.close()


def check_reachable(service, timeout=CONNECT_TIMEOUT, api="to_tf_data", argument="service"):
    """Raise :class:`DataServiceError` unless a tf.data service dispatcher answers at
    ``service`` (``grpc://HOST:PORT``) within ``timeout`` seconds: TensorFlow's client
    would retry an absent dispatcher for an hour, and take any other gRPC server (a
    worker's port) for one until an op fails deep in the graph."""
    import grpc
    address = urllib.parse.urlsplit(check_service_address(api, argument, service)).netloc
    port = address.rsplit(":", 1)[1]
    try:
        _ask(address, service_rpc.DISPATCHER_VERSION, timeout)
    except grpc.RpcError as e:
        if e.code() == grpc.StatusCode.UNIMPLEMENTED:
            raise DataServiceError(
                f"{api}: the server at {service} is not a tf.data service dispatcher (it "
                "does not answer a dispatcher's calls: a worker's port?); give the address "
                "`tf1compat data-service dispatcher` printed", address=service,
                timeout=timeout) from None
        raise DataServiceError(
            f"{api}: no tf.data service dispatcher answers at {service} (waited "
            f"{timeout:g} s); start one with `tf1compat data-service dispatcher --port "
            f"{port}`", address=service, timeout=timeout) from None
    return address


def call_within(service, seconds, what, function):
    """``function()``, a wait on the tf.data service at ``service``, for at most
    ``seconds`` (inf: as long as it takes). It runs in a daemon thread; past the
    deadline a :class:`DataServiceError` says ``what`` did not end, and the call is left
    to end in the background (TensorFlow's calls on the service cannot be cancelled).
    Its own error is raised as it is."""
    if math.isinf(seconds):
        return function()
    outcome = []

    def call():
        try:
            outcome.append((True, function()))
        except BaseException as e:      # noqa: BLE001 - raised in the caller
            outcome.append((False, e))
    thread = threading.Thread(target=call, daemon=True, name="tf1compat-service-call")
    thread.start()
    thread.join(seconds)
    if not outcome:
        raise DataServiceError(f"the tf.data service at {service} did not end {what} in "
                               f"{seconds:g} s", address=service, timeout=seconds)
    succeeded, value = outcome[0]
    if succeeded:
        return value
    raise value


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


def _what_to_restart(service):
    """Why reads at ``service`` stall and what to do: whether the dispatcher still
    answers, and whether it has workers, says which server to restart."""
    port = service.rsplit(":", 1)[1]
    try:
        address = check_reachable(service, _PROBE_TIMEOUT)
    except DataServiceError:
        return (f"the dispatcher stopped answering; restart it (`tf1compat data-service "
                f"dispatcher --port {port} --work-dir DIR`: with the same DIR it carries on "
                "its jobs) and run again")
    try:
        workers = service_rpc.count_workers(
            _ask(address, service_rpc.DISPATCHER_WORKERS, _PROBE_TIMEOUT))
    except Exception:   # noqa: BLE001 - it did not list its workers: say what is likely
        workers = None
    if workers == 0:
        return ("the dispatcher answers and has no worker; start one (`tf1compat "
                f"data-service worker --dispatcher HOST:{port}`)")
    return ("the dispatcher answers, so a worker holding part of this job is gone; "
            "restart it on its address (`tf1compat data-service worker --dispatcher "
            f"HOST:{port} --port PORT`), or give a slow pipeline a longer bound "
            "(service_timeout=, --data-service-timeout)")


def _stalled(service, timeout):
    """The DataServiceError for a read that waited ``timeout`` seconds."""
    what = _what_to_restart(service)
    error = DataServiceError(f"no element from the tf.data service at {service} in "
                             f"{timeout:g} s: {what}", address=service, timeout=timeout)
    with _stalls_lock:
        del _stalls[:-9]
        _stalls.append(error)
    return error


def bounded_read(service, dataset_id, element_spec, timeout):
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
        close_wait = _CLOSE_TIMEOUT
        try:
            while True:
                try:
                    yield session.run(next_element, options=options)
                except tf.errors.OutOfRangeError:
                    return
                except tf.errors.DeadlineExceededError:
                    close_wait = 0.0    # the service does not answer: its close would wait
                    raise _stalled(service, timeout) from None
        finally:   # cancels the service's reading, a wait on the service: bounded
            with contextlib.suppress(DataServiceError):
                call_within(service, close_wait, "closing the read", session.close)
    return tf.data.Dataset.from_generator(elements, output_signature=element_spec)
