"""The TF1 runtime for unmodified programs (``tf1compat run``).

:func:`install` gives a program's own files TensorFlow 1's ``tensorflow``
(``tf.compat.v1`` with v2 behaviour disabled, ``tf.contrib``, tf1compat's queue
API) while libraries keep TensorFlow 2; :func:`run_path` / :func:`run_module`
run a program under it; :func:`tf1compat.v1.check.check_paths` lists what it would
not support.
"""

from tf1compat.v1.program import install, run_module, run_path

__all__ = ["install", "run_path", "run_module"]
