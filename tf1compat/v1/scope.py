"""Which files get TF1's ``tensorflow``: an import hook scoped by the importer's path.

``import``, ``from ... import`` and ``__import__`` pass the importing module's
globals to ``builtins.__import__``. The hook (:func:`make_import_hook`, installed
and removed by :class:`~tf1compat.v1.run_mode.RunMode`) returns, for names
``tensorflow`` and ``tensorflow.*`` imported by a file under one of the program's
folders (the roots of an :class:`ImportScope`), run mode's modules, and likewise
its views of ``numpy`` and ``scipy`` (NumPy 1.x's names, SciPy's image functions).
Everything else -- other names, and every file in site-packages, the standard
library or tf1compat itself -- goes to the original import unchanged, so
libraries keep TensorFlow 2 and NumPy as installed. ``sys.modules`` is never
changed.

Code without a file (a notebook cell, ``python -c``) counts as the program's
when it runs as ``__main__``. ``importlib.import_module("tensorflow")`` bypasses
``__import__`` and so gets TensorFlow 2 everywhere.
"""

import functools
import os
import site
import sys
import sysconfig
import threading

import tf1compat

__all__ = ["ImportScope", "is_library_folder", "make_import_hook"]


def _normalized(path):
    return os.path.normcase(os.path.realpath(path))


@functools.cache
def _library_folders():
    """Where libraries live: site-packages (system, user, venv), the standard
    library, and tf1compat's own package."""
    paths = set(site.getsitepackages()) | {site.getusersitepackages()}
    config = sysconfig.get_paths()
    paths.update(config[key] for key in ("stdlib", "platstdlib", "purelib", "platlib"))
    paths.add(os.path.dirname(tf1compat.__file__))
    return tuple(_normalized(p) for p in paths if p)


def _is_under(path, folder):
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def is_library_folder(path):
    """True for a folder in or below site-packages, the standard library or tf1compat."""
    path = _normalized(path)
    return any(_is_under(path, lib) for lib in _library_folders())


class ImportScope:
    """The program's own code: files under its roots, minus library folders below them."""

    def __init__(self):
        self._roots = []
        self._lock = threading.Lock()
        self._program_files = {}  # filename -> is_program_file(filename)

    @property
    def roots(self):
        return list(self._roots)

    def add_roots(self, paths):
        """Treat the Python files under ``paths`` (folders or files) as the program's own."""
        with self._lock:
            for path in paths:
                root = _normalized(path)
                if root not in self._roots:
                    self._roots.append(root)
            self._program_files = {}

    def is_program_file(self, filename):
        """True for a file under a root with no library folder between the root and
        the file (a ``.venv`` inside the project is not the program); a root inside
        site-packages (a package run with ``-m``) still counts."""
        known = self._program_files.get(filename)
        if known is None:
            path = _normalized(filename)
            known = any(_is_under(path, root) and not any(
                lib != root and _is_under(lib, root) and _is_under(path, lib)
                for lib in _library_folders()) for root in self._roots)
            self._program_files[filename] = known
        return known

    def imports_tf1(self, globals_):
        """True when the module of ``globals_`` gets TF1's ``tensorflow``."""
        if globals_ is None:
            return False
        filename = globals_.get("__file__")
        if filename is None:
            return globals_.get("__name__") == "__main__"
        return self.is_program_file(filename)


def make_import_hook(original, scope, resolve, views=None):
    """An ``__import__`` over ``original`` by which the files of ``scope`` import
    ``tensorflow`` names through ``resolve(dotted_name)`` (a module, or None to
    import TensorFlow's own). ``views`` maps other top-level names (``numpy``,
    ``scipy``) to resolvers of the same kind for those names."""
    resolvers = {**(views or {}), "tensorflow": resolve}

    # The parameter names are __import__'s protocol (callers pass them by keyword).
    def __import__(name, globals=None, locals=None, fromlist=(), level=0):
        top = name.partition(".")[0]
        if level or top not in resolvers or not scope.imports_tf1(globals):
            return original(name, globals, locals, fromlist, level)
        resolve_name = resolvers[top]
        module = resolve_name(name)
        if module is None:  # a module of the library's own, e.g. tensorflow.python.ops
            module = original(name, globals, locals, fromlist, level)
        elif fromlist and sys.modules.get(module.__name__) is module:
            # A real package (tensorflow.python.tools, tf_slim.nets): the import
            # machinery loads the submodules ``from X import Y`` names.
            module = original(module.__name__, globals, locals, fromlist, 0)
        else:
            for item in fromlist or ():
                if item != "*" and not hasattr(module, item):
                    # its explained error (below tensorflow.contrib, say), else Python's
                    resolve_name(f"{name}.{item}")
        return module if fromlist else resolve_name(top)

    __import__.__wrapped__ = original
    return __import__
