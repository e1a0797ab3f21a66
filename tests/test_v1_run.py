"""`tf1compat run`: TF1's tensorflow for the program's own files, tf.contrib, exit
status, queue safety. Programs run in this process through run_path / run_module
(each in a RunMode that is left afterwards), or in a subprocess where the process
itself is the subject (its flags, its exit status, signals)."""

import os
import re
import signal
import subprocess
import sys
import time

import pytest
from legacy_programs import tf1compat_run, write_program

from tf1compat import cli

pytestmark = pytest.mark.tf


PROBE = """
    import sys
    import tensorflow as tf
    import tensorflow.contrib.slim as slim
    import tensorflow.compat.v1 as tf_v1
    from tensorflow import contrib
    from tensorflow.contrib import framework
    from tensorflow.contrib.quantize import create_training_graph
    from tensorflow.python_io import TFRecordWriter
    from tensorflow.python.ops import control_flow_ops
    from tensorflow.python.tools import freeze_graph, inspect_checkpoint  # not loaded by TF
    from tensorflow.contrib.slim.nets import resnet_v1
    import helper  # a module of the program's own folder

    tf.app.flags.DEFINE_integer("steps", 1, "steps")
    FLAGS = tf.app.flags.FLAGS


    def main(argv):
        import tf_slim  # a library: keeps TensorFlow 2
        library_tf = sys.modules["tf_slim.ops.variables"].tf
        x = tf.placeholder(tf.float32, [None, 5])
        print("steps", FLAGS.steps, "argv", argv[1:])
        print("tf1", tf is tf_v1 is helper.tf, hasattr(tf, "contrib"), contrib is tf.contrib)
        print("graph mode", not tf.executing_eagerly(), x.get_shape()[1].value)
        print("slim", slim.fully_connected is tf_slim.fully_connected,
              framework.arg_scope is tf_slim.arg_scope, TFRecordWriter is tf.io.TFRecordWriter)
        print("private", control_flow_ops.__name__, freeze_graph.__name__,
              inspect_checkpoint.__name__, resnet_v1.resnet_v1_50.__module__)
        print("library", hasattr(library_tf, "contrib"), sys.modules["tensorflow"].__name__,
              hasattr(sys.modules["tensorflow"], "contrib"))
        with tf.Session() as sess:
            print("run", sess.run(tf.constant(2) * 3))
        try:
            create_training_graph(tf.get_default_graph())
        except NotImplementedError as e:
            print("unsupported", type(e).__name__, e.name, "|", e.alternative)
        sys.exit(3)


    if __name__ == "__main__":
        tf.app.run()
"""


@pytest.mark.slow
@pytest.mark.timeout(200)
def test_program_gets_tf1_and_contrib_libraries_keep_tf2_exit_status_kept(tmp_path):
    write_program(tmp_path / "prog", "helper.py", "import tensorflow as tf\n")
    program = write_program(tmp_path / "prog", "probe.py", PROBE)
    result = tf1compat_run(program, "--steps=4", "extra", cwd=tmp_path)
    assert result.returncode == 3, result.stderr
    lines = result.stdout.splitlines()
    assert lines[:2] == ["steps 4 argv ['extra']", "tf1 True True True"]
    assert lines[2:6] == ["graph mode True 5", "slim True True True",
                          "private tensorflow.python.ops.control_flow_ops "
                          "tensorflow.python.tools.freeze_graph "
                          "tensorflow.python.tools.inspect_checkpoint tf_slim.nets.resnet_v1",
                          "library False tensorflow False"]
    assert lines[6] == "run 6"
    assert lines[7] == ("unsupported UnsupportedTF1Error tf.contrib.quantize.create_training_graph"
                        " | tensorflow_model_optimization's quantization-aware training "
                        "(tfmot.quantization.keras.quantize_model)")


STARVED = """
    import tensorflow as tf

    queue = tf.train.string_input_producer([__file__], num_epochs=1)
    _, line = tf.TextLineReader().read(queue)
    batch = tf.train.batch([line], 2)
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        sess.run(batch)  # tf.train.start_queue_runners was forgotten
"""


@pytest.fixture
def in_process(monkeypatch):
    """Run a program in this process: ``sys.argv``, ``sys.path`` and the working
    folder come back afterwards, and the program's own modules are forgotten."""
    from tf1compat.v1 import program

    monkeypatch.setattr(sys, "argv", list(sys.argv))
    monkeypatch.setattr(sys, "path", list(sys.path))
    modules = set(sys.modules)
    yield program
    for name in set(sys.modules) - modules:
        if name.startswith("tf1compat_test_"):
            del sys.modules[name]


