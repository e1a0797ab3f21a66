"""``tf1compat port``'s pipeline pass: queue input pipelines written again as tf.data,
proven by ``--verify`` to feed what the original fed, the port running under plain
``python`` with tf1compat not importable; what cannot be ported is a finding naming
the line and why.

Each program is written here, in the style of the TF1 programs it stands for, with
its own small seeded data."""

import pathlib
import re
import shutil

import numpy as np
import pytest
from legacy_programs import tf1compat_run, write_program
from port_programs import run_without_tf1compat

from tf1compat import cifar10, cli
from tf1compat.port.pipelines._harness import structure
from tf1compat.port.pipelines.runners import drop_runner_starts
from tf1compat.port.pipelines.verify import structure_mismatch, verify_pipelines
from tf1compat.port.program import port_program
from tf1compat.records.example import make_example
from tf1compat.records.tfrecord import write_records

# each runs the program up to four times (port, both sides of --verify, the port alone)
pytestmark = [pytest.mark.tf, pytest.mark.slow, pytest.mark.timeout(900)]

EXAMPLES = pathlib.Path(__file__).parents[1] / "examples" / "legacy"


def write_tfrecords(folder, rng, files=3, per_file=7):
    """TFRecord files of Examples {image: 4x4x3 bytes, label}; the labels' sum."""
    folder.mkdir(parents=True, exist_ok=True)
    total = 0
    for index in range(files):
        examples = []
        for _ in range(per_file):
            label = int(rng.integers(10))
            total += label
            examples.append(make_example({
                "image": rng.integers(0, 256, 48, dtype=np.uint8).tobytes(), "label": label}))
        write_records(str(folder / f"part-{index}.tfrecord"), examples)
    return total


def port(program, out, *args, verify=True):
    """``tf1compat port PROGRAM --out OUT [--verify] -- ARGS`` in-process: (status, out)."""
    argv = ["port", str(program), "--out", str(out), *(["--verify"] if verify else []),
            "--", *map(str, args)]
    return cli.main(argv)


def port_over_one_file(tmp_path, rng, monkeypatch, name, text):
    """``text`` written as ``src/NAME`` beside ``data.tfrecord`` (4 Examples), ported to
    ``out`` from ``src`` without --verify: (its exit status, the program)."""
    src = tmp_path / "src"
    program = write_program(src, name, text)
    write_tfrecords(src, rng, files=1, per_file=4)
    (src / "part-0.tfrecord").rename(src / "data.tfrecord")
    monkeypatch.chdir(src)
    return port(program, tmp_path / "out", verify=False), program


def assert_same_run(program, ported, *args, cwd):
    """The port prints, under plain python without tf1compat, what the original prints
    under tf1compat run."""
    original = tf1compat_run(program, *args, cwd=cwd)
    again = run_without_tf1compat(ported, *args, cwd=cwd)
    assert original.returncode == 0, original.stderr
    assert again.returncode == 0, again.stderr
    assert again.stdout == original.stdout
    return again.stdout


TFRECORD_SHUFFLE = '''\
"""TFRecordReader + parse_single_example + shuffle_batch for two epochs."""
import tensorflow as tf

tf.app.flags.DEFINE_string("data", "records/*.tfrecord", "the TFRecord files")
FLAGS = tf.app.flags.FLAGS


def main(_):
    filename_queue = tf.train.string_input_producer(tf.gfile.Glob(FLAGS.data), num_epochs=2)
    reader = tf.TFRecordReader()
    _, serialized = reader.read(filename_queue)
    features = tf.parse_single_example(serialized, features={
        "image": tf.FixedLenFeature([], tf.string),
        "label": tf.FixedLenFeature([], tf.int64)})
    image = tf.reshape(tf.decode_raw(features["image"], tf.uint8), [4, 4, 3])
    label = tf.cast(features["label"], tf.int32)
    images, labels = tf.train.shuffle_batch([image, label], batch_size=4, capacity=50,
                                            min_after_dequeue=10, num_threads=2,
                                            allow_smaller_final_batch=True)
    count, total = 0, 0
    with tf.Session() as sess:
        sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess=sess, coord=coord)
        try:
            while not coord.should_stop():
                batch_images, batch_labels = sess.run([images, labels])
                count += len(batch_labels)
                total += int(batch_labels.sum())
        except tf.errors.OutOfRangeError:
            print("done: %d examples, label sum %d" % (count, total))
        finally:
            coord.request_stop()
        coord.join(threads)


if __name__ == "__main__":
    tf.app.run()
'''


def test_tfrecord_shuffle_batch_with_epochs(tmp_path, rng, monkeypatch, capsys):
    src = tmp_path / "src"
    program = write_program(src, "train.py", TFRECORD_SHUFFLE)
    total = write_tfrecords(src / "records", rng)
    monkeypatch.chdir(src)
    assert port(program, tmp_path / "out") == 0
    out = capsys.readouterr().out
    assert "train.py:17: tf.train.shuffle_batch -> tf.data: " in out
    assert "verify: 1 of 1 pipeline(s) feed the same data" in out
    assert "pipelines EQUAL (unordered comparison): 42 examples on each side" in out
    ported = (tmp_path / "out" / "train.py").read_text()
    assert "input_producer(" not in ported and "shuffle_batch(" not in ported
    assert ("    files = tf.io.gfile.glob(FLAGS.data)\n"
            "    filenames = tf.data.Dataset.from_tensor_slices(files).shuffle(len(files))"
            ".repeat(2)\n"
            "    dataset = tf.data.TFRecordDataset(filenames)\n") in ported
    assert "    def parse(serialized):\n        features = tf.io.parse_single_example(" in ported
    assert "        return image, label\n" in ported
    assert ("    dataset = dataset.shuffle(10).batch(4).prefetch(tf.data.AUTOTUNE)\n"
            "    images, labels = tf.compat.v1.data.make_one_shot_iterator(dataset)"
            ".get_next()\n") in ported
    # the fixers' changes are reported at the lines the user wrote, not those of the
    # rewritten file, and none for the tf.data code the rewrite wrote
    assert "train.py:21: tf.Session -> tf.compat.v1.Session\n" in out
    # no queue runner is left to start; the Coordinator code stays and still works
    assert ("train.py:24: tf.train.start_queue_runners -> [] (every pipeline is tf.data: no "
            "queue runner to start)\n") in out
    assert "        threads = []\n" in ported and "        coord.join(threads)\n" in ported
    assert "tf.data.TFRecordDataset -> " not in out
    printed = assert_same_run(program, tmp_path / "out" / "train.py", cwd=src)
    assert printed == f"done: 42 examples, label sum {2 * total}\n"
    assert port(tmp_path / "out" / "train.py", tmp_path / "again", verify=False) == 0
    assert (tmp_path / "again" / "train.py").read_text() == ported   # the port is TF2 code



