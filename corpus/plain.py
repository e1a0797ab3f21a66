"""A ported program run by plain ``python``, tf1compat not importable.

Shared by ``scripts/corpus``'s port mode and the port tests: ``python SCRIPT ARGS``
as it would run, in an interpreter started with ``-I -S``: no ``.pth`` file runs (so
no editable install's finder), no ``PYTHONPATH``, no current folder; only the
standard library, the installed packages without tf1compat and the script's folder;
unbuffered (``-u``), so a run stopped by a time limit keeps what it printed.
The interpreter says so and stops when tf1compat is importable all the same.
"""

import os
import site
import sys

__all__ = ["plain_python_command"]

_BOOTSTRAP = """\
import importlib.util, os, runpy, sys
sys.path.extend(sys.argv[1].split(os.pathsep))
if importlib.util.find_spec("tf1compat") is not None:
    raise SystemExit("tf1compat is importable: " + importlib.util.find_spec("tf1compat").origin)
script = sys.argv[2]
sys.argv = sys.argv[2:]
sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
runpy.run_path(script, run_name="__main__")
"""


def plain_python_command(script, *args):
    """The command running ``python SCRIPT ARGS`` with tf1compat not importable."""
    site_packages = [path for path in site.getsitepackages() if os.path.isdir(path)]
    return [sys.executable, "-I", "-S", "-u", "-c", _BOOTSTRAP, os.pathsep.join(site_packages),
            os.fspath(script), *map(str, args)]
