"""Run mode's `tensorflow` and `tensorflow.contrib`, inspected in-process; install()
is left with uninstall() where a test needs run mode in place."""

import os
import site
import sys

import numpy as np
import pytest

import tf1compat as tc
from tf1compat.errors import UnsupportedTF1Error

tf = pytest.importorskip("tensorflow")
pytestmark = pytest.mark.tf

v1 = tf.compat.v1


@pytest.fixture(scope="module")
def tf1():
    from tf1compat.v1.namespace import tensorflow_module
    return tensorflow_module()


def test_tensorflow_is_compat_v1_with_the_queue_api_and_run_mode_sessions(tf1):
    assert tf1.python_io is v1.python_io and tf1.app.run is v1.app.run
    # TF 1.13's flags: absl's, with defines that take a name from absl.logging (tf1_flags)
    assert tf1.app.flags is tf1.flags and tf1.flags.FLAGS is v1.flags.FLAGS
    assert tf1.flags.DEFINE_string.__wrapped__ is v1.flags.DEFINE_string
    assert tf1.placeholder.__wrapped__ is v1.placeholder and tf1.nn is v1.nn
    # v1's API modules, not TensorFlow's internal packages of the same names
    assert tf1.summary is v1.summary and tf1.distribute is v1.distribute
    assert tf1.lite is v1.lite
    assert tf1.compat.v1 is tf1 and tf1.compat.v2.function is tf.function
    assert tf1.train.string_input_producer is tc.string_input_producer
    assert tf1.train.shuffle_batch is tc.shuffle_batch
    assert tf1.TFRecordReader is tc.TFRecordReader
    assert tf1.train.Coordinator is v1.train.Coordinator
    assert issubclass(tf1.Session, v1.Session) and tf1.Session._runtime.grace_period == 10
    assert issubclass(tf1.InteractiveSession, v1.InteractiveSession)
    assert tf1.python.ops.control_flow_ops.__name__ == "tensorflow.python.ops.control_flow_ops"


def test_queue_api_table_entries_can_be_replaced(tf1, monkeypatch):
    from tf1compat.v1.queue_runtime import BATCHING_NAMES, QUEUE_API

    def lowered_batch(*args, **kwargs):
        return "lowered"

    for name in BATCHING_NAMES:
        monkeypatch.setitem(QUEUE_API, name, lowered_batch)
    assert tf1.train.batch is lowered_batch and tf1.train.batch_join is lowered_batch
    assert tf1.contrib.slim.prefetch_queue.prefetch_queue is lowered_batch
    monkeypatch.undo()
    assert tf1.train.batch is tc.batch
    assert tf1.contrib.slim.prefetch_queue.prefetch_queue is tc.prefetch_queue


def test_contrib_modules_map_to_their_tf2_counterparts(tf1):
    import tf_slim
    from tf_slim.training import evaluation, training

    contrib = tf1.contrib
    assert contrib.slim.fully_connected is tf_slim.fully_connected
    assert contrib.slim.learning is tf_slim.learning
    assert contrib.slim.nets.resnet_v1.resnet_v1_50 is not None
    assert contrib.framework.arg_scope is tf_slim.arg_scope
    assert contrib.framework.get_or_create_global_step is v1.train.get_or_create_global_step
    assert contrib.framework.get_variables_to_restore is tf_slim.get_variables_to_restore
    assert contrib.framework.nest is tf.nest
    assert contrib.layers.xavier_initializer is tf_slim.xavier_initializer
    assert contrib.layers.l2_regularizer is tf_slim.l2_regularizer
    assert contrib.layers.optimize_loss is tf_slim.optimize_loss
    assert contrib.deprecated.scalar_summary is v1.summary.scalar
    assert contrib.deprecated.merge_all_summaries is v1.summary.merge_all
    assert contrib.training.create_train_op is training.create_train_op
    assert contrib.training.evaluate_once is evaluation.evaluate_once
    assert contrib.data.map_and_batch is tf.data.experimental.map_and_batch
    assert contrib.data.TFRecordDataset is v1.data.TFRecordDataset
    assert contrib.rnn.static_rnn is v1.nn.static_rnn
    assert contrib.metrics.streaming_accuracy is tf_slim.metrics.streaming_accuracy
    assert contrib.losses.softmax_cross_entropy is tf_slim.losses.softmax_cross_entropy
    assert contrib.lookup.HashTable is v1.lookup.StaticHashTable
    assert contrib.util.constant_value is tf.get_static_value
    assert contrib.signal.stft is tf.signal.stft
    assert contrib.stateless.stateless_random_uniform is tf.random.stateless_uniform


