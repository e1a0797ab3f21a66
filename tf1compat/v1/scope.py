"""Which files get TF1's ``tensorflow``: an import hook scoped by the importer's path.

``import``, ``from ... import`` and ``__import__`` pass the importing module's
globals to ``builtins.__import__``. The hook replaces that function once per
process and, for names ``tensorflow`` and ``tensorflow.*`` imported by a file
under one of the program's folders (its *roots*), returns run mode's modules
(:func:`~tf1compat.v1.namespace.resolve`); before such a file imports
``tf_slim`` it makes sure tf-slim is patched. Everything else -- other names, and
every file in site-packages, the standard library or tf1compat itself -- goes
to the original import unchanged, so libraries keep TensorFlow 2.
``sys.modules["tensorflow"]`` is never replaced.

Code without a file (a notebook cell, ``python -c``) counts as the program's
when it runs as ``__main__``. ``importlib.import_module("tensorflow")`` bypasses
``__import__`` and so gets TensorFlow 2 everywhere.
"""

import builtins
import functools
import os
import site
import sys
import sysconfig
import threading

import tf1compat

__all__ = ["add_roots", "is_program_file", "is_library_folder", "install_import_hook"]

_roots = []
_roots_lock = threading.Lock()


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


def add_roots(paths):
    """Treat the Python files under ``paths`` (folders or files) as the program's own."""
    with _roots_lock:
        for path in paths:
            root = _normalized(path)
            if root not in _roots:
                _roots.append(root)
        is_program_file.cache_clear()


@functools.lru_cache(maxsize=4096)
def is_program_file(filename):
    """True for a file under a root with no library folder between the root and
    the file (a ``.venv`` inside the project is not the program); a root inside
    site-packages (a package run with ``-m``) still counts."""
    path = _normalized(filename)
    return any(_is_under(path, root) and not any(
        lib != root and _is_under(lib, root) and _is_under(path, lib)
        for lib in _library_folders()) for root in _roots)


def _imports_tf1(globals_):
    if globals_ is None:
        return False
    filename = globals_.get("__file__")
    if filename is None:
        return globals_.get("__name__") == "__main__"
    return is_program_file(filename)


def install_import_hook(resolve, prepare=None):
    """Replace ``builtins.__import__`` (once) so the program's files import
    ``tensorflow`` names through ``resolve(dotted_name)`` (a module, or None to
    import TensorFlow's own). ``prepare`` maps other top-level names (e.g.
    ``tf_slim``) to a function called before the program's files import them."""
    current = builtins.__import__
    if getattr(current, "__tf1compat_hook__", False):
        return False
    original = current
    prepare = dict(prepare or {})

    # The parameter names are __import__'s protocol (callers pass them by keyword).
    def __import__(name, globals=None, locals=None, fromlist=(), level=0):
        top = name.partition(".")[0]
        if level or (top != "tensorflow" and top not in prepare) or not _imports_tf1(globals):
            return original(name, globals, locals, fromlist, level)
        if top in prepare:
            prepare[top]()
            return original(name, globals, locals, fromlist, level)
        module = resolve(name)
        if module is None:  # a module of TensorFlow's own, e.g. tensorflow.python.ops
            module = original(name, globals, locals, fromlist, level)
        elif fromlist and sys.modules.get(module.__name__) is module:
            # A real package (tensorflow.python.tools, tf_slim.nets): the import
            # machinery loads the submodules ``from X import Y`` names.
            module = original(module.__name__, globals, locals, fromlist, 0)
        return module if fromlist else resolve("tensorflow")

    __import__.__tf1compat_hook__ = True
    __import__.__wrapped__ = original
    builtins.__import__ = __import__
    return True
