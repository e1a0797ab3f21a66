"""The fixers of ``tf1compat port``, one per TF1-era fact, in the order they run.

Each is a LibCST codemod (:class:`~tf1compat.port.fixers._base.Fixer`) over one
file. :data:`FILE_FIXERS` run on every program file, the names other fixers own
first; :data:`ENTRY_FIXERS` then run on the entry file, knowing what the whole
program needs (a requirement another fixer found in any file)."""

from tf1compat.port.fixers.graph_mode import GraphMode
from tf1compat.port.fixers.tf_names import TF2Names

__all__ = ["FILE_FIXERS", "ENTRY_FIXERS"]

FILE_FIXERS = (TF2Names,)
ENTRY_FIXERS = (GraphMode,)