@pytest.mark.timeout(120)
def test_runners_never_started_fail_after_the_grace_period_run_as_module(
        tmp_path, in_process, monkeypatch, capsys):
    """On TF1's queues (tf_data=False, ``--queues``); by default the pipeline runs on
    tf.data, which needs no runner threads: the program reads its batch."""
    write_program(tmp_path, "tf1compat_test_legacy/__init__.py", "")
    program = write_program(tmp_path, "tf1compat_test_legacy/starved.py", STARVED)
    monkeypatch.chdir(tmp_path)
    assert in_process.run_module("tf1compat_test_legacy.starved", [], grace_period=1,
                                 tf_data=False) == 1
    err = capsys.readouterr().err
    assert "QueueRunnersNotStartedError: sess.run waited 1 s on queue 'batch/fifo_queue', " \
           "'input_producer'" in err
    assert "tf.train.start_queue_runners(sess=sess, coord=coord)" in err
    assert f'File "{program}", line 9' in err
    sys.modules.pop("tf1compat_test_legacy.starved", None)
    assert in_process.run_module("tf1compat_test_legacy.starved", [], grace_period=1) == 0
    assert "Error" not in capsys.readouterr().err


CORRUPT = """
    import sys
    import tensorflow as tf

    def pipeline(path):
        queue = tf.train.string_input_producer([path], num_epochs=1, shuffle=False)
        _, value = tf.TFRecordReader().read(queue)
        return tf.train.batch([value], 2)

    # 1. runners without a Coordinator: TF1 hangs when the reader thread dies
    with tf.Graph().as_default():
        batch = pipeline(sys.argv[1])
        with tf.Session() as sess:
            sess.run(tf.local_variables_initializer())
            tf.train.start_queue_runners(sess=sess)
            try:
                while True:
                    sess.run(batch)
            except tf.errors.DataLossError as e:
                print("sess.run:", e.message.splitlines()[-1])

    # 2. loops that own the runners: the error their coordinator reports is explained
    with tf.Graph().as_default():
        batch = pipeline(sys.argv[1])
        try:
            with tf.train.MonitoredTrainingSession() as sess:
                while not sess.should_stop():
                    sess.run(batch)
        except tf.errors.DataLossError as e:
            print("monitored:", e.message.splitlines()[-1])
    with tf.Graph().as_default():
        batch = pipeline(sys.argv[1])
        init = tf.local_variables_initializer()
        supervisor = tf.train.Supervisor(logdir=None, local_init_op=init)
        try:
            with supervisor.managed_session() as sess:
                while not supervisor.should_stop():
                    sess.run(batch)
        except tf.errors.DataLossError as e:
            print("supervisor:", e.message.splitlines()[-1])

    # 3. the classic loop, where TF1 takes the closed queue for the end of the data
    with tf.Graph().as_default():
        batch = pipeline(sys.argv[1])
        with tf.Session() as sess:
            sess.run(tf.local_variables_initializer())
            coord = tf.train.Coordinator()
            threads = tf.train.start_queue_runners(sess=sess, coord=coord)
            try:
                while not coord.should_stop():
                    sess.run(batch)
            except tf.errors.OutOfRangeError:
                print("done")
            finally:
                coord.request_stop()
            coord.join(threads)
"""


@pytest.mark.timeout(120)
@pytest.mark.usefixtures("no_thread_leaks")  # the closed sessions' step threads end
@pytest.mark.parametrize("tf_data, failed", [
    (False, "a queue-runner thread failed in op 'ReaderReadV2' (ReaderReadV2)"),
    ("auto", "the tf.data pipeline replacing queue 'batch/fifo_queue' failed in op "
             "'tf_data/IteratorGetNext' (IteratorGetNext)")], ids=["queues", "default"])
