"""`tf1compat demo` runs the three jobs on its own data, checks each step's result, keeps
its files, and fails (exit 1) when a step's result is wrong."""

import os
import pathlib
import re
import subprocess
import sys

import pytest

from tf1compat import cifar10, cli, demo

ROOT = pathlib.Path(__file__).resolve().parent.parent


@pytest.fixture
def small_demo(monkeypatch):
    """The demo with fewer images, so the test stays fast."""
    monkeypatch.setattr(demo, "NUM_TRAIN", 200)
    monkeypatch.setattr(demo, "NUM_TEST", 50)


@pytest.mark.tf
@pytest.mark.slow
@pytest.mark.usefixtures("small_demo", "no_thread_leaks")
def test_demo_runs_the_three_jobs_and_keeps_its_files(tmp_path, capsys):
    folder = tmp_path / "demo"
    assert cli.main(["demo", "--workdir", str(folder), "--seed", "3"]) == 0
    out = capsys.readouterr().out
    expected = demo.expected_program_output(str(folder / "cifar-10-batches-bin"))
    assert expected.startswith("images 200, pixel sum ")
    program_output = "\n".join(f"    {line}" for line in expected.splitlines())
    run = "  $ tf1compat run old_program/count_cifar.py --data_dir=cifar-10-batches-bin\n"
    queues = ("  $ tf1compat run --queues old_program/count_cifar.py "
              "--data_dir=cifar-10-batches-bin\n")
    said = re.search(r"    tf1compat run: tf.train.batch \(count_cifar.py:\d+\) runs on tf.data\n",
                     out)   # on stderr, shown after the program's output
    assert said and run + program_output + "\n" + said.group() + queues + program_output + \
        "\n" in out
    assert "1 file(s) checked: 0 unsupported name(s) in 0 file(s)" in out
    assert "cifar10-tfrecords/cifar10_train.tfrecord: 200 records" in out
    assert "cifar10-tfrecords/cifar10_test.tfrecord: 50 records" in out
    assert "pipelines EQUAL (ordered comparison): 50 examples on each side" in out
    assert "FAILED" not in out and out.count("  ok: ") == 6
    assert out.splitlines()[-1] == f"PASS: all three jobs; the demo's files are kept in {folder}"
    kept = {"old_program/count_cifar.py", "cifar10-tfrecords/cifar10_train.tfrecord",
            "cifar10-tfrecords/cifar10_test.tfrecord", "cifar10-tfrecords/labels.txt",
            "cifar-10-batches-bin/data_batch_1.bin"}
    assert {name for name in kept if (folder / name).is_file()} == kept


@pytest.mark.tf
@pytest.mark.slow
@pytest.mark.usefixtures("small_demo")
def test_a_program_that_drops_the_last_batch_fails_the_check(tmp_path, monkeypatch):
    """The program's counts are checked against the binary files, not only that both
    runs agree: a TF1 program losing the final partial batch (200 images, batches of 64)
    prints the same on queues and tf.data, and still fails."""
    monkeypatch.setattr(demo, "PROGRAM_TEXT", demo.PROGRAM_TEXT.replace(
        "allow_smaller_final_batch=True", "allow_smaller_final_batch=False"))
    source = cifar10.make_synthetic(str(tmp_path), 200, 50, seed=1)
    lines = []
    steps = demo._Steps(str(tmp_path), lines.append)
    demo.run_old_program(steps, source)
    assert steps.failures == ["the counts are those of the binary files (computed with numpy)"]
    assert "    images 192, pixel sum " in "\n".join(lines)
    assert "  ok: run (on tf.data) and run --queues print the same" in lines


@pytest.mark.tf
def test_a_folder_the_demo_did_not_make_is_refused(tmp_path, capsys):
    (tmp_path / "notes.txt").write_text("mine")
    assert cli.main(["demo", "--workdir", str(tmp_path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (f"tf1compat demo: error: {tmp_path} exists and was not made by "
                            "tf1compat demo; pass --workdir with a new or empty folder\n")
    assert (tmp_path / "notes.txt").read_text() == "mine"


def test_without_tensorflow_the_demo_says_so_in_one_line_with_exit_2(tmp_path):
    shadow = tmp_path / "no_tensorflow" / "tensorflow"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text('raise ImportError("No module named \'tensorflow\'")\n')
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(shadow.parent), str(ROOT)]))
    done = subprocess.run([sys.executable, "-m", "tf1compat", "demo", "--workdir",
                           str(tmp_path / "demo")], env=env, capture_output=True, text=True,
                          timeout=60)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.startswith("tf1compat demo: error: tf1compat's pipeline API needs "
                                  "TensorFlow (No module named 'tensorflow'): pip install")
    assert done.stderr.count("\n") == 1
    assert not (tmp_path / "demo").exists()