def test_verify_compares_the_batches_structure_not_only_their_arrays(tmp_path, rng,
                                                                     monkeypatch):
    """A port whose batches hold the same arrays nested otherwise ((image, (label,))
    where the original gives [image, label]) is not the same data to the program."""
    src = tmp_path / "src"
    program = write_program(src, "train.py", TFRECORD_SHUFFLE)
    write_tfrecords(src / "records", rng)
    monkeypatch.chdir(src)
    report = port_program(program, tmp_path / "out")
    ported = tmp_path / "out" / "train.py"
    text = ported.read_text()
    batched = "    dataset = dataset.shuffle(10).batch(4)"
    assert batched in text
    ported.write_text(text.replace(batched, "    dataset = dataset.map(lambda image, label: "
                                             "(image, (label,))).shuffle(10).batch(4)"))
    verification = verify_pipelines(report.pipelines, report.entry, report.ported_entry, (),
                                    report.root, report.out_root, report.program_files)
    [check] = verification.checks
    assert not verification.passed and not check.passed
    assert check.mismatch == ("the original's batches are (array, array), the port's "
                              "(array, (array,)): the program reads them differently")
    assert "train.py:17: tf.train.shuffle_batch: DIFFERENT structure: the original's" \
        in verification.lines()[0]


def test_the_structure_of_a_batch_is_its_keys_and_nesting():
    batch = {"image": np.zeros(2), "labels": [np.zeros(2), (np.ones(1),)]}
    assert structure(batch) == {"image": "array", "labels": ("array", ("array",))}
    assert structure([np.zeros(1), np.zeros(1)]) == structure((np.zeros(1), np.zeros(1)))
    assert structure_mismatch({"x": "array"}, {"x": "array"}) is None
    assert structure_mismatch({"x": "array"}, None) is None        # a side gave no batch
    assert structure_mismatch({"x": "array", "y": "array"}, {"x": "array", "z": "array"}) == (
        "the original's batches are {'x': array, 'y': array}, the port's "
        "{'x': array, 'z': array}: the program reads them differently")


SEEDED_AT_RANDOM = '''\
"""CSV files read in a shuffled order, TensorFlow seeded by --seed or, without it, by a
number drawn anew on each run (as pix2pix does)."""
import argparse
import random

import tensorflow as tf

parser = argparse.ArgumentParser()
parser.add_argument("--seed", type=int)
args = parser.parse_args()
if args.seed is None:
    args.seed = random.randint(0, 2**31 - 1)
tf.set_random_seed(args.seed)

files = tf.train.string_input_producer(["a.csv", "b.csv", "c.csv", "d.csv", "e.csv"],
                                       num_epochs=1)
reader = tf.TextLineReader()
_, line = reader.read(files)
number, = tf.decode_csv(line, record_defaults=[[0]])
batch = tf.train.batch([number], batch_size=2)
with tf.Session() as sess:
    sess.run(tf.local_variables_initializer())
    coord = tf.train.Coordinator()
    threads = tf.train.start_queue_runners(sess=sess, coord=coord)
    total = 0
    try:
        while True:
            total += int(sess.run(batch).sum())
    except tf.errors.OutOfRangeError:
        pass
    coord.request_stop()
    coord.join(threads)
print("total", total)
'''


def test_verify_compares_as_multisets_when_the_program_seeds_itself_anew(tmp_path,
                                                                          monkeypatch):
    """A seeded shuffle gives one order every run, TF1's RandomShuffle's, which the
    port's shuffle (tf.data's) does not give: verify compares it as multisets, saying
    why. A program that draws its seed on each run ran with another graph seed on each
    side: both sides report theirs and the note names them. With the same seed
    (--seed 5) the note says the orders differ by design; the same examples pass."""
    src = tmp_path / "src"
    program = write_program(src, "train.py", SEEDED_AT_RANDOM)
    for index, name in enumerate("abcde"):
        (src / f"{name}.csv").write_text(f"{10 * index}\n{10 * index + 1}\n")
    monkeypatch.chdir(src)
    report = port_program(program, tmp_path / "out")
    [pipeline] = report.pipelines
    assert pipeline.deterministic and pipeline.seeded
    run = (report.pipelines, report.entry, report.ported_entry)
    where = (report.root, report.out_root, report.program_files)
    verification = verify_pipelines(*run, (), *where)
    [check] = verification.checks
    assert verification.passed and not check.report.ordered
    assert check.report.legacy_count == check.report.reference_count == 10
    seeds = re.fullmatch(r"as multisets: the two runs were seeded differently \(original "
                         r"graph seed (\d+), port graph seed (\d+)\): the program seeds "
                         r"TensorFlow anew on each run, so its shuffled order is another on "
                         r"each run", check.note)
    assert seeds is not None and seeds[1] != seeds[2], check.note
    assert verification.lines()[0] == f"verify: train.py:20: tf.train.batch: same data " \
        f"({check.note})"
    assert "pipelines EQUAL (unordered comparison): 10 examples on each side" in \
        verification.lines()[1]

    verification = verify_pipelines(*run, ("--seed", "5"), *where)
    [check] = verification.checks
    assert verification.passed and not check.report.ordered
    assert check.note == ("as multisets: its order comes from a seeded shuffle, and for the "
                          "same seeds tf.data's shuffle gives another order than TF1's "
                          "RandomShuffle")
    assert check.report.legacy_count == check.report.reference_count == 10
    assert verification.lines()[:2] == [
        f"verify: train.py:20: tf.train.batch: same data ({check.note})",
        "  pipelines EQUAL (unordered comparison): 10 examples on each side"]



def test_the_queue_runners_start_goes_where_no_queue_is_left():
    original = ("import tensorflow as tf\n\ndef train(sess):\n"
                "    tf.train.start_queue_runners(sess)  # the runners\n\n"
                "def more(sess, coord):\n    threads = tf.train.start_queue_runners(sess, coord)\n"
                "    x = 1; tf.train.start_queue_runners(sess)\n    coord.join(threads)\n"
                "    queue_runners.start_queue_runners()\n")
    texts, changes = drop_runner_starts({pathlib.Path("p.py"): original}, {})
    assert texts[pathlib.Path("p.py")] == (
        "import tensorflow as tf\n\ndef train(sess):\n    pass\n\n"
        "def more(sess, coord):\n    threads = []\n    x = 1\n    coord.join(threads)\n"
        "    queue_runners.start_queue_runners()\n")
    assert [(c.line, c.replacement.split(" ")[0]) for c in changes] == [
        (4, "removed"), (7, "[]"), (8, "removed")]

CSV_WITH_A_TF1_DATASET = '''\
"""A CSV queue pipeline beside a dataset read by TF1's make_one_shot_iterator()."""
import tensorflow as tf

steps = tf.data.Dataset.range(3).make_one_shot_iterator().get_next()
queue = tf.train.string_input_producer(["data.csv"], num_epochs=1)
reader = tf.TextLineReader(skip_header_lines=1)
_, line = reader.read(queue)
a, b = tf.decode_csv(line, [[0], [0]])
xs, ys = tf.train.batch([a, b], batch_size=2, allow_smaller_final_batch=True)
with tf.Session() as sess:
    sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
    print("steps", [sess.run(steps) for _ in range(3)])
    coord = tf.train.Coordinator()
    threads = tf.train.start_queue_runners(sess=sess, coord=coord)
    try:
        while True:
            print(sess.run([xs, ys]))
    except tf.errors.OutOfRangeError:
        print("done")
    coord.request_stop()
    coord.join(threads)
'''


