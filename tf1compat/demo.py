"""``tf1compat demo``: the three jobs on the demo's own data, kept in a folder it names.

1. An old TF1 program (``tf.app.flags``, ``FixedLengthRecordReader``,
   ``tf.train.batch``, ``Session`` + ``Coordinator``; written by the demo) reads a
   seeded synthetic CIFAR-10, unmodified: ``tf1compat run`` (its pipeline on
   tf.data), then ``tf1compat run --queues``. Both must print the same counts, and
   those the demo computes from the binary files with numpy.
2. ``tf1compat check`` on the program's folder: nothing run mode cannot give.
3. ``tf1compat convert-cifar10`` to slim's TFRecords, ``tf1compat inspect`` of the
   output; the record counts must be the image counts.
4. The TF1 tutorial's ``cifar10_input.inputs()`` queue pipeline lowered to tf.data
   (its plan shown) and compared with it example by example: EQUAL.

The commands run as a user would type them, in the demo folder; figures are counts
and sums, never speeds. The verdict passes only when every step does.
"""

import os
import shutil
import subprocess
import sys
import tarfile
import textwrap

import numpy as np

from tf1compat.errors import Tf1CompatError

NUM_TRAIN = 1000               # synthetic CIFAR-10: a few seconds per step on 2 cores
NUM_TEST = 200
BATCH_SIZE = 50
DEFAULT_FOLDER = "demo-output"
MARK = ".tf1compat-demo"       # a folder the demo made, so a rerun may clear it
PROGRAM = "old_program/count_cifar.py"
PROGRAM_TEXT = '''\
"""Count CIFAR-10's training images per class and sum their pixels, the TF1 way:
string_input_producer -> FixedLengthRecordReader -> decode_raw -> tf.train.batch,
run by a Session with a Coordinator and queue-runner threads."""

from __future__ import print_function

import os

import tensorflow as tf

tf.app.flags.DEFINE_string("data_dir", "cifar-10-batches-bin", "the binary batches")
tf.app.flags.DEFINE_integer("batch_size", 64, "images per batch")
FLAGS = tf.app.flags.FLAGS


def main(_):
  files = [os.path.join(FLAGS.data_dir, "data_batch_%d.bin" % i) for i in range(1, 6)]
  queue = tf.train.string_input_producer(files, num_epochs=1, shuffle=False)
  reader = tf.FixedLengthRecordReader(record_bytes=1 + 32 * 32 * 3)
  _, value = reader.read(queue)
  record = tf.decode_raw(value, tf.uint8)
  label = tf.cast(record[0], tf.int32)
  image = tf.reshape(record[1:], [3, 32, 32])
  labels, images = tf.train.batch([label, image], FLAGS.batch_size,
                                  allow_smaller_final_batch=True)
  pixel_sums = tf.reduce_sum(tf.cast(images, tf.int64), axis=[1, 2, 3])

  per_class, pixel_sum = [0] * 10, 0
  with tf.Session() as sess:
    sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
    coord = tf.train.Coordinator()
    threads = tf.train.start_queue_runners(sess=sess, coord=coord)
    try:
      while not coord.should_stop():
        batch_labels, batch_sums = sess.run([labels, pixel_sums])
        for batch_label in batch_labels:
          per_class[batch_label] += 1
        pixel_sum += int(batch_sums.sum())
    except tf.errors.OutOfRangeError:
      pass
    finally:
      coord.request_stop()
    coord.join(threads)
  print("images %d, pixel sum %d" % (sum(per_class), pixel_sum))
  print("images per class: %s" % " ".join(str(n) for n in per_class))


if __name__ == "__main__":
  tf.app.run()
'''


def _prepare_folder(folder):
    """An empty demo folder: new, or one an earlier demo made (cleared). A file at the
    path is the system's error (the folder cannot be made)."""
    if os.path.isdir(folder) and os.listdir(folder):
        if not os.path.exists(os.path.join(folder, MARK)):
            raise Tf1CompatError(f"{folder} exists and was not made by tf1compat demo; "
                                 "pass --workdir with a new or empty folder")
        shutil.rmtree(folder)
    os.makedirs(folder, exist_ok=True)
    open(os.path.join(folder, MARK), "w").close()


