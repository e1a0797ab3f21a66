"""The TF1 runtime for unmodified programs (``tf1compat run``).

A :class:`RunMode` is that runtime as an object: installed, it gives a program's
own files TensorFlow 1's ``tensorflow`` (``tf.compat.v1`` with v2 behaviour
disabled, ``tf.contrib``, tf1compat's queue API) while libraries keep TensorFlow
2; uninstalled, everything it changed is as it was. :func:`install` /
:func:`uninstall` do that for the process (a notebook); :func:`run_path` /
:func:`run_module` run a program in one; :func:`tf1compat.v1.check.check_paths`
lists what it would not support.
"""

from tf1compat.v1.program import install, run_module, run_path, uninstall
from tf1compat.v1.run_mode import RunMode

__all__ = ["RunMode", "install", "uninstall", "run_path", "run_module"]
