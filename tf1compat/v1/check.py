"""``tf1compat check PATH...``: the TF1 names a program uses that run mode cannot
give it, found without running the program.

Each Python file is parsed (never imported or run). Names bound to TensorFlow
-- ``import tensorflow as tf``, ``import tensorflow.contrib.slim as slim``,
``from tensorflow.contrib import quantize``, ``slim = tf.contrib.slim`` -- are
followed through every attribute chain and import, and each is looked up in the
record of run mode's ``tensorflow`` (:mod:`tf1compat.v1.tf1_names`) and the
contrib table (:mod:`tf1compat.v1.contrib_table`) exactly as the program would
reach it: a ``tf.contrib`` part without counterpart, or a name TensorFlow 2's
``tf.compat.v1`` no longer has (removed ops), is a finding; so is a Keras 2 name
(``tf.layers.dense``) when tf-keras, which ``tf1compat run`` gives programs, is not
installed.
``tensorflow.python`` / ``tensorflow.core`` (TensorFlow's private modules) and
``tensorflow.compat.v2`` are imported as they are and not judged. Nothing here
imports TensorFlow.
"""

import ast
import dataclasses
import functools
import importlib.machinery
import importlib.util
import io
import os
import re
import stat
import tokenize

from tf1compat._versions import keras2_install_command
from tf1compat.v1.contrib_table import (
    CONTRIB,
    missing_module_message,
    unknown_contrib_message,
)
from tf1compat.v1.keras2 import keras2_installed
from tf1compat.v1.proxy import tf1_name
from tf1compat.v1.tf1_names import recorded_names

__all__ = ["Finding", "Unparsed", "CheckReport", "check_file", "check_paths", "iter_checked",
           "iter_python_files", "iter_program_files", "name_problem"]

_PRIVATE = ("python", "core")
_SKIPPED_FOLDERS = {"__pycache__", "site-packages", "dist-packages", "node_modules"}


@dataclasses.dataclass(frozen=True)
class Finding:
    """A TF1 name at ``path``:``line`` that run mode does not support (``check``) or
    that ``port`` could not port, and why."""

    path: str
    line: int
    name: str
    reason: str

    def __str__(self):
        return f"{self.path}:{self.line}: {self.name}: {self.reason}"


@dataclasses.dataclass(frozen=True)
class Unparsed:
    """A file ``check`` could not read or parse as Python 3 (``line`` 0: not read)."""

    path: str
    line: int
    reason: str

    def __str__(self):
        if not self.line:
            return f"{self.path}: cannot read: {self.reason}"
        return f"{self.path}:{self.line}: cannot parse: {self.reason}"


class UnparsableFileError(Exception):
    """Raised by :func:`check_file` with the :class:`Unparsed` record as ``unparsed``."""

    def __init__(self, unparsed):
        super().__init__(str(unparsed))
        self.unparsed = unparsed


@dataclasses.dataclass(frozen=True)
class CheckReport:
    """What :func:`check_paths` found: the files it checked, the unsupported names
    in them, and the files it could not read or parse."""

    files: list
    findings: list
    unparsed: list

    def add(self, path, findings, unparsed=None):
        """Record the check of ``path``: its findings, or its :class:`Unparsed` record."""
        self.files.append(path)
        self.findings.extend(findings)
        if unparsed is not None:
            self.unparsed.append(unparsed)

    def lines(self):
        """Each finding and unparsed file as a line, file by file in checking order."""
        by_path = {}
        for entry in [*self.unparsed, *self.findings]:
            by_path.setdefault(entry.path, []).append(str(entry))
        return [line for path in self.files for line in by_path.get(path, ())]

    def summary(self):
        """``N file(s) checked: M unsupported name(s) in K file(s)`` (+ unparsed ones)."""
        bad = len({finding.path for finding in self.findings})
        line = (f"{len(self.files)} file(s) checked: {len(self.findings)} unsupported name(s) "
                f"in {bad} file(s)")
        return line + (f"; {len(self.unparsed)} file(s) could not be read or parsed"
                       if self.unparsed else "")


def iter_program_files(folder):
    """Every file under ``folder`` that is the program's, sorted per folder: hidden
    folders, virtual environments and site-packages are skipped."""
    for parent, subfolders, files in os.walk(folder):
        subfolders[:] = sorted(
            d for d in subfolders if not d.startswith(".") and d not in _SKIPPED_FOLDERS
            and not os.path.exists(os.path.join(parent, d, "pyvenv.cfg")))
        yield from (os.path.join(parent, f) for f in sorted(files))


