"""The corpus runner and its data makers (corpus/), on programs written here: the
corpus's own programs are not in the repository (docs/corpus.md)."""

import gzip
import io
import struct
import textwrap

import numpy as np
import pytest

from corpus import run
from corpus.data import make_data


def _records(path):
    from tf1compat.tfrecord import iter_records

    return list(iter_records(str(path)))


def test_csv_rows_have_the_header_and_each_columns_kind(tmp_path):
    make_data(tmp_path, [{"recipe": "csv_rows", "path": "data/heart.csv", "rows": 7,
                          "header": ["a", "famhist", "label"],
                          "columns": ["float", ["Present", "Absent"], "int"]}])
    lines = (tmp_path / "data" / "heart.csv").read_text().splitlines()
    assert lines[0] == "a,famhist,label" and len(lines) == 8
    for line in lines[1:]:
        number, word, label = line.split(",")
        assert 0 <= float(number) <= 100 and word in ("Present", "Absent") and label in "01"


def test_csv_rows_split_on_their_delimiter(tmp_path):
    make_data(tmp_path, [{"recipe": "csv_rows", "path": "vec.txt", "rows": 2, "header": ["2", "3"],
                          "columns": [["<UNK>"], "float", "int", "int"], "delimiter": " "}])
    lines = (tmp_path / "vec.txt").read_text().splitlines()
    assert lines[0] == "2 3" and len(lines) == 3
    for line in lines[1:]:
        word, number, *labels = line.split(" ")
        assert word == "<UNK>" and 0 <= float(number) <= 100 and set(labels) <= {"0", "1"}


@pytest.mark.tf
def test_video_level_records_parse_as_youtube_8m_examples(tmp_path):
    import tensorflow as tf

    make_data(tmp_path, [{"recipe": "video_level_records", "path": "data/train0.tfrecord",
                          "count": 5, "classes": 7, "features": {"mean_rgb": 4, "mean_audio": 2}}])
    spec = {"id": tf.io.FixedLenFeature([], tf.string), "labels": tf.io.VarLenFeature(tf.int64),
            "mean_rgb": tf.io.FixedLenFeature([4], tf.float32),
            "mean_audio": tf.io.FixedLenFeature([2], tf.float32)}
    videos = [tf.io.parse_single_example(r, spec)
              for r in tf.data.TFRecordDataset(str(tmp_path / "data" / "train0.tfrecord"))]
    assert [v["id"].numpy() for v in videos] == [b"train0-%d" % i for i in range(5)]
    for video in videos:
        labels = video["labels"].values.numpy().tolist()
        assert 1 <= len(labels) <= 3 and labels == sorted(set(labels))
        assert all(0 <= label < 7 for label in labels)
        assert -2 <= video["mean_rgb"].numpy().min() and video["mean_audio"].numpy().max() <= 2


@pytest.mark.tf
def test_records_are_the_examples_tensorflow_parses(tmp_path):
    import tensorflow as tf

    make_data(tmp_path, [
        {"recipe": "raw_image_records", "path": "F:/data/cats.records", "shape": [4, 3, 2],
         "count": 12},
        {"recipe": "raw_image_records", "path": "ages.tfrecords", "shape": [5], "count": 3,
         "label": "bytes", "image_key": "image_raw"},
        {"recipe": "mixed_records", "path": "test.tfrecord", "count": 4}])
    cats = [tf.io.parse_single_example(r, {"image": tf.io.FixedLenFeature([], tf.string),
                                           "label": tf.io.FixedLenFeature([], tf.int64)})
            for r in tf.data.TFRecordDataset(str(tmp_path / "F:/data/cats.records"))]
    assert [int(c["label"]) for c in cats] == [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1]
    assert {len(c["image"].numpy()) for c in cats} == {4 * 3 * 2}
    ages = [tf.io.parse_single_example(r, {"image_raw": tf.io.FixedLenFeature([], tf.string),
                                           "label": tf.io.FixedLenFeature([], tf.string)})
            for r in tf.data.TFRecordDataset(str(tmp_path / "ages.tfrecords"))]
    assert [a["label"].numpy() for a in ages] == [b"age0", b"age1", b"age2"]
    mixed = [tf.io.parse_single_example(r, {"a": tf.io.FixedLenFeature([], tf.float32),
                                            "b": tf.io.FixedLenFeature([2], tf.int64),
                                            "c": tf.io.FixedLenFeature([], tf.string)})
             for r in tf.data.TFRecordDataset(str(tmp_path / "test.tfrecord"))]
    assert [m["b"].numpy().tolist() for m in mixed] == [[0, 0], [1, 2], [2, 4], [3, 6]]
    assert {len(m["c"].numpy()) for m in mixed} == {6}


