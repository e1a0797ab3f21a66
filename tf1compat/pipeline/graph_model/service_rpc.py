"""What tf1compat assumes about the tf.data service's gRPC protocol, TF-free.

TensorFlow's client retries a dispatcher that does not answer for an hour and reports a
server that is not a dispatcher (a worker's port) only as it fails deep in a graph op.
Asking the server one method of TensorFlow's ``DispatcherService`` ourselves, within a
deadline, tells the cases apart. Each assumption is checked against TensorFlow's own
servers by a contract test in ``tests/test_data_service.py``.
"""

DISPATCHER_VERSION = "/tensorflow.data.DispatcherService/GetVersion"  # GetVersionRequest {}
DISPATCHER_WORKERS = "/tensorflow.data.DispatcherService/GetWorkers"  # GetWorkersRequest {}
EMPTY_REQUEST = b""         # both requests have no fields

__all__ = ["DISPATCHER_VERSION", "DISPATCHER_WORKERS", "EMPTY_REQUEST", "count_workers"]


def _varint(data, position):
    """The varint at ``position`` of ``data`` and the position after it."""
    value = shift = 0
    while True:
        byte = data[position]
        position += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, position
        shift += 7


def count_workers(response):
    """The workers a ``GetWorkersResponse`` lists (its repeated field 1, ``WorkerInfo``
    messages), read from its wire bytes."""
    count = position = 0
    while position < len(response):
        key, position = _varint(response, position)
        field, wire_type = key >> 3, key & 7
        if wire_type == 0:
            _, position = _varint(response, position)
        elif wire_type == 2:
            length, position = _varint(response, position)
            position += length
            count += field == 1
        elif wire_type in (1, 5):
            position += 8 if wire_type == 1 else 4
        else:
            raise ValueError(f"GetWorkersResponse: wire type {wire_type} at byte {position}")
    return count
