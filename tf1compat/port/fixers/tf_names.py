"""TF1 names to their TensorFlow 2 homes, by TensorFlow's own tables (tf_upgrade_v2's,
:mod:`tf1compat.port.tf_upgrade`): ``tf.placeholder`` -> ``tf.compat.v1.placeholder``,
``tf.gfile.Exists`` -> ``tf.io.gfile.exists``, ``tf.random_uniform`` ->
``tf.random.uniform``. In a call of a name that stays in TF2, the positional
arguments whose place TF2 changed become keywords and renamed keywords get their TF2
name (``tf.reduce_sum(x, 1, keep_dims=True)`` -> ``keepdims=True``).

Where TF2's function differs in a way the tables cannot say in a rename (the call
passes an argument TF2 dropped, or ``*args``; tf_upgrade_v2 rewrites the call with
code of its own; TF2 no longer has the name), the name goes to ``tf.compat.v1``: the
TF1 function itself. TF1's datasets (``tf.data.TFRecordDataset`` & co.) are TF2's
with a few members more (``make_one_shot_iterator()``, ``output_types``): in a file
that uses none of those they keep their TF2 names (as the tf.data code ``port``
writes does). A name neither has is a finding, with ``tf1compat check``'s
reason. ``tf.contrib`` and ``tensorflow.examples`` are other fixers' (they run
first); ``tf.compat``, ``tensorflow.python`` and ``tensorflow.core`` stay as written.
"""

import dataclasses
import functools
import types

import libcst as cst

from tf1compat.port.fixers._base import Fixer, dotted_source, top_level_statements
from tf1compat.port.tf_upgrade import tf_object, upgrade_spec
from tf1compat.v1.check import name_problem
from tf1compat.v1.tf1_names import recorded_names

__all__ = ["TF2Names", "tf2_home", "api_symbol"]

# tensorflow.<part>: names left to other fixers, or meant as written
_NOT_RENAMED = ("contrib", "examples", "compat", "python", "core")
_V1 = "tf.compat.v1."


def api_symbol(dotted):
    """The part of ``tensorflow.a.b.c...`` that is one TF1 API object: the path up to
    the first name that is not a module in run mode's ``tensorflow``
    (``tensorflow.app.flags.FLAGS`` of ``...FLAGS.batch_size``)."""
    modules = recorded_names()["modules"]
    parts = dotted.split(".")
    node = "tensorflow"
    for depth, part in enumerate(parts[1:], start=2):
        kind = modules.get(node, {}).get(part)
        if kind is None or not kind.startswith("m:"):
            return ".".join(parts[:depth])
        node = kind[2:]
    return dotted


@dataclasses.dataclass(frozen=True)
class Home:
    """Where a TF1 name goes: ``name`` (``tf.``-rooted) with the call's argument
    changes, or None with the ``reason`` it has no home."""

    name: str | None
    reason: str = ""
    reorder: tuple = ()
    keywords: dict = dataclasses.field(default_factory=dict)


def _renamed(old, renames):
    """``old`` by its own rename or the rename of the module it is in."""
    if old in renames:
        return renames[old]
    parts = old.split(".")
    for cut in range(len(parts) - 1, 1, -1):
        prefix = ".".join(parts[:cut])
        if prefix in renames:
            return ".".join([renames[prefix], *parts[cut:]])
    return old


def _arguments_need_v1(call, reorder, keywords):
    """True when the TF2 function cannot take ``call``'s arguments by moving
    positional ones to keywords and renaming keywords."""
    if not reorder and not keywords:
        return False
    positional = 0
    for arg in call.args:
        if arg.star:
            return True
        if arg.keyword is None:
            positional += 1
        elif keywords.get(arg.keyword.value, arg.keyword.value) is None:
            return True  # TF2 dropped the argument this call passes
    if not reorder:
        return False
    if positional > len(reorder):
        return True
    names = reorder[:positional]
    first_keyword = next((i for i, name in enumerate(names) if name), len(names))
    return any(name is None for name in names[first_keyword:])