def test_a_file_with_tf1_dataset_members_ports_the_same_twice_and_its_port_stays(
        tmp_path, monkeypatch):
    """In a file that uses a member only TF1's datasets have, every tf.data dataset
    is tf.compat.v1's, the rewrite's too: the port of the port changes nothing."""
    src = tmp_path / "src"
    program = write_program(src, "train.py", CSV_WITH_A_TF1_DATASET)
    (src / "data.csv").write_text("a,b\n1,2\n3,4\n5,6\n")
    monkeypatch.chdir(src)
    first = port_program(program, tmp_path / "a")
    assert first.complete and len(first.pipelines) == 1
    ported = (tmp_path / "a" / "train.py").read_text()
    assert "filenames = tf.compat.v1.data.Dataset.from_tensor_slices([\"data.csv\"])\n" \
        in ported
    assert "tf.compat.v1.data.TextLineDataset(filename).skip(1)" in ported
    port_program(program, tmp_path / "b")
    assert (tmp_path / "b" / "train.py").read_text() == ported
    again = port_program(tmp_path / "a" / "train.py", tmp_path / "c")
    assert again.changes == () and again.findings == ()
    assert (tmp_path / "c" / "train.py").read_text() == ported
    assert_same_run(program, tmp_path / "a" / "train.py", cwd=src)

CIFAR_INPUT = '''\
"""CIFAR-10 binaries in the tutorial's shape: read_cifar10, distortions, a batching
helper shared by the training and the evaluation inputs."""
import os

import tensorflow as tf

IMAGE_SIZE = 24


def read_cifar10(filename_queue):
  class CIFAR10Record(object):
    pass
  result = CIFAR10Record()
  label_bytes = 1
  result.height, result.width, result.depth = 32, 32, 3
  image_bytes = result.height * result.width * result.depth
  record_bytes = label_bytes + image_bytes
  # Read a record, getting filenames from the filename_queue.
  reader = tf.FixedLengthRecordReader(record_bytes=record_bytes)
  result.key, value = reader.read(filename_queue)
  record_bytes = tf.decode_raw(value, tf.uint8)
  result.label = tf.cast(tf.strided_slice(record_bytes, [0], [label_bytes]), tf.int32)
  depth_major = tf.reshape(
      tf.strided_slice(record_bytes, [label_bytes], [label_bytes + image_bytes]),
      [result.depth, result.height, result.width])
  result.uint8image = tf.transpose(depth_major, [1, 2, 0])
  return result


def _generate_image_and_label_batch(image, label, min_queue_examples, batch_size, shuffle):
  num_preprocess_threads = 4
  if shuffle:
    images, label_batch = tf.train.shuffle_batch(
        [image, label], batch_size=batch_size, num_threads=num_preprocess_threads,
        capacity=min_queue_examples + 3 * batch_size, min_after_dequeue=min_queue_examples)
  else:
    images, label_batch = tf.train.batch(
        [image, label], batch_size=batch_size, num_threads=num_preprocess_threads,
        capacity=min_queue_examples + 3 * batch_size)
  return images, tf.reshape(label_batch, [batch_size])


def distorted_inputs(data_dir, batch_size):
  filenames = [os.path.join(data_dir, "data_batch_%d.bin" % i) for i in range(1, 6)]
  # Create a queue that produces the filenames to read.
  filename_queue = tf.train.string_input_producer(filenames)
  read_input = read_cifar10(filename_queue)
  reshaped_image = tf.cast(read_input.uint8image, tf.float32)
  distorted_image = tf.random_crop(reshaped_image, [IMAGE_SIZE, IMAGE_SIZE, 3])
  distorted_image = tf.image.random_flip_left_right(distorted_image)
  distorted_image = tf.image.random_brightness(distorted_image, max_delta=63)
  float_image = tf.image.per_image_standardization(distorted_image)
  float_image.set_shape([IMAGE_SIZE, IMAGE_SIZE, 3])
  read_input.label.set_shape([1])
  min_queue_examples = 40
  return _generate_image_and_label_batch(float_image, read_input.label,
                                         min_queue_examples, batch_size, shuffle=True)


def inputs(data_dir, batch_size):
  filenames = [os.path.join(data_dir, "test_batch.bin")]
  filename_queue = tf.train.string_input_producer(filenames)
  read_input = read_cifar10(filename_queue)
  reshaped_image = tf.cast(read_input.uint8image, tf.float32)
  resized_image = tf.image.resize_image_with_crop_or_pad(reshaped_image, IMAGE_SIZE,
                                                         IMAGE_SIZE)
  float_image = tf.image.per_image_standardization(resized_image)
  float_image.set_shape([IMAGE_SIZE, IMAGE_SIZE, 3])
  read_input.label.set_shape([1])
  return _generate_image_and_label_batch(float_image, read_input.label, 40, batch_size,
                                         shuffle=False)
'''
CIFAR_TRAIN = '''\
"""Trains on distorted_inputs() for a few steps with MonitoredTrainingSession."""
import numpy as np
import tensorflow as tf

import cifar_input

tf.app.flags.DEFINE_string("data_dir", "cifar-10-batches-bin", "the binary batches")
tf.app.flags.DEFINE_integer("max_steps", 3, "training steps")
FLAGS = tf.app.flags.FLAGS


def main(_):
  with tf.Graph().as_default():
    global_step = tf.train.get_or_create_global_step()
    images, labels = cifar_input.distorted_inputs(FLAGS.data_dir, 16)
    pool = tf.nn.max_pool(images, ksize=[1, 3, 3, 1], strides=[1, 2, 2, 1],
                          padding="SAME", name="pool1")
    weights = tf.get_variable("weights", [12 * 12 * 3, 10],
                              initializer=tf.zeros_initializer())
    logits = tf.matmul(tf.reshape(pool, [16, -1]), weights)
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
        labels=labels, logits=logits))
    train_op = tf.train.GradientDescentOptimizer(0.01).minimize(loss, global_step)
    losses = []
    with tf.train.MonitoredTrainingSession(
        hooks=[tf.train.StopAtStepHook(last_step=FLAGS.max_steps)]) as sess:
      while not sess.should_stop():
        losses.append(sess.run([train_op, loss])[1])
    print("steps %d, losses finite: %s" % (len(losses), np.all(np.isfinite(losses))))


if __name__ == "__main__":
  tf.app.run()
'''


