"""Keras 2 for TF1 programs, TF-free: ``tf.layers``, ``tf.nn.rnn_cell`` and TF1's
``tf.keras`` need the tf-keras package, which TensorFlow uses when
``TF_USE_LEGACY_KERAS=1`` is set before it loads."""

import importlib.util
import os
import sys

__all__ = ["KERAS2_VARIABLE", "keras2_installed", "keras2_environment", "use_keras2"]

KERAS2_VARIABLE = "TF_USE_LEGACY_KERAS"


def keras2_installed():
    """Whether the tf-keras package can be imported (found without importing it)."""
    return importlib.util.find_spec("tf_keras") is not None


def keras2_environment(environ):
    """``environ`` (a mapping; a new dict) with ``TF_USE_LEGACY_KERAS=1`` when tf-keras
    is installed and the variable is not set: the environment of a child process that
    runs a TF1 program under run mode, as ``tf1compat run`` runs it."""
    environ = dict(environ)
    if KERAS2_VARIABLE not in environ and keras2_installed():
        environ[KERAS2_VARIABLE] = "1"
    return environ


def use_keras2():
    """``TF_USE_LEGACY_KERAS=1`` when tf-keras is installed, TensorFlow is not loaded
    yet and the variable is not set. It holds for the whole process and its children:
    every ``tf.keras`` in them, libraries' too, is tf-keras."""
    if "tensorflow" not in sys.modules:
        os.environ.update(keras2_environment(os.environ))
