"""No patching on import, and RunMode as an object that can be left: snapshots of
every attribute of TensorFlow's and tf-slim's modules (and their classes) before and
after, in a fresh process so that nothing else has touched them."""

import os
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.tf

SNAPSHOTS = """
    import builtins, importlib, pkgutil, sys, tempfile, types
    import tensorflow as tf
    import tf_slim
    from tf_slim.data import data_provider, dataset_data_provider, parallel_reader  # noqa
    from tf_slim.data import tfexample_decoder

    PREFIXES = ("tensorflow", "tf_slim", "keras", "tf_keras")

    def snapshot():
        snap = {"builtins": {"__import__": builtins.__import__}}
        for name, module in list(sys.modules.items()):
            if not name.startswith(PREFIXES) or not isinstance(module, types.ModuleType):
                continue
            entry = snap[name] = {"<module>": module}
            for key, value in list(vars(module).items()):
                entry[key] = value
                if isinstance(value, type) and value.__module__ == name:
                    entry.update({f"{key}.{k}": v for k, v in list(vars(value).items())})
        return snap

    def differences(before, after, allowed=()):
        found = []
        for module, entries in before.items():
            now = after.get(module, {})
            for key, value in entries.items():
                new = now.get(key, "<deleted>")
                if new is value or f"{module}.{key}" in allowed:
                    continue
                if isinstance(value, types.ModuleType) and isinstance(new, types.ModuleType) \\
                        and value.__name__ == new.__name__:
                    continue  # a lazily loaded module replaced by the loaded one
                found.append(f"{module}.{key}")
            for key in now.keys() - entries.keys():
                # Python creates a class's __annotations__ when first asked for it
                if not isinstance(now[key], types.ModuleType) \\
                        and not key.endswith("__annotations__"):
                    found.append(f"{module}.{key} (added)")
        return found

    def logger_state():
        logger = tf.get_logger()
        return logger.level, list(logger.filters), list(logger.handlers), logger.disabled

    before, logging_before = snapshot(), logger_state()
    import tf1compat
    names = sorted(info.name for info in pkgutil.walk_packages(tf1compat.__path__, "tf1compat.")
                   if not info.name.endswith("__main__"))
    for name in names:
        importlib.import_module(name)
    print("imported", len(names), differences(before, snapshot()),
          logger_state() == logging_before)

    import tf_slim  # noqa: F401 - what importing tf-slim loads of TensorFlow is not the repair
    before = snapshot()
    changed = tf1compat.patch_tf_slim()
    repaired = differences(before, snapshot())
    print("repair", len(changed), [d for d in repaired if not d.startswith("tf_slim.")],
          hasattr(tfexample_decoder.control_flow_ops, "case"))
    tf1compat.slim.unpatch_tf_slim()
    print("unpatched", differences(before, snapshot()),
          hasattr(tfexample_decoder.control_flow_ops, "case"))
    from tf1compat.slim import dataset  # noqa: F401 - its use repairs tf-slim again
    used = differences(before, snapshot()) != []
    tf1compat.patch_tf_slim()
    tf1compat.unpatch_tf_slim()
    print("used and unpatched", used, differences(before, snapshot()))

    from tf1compat.v1 import RunMode
    modules = dict(sys.modules)
    logger_state = (tf.get_logger().level, list(tf.get_logger().filters))
    import warnings
    warning_filters = list(warnings.filters)
    before = snapshot()
    with RunMode([tempfile.gettempdir()], tf_data=True) as run_mode:
        tf1 = run_mode.tensorflow
        inside = builtins.__import__ is not before["builtins"]["__import__"]
        with tf1.Session() as sess:
            value = sess.run(tf1.constant(3) * 2)
        print("inside", inside, value, tf.executing_eagerly(),
              hasattr(tfexample_decoder.control_flow_ops, "case"))
    # What TensorFlow itself rebuilds when its 2.x behaviour comes back (eager context)
    # or records when any session is made: not a change of run mode's.
    allowed = {"tensorflow.python.eager.context._context",
               "tensorflow.python.eager.context.context",
               "tensorflow.python.training.experimental.mixed_precision_global_state."
               "_non_mixed_precision_session_created"}
    after = snapshot()
    print("left", [d for d in differences(before, after, allowed) if "pb2." not in d],
          tf.executing_eagerly(), [n for n, m in modules.items() if sys.modules.get(n) is not m],
          logger_state == (tf.get_logger().level, list(tf.get_logger().filters)),
          warning_filters == warnings.filters)
"""


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_importing_tf1compat_changes_nothing_and_run_mode_leaves_everything_as_it_was():
    result = subprocess.run([sys.executable, "-c", textwrap.dedent(SNAPSHOTS)],
                            capture_output=True, text=True, timeout=170)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    imported, repair, unpatched, used, inside, left = lines[-6:]
    assert imported.startswith("imported ") and imported.endswith(" [] True")  # logger too
    assert int(imported.split()[1]) > 50  # every module of the package
    assert repair == "repair 31 [] True"  # tf-slim only: TensorFlow's modules untouched
    assert unpatched == "unpatched [] False"
    assert used == "used and unpatched True []"  # after unpatch_tf_slim() nothing is patched
    assert inside == "inside True 6 False True"
    assert left == "left [] True [] True True"