def test_cifar10_tutorial_shape_helpers_take_the_record_and_the_dataset(tmp_path, monkeypatch,
                                                                         capsys):
    src = tmp_path / "src"
    program = write_program(src, "train.py", CIFAR_TRAIN)
    write_program(src, "cifar_input.py", CIFAR_INPUT)
    cifar10.make_synthetic(src, 100, 20)
    monkeypatch.chdir(src)
    assert port(program, tmp_path / "out") == 0
    out = capsys.readouterr().out
    assert "cifar_input.py:33: tf.train.shuffle_batch -> tf.data: 5 files, repeated forever" \
        in out
    assert "cifar_input.py:70: _generate_image_and_label_batch() -> tf.data, written like the " \
        "pipeline at cifar_input.py:33 " in out
    assert "verify: 1 of 1 pipeline(s) feed the same data" in out
    assert "not verified: written like the pipeline at" in out
    ported = (tmp_path / "out" / "cifar_input.py").read_text()
    assert "def read_cifar10(value):\n" in ported
    assert "reader.read" not in ported and "string_input_producer" not in ported
    # the distortions ran on 4 threads: the helper maps them after its shuffle, so it
    # takes the function too, where the example's label was
    assert "def _generate_image_and_label_batch(dataset, parse, min_queue_examples, " \
        "batch_size, shuffle):\n" in ported
    assert ("    dataset = (dataset.shuffle(min_queue_examples)\n"
            "               .map(parse, num_parallel_calls=tf.data.AUTOTUNE)\n"
            "               .batch(batch_size, drop_remainder=True)\n"
            "               .prefetch(tf.data.AUTOTUNE))\n") in ported
    assert ("    dataset = (dataset.map(parse, num_parallel_calls=tf.data.AUTOTUNE)\n"
            "               .batch(batch_size, drop_remainder=True)\n"
            "               .prefetch(tf.data.AUTOTUNE))\n") in ported
    assert ported.count("tf.data.FixedLengthRecordDataset(filename_dataset, "
                        "record_bytes=3073)") == 2
    assert ported.count("    return float_image, read_input.label\n\n") == 2
    assert "dataset = dataset.map(" not in ported
    assert ("  return _generate_image_and_label_batch(dataset, parse,\n"
            "                                         min_queue_examples, batch_size, "
            "shuffle=True)\n") in ported
    assert "  return _generate_image_and_label_batch(dataset, parse, 40, batch_size,\n" \
        in ported
    run = run_without_tf1compat(tmp_path / "out" / "train.py", cwd=src)
    assert run.returncode == 0, run.stderr
    assert run.stdout == "steps 3, losses finite: True\n"


# the CIFAR-10 tutorial's flags and read_cifar10, for the programs below
CIFAR_READ = '''\
import os

import tensorflow as tf

tf.app.flags.DEFINE_string("data_dir", "cifar-10-batches-bin", "the binary batches")
FLAGS = tf.app.flags.FLAGS


def read_cifar10(filename_queue):
  reader = tf.FixedLengthRecordReader(record_bytes=1 + 32 * 32 * 3)
  _, value = reader.read(filename_queue)
  record = tf.decode_raw(value, tf.uint8)
  label = tf.cast(tf.strided_slice(record, [0], [1]), tf.int32)
  depth_major = tf.reshape(tf.strided_slice(record, [1], [3073]), [3, 32, 32])
  return tf.transpose(depth_major, [1, 2, 0]), label
'''

CIFAR_DISTORTED = '''\
"""The CIFAR-10 tutorial's distorted_inputs in one function, a few steps of it."""
''' + CIFAR_READ + '''

def distorted_inputs(data_dir, batch_size):
  filenames = [os.path.join(data_dir, "data_batch_%d.bin" % i) for i in range(1, 6)]
  filename_queue = tf.train.string_input_producer(filenames)
  uint8image, label = read_cifar10(filename_queue)
  reshaped_image = tf.cast(uint8image, tf.float32)
  distorted_image = tf.random_crop(reshaped_image, [24, 24, 3])
  distorted_image = tf.image.random_flip_left_right(distorted_image)
  float_image = tf.image.per_image_standardization(distorted_image)
  float_image.set_shape([24, 24, 3])
  label.set_shape([1])
  min_queue_examples = int(100 * 0.4)
  print("Filling queue with %d CIFAR images before starting to train." % min_queue_examples)
  images, label_batch = tf.train.shuffle_batch(
      [float_image, label], batch_size=batch_size, num_threads=THREADS,
      capacity=min_queue_examples + 3 * batch_size, min_after_dequeue=min_queue_examples)
  return images, tf.reshape(label_batch, [batch_size])


def main(_):
  images, labels = distorted_inputs(FLAGS.data_dir, 16)
  with tf.Session() as sess:
    coord = tf.train.Coordinator()
    threads = tf.train.start_queue_runners(sess=sess, coord=coord)
    for _ in range(3):
      batch_images, batch_labels = sess.run([images, labels])
      print(batch_images.shape, batch_labels.shape)
    coord.request_stop()
    coord.join(threads)


if __name__ == "__main__":
  tf.app.run()
'''


@pytest.mark.parametrize("threads", [4, 1])
def test_cifar10_distortions_on_threads_are_mapped_after_the_shuffle_buffer(
        tmp_path, monkeypatch, capsys, threads):
    """The tutorial's random distortions, which TF1 ran on several threads (drawn in no
    fixed order), are mapped after the shuffle buffer, which then holds the 3,073-byte
    records rather than the distorted float images (as the hand-written TF2 port
    does); the program's own lines stay where they were. On one thread (TF1's order of
    draws) the map stays before the shuffle. Either way --verify finds the same
    examples (each random op is the same fixed draw on both sides, whichever example
    it meets), the port runs under plain python and its port changes nothing."""
    src = tmp_path / "src"
    program = write_program(src, "train.py",
                            CIFAR_DISTORTED.replace("THREADS", str(threads)))
    cifar10.make_synthetic(src, 100, 20)
    monkeypatch.chdir(src)
    assert port(program, tmp_path / "out") == 0
    out = capsys.readouterr().out
    assert "verify: 1 of 1 pipeline(s) feed the same data" in out
    ported = (tmp_path / "out" / "train.py").read_text()
    kept = ('  min_queue_examples = int(100 * 0.4)\n'
            '  print("Filling queue with %d CIFAR images before starting to train." % '
            'min_queue_examples)\n')
    parse = ("    float_image.set_shape([24, 24, 3])\n"
             "    label.set_shape([1])\n"
             "    return float_image, label\n\n")
    if threads > 1:
        assert "FixedLengthRecordDataset(record_bytes=3073) -> shuffle(buffer 40, " \
            "unseeded) -> map(" in out
        assert parse + kept + (
            "  dataset = (dataset.shuffle(min_queue_examples)\n"
            "             .map(parse, num_parallel_calls=tf.data.AUTOTUNE)\n"
            "             .batch(batch_size, drop_remainder=True)\n"
            "             .prefetch(tf.data.AUTOTUNE))\n") in ported
        assert "dataset = dataset.map(" not in ported
    else:
        assert "in order: stateful" in out and ") -> shuffle(buffer 40, unseeded) -> " \
            "batch(16, drop remainder)" in out
        assert parse + "  dataset = dataset.map(parse)\n" + kept + (
            "  dataset = (dataset.shuffle(min_queue_examples)\n"
            "             .batch(batch_size, drop_remainder=True)\n"
            "             .prefetch(tf.data.AUTOTUNE))\n") in ported
    printed = assert_same_run(program, tmp_path / "out" / "train.py", cwd=src)
    assert printed.endswith("(16, 24, 24, 3) (16,)\n" * 3)
    assert port(tmp_path / "out" / "train.py", tmp_path / "again", verify=False) == 0
    assert (tmp_path / "again" / "train.py").read_text() == ported