def test_the_same_seed_writes_the_same_bytes_and_another_seed_others(tmp_path):
    spec = [{"recipe": "raw_image_records", "path": "x.tfrecords", "shape": [8], "count": 3}]
    for seed, folder in ((0, "a"), (0, "b"), (1, "c")):
        make_data(tmp_path / folder, spec, seed=seed)
    a, b, c = (_records(tmp_path / f / "x.tfrecords") for f in "abc")
    assert a == b and a != c


def test_mnist_idx_files_have_the_standard_headers(tmp_path):
    make_data(tmp_path, [{"recipe": "mnist_idx", "path": "MNIST_data", "train": 6, "test": 2}])
    for name, magic, shape in (("train-images-idx3-ubyte.gz", 2051, (6, 28, 28)),
                               ("train-labels-idx1-ubyte.gz", 2049, (6,)),
                               ("t10k-images-idx3-ubyte.gz", 2051, (2, 28, 28)),
                               ("t10k-labels-idx1-ubyte.gz", 2049, (2,))):
        data = gzip.decompress((tmp_path / "MNIST_data" / name).read_bytes())
        header = struct.unpack(f">{1 + len(shape)}I", data[:4 * (1 + len(shape))])
        assert header == (magic, *shape)
        assert len(data) == 4 * (1 + len(shape)) + int(np.prod(shape))


def test_jpeg_files_decode_to_their_size(tmp_path):
    from PIL import Image

    make_data(tmp_path, [{"recipe": "jpeg_files", "paths": ["data/a.jpg"], "size": [10, 20]}])
    image = Image.open(io.BytesIO((tmp_path / "data" / "a.jpg").read_bytes()))
    assert image.format == "JPEG" and image.size == (20, 10) and image.mode == "RGB"


def test_an_unknown_recipe_lists_the_valid_ones(tmp_path):
    with pytest.raises(ValueError, match=r"unknown data recipe 'tfrecords'; valid recipes: "
                                         r"cifar10_binary, cifar10_python, "
                                         r"cifar10_slim_records, csv_rows, jpeg_files, "
                                         r"mixed_records, mnist_idx, raw_image_records, "
                                         r"video_level_records$"):
        make_data(tmp_path, [{"recipe": "tfrecords"}])


def test_every_program_of_the_corpus_is_described_and_its_data_makeable(tmp_path):
    programs = run.load_programs()
    assert len(programs) >= 12
    assert len({p["name"] for p in programs}) == len(programs)
    for program in programs:
        assert {"name", "repository", "files", "entry", "exercises"} <= program.keys()
        for file in program["files"]:
            assert len(file["commit"]) == 40 and int(file["commit"], 16) >= 0
        assert any(f["path"].endswith(program["entry"]) for f in program["files"])
        for spec in program.get("data", []):
            assert spec["recipe"] in ("csv_rows", "raw_image_records", "mixed_records",
                                      "jpeg_files", "mnist_idx", "video_level_records")


