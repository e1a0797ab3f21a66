"""TF 1.x's float dimensions and version, as run mode's namespace gives them."""

import numpy as np
import pytest

pytestmark = pytest.mark.tf

rules = pytest.importorskip("tf1compat.v1.tf1_rules")

from tf1compat._tf import tf, v1  # noqa: E402


@pytest.fixture
def graph():
    with tf.Graph().as_default() as g:
        yield g


def test_tf_entry_points_take_integral_floats(graph):
    functions = rules.tf_functions()
    channels = 6
    weights = functions["get_variable"]("w", shape=[3, 3, channels / 2, 8])
    local = functions["get_local_variable"]("l", [np.float32(2.0), 4])
    x = functions["placeholder"](tf.float32, [None, 28.0 * 28])
    default = functions["placeholder_with_default"](v1.zeros([2, 3]), shape=(2.0, 3))
    assert weights.shape.as_list() == [3, 3, 3, 8] and local.shape.as_list() == [2, 4]
    assert x.shape.as_list() == [None, 784] and default.shape.as_list() == [2, 3]
    assert functions["get_variable"].__name__ == "get_variable"


def test_a_fraction_is_refused_as_tf1_did(graph):
    with pytest.raises(ValueError, match=r"tf\.get_variable: shape=\[3, 1\.5\]: Ambiguous "
                                         r"dimension: 1\.5"):
        rules.tf_functions()["get_variable"]("w", [3, 1.5])


def test_only_lists_and_tuples_change():
    assert rules.integral_dimensions((2.0, None, 3), "f", "shape") == (2, None, 3)
    assert type(rules.integral_dimensions([np.float64(4.0)], "f", "shape")[0]) is int
    assert rules.integral_dimensions(2.0, "f", "stride") == 2.0  # TF 1.x refused it too
    shape = tf.TensorShape([2, 3])
    assert rules.integral_dimensions(shape, "f", "shape") is shape
    assert rules.integral_dimensions([True, 1], "f", "shape") == [True, 1]


def test_slim_layers_take_float_kernels_and_strides_in_arg_scope(graph):
    import tf_slim

    functions = rules.slim_functions(tf_slim, "tensorflow.contrib.slim")
    conv2d, max_pool2d = functions["conv2d"], functions["max_pool2d"]
    images = v1.placeholder(tf.float32, [2, 8, 8, 3])
    with tf_slim.arg_scope([conv2d, max_pool2d], padding="VALID"):
        net = conv2d(images, 4, [3.0, 3], stride=[1.0, 1.0])
        net = max_pool2d(net, [2.0, 2], stride=[2.0, 2])
    variable = functions["model_variable"]("v", shape=[5.0])
    assert net.shape.as_list() == [2, 3, 3, 4] and variable.shape.as_list() == [5]
    assert set(functions) >= {"conv2d", "separable_conv2d", "avg_pool2d", "variable"}
    with pytest.raises(ValueError, match=r"tf\.contrib\.slim\.conv2d: kernel_size=\[2\.5, 3\]"):
        conv2d(images, 4, [2.5, 3])


def test_version_module_says_tf1_and_keeps_the_real_one():
    version = rules.build_version_module()
    assert version.VERSION == rules.TF1_VERSION == "1.15.5"
    assert version.TF2_VERSION == tf.__version__ and version.TF2_VERSION.startswith("2.")
    assert version.GIT_VERSION == tf.version.GIT_VERSION
    assert version.GRAPH_DEF_VERSION == tf.version.GRAPH_DEF_VERSION
