"""Calls of removed NumPy methods in the program's own modules, rewritten to
functions that dispatch on the object's type.

``x.tostring()`` cannot be given back to ``numpy.ndarray`` (a C type takes no new
methods) and must keep working on other objects that have a ``tostring`` of their
own. So, as pytest rewrites its test files' asserts, run mode compiles the
program's files -- and only those -- with each call ``X.<method>(ARGS)`` of a
name in :data:`~tf1compat.v1.numpy1.REMOVED_METHODS` turned into
``<numpy1>.<method>(X, ARGS)``; that function does what NumPy 1.x did for
arrays and scalars and calls ``X.<method>(ARGS)`` for anything else. Files that
never name those methods compile as usual. Rewritten code is never written to
``__pycache__``.

:func:`compile_program` compiles one file; :class:`ProgramFinder` (a
``sys.meta_path`` entry, added and removed by run mode) loads the modules of
files for which ``is_program_file(path)`` is true with it.
"""

import ast
import importlib.machinery
import zipimport

from tf1compat.v1 import numpy1

__all__ = ["rewrite_tree", "compile_program", "ProgramFinder"]

_HELPER = "@tf1compat_numpy1"  # not an identifier: no name of the program can clash
_METHODS = frozenset(numpy1.REMOVED_METHODS)
_MARKERS = tuple(name.encode() for name in _METHODS)


class _MethodCalls(ast.NodeTransformer):
    def __init__(self):
        self.changed = False

    def visit_Call(self, node):
        self.generic_visit(node)
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in _METHODS:
            self.changed = True
            helper = ast.Attribute(ast.Name(_HELPER, ast.Load()), func.attr, ast.Load())
            return ast.copy_location(
                ast.Call(helper, [func.value, *node.args], node.keywords), node)
        return node


def _insert_position(body):
    """After the docstring and ``from __future__`` imports."""
    position = 0
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        position = 1
    while position < len(body) and isinstance(body[position], ast.ImportFrom) \
            and body[position].module == "__future__":
        position += 1
    return position


def rewrite_tree(tree):
    """Rewrite the removed-method calls of a module's AST in place; True if any."""
    calls = _MethodCalls()
    calls.visit(tree)
    if calls.changed:
        position = _insert_position(tree.body)
        line = tree.body[position].lineno if position < len(tree.body) else 1
        tree.body.insert(position, ast.Import([ast.alias(numpy1.__name__, _HELPER)],
                                              lineno=line, col_offset=0, end_lineno=line,
                                              end_col_offset=0))
        ast.fix_missing_locations(tree)
    return calls.changed


def compile_program(source, path):
    """``compile(source, path, "exec")`` with the removed-method calls rewritten."""
    if isinstance(source, str):
        source_bytes = source.encode("utf-8", "surrogateescape")
    else:
        source_bytes = bytes(source)
    if not any(marker in source_bytes for marker in _MARKERS):
        return compile(source, path, "exec", dont_inherit=True)
    tree = ast.parse(source, path)
    rewrite_tree(tree)
    return compile(tree, path, "exec", dont_inherit=True)


class _RewritingLoader(importlib.machinery.SourceFileLoader):
    """Loads a program file through :func:`compile_program`, bypassing the bytecode cache."""

    def get_code(self, fullname):
        return compile_program(self.get_data(self.path), self.path)


class _RewritingZipLoader:
    """Loads a program module from a zip file (a zip application's ``__main__.py`` and
    modules) through :func:`compile_program`; the rest is the zip importer's."""

    def __init__(self, importer):
        self._importer = importer

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        exec(self.get_code(module.__name__), vars(module))  # noqa: S102 - the program's module

    def get_code(self, fullname):
        source = self._importer.get_source(fullname)
        if source is None:  # compiled files only
            return self._importer.get_code(fullname)
        return compile_program(source, self._importer.get_filename(fullname))

    def __getattr__(self, name):  # is_package, get_source, get_filename, resources
        return getattr(self._importer, name)


class ProgramFinder:
    """A meta path finder: the modules whose source file is the program's
    (``is_program_file(path)``), in a folder or in a zip file, load with
    :func:`compile_program`."""

    def __init__(self, is_program_file):
        self.is_program_file = is_program_file

    def find_spec(self, fullname, path=None, target=None):
        spec = importlib.machinery.PathFinder.find_spec(fullname, path, target)
        if spec is None or not spec.origin or not self.is_program_file(spec.origin):
            return None
        if isinstance(spec.loader, importlib.machinery.SourceFileLoader):
            spec.loader = _RewritingLoader(fullname, spec.origin)
        elif isinstance(spec.loader, zipimport.zipimporter):
            spec.loader = _RewritingZipLoader(spec.loader)
        else:
            return None
        return spec

    def invalidate_caches(self):
        importlib.machinery.PathFinder.invalidate_caches()
