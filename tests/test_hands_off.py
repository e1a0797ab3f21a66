"""tf1compat leaves the user's process alone: loggers (levels, handlers), file
descriptor 2 (only TensorFlow's start-up notices are left out, a crash while it loads
still prints), the environment, and stdout (library calls never print)."""

import json
import os
import signal
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from tf1compat import example, tfrecord

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ABSL_NOTICE = ("WARNING: All log messages before absl::InitializeLog() is called are written "
               "to STDERR")
ONEDNN_NOTICE = ("I0000 00:00:1795620000.123456    4242 port.cc:153] oneDNN custom operations "
                 "are on. You may see slightly different numerical results.")


def fake_tensorflow_environment(tmp_path, body, **env):
    """The environment of a process whose ``tensorflow`` is a stand-in package with
    ``body`` as its ``__init__``, without the user's TensorFlow log settings."""
    package = tmp_path / "fake" / "tensorflow"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(textwrap.dedent(body))
    environment = {k: v for k, v in os.environ.items()
                   if k not in ("TF_CPP_MIN_LOG_LEVEL", "TF1COMPAT_VERBOSE")}
    environment.update(PYTHONPATH=f"{package.parent}{os.pathsep}{ROOT}", **env)
    return environment


def run_with_fake_tensorflow(tmp_path, body, code="import tf1compat._tf", **env):
    """Run ``code`` with a stand-in ``tensorflow`` package whose ``__init__`` is ``body``."""
    return subprocess.run([sys.executable, "-X", "faulthandler", "-c", code],
                          capture_output=True, text=True, timeout=60,
                          env=fake_tensorflow_environment(tmp_path, body, **env))


LOADS = """
    import logging, os
    os.write(2, b"%s\\n%s\\nloading: a line of its own\\n")
    LEVEL_WHILE_LOADING = os.environ.get("TF_CPP_MIN_LOG_LEVEL")
    class compat:
        v1 = None
    def get_logger():
        return logging.getLogger("tensorflow")
""" % (ABSL_NOTICE, ONEDNN_NOTICE)
REPORT = ("import os, tf1compat._tf, tensorflow; print(tensorflow.LEVEL_WHILE_LOADING, "
          "os.environ.get('TF_CPP_MIN_LOG_LEVEL'))")


def test_start_up_notices_are_left_out_and_the_log_level_is_scoped(tmp_path):
    result = run_with_fake_tensorflow(tmp_path, LOADS, REPORT)
    assert result.returncode == 0, result.stderr
    assert result.stderr == "loading: a line of its own\n"
    assert result.stdout.split() == ["1", "None"]  # 1 while loading, unset again after


def test_the_users_log_level_is_kept(tmp_path):
    result = run_with_fake_tensorflow(tmp_path, LOADS, REPORT, TF_CPP_MIN_LOG_LEVEL="0")
    assert result.stdout.split() == ["0", "0"]


def test_verbose_shows_everything(tmp_path):
    result = run_with_fake_tensorflow(tmp_path, LOADS, REPORT, TF1COMPAT_VERBOSE="1")
    assert result.stderr.splitlines() == [ABSL_NOTICE, ONEDNN_NOTICE, "loading: a line of its own"]
    assert result.stdout.split() == ["None", "None"]


def test_a_crash_while_tensorflow_loads_still_prints(tmp_path):
    result = run_with_fake_tensorflow(tmp_path, f"""
        import ctypes, os
        os.write(2, b"{ABSL_NOTICE}\\nloading went wrong\\n")
        ctypes.string_at(0)  # a segmentation fault
    """)
    assert result.returncode == -signal.SIGSEGV
    assert "loading went wrong\n" in result.stderr
    assert "Fatal Python error: Segmentation fault" in result.stderr
    assert ABSL_NOTICE not in result.stderr


def test_a_missing_tensorflow_is_named(tmp_path):
    result = run_with_fake_tensorflow(tmp_path, "raise ImportError('no TensorFlow here')")
    assert result.returncode == 1
    assert "ImportError: tf1compat's pipeline API needs TensorFlow (no TensorFlow here): " \
        "pip install \".[cpu]\"" in result.stderr
    assert "no TensorFlow here" in result.stderr  # the cause, chained