def test_tensorflow_models_programs_are_described_by_folder_and_snapshot():
    programs = run.load_programs(run.PROGRAMS.with_name("models.json"))
    assert {p["name"] for p in programs} == {
        "models_slim_convert_cifar10", "models_slim_train_cifarnet", "models_slim_eval_cifarnet",
        "models_cifar10_train", "models_cifar10_eval"}
    for program in programs:
        assert program["repository"] == "tensorflow/models"
        assert program["folder"] in ("research/slim", "tutorials/image/cifar10")
        assert program["snapshot"] == "2018-05-17"
        for spec in program["data"]:
            assert spec["recipe"] in ("cifar10_python", "cifar10_binary", "cifar10_slim_records")
        for setup in program.get("setup", []):   # a training run of the same folder
            assert setup[0].endswith("_train.py") or setup[0] == "train_image_classifier.py"


def test_cifar10_recipes_write_the_same_images_in_each_format(tmp_path):
    import pickle
    import tarfile

    from tf1compat import cifar10

    make_data(tmp_path / "py", [{"recipe": "cifar10_python", "train": 10, "test": 5}], seed=3)
    make_data(tmp_path / "bin", [{"recipe": "cifar10_binary", "train": 10, "test": 5}], seed=3)
    make_data(tmp_path / "rec", [{"recipe": "cifar10_slim_records", "train": 10, "test": 5}],
              seed=3)
    for name, count in (("data_batch_1", 2), ("test_batch", 5)):
        with open(tmp_path / "py" / "cifar-10-batches-py" / name, "rb") as f:
            batch = pickle.load(f, encoding="bytes")
        images, labels = cifar10.read_batch_file(
            tmp_path / "bin" / "cifar-10-batches-bin" / f"{name}.bin")
        assert batch[b"data"].dtype == np.uint8 and batch[b"data"].shape == (count, 3072)
        np.testing.assert_array_equal(
            batch[b"data"].reshape(count, 3, 32, 32).transpose(0, 2, 3, 1), images)
        assert batch[b"labels"] == labels.tolist()
    with tarfile.open(tmp_path / "py" / "cifar-10-python.tar.gz") as tar:
        assert "cifar-10-batches-py/data_batch_5" in tar.getnames()
    with tarfile.open(tmp_path / "bin" / "cifar-10-binary.tar.gz") as tar:
        assert "cifar-10-batches-bin/test_batch.bin" in tar.getnames()
    assert len(_records(tmp_path / "rec" / "cifar10_train.tfrecord")) == 10
    assert len(_records(tmp_path / "rec" / "cifar10_test.tfrecord")) == 5
    assert (tmp_path / "rec" / "labels.txt").read_text().startswith("0:airplane\n")


TRACEBACK = """\
Traceback (most recent call last):
  File "{lib}/tensorflow/python/client/session.py", line 1400, in _do_call
    return fn(*args)
  File "{work}/train.py", line 29, in <module>
    print(sess.run(label_batch))
  File "{work}/helpers/input.py", line 7, in read
    raise ValueError("no files match './output2/*.tfrecords'")
ValueError: no files match './output2/*.tfrecords'
"""


def test_the_first_failing_line_is_the_innermost_frame_of_the_program(tmp_path):
    work = tmp_path / "work"
    (work / "helpers").mkdir(parents=True)
    stderr = TRACEBACK.format(lib=tmp_path / "site-packages", work=work)
    assert run.first_failing_line(stderr, work) == (
        "helpers/input.py:7: ValueError: no files match './output2/*.tfrecords'")
    assert run.first_failing_line(stderr, tmp_path / "elsewhere") == (
        "ValueError: no files match './output2/*.tfrecords'")
    assert run.first_failing_line("warming up\nKilled\n", work) == "Killed"
    assert run.first_failing_line("", work) == "(no output)"


def test_a_timed_out_run_counts_only_past_its_mark():
    assert run.classify(0, False, "done") == ("ok", "")
    assert run.classify(1, False, "boom") == ("fail", None)
    assert run.classify(-9, True, "Step 1, loss 2.3\nStep 2", r"Step \d+, loss") == (
        "stopped", "reached 'Step 1, loss', stopped by the time limit")
    status, detail = run.classify(-9, True, "loading data", r"Step \d+, loss")
    assert status == "timeout" and "before the program reached its training loop" in detail
    assert run.classify(-9, True, "Step 1, loss 2.3")[0] == "timeout"  # no mark: no claim