def test_unsupported_names_import_and_raise_when_called_naming_the_alternative(tf1):
    quantize = tf1.contrib.quantize
    with pytest.raises(UnsupportedTF1Error) as excinfo:
        quantize.create_training_graph(quant_delay=0)
    error = excinfo.value
    assert isinstance(error, NotImplementedError)
    assert error.name == "tf.contrib.quantize.create_training_graph"
    assert "tfmot.quantization.keras.quantize_model" in error.alternative
    assert str(error).startswith("tf.contrib.quantize.create_training_graph is not available")

    with pytest.raises(UnsupportedTF1Error, match=r"tf\.contrib\.rnn\.LSTMCell .*tf-keras"):
        tf1.contrib.rnn.LSTMCell(8)

    class MyCell(tf1.contrib.rnn.LayerNormBasicLSTMCell):  # defining a subclass still works
        pass

    with pytest.raises(UnsupportedTF1Error, match="LayerNormBasicLSTMCell"):
        MyCell()
    with pytest.raises(UnsupportedTF1Error, match=r"tf\.contrib\.learn\.Estimator"):
        tf1.contrib.learn.Estimator(model_fn=None)
    with pytest.raises(UnsupportedTF1Error, match=r"tf.feature_column"):
        tf1.contrib.layers.real_valued_column("x")


def test_tf1_version_float_dimensions_and_the_modules_beside_the_api(tf1):
    from tf1compat.v1 import mnist_tutorial
    from tf1compat.v1.namespace import resolve

    assert tf1.__version__ == tf1.VERSION == tf1.version.VERSION == "1.15.5"
    assert tf1.version.TF2_VERSION == tf.__version__ and tf1.compat.v2.__version__ == tf.__version__
    with tf.Graph().as_default():
        assert tf1.get_variable("w", [3, 3, 6 / 2, 8]).shape.as_list() == [3, 3, 3, 8]
        images = tf1.placeholder(tf.float32, [None, 28.0, 28.0, 1])
        net = tf1.contrib.slim.conv2d(images, 4, [3.0, 3], scope="conv")
        net = tf1.contrib.layers.max_pool2d(net, [2.0, 2], stride=[2.0, 2])
        assert net.shape.as_list() == [None, 14, 14, 4]
        assert tf1.contrib.framework.model_variable("m", [2.0]).shape.as_list() == [2]
    input_data = resolve("tensorflow.examples.tutorials.mnist.input_data")
    assert input_data.read_data_sets is mnist_tutorial.read_data_sets
    assert resolve("tensorflow.examples.tutorials.mnist").mnist.inference is \
        mnist_tutorial.inference
    learn = resolve("tensorflow.contrib.learn.python.learn.datasets")
    assert learn is tf1.contrib.learn.datasets and learn.mnist.load_mnist is \
        mnist_tutorial.load_mnist
    assert tf1.contrib.learn.datasets.base.Datasets is mnist_tutorial.Datasets
    with pytest.raises(ModuleNotFoundError, match=(
            r"'tensorflow.examples.tutorials.word2vec': tf1compat run mode does not provide "
            r"it; it provides tensorflow.examples.tutorials.mnist")):
        resolve("tensorflow.examples.tutorials.word2vec")
    with pytest.raises(ModuleNotFoundError, match=(
            r"'tensorflow.contrib.learn.python.learn.estimators': tf1compat run mode does not "
            r"provide it")):
        resolve("tensorflow.contrib.learn.python.learn.estimators")