def iter_python_files(paths):
    """The ``.py`` files under ``paths`` (files are taken as given), sorted per
    folder (:func:`iter_program_files`). A path that does not exist raises
    ``FileNotFoundError`` before any file is yielded."""
    paths = list(paths)
    for path in paths:
        if not os.path.lexists(path):
            raise FileNotFoundError(f"check: {os.fspath(path)!r} does not exist")
    for path in paths:
        if os.path.isfile(path):
            yield os.fspath(path)
        elif os.path.isdir(path):
            yield from (f for f in iter_program_files(path) if f.endswith(".py"))
        else:  # a FIFO, device or dangling link: check_file says which
            yield os.fspath(path)


LARGEST_SOURCE = 64 << 20  # bytes; a larger file is no program source check reads
_REMOVED = "not in TensorFlow 2's tf.compat.v1 or run mode's tf.contrib ({})"
_NEEDS_KERAS2 = "needs Keras 2, the tf-keras package, which is not installed: {} ({})"


class _Keras2Missing(str):
    """Why a name is missing: it needs Keras 2, which is not installed."""


@functools.cache
def _names_needing_keras2():
    """``{module: {name: message}}`` of the record's names that need Keras 2 when
    tf-keras is not installed (``tf1compat run`` then gives TensorFlow's Keras 3);
    empty when it is."""
    return {} if keras2_installed() else recorded_names().get("without_keras2", {})
_NOT_JUDGED = object()


@dataclasses.dataclass(frozen=True)
class _Placeholder:
    """An unsupported name of run mode's ``tf.contrib``, or (with ``path``, its
    record's entry) an unsupported module."""

    alternative: str
    constants: dict
    path: str | None = None

    def attribute(self, name):
        """What the program gets for ``<this>.<name>``: a constant's value (None) or
        another placeholder with the same alternative."""
        if self.path is not None:
            return _Placeholder(self.alternative, self.constants.get(name) or {})
        return None if name in self.constants else _Placeholder(self.alternative, {})


def _contrib_placeholder(module_path, name, path=None):
    """The placeholder recorded as ``module_path.name`` under ``tensorflow.contrib``."""
    if module_path == "tensorflow.contrib":
        spec = CONTRIB[name]
        return _Placeholder(spec.alternative, spec.constants, path)
    spec = CONTRIB[module_path.split(".")[2]]
    return _Placeholder(spec.unsupported[name], {}, path)


def _walk(parts):
    """Follow ``tensorflow.<parts>`` through the record: ``(node, problem)`` where
    ``node`` is a recorded module's name, a :class:`_Placeholder`, ``_NOT_JUDGED``
    (in a module whose names are not recorded) or None (a value), and ``problem``
    says why a name is missing (then ``node`` is where it was looked for)."""
    modules = recorded_names()["modules"]
    node = "tensorflow"
    for part in parts:
        if isinstance(node, _Placeholder):
            kind = modules.get(node.path, {}).get(part) if node.path else None
            if kind is None:
                node = node.attribute(part)
                if node is None:
                    return None, None
                continue
            path = node.path
        else:
            entry = modules.get(node)
            if entry is None:  # tensorflow.compat.v2: TensorFlow 2's own
                return _NOT_JUDGED, None
            kind = entry.get(part, entry.get("*"))
            message = _names_needing_keras2().get(node, {}).get(part)
            if message is not None:
                return node, _Keras2Missing(
                    message.replace("{name}", part)
                    or f"module {tf1_name(node)!r} has no attribute {part!r}")
            if kind is None:
                reason = (unknown_contrib_message(part) if node == "tensorflow.contrib" else
                          f"module {tf1_name(node)!r} has no attribute {part!r}")
                return node, reason
            path = node
        if kind.startswith("!"):
            return path, kind[1:].replace("{name}", part)
        if kind == "u" or kind.startswith("u:"):
            node = _contrib_placeholder(path, part, kind[2:] or None)
        elif kind.startswith("m:"):
            node = kind[2:]
        elif kind == "o":  # a module of another package (tf-slim's)
            return _NOT_JUDGED, None
        else:  # a value
            return None, None
    return node, None


def name_problem(dotted):
    """Why run mode cannot give ``dotted`` (``tensorflow.x.y``), or None. Attributes
    of modules and placeholders are followed (a placeholder's constants are fine);
    those of anything else are not judged, nor are names with a leading underscore
    (``tf.__version__``: the record lists public names only)."""
    parts = dotted.split(".")[1:]
    if parts and parts[0] in _PRIVATE or any(part.startswith("_") for part in parts):
        return None
    node, missing = _walk(parts)
    if isinstance(missing, _Keras2Missing):
        return _NEEDS_KERAS2.format(keras2_install_command(), missing)
    if missing is not None:
        return _REMOVED.format(missing)
    if isinstance(node, _Placeholder):
        return f"no TensorFlow 2 counterpart in run mode; use {node.alternative}"
    return None