def tf2_home(old, call=None):
    """Where the TF1 name ``old`` (``tf.a.b``) goes in TensorFlow 2 (:class:`Home`);
    ``call``, the LibCST call of it if any, decides whether its arguments fit TF2's.

    TF2's name is kept when it is the very TF1 function, or when TensorFlow's table
    converts the call to it (a rename, moved or renamed arguments) and TF2's
    function lacks none of TF1's arguments (``tf.image.resize_images`` -> ``resize``
    drops ``align_corners`` and resizes with half-pixel centers: not the same
    function). Anything else goes to ``tf.compat.v1``: a TF2 name that is another
    function than TF1's (``tf.Variable``, ``tf.summary.scalar``,
    ``tf.data.Dataset``) would change what the program computes."""
    spec = upgrade_spec()
    new = _renamed(old, spec.symbol_renames)
    if new.startswith(_V1):
        return Home(new)
    reorder = tuple(spec.function_reorders.get(old, ()))
    keywords = dict(spec.function_keyword_renames.get(old, {}))
    target, tf1 = tf_object(new), tf_object(_V1 + old[3:])
    if target is not None and (target is tf1 or _is_module(old)):
        return Home(new)
    converted = (new != old or reorder or keywords) and None not in keywords.values() \
        and old not in spec.function_transformers
    if target is not None and converted and \
            (call is None or not _arguments_need_v1(call, reorder, keywords)):
        return Home(new, reorder=reorder, keywords=keywords)
    problem = name_problem("tensorflow" + old[2:])
    if problem is not None:
        return Home(None, problem)
    return Home(_V1 + old[3:])


@functools.cache
def dataset_v1_members():
    """The public members TF1's datasets (``tf.compat.v1.data.Dataset``) have and
    TF2's lack (``make_one_shot_iterator``, ``output_types``, ...), read from
    TensorFlow."""
    v1_dataset, v2_dataset = tf_object("tf.compat.v1.data.Dataset"), tf_object("tf.data.Dataset")
    return frozenset(name for name in set(dir(v1_dataset)) - set(dir(v2_dataset))
                     if not name.startswith("_"))


def _is_tf1_dataset(old):
    """Whether the TF1 name ``old`` is a dataset class of ``tf.data`` (TF1's is TF2's
    with :func:`dataset_v1_members`)."""
    if not old.startswith("tf.data."):
        return False
    tf1 = tf_object(_V1 + old[3:])
    return isinstance(tf1, type) and issubclass(tf1, tf_object("tf.compat.v1.data.Dataset")) \
        and tf_object(old) is not None


def _is_module(old):
    dotted = "tensorflow" + old[2:]
    module, _, name = dotted.rpartition(".")
    kind = recorded_names()["modules"].get(module, {}).get(name, "")
    return kind.startswith("m:")


def _with_tf2_arguments(call, home):
    """``call`` with positional arguments moved to keywords and keywords renamed."""
    args = []
    position = 0
    for arg in call.args:
        keyword = None
        if arg.keyword is None:
            if position < len(home.reorder) and home.reorder[position]:
                # TF1's name for the place, then its TF2 name (max_pool's value -> input)
                keyword = home.keywords.get(home.reorder[position], home.reorder[position])
            position += 1
        elif arg.keyword.value in home.keywords:
            keyword = home.keywords[arg.keyword.value]
        if keyword is not None:
            equal = arg.equal if arg.keyword is not None else cst.AssignEqual(
                whitespace_before=cst.SimpleWhitespace(""),
                whitespace_after=cst.SimpleWhitespace(""))
            arg = arg.with_changes(keyword=cst.Name(keyword), equal=equal)
        args.append(arg)
    return call.with_changes(args=args)


def _attributes(module):
    """Every attribute node of ``module``."""
    found = []

    class Collector(cst.CSTVisitor):
        def visit_Attribute(self, node):
            found.append(node)
    module.visit(Collector())
    return found


def _chain_root(node):
    while isinstance(node, cst.Attribute):
        node = node.value
    return node


