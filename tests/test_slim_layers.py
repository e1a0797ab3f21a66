"""tf-slim beyond its data API on TensorFlow 2.21: the repair's contract with the
installed tf-slim, checked in this process (and undone afterwards)."""

import ast
import importlib
import os
import types

import pytest

pytestmark = pytest.mark.tf

tf_slim = pytest.importorskip("tf_slim")


@pytest.fixture
def repaired():
    from tf1compat.slim import _patch
    repair = _patch.TfSlimRepair()
    changed = repair.apply()
    yield changed  # [] when the process's repair is in place already
    repair.release()


def private_names_used():
    """``(module, global, name)`` for each ``<private TensorFlow module>.<name>`` in
    tf-slim's own (non-test) modules."""
    root = os.path.dirname(tf_slim.__file__)
    for folder, _, files in os.walk(root):
        for name in sorted(files):
            if not name.endswith(".py") or name.endswith("_test.py"):
                continue
            path = os.path.join(folder, name)
            module_name = ("tf_slim." + os.path.relpath(path, root)[:-3].replace(os.sep, ".")
                           ).removesuffix(".__init__")
            module = importlib.import_module(module_name)
            with open(path) as f:
                tree = ast.parse(f.read())
            for node in ast.walk(tree):
                if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
                    namespace = vars(module).get(node.value.id)
                    if isinstance(namespace, types.ModuleType) and \
                            namespace.__name__.startswith("tensorflow.python"):
                        yield module, node.value.id, node.attr


def resolves(module, global_name, name):
    try:
        getattr(getattr(module, global_name), name)
    except (AttributeError, ImportError):
        return False
    return True


def test_every_private_tensorflow_name_tf_slim_uses_resolves_after_the_repair(repaired):
    pytest.importorskip("tf_keras")
    missing = sorted({f"{module.__name__}: {global_name}.{name}"
                      for module, global_name, name in private_names_used()
                      if not resolves(module, global_name, name)})
    assert missing == []
    from tf_slim.layers import layers

    from tf1compat.slim._layers import KERAS2_NORMALIZATION
    layer = layers.normalization_layers.BatchNormalization(axis=-1, name="bn")
    assert isinstance(layer, importlib.import_module(KERAS2_NORMALIZATION).BatchNormalization)


def test_the_repair_is_undone_and_tensorflow_is_never_changed():
    from tensorflow.python.framework import ops
    from tf_slim.layers import layers, utils

    from tf1compat.slim import _patch
    before = (layers.normalization_layers, utils.ops)
    repair = _patch.TfSlimRepair()
    repair.apply()
    assert utils.ops is not ops and utils.ops.Tensor is __import__("tensorflow").Tensor
    assert not hasattr(ops, "Tensor")
    repair.release()
    assert (layers.normalization_layers, utils.ops) == before


def test_batch_norm_without_tf_keras_names_the_package(monkeypatch):
    from tf1compat.slim import _layers
    monkeypatch.setattr(_layers, "KERAS2_NORMALIZATION", "tf_keras_not_installed.normalization")
    layer = _layers._keras2_layer("BatchNormalization")
    with pytest.raises(ImportError, match=r"slim.batch_norm needs Keras 2's BatchNormalization "
                                          r"layer from the tf-keras package .*No module named "
                                          r"'tf_keras_not_installed'"):
        layer(axis=-1)
