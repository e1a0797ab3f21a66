"""What tf-slim's layers, nets, variables, metrics, losses and training loops need
on TensorFlow 2.21, as stand-in namespaces for :class:`~tf1compat.slim._patch.TfSlimRepair`.

What breaks, found by the tests shipped in the tf-slim 1.1.0 wheel and by a scan
of every ``<private TensorFlow module>.<name>`` tf-slim's modules use:

* ``slim.batch_norm`` (the normalizer of the Inception, ResNet and MobileNet nets)
  builds ``tensorflow.python.layers.normalization.BatchNormalization``, which
  TensorFlow 2.21 loads lazily from ``tf_keras.legacy_tf_layers.normalization``;
  tf-keras 2.21 ships that module as ``tf_keras.src.legacy_tf_layers.normalization``
  (and TensorFlow's own legacy layers have no normalization). tf-slim's
  ``layers.normalization_layers`` gets that module's ``BatchNormalization`` and
  ``batch_normalization``, imported on first use: the Keras 2 layer TF 1.x's
  ``tf.layers`` was. Without tf-keras installed they raise ``ImportError`` naming
  the package.
* ``ops.Tensor`` and ``ops.IndexedSlices`` (``slim.batch_norm(...,
  updates_collections=None)``, ``optimize_loss``, gradient multipliers and
  clipping in ``learning`` and ``training``, ``rev_block``): TensorFlow 2.21's
  ``framework.ops`` no longer has them; they are ``tf.Tensor`` and ``tf.IndexedSlices``.
* ``array_ops.unstack`` and ``.stack`` (``layers.py``'s ``_dense_inner_flatten``,
  ``metric_ops``), ``control_flow_ops.cond`` (``utils.smart_cond``, ``metric_ops``),
  ``.Assert`` (``histogram_ops``), ``.while_loop`` (``metric_learning``'s losses),
  ``variable_scope.variable`` (``local_variable``, ``global_variable``): the public
  ``tf.unstack``, ``tf.stack``, ``tf.compat.v1.cond``, ``Assert``, ``while_loop``
  and ``Variable``, the functions TensorFlow moved.

Each entry only adds the missing names to a stand-in for one tf-slim module's
global (TensorFlow's modules are never changed), except the normalization layers,
which always come from tf-keras (TensorFlow's lazy path cannot load).
"""

import functools
import importlib
import types
from collections.abc import Callable, Mapping
from typing import Any

from tf1compat._tf import tf, v1
from tf1compat._versions import keras2_install_command

__all__ = ["KERAS2_NORMALIZATION", "layer_namespaces"]

KERAS2_NORMALIZATION = "tf_keras.src.legacy_tf_layers.normalization"
# (tf-slim module, global name, replacements, only_missing): Patches.rebind_namespace's
# arguments
Rebinding = tuple[types.ModuleType, str, Mapping[str, object], bool]


@functools.cache  # one function per name: applying the repair again changes nothing
def _keras2_layer(name: str) -> Callable[..., Any]:
    """tf-keras's ``name`` from :data:`KERAS2_NORMALIZATION`, imported when first
    called (importing tf-keras registers its names on TensorFlow's objects, so the
    repair itself does not); without tf-keras an ImportError names the package."""
    def build(*args: Any, **kwargs: Any) -> Any:
        try:
            module = importlib.import_module(KERAS2_NORMALIZATION)
        except ImportError as e:
            raise ImportError(
                f"slim.batch_norm needs Keras 2's {name} layer from the tf-keras package "
                f"({keras2_install_command()}, or tf1compat[gpu]); TensorFlow cannot "
                f"load its own ({e})") from e
        return getattr(module, name)(*args, **kwargs)
    build.__name__ = build.__qualname__ = name
    return build


def layer_namespaces() -> list[Rebinding]:
    """``(tf-slim module, global name, replacements, only_missing)`` entries for
    tf-slim beyond its data API."""
    from tf_slim import learning
    from tf_slim.layers import layers, optimizers, rev_block_lib, utils
    from tf_slim.losses import metric_learning
    from tf_slim.metrics import histogram_ops, metric_ops
    from tf_slim.ops import variables
    from tf_slim.training import training

    framework = {"Tensor": tf.Tensor, "IndexedSlices": tf.IndexedSlices}
    return [
        (layers, "normalization_layers", {name: _keras2_layer(name) for name in (
            "BatchNormalization", "batch_normalization")}, False),
        (layers, "array_ops", {"unstack": tf.unstack, "stack": tf.stack}, True),
        (utils, "ops", framework, True),
        (utils, "control_flow_ops", {"cond": v1.cond}, True),
        (optimizers, "ops", framework, True),
        (learning, "ops", framework, True),
        (training, "ops", framework, True),
        (rev_block_lib, "framework_ops", framework, True),
        (variables, "variable_scope", {"variable": v1.Variable}, True),
        (metric_ops, "control_flow_ops", {"cond": v1.cond}, True),
        (metric_ops, "array_ops", {"stack": tf.stack}, True),
        (histogram_ops, "control_flow_ops", {"Assert": v1.Assert}, True),
        (metric_learning, "control_flow_ops", {"while_loop": v1.while_loop}, True),
    ]
