"""TensorFlow's own TF1 -> TF2 tables, as its ``tf_upgrade_v2`` tool keeps them
(``tensorflow.tools.compatibility``: ``all_renames_v2``, ``renames_v2``,
``reorders_v2``, ``module_deprecations_v2``, gathered by ``TFAPIChangeSpec``), read
here and never copied; and which names the installed TensorFlow 2 has.

Every name in these tables is spelled ``tf.a.b``. A contract test checks that the
attributes read here are still there."""

import functools
import importlib

__all__ = ["upgrade_spec", "tf2_has", "tf_object", "SPEC_TABLES"]

_SPEC_MODULE = "tensorflow.tools.compatibility.tf_upgrade_v2"
# the TFAPIChangeSpec attributes port reads: old name -> new name; old name -> the
# v1 argument names by position (None: stays positional); old name -> {keyword:
# new keyword, or None when TF2 dropped it}; old names whose call TF2 changed in
# ways only tf_upgrade_v2's own code rewrites
SPEC_TABLES = ("symbol_renames", "function_reorders", "function_keyword_renames",
               "function_transformers")


@functools.cache
def upgrade_spec():
    """tf_upgrade_v2's ``TFAPIChangeSpec`` of the installed TensorFlow."""
    from tf1compat._tf import tf  # noqa: F401 - TensorFlow's quiet start-up first

    return importlib.import_module(_SPEC_MODULE).TFAPIChangeSpec()


_MISSING = object()


@functools.cache
def tf_object(dotted):
    """What ``tf.a.b`` is in the installed TensorFlow 2 (``tf.compat.v1.a.b`` too),
    or None when it has no such name."""
    from tf1compat._tf import tf

    node = tf
    for part in dotted.split(".")[1:]:
        try:
            node = getattr(node, part, _MISSING)
        except Exception:  # noqa: BLE001 - a lazy module that cannot load (tf.layers)
            return None
        if node is _MISSING:
            return None
    return node


def tf2_has(dotted):
    """True when TensorFlow 2's ``tf`` has ``dotted`` (``tf.io.gfile.exists``)."""
    return tf_object(dotted) is not None
