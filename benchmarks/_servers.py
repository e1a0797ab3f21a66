"""Servers started as processes on 127.0.0.1 with free ports, for the engine benchmark
and the tests: moto's S3-compatible server and a Dask scheduler with its workers. Each
is stopped (its whole process group) when its block ends, also after an error."""

import contextlib
import ctypes
import signal
import socket
import subprocess
import sys
import time

from tf1compat import _process_groups as process_groups

# what s3fs (botocore) and every process started with these variables needs to reach moto
_PR_SET_PDEATHSIG = 1
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


def _dying_with_parent():
    """In the child before exec, on Linux: a SIGKILL when the process that started it
    dies (pytest-timeout's os._exit skips every finalizer)."""
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


def start(command, env=None):
    """A process in its own group (so :func:`stop` ends its children too) that dies with
    this one, its output discarded."""
    return process_groups.start(command, env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, preexec_fn=_dying_with_parent)


def stop(process):
    """End the server and everything it started (its group), killed after 10 s."""
    process_groups.end(process, grace=10)


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


def start_dask_worker(address, env, local_directory=None):
    """A ``dask worker`` process with one thread and no nanny (a killed worker stays dead)."""
    return start([sys.executable, "-m", "distributed.cli.dask_worker", address, "--host",
                  "127.0.0.1", "--nthreads", "1", "--no-nanny", "--no-dashboard",
                  "--memory-limit", "0",
                  *(["--local-directory", str(local_directory)] if local_directory else [])],
                 env)


@contextlib.contextmanager
def dask_cluster(env, workers=2, local_directory=None):
    """Yield ``(scheduler address, [worker processes])``: a ``dask scheduler`` and
    ``workers`` ``dask worker`` processes on 127.0.0.1, started with ``env``."""
    from distributed import Client
    port = free_port()
    address = f"tcp://127.0.0.1:{port}"
    processes = [start([sys.executable, "-m", "distributed.cli.dask_scheduler", "--host",
                        "127.0.0.1", "--port", str(port), "--no-dashboard"], env)]
    try:
        wait_for_port(port, processes[0])
        processes += [start_dask_worker(address, env, local_directory)
                      for _ in range(workers)]
        with Client(address, timeout=30, set_as_default=False) as client:
            client.wait_for_workers(workers, timeout=90)
        yield address, processes[1:]
    finally:
        for process in reversed(processes):
            stop(process)