DROPPING = """
    import os, sys
    from tf1compat._tf import drop_lines
    terminal = os.fstat(2).st_ino
    first, second = drop_lines("NOISE .*"), drop_lines("NOISE .*")  # one filter for both
    os.write(2, b"kept 1\\nNOISE a\\n\\t [[{{node x}}]]\\nkept 2\\n\\tkept, indented\\n")
    os.write(2, b"progress 50%")
    sys.stdin.readline()  # the test has read the unended line
    os.write(2, b"\\rprogress 100%\\nWARNING: All log messages before absl::InitializeLog() "
                b"is called are written to STDERR\\n")
    first.undo()
    first.undo()  # once only
    os.write(2, b"NOISE b\\n")
    second.undo()
    os.write(2, b"NOISE after\\n")
    print(os.fstat(2).st_ino == terminal)
"""


@pytest.mark.timeout(60)  # an unended line held back would block the read below
def test_dropped_lines_leave_the_rest_as_it_comes_until_undone(tmp_path):
    """drop_lines: a matching line and the tab-indented lines after it are left out,
    TensorFlow's start-up notices too; everything else passes on at once, an unended
    line (a progress bar's) included; uses at once share the filter, and after the
    last undo() descriptor 2 is the one it was."""
    environment = fake_tensorflow_environment(tmp_path, LOADS)
    child = subprocess.Popen([sys.executable, "-c", textwrap.dedent(DROPPING)],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, env=environment)
    seen = b""
    while not seen.endswith(b"progress 50%"):
        chunk = child.stderr.read1(65536)
        assert chunk, (seen, child.wait(60))
        seen += chunk
    out, err = child.communicate(b"go\n", timeout=60)
    assert child.returncode == 0, seen + err
    assert (seen + err).decode() == ("loading: a line of its own\nkept 1\nkept 2\n"
                                     "\tkept, indented\nprogress 50%\rprogress 100%\n"
                                     "NOISE after\n")
    assert out.split() == [b"True"]


INTERRUPTED = """
    import os, sys, time
    from tf1compat._tf import drop_lines
    dropped = drop_lines("NOISE .*")
    try:
        print("ready", flush=True)
        time.sleep(60)
    except KeyboardInterrupt:
        os.write(2, b"NOISE x\\ninterrupted, said after Ctrl-C\\n")
    dropped.undo()
"""