CIFAR_TWO_THROUGH_ONE_HELPER = '''\
"""Training and test batches of CIFAR-10 through one batching helper."""
''' + CIFAR_READ + '''

def batched(example, batch_size):
  return tf.train.shuffle_batch([example], batch_size=batch_size, num_threads=4,
                                capacity=40 + 3 * batch_size, min_after_dequeue=40)


def distorted(data_dir, batch_size):
  filenames = [os.path.join(data_dir, "data_batch_%d.bin" % i) for i in range(1, 6)]
  uint8image, _ = read_cifar10(tf.train.string_input_producer(filenames))
  image = tf.random_crop(tf.cast(uint8image, tf.float32), [24, 24, 3])
  image = tf.image.random_flip_left_right(image)
  image.set_shape([24, 24, 3])
  return batched(image, batch_size)


def test_set(data_dir, batch_size):
  filenames = [os.path.join(data_dir, "test_batch.bin")]
TEST_SET
  return batched(example, batch_size)


def main(_):
  train = distorted(FLAGS.data_dir, 16)
  test = test_set(FLAGS.data_dir, 8)
  with tf.Session() as sess:
    coord = tf.train.Coordinator()
    threads = tf.train.start_queue_runners(sess=sess, coord=coord)
    for batch in sess.run([train, test]):
      print(batch.shape, batch.dtype)
    coord.request_stop()
    coord.join(threads)


if __name__ == "__main__":
  tf.app.run()
'''

TEST_SETS = {
    "images": ("  filename_queue = tf.train.string_input_producer(filenames)\n"
               "  example, _ = read_cifar10(filename_queue)\n"
               "  example.set_shape([32, 32, 3])", "uint8 (32, 32, 3)", "(8, 32, 32, 3) uint8"),
    "records": ("  reader = tf.FixedLengthRecordReader(record_bytes=1 + 32 * 32 * 3)\n"
                "  _, example = reader.read(tf.train.string_input_producer(filenames))",
                "string ()", "(8,) object"),
}


@pytest.mark.parametrize("test_set", sorted(TEST_SETS))
def test_two_pipelines_through_one_batching_helper_are_each_ported_and_verified(
        tmp_path, monkeypatch, capsys, test_set):
    """A batching helper called for distorted training images (a map of random ops on
    four threads) and for the test set: both pipelines are ported, and --verify reads
    each (both made their iterator at the helper's one line) from the call that made
    it. When the test set's records are its examples, the helper cannot map after its
    shuffle for both callers, so each caller maps before it, in TF1's order. The
    reading function's label, dropped (``_``), is computed and dropped in the map. A
    producer made inside the call that reads its queue (the reading helper's, the
    read's) is ported as one assigned to a name."""
    body, items, printed = TEST_SETS[test_set]
    src = tmp_path / "src"
    program = write_program(src, "train.py", CIFAR_TWO_THROUGH_ONE_HELPER.replace(
        "TEST_SET", body))
    cifar10.make_synthetic(src, 100, 20)
    monkeypatch.chdir(src)
    assert port(program, tmp_path / "out") == 0
    out = capsys.readouterr().out
    checks = [block for block in out.split("\nverify: ")[1:]]
    assert len(checks) == 3 and checks[2] == "2 of 2 pipeline(s) feed the same data\n", out
    assert "192 examples on each side\n  items:\n    0: float32 (24, 24, 3)\n" in checks[0]
    assert f"40 examples on each side\n  items:\n    0: {items}" in checks[1]
    ported = (tmp_path / "out" / "train.py").read_text()
    helper = ported[ported.index("def batched("):ported.index("def distorted(")]
    note = "mapped before the shuffle, in TF1's order: mapping after it, in the batching " \
        "helper, failed (its helper maps the function it is given, and this pipeline's " \
        "records are its examples"
    if test_set == "images":
        assert "def batched(dataset, parse, batch_size):" in helper
        assert ".map(parse, num_parallel_calls=tf.data.AUTOTUNE)" in helper and note not in out
    else:
        assert "def batched(examples, batch_size):" in helper and ".map(" not in helper
        assert out.count(note) == 1
    assert "uint8image, _ = read_cifar10(value)" in ported and "string_input_producer" \
        not in ported
    lines = assert_same_run(program, tmp_path / "out" / "train.py", cwd=src)
    assert lines == f"(16, 24, 24, 3) float32\n{printed}\n"


SLICES = '''\
"""Files listed with their labels in a text file, sliced by slice_input_producer."""
import tensorflow as tf


def read_labeled_list(path):
    names, labels = [], []
    with open(path) as f:
        for line in f:
            name, label = line.split()
            names.append(name)
            labels.append(int(label))
    return names, labels


def read_from_disk(input_queue):
    pixels = tf.decode_raw(tf.read_file(input_queue[0]), tf.uint8)
    return tf.reshape(pixels, [2, 2, 3]), input_queue[1]


name_list, label_list = read_labeled_list("labels.txt")
names = tf.convert_to_tensor(name_list, dtype=tf.string)
labels = tf.convert_to_tensor(label_list, dtype=tf.int32)
SLICED
image = tf.cast(image, tf.float32) / 255.0
image_batch, label_batch = tf.train.batch([image, label], BATCHING)
sess = tf.Session()
sess.run(tf.local_variables_initializer())
coord = tf.train.Coordinator()
threads = tf.train.start_queue_runners(sess=sess, coord=coord)
total = 0
try:
    for _ in range(STEPS):
        images_out, labels_out = sess.run([image_batch, label_batch])
        total += int(labels_out.sum())
    print("steps done", images_out.shape, labels_out.dtype)
except tf.errors.OutOfRangeError:
    print("label sum", total)
coord.request_stop()
coord.join(threads)
sess.close()
'''

SLICINGS = {   # the slices, their batching, the steps run; the map function written
    "one name, shuffled, endless": (
        "input_queue = tf.train.slice_input_producer([names, labels])\n"
        "image, label = read_from_disk(input_queue)", "batch_size=4", "3",
        "def parse(*input_queue):", "(tf.data.Dataset.from_tensor_slices((names, labels))\n"
        "           .shuffle(tf.shape(names, out_type=tf.int64)[0])\n"
        "           .repeat())", "as multisets", "steps done (4, 2, 2, 3) int32\n"),
    "unpacked, in order, one epoch": (
        "path, label = tf.train.slice_input_producer([names, labels], num_epochs=1,\n"
        "                                            shuffle=False)\n"
        "image, _ = read_from_disk([path, label])", "batch_size=5, allow_smaller_final_batch=True",
        "100", "def parse(path, label):",
        "dataset = tf.data.Dataset.from_tensor_slices((names, labels))\n", "in order",
        None),
}


@pytest.mark.parametrize("slicing", sorted(SLICINGS))
def test_slice_input_producer_becomes_a_dataset_of_the_slices(tmp_path, rng, monkeypatch,
                                                              capsys, slicing):
    """A file list and its labels sliced by slice_input_producer (its slices held by one
    name and indexed in a reading function, or unpacked) become
    Dataset.from_tensor_slices of the same tensors, shuffled and repeated as the
    producer was, the example's statements the map function (taking the slices as
    they were named); --verify compares in order where TF1 read in order."""
    sliced, batching, steps, signature, dataset, compared, printed = SLICINGS[slicing]
    src = tmp_path / "src"
    src.mkdir()
    listing, total = [], 0
    for index in range(12):
        (src / f"{index}.raw").write_bytes(rng.integers(0, 256, 12, dtype=np.uint8).tobytes())
        listing.append(f"{index}.raw {index % 3}\n")
        total += index % 3
    (src / "labels.txt").write_text("".join(listing))
    program = write_program(src, "train.py", SLICES.replace("SLICED", sliced).replace(
        "BATCHING", batching).replace("STEPS", steps))
    monkeypatch.chdir(src)
    assert port(program, tmp_path / "out") == 0
    out = capsys.readouterr().out
    assert f"same data ({compared}" in out and "verify: 1 of 1 pipeline(s)" in out, out
    ported = (tmp_path / "out" / "train.py").read_text()
    assert signature in ported and dataset in ported and "slice_input_producer(" not in ported
    lines = assert_same_run(program, tmp_path / "out" / "train.py", cwd=src)
    assert lines == (printed or f"label sum {total}\n")
    assert port(tmp_path / "out" / "train.py", tmp_path / "again", verify=False) == 0
    assert (tmp_path / "again" / "train.py").read_text() == ported