def test_the_table_counts_k_of_n_per_mode_and_lists_each_failure():
    outcomes = [run.Outcome("csv", "run", "ok", 5.2),
                run.Outcome("csv", "tf-data", "fail", 6.0, "train.py:3: KeyError: 'x'"),
                run.Outcome("lstm", "run", "stopped", 90.0, "reached 'Step 1', stopped by ..."),
                run.Outcome("lstm", "tf-data", "timeout", 90.0, "the time limit came ...")]
    table = run.format_table(["csv", "lstm"], outcomes, ("run", "tf-data")).splitlines()
    assert table[0].split() == ["program", "run", "tf-data"]
    assert table[2].split() == ["csv", "ok", "(5", "s)", "fail", "(6", "s)"]
    assert "run: 2/2 succeeded" in table and "tf-data: 0/2 succeeded" in table
    assert table[-3:] == ["csv [tf-data] fail: train.py:3: KeyError: 'x'",
                          "lstm [run] stopped: reached 'Step 1', stopped by ...",
                          "lstm [tf-data] timeout: the time limit came ..."]



def test_port_modes_table_leaves_programs_without_a_pipeline_out_of_verifys_count():
    outcomes = [run.Outcome("csv", "port", "ok", 30.0), run.Outcome("csv", "verify", "ok", 30.0),
                run.Outcome("csv", "plain", "ok", 8.0),
                run.Outcome("mnist", "port", "ok", 12.0),
                run.Outcome("mnist", "verify", "none", 12.0, "no queue pipeline: ..."),
                run.Outcome("mnist", "plain", "stopped", 90.0, "reached 'Step 1', ...")]
    table = run.format_table(["csv", "mnist"], outcomes, run.PORT_MODES).splitlines()
    assert table[0].split() == ["program", "port", "verify", "plain"]
    assert "port: 2/2 succeeded" in table and "verify: 1/1 succeeded" in table
    assert "plain: 2/2 succeeded" in table
    assert table[-1] == "mnist [plain] stopped: reached 'Step 1', ..."


CSV_PROGRAM = """
    import tensorflow as tf

    queue = tf.train.string_input_producer(["scores.csv"], num_epochs=1, shuffle=False)
    _, line = tf.TextLineReader().read(queue)
    a, b = tf.decode_csv(line, record_defaults=[[0.0], [0.0]])
    batch = tf.train.batch([a + b], batch_size=5)
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord)
        print("batch", sess.run(batch).shape)
        coord.request_stop()
        coord.join(threads)
"""


def _corpus(tmp_path, programs):
    source = tmp_path / "fetched"
    entries = []
    for name, code, extra in programs:
        (source / name).mkdir(parents=True)
        (source / name / "main.py").write_text(textwrap.dedent(code))
        entries.append({"name": name, "entry": "main.py", **extra})
    return source, entries


@pytest.mark.slow
@pytest.mark.timeout(240)
def test_programs_run_in_fresh_folders_with_their_data_and_a_time_limit(tmp_path):
    source, (csv_reader, broken, endless) = _corpus(tmp_path, [
        ("csv_reader", CSV_PROGRAM, {"data": [{"recipe": "csv_rows", "path": "scores.csv",
                                               "rows": 10, "columns": ["float", "float"]}]}),
        ("broken", "import json\njson.loads('{')\n", {}),
        ("endless", "import time\nprint('loading', flush=True)\nwhile True: time.sleep(1)\n",
         {"reached": r"Step \d", "timeout": 3})])
    out = tmp_path / "out"
    done = run.run_program(csv_reader, "run", source, out, timeout=120)
    assert (done.status, done.detail) == ("ok", "")
    assert "batch (5,)" in (out / "csv_reader" / "run" / "output.txt").read_text()
    assert (out / "csv_reader" / "run" / "scores.csv").is_file()
    assert not (source / "csv_reader" / "scores.csv").exists()  # the fetched folder stays as is
    failed = run.run_program(broken, "tf-data", source, out, timeout=120)
    assert failed.status == "fail" and failed.detail.startswith(
        "main.py:2: json.decoder.JSONDecodeError: Expecting property name")
    # never reaching its mark, whenever the limit comes: a timeout, the program killed
    endless_run = run.run_program(endless, "run", source, out, timeout=120)
    assert endless_run.status == "timeout" and endless_run.seconds >= 3
    assert "before the program reached its training loop" in endless_run.detail


