"""A flag the program defines under one of absl.logging's names (``--log_dir``, ``-v``,
``--logtostderr``, ...): TF 1.5-1.13 let a program define it, TensorFlow 1.14 and
later stop at the definition (``DuplicateFlagError``). Run mode defines it over
absl.logging's (:mod:`tf1compat.v1.tf1_flags`); the port calls the definition through
the same function, written beside the program:
``tf1_flags.define_over_absl_logging(tf.app.flags.DEFINE_string)('log_dir', ...)``
after ``from tf1_legacy import tf1_flags``. Other definitions stay as they are."""

import libcst as cst

from tf1compat.port.fixers._base import Fixer
from tf1compat.port.support import SUPPORT_PACKAGE
from tf1compat.v1 import tf1_flags

__all__ = ["AbslLoggingFlags"]

_SUPPORT = tf1_flags.__name__.rpartition(".")[2]
_WRAPPER = tf1_flags.define_over_absl_logging.__name__
_FLAGS_MODULES = ("tensorflow.flags.", "tensorflow.app.flags.", "tensorflow.compat.v1.flags.",
                  "tensorflow.compat.v1.app.flags.")


def _flag_name(call):
    """The flag name a define call gives as a string literal, or None."""
    positional = [arg for arg in call.args if arg.keyword is None and arg.star == ""]
    named = [arg for arg in call.args if arg.keyword is not None and arg.keyword.value == "name"]
    value = (positional or named or [None])[0]
    value = value.value if value is not None else None
    return value.evaluated_value if isinstance(value, cst.SimpleString) else None


class AbslLoggingFlags(Fixer):
    """Defines a program's flag named like one of absl.logging's over absl.logging's."""

    def __init__(self, context, file):
        super().__init__(context, file)
        self._calls = set()
        self._names = tf1_flags.absl_logging_flag_names()

    def visit_Call(self, node):
        dotted = self.dotted_name(node.func)
        if dotted is not None and dotted.startswith(_FLAGS_MODULES) \
                and dotted.rpartition(".")[2].startswith("DEFINE_") \
                and _flag_name(node) in self._names:
            self._calls.add(node)
        return True

    def leave_Call(self, original_node, updated_node):
        if original_node not in self._calls:
            return updated_node
        self.file.support.add((tf1_flags.__name__, _WRAPPER))
        self.add_import(SUPPORT_PACKAGE, _SUPPORT)
        wrapped = cst.Call(cst.parse_expression(f"{_SUPPORT}.{_WRAPPER}"),
                           [cst.Arg(updated_node.func)])
        self.changed(original_node, f"flag {_flag_name(original_node)!r}",
                     f"defined over absl.logging's ({_SUPPORT}.{_WRAPPER})")
        return updated_node.with_changes(func=wrapped)