SLIM_LIFECYCLE = """
    import os, tempfile
    import tf1compat
    from tf1compat import cifar10
    from tf_slim.data import tfexample_decoder

    def patched():
        return hasattr(tfexample_decoder.control_flow_ops, "case")

    folder = tempfile.mkdtemp()
    source = cifar10.make_synthetic(os.path.join(folder, "src"), 5, 3, seed=3)
    cifar10.convert(source, os.path.join(folder, "out"), workers=0)

    def first_image():  # slim's provider over get_split's PNG images, as a user reads them
        from tf1compat import slim
        with tf1compat.legacy_graph():
            split = cifar10.get_split("test", os.path.join(folder, "out"))
            image, = slim.dataset_data_provider.DatasetDataProvider(
                split, shuffle=False, num_epochs=1).get(["image"])
        with tf1compat.SessionIterator(image) as images:
            return next(iter(images)).shape

    print("read", first_image(), patched())
    tf1compat.unpatch_tf_slim()
    print("unpatched", patched())
    print("read again", first_image(), patched())
    tf1compat.unpatch_tf_slim()
    changed, again = tf1compat.patch_tf_slim(), tf1compat.patch_tf_slim()
    tf1compat.unpatch_tf_slim()
    print("twice, once", bool(changed), again, patched())
    with tf1compat.v1.RunMode([folder]):
        tf1compat.patch_tf_slim()
        tf1compat.unpatch_tf_slim()
        print("in run mode", patched())
    print("left", patched())
"""


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_tf_slim_is_patched_while_held_and_used_again_after_an_unpatch():
    """After unpatch_tf_slim(), tf1compat.slim and cifar10.get_split repair tf-slim again
    when used (they failed with tf-slim's crash: the 'repaired' flag stayed set);
    patch_tf_slim is idempotent: one unpatch undoes any number of patches; a run mode
    holds the repair of its own until it is left."""
    result = subprocess.run([sys.executable, "-c", textwrap.dedent(SLIM_LIFECYCLE)],
                            capture_output=True, text=True, timeout=170)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.splitlines()[-6:] == [
        "read (32, 32, 3) True", "unpatched False", "read again (32, 32, 3) True",
        "twice, once True [] False", "in run mode True", "left False"]