def test_examples_fetched_beside_the_batch_of_their_read_stay_queues(tmp_path, rng,
                                                                     monkeypatch, capsys):
    """A sess.run fetching a batch and a value of one example of the same read: neither
    pipeline is ported (the fetched examples' own port moved the batching call into its
    map function, a queue tf.data cannot hold: ValueError under plain python), and the
    port, still queue code, prints what the original prints."""
    status, program = port_over_one_file(tmp_path, rng, monkeypatch, "both.py", """
        import tensorflow as tf
        queue = tf.train.string_input_producer(["data.tfrecord"])  # endless: the runner
        reader = tf.TFRecordReader()                             # never takes all records
        _, record = reader.read(queue)
        length = tf.strings.length(record)
        lengths = tf.train.batch([length], batch_size=2)
        sess = tf.Session()
        tf.train.start_queue_runners(sess)
        print(sess.run([lengths, length + 1])[0].shape)
    """)
    assert status == 1
    out = capsys.readouterr().out
    assert ("both.py:5: reader.read: its examples are fetched beside the batch of the same "
            "read (tf.train.batch at both.py:7); tf.data gives one reader's examples to one "
            "iterator") in out
    assert "both.py:10: tf.train.batch: op 'add' (AddV2) uses an example outside" in out
    assert "tf.data" not in (tmp_path / "out" / "both.py").read_text()
    assert assert_same_run(program, tmp_path / "out" / "both.py", cwd=program.parent) == "(2,)\n"


def test_a_pipeline_of_other_values_is_left_with_a_finding(tmp_path, monkeypatch, capsys):
    program = write_program(tmp_path / "src", "counts.py", """
        import tensorflow as tf
        queue = tf.train.input_producer(tf.range(6), shuffle=False, num_epochs=1)
        batch = tf.train.batch([queue.dequeue()], batch_size=2)
        with tf.Session() as sess:
            sess.run(tf.local_variables_initializer())
            tf.train.start_queue_runners(sess)
            print(sess.run(batch))
    """)
    monkeypatch.chdir(tmp_path / "src")
    assert port(program, tmp_path / "out", verify=False) == 1
    assert ("counts.py:4: tf.train.batch: a pipeline with no reader is ported from "
            "slice_input_producer's slices only (not from input_producer, "
            "range_input_producer or values the program enqueues, nor into a prefetch_queue) "
            "yet") in capsys.readouterr().out
    run = run_without_tf1compat(tmp_path / "out" / "counts.py", cwd=tmp_path / "src")
    assert run.returncode == 0 and run.stdout == "[0 1]\n", run.stderr   # still queues


def test_example_csv_rows(tmp_path, monkeypatch, capsys):
    """The repository's example: TextLineReader + decode_csv + batch with two threads."""
    src = tmp_path / "src"
    src.mkdir()
    shutil.copy(EXAMPLES / "csv_rows.py", src / "csv_rows.py")
    monkeypatch.chdir(src)
    assert port(src / "csv_rows.py", tmp_path / "csv") == 0
    out = capsys.readouterr().out
    assert "pipelines EQUAL (unordered comparison): 50 examples on each side" in out
    ported = (tmp_path / "csv" / "csv_rows.py").read_text()
    assert "  dataset = filenames.flat_map(lambda filename: tf.data.TextLineDataset(filename)" \
        ".skip(1))\n" in ported
    assert_same_run(src / "csv_rows.py", tmp_path / "csv" / "csv_rows.py", cwd=src)


def test_example_whole_file_images(tmp_path, monkeypatch, capsys):
    """The repository's example: WholeFileReader + decode_png, the file names batched."""
    src = tmp_path / "src"
    src.mkdir()
    shutil.copy(EXAMPLES / "whole_file_images.py", src / "whole_file_images.py")
    monkeypatch.chdir(src)
    (src / "images").mkdir()
    rng = np.random.default_rng(5)
    for index in range(6):
        pixels = rng.integers(0, 256, (1, 8 + index, 10, 3), dtype=np.uint8)
        (src / "images" / f"img-{index:02d}.png").write_bytes(cifar10.encode_png(pixels)[0])
    assert port(src / "whole_file_images.py", tmp_path / "images", "--image_dir=images") == 0
    out = capsys.readouterr().out
    assert "pipelines EQUAL (ordered comparison): 6 examples on each side" in out
    ported = (tmp_path / "images" / "whole_file_images.py").read_text()
    assert ("  filename_dataset = tf.data.Dataset.from_tensor_slices(filenames)\n"
            "  dataset = filename_dataset.map(lambda filename: (filename, "
            "tf.io.read_file(filename)))\n") in ported
    assert "  def parse(key, contents):\n" in ported
    assert_same_run(src / "whole_file_images.py", tmp_path / "images" / "whole_file_images.py",
                    "--image_dir=images", cwd=src)


def test_slim_provider_batch_and_prefetch_queue(tmp_path, monkeypatch, capsys):
    src = tmp_path / "src"
    src.mkdir()
    for name in ("slim_batches.py", "shapes.py", "model.py", "build_image_records.py"):
        shutil.copy(EXAMPLES / name, src / name)
    from test_examples_legacy import write_class_folders
    write_class_folders(src / "photos", np.random.default_rng(3))
    built = tf1compat_run(src / "build_image_records.py", "--image_dir=photos",
                          "--output_dir=records", "--validation_count=4", cwd=src)
    assert built.returncode == 0, built.stderr
    monkeypatch.chdir(src)
    assert port(src / "slim_batches.py", tmp_path / "out", "--dataset_dir=records") == 0
    out = capsys.readouterr().out
    assert "slim_batches.py:36: slim.prefetch_queue -> tf.data: 2 files, 1 epoch" in out
    assert "verify: 1 of 1 pipeline(s) feed the same data" in out
    ported = (tmp_path / "out" / "slim_batches.py").read_text()
    assert ("    filenames = tf.data.Dataset.list_files(dataset.data_sources, shuffle=False)\n"
            "    records = filenames.interleave(tf.data.TFRecordDataset, cycle_length=2)\n"
            ) in ported
    assert ("    def parse(record):\n"
            '      image, label = dataset.decoder.decode(record, ["image", "label"])\n'
            "      return model.preprocess(image), label\n") in ported
    assert ("    batch_queue = tf.compat.v1.data.make_one_shot_iterator(records.prefetch(2))\n"
            "    images, labels = batch_queue.get_next()\n") in ported
    assert_same_run(src / "slim_batches.py", tmp_path / "out" / "slim_batches.py",
                    "--dataset_dir=records", cwd=src)


