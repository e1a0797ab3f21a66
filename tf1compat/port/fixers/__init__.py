"""The fixers of ``tf1compat port``, one per TF1-era fact, in the order they run.

Each is a LibCST codemod (:class:`~tf1compat.port.fixers._base.Fixer`) over one
file. :data:`FILE_FIXERS` run on every program file, the names other fixers own
first (``tf.contrib``, ``tensorflow.examples``; version checks before any name
changes) so the TF1 names fixer meets only
TensorFlow's own; :data:`ENTRY_FIXERS` then run on the entry file, knowing what the
whole program needs (a requirement another fixer found in any file)."""

from tf1compat.port.fixers.contrib import Contrib
from tf1compat.port.fixers.graph_mode import GraphMode
from tf1compat.port.fixers.keras2 import Keras2Entry, Keras2Names
from tf1compat.port.fixers.mnist import MnistTutorial
from tf1compat.port.fixers.numpy1 import NumPy1
from tf1compat.port.fixers.scipy_misc import ScipyMisc
from tf1compat.port.fixers.tf1_flags import AbslLoggingFlags
from tf1compat.port.fixers.tf_names import TF2Names
from tf1compat.port.fixers.tf_slim import TfSlimEntry, TfSlimNames
from tf1compat.port.fixers.tf_version import TFVersion

__all__ = ["FILE_FIXERS", "ENTRY_FIXERS"]

FILE_FIXERS = (TFVersion, Keras2Names, TfSlimNames, MnistTutorial, Contrib, AbslLoggingFlags,
               TF2Names, NumPy1, ScipyMisc)
ENTRY_FIXERS = (Keras2Entry, GraphMode, TfSlimEntry)