def test_a_run_mode_entered_again_stays_until_the_block_that_installed_it_ends(tmp_path):
    """`with rm:` inside `with rm:` (the same RunMode) leaves it installed at the inner
    exit (it uninstalled it there); a block around an install() leaves it installed."""
    import builtins

    from tf1compat.v1 import RunMode
    from tf1compat.v1.run_mode import installed_run_mode

    original_import = builtins.__import__
    run_mode = RunMode([tmp_path])
    with run_mode:
        with run_mode as inner:
            assert inner is run_mode and installed_run_mode() is run_mode
        assert installed_run_mode() is run_mode and builtins.__import__ is not original_import
    assert installed_run_mode() is None and builtins.__import__ is original_import
    run_mode.install()
    try:
        with run_mode:
            pass
        assert installed_run_mode() is run_mode
    finally:
        run_mode.uninstall()
    assert installed_run_mode() is None and builtins.__import__ is original_import


def test_a_second_install_changes_settings_for_the_batching_calls_made_after(tmp_path):
    """tf_data can be turned off and on again: each batching call follows the settings
    it is made under. Turning it off drops the cache budget (it was "cache_budget needs
    tf_data", naming a setting the user did not pass, then refused)."""
    import tf1compat as tc
    from tf1compat._tf import v1
    from tf1compat.pipeline.cache_budget import cache_budget
    from tf1compat.v1 import RunSettings, install, run_path, uninstall
    from tf1compat.v1.run_mode import installed_run_mode

    def batch_op_type(tf1):
        with tc.legacy_graph():
            queue = tf1.train.input_producer(v1.range(4), num_epochs=1, shuffle=False)
            return tf1.train.batch([queue.dequeue()], 2).op.type

    tf1 = install([tmp_path], tf_data=True, cache_budget="2M")
    try:
        install(cache_budget="1M", grace_period=4)
        settings = installed_run_mode().settings
        assert (settings.tf_data, settings.cache_budget, settings.grace_period) == \
            (True, 2 ** 20, 4.0)
        with pytest.raises(tc.errors.ArgumentTypeError,
                           match="tf_data must be True, False or 'auto', got 'no'"):
            install(tf_data="no")
        assert installed_run_mode().settings == settings
        assert batch_op_type(tf1) == "IteratorGetNext"     # on tf.data
        install(tf_data=False)
        settings = installed_run_mode().settings
        assert (settings.tf_data, settings.cache_budget, settings.grace_period) == \
            (False, None, 4.0)
        assert batch_op_type(tf1) == "QueueDequeueManyV2"  # on queues from now on
        install(tf_data="auto")
        assert installed_run_mode().settings.cache_budget == cache_budget(None)
        assert batch_op_type(tf1) == "IteratorGetNext"
    finally:
        uninstall()
    with pytest.raises(TypeError, match=r"pass settings or \['tf_data'\], not both"):
        run_path(tmp_path / "x.py", settings=RunSettings(), tf_data=True)


def test_unpatch_tf_slim_is_beside_patch_tf_slim():
    import tf1compat
    assert tf1compat.unpatch_tf_slim is tf1compat.slim.unpatch_tf_slim
    assert {"patch_tf_slim", "unpatch_tf_slim"} <= set(dir(tf1compat))


def test_install_and_uninstall_in_process_leave_the_import_hook_and_settings(tmp_path):
    import builtins

    from tf1compat.v1 import RunMode, install, uninstall
    from tf1compat.v1.run_mode import installed_run_mode

    original_import = builtins.__import__
    program = tmp_path / "train.py"
    program.write_text("import tensorflow as tf\nTF = tf\n")
    tf1 = install([tmp_path], grace_period=3)
    try:
        assert builtins.__import__ is not original_import
        assert install([tmp_path], tf_data=True) is tf1  # a second call adds to it
        run_mode = installed_run_mode()
        assert (run_mode.settings.grace_period, run_mode.settings.tf_data) == (3.0, True)
        namespace = {"__file__": str(program), "__name__": "train"}
        exec(compile(program.read_text(), str(program), "exec"), namespace)
        assert namespace["TF"] is tf1 and hasattr(tf1, "contrib")
        other = {"__file__": str(tmp_path.parent / "lib.py"), "__name__": "lib"}
        exec("import tensorflow as tf\nTF = tf\n", other)
        assert other["TF"] is sys.modules["tensorflow"]  # outside the roots: TensorFlow 2
        with pytest.raises(RuntimeError, match="a run mode is already installed"):
            RunMode([tmp_path]).install()
    finally:
        uninstall()
    assert builtins.__import__ is original_import and installed_run_mode() is None
    uninstall()  # idempotent