class TF2Names(Fixer):
    """Renames TF1 names to their TF2 homes (see the module docstring)."""

    def __init__(self, context, file):
        super().__init__(context, file)
        self._homes = {}      # func node -> Home, decided at its call
        self._replaced = {}   # original node -> new node
        self._calls = {}      # original call -> Home
        self._dataset_v1_used = False   # the file uses a member only TF1's datasets have

    def visit_Module(self, node):
        members = dataset_v1_members()
        self._dataset_v1_used = any(
            attribute.attr.value in members and not self._is_tf_module(attribute.value)
            for attribute in _attributes(node))
        # module-level aliases (nn = tf.nn): their uses are renamed through them
        self._alias_values = {small.value for _, small in top_level_statements(node)
                              if isinstance(small, cst.Assign) and len(small.targets) == 1
                              and isinstance(small.targets[0].target, cst.Name)}
        return super().visit_Module(node)

    def _tf1_name(self, node):
        """``tf.a.b`` when ``node`` is a TF1 API object this fixer renames, else None."""
        dotted = self.dotted_name(node)
        if dotted is None or not dotted.startswith("tensorflow."):
            return None
        if dotted.split(".")[1] in _NOT_RENAMED:
            return None
        return "tf" + dotted[len("tensorflow"):]

    def _is_tf_module(self, node):
        """Whether ``node`` is a module of TensorFlow's (``tf.compat.v1.data``)."""
        dotted = self.dotted_name(node)
        return dotted is not None and dotted.startswith("tensorflow.") and \
            isinstance(tf_object("tf" + dotted[len("tensorflow"):]), types.ModuleType)

    def visit_Call(self, node):
        func = node.func
        if isinstance(func, cst.Attribute):
            old = self._tf1_name(func)
            if old is not None and "tensorflow" + old[2:] == api_symbol("tensorflow" + old[2:]):
                home = tf2_home(old, node)
                self._homes[func] = home
                if home.name is not None and (home.reorder or home.keywords):
                    self._calls[node] = home
        return True

    def visit_Attribute(self, node):
        old = self._tf1_name(node)
        if old is None:
            return True
        dotted = "tensorflow" + old[2:]
        if api_symbol(dotted) != dotted:
            return True  # the API object is further in: tf.app.flags.FLAGS of FLAGS.x
        if not self._dataset_v1_used and _is_tf1_dataset(old):
            return False  # TF2's dataset, but for members the file never uses
        home = self._homes.get(node) or tf2_home(old)
        if home.name == old and _is_module(old) and node not in self._alias_values \
                and tf_object(old) is not tf_object(_V1 + old[3:]):
            # a TF1 module as a value (getattr(tf.train, name)): TF1's module
            home = Home(_V1 + old[3:])
        if home.name is None:
            self.not_ported(node, old, home.reason)
        elif home.name != old:
            self._replaced[node] = self._spelled(node, home.name)
            self.changed(node, old, home.name)
        return False

    def _spelled(self, node, new):
        """``new`` (``tf.``-rooted) written from the root name of ``node``'s chain, or
        from the module's ``tensorflow`` import (added when there is none)."""
        root = _chain_root(node)
        root_dotted = self.dotted_name(root) or ""
        full = "tensorflow" + new[2:]
        if full.startswith(root_dotted + "."):
            return dotted_source(root.value + full[len(root_dotted):])
        return dotted_source(self.tensorflow_name() + new[2:])

    def leave_Attribute(self, original_node, updated_node):
        return self._replaced.get(original_node, updated_node)

    def leave_Call(self, original_node, updated_node):
        home = self._calls.get(original_node)
        if home is None:
            return updated_node
        return _with_tf2_arguments(updated_node, home)

    def leave_ImportFrom(self, original_node, updated_node):
        """``from tensorflow.a import b`` of a renamed API object, or of a module TF2
        lacks: imported from the module of its TF2 home (all names of the statement
        must share it)."""
        if updated_node.relative or updated_node.module is None \
                or isinstance(updated_node.names, cst.ImportStar):
            return updated_node
        module = cst.Module([]).code_for_node(updated_node.module)
        if not module.startswith("tensorflow.") and module != "tensorflow" \
                or module.partition(".")[2].split(".")[0] in _NOT_RENAMED:
            return updated_node
        homes = []
        for alias in updated_node.names:
            old = f"tf{module[len('tensorflow'):]}.{alias.name.value}"
            dotted = "tensorflow" + old[2:]
            home = None
            # a module TF2 still has keeps its import (its members are renamed one by one);
            # one TF2 lacks (tf.logging, tf.gfile, tf.app) is imported from its home
            if api_symbol(dotted) == dotted and (dotted not in recorded_names()["modules"]
                                                 or tf_object(old) is None):
                found = tf2_home(old)
                if found.name is None:
                    self.not_ported(original_node, old, found.reason)
                elif found.name != old:
                    home = found.name
            homes.append((alias, old, home))
        if not any(home for _, _, home in homes):
            return updated_node
        new_modules = {home.rpartition(".")[0] if home else None for _, _, home in homes}
        if len(new_modules) > 1:
            for _, old, home in homes:
                if home:
                    self.not_ported(original_node, old, f"its TensorFlow 2 home is {home}: "
                                    "import it in a statement of its own")
            return updated_node
        names = []
        for alias, old, home in homes:
            new_name = home.rpartition(".")[2]
            asname = alias.asname
            if new_name != alias.name.value and asname is None:
                asname = cst.AsName(name=cst.Name(alias.name.value))
            names.append(alias.with_changes(name=cst.Name(new_name), asname=asname))
            self.changed(original_node, old, home)
        new_module = "tensorflow" + new_modules.pop()[2:]
        return updated_node.with_changes(module=dotted_source(new_module), names=names)
