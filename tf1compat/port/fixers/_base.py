"""What every fixer shares: a LibCST codemod over one file that knows which of its
names are TensorFlow's (qualified-name metadata: which ``tf`` is ``tensorflow``,
``import tensorflow.contrib.slim as slim``, ``from tensorflow.contrib import slim``,
and module-level aliases such as ``slim = tf.contrib.slim``) and reports each
edit and each name it leaves, at the line the user wrote.

LibCST keeps every character a fixer does not replace, comments and formatting
included; a fixer replaces the smallest node that does the job."""

import dataclasses

import libcst as cst
from libcst.codemod import CodemodContext, VisitorBasedCodemodCommand
from libcst.codemod.visitors import AddImportsVisitor
from libcst.metadata import PositionProvider, QualifiedNameProvider, QualifiedNameSource

from tf1compat.port.findings import Change, Finding

__all__ = ["PortedFile", "Fixer", "dotted_source", "statement_lines", "top_level_statements"]


@dataclasses.dataclass
class PortedFile:
    """One program file while the fixers work on it: ``path`` as the report shows it,
    whether it is the program's entry file, and what the fixers found and need.
    ``line_of`` maps a line of the text a fixer reads to the line the user wrote."""

    path: str
    is_entry: bool
    changes: list = dataclasses.field(default_factory=list)
    findings: list = dataclasses.field(default_factory=list)
    requirements: set = dataclasses.field(default_factory=set)
    support: set = dataclasses.field(default_factory=set)
    line_of: object = staticmethod(lambda line: line)


def dotted_source(expression):
    """The LibCST expression for a dotted name (``tf.compat.v1.placeholder``)."""
    return cst.parse_expression(expression)


def top_level_statements(module):
    """``(index in module.body, small statement)`` for the module's top-level simple
    statements (imports, assignments, expressions)."""
    for index, statement in enumerate(module.body):
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                yield index, small


def statement_lines(code):
    """Module-level statements parsed from ``code`` (each ends with its newline)."""
    return list(cst.parse_module(code).body)


class Fixer(VisitorBasedCodemodCommand):
    """One TF1-era fact's source rewrite over one file (:class:`PortedFile`).

    Subclasses visit nodes, ask :meth:`dotted_name` what a name is, and report with
    :meth:`changed` and :meth:`not_ported`."""

    DESCRIPTION = ""
    METADATA_DEPENDENCIES = (PositionProvider, QualifiedNameProvider)

    def __init__(self, context: CodemodContext, file: PortedFile):
        super().__init__(context)
        self.file = file
        self._aliases = {}
        self._tensorflow = None

    # -- names -------------------------------------------------------------------

    def visit_Module(self, node):
        """Collect module-level aliases assigned once: ``slim = tf.contrib.slim``."""
        assigned = {}
        for _, small in top_level_statements(node):
            if isinstance(small, cst.Assign) and len(small.targets) == 1 \
                    and isinstance(small.targets[0].target, cst.Name):
                assigned.setdefault(small.targets[0].target.value, []).append(small.value)
        for _, small in top_level_statements(node):
            if isinstance(small, cst.Import) and self._tensorflow is None:
                self._tensorflow = next((alias.evaluated_alias or "tensorflow"
                                         for alias in small.names
                                         if alias.evaluated_name == "tensorflow"), None)
        for name, values in assigned.items():
            if len(values) == 1 and isinstance(values[0], (cst.Name, cst.Attribute)):
                dotted = self._imported_name(values[0])
                if dotted is not None:
                    self._aliases[name] = dotted
        return True

    def _imported_name(self, node):
        for qualified in self.get_metadata(QualifiedNameProvider, node, set()):
            # "a.f().b": an attribute of what a call returned, no name of the module's
            if qualified.source == QualifiedNameSource.IMPORT and "(" not in qualified.name:
                return qualified.name
        return None

    def dotted_name(self, node):
        """The module-qualified name of a Name or Attribute node (``tensorflow.contrib
        .slim.conv2d`` for ``slim.conv2d``, also through a module-level alias such as
        ``slim = tf.contrib.slim``), or None when it is no imported name (a local
        variable, a parameter, a shadowing assignment, the alias itself)."""
        dotted = self._imported_name(node)
        if dotted is not None or not isinstance(node, cst.Attribute):
            return dotted
        for qualified in self.get_metadata(QualifiedNameProvider, node, set()):
            head, dot, rest = qualified.name.partition(".")
            if qualified.source == QualifiedNameSource.LOCAL and head in self._aliases \
                    and "<locals>" not in qualified.name and "(" not in qualified.name:
                return self._aliases[head] + dot + rest
        return None

    def tensorflow_name(self):
        """The module's name for ``tensorflow`` (its ``import tensorflow as tf``), or
        ``tensorflow`` with that import added."""
        if self._tensorflow is None:
            self.add_import("tensorflow")
            self._tensorflow = "tensorflow"
        return self._tensorflow

    # -- reports -------------------------------------------------------------------

    def line(self, node):
        """The line of ``node`` in the file as the user wrote it."""
        return self.file.line_of(self.get_metadata(PositionProvider, node).start.line)

    def changed(self, node, name, replacement):
        self.file.changes.append(Change(self.file.path, self.line(node), name, replacement))

    def not_ported(self, node, name, reason):
        self.file.findings.append(Finding(self.file.path, self.line(node), name, reason))

    def add_import(self, module, obj=None, asname=None):
        """Have ``import module [as asname]`` / ``from module import obj`` at the top."""
        AddImportsVisitor.add_needed_import(self.context, module, obj, asname)
