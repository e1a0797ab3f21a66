"""Shared fixtures. Tests that import TensorFlow carry the ``tf`` marker."""

import collections
import signal
import threading
import time

import numpy as np
import pytest


@pytest.fixture
def control_flow_v1():
    """Run mode's control flow: TF1 conds (Switch/Merge, an Assert under an AssertGuard),
    as slim's tf.case builds them there; control flow v2 again after the test."""
    import tensorflow as tf

    tf.compat.v1.disable_control_flow_v2()
    try:
        yield
    finally:
        tf.compat.v1.enable_control_flow_v2()


@pytest.fixture
def rng():
    """A seeded generator: test data is never unseeded."""
    return np.random.default_rng(1234)


def live_pipeline_threads():
    """Threads started by a SessionIterator (queue runners and their closers)."""
    return [t for t in threading.enumerate() if t.name.startswith("tf1compat-") and t.is_alive()]


def wait_no_pipeline_threads(timeout=5.0):
    """Return the pipeline threads still alive after waiting up to ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while live_pipeline_threads() and time.monotonic() < deadline:
        time.sleep(0.02)
    return live_pipeline_threads()


@pytest.fixture
def no_thread_leaks():
    """Fail the test if it leaves SessionIterator threads alive (after 5 s)."""
    yield
    leaked = wait_no_pipeline_threads(5.0)
    assert not leaked, f"pipeline threads still alive: {[t.name for t in leaked]}"


def pytest_configure(config):
    """The programs tests interrupt with SIGINT (Ctrl-C) get Python's own handler even
    when the suite was started in the background (``scripts/test &``, ``nohup``): a
    shell starts a background job with SIGINT ignored, and every process started from
    it inherits that; such a child ignores the SIGINT a test sends it, and waits until
    the test's time limit ends the worker running it. A handler of this process's own
    is not inherited across ``exec``: the workers and their children start with
    SIGINT's default, as from a terminal."""
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_collection_modifyitems(items):
    """Modules with the most tests marked slow first, then the others by their number
    of tests, each module's tests in their order. scripts/test's two workers take whole
    modules in this order (``--dist loadscope --no-loadscope-reorder``), so the long
    modules start first and the short ones fill in at the end, where pytest-xdist's
    own order (by number of tests alone) left the slow modules of few tests for last
    and one worker idle while the other ran them."""
    slow, tests = collections.Counter(), collections.Counter()
    for item in items:
        tests[item.path] += 1
        slow[item.path] += item.get_closest_marker("slow") is not None
    items.sort(key=lambda item: (-slow[item.path], -tests[item.path]))   # stable