@pytest.mark.parametrize("grace", [0, -1, "10", True, float("nan"), float("-inf")])
def test_bad_grace_period_is_refused_before_anything_changes(grace, tmp_path):
    import builtins

    from tf1compat.v1 import RunMode, install

    original_import = builtins.__import__
    with pytest.raises(ValueError, match="grace_period must be a positive number"):
        install(grace_period=grace)
    with pytest.raises(ValueError, match="grace_period must be a positive number"):
        RunMode([tmp_path], grace_period=grace)
    assert builtins.__import__ is original_import


# ------------------------------------------------------------ check without TensorFlow

def test_check_imports_no_tensorflow(tmp_path):
    program = tmp_path / "old.py"
    program.write_text("import tensorflow as tf\nimport tensorflow.contrib.slim as slim\n"
                       "tf.contrib.quantize.create_training_graph()\nslim.fully_connected\n")
    probe = ("import sys\nfrom tf1compat import cli\nstatus = cli.main(['check', sys.argv[1]])\n"
             "loaded = sorted(m for m in sys.modules if m.partition('.')[0] in "
             "('tensorflow', 'tf_slim', 'keras'))\nprint(status, loaded)\n")
    result = subprocess.run([sys.executable, "-c", probe, str(program)], capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-1] == "1 []"
    assert "tf.contrib.quantize.create_training_graph: no TensorFlow 2 counterpart" \
        in result.stdout


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_the_recorded_names_are_the_installed_tensorflows():
    """The record check reads is run mode's tensorflow as this TensorFlow, tf-slim and
    tf-keras give it (and the names that need tf-keras); when they change, this names
    the modules and names that differ (rewrite the installed minor's record with
    `python -m tf1compat.v1.tf1_names`). Recorded in fresh processes, as that command
    does: a submodule other tests imported (tf_slim.layers' sparse_ops) would show as a
    name of its package."""
    from tf1compat._versions import minor_version
    from tf1compat.v1.tf1_names import record_run_mode_names, recorded_minors, recorded_names

    recorded, now = recorded_names(), record_run_mode_names()
    assert minor_version(now["tensorflow"]) in recorded_minors()
    assert minor_version(recorded["tensorflow"]) == minor_version(now["tensorflow"])
    for part in ("modules", "without_keras2"):
        old, new = recorded[part], now[part]
        changed = {module: sorted(set(old.get(module, {}).items())
                                  ^ set(new.get(module, {}).items()))
                   for module in old.keys() | new.keys() if old.get(module) != new.get(module)}
        assert changed == {}, part
    assert "dense" in now["modules"]["tensorflow.layers"]          # Keras 2's tf.layers
    assert "dense" in now["without_keras2"]["tensorflow.layers"]   # not Keras 3's


