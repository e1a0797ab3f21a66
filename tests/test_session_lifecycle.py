"""SessionIterator never hangs: Ctrl-C while a step waits, readers stuck in a FIFO."""

import contextlib
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import pytest
from conftest import wait_no_pipeline_threads

import tf1compat as tc

tf = pytest.importorskip("tensorflow")
pytestmark = [pytest.mark.tf]


@contextlib.contextmanager
def sigint_in(seconds):
    """Send this process SIGINT after ``seconds``, with Python's own handler in place
    (a process started in the background may inherit SIGINT ignored)."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(seconds, os.kill, (os.getpid(), signal.SIGINT))
    try:
        timer.start()
        yield
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, previous)


def starved():
    """A dequeue from a queue nobody feeds: a step that waits forever."""
    return tf.queue.FIFOQueue(4, tf.int32, shapes=[]).dequeue()


@contextlib.contextmanager
def fifo_nobody_writes(tmp_path):
    """A FIFO named like a TFRecord file; opening it for reading blocks until a writer
    comes. On exit a writer opens and closes it, so a reader stuck in open() returns."""
    path = tmp_path / "stuck.tfrecord"
    os.mkfifo(path)
    try:
        yield path
    finally:
        with contextlib.suppress(OSError):  # ENXIO: no reader is waiting
            os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))


def fifo_pipeline(path):
    queue = tc.string_input_producer([str(path)], num_epochs=1, shuffle=False)
    _, value = tc.TFRecordReader().read(queue)
    return tc.batch(value, 2)


@pytest.mark.timeout(60, method="thread")  # a hang inside session.run ignores SIGALRM
@pytest.mark.usefixtures("no_thread_leaks")
def test_ctrl_c_interrupts_a_step_waiting_on_a_starved_queue():
    with tc.legacy_graph():
        with tc.SessionIterator(starved()) as it:
            it.start()
            start = time.monotonic()
            with sigint_in(0.5), pytest.raises(KeyboardInterrupt):
                next(it)
    assert time.monotonic() - start < 10
    assert repr(it) == "<SessionIterator closed, 0 steps>"


@pytest.mark.timeout(60, method="thread")  # a hang inside session.run ignores SIGALRM
def test_timeout_with_a_reader_stuck_opening_a_fifo_reaches_the_user(tmp_path):
    with fifo_nobody_writes(tmp_path) as path:
        with tc.legacy_graph():
            batches = fifo_pipeline(path)
            start = time.monotonic()
            with pytest.warns(RuntimeWarning, match="did not stop within 1 s") as warned, \
                    pytest.raises(tf.errors.DeadlineExceededError, match="step timeout"):
                next(tc.SessionIterator(batches, timeout=0.5, join_timeout=1))
            elapsed = time.monotonic() - start
    message = str(warned[0].message)
    assert str(path) in message and "FIFO" in message
    assert warned[0].filename == __file__  # points at the caller's line
    assert elapsed < 15
    assert not wait_no_pipeline_threads(10.0)  # the FIFO got a writer: all threads end


@pytest.mark.timeout(60, method="thread")  # a hang inside session.run ignores SIGALRM
def test_ctrl_c_with_a_reader_stuck_in_a_fifo(tmp_path):
    with fifo_nobody_writes(tmp_path) as path:
        with tc.legacy_graph():
            it = tc.SessionIterator(fifo_pipeline(path), join_timeout=1)
            it.start()
            with pytest.warns(RuntimeWarning, match=str(path)), sigint_in(0.5), \
                    pytest.raises(KeyboardInterrupt):
                next(it)
    assert not wait_no_pipeline_threads(10.0)


STUCK_SCRIPT = """
    import os, signal, sys
    signal.signal(signal.SIGINT, signal.default_int_handler)
    import tf1compat as tc
    from tf1compat.pipeline import queues
    import tensorflow as tf
    with tc.legacy_graph():
        files = tc.string_input_producer([sys.argv[1]], num_epochs=1)
        _, value = tc.TFRecordReader().read(files)
        it = tc.SessionIterator(tc.batch(value, 2), join_timeout=1)
        it.start()
        print("ready", flush=True)
        for batch in it:  # Ctrl-C here: the traceback, then the process ends
            pass
"""


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_ctrl_c_ends_a_process_whose_reader_is_stuck(tmp_path):
    with fifo_nobody_writes(tmp_path) as path:
        process = subprocess.Popen(
            [sys.executable, "-c", textwrap.dedent(STUCK_SCRIPT), str(path)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            assert process.stdout.readline() == "ready\n"
            time.sleep(0.5)
            process.send_signal(signal.SIGINT)
            start = time.monotonic()
            _, stderr = process.communicate(timeout=30)
        finally:
            process.kill()
            process.wait()
    assert time.monotonic() - start < 15
    assert process.returncode in (-signal.SIGINT, 128 + signal.SIGINT)
    assert "KeyboardInterrupt" in stderr and "did not stop within 1 s" in stderr


@pytest.mark.timeout(60, method="thread")
@pytest.mark.usefixtures("no_thread_leaks")
def test_ctrl_c_while_the_runner_threads_start_stops_those_started(monkeypatch):
    import threading as threading_module

    started = []
    original_start = threading_module.Thread.start

    def start(thread):
        if thread.name.startswith("tf1compat-") and "step" not in thread.name:
            if len(started) == 1:
                raise KeyboardInterrupt
            started.append(thread)
        original_start(thread)

    with tc.legacy_graph():
        batches = tc.batch(tc.input_producer(tf.range(6), num_epochs=None).dequeue(), 2)
        it = tc.SessionIterator(batches)
        monkeypatch.setattr(threading_module.Thread, "start", start)
        with pytest.raises(KeyboardInterrupt):
            it.start()
        monkeypatch.undo()
    assert len(started) == 1 and repr(it) == "<SessionIterator closed, 0 steps>"


@pytest.mark.parametrize("options, error, message", [
    ({"timeout": 0}, ValueError, "SessionIterator: timeout must be a number of seconds >= "
                                 "0.001 or None, got 0"),
    ({"timeout": "5"}, ValueError, "SessionIterator: timeout must be a number of seconds"),
    ({"join_timeout": -1}, ValueError, "SessionIterator: join_timeout must be a number of "
                                       "seconds >= 0, got -1"),
    ({"config": "x"}, TypeError, "SessionIterator: config must be a tf.compat.v1.ConfigProto "
                                 "or None, got str"),
])
def test_odd_arguments_are_refused_naming_them(options, error, message):
    with tc.legacy_graph():
        with pytest.raises(error) as excinfo:
            tc.SessionIterator(starved(), **options)
    assert str(excinfo.value).startswith(message)


@pytest.mark.parametrize("fetches", [[], {}, {"a": []}])
def test_fetches_without_a_tensor_are_refused(fetches):
    with pytest.raises(ValueError, match="holds no tensor; .*would yield empty values forever"):
        tc.SessionIterator(fetches)