# A program that starts a child and leaves it running when it ends: the child writes
# its pid, then sleeps for ten minutes; its output is discarded or, with "keep", the
# program's own (a reader of the program's pipes then waited for the child).
LEAVING_PROGRAM = """
import subprocess, sys, time
output = None if "keep" in sys.argv else subprocess.DEVNULL
subprocess.Popen([sys.executable, "-c", "import os, time; open('child.pid', 'w').write("
                  "str(os.getpid())); time.sleep(600)"], stdout=output, stderr=output)
while not (open("child.pid").read() if __import__("os").path.exists("child.pid") else ""):
    time.sleep(0.05)
print("started a background child")
"""


def _gone(pid):
    import os
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


@pytest.mark.slow
@pytest.mark.timeout(240)
@pytest.mark.parametrize("args", [[], ["keep"]], ids=["output-discarded", "output-kept"])
def test_a_program_leaving_a_background_child_has_it_killed_and_said(tmp_path, args):
    """The runner killed a program's process group only on a timeout: a program that
    left a background child got `ok` and the child kept running (and, holding the
    program's output, made the run wait for the time limit)."""
    import time
    source, (leaving,) = _corpus(tmp_path, [("leaving", LEAVING_PROGRAM,
                                             {"args": args, "timeout": 100})])
    out = tmp_path / "out"
    done = run.run_program(leaving, "run", source, out, timeout=120)
    pid = int((out / "leaving" / "run" / "child.pid").read_text())
    deadline = time.monotonic() + 10
    while not _gone(pid):
        assert time.monotonic() < deadline, f"the background child {pid} still runs"
        time.sleep(0.05)
    assert done.status == "ok" and done.seconds < 60
    assert done.detail == run.LEFT_RUNNING
    assert "started a background child" in (out / "leaving" / "run" / "output.txt").read_text()


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_setup_commands_run_before_the_program_in_its_folder(tmp_path):
    source, (evaluate, broken) = _corpus(tmp_path, [
        ("evaluate", "print('read', open('train/model.txt').read())\n",
         {"setup": [["train.py", "--steps=3"]]}),
        ("broken", "print('never')\n", {"setup": [["train.py", "--steps=x"]]})])
    for name in ("evaluate", "broken"):
        (source / name / "train.py").write_text(
            "import os, sys\nsteps = int(sys.argv[1].split('=')[1])\nos.makedirs('train')\n"
            "open('train/model.txt', 'w').write('%d steps' % steps)\n")
    out = tmp_path / "out"
    done = run.run_program(evaluate, "run", source, out, timeout=120)
    assert (done.status, done.detail) == ("ok", "")
    assert "read 3 steps" in (out / "evaluate" / "run" / "output.txt").read_text()
    assert "$ " in (out / "evaluate" / "run.setup-0.txt").read_text()
    failed = run.run_program(broken, "run", source, out, timeout=120)
    assert failed.status == "fail"
    assert failed.detail.startswith("setup train.py --steps=x failed: train.py:2: ValueError: "
                                    "invalid literal for int()")
    assert not (out / "broken" / "run" / "output.txt").exists()   # the program never ran