def test_the_record_holds_each_tensorflow_minor_exactly():
    """The stored file keeps the newest minor whole and each older one as changes to
    it; every minor's record reads back as it was written, whichever order they came
    in, and a minor not recorded reads as the newest."""
    from tf1compat.v1.tf1_names import _minor_record, _stored_with

    newest = {"tensorflow": "2.21.0",
              "modules": {"tensorflow": {"image": "m:tensorflow.image", "layers": ""},
                          "tensorflow.image": {"decode_webp": "", "resize": ""},
                          "tensorflow.new": {"x": ""}},
              "without_keras2": {"tensorflow.layers": {"dense": ""}}}
    oldest = {"tensorflow": "2.16.1",
              "modules": {"tensorflow": {"image": "m:tensorflow.image", "layers": "o"},
                          "tensorflow.image": {"resize": "", "resize_area": ""},
                          "tensorflow.gone": {"y": ""}},
              "without_keras2": {}}
    middle = {"tensorflow": "2.18.0", "modules": newest["modules"],
              "without_keras2": {"tensorflow.layers": {"dense": "", "conv2d": ""}}}
    for order in ([newest, oldest, middle], [oldest, middle, newest], [middle, newest, oldest]):
        stored = None
        for record in order:
            stored = _stored_with(stored, record)
        assert stored["tensorflow"] == "2.21.0" and sorted(stored["older"]) == ["2.16", "2.18"]
        for record in (newest, oldest, middle):
            minor = ".".join(record["tensorflow"].split(".")[:2])
            assert _minor_record(stored, minor) == record
        assert _minor_record(stored, "2.22") == newest
    again = _stored_with(stored, {**oldest, "tensorflow": "2.16.2"})  # replaces 2.16's
    assert _minor_record(again, "2.16")["tensorflow"] == "2.16.2"
    assert sorted(again["older"]) == ["2.16", "2.18"]


