"""Programs of the TF1 era beyond tf.*, run unmodified with `tf1compat run`: the MNIST
tutorials' modules, TF 1.x's version and float dimensions, NumPy 1.x, SciPy's image
functions. Each runs in its own process: run mode changes the process."""

import gzip
import os
import struct
import subprocess
import sys
import textwrap

import numpy as np
import pytest

pytestmark = [pytest.mark.tf, pytest.mark.slow]


def write_program(folder, name, source):
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(source))
    return path


def tf1compat_run(*args, cwd, timeout=180):
    """``python -m tf1compat run ARGS`` in ``cwd``; returns the CompletedProcess."""
    return subprocess.run([sys.executable, "-m", "tf1compat", "run", *map(str, args)],
                          cwd=cwd, capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})


def write_idx(path, magic, array):
    header = struct.pack(f">{1 + array.ndim}I", magic, *array.shape)
    with gzip.open(path, "wb") as f:
        f.write(header + array.astype(np.uint8).tobytes())


@pytest.fixture
def mnist_files(tmp_path, rng):
    """The four MNIST files (40 training, 10 test images) in tmp_path/MNIST-data."""
    folder = tmp_path / "MNIST-data"
    folder.mkdir()
    data = {"train-images-idx3-ubyte.gz": rng.integers(0, 256, (40, 28, 28)),
            "train-labels-idx1-ubyte.gz": rng.integers(0, 10, 40),
            "t10k-images-idx3-ubyte.gz": rng.integers(0, 256, (10, 28, 28)),
            "t10k-labels-idx1-ubyte.gz": rng.integers(0, 10, 10)}
    for name, array in data.items():
        write_idx(folder / name, 2051 if "images" in name else 2049, array)
    return folder, data


MNIST_PROGRAM = """
    # The fully_connected_feed tutorial's way, 2016.
    import tensorflow as tf
    from tensorflow.examples.tutorials.mnist import input_data
    from tensorflow.examples.tutorials.mnist import mnist
    import tensorflow.examples.tutorials.mnist.input_data as input_data_again
    from tensorflow.contrib.learn.python.learn.datasets import mnist as learn_mnist

    if tf.__version__.split(".")[0] != "1":
        raise Exception("this program needs TensorFlow 1, found " + tf.__version__)

    flags = tf.app.flags
    flags.DEFINE_string("data_dir", "MNIST-data", "where the four files are")
    flags.DEFINE_integer("max_steps", 20, "steps")
    FLAGS = flags.FLAGS


    def main(_):
        data_sets = input_data.read_data_sets(FLAGS.data_dir, validation_size=8)
        print("sizes", data_sets.train.num_examples, data_sets.validation.num_examples,
              data_sets.test.num_examples)
        print("first label", data_sets.validation.labels[0], "first pixel",
              data_sets.validation.images[0][:3].tolist())
        print("same", input_data_again.read_data_sets is learn_mnist.read_data_sets,
              tf.contrib.learn.datasets.mnist.read_data_sets is input_data.read_data_sets,
              tf.contrib.learn.datasets.base.Datasets is type(data_sets))
        # load_dataset("mnist") reads ./MNIST-data keeping 5000 for validation: too few here
        print("learn", learn_mnist.read_data_sets(FLAGS.data_dir, validation_size=0)
              .train.num_examples, tf.contrib.learn.datasets.load_dataset.__name__)
        print("version", tf.__version__, tf.VERSION, tf.version.VERSION, tf.version.TF2_VERSION)
        with tf.Graph().as_default():
            tf.set_random_seed(1)
            images = tf.placeholder(tf.float32, shape=(None, mnist.IMAGE_PIXELS))
            labels = tf.placeholder(tf.int32, shape=(None,))
            logits = mnist.inference(images, 32, 16)
            loss = mnist.loss(logits, labels)
            train_op = mnist.training(loss, 0.1)
            correct = mnist.evaluation(logits, labels)
            group = 6
            kernel = tf.get_variable("kernel", shape=[3, 3, group / 2, 8])
            print("kernel", kernel.get_shape().as_list())
            with tf.Session() as sess:
                sess.run(tf.global_variables_initializer())
                losses = []
                for step in range(FLAGS.max_steps):
                    xs, ys = data_sets.train.next_batch(16)
                    _, value = sess.run([train_op, loss], {images: xs, labels: ys})
                    losses.append(value)
                right = sess.run(correct, {images: data_sets.test.images,
                                           labels: data_sets.test.labels})
        print("loss", losses[0], losses[-1], "epochs", data_sets.train.epochs_completed)
        print("correct", right)


    if __name__ == "__main__":
        tf.app.run()
"""


def test_mnist_tutorial_program_trains_on_idx_files(tmp_path, mnist_files):
    folder, data = mnist_files
    program = write_program(tmp_path / "prog", "fully_connected_feed.py", MNIST_PROGRAM)
    done = tf1compat_run(program, "--max_steps=20", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = dict(line.split(" ", 1) for line in done.stdout.splitlines())
    assert lines["sizes"] == "32 8 10"
    first = data["train-images-idx3-ubyte.gz"][0].reshape(-1)[:3] / np.float32(255)
    label, pixels = lines["first"].split(" first pixel ")
    assert label == f"label {data['train-labels-idx1-ubyte.gz'][0]}"
    np.testing.assert_allclose(eval(pixels), first, rtol=1e-6)  # noqa: S307 - our own output
    assert lines["same"] == "True True True" and lines["learn"] == "40 load_dataset"
    import tensorflow as tf
    assert lines["version"] == f"1.15.5 1.15.5 1.15.5 {tf.__version__}"
    assert lines["kernel"] == "[3, 3, 3, 8]"
    first_loss, last_loss, _, epochs = lines["loss"].split()
    assert float(last_loss) < float(first_loss) and epochs == "9"
    assert 0 <= int(lines["correct"]) <= 10


def test_missing_mnist_files_are_named_with_the_folder(tmp_path):
    program = write_program(tmp_path / "prog", "p.py", """
        from tensorflow.examples.tutorials.mnist import input_data
        input_data.read_data_sets("no_data_here", one_hot=True)
    """)
    done = tf1compat_run(program, cwd=tmp_path)
    assert done.returncode == 1
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("FileNotFoundError: [Errno 2] MNIST data not found in no_data_here: "
                           "missing train-images-idx3-ubyte.gz, train-labels-idx1-ubyte.gz, "
                           "t10k-images-idx3-ubyte.gz, t10k-labels-idx1-ubyte.gz"), last
    assert 'File "' + str(program) + '", line 3' in done.stderr
