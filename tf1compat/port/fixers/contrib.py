"""``tf.contrib`` to its maintained equivalents, from run mode's own table
(:data:`tf1compat.v1.contrib_table.CONTRIB`: each contrib module's ``bases``,
``extras`` and ``keras2`` references are what run mode gives and what the port
writes): ``tf.contrib.slim`` -> ``tf_slim`` (``import tensorflow.contrib.slim as
slim`` -> ``import tf_slim as slim``, ``slim = tf.contrib.slim`` -> ``slim =
tf_slim``), ``slim.nets`` -> ``tf_slim.nets``, ``tf.contrib.layers`` ->
``tf_slim.layers``, ``tf.contrib.framework.get_or_create_global_step`` ->
``tf.compat.v1.train.get_or_create_global_step``, ``tf.contrib.rnn.LSTMCell`` ->
``tf.compat.v1.nn.rnn_cell.LSTMCell`` (Keras 2: tf-keras). A name run mode defines
itself (``tf.contrib.training.HParams``, TF 1.x's class) is its definition written
beside the program (:mod:`tf1compat.port.support`): ``tf1_legacy.hparam.HParams``.

A contrib module run mode has no counterpart for goes where TensorFlow's own rename
table sends its name (``tf.contrib.distribute.MirroredStrategy`` ->
``tf.distribute.MirroredStrategy``), or is a finding naming what to use instead, as
``tf1compat check`` says; so is a name the table lists as unsupported.
"""

import dataclasses
import functools
import importlib

import libcst as cst

from tf1compat.port.fixers._base import Fixer, dotted_source, statement_lines
from tf1compat.port.fixers.keras2 import TF_KERAS
from tf1compat.port.support import SUPPORT_PACKAGE
from tf1compat.port.tf_upgrade import tf2_has, upgrade_spec
from tf1compat.v1.contrib import public_names
from tf1compat.v1.contrib_table import CONTRIB, unknown_contrib_message

__all__ = ["Contrib", "contrib_home", "TF_SLIM"]

TF_SLIM = "tf-slim"
_PREFIX = "tensorflow.contrib"
_TF1COMPAT = "tf1compat."


def reference_path(reference):
    """A contrib table reference as a dotted Python path: ``tf.X`` ->
    ``tensorflow.X``, ``v1.X`` -> ``tensorflow.compat.v1.X``, ``module:name`` ->
    ``module.name``; a module path as it is."""
    if ":" in reference:
        return reference.replace(":", ".")
    root, _, rest = reference.partition(".")
    return {"tf": f"tensorflow.{rest}", "v1": f"tensorflow.compat.v1.{rest}"}.get(root, reference)


@functools.cache
def _resolved(path):
    """The object at a dotted path (importing its module), or None."""
    parts = path.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            node = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        try:
            for part in parts[cut:]:
                node = getattr(node, part)
        except AttributeError:
            return None
        return node
    return None


@functools.cache
def _written_reaches(path):
    """True when ``path`` written in a program is what importing it gives: each part
    of a written path is an attribute of the one before, and a package may bind a
    submodule's name to something else (tf-slim's ``from tf_slim.layers import *``
    makes ``tf_slim.layers`` its ``layers.layers`` module, which lacks ``l2_regularizer``
    and 40 more of ``tf_slim.layers``' names)."""
    root, *parts = path.split(".")
    node = _resolved(root)
    for part in parts:
        node = getattr(node, part, None)
    return node is not None and node is _resolved(path)


def _single_home(spec):
    """The path of a contrib module of one base that a program can write (TensorFlow's
    API, or :func:`_written_reaches`), or None: its names then go one by one."""
    path = reference_path(spec.bases[0]) if len(spec.bases) == 1 else None
    if path is None or path.startswith("tensorflow.") or _written_reaches(path):
        return path
    return None


def _in_base(base_path, name):
    """``base_path.name`` spelled at the top of its package when that is the same object
    (``tf_slim.arg_scope`` for ``tf_slim.ops.arg_scope.arg_scope``), else in full; None
    when the base does not offer that name (run mode's rule: :func:`public_names`)."""
    base = _resolved(base_path)
    if base is None or name not in public_names(base):
        return None
    value = getattr(base, name)
    top = f"{base_path.split('.')[0]}.{name}"
    return top if top != f"{base_path}.{name}" and _resolved(top) is value else \
        f"{base_path}.{name}"