@pytest.mark.timeout(60)
def test_ctrl_c_leaves_the_filter_running(tmp_path):
    """Ctrl-C at a terminal signals the whole foreground process group, the filter
    process too: it goes on, so what the program says after it still prints."""
    environment = fake_tensorflow_environment(tmp_path, LOADS)
    child = subprocess.Popen([sys.executable, "-c", textwrap.dedent(INTERRUPTED)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             env=environment, start_new_session=True)  # a group of its own
    assert child.stdout.readline() == b"ready\n"
    os.killpg(child.pid, signal.SIGINT)  # the program and its filter, as a terminal does
    out, err = child.communicate(timeout=60)
    assert child.returncode == 0, err
    assert err.decode() == "loading: a line of its own\ninterrupted, said after Ctrl-C\n"


def test_verbose_drops_no_line(tmp_path):
    result = run_with_fake_tensorflow(
        tmp_path, LOADS, "import os; from tf1compat._tf import drop_lines; "
        "dropped = drop_lines('NOISE .*'); os.write(2, b'NOISE shown\\n'); dropped.undo()",
        TF1COMPAT_VERBOSE="1")
    assert result.stderr.splitlines()[-1] == "NOISE shown"


USER_PROGRAM = """
    import json, logging, os, sys, tempfile
    import absl.logging
    import tensorflow as tf  # adds TensorFlow's own handler: the state to keep is after it
    tf_logger = logging.getLogger("tensorflow")
    tf_logger.setLevel(logging.INFO)
    mine = logging.StreamHandler(sys.stderr)
    tf_logger.addHandler(mine)
    absl.logging.set_verbosity(absl.logging.DEBUG)
    before = {"tensorflow": (tf_logger.level, list(tf_logger.handlers)),
              "absl": absl.logging.get_verbosity(), "root": logging.getLogger().level}

    import tf1compat as tc
    from tf1compat import example, tfrecord
    path = os.path.join(tempfile.mkdtemp(), "a.tfrecord")
    tfrecord.write_records(path, [example.make_example({"x": [i]}) for i in range(6)])
    with tc.legacy_graph():
        queue = tc.string_input_producer([path], num_epochs=1, shuffle=False)
        _, value = tc.TFRecordReader().read(queue)
        x = tf.io.parse_single_example(value, {"x": tf.io.FixedLenFeature([], tf.int64)})["x"]
        batch = tc.shuffle_batch([x], 2, capacity=6, min_after_dequeue=2, seed=1,
                                 allow_smaller_final_batch=True)
    with tc.SessionIterator(batch) as it:
        total = sum(len(b) for b in it)
    tc.to_tf_data(batch)
    after = {"tensorflow": (tf_logger.level, list(tf_logger.handlers)),
             "absl": absl.logging.get_verbosity(), "root": logging.getLogger().level}
    tf.compat.v1.logging.warning("the user's own warning")
    with tf.Graph().as_default():
        tf.compat.v1.train.range_input_producer(5)  # the user's own deprecated call
    print(json.dumps({"same": before == after, "total": int(total),
                      "v1_verbosity": tf.compat.v1.logging.get_verbosity()}))
"""


@pytest.mark.tf
@pytest.mark.slow
def test_the_users_loggers_are_left_as_they_were():
    environment = {k: v for k, v in os.environ.items()
                   if k not in ("TF_CPP_MIN_LOG_LEVEL", "TF1COMPAT_VERBOSE")}
    result = subprocess.run([sys.executable, "-c", textwrap.dedent(USER_PROGRAM)],
                            capture_output=True, text=True, timeout=300,
                            env={**environment, "PYTHONPATH": ROOT})
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {"same": True, "total": 6, "v1_verbosity": 20}
    assert "the user's own warning" in result.stderr
    assert "range_input_producer (from tensorflow.python.training.input) is deprecated" \
        in result.stderr
    assert "tf1compat" not in result.stderr  # no notice for tf1compat's own calls


# A fresh process calls tf1compat's TF1 entry points (each of TensorFlow's notices is
# logged once per process, on the first call) with a handler that records each
# deprecation notice and whether tf1compat's code made the call, and the logger's
# level and filters after each; they must be as before every call.
OWN_CALLS_PROGRAM = """
    import json, logging, os, sys, tempfile
    import tensorflow as tf
    LIBRARIES = ("tensorflow", "tf_slim", "keras", "tf_keras", "logging", "absl")
    notices = []

    class Notices(logging.Handler):
        def emit(self, record):
            if "is deprecated and will be removed" not in str(record.msg):
                return
            frame = sys._getframe(1)
            while frame.f_globals.get("__name__", "").partition(".")[0] in LIBRARIES:
                frame = frame.f_back
            caller = frame.f_globals.get("__name__", "")
            notices.append((caller, record.getMessage().splitlines()[0][-120:]))

    logger = tf.get_logger()
    logger.addHandler(Notices())
    state = (logger.level, list(logger.filters))
    changed = []

    def check(what):
        if (logger.level, list(logger.filters)) != state:
            changed.append(what)

    import tf1compat as tc
    from tf1compat import cifar10, example, tfrecord
    folder = tempfile.mkdtemp()
    path = os.path.join(folder, "a.tfrecord")
    tfrecord.write_records(path, [example.make_example({"x": [i]}) for i in range(6)])
    text = os.path.join(folder, "a.txt")
    with open(text, "w") as f:
        f.write("1\\n2\\n3\\n")
    features = {"x": tf.io.FixedLenFeature([], tf.int64)}
    with tc.legacy_graph():
        _, value = tc.TFRecordReader().read(tc.string_input_producer([path], num_epochs=2))
        x = tf.io.parse_single_example(value, features)["x"]
        batches = [tc.batch([x], 2), tc.shuffle_batch([x], 2, 6, 2),
                   tc.batch_join([[x], [x]], 2), tc.shuffle_batch_join([[x]], 2, 6, 2),
                   tc.prefetch_queue([x]).dequeue()]
        tc.slice_input_producer([tf.range(4)], num_epochs=1)
        tc.input_producer(tf.range(4), num_epochs=1)
        tc.TextLineReader().read(tc.string_input_producer([text], num_epochs=1))
        tc.WholeFileReader().read(tc.string_input_producer([text], num_epochs=1))
        tc.FixedLengthRecordReader(2).read(tc.string_input_producer([text], num_epochs=1))
        fast = tc.build_example_batches(tc.string_input_producer([path], num_epochs=2),
                                        features, 2)
        check("building")
    with tc.legacy_graph():
        queue = tc.string_input_producer([path], num_epochs=1, shuffle=False)
        batch = tc.batch([tf.io.parse_single_example(tc.TFRecordReader().read(queue)[1],
                                                     features)["x"]], 2)
    with tc.SessionIterator(batches[0]) as it:
        list(it)
    with tc.SessionIterator(fast) as it:
        list(it)
    check("SessionIterator")
    list(tc.to_tf_data(batch))
    tc.describe_lowering(batch)
    assert tc.compare(batch).equal
    check("to_tf_data")
    source = cifar10.make_synthetic(os.path.join(folder, "cifar"), 20, 10)
    with tc.legacy_graph():
        images, labels = cifar10.inputs(eval_data=True, data_dir=source, batch_size=5)
        cifar10.distorted_inputs(data_dir=source, batch_size=5)
    check("cifar10")
    cifar10.convert(source, os.path.join(folder, "slim"), workers=0)
    from tf1compat.migrate.comparison import compare_split
    assert compare_split(cifar10.get_split, "test", os.path.join(folder, "slim")).equal
    split = cifar10.get_split("test", os.path.join(folder, "slim"))
    list(tc.to_tf_data(split))
    with tc.legacy_graph():
        tc.slim.BatchedDatasetDataProvider(split, 5, num_epochs=1).get(["image", "label"])
    check("slim")
    with tc.v1.RunMode([folder], tf_data=True):   # its own calls: v2 behaviour off and on
        pass
    check("run mode")
    print(json.dumps({"notices": notices, "changed": changed}))
"""


@pytest.mark.tf
@pytest.mark.slow
def test_tf1compats_own_calls_log_no_notice_and_leave_the_logger_as_it_was():
    """No deprecation notice for a call tf1compat makes, the filter that leaves them out
    there only while such a call runs: before and after each, TensorFlow's logger has
    the level and filters it had."""
    environment = {k: v for k, v in os.environ.items()
                   if k not in ("TF_CPP_MIN_LOG_LEVEL", "TF1COMPAT_VERBOSE")}
    result = subprocess.run([sys.executable, "-c", textwrap.dedent(OWN_CALLS_PROGRAM)],
                            capture_output=True, text=True, timeout=300,
                            env={**environment, "PYTHONPATH": ROOT})
    assert result.returncode == 0, result.stderr[-3000:]
    found = json.loads(result.stdout.splitlines()[-1])
    assert found["changed"] == []
    assert [notice for notice in found["notices"]
            if notice[0].startswith("tf1compat")] == []
    assert "tf1compat" not in result.stderr


def test_record_tools_and_converters_never_print(tmp_path, capfd):
    from PIL import Image

    from tf1compat import cifar10, imagefolder

    cifar10.make_synthetic(tmp_path / "cifar", num_train=10, num_test=5, seed=1)
    cifar10.convert(tmp_path / "cifar", tmp_path / "cifar_out", workers=0)
    for label in ("a", "b"):
        (tmp_path / "photos" / label).mkdir(parents=True)
        Image.new("RGB", (3, 2)).save(tmp_path / "photos" / label / "x.png")
    imagefolder.convert(tmp_path / "photos", tmp_path / "photos_out", name="p", workers=0)
    path = tmp_path / "r.tfrecord"
    records = [example.make_example({"x": np.arange(i), "name": f"n{i}"}) for i in range(5)]
    tfrecord.write_records(path, records)
    assert list(tfrecord.iter_records(path)) == records
    assert tfrecord.count_records(path) == 5 and tfrecord.verify(path).ok
    example.infer_features([path])
    example.example_to_dict(records[0])
    tfrecord.write_sharded(records, tmp_path / "s", 2, workers=0)
    tfrecord.write_sharded(range(4), tmp_path / "e", 2, workers=0,
                           encode=lambda i: example.make_example({"i": i}))
    assert capfd.readouterr().out == ""


@pytest.mark.tf
def test_pipeline_calls_never_print(tmp_path, capfd):
    import tf1compat as tc
    from tf1compat._tf import tf

    path = tmp_path / "r.tfrecord"
    tfrecord.write_records(path, [example.make_example({"x": [i]}) for i in range(4)])
    with tc.legacy_graph():
        _, value = tc.TFRecordReader().read(
            tc.string_input_producer([str(path)], num_epochs=1, shuffle=False))
        x = tf.io.parse_single_example(value, {"x": tf.io.FixedLenFeature([], tf.int64)})["x"]
        batch = tc.batch([x], 2)
    with tc.SessionIterator(batch) as it:
        assert [b.tolist() for b in it] == [[0, 1], [2, 3]]
    tc.describe_lowering(batch)
    assert tc.compare(batch).equal
    assert capfd.readouterr().out == ""


def run_on_a_terminal(code, **env):
    """Run ``code`` with stdout and stderr on a pseudo-terminal; returns what it wrote."""
    import fcntl
    import pty
    import struct
    import termios

    environment = {k: v for k, v in os.environ.items() if k != "TQDM_DISABLE"}
    environment.update(PYTHONPATH=ROOT, **env)
    controller, terminal = pty.openpty()
    fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))  # 80 columns
    child = subprocess.Popen([sys.executable, "-c", code], stdout=terminal, stderr=terminal,
                             env=environment)
    os.close(terminal)
    output = b""
    while True:
        try:
            chunk = os.read(controller, 65536)
        except OSError:  # the terminal closed with the child
            break
        if not chunk:
            break
        output += chunk
    os.close(controller)
    assert child.wait(timeout=120) == 0, output
    return output.decode(errors="replace")


