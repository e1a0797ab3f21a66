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

import threading
import urllib.parse

from tf1compat._checks import check_seconds, check_service_address
from tf1compat._tf import tf, v1
from tf1compat.errors import DataServiceError

__all__ = ["CONNECT_TIMEOUT", "PROCESSING_MODE", "SERVICE_TIMEOUT", "bounded_read",
           "check_reachable", "check_service_timeout", "parse_service", "stalled_error"]

CONNECT_TIMEOUT = 5.0   # seconds a client waits for the dispatcher before giving up
# Seconds the reader waits for one element of the workers before it gives up: longer
# than a worker's start (its shuffle buffer filled: TF1's min_after_dequeue of a few
# thousand decoded images at tens per second), far shorter than TensorFlow's wait.
SERVICE_TIMEOUT = 120.0
_PROBE_TIMEOUT = 2.0    # seconds the dispatcher gets to answer when a wait ran out
PROCESSING_MODE = "distributed_epoch"   # ShardingPolicy.DYNAMIC


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
