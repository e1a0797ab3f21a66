"""``tf1compat port``: the command, the folder it writes, its report, and the ported
program running under plain ``python`` with tf1compat not importable."""

import pathlib

import numpy as np
import pytest
from legacy_programs import tf1compat_run, write_idx, write_program
from port_programs import run_without_tf1compat
from slim_data import make_examples, write_slim_files

from tf1compat import cli
from tf1compat.port import port_program

pytestmark = pytest.mark.tf

PROGRAM = '''\
"""Trains a line on three points."""
import numpy as np
import tensorflow as tf

import model  # the program's own module

flags = tf.app.flags
flags.DEFINE_integer("steps", 5, "training steps")
FLAGS = flags.FLAGS


def main(_):
    x = tf.placeholder(tf.float32, [None, 1])
    loss = model.loss(x)
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(FLAGS.steps):
            value, _ = sess.run([loss, train], {x: np.array([[1.0], [2.0], [3.0]])})
    print("width", x.get_shape()[1].value, "loss %.6f" % value)


if __name__ == "__main__":
    tf.app.run()
'''
MODEL = '''\
import tensorflow as tf


def loss(x):
    w = tf.get_variable("w", [1, 1], initializer=tf.constant_initializer(0.5))
    return tf.reduce_mean(tf.square(tf.matmul(x, w) - 2 * x), keep_dims=False)
'''


@pytest.fixture
def program(tmp_path):
    write_program(tmp_path / "src", "train.py", PROGRAM)
    write_program(tmp_path / "src", "model.py", MODEL)
    (tmp_path / "src" / "notes.txt").write_text("kept as it is\n")
    return tmp_path / "src" / "train.py"


def test_port_writes_a_runnable_tree_and_leaves_the_program(program, tmp_path, capsys):
    before = {path.name: path.read_bytes() for path in program.parent.iterdir()}
    assert cli.main(["port", str(program), "--out", str(tmp_path / "out")]) == 0
    out = capsys.readouterr().out
    assert f"ported: {program}:13: tf.placeholder -> tf.compat.v1.placeholder" in out
    assert f"{program.parent}/model.py:5: tf.get_variable -> tf.compat.v1.get_variable" in out
    assert "train.py | +7 -6" in out and "model.py | +2 -2" in out
    assert out.splitlines()[-1].startswith("2 file(s) ported to")
    assert {path.name: path.read_bytes() for path in program.parent.iterdir()} == before
    ported = tmp_path / "out"
    assert (ported / "notes.txt").read_text() == "kept as it is\n"
    assert "tf.compat.v1.disable_v2_behavior()" in (ported / "train.py").read_text()
    assert (ported / "model.py").read_text() == MODEL.replace(
        "tf.get_variable", "tf.compat.v1.get_variable").replace(
        "tf.constant_initializer", "tf.compat.v1.constant_initializer").replace(
        "keep_dims", "keepdims")


@pytest.mark.slow
def test_the_port_runs_without_tf1compat_as_the_original_runs_under_it(program, tmp_path):
    port_program(program, tmp_path / "out")
    original = tf1compat_run(program, "--steps", "3", cwd=program.parent)
    ported = run_without_tf1compat(tmp_path / "out" / "train.py", "--steps", "3",
                                   cwd=tmp_path / "out")
    assert original.returncode == 0, original.stderr
    assert ported.returncode == 0, ported.stderr
    assert ported.stdout == original.stdout
    assert ported.stdout.startswith("width 1 loss ")


ABSL_LOGGING_NAMES = '''\
"""Flags named like absl.logging's, as TF 1.5-1.13 let a program define them."""
import tensorflow as tf
from tensorflow import flags

tf.app.flags.DEFINE_string("log_dir", "logs", "where the program logs")
flags.DEFINE_integer("v", 1, "the program's own -v")
FLAGS = tf.app.flags.FLAGS


def main(_):
    print(FLAGS.log_dir, FLAGS.v)
    try:
        tf.app.flags.DEFINE_string("log_dir", "again", "the program's second definition")
    except Exception as e:  # noqa: BLE001 - what the second definition raises
        print(type(e).__name__)


if __name__ == "__main__":
    tf.app.run()
'''