def _tensorflow_has_module(dotted):
    """True when the installed TensorFlow has the module ``dotted``, found on disk
    (importing it would import TensorFlow)."""
    spec = importlib.util.find_spec("tensorflow")
    if spec is None or not spec.submodule_search_locations:
        return False
    relative = os.path.join(*dotted.split(".")[1:])
    return any(os.path.isfile(os.path.join(location, relative, "__init__.py"))
               or any(os.path.isfile(os.path.join(location, relative + suffix))
                      for suffix in importlib.machinery.all_suffixes())
               for location in spec.submodule_search_locations)


def _import_problem(dotted):
    """Why ``import <dotted>`` would fail in run mode, or None."""
    parts = dotted.split(".")[1:]
    if parts and parts[0] in _PRIVATE:
        return None
    node, missing = _walk(parts)
    if missing is not None and missing_module_message(dotted, missing) is not None:
        return missing_module_message(dotted, missing)
    if missing is None and node is not None:
        return name_problem(dotted)
    return None if _tensorflow_has_module(dotted) else \
        f"no such module in TensorFlow 2 ({dotted})"


class _TensorFlowNames(ast.NodeVisitor):
    """Collects findings for the TensorFlow names of one module's syntax tree."""

    def __init__(self, path):
        self.path = path
        self.aliases = {}
        self.findings = {}

    def _report(self, node, dotted, problem):
        if problem is not None:
            key = (node.lineno, dotted)
            self.findings.setdefault(key, Finding(self.path, node.lineno, tf1_name(dotted),
                                                  problem))

    def _dotted(self, node):
        """``tensorflow.a.b`` for an attribute chain rooted at a TensorFlow alias."""
        parts = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name) or node.id not in self.aliases:
            return None
        return ".".join([self.aliases[node.id], *reversed(parts)])

    def visit_Import(self, node):
        for alias in node.names:
            if alias.name == "tensorflow" or alias.name.startswith("tensorflow."):
                self._report(node, alias.name, _import_problem(alias.name))
                if alias.asname:
                    self.aliases[alias.asname] = alias.name
                else:
                    self.aliases["tensorflow"] = "tensorflow"

    def visit_ImportFrom(self, node):
        module = node.module or ""
        if node.level or not (module == "tensorflow" or module.startswith("tensorflow.")):
            return
        problem = _import_problem(module)
        self._report(node, module, problem)
        for alias in node.names:
            dotted = f"{module}.{alias.name}"
            if problem is None and alias.name != "*":
                self._report(node, dotted, name_problem(dotted))
            self.aliases[alias.asname or alias.name] = dotted

    def visit_Assign(self, node):
        dotted = self._dotted(node.value)
        if dotted is not None:
            for target in node.targets:
                if isinstance(target, ast.Name):
                    self.aliases[target.id] = dotted
        self.generic_visit(node)

    def visit_Attribute(self, node):
        dotted = self._dotted(node)
        if dotted is None:
            self.generic_visit(node)
            return
        self._report(node, dotted, name_problem(dotted))


# A larger file (a generated module: weights, tables) is parsed statement by statement:
# Python's parser needs about 280 bytes of memory per byte of such source (a 50 MB
# module, 14 GB), and a statement that names no TensorFlow alias cannot matter here.
WHOLE_FILE_BYTES = 1 << 20
# What splits a module into its top-level statements: comments, strings (whatever
# newlines they hold), brackets (a statement goes on inside them), a line continued
# by a backslash, and a newline before a line that starts at column 0.
_SCAN = re.compile(r"""
    \#[^\n]*
  | [rRbBuUfF]{0,2}(?: '''(?:\\.|[^\\])*?''' | \"\"\"(?:\\.|[^\\])*?\"\"\"
                     | '(?:\\.|[^\\'\n])*' | "(?:\\.|[^\\"\n])*" )
  | [\[({\])}]
  | \\\n
  | \n(?=[^\s#])
""", re.VERBOSE | re.DOTALL)
_CONTINUATION = re.compile(r"(?:else|elif|except|finally)\b")  # no statement of their own


def _top_level_statements(text):
    """``(start, end)`` offsets of the top-level statements of ``text`` (a comment or
    blank lines go with the statement before them)."""
    depth = start = 0
    for match in _SCAN.finditer(text):
        first = match.group()[0]
        if first in "([{":
            depth += 1
        elif first in ")]}":
            depth = max(0, depth - 1)
        elif first == "\n" and not depth and not _CONTINUATION.match(text, match.end()):
            yield start, match.end()
            start = match.end()
    yield start, len(text)