@dataclasses.dataclass(frozen=True)
class Home:
    """Where a contrib name goes: ``path`` (a dotted Python path), or None with the
    ``reason`` (none: its names go one by one); ``requirement`` the package it needs."""

    path: str | None = None
    reason: str = ""
    requirement: str | None = None


def _renamed_by_tensorflow(dotted):
    """TensorFlow's own rename of a contrib name, where TensorFlow 2 has the target."""
    renames = upgrade_spec().symbol_renames
    old = "tf" + dotted[len("tensorflow"):]
    parts = old.split(".")
    for cut in range(len(parts), 2, -1):
        new = renames.get(".".join(parts[:cut]))
        if new and new.startswith("tf.") and tf2_has(new):
            return "tensorflow" + new[2:] + "".join(f".{part}" for part in parts[cut:])
    return None


def contrib_home(dotted):
    """Where ``tensorflow.contrib.<module>[.<name>...]`` goes (:class:`Home`); a
    module whose names come from several places, or from a module a program cannot
    write (``tf_slim.layers``), has no path of its own (its names are ported one by
    one)."""
    parts = dotted.split(".")
    if len(parts) < 3:
        return Home(reason="tf.contrib as a whole has no TensorFlow 2 counterpart")
    spec = CONTRIB.get(parts[2])
    if spec is None:
        return Home(reason=unknown_contrib_message(parts[2]))
    rest = parts[3:]
    if spec.maps_to is None:
        renamed = _renamed_by_tensorflow(dotted)
        return Home(renamed) if renamed else \
            Home(reason=f"no TensorFlow 2 counterpart in run mode; use {spec.alternative}")
    requirement = TF_SLIM if any(base.startswith("tf_slim") for base in spec.bases) else None
    if not rest:
        path = _single_home(spec)
        return Home(path, requirement=requirement if path else None)
    name, tail = rest[0], "".join(f".{part}" for part in rest[1:])
    if name in spec.extras:
        path = reference_path(spec.extras[name])
        return Home(path + tail, requirement=TF_SLIM if path.startswith("tf_slim") else None)
    if name in spec.keras2:
        return Home(reference_path(spec.keras2[name]) + tail, requirement=TF_KERAS)
    if name in spec.unsupported:
        renamed = _renamed_by_tensorflow(dotted)
        return Home(renamed) if renamed else Home(
            reason=f"no TensorFlow 2 counterpart in run mode; use {spec.unsupported[name]}")
    for base in spec.bases:
        path = _in_base(reference_path(base), name)
        if path is not None:
            return Home(path + tail, requirement=requirement)
    return Home(reason=f"module 'tf.contrib.{parts[2]}' has no attribute {name!r}")


def _import_line(path, bound):
    """The import statement binding ``bound`` to ``path``."""
    parent, _, last = path.rpartition(".")
    alias = "" if last == bound else f" as {bound}"
    return f"import {path}{alias}\n" if not parent else f"from {parent} import {last}{alias}\n"


