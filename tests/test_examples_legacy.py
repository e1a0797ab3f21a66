"""The classic TF1 programs in examples/legacy/ run unmodified through `tf1compat run`
(each in its own process), and what they write or print is checked against their input;
the readers among them print the same with their pipelines on tf.data (the default)
and on TF1's queues (`--queues`)."""

import collections
import concurrent.futures
import math
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

from tf1compat import cli
from tf1compat.cifar10 import encode_png
from tf1compat.records.example import example_to_dict
from tf1compat.records.tfrecord import iter_records

pytestmark = [pytest.mark.tf, pytest.mark.slow]

LEGACY = pathlib.Path(__file__).resolve().parent.parent / "examples" / "legacy"
CIFAR_RECORD = 1 + 32 * 32 * 3


def run_legacy(program, *args, cwd, flags=()):
    """Run examples/legacy/PROGRAM with ARGS through `python -m tf1compat run FLAGS`; the
    completed process (it exited 0)."""
    result = subprocess.run([sys.executable, "-m", "tf1compat", "run", *flags,
                             str(LEGACY / program), *map(str, args)], cwd=cwd,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    return result


def on_tf_data(run):
    """Whether `tf1compat run` said that each of the run's pipelines runs on tf.data
    (one line each on stderr; at least one)."""
    said = [line for line in run.stderr.splitlines() if line.startswith("tf1compat run: ")]
    return bool(said) and all(" runs on tf.data" in line for line in said)


def said_nothing(run):
    """Whether `tf1compat run` said nothing about the run's pipelines (``--queues``)."""
    return not any(line.startswith("tf1compat run: ") for line in run.stderr.splitlines())


def read_examples(paths):
    return [example_to_dict(record) for path in paths for record in iter_records(path)]


def write_cifar_batches(folder, rng):
    """Five CIFAR-10 binary batches of 12 seeded records each."""
    folder.mkdir()
    for index in range(1, 6):
        records = rng.integers(0, 256, size=(12, CIFAR_RECORD), dtype=np.uint8)
        records[:, 0] %= 10
        (folder / f"data_batch_{index}.bin").write_bytes(records.tobytes())
    return folder


def write_images(folder, rng):
    folder.mkdir()
    images = [rng.integers(0, 256, size=(5 + i, 7, 3), dtype=np.uint8) for i in range(5)]
    for index, image in enumerate(images):
        (folder / f"photo-{index}.png").write_bytes(encode_png(image[None])[0])
    return images


def write_csv_parts(folder, rng):
    folder.mkdir()
    rows = []
    for part in range(3):
        values = [(part * 1000 + i, round(float(rng.random()), 2), int(rng.integers(0, 5)))
                  for i in range(int(rng.integers(5, 30)))]
        rows += values
        lines = ["id,weight,label"] + [f"{a},{b:.2f},{c}" for a, b, c in values]
        (folder / f"part-{part}.csv").write_text("\n".join(lines) + "\n")
    return rows


def write_class_folders(folder, rng, per_class=8):
    """PNG images in one folder per class; returns {file bytes: class index}."""
    sources = {}
    for class_index, name in enumerate(["circle", "square", "triangle"]):
        (folder / name).mkdir(parents=True)
        for i in range(per_class):
            image = rng.integers(0, 60, size=(12, 12 + i, 3), dtype=np.uint8)
            image[..., class_index] += 190
            png = encode_png(image[None])[0]
            (folder / name / f"{name}-{i}.png").write_bytes(png)
            sources[png] = class_index
    return sources


def run_slim_chain(work):
    """build_image_records -> slim_batches (also with --queues) -> slim_train ->
    slim_eval, in order."""
    data, train_dir = work / "records", work / "train"
    return {
        "build": run_legacy("build_image_records.py", f"--image_dir={work / 'photos'}",
                            f"--output_dir={data}", "--validation_count=4", cwd=work),
        "batches": run_legacy("slim_batches.py", f"--dataset_dir={data}", cwd=work),
        "batches --queues": run_legacy("slim_batches.py", f"--dataset_dir={data}", cwd=work,
                                       flags=["--queues"]),
        "train": run_legacy("slim_train.py", f"--dataset_dir={data}",
                            f"--train_dir={train_dir}", "--max_number_of_steps=8", cwd=work),
        "eval": run_legacy("slim_eval.py", f"--dataset_dir={data}",
                           f"--checkpoint_path={train_dir}", f"--eval_dir={work / 'eval'}",
                           cwd=work),
    }


@pytest.fixture(scope="module")
def started(tmp_path_factory):
    """Every program's run, two at a time in the background from the module's first
    test on (they are independent processes; CI has two cores). Maps a name to
    ``(its folder, what the test checks against, a future of its run)``; the readers'
    runs with ``--queues`` are ``NAME --queues``."""
    rng = np.random.default_rng(7)
    work = {name: tmp_path_factory.mktemp(name) for name in (
        "cifar", "images", "csv", "slim", "tutorial")}
    cifar_dir = write_cifar_batches(work["cifar"] / "cifar-10-batches-bin", rng)
    images = write_images(work["images"] / "photos", rng)
    rows = write_csv_parts(work["csv"] / "rows", rng)
    sources = write_class_folders(work["slim"] / "photos", rng)
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        yield {
            "slim": (work["slim"], sources, pool.submit(run_slim_chain, work["slim"])),
            "cifar": (work["cifar"], cifar_dir, pool.submit(
                run_legacy, "cifar10_to_tfrecord.py", f"--data_dir={cifar_dir}",
                f"--output={work['cifar'] / 'cifar10_train.tfrecord'}", cwd=work["cifar"])),
            **{name + suffix: (work[name], expected, pool.submit(
                run_legacy, program, *args, cwd=work[name], flags=suffix.split()))
               for name, expected, program, args in [
                   ("images", images, "whole_file_images.py",
                    [f"--image_dir={work['images'] / 'photos'}", "--size=4"]),
                   ("csv", rows, "csv_rows.py",
                    [f"--csv={work['csv'] / 'rows'}/*.csv", "--batch_size=7"])]
               for suffix in ("", " --queues")},
            "tutorial": (work["tutorial"], cifar_dir, pool.submit(
                run_legacy, "cifar10_tutorial/cifar10_train.py", f"--data_dir={cifar_dir}",
                f"--train_dir={work['tutorial'] / 'cifar10_train'}", "--max_steps=10",
                "--log_frequency=3", cwd=work["tutorial"])),
        }


@pytest.mark.timeout(900)
def test_cifar10_to_tfrecord_writes_every_source_record(started):
    work, cifar_dir, run = started["cifar"]
    output = work / "cifar10_train.tfrecord"
    assert run.result().stdout.splitlines()[-1] == f"wrote 60 records to {output}"
    examples = read_examples([output])
    expected = [(path, index, row) for path in sorted(cifar_dir.glob("data_batch_*.bin"))
                for index, row in enumerate(np.fromfile(path, np.uint8).reshape(-1,
                                                                                CIFAR_RECORD))]
    assert len(examples) == len(expected) == 60
    for example, (path, index, row) in zip(examples, expected, strict=True):
        assert example["image/class/label"].tolist() == [row[0]]
        assert example["image/raw"][0] == row[1:].reshape(3, 32, 32).transpose(1, 2, 0).tobytes()
        assert example["key"][0] == f"{path}:{index}".encode()


@pytest.mark.timeout(900)
def test_whole_file_images_prints_each_image_mean(started):
    _, images, run = started["images"]
    lines = [line.split(" ", 2) for line in run.result().stdout.splitlines()]
    assert [name for name, _, _ in lines] == [f"photo-{i}.png" for i in range(5)]
    assert [float(mean) for _, mean, _ in lines] == pytest.approx(
        [image.mean() for image in images], abs=1e-6)
    assert {shape for _, _, shape in lines} == {"(4, 4, 3)"}
    queued = started["images --queues"][2].result()
    assert queued.stdout == run.result().stdout
    assert on_tf_data(run.result()) and said_nothing(queued)


@pytest.mark.timeout(900)
def test_csv_rows_reads_every_row_once(started):
    _, rows, run = started["csv"]
    ids, weights, labels = zip(*rows, strict=True)
    assert run.result().stdout.split() == [
        "rows", str(len(rows)), "id_sum", str(sum(ids)), "weight_sum", f"{sum(weights):.2f}",
        "label_sum", str(sum(labels))]
    queued = started["csv --queues"][2].result()
    assert queued.stdout == run.result().stdout
    assert on_tf_data(run.result()) and said_nothing(queued)


@pytest.mark.timeout(900)
def test_slim_programs_convert_read_train_and_evaluate(started):
    work, sources, run = started["slim"]
    runs = run.result()
    outputs = {name: done.stdout for name, done in runs.items()}
    data = work / "records"
    assert (data / "labels.txt").read_text() == "0:circle\n1:square\n2:triangle\n"
    splits = {split: read_examples(sorted(data.glob(f"shapes_{split}-*-of-00002.tfrecord")))
              for split in ("train", "validation")}
    written = {e["image/encoded"][0]: int(e["image/class/label"][0])
               for split in splits.values() for e in split}
    assert written == sources  # every image once, file bytes kept, right class
    assert (len(splits["train"]), len(splits["validation"])) == (20, 4)

    train_counts = collections.Counter(int(e["image/class/label"][0]) for e in splits["train"])
    assert outputs["batches"].splitlines() == ["read 20 of 20 images, shape (16, 16, 3)"] + [
        f"{name} {train_counts[i]}" for i, name in enumerate(["circle", "square", "triangle"])
        if train_counts[i]]
    assert outputs["batches --queues"] == outputs["batches"]
    assert on_tf_data(runs["batches"]) and said_nothing(runs["batches --queues"])

    final_loss = float(outputs["train"].split("final loss ")[1].split()[0])
    assert math.isfinite(final_loss) and final_loss > 0
    assert (work / "train" / "model.ckpt-8.index").is_file()

    metrics = dict(line.split() for line in outputs["eval"].splitlines()[-2:])
    assert sorted(metrics) == ["Accuracy", "Recall_2"]
    assert all(0.0 <= float(value) <= 1.0 for value in metrics.values())


@pytest.mark.timeout(900)
def test_cifar10_tutorial_trains_with_monitored_training_session(started):
    work, _, run = started["tutorial"]
    losses = [float(line.split("loss = ")[1].split()[0])
              for line in run.result().stdout.splitlines() if line.startswith("step ")]
    assert len(losses) == 4 and all(math.isfinite(loss) for loss in losses)
    assert (work / "cifar10_train" / "model.ckpt-10.index").is_file()
    assert on_tf_data(run.result())      # its shuffle_batch: on tf.data by default


# ------------------------------------------------------------------ tf1compat check

def test_check_finds_nothing_unsupported_in_the_examples(capsys):
    assert cli.main(["check", str(LEGACY.parent)]) == 0
    last = capsys.readouterr().out.splitlines()[-1]
    assert last.endswith("file(s) checked: 0 unsupported name(s) in 0 file(s)")


def test_check_names_unsupported_contrib_and_removed_names_with_lines(tmp_path, capsys):
    program = tmp_path / "old.py"
    program.write_text(
        "import tensorflow as tf\n"
        "from tensorflow.contrib import quantize as q\n"
        "slim = tf.contrib.slim\n"
        "net = slim.fully_connected\n"
        "tf.contrib.quantize.create_training_graph(tf.get_default_graph())\n"
        "q.create_eval_graph()\n"
        "cell = tf.contrib.rnn.AttentionCellWrapper(None, 4)\n"
        "x = tf.estimator.Estimator\n"
        "tf.contrib.nosuch.thing()\n"
        "lstm = tf.contrib.rnn.LSTMCell(8)\n")   # not listed: Keras 2 (tf-keras) gives it
    (tmp_path / "py2.py").write_text("print 'hello'\n")
    (tmp_path / "fine.py").write_text("import tensorflow as tf\ntf.train.batch\n")
    assert cli.main(["check", str(tmp_path)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert [line.split(": ")[0:2] for line in out[:-1]] == [
        [f"{program}:2", "tf.contrib.quantize"],
        [f"{program}:5", "tf.contrib.quantize.create_training_graph"],
        [f"{program}:6", "tf.contrib.quantize.create_eval_graph"],
        [f"{program}:7", "tf.contrib.rnn.AttentionCellWrapper"],
        [f"{program}:8", "tf.estimator.Estimator"],
        [f"{program}:9", "tf.contrib.nosuch.thing"],
        [f"{tmp_path / 'py2.py'}:1", "cannot parse"]]
    assert "use tensorflow_model_optimization's quantization-aware training" in out[1]
    assert "(module 'tf' has no attribute 'estimator')" in out[4]
    assert "tf1compat run mode does not provide it" in out[5]
    assert out[-1] == ("3 file(s) checked: 6 unsupported name(s) in 1 file(s); "
                       "1 file(s) could not be read or parsed")


def test_check_reports_binary_and_syntax_error_files_as_unparsable_and_carries_on(
        tmp_path, capsys):
    (tmp_path / "a_binary.py").write_bytes(bytes(range(256)))
    (tmp_path / "b_typo.py").write_text("import tensorflow as tf\n\ndef f(:\n    pass\n")
    (tmp_path / "c_py2.py").write_text("import tensorflow as tf\nprint 'x'\n")
    (tmp_path / "d_old.py").write_text("import tensorflow as tf\ntf.contrib.quantize.x()\n")
    assert cli.main(["check", str(tmp_path)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0] == (f"{tmp_path / 'a_binary.py'}:1: cannot parse: "
                      "source code string cannot contain null bytes")
    assert out[1] == f"{tmp_path / 'b_typo.py'}:3: cannot parse: invalid syntax"
    assert out[2].startswith(f"{tmp_path / 'c_py2.py'}:2: cannot parse: Missing parentheses")
    assert out[3].startswith(f"{tmp_path / 'd_old.py'}:2: tf.contrib.quantize.x: no TensorFlow")
    assert not any("Python 2" in line or "ported first" in line for line in out)
    assert out[-1] == ("4 file(s) checked: 1 unsupported name(s) in 1 file(s); "
                       "3 file(s) could not be read or parsed")


def test_check_takes_contrib_constants_and_names_their_unsupported_classes(tmp_path, capsys):
    program = tmp_path / "modes.py"
    program.write_text("import tensorflow as tf\n"
                       "if mode == tf.contrib.learn.ModeKeys.TRAIN:\n"
                       "    tf.contrib.learn.ModeKeys.validate(mode)\n")
    assert cli.main(["check", str(program)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert [line.split(": ")[0:2] for line in out[:-1]] == [
        [f"{program}:3", "tf.contrib.learn.ModeKeys.validate"]]


def test_check_of_a_missing_path_exits_2(tmp_path, capsys):
    assert cli.main(["check", str(tmp_path / "gone")]) == 2
    assert f"{tmp_path / 'gone'}' does not exist" in capsys.readouterr().err


def test_examples_are_run_as_written_not_through_tf1compat_imports():
    for path in LEGACY.rglob("*.py"):
        source = path.read_text()
        assert "import tf1compat" not in source and "from tf1compat" not in source, path
        assert "import tensorflow as tf" in source, path
    assert os.path.isfile(LEGACY / "cifar10_tutorial" / "cifar10_input.py")