@pytest.mark.slow
def test_flags_named_like_absl_loggings_are_the_programs_in_run_mode_and_its_port(tmp_path):
    program = write_program(tmp_path / "src", "flags.py", ABSL_LOGGING_NAMES)
    port_program(program, tmp_path / "out")
    ported_text = (tmp_path / "out" / "flags.py").read_text()
    assert "tf1_flags.define_over_absl_logging(tf.compat.v1.app.flags.DEFINE_string)(" \
        '"log_dir"' in ported_text
    assert 'tf1_flags.define_over_absl_logging(flags.DEFINE_integer)("v"' in ported_text
    original = tf1compat_run(program, "--log_dir", "runs/a", "-v", "3", cwd=tmp_path)
    ported = run_without_tf1compat(tmp_path / "out" / "flags.py", "--log_dir", "runs/a",
                                   "-v", "3", cwd=tmp_path)
    assert original.returncode == 0, original.stderr
    assert ported.returncode == 0, ported.stderr
    assert original.stdout == ported.stdout == "runs/a 3\nDuplicateFlagError\n"


def test_tf1compat_is_not_importable_in_the_helper(tmp_path):
    script = write_program(tmp_path, "probe.py", "import tf1compat\n")
    done = run_without_tf1compat(script, cwd=tmp_path)
    assert done.returncode == 1
    assert "No module named 'tf1compat'" in done.stderr


def test_porting_twice_gives_the_same_files_and_the_port_of_a_port_changes_nothing(
        program, tmp_path):
    first = port_program(program, tmp_path / "a")
    second = port_program(program, tmp_path / "b")
    assert [f.after for f in first.files] == [f.after for f in second.files]
    again = port_program(tmp_path / "a" / "train.py", tmp_path / "c")
    assert again.changes == () and again.findings == ()
    assert all(f.before == f.after for f in again.files)


def test_a_folder_is_ported_whole(program, tmp_path):
    report = port_program(program.parent, tmp_path / "out")
    assert sorted(f.path for f in report.files) == ["model.py", "train.py"]
    # no __main__.py: no entry file, so no graph-mode line
    assert "disable_v2_behavior" not in (tmp_path / "out" / "train.py").read_text()


def test_an_out_folder_inside_the_program_is_neither_ported_nor_copied(program):
    inside = program.parent / "ported"
    port_program(program.parent, inside)
    report = port_program(program.parent, inside, overwrite=True)
    assert sorted(f.path for f in report.files) == ["model.py", "train.py"]
    assert not (inside / "ported").exists()


def test_names_not_ported_exit_1_with_file_line_and_why(tmp_path, capsys):
    program = write_program(tmp_path, "old.py", "import tensorflow as tf\n\ntf.no_such_op()\n")
    assert cli.main(["port", str(program), "--out", str(tmp_path / "out")]) == 1
    out = capsys.readouterr().out
    assert f"not ported: {program}:3: tf.no_such_op: not in TensorFlow 2's" in out
    assert "still need tf1compat" in out.splitlines()[-1]


def test_a_file_that_is_not_python_3_is_a_finding_and_copied(tmp_path):
    program = write_program(tmp_path / "src", "main.py", "import helper\n")
    write_program(tmp_path / "src", "helper.py", "print 'python 2'\n")
    report = port_program(program, tmp_path / "out")
    [finding] = report.findings
    assert finding.path.endswith("helper.py") and "cannot parse as Python 3" in finding.reason
    assert (tmp_path / "out" / "helper.py").read_text() == "print 'python 2'\n"


@pytest.mark.parametrize("out, message", [
    (".", "would write over the program"),
    ("notes.txt", "is a file; expected a folder"),
])
def test_out_that_would_harm_the_program_is_refused(program, out, message, capsys):
    target = program.parent / out if out != "." else program.parent
    assert cli.main(["port", str(program), "--out", str(target)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("tf1compat port: error: --out ")
    assert message in err[0]


def test_an_existing_folder_is_replaced_only_with_overwrite(program, tmp_path, capsys):
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "old.txt").write_text("x")
    assert cli.main(["port", str(program), "--out", str(tmp_path / "out")]) == 2
    assert "exists and is not empty; pass --overwrite" in capsys.readouterr().err
    assert cli.main(["port", str(program), "--out", str(tmp_path / "out"), "--overwrite"]) == 0
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        "model.py", "notes.txt", "train.py"]
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_a_missing_program_is_a_usage_error(tmp_path, capsys):
    assert cli.main(["port", str(tmp_path / "nope.py"), "--out", str(tmp_path / "o")]) == 2
    assert capsys.readouterr().err == \
        f"tf1compat port: error: {tmp_path / 'nope.py'} does not exist\n"