def test_corrupt_record_reaches_sess_run_and_coord_join_naming_file_record_offset(
        tmp_path, in_process, capsys, tf_data, failed):
    from tf1compat.records.tfrecord import write_records

    data = tmp_path / "train.tfrecord"
    write_records(data, [b"x" * 10] * 6)
    damaged = bytearray(data.read_bytes())
    damaged[3 * 26 + 12 + 4] ^= 0xFF  # a data byte of record 3
    data.write_bytes(bytes(damaged))
    program = write_program(tmp_path, "corrupt.py", CORRUPT)
    status = in_process.run_path(program, [str(data)], tf_data=tf_data)
    out, err = capsys.readouterr()
    located = f"{data}: record 3 at byte 78: data CRC mismatch"
    explained = f"[tf1compat] {failed}; {located}"
    lines = out.splitlines()  # never "done": not taken for the end of the data
    assert [line.split(": ")[0] for line in lines] == ["sess.run", "monitored", "supervisor"]
    for line in lines:
        assert line.partition(": ")[2].startswith(f"{explained} (stored 0x")
    assert status == 1
    # the loop's sess.run or coord.join raises it (whichever sees the stop first)
    assert re.search(r"line \d+, in <module>\n    (sess\.run\(batch\)|coord\.join\(threads\))",
                     err)
    # on queues TF1's runner error; on tf.data TensorFlow's "Graph execution error" first
    assert re.search(r"DataLossError: (Graph execution error:(.|\n)*)?corrupted record at 90",
                     err) and explained in err


@pytest.mark.timeout(120)
def test_folder_and_zip_application_run_their_main_as_python_does(tmp_path, in_process,
                                                                    monkeypatch, capsys):
    import zipfile

    app = tmp_path / "app"
    write_program(app, "tf1compat_test_modes.py", """
        import numpy as np
        import tensorflow as tf
        MODE = tf.contrib.learn.ModeKeys.TRAIN
        RAW = np.arange(2, dtype=np.uint8).tostring()
    """)
    write_program(app, "__main__.py", """
        import sys
        import numpy as np
        import tensorflow as tf
        import tf1compat_test_modes as modes
        print(sys.argv[1:], modes.MODE == "train", hasattr(tf, "contrib"), __name__)
        print(modes.RAW, np.arange(3, dtype=np.uint8).tostring())  # NumPy 1.x's, both files
        sys.exit(4)
    """)
    with zipfile.ZipFile(tmp_path / "app.pyz", "w") as archive:
        for name in ("tf1compat_test_modes.py", "__main__.py"):
            archive.write(app / name, name)
    for path, argument in [(app, "--flag"), (tmp_path / "app.pyz", "z")]:
        monkeypatch.delitem(sys.modules, "tf1compat_test_modes", raising=False)
        assert in_process.run_path(path, [argument]) == 4
        assert capsys.readouterr().out.splitlines() == [
            f"['{argument}'] True True __main__", r"b'\x00\x01' b'\x00\x01\x02'"]
    assert not hasattr(sys.modules["tensorflow"], "contrib")  # run mode was left


SLOW_PRODUCER = """
    import sys
    import time
    import tensorflow as tf


    def slow(x):  # one example a minute: only a signal ends the wait for a batch of 8
        time.sleep(60)
        return x


    queue = tf.train.input_producer(tf.range(1000), shuffle=False)
    value = tf.py_func(slow, [queue.dequeue()], tf.int32)
    value.set_shape([])
    batch = tf.train.batch([value], 8)
    if sys.argv[1] == "monitored":  # its runners, coordinator and close are TensorFlow's
        tf.train.get_or_create_global_step()
        with tf.train.MonitoredTrainingSession() as sess:
            print("waiting", flush=True)
            try:
                sess.run(batch)
            finally:
                print("finally", flush=True)
    with tf.Session() as sess:
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord)
        print("waiting", flush=True)
        try:
            if sys.argv[1] == "run":
                sess.run(batch)
            else:
                coord.join(threads)
        finally:
            print("finally", flush=True)
        print("never here")
"""