def test_the_command_names_unknown_programs_and_missing_folders(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        run.main(["--from", str(tmp_path), "--only", "nosuch"])
    assert exit_info.value.code == 2
    assert "unknown program(s) nosuch; the corpus has stanford_csv_reader" in \
        capsys.readouterr().err
    with pytest.raises(SystemExit):
        run.main(["--from", str(tmp_path), "--only", "stanford_csv_reader"])
    assert (f"{tmp_path} has no folder for stanford_csv_reader (fetch them as docs/corpus.md "
            "shows)") in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_port_mode_ports_verifies_and_runs_the_port_without_tf1compat(tmp_path):
    source, (csv_reader,) = _corpus(tmp_path, [
        ("csv_reader", CSV_PROGRAM, {"data": [{"recipe": "csv_rows", "path": "scores.csv",
                                               "rows": 10, "columns": ["float", "float"]}]})])
    out = tmp_path / "out"
    port, verify, plain = run.port_program(csv_reader, source, out, timeout=120)
    assert [(o.mode, o.status, o.detail) for o in (port, verify, plain)] == [
        ("port", "ok", ""), ("verify", "ok", ""), ("plain", "ok", "")]
    ported = out / "csv_reader" / "port" / "ported"
    assert "tf.data.TextLineDataset" in (ported / "main.py").read_text()
    assert "batch (5,)" in (out / "csv_reader" / "port" / "plain.txt").read_text()
    assert not (source / "csv_reader" / "scores.csv").exists()


def test_port_mode_reads_what_port_verify_printed():
    both = "verify: 1 of 1 pipeline(s) feed the same data\n"
    assert run.port_outcomes(both, 0, False) == (("ok", ""), ("ok", ""))
    finding = "not ported: main.py:5: tf.train.batch_join: cannot be ported: why\n"
    assert run.port_outcomes(finding + "verify: 0 of 0 pipeline(s) feed the same data\n", 1,
                             False) == (("fail", finding.strip()),
                                        ("fail", "no pipeline was ported, so none was verified"))
    assert run.port_outcomes("verify: 0 of 0 pipeline(s) feed the same data\n", 0, False) == (
        ("ok", ""), ("none", "no queue pipeline: nothing to verify"))
    different = ("verify: main.py:7: tf.train.batch: DIFFERENT data (in order)\n"
                 "verify: 0 of 1 pipeline(s) feed the same data\n")
    assert run.port_outcomes(different, 1, False)[1] == (
        "fail", "verify: main.py:7: tf.train.batch: DIFFERENT data (in order)")
    assert run.port_outcomes("tf1compat port: error: no such file\n", 2, False) == (
        ("fail", "tf1compat port: error: no such file"),) * 2
    assert run.port_outcomes("", -9, True)[1][0] == "timeout"


# tf_upgrade_v2's summary as it prints it (its detailed log goes to --reportfile)
UPGRADE_SUMMARY = """\
INFO line 3:4: Renamed 'tf.placeholder' to 'tf.compat.v1.placeholder'
TensorFlow 2.0 Upgrade Script
-----------------------------
Converted 1 files
Detected {count} issues that require attention
--------------------------------------------------------------------------------
{issues}

Make sure to read the detailed log 'report.txt'
"""


def test_upgrade_mode_reads_what_tf_upgrade_v2_printed(tmp_path):
    tree = tmp_path / "original"
    clean = UPGRADE_SUMMARY.format(count=0, issues="")
    assert run.upgrade_outcome(clean, 0, False, tree) == ("ok", "")
    issues = (f"File: {tree}/main.py\n"
              f"{tree}/main.py:4:4: ERROR: Using member tf.contrib.layers.fully_connected in "
              "deprecated module tf.contrib.\n"
              f"{tree}/main.py:9:2: WARNING: tf.nn.embedding_lookup requires manual check.\n")
    assert run.upgrade_outcome(UPGRADE_SUMMARY.format(count=2, issues=issues), 0, False,
                               tree) == ("fail", "2 issue(s) reported; the first: main.py:4:4: "
                                         "ERROR: Using member tf.contrib.layers."
                                         "fully_connected in deprecated module tf.contrib.")
    assert run.upgrade_outcome("Output directory 'x' must not already exist.\n", 1, False,
                               tree) == ("fail", "Output directory 'x' must not already exist.")
    assert run.upgrade_outcome("INFO line 3:4: Renamed\n", 0, False, tree)[0] == "fail"
    assert run.upgrade_outcome("", -9, True, tree) == (
        "timeout", "the time limit came before tf_upgrade_v2 ended")


@pytest.mark.parametrize("source, expected", [
    ('"""Doc."""\nfrom __future__ import print_function\nimport os\nimport tensorflow as tf\n'
     "x = 1  # kept\n",
     '"""Doc."""\nfrom __future__ import print_function\nimport os\nimport tensorflow as tf\n'
     "tf.compat.v1.disable_v2_behavior()\nx = 1  # kept\n"),
    ("import numpy as np, tensorflow\r\nprint(1)\r\n",
     "import numpy as np, tensorflow\r\ntensorflow.compat.v1.disable_v2_behavior()\r\n"
     "print(1)\r\n"),
    ("import tensorflow as tf", "import tensorflow as tf\ntf.compat.v1.disable_v2_behavior()\n"),
], ids=["after-docstring-and-imports", "plain-name-crlf", "last-line"])
def test_the_guide_line_goes_after_the_entry_files_import_tensorflow(tmp_path, source,
                                                                     expected):
    entry = tmp_path / "main.py"
    entry.write_bytes(source.encode())
    run.add_guide_line(entry)
    assert entry.read_bytes() == expected.encode()


def test_the_guide_line_needs_a_top_level_import_tensorflow(tmp_path):
    entry = tmp_path / "main.py"
    source = "from tensorflow import placeholder\ndef f():\n    import tensorflow as tf\n"
    entry.write_text(source)
    with pytest.raises(ValueError, match=r"^main.py has no top-level 'import tensorflow' to "
                                         r"add disable_v2_behavior\(\) after$"):
        run.add_guide_line(entry)
    assert entry.read_text() == source


CONTRIB_PROGRAM = """
    import tensorflow as tf

    x = tf.placeholder(tf.float32, [None, 2])
    y = tf.contrib.layers.fully_connected(x, 1)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        print("y", sess.run(y, {x: [[1.0, 2.0]]}).shape)
"""


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_upgrade_mode_converts_adds_the_guide_line_and_runs_without_tf1compat(tmp_path):
    source, (csv_reader, contrib) = _corpus(tmp_path, [
        ("csv_reader", CSV_PROGRAM, {"data": [{"recipe": "csv_rows", "path": "scores.csv",
                                               "rows": 10, "columns": ["float", "float"]}]}),
        ("contrib", CONTRIB_PROGRAM, {})])
    out = tmp_path / "out"
    upgrade, upgraded = run.upgrade_program(csv_reader, source, out, timeout=120)
    assert [(o.mode, o.status, o.detail) for o in (upgrade, upgraded)] == [
        ("upgrade", "ok", ""), ("upgraded", "ok", "")]
    written = (out / "csv_reader" / "upgrade" / "upgraded" / "main.py").read_text()
    # tf_upgrade_v2's names, the queues kept, and the guide's line after the import
    assert written.startswith("\nimport tensorflow as tf\ntf.compat.v1.disable_v2_behavior()\n")
    assert "tf.compat.v1.train.string_input_producer(" in written
    assert "batch (5,)" in (out / "csv_reader" / "upgrade" / "plain.txt").read_text()
    assert not (source / "csv_reader" / "scores.csv").exists()
    upgrade, upgraded = run.upgrade_program(contrib, source, out, timeout=120)
    assert (upgrade.status, upgraded.status) == ("fail", "fail")
    assert upgrade.detail.startswith(
        "1 issue(s) reported; the first: main.py:5:4: ERROR: Using member "
        "tf.contrib.layers.fully_connected in deprecated module tf.contrib.")
    assert upgraded.detail == (
        "main.py:6: AttributeError: module 'tensorflow' has no attribute 'contrib'")
