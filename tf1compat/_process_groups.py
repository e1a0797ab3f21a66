"""Child processes that end with everything they started.

Each child a command starts (a program the corpus runner runs, a conversion worker, a
test's server) leads a process group of its own; ending it ends the group, so what it
left running there (a background child of a program, a process a task's function
started) goes with it, and a child that exited leaving others behind is told apart.
A process that makes a session of its own (a daemon) leaves the group and is not seen.
POSIX; elsewhere a child is started and ended alone.
"""

import contextlib
import os
import signal
import subprocess
import time

__all__ = ["start", "end"]

_POSIX = os.name == "posix"


def start(command, **popen_options):
    """``subprocess.Popen(command, **popen_options)``, the child leading a new process
    group (and session: a terminal's Ctrl-C reaches it only through its parent)."""
    if _POSIX:
        popen_options.setdefault("start_new_session", True)
    return subprocess.Popen(command, **popen_options)


def _group_alive(group):
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    except PermissionError:     # a member that is another user's: alive
        return True
    return True


def end(process, grace=5.0):
    """End ``process`` (a :func:`start`\\ ed child) and every process of its group:
    SIGTERM, then after ``grace`` seconds SIGKILL; the child is reaped. Returns
    whether the child had exited leaving other processes of its group running."""
    if not _POSIX:
        if process.poll() is None:
            process.kill()
        process.wait()
        return False
    group = process.pid
    exited = process.poll() is not None
    left = exited and _group_alive(group)
    if exited and not left:
        return False
    with contextlib.suppress(ProcessLookupError):
        os.killpg(group, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while (process.poll() is None or _group_alive(group)) and time.monotonic() < deadline:
        time.sleep(0.05)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(group, signal.SIGKILL)
    process.wait()
    return left
