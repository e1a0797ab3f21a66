"""Graph-mode programs say so: ``tf.compat.v1.disable_v2_behavior()`` right after the
entry file's ``import tensorflow``.

TF1 programs build a graph and run it in sessions; TensorFlow 2 starts eager, where
placeholders, queues and ``tf.Session`` fail. ``disable_eager_execution()`` alone
gives graph mode but keeps TF2's other behaviours, which TF1 programs trip on:
``get_shape()[1].value`` (v2 shapes hold ints), resource variables, v2 control flow
and summaries. ``disable_v2_behavior()`` gives all of TF1's, as ``tf1compat run``
does, so the port computes what the program computed under run mode (what
``--verify`` compares). A program that already chooses (``enable_eager_execution``,
``disable_eager_execution``, ``disable_v2_behavior``) is left as it is.
"""

import libcst as cst

from tf1compat.port.fixers._base import Fixer, statement_lines, top_level_statements

__all__ = ["GraphMode", "CALL", "CHOICES", "after_preamble"]

CALL = "compat.v1.disable_v2_behavior"
# calls by which a program already chose its mode, as qualified names
CHOICES = frozenset(f"tensorflow.{prefix}{name}" for prefix in ("", "compat.v1.")
                    for name in ("enable_eager_execution", "disable_eager_execution",
                                 "disable_v2_behavior", "enable_v2_behavior"))
_COMMENT = "  # TF1's graph mode, shapes, variables and control flow"


def after_preamble(body):
    """Index after the module docstring and ``from __future__`` imports."""
    index = 0
    if body and isinstance(body[0], cst.SimpleStatementLine) \
            and isinstance(body[0].body[0], cst.Expr) \
            and isinstance(body[0].body[0].value, (cst.SimpleString, cst.ConcatenatedString)):
        index = 1
    while index < len(body) and isinstance(body[index], cst.SimpleStatementLine) and any(
            isinstance(small, cst.ImportFrom) and small.module is not None
            and cst.Module([]).code_for_node(small.module) == "__future__"
            for small in body[index].body):
        index += 1
    return index


class GraphMode(Fixer):
    """Adds the ``disable_v2_behavior()`` call to the entry file (module docstring)."""

    def __init__(self, context, file):
        super().__init__(context, file)
        self._chosen = False
        self._import_at = None   # (statement index, its tensorflow name, prefix of CALL)
        self._bound = set()

    def visit_Module(self, node):
        super().visit_Module(node)
        for index, small in top_level_statements(node):
            if not isinstance(small, (cst.Import, cst.ImportFrom)) \
                    or isinstance(small.names, cst.ImportStar):
                continue
            for alias in small.names:
                bound = alias.evaluated_alias or alias.evaluated_name.split(".")[0]
                self._bound.add(bound)
                if self._import_at is None and isinstance(small, cst.Import):
                    self._import_at = self._tensorflow_import(index, alias, bound)
        return True

    @staticmethod
    def _tensorflow_import(index, alias, bound):
        if alias.evaluated_name == "tensorflow":
            return index, bound, CALL
        if alias.evaluated_name == "tensorflow.compat.v1" and alias.asname:
            return index, bound, CALL.removeprefix("compat.v1.")
        return None

    def visit_Call(self, node):
        if self.dotted_name(node.func) in CHOICES:
            self._chosen = True
        return True

    def leave_Module(self, original_node, updated_node):
        if self._chosen:
            return updated_node
        body = list(updated_node.body)
        if self._import_at is not None:
            index, name, call = self._import_at
            call = f"{name}.{call}()"
            new = statement_lines(f"{call}{_COMMENT}\n")
            position, anchor = index + 1, original_node.body[index]
        else:
            name = "tf" if "tf" not in self._bound else "tensorflow"
            imported = "import tensorflow as tf" if name == "tf" else "import tensorflow"
            call = f"{name}.{CALL}()"
            new = statement_lines(f"{imported}\n{call}{_COMMENT}\n")
            position = after_preamble(body)
            anchor = original_node.body[position] if position < len(original_node.body) \
                else original_node
        body[position:position] = new
        self.changed(anchor, "graph mode", call)
        return updated_node.with_changes(body=body)
