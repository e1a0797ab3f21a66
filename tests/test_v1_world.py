"""Programs of the TF1 era beyond tf.*, run unmodified with `tf1compat run`: the MNIST
tutorials' modules, TF 1.x's version and float dimensions, NumPy 1.x, SciPy's image
functions. Each runs in its own process: run mode changes the process."""

import subprocess
import sys

import numpy as np
import pytest
from legacy_programs import tf1compat_run, write_idx, write_program

pytestmark = [pytest.mark.tf, pytest.mark.slow]


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
        # seeded (here and below: each DataSet seeds NumPy's generator): next_batch's
        # shuffles, and so the loss after 20 steps, are the same every run
        data_sets = input_data.read_data_sets(FLAGS.data_dir, validation_size=8, seed=3)
        print("sizes", data_sets.train.num_examples, data_sets.validation.num_examples,
              data_sets.test.num_examples)
        print("first label", data_sets.validation.labels[0], "first pixel",
              data_sets.validation.images[0][:3].tolist())
        print("same", input_data_again.read_data_sets is learn_mnist.read_data_sets,
              tf.contrib.learn.datasets.mnist.read_data_sets is input_data.read_data_sets,
              tf.contrib.learn.datasets.base.Datasets is type(data_sets))
        # load_dataset("mnist") reads ./MNIST-data keeping 5000 for validation: too few here
        learned = learn_mnist.read_data_sets(FLAGS.data_dir, validation_size=0, seed=3)
        print("learn", learned.train.num_examples, tf.contrib.learn.datasets.load_dataset.__name__)
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
                everything = {images: data_sets.train.images, labels: data_sets.train.labels}
                before = sess.run(loss, everything)
                for step in range(FLAGS.max_steps):
                    xs, ys = data_sets.train.next_batch(16)
                    sess.run(train_op, {images: xs, labels: ys})
                after = sess.run(loss, everything)
                right = sess.run(correct, {images: data_sets.test.images,
                                           labels: data_sets.test.labels})
        print("loss", before, after, "epochs", data_sets.train.epochs_completed)
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
    from tf1compat._tf import tf
    assert lines["version"] == f"1.15.5 1.15.5 1.15.5 {tf.__version__}"
    assert lines["kernel"] == "[3, 3, 3, 8]"
    loss_before, loss_after, _, epochs = lines["loss"].split()  # on all 32 training images
    assert float(loss_after) < float(loss_before) - 0.1 and epochs == "9"  # seeded: 2.28 -> 1.73
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


NUMPY1_PROGRAM = """
    # An image-to-TFRecord converter of 2017, written for NumPy 1.x and SciPy 1.0.
    import sys
    import numpy as np
    import scipy.misc
    from scipy.misc import imsave, imresize
    import tensorflow as tf
    import helper


    class Legacy(object):
        def tostring(self):
            return "its own tostring"


    image = np.linspace(0, 255, 48).reshape(4, 4, 3).astype(np.uint8)
    print("aliases", np.linspace(0, 9, 4).astype(np.int).dtype, np.float_ is np.float64,
          np.asscalar(np.array([7])), np.float(2), np.Inf, np.product([2, 3]),
          np.fromstring(b"\\x01\\x02", dtype=np.uint8).tolist())
    imsave("image.png", image)
    back = scipy.misc.imread("image.png")
    print("imread", bool((back == image).all()), imresize(back, 50).shape,
          imresize(back, (2, 3), interp="nearest").shape)
    with tf.python_io.TFRecordWriter("images.tfrecord") as writer:
        feature = {"raw": tf.train.Feature(bytes_list=tf.train.BytesList(
            value=[image.tostring()]))}
        writer.write(tf.train.Example(features=tf.train.Features(
            feature=feature)).SerializeToString())
    print("tostring", helper.raw(image) == image.tobytes(), Legacy().tostring())
    import tensorflow.python.framework.tensor_util as library  # a library keeps NumPy 2
    numpy = sys.modules["numpy"]
    print("libraries", library.np is numpy, np is not numpy, hasattr(numpy, "float_"),
          "int" in vars(numpy))
    try:
        import scipy.ndimage
    except ImportError as e:
        print("scipy", type(e).__name__)
"""