def _statement_trees(text, path, names):
    """The syntax trees, line numbers as in ``text``, of its top-level statements that
    name ``tensorflow`` or one of ``names.aliases`` (a statement that names neither can
    add no alias and no finding, so it is not parsed). Statements are split where the
    scan says one ends; where that was wrong (a piece does not parse), the piece grows
    by the next ones, parsed again each time it has doubled, until it parses; at the
    end of the file the SyntaxError stands, with its line in ``text``."""
    line = offset = 0      # newlines before ``offset``
    begin = tried = None   # a piece that did not parse yet, and its size when tried
    for start, end in _top_level_statements(text):
        if begin is None:
            begin = start
        piece = text[begin:end]
        last = end == len(text)
        if tried is None and not _mentions(names).search(piece):
            begin = None
            continue
        if tried is not None and len(piece) < 2 * tried and not last:
            continue
        line += text.count("\n", offset, begin)
        offset = begin
        try:
            tree = ast.parse(piece, filename=path)
        except SyntaxError as e:
            if last:
                e.lineno = (e.lineno or 1) + line
                raise
            tried = len(piece)
            continue
        ast.increment_lineno(tree, line)
        yield tree
        begin = tried = None


def _mentions(names):
    """A regular expression finding ``tensorflow`` or one of ``names``' aliases."""
    words = sorted({"tensorflow", *names.aliases})
    return re.compile(r"\b(?:" + "|".join(map(re.escape, words)) + r")\b")


def _read_source(path):
    """The bytes of the Python file ``path``, or UnparsableFileError saying why not."""
    try:
        found = os.stat(path)
        if not stat.S_ISREG(found.st_mode):
            raise UnparsableFileError(Unparsed(path, 0, "not a regular file (a FIFO, "
                                                        "device or socket): not opened"))
        if found.st_size > LARGEST_SOURCE:
            raise UnparsableFileError(Unparsed(
                path, 0, f"{found.st_size:,} bytes, more than a Python file's "
                         f"{LARGEST_SOURCE:,}: not read"))
        with open(path, "rb") as f:
            return f.read()
    except OSError as e:
        raise UnparsableFileError(Unparsed(path, 0, e.strerror or str(e))) from e


def check_file(path):
    """The findings of one Python file, in line order. A file that cannot be read or
    is not valid Python 3 raises :class:`UnparsableFileError` saying where and why; so
    does one too large or deeply nested for Python's parser. A file larger than
    ``WHOLE_FILE_BYTES`` is parsed statement by statement (see
    :func:`_statement_trees`): a syntax error in a statement naming no TensorFlow
    alias is not seen there."""
    source = _read_source(path)
    names = _TensorFlowNames(path)
    try:
        if len(source) <= WHOLE_FILE_BYTES:
            names.visit(ast.parse(source, filename=path))
        else:
            text = source.decode(tokenize.detect_encoding(io.BytesIO(source).readline)[0])
            del source
            for tree in _statement_trees(text, path, names):
                names.visit(tree)
    except SyntaxError as e:  # also a binary file's null bytes
        raise UnparsableFileError(Unparsed(path, e.lineno or 1, e.msg)) from e
    except (UnicodeDecodeError, LookupError) as e:    # its coding line or its bytes
        raise UnparsableFileError(Unparsed(path, 1, f"cannot decode it: {e}")) from e
    except (MemoryError, RecursionError) as e:
        raise UnparsableFileError(Unparsed(
            path, 1, f"too large or too deeply nested for Python's parser "
                     f"({type(e).__name__})")) from None
    return sorted(names.findings.values(), key=lambda f: (f.line, f.name))


def iter_checked(paths):
    """``(path, findings, unparsed)`` for each Python file under ``paths``, as each is
    checked (``unparsed`` the :class:`Unparsed` record of a file that cannot be read
    or parsed, else None), so a caller can report file by file. A path that does not
    exist raises ``FileNotFoundError`` before any file is checked."""
    for path in iter_python_files(paths):
        try:
            yield path, check_file(path), None
        except UnparsableFileError as e:
            yield path, [], e.unparsed


def check_paths(paths):
    """A :class:`CheckReport` for the Python files under ``paths``; a file that cannot
    be read or parsed is listed in ``unparsed`` and the others are still checked."""
    report = CheckReport([], [], [])
    for path, findings, unparsed in iter_checked(paths):
        report.add(path, findings, unparsed)
    return report
