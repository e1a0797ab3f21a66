"""Small questions about the program's source the rewrite asks: which call a
node is, what a statement assigns, where a name is used, and the frames of a
traceback (:class:`~tf1compat.port.pipelines.observed.Frame`)."""

import os

import libcst as cst

from tf1compat.errors import display_path

__all__ = ["innermost", "common_invocation", "Site", "is_stateful", "call_tail", "calls_in",
           "target_names", "assignment", "api_name", "real_path", "name_uses", "names_in",
           "elements", "statement_of", "shown_path"]

_STATEFUL_PREFIXES = ("Random", "Multinomial", "TruncatedNormal", "ParameterizedTruncated",
                            "PyFunc", "EagerPyFunc")


def innermost(stack):
    return stack[-1] if stack else None


def common_invocation(first, second):
    """Depth ``k``: the frames ``first[k]`` and ``second[k]`` are two lines of one call
    of one function (their callers are the same frames); None when there is none."""
    for k, (a, b) in enumerate(zip(first, second, strict=False)):
        if a == b:
            continue
        if (a.file, a.function) == (b.file, b.function):
            return k
        return None
    return None


class Site:
    """A frame's line in its file: the statement, and the source."""

    def __init__(self, source, frame, statement):
        self.source, self.frame, self.statement = source, frame, statement


def is_stateful(op_type):
    return op_type.startswith(_STATEFUL_PREFIXES)


def call_tail(call):
    func = call.func
    if isinstance(func, cst.Attribute):
        return func.attr.value
    if isinstance(func, cst.Name):
        return func.value
    return None


class _Calls(cst.CSTVisitor):
    def __init__(self):
        self.calls = []

    def visit_Call(self, node):
        self.calls.append(node)


def calls_in(node):
    collector = _Calls()
    node.visit(collector)
    return collector.calls


def target_names(target):
    """The names of an assignment target made of names (``a``, ``a, b``, ``(a, [b])``),
    with ``_`` kept; None for any other target."""
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)):
        names = []
        for element in target.elements:
            inner = target_names(element.value)
            if inner is None:
                return None
            names.extend(inner)
        return names
    return None


def assignment(statement):
    """``(targets node, value)`` of a one-target ``x = value`` statement, else None."""
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return None
    small = statement.body[0]
    if isinstance(small, cst.Assign) and len(small.targets) == 1:
        return small.targets[0].target, small.value
    return None


def api_name(api):
    return {"fetch": "reader.read", "prefetch_queue": "slim.prefetch_queue"}.get(
        api, f"tf.{api}")


def shown_path(path):
    """``path`` as reports show it: relative to the current folder when inside it."""
    relative = os.path.relpath(os.path.realpath(os.fspath(path)))
    return display_path(relative if not relative.startswith("..") else os.fspath(path))


def real_path(path):
    return os.path.realpath(os.fspath(path))


class _NameUses(cst.CSTVisitor):
    def __init__(self, name):
        self.name, self.uses = name, []

    def visit_Name(self, node):
        if node.value == self.name:
            self.uses.append(node)

    def visit_Attribute(self, node):
        node.value.visit(self)
        return False

    def visit_Arg(self, node):      # f(x=value): the keyword is no use of a name x
        node.value.visit(self)
        return False

    def visit_FunctionDef(self, node):
        return True


def name_uses(source, function, name, exclude=None):
    """The Name nodes ``name`` in ``function``'s body (not in ``exclude``)."""
    body = function.body if isinstance(function, cst.Module) else function.body.body
    visitor = _NameUses(name)
    for statement in (body if isinstance(function, cst.Module) else body):
        if statement is not exclude:
            statement.visit(visitor)
    excluded = set(names_in(source, exclude)) if exclude is not None else set()
    return [node for node in visitor.uses if node not in excluded]


def names_in(source, statement):
    """Every Name node inside ``statement``."""
    visitor = _NameUses(None)
    visitor.visit_Name = lambda node: visitor.uses.append(node)
    statement.visit(visitor)
    return visitor.uses


def elements(node):
    """The element expressions of a list or tuple literal, else None."""
    if isinstance(node, (cst.List, cst.Tuple)):
        return [element.value for element in node.elements]
    return None


def statement_of(source, node):
    while node in source.parents and not isinstance(
            node, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
        node = source.parents[node]
    return node
