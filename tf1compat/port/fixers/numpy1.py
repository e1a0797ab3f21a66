"""NumPy 1.x's removed names and array methods to their NumPy 2 spellings, from run
mode's own table (:mod:`tf1compat.v1.numpy1`: each row the value run mode gives and
the source form a port writes): ``np.float_`` -> ``np.float64``, ``np.int`` ->
``int``, ``np.asscalar(x)`` -> ``x.item()``, ``np.in1d(a, b)`` ->
``np.isin(a, b).ravel()``, ``x.tostring()`` -> ``x.tobytes()``,
``x.ptp()`` -> ``np.ptp(x)``.

A row without a source form, or a use its form does not fit (``f = np.asscalar``),
calls run mode's own function, written beside the program
(:mod:`tf1compat.port.support`): ``numpy1.fromstring(s, dtype)`` after ``from
tf1_legacy import numpy1``. Only names that are NumPy's are changed: an ``np`` that
is not ``numpy`` stays; a method call is changed on any object but a module, as run
mode changes it.
"""

import libcst as cst
from libcst.codemod.visitors import RemoveImportsVisitor
from libcst.metadata import ParentNodeProvider

from tf1compat.port.fixers._base import Fixer, top_level_statements
from tf1compat.port.fixers._templates import (
    fill,
    fits,
    modules_named,
    needs_parentheses,
    takes_call,
)
from tf1compat.port.support import SUPPORT_PACKAGE
from tf1compat.v1 import numpy1

__all__ = ["NumPy1"]

_SUPPORT = numpy1.__name__.rpartition(".")[2]
_WRAPPING_PARENTS = (cst.Attribute, cst.Subscript, cst.BinaryOperation, cst.UnaryOperation)


class NumPy1(Fixer):
    """Spells NumPy 1.x's removed names and methods as NumPy 2 has them."""

    METADATA_DEPENDENCIES = (*Fixer.METADATA_DEPENDENCIES, ParentNodeProvider)

    def __init__(self, context, file):
        super().__init__(context, file)
        self._numpy = None
        self._calls = {}      # original call -> its replacement
        self._names = {}      # original name node -> its replacement

    def visit_Module(self, node):
        super().visit_Module(node)
        for _, small in top_level_statements(node):
            if isinstance(small, cst.Import):
                for alias in small.names:
                    if alias.evaluated_name == "numpy" and self._numpy is None:
                        self._numpy = alias.evaluated_alias or "numpy"
        return True

    def _numpy_name(self):
        if self._numpy is None:
            self.add_import("numpy", asname="np")
            self._numpy = "np"
        return self._numpy

    def _removed_name(self, node):
        dotted = self.dotted_name(node)
        if dotted is None or not dotted.startswith("numpy."):
            return None
        name = dotted[len("numpy."):]
        return name if name in numpy1.NAME_ROWS else None

    def _support(self, name):
        self.file.support.add((numpy1.__name__, name))
        self.add_import(SUPPORT_PACKAGE, _SUPPORT)
        return cst.parse_expression(f"{_SUPPORT}.{name}")

    def _spelling(self, name, call=None, receiver=None, rows=None):
        """The replacement of the removed ``name``: of the whole ``call`` when given
        (``receiver``: the object of a method call), else of the name alone."""
        template = (rows or numpy1.NAME_ROWS)[name].source
        if template is None or not fits(template, call) \
                or receiver is not None and not takes_call(template):
            support = self._support(name)
            if call is None:
                return support
            if receiver is None:
                return call.with_changes(func=support)
            receiver_arg = cst.Arg(receiver, comma=cst.Comma(
                whitespace_after=cst.SimpleWhitespace(" ")) if call.args else
                cst.MaybeSentinel.DEFAULT)
            return call.with_changes(func=support, args=[receiver_arg, *call.args])
        for module in modules_named(template):
            self.add_import(module)
        numpy = self._numpy_name() if "NP" in template else "np"
        if call is not None and not takes_call(template):
            return call.with_changes(func=fill(template, numpy=numpy))
        return fill(template, numpy=numpy, receiver=receiver, call=call)

    def visit_Call(self, node):
        func = node.func
        name = self._removed_name(func)
        if name is not None:
            self._calls[node] = (name, None)
        elif isinstance(func, cst.Attribute) and func.attr.value in numpy1.METHOD_ROWS \
                and self.dotted_name(func.value) is None:
            self._calls[node] = (func.attr.value, numpy1.METHOD_ROWS)
        return True

    def leave_Call(self, original_node, updated_node):
        if original_node not in self._calls:
            return updated_node
        name, rows = self._calls[original_node]
        if rows is None:
            replacement = self._spelling(name, call=updated_node)
            self._forget_import(original_node.func, name)
            self.changed(original_node, f"numpy.{name}", self._shown(replacement))
        else:
            replacement = self._spelling(name, call=updated_node, rows=rows,
                                         receiver=updated_node.func.value)
            self.changed(original_node, f".{name}()", self._shown(replacement))
        return replacement

    def visit_Attribute(self, node):
        self._maybe_name(node)
        return True

    def visit_Name(self, node):
        self._maybe_name(node)
        return True

    def _maybe_name(self, node):
        name = self._removed_name(node)
        if name is None:
            return
        parent = self.get_metadata(ParentNodeProvider, node)
        if isinstance(parent, cst.Call) and parent.func is node \
                or isinstance(parent, cst.ImportAlias) \
                or isinstance(parent, cst.Attribute) and parent.attr is node:
            return  # a call (visit_Call), a name imported, the attr of np.x
        replacement = self._spelling(name)
        if needs_parentheses(replacement) and isinstance(parent, _WRAPPING_PARENTS):
            replacement = replacement.with_changes(lpar=[cst.LeftParen()],
                                                   rpar=[cst.RightParen()])
        self._names[node] = replacement
        self._forget_import(node, name)
        self.changed(node, f"numpy.{name}", self._shown(replacement))

    def _forget_import(self, node, name):
        """A name from ``from numpy import x``: the import goes once it is unused."""
        if isinstance(node, cst.Name):
            RemoveImportsVisitor.remove_unused_import(self.context, "numpy", name)

    @staticmethod
    def _shown(node):
        return cst.Module([]).code_for_node(node)

    def leave_Attribute(self, original_node, updated_node):
        return self._names.get(original_node, updated_node)

    def leave_Name(self, original_node, updated_node):
        return self._names.get(original_node, updated_node)
