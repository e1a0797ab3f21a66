"""``tf1compat port``: a TF1 program rewritten for TensorFlow 2, running without
tf1compat (:func:`port_program`, its :class:`PortReport`).

Fixers, one per TF1-era fact (:mod:`tf1compat.port.fixers`), edit the program's
concrete syntax tree (LibCST), so every line they need not change stays as the
user wrote it; the pipeline pass (:mod:`tf1compat.port.pipelines`) writes queue
input pipelines as tf.data."""

from tf1compat.port.findings import Change, Finding
from tf1compat.port.program import port_program
from tf1compat.port.report import FileDiff, PortReport

__all__ = ["port_program", "PortReport", "FileDiff", "Change", "Finding"]