def _binary_folder(cifar, folder, seed):
    """The folder of CIFAR-10's binary batches: ``cifar`` (a folder or the .tar.gz,
    extracted into the demo folder), or a seeded synthetic one made there."""
    from tf1compat import cifar10

    if cifar is None:
        return cifar10.make_synthetic(folder, NUM_TRAIN, NUM_TEST, seed=seed)
    if os.path.isdir(cifar):
        return os.path.abspath(cifar)
    with tarfile.open(cifar) as archive:
        archive.extractall(folder, filter="data")
    return os.path.join(folder, "cifar-10-batches-bin")


def expected_program_output(binary_folder):
    """What the old program must print, computed from the binary files with numpy."""
    from tf1compat.cifar10 import read_batch_file

    per_class, pixel_sum = np.zeros(10, np.int64), 0
    for index in range(1, 6):
        images, labels = read_batch_file(os.path.join(binary_folder, f"data_batch_{index}.bin"))
        per_class += np.bincount(labels, minlength=10)
        pixel_sum += int(images.astype(np.int64).sum())
    return (f"images {per_class.sum()}, pixel sum {pixel_sum}\n"
            f"images per class: {' '.join(str(n) for n in per_class)}\n")


class _Steps:
    """Runs the demo's commands in its folder, tells what they print, keeps the verdict."""

    def __init__(self, folder, echo):
        self.folder, self.echo, self.failures = folder, echo, []

    def command(self, *args):
        """Run ``tf1compat ARGS`` in the demo folder as a user would; its (status, output)."""
        self.echo(f"  $ tf1compat {' '.join(_shell_quote(a) for a in args)}")
        done = subprocess.run([sys.executable, "-m", "tf1compat", *args], cwd=self.folder,
                              capture_output=True, text=True, stdin=subprocess.DEVNULL)
        output = done.stdout + done.stderr
        self.echo(textwrap.indent(output.rstrip("\n"), "    ") if output.strip() else "")
        return done.returncode, done.stdout

    def check(self, passed, what):
        self.echo(f"  {'ok' if passed else 'FAILED'}: {what}")
        if not passed:
            self.failures.append(what)


def _shell_quote(argument):
    return f"'{argument}'" if any(c in argument for c in "*? ") else argument


def run_old_program(steps, binary_folder):
    """Step 1: the old program, unmodified, on tf.data (the default) and on queues."""
    steps.echo("[1/4] An old TF1 program, unmodified (tf.app.flags, FixedLengthRecordReader, "
               "tf.train.batch, Session + Coordinator):")
    program = os.path.join(steps.folder, PROGRAM)
    os.makedirs(os.path.dirname(program), exist_ok=True)
    with open(program, "w") as f:
        f.write(PROGRAM_TEXT)
    data_dir = os.path.relpath(binary_folder, steps.folder)
    tf_data = steps.command("run", PROGRAM, f"--data_dir={data_dir}")
    queues = steps.command("run", "--queues", PROGRAM, f"--data_dir={data_dir}")
    steps.check(queues[0] == 0 and tf_data[0] == 0, "both runs exit 0")
    steps.check(queues[1] == tf_data[1], "run (on tf.data) and run --queues print the same")
    steps.check(queues[1] == expected_program_output(binary_folder),
                "the counts are those of the binary files (computed with numpy)")


def check_old_program(steps):
    """Step 2: check lists nothing run mode cannot give."""
    steps.echo("[2/4] What would not run, and where:")
    status, output = steps.command("check", os.path.dirname(PROGRAM))
    steps.check(status == 0 and "0 unsupported name(s)" in output,
                "check finds nothing run mode cannot give")


