"""The port's support modules: run mode's own definitions that a ported program
still needs (NumPy 1.x's removed functions, SciPy 1.1's image functions, the MNIST
tutorial's reader), written beside it in the package :data:`SUPPORT_PACKAGE` so it
runs without tf1compat.

A support module is the source of the definitions asked for, read from tf1compat's
module at port time (there is no second copy to keep in step), with every top-level
definition and import they use: a definition imported from another tf1compat module
is written too (``DatasetFormatError`` and its base), and TensorFlow's quiet start-up
(``tf1compat._tf``) becomes plain imports of ``tensorflow``."""

import ast
import importlib
import inspect

from tf1compat import __version__

__all__ = ["SUPPORT_PACKAGE", "support_source", "package_source"]

SUPPORT_PACKAGE = "tf1_legacy"
_TF_IMPORTS = {"tf": "import tensorflow as tf", "v1": "import tensorflow.compat.v1 as v1"}


def _bound_names(statement):
    """The names a top-level statement binds."""
    if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [statement.name]
    if isinstance(statement, (ast.Import, ast.ImportFrom)):
        return [alias.asname or alias.name.split(".")[0] for alias in statement.names]
    targets = statement.targets if isinstance(statement, ast.Assign) else \
        [statement.target] if isinstance(statement, ast.AnnAssign) else []
    return [node.id for target in targets for node in ast.walk(target)
            if isinstance(node, ast.Name)]


def _used_names(statement):
    return {node.id for node in ast.walk(statement) if isinstance(node, ast.Name)}


def _source_lines(source, statement):
    lines = source.splitlines()
    first = min([statement.lineno, *(d.lineno for d in getattr(statement, "decorator_list", ()))])
    return "\n".join(lines[first - 1:statement.end_lineno])


class _Collector:
    """Gathers the statements for some names of tf1compat modules, dependencies first."""

    def __init__(self):
        self.imports = []      # import lines, in first-use order
        self.definitions = []  # (module name, statement text), dependencies first
        self._done = set()

    def _add_import(self, line):
        if line not in self.imports:
            self.imports.append(line)

    def collect(self, module_name, names):
        module = importlib.import_module(module_name)
        source = inspect.getsource(module)
        tree = ast.parse(source)
        binders = {}
        for statement in tree.body:
            for name in _bound_names(statement):
                binders.setdefault(name, []).append(statement)
        pending = list(names)
        chosen = []
        while pending:
            name = pending.pop()
            if (module_name, name) in self._done:
                continue
            self._done.add((module_name, name))
            for statement in binders.get(name, ()):
                if isinstance(statement, (ast.Import, ast.ImportFrom)):
                    self._import(statement, name)
                elif statement not in chosen:
                    chosen.append(statement)
                    pending.extend(_used_names(statement) - {name})
        for statement in sorted(chosen, key=lambda s: s.lineno):
            self.definitions.append((module_name, _source_lines(source, statement)))

    def _import(self, statement, name):
        for alias in statement.names:
            if (alias.asname or alias.name.split(".")[0]) != name:
                continue
            if isinstance(statement, ast.Import):
                self._add_import(ast.unparse(ast.Import([alias])))
            elif statement.module == "tf1compat._tf":
                self._add_import(_TF_IMPORTS[alias.name])
            elif statement.module and statement.module.startswith("tf1compat"):
                self.collect(statement.module, [alias.name])
            else:
                self._add_import(ast.unparse(ast.ImportFrom(statement.module, [alias],
                                                            statement.level)))


def support_source(module_name, names):
    """The text of a support module holding ``names`` of the tf1compat module
    ``module_name`` and all they use."""
    collector = _Collector()
    collector.collect(module_name, sorted(names))
    module = importlib.import_module(module_name)
    summary = (inspect.getdoc(module) or module_name).split("\n\n")[0]
    header = (f'"""{summary}\n\nWritten by tf1compat {__version__} `port` from its '
              f"{module_name} so the ported program runs without tf1compat: "
              f'{", ".join(sorted(names))}."""\n')
    imports = sorted(collector.imports, key=lambda line: (line.startswith("from"), line))
    body = "\n\n\n".join(text for _, text in collector.definitions)
    return f"{header}\n{chr(10).join(imports)}\n\n\n{body}\n"


def package_source():
    """The text of the support package's ``__init__.py``."""
    return (f'"""What tf1compat {__version__} `port` wrote beside the ported program for it '
            'to run without tf1compat: run mode\'s own definitions of the TF1-era names the '
            'program uses."""\n')


SLIM_REPAIR = "tf_slim_repair"


def _public_spelling(name, value):
    """``tf.name`` / ``tf.compat.v1.name`` (or another name there) for a TensorFlow
    object, or None."""
    from tf1compat._tf import tf, v1

    spaces = (("tf", tf), ("tf.compat.v1", v1))
    for prefix, space in spaces:
        if getattr(space, name, None) is value:
            return f"{prefix}.{name}"
    for prefix, space in spaces:
        for attribute in dir(space):
            try:
                if getattr(space, attribute) is value:
                    return f"{prefix}.{attribute}"
            except Exception:  # noqa: BLE001, S112 - a lazy name that cannot load
                continue
    return None


def slim_repair_source():
    """The text of ``tf_slim_repair.py``: tf1compat's tf-slim repair without its
    additions (:func:`tf1compat.slim._patch.moved_names`), applied by an explicit
    ``repair_tf_slim()``."""
    from tf1compat.slim import _layers, _patch

    collector = _Collector()
    collector.collect("tf1compat.slim._namespace", ["Patches"])
    rows = []
    for module, attribute, replacements, only_missing in _patch.moved_names():
        spelled = {}
        for name, value in replacements.items():
            if getattr(value, "__module__", None) == _layers.__name__:
                collector.collect(_layers.__name__, ["_keras2_layer"])
                spelled[name] = f"_keras2_layer({name!r})"
            else:
                spelled[name] = _public_spelling(name, value)
                if spelled[name] is None:
                    raise ValueError(f"tf-slim repair: {module.__name__}.{attribute}.{name} "
                                     "is no public TensorFlow name; port cannot write it")
        names = ", ".join(f"{name!r}: {text}" for name, text in spelled.items())
        rows.append(f"    ({module.__name__!r}, {attribute!r}, {{{names}}}, {only_missing}),")
    collector._add_import("import importlib")
    collector._add_import("import tensorflow as tf")
    imports = sorted(collector.imports, key=lambda line: (line.startswith("from"), line))
    definitions = "\n\n\n".join(text for _, text in collector.definitions)
    table = "\n".join(rows)
    return f'''"""tf-slim on current TensorFlow: the private TensorFlow names tf-slim uses that
TensorFlow moved, given to tf-slim's own modules (TensorFlow's are not changed), and
batch_norm's Keras 2 layer (the tf-keras package).

Written by tf1compat {__version__} `port` from its tf-slim repair (tf1compat.slim) so the
ported program runs without tf1compat: call repair_tf_slim() before building the model."""

{chr(10).join(imports)}


{definitions}


# tf-slim module, its TensorFlow global, the names it needs there, only if missing
_MOVED_NAMES = [
{table}
]
_PATCHES = Patches()


def repair_tf_slim():
    """Give tf-slim's modules the names TensorFlow moved; a second call changes nothing."""
    for module, attribute, replacements, only_missing in _MOVED_NAMES:
        _PATCHES.rebind_namespace(importlib.import_module(module), attribute, replacements,
                                  only_missing=only_missing)
'''
