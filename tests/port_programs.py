"""Helpers of the port tests: one file's source through the fixers, and a ported
program run by plain ``python`` with tf1compat not importable."""

import os
import site
import subprocess
import sys
import textwrap

from tf1compat.port.fixers import ENTRY_FIXERS, FILE_FIXERS
from tf1compat.port.fixers._base import PortedFile
from tf1compat.port.program import fix_source

# Runs SCRIPT ARGS as `python SCRIPT ARGS` would, in an interpreter started with -I -S:
# no .pth file runs (so no editable install's finder), no PYTHONPATH, no current folder;
# only the standard library, site-packages without tf1compat and the script's folder.
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


def run_without_tf1compat(script, *args, cwd, timeout=300, env=None):
    """``python SCRIPT ARGS`` in ``cwd`` with the installed packages but tf1compat not
    importable (the interpreter says so and stops if it is); the CompletedProcess."""
    site_packages = [path for path in site.getsitepackages() if os.path.isdir(path)]
    return subprocess.run(
        [sys.executable, "-I", "-S", "-c", _BOOTSTRAP, os.pathsep.join(site_packages),
         os.fspath(script), *map(str, args)],
        cwd=cwd, capture_output=True, text=True, timeout=timeout,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1", **(env or {})})


def fix(source, *, fixers=FILE_FIXERS, entry=False, path="program.py"):
    """``source`` (dedented) through ``fixers`` (default: all file fixers), and through
    the entry fixers too when ``entry``: ``(ported text, PortedFile)``."""
    ported = PortedFile(path, is_entry=entry)
    text = fix_source(textwrap.dedent(source), ported, fixers)
    if entry:
        text = fix_source(text, ported, ENTRY_FIXERS)
    return text, ported