BAR = ("import sys; from tf1compat.records._progress import progress_bar; "
       "print('hidden' if progress_bar(total=3, file=sys.stdout).disable else 'shown')")


@pytest.mark.parametrize("env, shown", [({}, "shown"), ({"TQDM_DISABLE": "1"}, "hidden")])
def test_progress_bars_honour_tqdm_disable_on_a_terminal(env, shown):
    assert run_on_a_terminal(BAR, **env).split()[-1] == shown


def test_progress_bars_are_hidden_off_a_terminal():
    environment = {k: v for k, v in os.environ.items() if k != "TQDM_DISABLE"}
    result = subprocess.run([sys.executable, "-c", BAR], capture_output=True, text=True,
                            env={**environment, "PYTHONPATH": ROOT}, check=True)
    assert result.stdout.split() == ["hidden"]


@pytest.mark.parametrize("flags, bar", [([], True), (["--quiet"], False)])
def test_cli_quiet_hides_the_progress_bar(tmp_path, flags, bar):
    from tf1compat import cifar10

    cifar10.make_synthetic(tmp_path / "src", num_train=20, num_test=10, seed=3)
    argv = ["convert-cifar10", str(tmp_path / "src"), str(tmp_path / "out"), "--workers", "0",
            *flags]
    output = run_on_a_terminal(
        f"import sys; from tf1compat import cli; sys.exit(cli.main({argv!r}))")
    assert ("%|" in output) == bar, output
    assert "cifar10 ->" in output


def test_cli_commands_hide_tensorflows_info_and_warning_lines_unless_asked(monkeypatch):
    from tf1compat import cli

    monkeypatch.delenv("TF_CPP_MIN_LOG_LEVEL", raising=False)
    monkeypatch.delenv("TF1COMPAT_VERBOSE", raising=False)
    monkeypatch.delenv("TQDM_DISABLE", raising=False)
    with cli._environment(quiet=True):
        assert (os.environ["TF_CPP_MIN_LOG_LEVEL"], os.environ["TQDM_DISABLE"]) == ("2", "1")
    assert "TF_CPP_MIN_LOG_LEVEL" not in os.environ and "TQDM_DISABLE" not in os.environ
    monkeypatch.setenv("TF_CPP_MIN_LOG_LEVEL", "0")
    with cli._environment(quiet=False):
        assert os.environ["TF_CPP_MIN_LOG_LEVEL"] == "0" and "TQDM_DISABLE" not in os.environ
    monkeypatch.delenv("TF_CPP_MIN_LOG_LEVEL")
    monkeypatch.setenv("TF1COMPAT_VERBOSE", "1")
    with cli._environment(quiet=False):
        assert "TF_CPP_MIN_LOG_LEVEL" not in os.environ