def test_numpy1_names_tostring_and_scipy_image_functions_for_the_program(tmp_path):
    write_program(tmp_path / "prog", "helper.py", """
        def raw(array):
            return array.tostring()
    """)
    program = write_program(tmp_path / "prog", "to_records.py", NUMPY1_PROGRAM)
    done = tf1compat_run(program, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = dict(line.split(" ", 1) for line in done.stdout.splitlines())
    assert lines["aliases"] == "int64 True 7 2.0 inf 6 [1, 2]"
    assert lines["imread"] == "True (2, 2, 3) (2, 3, 3)"
    assert lines["tostring"] == "True its own tostring"
    # the libraries' NumPy is the real one: NumPy 1.26 has float_ itself, NumPy 2 has not
    assert lines["libraries"] == f"True True {hasattr(np, 'float_')} False"
    assert lines["scipy"] == "ModuleNotFoundError"  # SciPy is not installed here
    from tf1compat.example import example_to_dict
    from tf1compat.tfrecord import iter_records
    image = np.linspace(0, 255, 48).reshape(4, 4, 3).astype(np.uint8)
    [record] = iter_records(str(tmp_path / "images.tfrecord"))
    assert example_to_dict(record)["raw"] == [image.tobytes()]
    assert not (tmp_path / "prog" / "__pycache__").exists()


SLIM_BATCH_NORM_PROGRAM = """
    # A slim model of 2017: conv + batch_norm in an arg_scope, slim.learning's train op.
    import numpy as np
    import tensorflow as tf
    from tensorflow.contrib.slim.nets import resnet_v1

    slim = tf.contrib.slim


    def small_net(images, is_training, updates_collections):
        params = {"is_training": is_training, "decay": 0.5,
                  "updates_collections": updates_collections}
        with slim.arg_scope([slim.conv2d], normalizer_fn=slim.batch_norm,
                            normalizer_params=params):
            net = slim.conv2d(images, 8, [3, 3], scope="conv1")
            net = slim.max_pool2d(net, [2, 2], scope="pool1")
            net = slim.conv2d(net, 8, [3, 3], scope="conv2")
            net = slim.flatten(net)
            return slim.fully_connected(net, 3, activation_fn=None, scope="logits")


    rng = np.random.RandomState(0)
    xs = rng.rand(16, 8, 8, 1).astype(np.float32)
    ys = rng.randint(0, 3, 16)
    for collections in (tf.GraphKeys.UPDATE_OPS, None):
        with tf.Graph().as_default():
            tf.set_random_seed(0)
            images = tf.placeholder(tf.float32, [None, 8, 8, 1])
            labels = tf.placeholder(tf.int64, [None])
            logits = small_net(images, True, collections)
            loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
            train_op = slim.learning.create_train_op(loss, tf.train.AdamOptimizer(0.01))
            mean = [v for v in slim.get_model_variables() if "moving_mean" in v.name][0]
            with tf.Session() as sess:
                sess.run(tf.global_variables_initializer())
                losses = [sess.run(train_op, {images: xs, labels: ys}) for _ in range(30)]
                moved = float(np.abs(sess.run(mean)).sum())
        print("batch_norm", collections, losses[-1] < losses[0], moved > 0)

    with tf.Graph().as_default():
        inputs = tf.placeholder(tf.float32, [2, 64, 64, 3])
        with slim.arg_scope(resnet_v1.resnet_arg_scope()):
            logits, _ = resnet_v1.resnet_v1_50(inputs, num_classes=4, is_training=True)
        loss = tf.reduce_mean(tf.square(logits))
        train_op = slim.learning.create_train_op(loss, tf.train.GradientDescentOptimizer(0.01))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            value = sess.run(train_op, {inputs: np.ones((2, 64, 64, 3), np.float32)})
        print("resnet_v1_50", logits.get_shape().as_list(), np.isfinite(value),
              len(tf.get_collection(tf.GraphKeys.UPDATE_OPS)))
"""


def test_slim_batch_norm_and_a_slim_net_train_in_run_mode(tmp_path):
    pytest.importorskip("tf_keras")
    program = write_program(tmp_path / "prog", "train.py", SLIM_BATCH_NORM_PROGRAM)
    done = tf1compat_run(program, cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "batch_norm update_ops True True", "batch_norm None True True",
        "resnet_v1_50 [2, 1, 1, 4] True 106"]  # moving mean and variance of 53


KERAS2_PROGRAM = """
    import sys
    import numpy as np
    import tensorflow as tf

    images = tf.placeholder(tf.float32, [None, 8, 8, 1])
    labels = tf.placeholder(tf.int64, [None])
    net = tf.layers.conv2d(images, 4, 3, activation=tf.nn.relu)
    net = tf.layers.max_pooling2d(net, 2, 2)
    net = tf.layers.batch_normalization(net, training=True)
    net = tf.layers.dense(tf.layers.flatten(net), 3)
    dense = tf.keras.layers.Dense(3)
    logits = dense(tf.contrib.keras.layers.Flatten()(images)) + net
    loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
    with tf.control_dependencies(tf.get_collection(tf.GraphKeys.UPDATE_OPS)):
        train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    rng = np.random.RandomState(0)
    feed = {images: rng.rand(8, 8, 8, 1), labels: rng.randint(0, 3, 8)}
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        losses = [sess.run([train_op, loss], feed)[1] for _ in range(10)]
    print("keras", type(dense).__module__.split(".")[0], losses[-1] < losses[0],
          tf.keras.backend.get_session() is not None)
    print("library keras", sys.modules["tensorflow"].keras.layers.Dense.__module__.split(".")[0])
"""


def test_tf_layers_and_keras_2_out_of_the_box(tmp_path):
    pytest.importorskip("tf_keras")
    program = write_program(tmp_path / "prog", "keras2.py", KERAS2_PROGRAM)
    done = tf1compat_run(program, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["keras tf_keras True True", "library keras tf_keras"]


CONTRIB_RNN_PROGRAM = """
    # An LSTM over image rows, as the 2017 tutorials wrote it with tf.contrib.rnn.
    import numpy as np
    import tensorflow as tf
    from tensorflow.contrib import rnn

    steps, width, hidden = 4, 3, 5
    x = tf.placeholder(tf.float32, [None, steps, width])
    y = tf.placeholder(tf.int64, [None])
    with tf.variable_scope("one"):
        outputs, state = rnn.static_rnn(rnn.BasicLSTMCell(hidden, forget_bias=1.0),
                                        tf.unstack(x, steps, 1), dtype=tf.float32)
    stacked = rnn.MultiRNNCell([rnn.DropoutWrapper(rnn.GRUCell(hidden), output_keep_prob=1.0)
                                for _ in range(2)])
    with tf.variable_scope("two"):
        stacked_outputs, _ = tf.nn.dynamic_rnn(stacked, x, dtype=tf.float32)
    logits = tf.layers.dense(outputs[-1] + stacked_outputs[:, -1], 2)
    loss = tf.losses.sparse_softmax_cross_entropy(y, logits)
    train_op = tf.train.AdamOptimizer(0.05).minimize(loss)

    rng = np.random.RandomState(0)
    feed = {x: rng.rand(6, steps, width), y: rng.randint(0, 2, 6)}
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        first_h, last_h, (c, h) = sess.run([outputs[0], outputs[-1], state], feed)
        kernel, bias = sess.run(tf.trainable_variables("one"))
        losses = [sess.run([train_op, loss], feed)[1] for _ in range(20)]

    # BasicLSTMCell's first step in NumPy: zero state, gates i, j, f, o
    i, j, f, o = np.split(feed[x][:, 0] @ kernel[:width] + bias, 4, axis=1)
    sigmoid = lambda v: 1 / (1 + np.exp(-v))
    expected_h = np.tanh(sigmoid(i) * np.tanh(j)) * sigmoid(o)
    print(rnn.BasicLSTMCell is tf.nn.rnn_cell.BasicLSTMCell, isinstance(state, rnn.LSTMStateTuple))
    print(np.allclose(first_h, expected_h, atol=1e-5), np.allclose(last_h, h), c.shape)
    print(losses[-1] < losses[0])
"""


def test_contrib_rnn_cells_train_with_keras_2(tmp_path):
    pytest.importorskip("tf_keras")
    program = write_program(tmp_path / "prog", "lstm.py", CONTRIB_RNN_PROGRAM)
    done = tf1compat_run(program, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["True True", "True True (6, 5)", "True"]


KMEANS_PROGRAM = """
    # Clustering with tf.contrib.factorization's KMeans, as TF 1.1's examples did.
    import numpy as np
    import tensorflow as tf
    from tensorflow.contrib.factorization import KMeans

    centers = np.array([[0., 0.], [10., 10.], [-10., 10.]], np.float32)
    rng = np.random.RandomState(0)
    points = np.concatenate([c + rng.randn(30, 2).astype(np.float32) for c in centers])
    truth = np.repeat(np.arange(3), 30)
    x = tf.placeholder(tf.float32, [None, 2])
    factorization = tf.contrib.factorization
    kmeans = KMeans(inputs=x, num_clusters=3,
                    initial_clusters=factorization.KMEANS_PLUS_PLUS_INIT,
                    distance_metric=factorization.SQUARED_EUCLIDEAN_DISTANCE,
                    use_mini_batch=False, random_seed=1)
    (_, cluster_idx, scores, _, init_op, train_op) = kmeans.training_graph()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer(), {x: points})
        sess.run(init_op, {x: points})
        for _ in range(5):
            _, idx = sess.run([train_op, cluster_idx[0]], {x: points})
        found = sess.run(tf.get_collection(tf.GraphKeys.GLOBAL_VARIABLES, "clusters")[0])
    pure = all(len(set(idx[truth == k])) == 1 for k in range(3)) and len(set(idx)) == 3
    order = [int(np.argmin(((found - c) ** 2).sum(1))) for c in centers]
    print(pure, np.abs(found[order] - centers).max() < 0.6)
    print(tf.contrib.factorization.COSINE_DISTANCE, tf.contrib.factorization.RANDOM_INIT,
          tf.contrib.factorization.KMC2_INIT)
"""


def test_contrib_factorization_kmeans_finds_the_clusters(tmp_path):
    program = write_program(tmp_path / "prog", "kmeans.py", KMEANS_PROGRAM)
    done = tf1compat_run(program, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["True True", "cosine random kmc2"]


def test_tracebacks_start_at_the_program_as_pythons_do(tmp_path):
    folder = tmp_path / "prog"
    typo = write_program(folder, "typo.py", "x = 1\nprint 'hello'\n")
    done = tf1compat_run(typo, cwd=tmp_path)
    plain = subprocess.run([sys.executable, str(typo)], capture_output=True, text=True)
    assert done.returncode == plain.returncode == 1
    assert done.stderr == plain.stderr  # no frames, as Python prints a syntax error
    main = write_program(folder, "main.py", """
        import os
        import tensorflow.contrib.learn.python.learn.estimators as estimators
    """)
    done = tf1compat_run(main, cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        "Traceback (most recent call last):",
        f'  File "{main}", line 3, in <module>',
        "    import tensorflow.contrib.learn.python.learn.estimators as estimators",
        "ModuleNotFoundError: No module named 'tensorflow.contrib.learn.python.learn.estimators':"
        " tf1compat run mode does not provide it; import tf.contrib's modules themselves "
        "(module 'tf.contrib.learn.python.learn' has no attribute 'estimators')"]


@pytest.mark.parametrize("module_source", [
    "x = (1,\n",                                            # a syntax error
    "def fail():\n    raise ValueError('at import')\n\n\nfail()\n",
    "import json\njson.loads('{')\n",                       # raised inside the library
], ids=["syntax-error", "raised", "raised-in-a-library"])
def test_an_imported_modules_failure_prints_as_python_prints_it(tmp_path, module_source):
    folder = tmp_path / "prog"
    write_program(folder, "helper.py", module_source)
    main = write_program(folder, "main.py", "import os\nimport helper\n")
    done = tf1compat_run(main, cwd=tmp_path)
    plain = subprocess.run([sys.executable, str(main)], capture_output=True, text=True,
                           cwd=tmp_path)
    assert done.returncode == plain.returncode == 1
    assert done.stderr == plain.stderr and plain.stderr.startswith("Traceback")


def test_a_failed_contrib_import_in_an_imported_module_starts_at_the_program(tmp_path):
    folder = tmp_path / "prog"
    helper = write_program(folder, "helper.py", "from tensorflow.contrib.learn.python import ops\n")
    main = write_program(folder, "main.py", "import tensorflow as tf\nimport helper\n")
    done = tf1compat_run(main, cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        "Traceback (most recent call last):",
        f'  File "{main}", line 2, in <module>',
        "    import helper",
        f'  File "{helper}", line 1, in <module>',
        "    from tensorflow.contrib.learn.python import ops",
        "ModuleNotFoundError: No module named 'tensorflow.contrib.learn.python.ops': tf1compat "
        "run mode does not provide it; import tf.contrib's modules themselves (module "
        "'tf.contrib.learn.python' has no attribute 'ops')"]


CHILDREN_PROGRAM = """
    import multiprocessing
    import sys
    import tensorflow as tf


    def write_records(path):
        with tf.python_io.TFRecordWriter(path) as writer:
            writer.write(b"from a child")
        return tf.__version__, hasattr(tf, "contrib"), sys.modules["tensorflow"].__version__


    if __name__ == "__main__":
        for method in sys.argv[1:]:
            with multiprocessing.get_context(method).Pool(1) as pool:
                print(method, *pool.apply(write_records, (method + ".tfrecord",)))
"""


@pytest.mark.timeout(300)
def test_spawned_and_forkserver_children_run_in_the_same_tf1_world(tmp_path):
    from tf1compat._tf import tf

    program = write_program(tmp_path / "prog", "children.py", CHILDREN_PROGRAM)
    done = tf1compat_run(program, "spawn", "forkserver", "fork", cwd=tmp_path, timeout=280)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [f"{method} 1.15.5 True {tf.__version__}"
                                        for method in ("spawn", "forkserver", "fork")]
    from tf1compat.tfrecord import iter_records
    for method in ("spawn", "forkserver", "fork"):
        assert list(iter_records(str(tmp_path / f"{method}.tfrecord"))) == [b"from a child"]


IMPORT_FORMS_PROGRAM = """
    import sys
    import tensorflow as tf


    def check(statement, module):
        try:
            exec(statement, {"__file__": __file__, "__name__": "walk"})
        except ModuleNotFoundError as e:
            if "tf1compat run mode does not provide it" not in str(e):
                return f"{statement}: TensorFlow's error: {e}"
            return "explained" if ".python" in statement else f"{statement}: {e}"
        except Exception as e:  # noqa: BLE001 - reported to the test
            return f"{statement}: {type(e).__name__}: {e}"
        return "imported"


    for name in sys.argv[1:]:
        module = getattr(tf.contrib, name)
        public = sorted(n for n in dir(module) if not n.startswith("_")) or ["anything"]
        outcomes = {check(statement, name) for statement in (
            f"import tensorflow.contrib.{name}",
            f"import tensorflow.contrib.{name} as alias",
            f"from tensorflow.contrib import {name}",
            f"from tensorflow.contrib.{name} import {public[0]}",
            f"import tensorflow.contrib.{name}.python.ops.{name}_ops",
            f"from tensorflow.contrib.{name}.python.ops import {name}_ops",
            f"from tensorflow.contrib.{name}.python import ops",
            f"import tensorflow.contrib.{name}.python.ops.{name}_ops as alias",
            f"from tensorflow.contrib.{name}.python.ops.{name}_ops import {public[0]}",
            f"from tensorflow.contrib.{name}.python.{name} import {public[0]}",
        )}
        print(name, *sorted(outcomes))
"""


@pytest.mark.timeout(300)
def test_every_contrib_module_in_every_import_form(tmp_path):
    from tf1compat.v1.contrib_table import CONTRIB

    program = write_program(tmp_path / "prog", "walk.py", IMPORT_FORMS_PROGRAM)
    done = tf1compat_run(program, *sorted(CONTRIB), cwd=tmp_path, timeout=280)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == len(CONTRIB)
    # learn.python is a module of run mode's too (it holds learn.datasets): what it
    # lacks is explained as well
    assert [line for line in lines if not line.endswith(" explained imported")] == []