def _processes_running(program):
    """Processes whose command line names ``program`` (Linux /proc)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if str(program).encode() in f.read():
                    found.append(pid)
        except OSError:
            continue
    return found


@pytest.mark.slow
@pytest.mark.alone      # failed 2 times in 4 inside an xdist worker, never on its own
@pytest.mark.timeout(120)
@pytest.mark.parametrize("wait, signum, status, said, flags", [
    ("run", signal.SIGINT, 130, "interrupted", ["--queues"]),
    ("join", signal.SIGINT, 130, "interrupted", ["--queues"]),
    ("monitored", signal.SIGTERM, 143, "terminated", ["--queues"]),
    ("run", signal.SIGINT, 130, "interrupted", ["--quiet"])],     # on tf.data, by default
    ids=["run", "join", "monitored", "run on tf.data"])
def test_a_signal_ends_a_blocked_wait_without_its_example(tmp_path, wait, signum, status, said,
                                                          flags):
    program = write_program(tmp_path, "slow_producer.py", SLOW_PRODUCER)
    process = subprocess.Popen([sys.executable, "-m", "tf1compat", "run", *flags, program, wait],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               cwd=tmp_path)
    try:
        assert process.stdout.readline() == "waiting\n"
        time.sleep(1.0)  # blocked in sess.run / coord.join, inside the first example
        sent = time.monotonic()
        process.send_signal(signum)
        out, err = process.communicate(timeout=60)
        elapsed = time.monotonic() - sent
    finally:
        process.kill()
    # TensorFlow's C++ log may note the steps the close cancelled ("W0000 ...
    # local_rendezvous.cc:412] Local rendezvous is aborting with status: CANCELLED")
    said_by_us = [line for line in err.splitlines()
                  if not re.match(r"[WIE]\d{4} |\t \[\[", line)]
    assert (process.returncode, out, said_by_us) == (status, "finally\n",
                                                     [f"tf1compat run: {said}"]), err
    assert elapsed < 20, elapsed  # the wait ended without the first example (60 s)
    assert _processes_running(program) == []


# --------------------------------------------------------- in-process: nothing installed

def test_missing_program_and_module_exit_2_naming_them(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert cli.main(["run", str(tmp_path / "nope.py")]) == 2
    assert f"cannot open '{tmp_path / 'nope.py'}': no such file" in capsys.readouterr().err
    (tmp_path / "lib").mkdir()
    assert cli.main(["run", str(tmp_path / "lib")]) == 2
    assert f"cannot find '__main__' module in '{tmp_path / 'lib'}'" in capsys.readouterr().err
    assert cli.main(["run", "-m", "no_such_package_xyz.train"]) == 2
    assert "no module named 'no_such_package_xyz'" in capsys.readouterr().err
    assert str(tmp_path) not in sys.path  # the folder searched is not left behind


def test_traceback_starts_at_the_program_not_a_folder_named_like_the_package():
    from tf1compat.v1 import program

    v1_folder = os.path.dirname(program.__file__)
    assert program._internal_frame(os.path.join(v1_folder, "scope.py"))
    assert not program._internal_frame(os.path.dirname(v1_folder) + "_extra/train.py")


def test_an_interruption_python_broke_inside_a_condition_wait_is_still_one(capsys):
    """Ctrl-C landing inside ``Condition.wait`` (``coord.join``) between its lock's
    release and its reacquiring surfaces as ``RuntimeError: release unlocked lock``
    from threading.py (one CI run of the ``join`` case above ended so, exit 1): run
    mode still reports the interruption. The same error without one is the program's."""
    import threading

    from tf1compat.v1 import program

    condition = threading.Condition(threading.Lock())

    def interrupted_inside_wait():
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt:
            condition.__exit__(None, None, None)   # the lock the interruption left unheld

    with pytest.raises(KeyboardInterrupt) as raised:
        program._run_as_main(interrupted_inside_wait)
    assert raised.value.__suppress_context__
    assert program._run_as_main(lambda: condition.__exit__(None, None, None)) == 1
    assert "RuntimeError: release unlocked lock" in capsys.readouterr().err


@pytest.mark.timeout(60)
def test_infinite_grace_period_never_checks():
    """``--grace-period inf``: TF1's behaviour, a starved run waits (here until its own
    timeout) instead of raising QueueRunnersNotStartedError."""
    import tf1compat as tc
    from tf1compat._tf import v1
    from tf1compat.v1.queue_runtime import QueueRuntime
    from tf1compat.v1.settings import RunSettings

    settings = RunSettings(grace_period=float("inf"))
    with tc.legacy_graph():
        batch = tc.batch([tc.input_producer(v1.range(4), shuffle=False).dequeue()], 2)
        with QueueRuntime(lambda: settings).Session() as sess:
            assert sess.run(v1.constant(2) * 3) == 6
            with pytest.raises(v1.errors.DeadlineExceededError):  # never started: TF1 waits
                sess.run(batch, options=v1.RunOptions(timeout_in_ms=300))


def test_install_refuses_a_missing_folder(tmp_path):
    from tf1compat.v1 import install
    with pytest.raises(FileNotFoundError, match="does not exist; expected the folders"):
        install([tmp_path / "missing"])
