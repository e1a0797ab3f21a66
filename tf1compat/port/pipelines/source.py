"""The program's files as concrete syntax trees, and where a traceback line is in them.

A :class:`SourceFile` parses one file with LibCST (formatting and comments kept)
and answers what the rewrite asks: the statement a line of a traceback belongs to,
the block holding a statement, the function around it, the names a statement reads
and writes (:func:`names_of`).
"""

import ast
import dataclasses
import textwrap

import libcst as cst
from libcst.metadata import MetadataWrapper, ParentNodeProvider, PositionProvider

__all__ = ["SourceFile", "Names", "names_of", "call_name"]



class SourceFile:
    """One file of the program: ``path``, ``text`` and its LibCST ``module``."""

    def __init__(self, path, text):
        self.path, self.text = path, text
        self.module = cst.parse_module(text)
        wrapper = MetadataWrapper(self.module, unsafe_skip_copy=True)
        self.positions = wrapper.resolve(PositionProvider)
        self.parents = wrapper.resolve(ParentNodeProvider)
        self._statements = [node for node in self.positions
                            if isinstance(node, (cst.SimpleStatementLine,
                                                 cst.BaseCompoundStatement))]

    def lines(self, node):
        """``(first line, last line)`` of ``node``."""
        position = self.positions[node]
        return position.start.line, position.end.line

    def statement_at(self, line):
        """The innermost statement holding ``line`` (a compound statement when the line
        is in its header), or None."""
        holding = [node for node in self._statements
                   if self.lines(node)[0] <= line <= self.lines(node)[1]]
        if not holding:
            return None
        return min(holding, key=lambda node: (self.lines(node)[1] - self.lines(node)[0],
                                              -self.lines(node)[0]))

    def code(self, node):
        return self.module.code_for_node(node)

    def block_of(self, statement):
        """``(block node, its statements)`` of the block that holds ``statement``."""
        parent = self.parents[statement]
        return parent, list(parent.body)

    def enclosing(self, node, types):
        """The nearest ancestor of ``node`` of one of ``types``, or None."""
        while node in self.parents:
            node = self.parents[node]
            if isinstance(node, types):
                return node
        return None

    def function_of(self, statement):
        """The function (FunctionDef) or module whose own body holds ``statement``."""
        return self.enclosing(statement, (cst.FunctionDef,)) or self.module

    def ancestors(self, node):
        """The chain of statements holding ``node``, outermost first (``node`` last)."""
        chain = [node]
        while node in self.parents and not isinstance(self.parents[node], cst.Module):
            node = self.parents[node]
            if isinstance(node, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
                chain.append(node)
        return chain[::-1]

    def functions_named(self, name):
        """The ``def name(...)`` statements of this file."""
        return [node for node in self._statements
                if isinstance(node, cst.FunctionDef) and node.name.value == name]

    def statements(self):
        return list(self._statements)


@dataclasses.dataclass(frozen=True)
class Names:
    """What a statement reads and writes: ``reads`` (names loaded), ``writes`` (names
    bound: assigned, defined, imported; the base name of ``x.a = ...`` / ``x[i] = ...``
    too, which it also reads), ``calls`` (dotted names of functions it calls)."""

    reads: frozenset
    writes: frozenset
    calls: tuple


class _NameCollector(ast.NodeVisitor):
    def __init__(self):
        self.reads, self.writes, self.calls = set(), set(), []

    def visit_Name(self, node):
        (self.writes if isinstance(node.ctx, (ast.Store, ast.Del)) else self.reads).add(node.id)

    def _target_base(self, target):
        while isinstance(target, (ast.Attribute, ast.Subscript)):
            target = target.value
        return target

    def visit_Attribute(self, node):
        if isinstance(node.ctx, ast.Store):
            base = self._target_base(node)
            if isinstance(base, ast.Name):
                self.writes.add(base.id)
                self.reads.add(base.id)
        self.generic_visit(node)

    visit_Subscript = visit_Attribute

    def visit_FunctionDef(self, node):
        self.writes.add(node.name)
        for item in [*node.decorator_list, *node.args.defaults, *node.args.kw_defaults]:
            if item is not None:
                self.visit(item)
        inner = _NameCollector()
        for statement in node.body:
            inner.visit(statement)
        parameters = {a.arg for a in [*node.args.posonlyargs, *node.args.args,
                                      *node.args.kwonlyargs, node.args.vararg,
                                      node.args.kwarg] if a is not None}
        self.reads.update(inner.reads - parameters - inner.writes)
        self.calls.extend(inner.calls)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_AugAssign(self, node):
        base = self._target_base(node.target)
        if isinstance(base, ast.Name):       # x += 1 reads x, then sets it
            self.reads.add(base.id)
            self.writes.add(base.id)
        self.generic_visit(node)

    def visit_ClassDef(self, node):
        self.writes.add(node.name)
        self.generic_visit(node)

    def visit_Import(self, node):
        for alias in node.names:
            self.writes.add(alias.asname or alias.name.partition(".")[0])

    visit_ImportFrom = visit_Import

    def visit_Call(self, node):
        name = call_name(node.func)
        if name:
            self.calls.append(name)
        self.generic_visit(node)


def call_name(node):
    """``a.b.c`` for an ``ast`` Name/Attribute chain, else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return ".".join([node.id, *parts[::-1]])
    return None


def names_of(source, node):
    """The :class:`Names` of a statement (or expression) ``node`` of ``source``."""
    code = textwrap.dedent(source.code(node)).strip("\n")
    if isinstance(node, cst.BaseExpression):
        code = f"({code})"
    collector = _NameCollector()
    collector.visit(ast.parse(code))
    return Names(frozenset(collector.reads), frozenset(collector.writes),
                 tuple(collector.calls))