def test_constants_of_contrib_parts_without_counterpart_keep_their_tf1_values(tf1):
    learn = tf1.contrib.learn
    assert (learn.ModeKeys.TRAIN, learn.ModeKeys.EVAL, learn.ModeKeys.INFER) == (
        "train", "eval", "infer")
    mode = "train"
    assert mode == learn.ModeKeys.TRAIN and mode != learn.ModeKeys.EVAL
    assert learn.ProblemType.LOGISTIC_REGRESSION == 3
    assert learn.PredictionKey.PROBABILITIES == "probabilities"
    with pytest.raises(UnsupportedTF1Error, match=r"tf\.contrib\.learn\.ModeKeys\.validate"):
        learn.ModeKeys.validate(mode)
    with pytest.raises(UnsupportedTF1Error, match=r"tf\.contrib\.learn\.ModeKeys .*tf\.keras"):
        learn.ModeKeys()


def test_every_contrib_module_of_the_table_builds(tf1):
    from tf1compat.v1.contrib_table import CONTRIB
    from tf1compat.v1.proxy import unsupported_alternative

    for name, spec in CONTRIB.items():
        module = getattr(tf1.contrib, name)
        assert module.__name__ == f"tensorflow.contrib.{name}"
        assert (unsupported_alternative(module) is None) == (spec.maps_to is not None), name
        for unsupported_name in spec.unsupported:
            assert unsupported_alternative(getattr(module, unsupported_name)) is not None


def test_contrib_factorization_is_tensorflows_clustering_ops(tf1):
    """Contract: TF 1.x moved contrib.factorization's KMeans into TensorFlow's
    clustering ops; TensorFlow 2.21 still has it there with TF1's constants."""
    from tensorflow.python.ops import clustering_ops

    from tf1compat.errors import UnsupportedTF1Error

    factorization = tf1.contrib.factorization
    assert factorization.KMeans is clustering_ops.KMeans
    assert (factorization.RANDOM_INIT, factorization.KMEANS_PLUS_PLUS_INIT,
            factorization.KMC2_INIT, factorization.SQUARED_EUCLIDEAN_DISTANCE,
            factorization.COSINE_DISTANCE) == (
        "random", "kmeans_plus_plus", "kmc2", "squared_euclidean", "cosine")
    with pytest.raises(UnsupportedTF1Error, match=r"tf\.contrib\.factorization\.WALSModel .*"
                                                  r"TensorFlow Recommenders"):
        factorization.WALSModel()


def test_unknown_names_raise_attribute_and_module_not_found_errors(tf1):
    from tf1compat.v1.namespace import resolve

    with pytest.raises(AttributeError, match=r"'nosuch': tf1compat run mode does not provide "
                                             r"it; it provides \['autograph', "):
        tf1.contrib.nosuch  # noqa: B018
    with pytest.raises(ModuleNotFoundError, match="No module named 'tensorflow.contrib.nosuch'"):
        resolve("tensorflow.contrib.nosuch")
    with pytest.raises(ModuleNotFoundError, match=(
            r"'tensorflow.contrib.layers.python.layers': tf1compat run mode does not provide "
            r"it; import tf.contrib's modules themselves \(module 'tf.contrib.layers' has no "
            r"attribute 'python'\)")):
        resolve("tensorflow.contrib.layers.python.layers")
    with pytest.raises(UnsupportedTF1Error, match="tf.experimental.tensorrt.Converter"):
        resolve("tensorflow.contrib.tensorrt").create_inference_graph(None, [])
    with pytest.raises(AttributeError, match="module 'tf.contrib.framework' has no attribute"):
        tf1.contrib.framework.not_a_name  # noqa: B018
    with pytest.raises(AttributeError, match="`dense` is not available with Keras 3"):
        tf1.layers.dense  # noqa: B018
    assert resolve("tensorflow.python.ops") is sys.modules["tensorflow.python.ops"]
    assert resolve("tensorflow.python.not_loaded_yet") is None  # imported by TensorFlow
    assert resolve("tensorflow.contrib.slim") is tf1.contrib.slim


