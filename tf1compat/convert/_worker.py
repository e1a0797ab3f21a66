"""A worker process of :class:`tf1compat.convert.local.LocalRunner`
(``python -m tf1compat.convert._worker``).

Its stdin brings tasks and its stdout takes results back, so both are moved aside first:
what the user's functions print goes to stderr, and reading stdin finds nothing. Ctrl-C
is left to the caller, which stops its workers.
"""

import os
import signal
from multiprocessing.connection import Connection

from tf1compat.convert.local import run_worker

if __name__ == "__main__":
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    tasks_in = Connection(os.dup(0), writable=False)
    results_out = Connection(os.dup(1), readable=False)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.dup2(2, 1)
    run_worker(tasks_in, results_out)