def test_check_leaves_underscore_names_alone(tmp_path, capsys):
    """pix2pix's `tf.__version__.split('.')[0] != "1"`: run mode gives the version,
    the record lists public names only, so check does not judge dunder names."""
    from tf1compat import cli

    (tmp_path / "pix2pix.py").write_text(
        "import tensorflow as tf\n"
        "if tf.__version__.split('.')[0] != '1' or tf.VERSION < '1.4':\n"
        "    raise Exception('Tensorflow version 1 required')\n"
        "tf.contrib.quantize.create_training_graph()\n")
    assert cli.main(["check", str(tmp_path)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert [line.split(": ")[0] for line in out[:-1]] == [f"{tmp_path / 'pix2pix.py'}:4"]
    assert out[-1] == "1 file(s) checked: 1 unsupported name(s) in 1 file(s)"


def test_check_names_an_unreadable_file_and_carries_on(tmp_path, capsys):
    from tf1compat import cli

    (tmp_path / "a_gone.py").symlink_to(tmp_path / "missing.py")
    (tmp_path / "b_old.py").write_text("import tensorflow as tf\ntf.contrib.quantize.x()\n")
    assert cli.main(["check", str(tmp_path)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"{tmp_path / 'a_gone.py'}: cannot read: No such file or directory"
    assert out[1].startswith(f"{tmp_path / 'b_old.py'}:2: tf.contrib.quantize.x: ")
    assert out[2] == ("2 file(s) checked: 1 unsupported name(s) in 1 file(s); "
                      "1 file(s) could not be read or parsed")


def test_check_never_opens_a_fifo_nor_reads_a_huge_file(tmp_path, capsys):
    from tf1compat import cli
    from tf1compat.v1.check import LARGEST_SOURCE

    os.mkfifo(tmp_path / "a_pipe.py")  # opening it would block until a writer comes
    with open(tmp_path / "b_huge.py", "wb") as f:
        f.truncate(8 << 30)  # sparse: 8 GiB
    (tmp_path / "c_old.py").write_text("import tensorflow as tf\ntf.contrib.quantize.x()\n")
    assert cli.main(["check", str(tmp_path)]) == 1
    out = capsys.readouterr().out.splitlines()
    pipe = f"{tmp_path / 'a_pipe.py'}: cannot read: not a regular file (a FIFO, device or socket)"
    assert out[0].startswith(pipe)
    assert out[1] == (f"{tmp_path / 'b_huge.py'}: cannot read: {8 << 30:,} bytes, more than a "
                      f"Python file's {LARGEST_SOURCE:,}: not read")
    assert out[2].startswith(f"{tmp_path / 'c_old.py'}:2: tf.contrib.quantize.x: ")
    assert out[3].endswith("2 file(s) could not be read or parsed")
    assert cli.main(["check", str(tmp_path / "a_pipe.py")]) == 1  # named alone: not "missing"
    assert capsys.readouterr().out.startswith(pipe)


def _generated_module(path, size):
    """A generated module of about ``size`` bytes, as tools write them (weights as
    literals): TensorFlow imported and aliased, one list literal of a third of the size
    (one statement, the parser's worst case), small functions and assignments, a
    multi-line string holding code at column 0, and a finding at its end."""
    row = ", ".join(f"{i * 0.001:.6f}" for i in range(100))
    with open(path, "w") as f:
        f.write('import tensorflow as tf\nslim = tf.contrib.slim\nDOC = """\n'
                'import tensorflow as tf\ntf.contrib.quantize.in_a_string()\n"""\n')
        f.write("WEIGHTS = [\n" + f"    {row},\n" * (size // 3 // (len(row) + 6)) + "]\n")
        block = "".join(f"def layer_{i}(x):\n    return x * {i}\n\nw_{i} = [{row}]\n"
                        for i in range(100))
        while f.tell() < size:
            f.write(block)
        f.write("graph = tf.contrib.quantize.create_training_graph()\n")


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_check_reads_a_generated_module_in_little_memory_file_by_file(tmp_path):
    """A 50 MB module (under check's 64 MB cap) needed 13.9 GB and 2 min 15 s, or died
    with MemoryError under a 2 GiB limit and the other files' findings were never
    printed. Under a real 2 GiB address-space limit: every file's findings, in order,
    and the finding at the generated module's end at its line."""
    import resource
    import time
    (tmp_path / "a_old.py").write_text("import tensorflow as tf\ntf.contrib.quantize.x()\n")
    _generated_module(tmp_path / "b_generated.py", 50 << 20)
    (tmp_path / "c_old.py").write_text("import tensorflow as tf\ntf.contrib.quantize.y()\n")
    (tmp_path / "d_deep.py").write_text("x = " + "+".join(["1"] * 100_000) + "\n")
    lines = (tmp_path / "b_generated.py").read_text().count("\n")

    def limited():
        resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))
    started = time.monotonic()
    run = subprocess.run([sys.executable, "-m", "tf1compat", "check", str(tmp_path)],
                         capture_output=True, text=True, timeout=280, preexec_fn=limited)
    assert time.monotonic() - started < 240
    assert run.returncode == 1 and run.stderr == "", run.stderr[-2000:]
    out = run.stdout.splitlines()
    assert [line.split(": ")[0] for line in out[:4]] == [
        f"{tmp_path / 'a_old.py'}:2", f"{tmp_path / 'b_generated.py'}:{lines}",
        f"{tmp_path / 'c_old.py'}:2", f"{tmp_path / 'd_deep.py'}:1"]
    assert out[1].endswith("(tfmot.quantization.keras.quantize_model)")
    assert out[3].endswith("cannot parse: too large or too deeply nested for Python's parser "
                           "(RecursionError)")
    assert out[4] == ("4 file(s) checked: 3 unsupported name(s) in 3 file(s); 1 file(s) could "
                      "not be read or parsed")


def test_a_large_file_is_checked_statement_by_statement_as_a_whole_one(tmp_path, monkeypatch):
    """What the statement-by-statement reading of a large file finds is what parsing
    it whole finds: the tests' own files (programs in strings, decorators, if/else,
    try/except at the top level) and a syntax error's line in a statement naming
    TensorFlow (one naming none is not parsed)."""
    import glob

    from tf1compat.v1 import check
    files = sorted(glob.glob(os.path.join(os.path.dirname(__file__), "*.py")))
    broken = tmp_path / "broken.py"
    broken.write_text("import tensorflow as tf\nx = tf.contrib.slim\n\ndef f(x=tf.zeros:\n"
                      "    pass\n")
    for path in [*files, str(broken)]:
        found = []
        for whole in (1 << 20, 0):
            monkeypatch.setattr(check, "WHOLE_FILE_BYTES", whole)
            try:
                found.append(check.check_file(path))
            except check.UnparsableFileError as e:
                found.append(str(e))
        assert found[0] == found[1], path
    assert found[0].startswith(f"{broken}:4: cannot parse: ")


# Keras 2 names (tf.layers, tf.nn.rnn_cell, tf.contrib.keras, tf.contrib.rnn's cells)
# work in run mode with tf-keras; tf.estimator does not.
KERAS2_PROGRAM = """\
import tensorflow as tf
from tensorflow.contrib import keras as contrib_keras

images = tf.placeholder(tf.float32, [None, 8, 8, 1])
net = tf.layers.conv2d(images, 4, 3)
logits = tf.layers.dense(tf.layers.flatten(net), 10)
layer = contrib_keras.layers.Dense(3)
cell = tf.nn.rnn_cell.BasicLSTMCell(4)
print("built", logits.shape.as_list(), layer.units, cell.state_size)
try:
    tf.contrib.rnn.BasicLSTMCell(4)
except NotImplementedError as e:
    print(type(e).__name__, e)
try:
    tf.estimator.Estimator
except AttributeError as e:
    print("AttributeError", e)
"""


def _run_keras2_program(tmp_path, keras2):
    return subprocess.run(
        [sys.executable, "-m", "tf1compat", "run", str(tmp_path / "layers.py")],
        capture_output=True, text=True, timeout=180, cwd=tmp_path,
        env={**os.environ, "TF_USE_LEGACY_KERAS": str(int(keras2))})


@pytest.mark.slow
@pytest.mark.timeout(400)
def test_check_lists_what_run_mode_cannot_give_with_and_without_tf_keras(
        tmp_path, capsys, monkeypatch):
    from tf1compat import cli
    from tf1compat.v1 import check

    (tmp_path / "layers.py").write_text(KERAS2_PROGRAM)
    assert cli.main(["check", str(tmp_path)]) == 1
    listed = [line.split(": ")[0] for line in capsys.readouterr().out.splitlines()[:-1]]
    assert listed == [f"{tmp_path / 'layers.py'}:15"]
    ran = _run_keras2_program(tmp_path, keras2=True)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.splitlines() == [
        "built [None, 10] 3 LSTMStateTuple(c=4, h=4)",
        "AttributeError module 'tf' has no attribute 'estimator' (tf1compat run mode: module "
        "'tensorflow.compat.v1' has no attribute 'estimator')"]

    # Without tf-keras, run mode's tf.layers is TensorFlow's Keras 3 one: check says so.
    monkeypatch.setattr(check, "keras2_installed", lambda: False)
    check._names_needing_keras2.cache_clear()
    try:
        findings = check.check_file(str(tmp_path / "layers.py"))
    finally:
        check._names_needing_keras2.cache_clear()
    assert [(f.line, f.name) for f in findings] == [
        (5, "tf.layers.conv2d"), (6, "tf.layers.dense"), (6, "tf.layers.flatten"),
        (8, "tf.nn.rnn_cell.BasicLSTMCell"), (11, "tf.contrib.rnn.BasicLSTMCell"),
        (15, "tf.estimator.Estimator")]
    import tensorflow as tf
    tensorflow_minor = ".".join(tf.__version__.split(".")[:2])   # tf-keras pairs with it
    assert findings[0].reason == (
        'needs Keras 2, the tf-keras package, which is not installed: pip install --no-deps '
        f'"tf-keras~={tensorflow_minor}.0" (`conv2d` is not available with Keras 3.)')
    assert findings[4].reason.endswith(
        "(tf1compat run mode gives `BasicLSTMCell` only with Keras 2)")
    without = _run_keras2_program(tmp_path, keras2=False)
    assert without.returncode == 1
    assert without.stderr.splitlines()[-1].endswith("`conv2d` is not available with Keras 3.")