SUPERVISOR_TWO_PIPELINES = '''\
"""A Supervisor trains on one pipeline (endless, shuffled) and scores on another (one
epoch, in order), as the era's MNIST-from-TFRecords programs did."""
import tensorflow as tf

FEATURES = {"image": tf.FixedLenFeature([], tf.string),
            "label": tf.FixedLenFeature([], tf.int64)}


def read_and_decode(filename_queue):
    reader = tf.TFRecordReader()
    _, serialized_example = reader.read(filename_queue)
    features = tf.parse_single_example(serialized_example, features=FEATURES)
    image = tf.cast(tf.decode_raw(features["image"], tf.uint8), tf.float32) / 255.0
    image.set_shape([48])
    return image, tf.cast(features["label"], tf.int32)


def main(_):
    train_queue = tf.train.string_input_producer(tf.gfile.Glob("train/*.tfrecord"))
    image, label = read_and_decode(train_queue)
    train_images, train_labels = tf.train.shuffle_batch(
        [image, label], batch_size=5, capacity=40, min_after_dequeue=20)
    test_queue = tf.train.string_input_producer(["test/part-0.tfrecord"], num_epochs=1,
                                                shuffle=False)
    test_image, test_label = read_and_decode(test_queue)
    test_images, test_labels = tf.train.batch([test_image, test_label], batch_size=4,
                                              allow_smaller_final_batch=True)
    weights = tf.get_variable("weights", [48, 10], initializer=tf.zeros_initializer())
    loss = tf.losses.sparse_softmax_cross_entropy(train_labels, tf.matmul(train_images, weights))
    step = tf.train.get_or_create_global_step()
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=step)
    seen = tf.shape(tf.matmul(test_images, weights))[0]
    supervisor = tf.train.Supervisor(logdir="logs", save_model_secs=0, save_summaries_secs=0)
    with supervisor.managed_session() as sess:
        for _ in range(4):
            sess.run(train)
        scored = 0
        try:
            while True:
                scored += sess.run(seen)
        except tf.errors.OutOfRangeError:
            print("trained %d steps, scored %d examples" % (sess.run(step), scored))


if __name__ == "__main__":
    tf.app.run()
'''


def test_supervisor_with_a_train_and_a_test_pipeline(tmp_path, rng, monkeypatch, capsys):
    src = tmp_path / "src"
    program = write_program(src, "train.py", SUPERVISOR_TWO_PIPELINES)
    write_tfrecords(src / "train", rng)
    write_tfrecords(src / "test", rng, files=1, per_file=9)
    monkeypatch.chdir(src)
    assert port(program, tmp_path / "out") == 0
    out = capsys.readouterr().out
    assert "train.py:21: tf.train.shuffle_batch -> tf.data: 3 files, repeated forever" in out
    assert "train.py:26: tf.train.batch -> tf.data: 1 file, 1 epoch, in order" in out
    assert ("pipelines EQUAL but for the last partial batch (unordered comparison): 40 "
            "examples on each side") in out
    assert "pipelines EQUAL (ordered comparison): 9 examples on each side" in out
    assert "verify: 2 of 2 pipeline(s) feed the same data" in out
    ported = (tmp_path / "out" / "train.py").read_text()
    assert "def read_and_decode(serialized_example):\n" in ported
    assert ("    test_dataset = tf.data.TFRecordDataset([\"test/part-0.tfrecord\"])\n"
            "    test_dataset = test_dataset.map(read_and_decode, num_parallel_calls="
            "tf.data.AUTOTUNE)\n") in ported
    assert ("    train_dataset = train_dataset.map(read_and_decode, num_parallel_calls="
            "tf.data.AUTOTUNE)\n") in ported
    shutil.rmtree(src / "logs")
    assert_same_run(program, tmp_path / "out" / "train.py", cwd=src)


SUPERVISOR_SUMMARIES = '''\
"""slim.learning.train's way: a Supervisor whose summary thread writes a histogram of
each batch, started before the main thread's first training step."""
import tensorflow as tf


def main(_):
    filename_queue = tf.train.string_input_producer(tf.gfile.Glob("train/*.tfrecord"))
    reader = tf.TFRecordReader()
    _, serialized = reader.read(filename_queue)
    features = tf.parse_single_example(serialized, features={
        "image": tf.FixedLenFeature([], tf.string),
        "label": tf.FixedLenFeature([], tf.int64)})
    image = tf.cast(tf.decode_raw(features["image"], tf.uint8), tf.float32) / 255.0
    image.set_shape([48])
    images, labels = tf.train.shuffle_batch(
        [image, tf.cast(features["label"], tf.int32)], batch_size=5, capacity=40,
        min_after_dequeue=20)
    tf.summary.histogram("images", images)
    weights = tf.get_variable("weights", [48, 10], initializer=tf.zeros_initializer())
    loss = tf.losses.sparse_softmax_cross_entropy(labels, tf.matmul(images, weights))
    step = tf.train.get_or_create_global_step()
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=step)
    supervisor = tf.train.Supervisor(logdir="logs", summary_op=tf.summary.merge_all(),
                                     save_summaries_secs=600, save_model_secs=0)
    with supervisor.managed_session() as sess:
        for _ in range(4):
            sess.run(train)
        print("trained %d steps" % sess.run(step))


if __name__ == "__main__":
    tf.app.run()
'''


@pytest.mark.timeout(600)
def test_a_summary_thread_reading_the_batch_ends_with_the_program(tmp_path, rng, monkeypatch,
                                                                   capsys):
    """The Supervisor's summary thread read the batch before any runner was started:
    port waited for it forever (run mode's Coordinator joins without a time limit)."""
    src = tmp_path / "src"
    program = write_program(src, "train.py", SUPERVISOR_SUMMARIES)
    write_tfrecords(src / "train", rng)
    monkeypatch.chdir(src)
    assert port(program, tmp_path / "out") == 0
    out = capsys.readouterr().out
    assert "train.py:15: tf.train.shuffle_batch -> tf.data: 3 files, repeated forever" in out
    assert "verify: 1 of 1 pipeline(s) feed the same data" in out
    shutil.rmtree(src / "logs")
    assert assert_same_run(program, tmp_path / "out" / "train.py", cwd=src) == \
        "trained 4 steps\n"


ONE_AT_A_TIME = '''\
"""Reads single examples, no batching call: each sess.run takes the next one."""
import tensorflow as tf

filename_queue = tf.train.string_input_producer(["data.tfrecord"], num_epochs=1)
reader = tf.TFRecordReader()
_, serialized = reader.read(filename_queue)
features = tf.parse_single_example(serialized, features={
    "image": tf.FixedLenFeature([], tf.string),
    "label": tf.FixedLenFeature([], tf.int64)})
image = tf.decode_raw(features["image"], tf.uint8)
label = features["label"]

with tf.Session() as sess:
    sess.run(tf.local_variables_initializer())
    coord = tf.train.Coordinator()
    threads = tf.train.start_queue_runners(sess=sess, coord=coord)
    for _ in range(3):
        value, number = sess.run([image, label])
        print(value.shape, number)
    coord.request_stop()
    coord.join(threads)
'''