def convert_and_inspect(steps, binary_folder):
    """Step 3: convert to slim's TFRecords and inspect them."""
    from tf1compat.records.tfrecord import count_records

    steps.echo("[3/4] Convert to slim's TFRecords, then look inside:")
    source = os.path.relpath(binary_folder, steps.folder)
    status, _ = steps.command("convert-cifar10", source, "cifar10-tfrecords")
    inspected, _ = steps.command("inspect", "cifar10-tfrecords/*.tfrecord", "--sample", "100")
    counts = {}
    for split in ("train", "test"):
        path = os.path.join(steps.folder, "cifar10-tfrecords", f"cifar10_{split}.tfrecord")
        counts[split] = count_records(path) if os.path.exists(path) else None
    expected = {"train": expected_count(binary_folder, "train"),
                "test": expected_count(binary_folder, "test")}
    steps.check(status == 0 and inspected == 0 and counts == expected,
                f"one record per image: train {counts['train']}, test {counts['test']}")


def expected_count(binary_folder, split):
    """Images of a split in the binary batches."""
    names = [f"data_batch_{i}.bin" for i in range(1, 6)] if split == "train" else ["test_batch.bin"]
    return sum(os.path.getsize(os.path.join(binary_folder, name)) // 3073 for name in names)


def lower_and_compare(steps, binary_folder):
    """Step 4: the tutorial's queue pipeline as tf.data, compared with itself."""
    import tf1compat as tc
    from tf1compat import cifar10

    steps.echo("[4/4] The TF1 tutorial's cifar10_input.inputs() as tf.data, with proof:")
    with tc.legacy_graph():
        fetches = cifar10.inputs(eval_data=True, data_dir=binary_folder,
                                 batch_size=BATCH_SIZE, num_epochs=1)
        steps.echo(f"  plan: {tc.describe_lowering(fetches)}")
        report = tc.compare(fetches)
    steps.echo(textwrap.indent(str(report), "  "))
    steps.check(report.equal, "the queue pipeline and its tf.data lowering feed the same "
                              "examples")


def run(workdir=None, seed=0, cifar=None, *, echo):
    """Run the demo, telling each step through ``echo``; returns 0 when every step
    passes, 1 otherwise. Its files stay in ``workdir`` (default: ``demo-output``).

    ``cifar`` is the real CIFAR-10 binary (folder or .tar.gz) to use instead of the
    synthetic one.
    """
    from tf1compat import _tf  # noqa: F401 - before any step: an ImportError if TensorFlow is missing
    folder = os.path.abspath(workdir or DEFAULT_FOLDER)
    _prepare_folder(folder)
    binary_folder = _binary_folder(cifar, folder, seed)
    kind = "CIFAR-10" if cifar else f"a synthetic CIFAR-10 (seed {seed})"
    echo(f"tf1compat demo: the three jobs on {kind}, in {folder}\n")
    steps = _Steps(folder, echo)
    for step in (lambda: run_old_program(steps, binary_folder),
                 lambda: check_old_program(steps),
                 lambda: convert_and_inspect(steps, binary_folder),
                 lambda: lower_and_compare(steps, binary_folder)):
        step()
        echo("")
    echo(f"Next steps (the files are in {folder}):\n"
         f"  tf1compat run YOUR_PROGRAM.py ARGS             your own TF1 program, on tf.data\n"
         f"  tf1compat check YOUR_PROJECT/                 what would not run, and where\n"
         f"  tf1compat convert-images PHOTOS/ OUT --name N  a folder of class folders to "
         f"TFRecords\n"
         f"  tf1compat compare --pipeline MODULE:FUNCTION   your queue pipeline vs tf.data\n"
         f"  docs/ (mkdocs serve) or README.md              the documentation\n")
    if steps.failures:
        echo(f"FAIL: {len(steps.failures)} check(s) failed: {'; '.join(steps.failures)}")
        return 1
    echo(f"PASS: all three jobs; the demo's files are kept in {folder}")
    return 0
