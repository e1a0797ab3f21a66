"""Helpers of the port tests: one file's source through the fixers, and a ported
program run by plain ``python`` with tf1compat not importable."""

import os
import subprocess
import textwrap

from corpus.plain import plain_python_command
from tf1compat.port.fixers import ENTRY_FIXERS, FILE_FIXERS
from tf1compat.port.fixers._base import PortedFile
from tf1compat.port.program import fix_source


def run_without_tf1compat(script, *args, cwd, timeout=300, env=None):
    """``python SCRIPT ARGS`` in ``cwd`` with the installed packages but tf1compat not
    importable (the interpreter says so and stops if it is); the CompletedProcess."""
    return subprocess.run(
        plain_python_command(script, *args), cwd=cwd, capture_output=True, text=True,
        timeout=timeout,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1", **(env or {})})


def fix(source, *, fixers=FILE_FIXERS, entry=False, path="program.py"):
    """``source`` (dedented) through ``fixers`` (default: all file fixers), and through
    the entry fixers too when ``entry``: ``(ported text, PortedFile)``."""
    ported = PortedFile(path, is_entry=entry)
    text = fix_source(textwrap.dedent(source), ported, fixers)
    if entry:
        text = fix_source(text, ported, ENTRY_FIXERS)
    return text, ported
