"""The TF1 runtime for unmodified programs (``tf1compat run``).

A :class:`RunMode` is that runtime as an object, configured by one frozen
:class:`RunSettings`: installed, it gives a program's
own files TensorFlow 1's ``tensorflow`` (``tf.compat.v1`` with v2 behaviour
disabled, ``tf.contrib``, tf1compat's queue API) while libraries keep TensorFlow
2; uninstalled, everything it changed is as it was. :func:`install` /
:func:`uninstall` do that for the process (a notebook); :func:`run_path` /
:func:`run_module` run a program in one; :func:`tf1compat.v1.check.check_paths`
lists what it would not support.
"""

import importlib
from typing import Any

# public name -> module that defines it, imported on first use (``tf1compat check``
# imports tf1compat.v1.check without TensorFlow)
_LAZY_NAMES = {"RunMode": "run_mode", "RunSettings": "settings", "install": "program",
               "uninstall": "program", "run_path": "program", "run_module": "program"}

__all__ = ["RunMode", "RunSettings", "install", "uninstall", "run_path", "run_module"]


def __getattr__(name: str) -> Any:
    if name not in _LAZY_NAMES:
        raise AttributeError(f"module 'tf1compat.v1' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"tf1compat.v1.{_LAZY_NAMES[name]}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
