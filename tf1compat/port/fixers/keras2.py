"""TF1's Keras 2 names (``tf.layers.dense``, ``tf.nn.rnn_cell.LSTMCell``,
``tf.contrib.rnn``'s cells, TF1's ``tf.keras``): TensorFlow 2.21's Keras 3 has no
``tf.layers`` and other cells and layers. The port keeps TF1's own (the same layers,
variable names and initializers, as ``tf1compat run`` gives them) by having Keras 2,
the tf-keras package, chosen before TensorFlow loads: the entry file's first lines
set ``TF_USE_LEGACY_KERAS=1`` (:data:`tf1compat.v1.keras2.KERAS2_VARIABLE`), and the
report lists tf-keras as a requirement.

Which names need Keras 2 is run mode's record (:mod:`tf1compat.v1.tf1_names`:
the names Keras 3 lacks), plus any use of TF1's ``tf.keras``.
"""

import libcst as cst

from tf1compat.port.fixers._base import Fixer, statement_lines
from tf1compat.port.fixers.graph_mode import after_preamble
from tf1compat.v1.keras2 import KERAS2_VARIABLE
from tf1compat.v1.tf1_names import recorded_names

__all__ = ["Keras2Names", "Keras2Entry", "TF_KERAS"]

TF_KERAS = "tf-keras"
_KERAS_MODULES = ("tensorflow.keras", "tensorflow.contrib.keras")
_SETTING = f'os.environ.setdefault("{KERAS2_VARIABLE}", "1")  # Keras 2 (tf-keras), as TF1 had\n'


def needs_keras2(dotted):
    """True when the TF1 name ``dotted`` (``tensorflow.layers.dense``) is Keras 2's."""
    module, _, name = dotted.rpartition(".")
    if name in recorded_names()["without_keras2"].get(module, {}):
        return True
    return any(dotted == prefix or dotted.startswith(prefix + ".") for prefix in _KERAS_MODULES)


class Keras2Names(Fixer):
    """Finds the file's uses of Keras 2 names: the program then needs tf-keras."""

    def _visit(self, node):
        dotted = self.dotted_name(node)
        if dotted is not None and dotted.startswith("tensorflow.") and needs_keras2(dotted):
            self.file.requirements.add(TF_KERAS)
            return False
        return True

    def visit_Attribute(self, node):
        return self._visit(node)

    def visit_Name(self, node):
        return self._visit(node)


class Keras2Entry(Fixer):
    """The entry file of a program that needs tf-keras chooses it before anything loads
    TensorFlow."""

    def __init__(self, context, file):
        super().__init__(context, file)
        self._set = False

    def visit_SimpleString(self, node):
        if KERAS2_VARIABLE in node.value:
            self._set = True  # the program (or an earlier port) chooses already

    def leave_Module(self, original_node, updated_node):
        if TF_KERAS not in self.file.requirements or self._set:
            return updated_node
        body = list(updated_node.body)
        position = after_preamble(body)
        first = body[position] if position < len(body) else None
        if isinstance(first, cst.SimpleStatementLine) and isinstance(first.body[0], cst.Import) \
                and [alias.evaluated_name for alias in first.body[0].names] == ["os"] \
                and first.body[0].names[0].asname is None:
            position += 1
            new = statement_lines(_SETTING)
        else:
            new = statement_lines("import os\n" + _SETTING)
        body[position:position] = new
        anchor = original_node.body[position] if position < len(original_node.body) \
            else original_node
        self.changed(anchor, "Keras 2 (tf.layers, RNN cells, TF1's tf.keras)",
                     f"{KERAS2_VARIABLE}=1 before TensorFlow loads")
        return updated_node.with_changes(body=body)