def test_examples_fetched_one_at_a_time(tmp_path, rng, monkeypatch, capsys):
    src = tmp_path / "src"
    program = write_program(src, "read.py", ONE_AT_A_TIME)
    write_tfrecords(src, rng, files=1, per_file=5)
    (src / "part-0.tfrecord").rename(src / "data.tfrecord")
    monkeypatch.chdir(src)
    assert port(program, tmp_path / "out") == 0
    out = capsys.readouterr().out
    assert "read.py:6: reader.read -> tf.data: 1 file, 1 epoch" in out
    assert "pipelines EQUAL (unordered comparison): 5 examples on each side" in out
    ported = (tmp_path / "out" / "read.py").read_text()
    assert ("dataset = dataset.map(parse, num_parallel_calls=tf.data.AUTOTUNE)\n"
            "image, label = tf.compat.v1.data.make_one_shot_iterator(dataset).get_next()\n"
            ) in ported
    assert_same_run(program, tmp_path / "out" / "read.py", cwd=src)


READ_UP_TO = '''\
"""Two readers reading up to 4 records at a time, joined by batch_join."""
import tensorflow as tf

filename_queue = tf.train.string_input_producer(tf.gfile.Glob("*.tfrecord"), num_epochs=1)
pairs = [tf.TFRecordReader().read_up_to(filename_queue, 4) for _ in range(2)]
batch = tf.train.batch_join([[values] for _, values in pairs], batch_size=6,
                            enqueue_many=True, allow_smaller_final_batch=True)
with tf.Session() as sess:
    sess.run(tf.local_variables_initializer())
    coord = tf.train.Coordinator()
    threads = tf.train.start_queue_runners(sess=sess, coord=coord)
    try:
        while True:
            sess.run(batch)
    except tf.errors.OutOfRangeError:
        print("done")
    coord.request_stop()
    coord.join(threads)
'''


def test_read_up_to_with_batch_join_is_left_with_a_finding(tmp_path, rng, monkeypatch,
                                                            capsys):
    src = tmp_path / "src"
    program = write_program(src, "chunks.py", READ_UP_TO)
    write_tfrecords(src, rng, files=2, per_file=5)
    monkeypatch.chdir(src)
    assert port(program, tmp_path / "out", verify=False) == 1
    out = capsys.readouterr().out
    assert ("chunks.py:5: tf.train.batch_join: cannot be ported: cannot lower op "
            "'ReaderReadUpToV2' (ReaderReadUpToV2) to tf.data: read_up_to is not lowered"
            ) in out
    ported = (tmp_path / "out" / "chunks.py").read_text()
    assert "tf.compat.v1.train.batch_join(" in ported and "tf.data" not in ported
    assert "threads = tf.compat.v1.train.start_queue_runners(" in ported   # queues remain
    run = run_without_tf1compat(tmp_path / "out" / "chunks.py", cwd=src)   # still queues
    assert run.returncode == 0 and run.stdout == "done\n", run.stderr


INLINE_OP = '''\
"""The example's one op written inside the batching call."""
import tensorflow as tf

queue = tf.train.string_input_producer(["data.tfrecord"], num_epochs=1, shuffle=False)
_, record = tf.TFRecordReader().read(queue)
lengths = tf.train.batch([tf.strings.length(record)], batch_size=2)
with tf.Session() as sess:
    sess.run(tf.local_variables_initializer())
    tf.train.start_queue_runners(sess)
    print(sess.run(lengths), sess.run(lengths))
'''


def test_an_example_op_inside_the_batching_call_is_mapped(tmp_path, rng, monkeypatch, capsys):
    status, program = port_over_one_file(tmp_path, rng, monkeypatch, "inline.py", INLINE_OP)
    assert status == 0, capsys.readouterr().out
    ported = tmp_path / "out" / "inline.py"
    assert "def parse(record):\n    return tf.strings.length(record)\n" in ported.read_text()
    assert_same_run(program, ported, cwd=program.parent)


KERAS2_CELL = '''\
"""A TFRecord pipeline, then an LSTM cell of tf.contrib.rnn (Keras 2's in run mode)
made before the first read."""
import tensorflow as tf

queue = tf.train.string_input_producer(["data.tfrecord"], num_epochs=1)
_, record = tf.TFRecordReader().read(queue)
length = tf.strings.length(record)
lengths = tf.train.batch([length], batch_size=2)
cell = tf.contrib.rnn.BasicLSTMCell(4)
with tf.Session() as sess:
    sess.run(tf.local_variables_initializer())
    tf.train.start_queue_runners(sess)
    print(sess.run(lengths).shape)
'''


@pytest.mark.slow
def test_the_run_that_finds_the_pipelines_has_run_modes_keras_2(tmp_path, rng, monkeypatch,
                                                                 capsys):
    pytest.importorskip("tf_keras")
    status, _ = port_over_one_file(tmp_path, rng, monkeypatch, "cells.py", KERAS2_CELL)
    out = capsys.readouterr().out
    assert status == 0, out   # the run reached its first read: no "(the program)" finding
    assert "cells.py:8: tf.train.batch -> tf.data" in out
    assert "tf.data.TFRecordDataset" in (tmp_path / "out" / "cells.py").read_text()


KEY_AND_LATE_USE = '''\
"""Three pipelines port cannot write faithfully: one batches the reader's key
(file:offset), one's example is read beside its batch, one's example is named after
its batching call."""
import tensorflow as tf

queue = tf.train.string_input_producer(["data.tfrecord"], num_epochs=1)
key, value = tf.TFRecordReader().read(queue)
keys, values = tf.train.batch([key, value], batch_size=2)

other_queue = tf.train.string_input_producer(["data.tfrecord"], num_epochs=1)
_, record = tf.TFRecordReader().read(other_queue)
length = tf.strings.length(record)
lengths = tf.train.batch([length], batch_size=2)
ratio = tf.cast(length, tf.float32) / tf.reduce_mean(tf.cast(lengths, tf.float32))

third_queue = tf.train.string_input_producer(["data.tfrecord"], num_epochs=1)
_, third = tf.TFRecordReader().read(third_queue)
size = tf.strings.length(third)
sizes = tf.train.batch([size], batch_size=2)
total = size + 1
with tf.Session() as sess:
    sess.run(tf.local_variables_initializer())
    tf.train.start_queue_runners(sess)
    print(sess.run([keys, lengths, ratio, sizes])[1])
'''


def test_a_reader_key_and_an_example_used_after_its_batch_are_findings(tmp_path, rng,
                                                                       monkeypatch, capsys):
    assert port_over_one_file(tmp_path, rng, monkeypatch, "both.py", KEY_AND_LATE_USE)[0] == 1
    out = capsys.readouterr().out
    assert ("both.py:7: reader.read: the reader's key (file:record) is used; tf.data's "
            "readers give no keys") in out
    assert ("both.py:14: tf.train.batch: op 'Cast' (Cast) uses an example outside the "
            "pipeline; tf.data gives examples only to the iterator") in out
    # nothing in the graph reads 'add': the program's name for it is what a port breaks
    assert ("both.py:17: reader.read: 'size', computed from the example at line 18, is "
            "used at line 20, after the batching call") in out
    assert "tf.data" not in (tmp_path / "out" / "both.py").read_text()
