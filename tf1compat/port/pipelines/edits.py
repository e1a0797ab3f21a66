"""The changes the rewrite makes to one file, applied with LibCST in one pass.

Statements are named by the very nodes of the parsed file (LibCST nodes compare by
identity): a statement is removed, replaced by others, or has statements added
before or after it; an expression (a call) is replaced; a function's parameters
are replaced. Everything else is printed as the program wrote it.
"""

import libcst as cst

from tf1compat.port.pipelines import codegen

__all__ = ["FileEdits", "Conflict"]


class Conflict(ValueError):
    """Two changes to one statement or expression."""


class FileEdits:
    """The changes to one :class:`~tf1compat.port.pipelines.source.SourceFile`."""

    def __init__(self, source):
        self.source = source
        self.removed = set()
        self.moved = set()      # statements taken into generated ones (a map function)
        self.replaced = {}      # statement -> [statements]
        self.before = {}        # statement -> [statements]
        self.after = {}         # statement -> [statements]
        self.expressions = {}   # expression -> expression
        self.parameters = {}    # FunctionDef -> Parameters

    @property
    def changed(self):
        return any((self.removed, self.replaced, self.before, self.after, self.expressions,
                    self.parameters))

    def claimed(self):
        """Every statement and expression some change is about."""
        return (self.removed | self.moved | set(self.replaced) | set(self.expressions)
                | set(self.parameters))

    def _claim(self, node):
        if node in self.claimed():
            line = self.source.lines(node)[0]
            raise Conflict(f"{self.source.path}:{line} is changed twice")

    def remove(self, statement):
        self._claim(statement)
        self.removed.add(statement)

    def move(self, statement):
        """Take ``statement`` away from its place: a generated statement holds it now."""
        self._claim(statement)
        self.moved.add(statement)

    def replace(self, statement, statements):
        self._claim(statement)
        self.replaced[statement] = list(statements)

    def insert_before(self, statement, statements):
        self.before.setdefault(statement, []).extend(statements)

    def insert_after(self, statement, statements):
        self.after.setdefault(statement, []).extend(statements)

    def replace_expression(self, expression, new):
        self._claim(expression)
        self.expressions[expression] = new

    def replace_parameters(self, function, parameters):
        self._claim(function)
        self.parameters[function] = parameters

    def parse_statement(self, text):
        """A statement parsed from ``text`` with this file's settings."""
        return cst.parse_statement(text, config=self.source.module.config_for_parsing)

    def generated(self, text, near=None):
        """A statement the rewrite writes, parsed from ``text`` (wrapped when long at
        the indentation of the statement ``near``)."""
        column = self.source.positions[near].start.column if near is not None else 4
        return self.parse_statement(codegen.statement_text(text, column))

    def generated_blocks(self, lines, unit, near):
        """The statements of ``lines`` (:func:`codegen.blocks` with the indentation
        ``unit``), each as :meth:`generated` near ``near``."""
        return [self.generated(line + "\n", near) for line in codegen.blocks(lines, unit)]

    def indent_of(self, statement):
        """The indentation unit of the block holding ``statement``."""
        parent = self.source.parents.get(statement)
        if isinstance(parent, cst.IndentedBlock) and parent.indent is not None:
            return parent.indent
        return self.source.module.default_indent

    def parse_expression(self, text):
        return cst.parse_expression(text, config=self.source.module.config_for_parsing)

    def apply(self):
        """The file's new text."""
        return self.source.module.visit(_Transformer(self)).code


def _section_lines(lines, moved):
    """What stays of the lines before a statement taken away: the blank lines, and the
    comments set apart from it by a blank line (a section's heading); the comments
    right above it describe it and go with it (with a moved one, all of them)."""
    lines = list(lines)
    kept, index = [], len(lines)
    while index and lines[index - 1].comment is not None:   # the comments right above
        index -= 1
    for line in lines[:index]:
        if line.comment is None or not moved:
            kept.append(line)
    return kept


def _joined(first, second):
    """Two runs of leading lines as one, with one blank line where they meet."""
    lines = first + second
    joined = []
    for line in lines:
        if line.comment is None and joined and joined[-1].comment is None:
            continue
        joined.append(line)
    return joined


class _Transformer(cst.CSTTransformer):
    def __init__(self, edits, generated=False):
        self.edits = edits
        self.generated = generated   # inside a generated statement: moved ones stay
        self.pending = [[]]          # per block: blank lines of statements taken away

    def visit_IndentedBlock(self, node):
        self.pending.append([])

    def _statement(self, original, updated):
        edits = self.edits
        if original in edits.moved and self.generated:
            return updated    # in its new place; what goes around its old place stays there
        if original in edits.removed or original in edits.moved:
            result = []
        elif original in edits.replaced:
            result = [self._placed(s) for s in edits.replaced[original]]
            if result:
                result[0] = result[0].with_changes(leading_lines=updated.leading_lines)
        else:
            result = [updated]
        result = ([self._placed(s) for s in edits.before.get(original, ())] + result
                  + [self._placed(s) for s in edits.after.get(original, ())])
        if not result:
            # the blank lines and comments before a statement taken away stay (a moved
            # one's comments go with it)
            lines = _section_lines(updated.leading_lines, moved=original in edits.moved)
            self.pending[-1] = _joined(self.pending[-1], lines)
            return cst.RemovalSentinel.REMOVE
        if self.pending[-1]:
            first = result[0]
            result[0] = first.with_changes(
                leading_lines=_joined(self.pending[-1], list(first.leading_lines)))
            self.pending[-1] = []
        if isinstance(result[-1], cst.FunctionDef) and result[-1] is not updated:
            self.pending[-1] = [cst.EmptyLine(indent=False)]   # a written def: a blank after
        if result == [updated]:
            return updated
        return cst.FlattenSentinel(result)

    def _placed(self, statement):
        """A generated statement, with the changes inside the moved ones it holds."""
        return statement.visit(_Transformer(self.edits, generated=True))

    def leave_SimpleStatementLine(self, original, updated):
        return self._statement(original, updated)

    def leave_If(self, original, updated):
        return self._statement(original, updated)

    leave_For = leave_While = leave_With = leave_Try = leave_If

    def leave_FunctionDef(self, original, updated):
        if original in self.edits.parameters:
            updated = updated.with_changes(params=self.edits.parameters[original])
        return self._statement(original, updated)

    leave_ClassDef = leave_If

    def leave_Call(self, original, updated):
        return self.edits.expressions.get(original, updated)

    def leave_Attribute(self, original, updated):
        return self.edits.expressions.get(original, updated)

    def leave_IndentedBlock(self, original, updated):
        self.pending.pop()
        if not updated.body:
            return updated.with_changes(body=[cst.SimpleStatementLine([cst.Pass()])])
        return updated
