"""Real servers for the object-store and cluster tests, as processes on 127.0.0.1 with
free ports: moto's S3-compatible server and a Dask scheduler with its workers. Each is
stopped (its whole process group) when its fixture ends, also after a failure."""

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time

# what s3fs (botocore) and every process started with these variables needs to reach moto
S3_ENV = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
          "AWS_DEFAULT_REGION": "us-east-1"}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port, process, timeout=60.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{process.args}: exited with {process.returncode}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.5):
            return
        time.sleep(0.1)
    raise TimeoutError(f"{process.args}: port {port} not open after {timeout} s")


def start(command, env=None):
    """A process in its own group (so stop() ends its children too), output to a log."""
    log = open(os.devnull, "wb")    # noqa: SIM115 - closed by stop()
    process = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT,
                               start_new_session=True)
    process.log = log
    return process


def stop(process):
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    process.log.close()


@contextlib.contextmanager
def moto_server():
    """Yield the endpoint URL of a moto S3 server on a free port."""
    port = free_port()
    process = start([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)])
    try:
        wait_for_port(port, process)
        yield f"http://127.0.0.1:{port}"
    finally:
        stop(process)
