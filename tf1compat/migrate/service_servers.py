"""TensorFlow's own tf.data service servers, configured for tf1compat's use
(``tf1compat data-service dispatcher|worker``): a ``DispatchServer`` and the
``WorkerServer``\\ s that run the lowered pipelines (:mod:`.service`).

A dispatcher given a work directory runs in fault-tolerant mode: it journals its
state there, and one restarted on the same directory carries on the jobs (no split
handed out twice). ``worker_timeout`` is how long it waits for a silent worker
before giving its tasks up: the reading client then carries on without it.
"""

import socket

from tf1compat._checks import check_non_negative_int, check_seconds
from tf1compat._tf import tf
from tf1compat.migrate.service import check_reachable

__all__ = ["bound_port", "start_dispatcher", "start_worker"]


def _check_free(api, port):
    """OSError naming ``port`` when something listens there: gRPC's servers share a port
    (SO_REUSEPORT), so a second dispatcher would start and take half the calls."""
    if not port:
        return
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # TIME_WAIT is free
        try:
            probe.bind(("", port))
        except OSError as e:
            raise OSError(e.errno, f"{api}: port {port} is in use ({e.strerror})") from None


def start_dispatcher(port=0, work_dir=None, worker_timeout=None):
    """A started ``DispatchServer`` on ``port`` (0: any free port) of every interface;
    fault-tolerant with ``work_dir``; ``worker_timeout`` in seconds (None: TF's)."""
    check_non_negative_int("data-service dispatcher", "port", port)
    worker_timeout = check_seconds("data-service dispatcher", "worker_timeout", worker_timeout,
                                   positive=True, allow_none=True)
    _check_free("data-service dispatcher", port)
    config = tf.data.experimental.service.DispatcherConfig(
        port=port, work_dir=work_dir, fault_tolerant_mode=work_dir is not None,
        worker_timeout_ms=None if worker_timeout is None else int(worker_timeout * 1000))
    return tf.data.experimental.service.DispatchServer(config)


def start_worker(dispatcher, port=0, host="localhost"):
    """A started ``WorkerServer`` on ``port`` (0: any free port) registered with the
    dispatcher at ``dispatcher`` (``HOST:PORT`` or ``grpc://HOST:PORT``), telling
    clients to reach it at ``host``. A dispatcher that does not answer raises
    :class:`~tf1compat.errors.DataServiceError` (TensorFlow would retry for an hour)."""
    check_non_negative_int("data-service worker", "port", port)
    service = dispatcher if "://" in dispatcher else f"grpc://{dispatcher}"
    address = check_reachable(service, api="data-service worker", argument="dispatcher")
    _check_free("data-service worker", port)
    config = tf.data.experimental.service.WorkerConfig(
        dispatcher_address=address, worker_address=f"{host}:%port%", port=port)
    return tf.data.experimental.service.WorkerServer(config)


def bound_port(server):
    """The port a started ``DispatchServer`` or ``WorkerServer`` listens on."""
    return int(server._address.rsplit(":", 1)[1])   # both servers' "localhost:PORT"