def test_program_files_are_the_roots_minus_libraries_below_them():
    from tf1compat.v1.scope import ImportScope

    scope = ImportScope()
    site_packages = os.path.dirname(os.path.dirname(np.__file__))
    assert site_packages in {os.path.realpath(p) for p in site.getsitepackages()}
    scope.add_roots([os.path.dirname(site_packages)])
    assert scope.is_program_file(os.path.join(os.path.dirname(site_packages), "train.py"))
    assert not scope.is_program_file(np.__file__)  # a library below the root
    assert not scope.is_program_file(__file__)  # outside every root
    scope.add_roots([os.path.dirname(np.__file__)])  # e.g. `run -m` on an installed package
    assert scope.is_program_file(np.__file__)
    assert not scope.is_program_file(tc.__file__)


NOTEBOOK_CELL = """
import tf_slim  # imported by the program itself: fixed for current TensorFlow too
import tensorflow as tf
from tensorflow.contrib import slim
same = (tf is tf1, slim is tf.contrib.slim,
        hasattr(tf_slim.data.tfexample_decoder.control_flow_ops, "case"))
eager, batch_module = tf.executing_eagerly(), tf.train.batch.__module__
queue = tf.train.input_producer(tf.range(5), num_epochs=1, shuffle=False)
batch = tf.train.batch([queue.dequeue()], 5)
with tf.Session() as sess:
    sess.run(tf.local_variables_initializer())
    tf.train.start_queue_runners(sess)  # no Coordinator
    values = sess.run(batch).tolist()
"""


@pytest.mark.timeout(120)
def test_install_gives_code_without_a_file_tf1_idempotently_until_uninstalled(tmp_path):
    import builtins

    import tf1compat.v1

    original_import = builtins.__import__
    tf1 = tf1compat.v1.install([tmp_path])
    try:
        assert tf1compat.v1.install() is tf1
        cell = {"__name__": "__main__", "tf1": tf1}  # a notebook cell: no __file__
        exec(NOTEBOOK_CELL, cell)
    finally:
        tf1compat.v1.uninstall()
    assert cell["same"] == (True, True, True)
    assert (cell["eager"], cell["batch_module"]) == (False, "tf1compat.pipeline.queues")
    assert cell["values"] == [0, 1, 2, 3, 4]
    assert builtins.__import__ is original_import and tf.executing_eagerly()
    after = {"__name__": "__main__"}
    exec("import tensorflow as tf", after)
    assert after["tf"] is sys.modules["tensorflow"]


def test_docs_contrib_tables_match_the_entries():
    import pathlib
    import re

    from tf1compat.v1.contrib_table import CONTRIB
    page = (pathlib.Path(__file__).resolve().parent.parent / "docs" / "run-mode.md").read_text()
    section = page[page.index("## `tf.contrib` in run mode"):
                   page.index("## Classic programs")]
    rows = [[cell.strip() for cell in row.split(" | ")]
            for row in re.findall(r"^\| `(.+) \|$", section, re.MULTILINE)
            if not row.startswith("tf.contrib.`")]  # the headers
    assert {row[0].rstrip("`"): row[1] for row in rows} == {
        name: spec.maps_to or spec.alternative for name, spec in CONTRIB.items()}
    without = sum(spec.maps_to is None for spec in CONTRIB.values())
    assert f"The other {without} modules have no counterpart" in section


@pytest.mark.timeout(30)
def test_lazy_attribute_survives_a_failing_factory_and_a_race():
    import threading
    import time

    from tf1compat.v1.proxy import ProxyModule

    calls = []

    def flaky():
        calls.append(1)
        if len(calls) == 1:
            raise ImportError("first build fails")
        return object()

    module = ProxyModule("tensorflow.contrib", lazy={"slim": flaky}, fallback=lambda name: None)
    with pytest.raises(ImportError, match="first build fails"):
        module.slim  # noqa: B018
    built = module.slim  # the factory is kept for the next access, not lost
    assert module.slim is built and len(calls) == 2

    started = threading.Barrier(2)

    def slow():
        time.sleep(0.2)
        return object()

    module = ProxyModule("tensorflow.contrib", lazy={"slim": slow}, fallback=lambda name: None)
    seen, failures = [], []

    def first_access():
        started.wait()
        try:
            seen.append(module.slim)
        except AttributeError as e:
            failures.append(e)

    threads = [threading.Thread(target=first_access) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == [] and len(seen) == 2 and seen[0] is seen[1] is module.slim