class Contrib(Fixer):
    """Moves ``tf.contrib`` names to their maintained homes."""

    def __init__(self, context, file):
        super().__init__(context, file)
        self._replaced = {}

    def _home(self, node, dotted):
        home = contrib_home(dotted)
        shown = "tf" + dotted[len("tensorflow"):]
        if home.path is None and home.reason:
            self.not_ported(node, shown, home.reason)
        if home.requirement:
            self.file.requirements.add(home.requirement)
        return home

    # -- imports: the statement line, so one import may become several -------------

    def leave_SimpleStatementLine(self, original_node, updated_node):
        lines = []
        changed = False
        for small in updated_node.body:
            new = self._imports(small) if isinstance(small, (cst.Import, cst.ImportFrom)) \
                else None
            if new is None:
                lines.append(cst.Module([]).code_for_node(small))
            else:
                changed = True
                lines.extend(line.rstrip("\n") for line in new)
        if not changed:
            return updated_node
        if not lines:
            return cst.RemoveFromParent()
        statements = statement_lines("\n".join(lines) + "\n")
        statements[0] = statements[0].with_changes(leading_lines=updated_node.leading_lines)
        statements[-1] = statements[-1].with_changes(
            trailing_whitespace=updated_node.trailing_whitespace)
        return cst.FlattenSentinel(statements)

    def _imports(self, statement):
        """The import lines replacing ``statement``, or None to keep it."""
        if isinstance(statement, cst.ImportFrom):
            if statement.relative or statement.module is None \
                    or isinstance(statement.names, cst.ImportStar):
                return None
            module = cst.Module([]).code_for_node(statement.module)
            pairs = [(f"{module}.{alias.name.value}", alias.evaluated_alias
                      or alias.name.value, False) for alias in statement.names]
        else:
            pairs = [(alias.evaluated_name, alias.evaluated_alias, True)
                     for alias in statement.names]
        if not any(dotted == _PREFIX or dotted.startswith(_PREFIX + ".")
                   for dotted, _, _ in pairs):
            return None
        lines = []
        for dotted, bound, as_module in pairs:
            if as_module and bound is None:  # import a.b.c binds a; its uses are ported
                line = f"import {dotted.split('.')[0]}\n"
                lines += [line] if line not in lines else []
                continue
            if not dotted.startswith(_PREFIX + "."):
                lines.append(_import_line(dotted, bound))
                continue
            home = self._home(statement, dotted)
            shown = "tf" + dotted[len("tensorflow"):]
            if home.path is None and not home.reason:  # several homes: names one by one
                self.changed(statement, shown, "its names, one by one where used")
            elif home.path is None:
                return None
            else:
                path = self._written(home.path)
                lines.append(_import_line(path, bound))
                self.changed(statement, shown, path)
        return lines

    # -- uses ---------------------------------------------------------------------

    def visit_Import(self, node):
        return False

    def visit_ImportFrom(self, node):
        return False

    def visit_Attribute(self, node):
        dotted = self.dotted_name(node)
        if dotted is None or not dotted.startswith(_PREFIX + "."):
            return True
        parts = dotted.split(".")
        spec = CONTRIB.get(parts[2])
        single_base = spec is not None and spec.maps_to is not None \
            and _single_home(spec) is not None
        if len(parts) > 4 or len(parts) == 4 and single_base and parts[3] not in {
                *spec.extras, *spec.keras2, *spec.unsupported}:
            if len(parts) == 4:
                self._home(node, dotted)  # a name the base lacks is a finding
            return True  # the module node inside is the one replaced
        home = self._home(node, dotted)
        if home.path is not None:
            path = self._written(home.path)
            self._replaced[node] = self._spelled(path)
            self.changed(node, "tf" + dotted[len("tensorflow"):], path)
        return False

    def _written(self, path):
        """Where the port finds ``path``: run mode's own definition (a tf1compat path,
        ``tf1compat.v1.hparam.HParams``) in the support module written beside the program
        (``tf1_legacy.hparam.HParams``), anything else where it is."""
        if not path.startswith(_TF1COMPAT):
            return path
        module, _, name = path.rpartition(".")
        self.file.support.add((module, name))
        return f"{SUPPORT_PACKAGE}.{module.rpartition('.')[2]}.{name}"

    def _spelled(self, path):
        """``path`` as an expression, with the import it needs."""
        if path.startswith("tensorflow."):
            return dotted_source(self.tensorflow_name() + path[len("tensorflow"):])
        if path.startswith(SUPPORT_PACKAGE + "."):
            self.add_import(path.rpartition(".")[0])
            return dotted_source(path)
        module = path
        while "." in module and not isinstance(_resolved(module), type(importlib)):
            module = module.rpartition(".")[0]
        if not _written_reaches(module):
            # a package binds the module's name to something else (tf-slim's
            # tf_slim.training is its training.training module), where a written-out
            # path and `import a.b.c as d` both look: imported from its parent package
            parent, _, last = module.rpartition(".")
            alias = module.replace(".", "_")
            self.add_import(parent, obj=last, asname=alias)
            return dotted_source(alias + path[len(module):])
        self.add_import(module)
        return dotted_source(path)

    def leave_Attribute(self, original_node, updated_node):
        return self._replaced.get(original_node, updated_node)