def test_the_programs_arguments_come_after_a_double_dash():
    assert cli._split_program_arguments(["port", "p.py", "--out", "d", "--", "--out", "x"]) \
        == (["port", "p.py", "--out", "d"], ["--out", "x"])
    assert cli._split_program_arguments(["run", "p.py", "--", "x"]) \
        == (["run", "p.py", "--", "x"], None)


EXAMPLES = pathlib.Path(__file__).parent / "port_examples"


def _mnist_files(folder):
    rng = np.random.default_rng(0)
    folder.mkdir(parents=True)
    for prefix, count in (("train", 40), ("t10k", 12)):
        write_idx(folder / f"{prefix}-images-idx3-ubyte.gz", 2051,
                  rng.integers(0, 256, (count, 28, 28)))
        write_idx(folder / f"{prefix}-labels-idx1-ubyte.gz", 2049, rng.integers(0, 10, count))


@pytest.mark.slow
@pytest.mark.parametrize("example, requirements, support", [
    # slim layers on MNIST's files read by the tutorial's input_data, tf.app.flags,
    # NumPy 1.x names, scipy.misc's imsave and imread
    ("mnist_slim.py", ("pillow", "tf-slim"),
     ("tf1_legacy/__init__.py", "tf1_legacy/mnist_tutorial.py", "tf1_legacy/scipy_misc.py",
      "tf1_legacy/tf_slim_repair.py")),
    # tf.contrib.rnn's cells, tf.layers.dense (Keras 2), array methods NumPy 2 removed
    ("rnn_layers.py", ("tf-keras",), ()),
    # slim's DatasetDataProvider over PNG records (its decoders need the repair),
    # tf.train.batch, batch_norm (Keras 2), gradient clipping, slim.learning.train
    ("slim_records.py", ("tf-keras", "tf-slim"),
     ("tf1_legacy/__init__.py", "tf1_legacy/tf_slim_repair.py")),
    # tf.contrib.framework's arg_scope and add_arg_scope bound to names, as slim's
    # NASNet does (arg_scope was ported to a module of tf-slim's of that name)
    ("arg_scope_cells.py", ("tf-slim",),
     ("tf1_legacy/__init__.py", "tf1_legacy/tf_slim_repair.py")),
    # tf.contrib.training.HParams as slim's NASNet configures with it (deepcopy,
    # set_hparam, parse, override_from_dict, values): run mode's class beside the port
    ("hparams_config.py", (), ("tf1_legacy/__init__.py", "tf1_legacy/hparam.py")),
])
def test_corpus_like_programs_port_and_run_without_tf1compat_as_under_run_mode(
        tmp_path, monkeypatch, example, requirements, support):
    source = tmp_path / "src"
    write_program(source, example, (EXAMPLES / example).read_text())
    _mnist_files(source / "mnist")
    (source / "records").mkdir()
    write_slim_files(source / "records", make_examples(np.random.default_rng(1), 24))
    monkeypatch.chdir(source)   # where the program runs: port runs it to find its pipelines
    report = port_program(source / example, tmp_path / "out")
    assert report.findings == ()
    assert report.requirements == requirements and report.support == support
    original = tf1compat_run(example, cwd=source)
    ported = run_without_tf1compat(tmp_path / "out" / example, cwd=tmp_path / "out")
    assert original.returncode == 0, original.stderr
    assert ported.returncode == 0, ported.stderr
    assert ported.stdout == original.stdout
    assert "step 2 loss" in ported.stdout or "finite loss True" in ported.stdout
    again = port_program(tmp_path / "out" / example, tmp_path / "again")
    assert again.changes == () and all(f.before == f.after for f in again.files)
    assert sorted(p.relative_to(tmp_path / "again").as_posix()
                  for p in (tmp_path / "again").rglob("*.py")) == \
        sorted(p.relative_to(tmp_path / "out").as_posix()
               for p in (tmp_path / "out").rglob("*.py"))
