"""tf-slim on TensorFlow 2.21 without tf1compat: tf-slim 1.1 looks up private
TensorFlow names that TensorFlow moved (its data decoders' ``control_flow_ops.case``,
``ops.IndexedSlices`` in gradient clipping, ...) and builds ``batch_norm`` from a Keras
2 module tf-keras moved. A program that uses tf-slim (``import tf_slim``, or
``tf.contrib.slim`` ported to it) gets run mode's repair, without tf1compat's additions,
written beside it as ``tf1_legacy/tf_slim_repair.py``, and its entry file calls
``repair_tf_slim()`` right after importing TensorFlow: an explicit call that changes
tf-slim's modules alone. ``batch_norm`` and slim's nets (built on it) also need
tf-keras (:mod:`tf1compat.port.fixers.keras2`).
"""

import libcst as cst

from tf1compat.port.fixers._base import Fixer, statement_lines
from tf1compat.port.fixers.contrib import TF_SLIM, contrib_home
from tf1compat.port.fixers.graph_mode import after_preamble
from tf1compat.port.fixers.keras2 import TF_KERAS
from tf1compat.port.support import SLIM_REPAIR, SUPPORT_PACKAGE

__all__ = ["TfSlimNames", "TfSlimEntry"]

_REPAIR = "repair_tf_slim"
# tf-slim's names that build Keras 2's BatchNormalization (the nets use batch_norm)
_KERAS2_NAMES = ("tf_slim.batch_norm", "tf_slim.layers.batch_norm", "tf_slim.nets")


def _slim_path(dotted):
    """``dotted`` as a tf_slim path (through tf.contrib's table), or None."""
    if dotted.startswith("tensorflow.contrib."):
        dotted = contrib_home(dotted).path or ""
    return dotted if dotted == "tf_slim" or dotted.startswith("tf_slim.") else None


class TfSlimNames(Fixer):
    """Finds the file's uses of tf-slim: the program then needs the repair (and
    tf-keras, for batch_norm and the nets)."""

    def _visit(self, node):
        dotted = self.dotted_name(node)
        path = _slim_path(dotted) if dotted else None
        if path is None:
            return True
        self.file.requirements.add(TF_SLIM)
        if any(path == name or path.startswith(name + ".") for name in _KERAS2_NAMES):
            self.file.requirements.add(TF_KERAS)
        return True

    def visit_Attribute(self, node):
        return self._visit(node)

    def visit_Name(self, node):
        return self._visit(node)

    def visit_ImportAlias(self, node):
        name = cst.Module([]).code_for_node(node.name)
        if name == "tf_slim" or name.startswith("tf_slim."):
            self.file.requirements.add(TF_SLIM)
        return True


class TfSlimEntry(Fixer):
    """The entry file of a tf-slim program calls the repair before the model is built."""

    def __init__(self, context, file):
        super().__init__(context, file)
        self._called = False

    def visit_Name(self, node):
        if node.value == _REPAIR:
            self._called = True

    def leave_Module(self, original_node, updated_node):
        if TF_SLIM not in self.file.requirements or self._called:
            return updated_node
        body = list(updated_node.body)
        position = next((index + 1 for index, statement in enumerate(body)
                         if "disable_v2_behavior()" in cst.Module([]).code_for_node(statement)
                         and isinstance(statement, cst.SimpleStatementLine)),
                        after_preamble(body))
        body[position:position] = statement_lines(
            f"from {SUPPORT_PACKAGE}.{SLIM_REPAIR} import {_REPAIR}\n"
            f"{_REPAIR}()  # tf-slim's names that TensorFlow moved\n")
        self.file.support.add((SLIM_REPAIR, _REPAIR))
        anchor = original_node.body[min(position, len(original_node.body)) - 1] \
            if position else original_node
        self.changed(anchor, "tf-slim on TensorFlow 2", f"{_REPAIR}()")
        return updated_node.with_changes(body=body)
