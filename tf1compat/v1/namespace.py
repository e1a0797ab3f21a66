"""Run mode's ``tensorflow``: what a program's own ``import tensorflow as tf`` gets.

It is ``tf.compat.v1`` (graph mode once ``install()`` has disabled v2 behaviour:
v1 shapes with ``.value``, v1 control flow and summaries, ``tf.app``,
``tf.flags``, ``tf.gfile``, ``tf.python_io``, ``tf.logging``, ``Session``,
readers, ``tf.train.*``) with, on top:

* ``tf.contrib`` (:mod:`tf1compat.v1.contrib`) and ``tensorflow.examples``
  (:mod:`tf1compat.v1.tutorials`);
* TF 1.x's version (``tf.__version__`` is 1.15.5) and float dimensions
  (:mod:`tf1compat.v1.tf1_rules`); ``tf.app.flags`` / ``tf.flags`` defining a
  program's flag named like one of absl.logging's (:mod:`tf1compat.v1.tf1_flags`);
* the queue API from :data:`~tf1compat.v1.queue_runtime.QUEUE_API` (tf1compat's
  validated producers, readers and batching) and run mode's ``Session``;
* ``tf.compat.v1`` is this module again; ``tf.compat.v2`` stays TensorFlow 2;
* ``tensorflow.python`` / ``tensorflow.core`` reach TensorFlow's own modules, for
  programs that import private modules.

Each run mode builds its own (:func:`build_tensorflow_module`, with its queue API
table and session classes); they are not in ``sys.modules``: only its import hook
(:mod:`tf1compat.v1.scope`) hands them out. :func:`tensorflow_module` is the one of
a run mode with the default settings, never installed (``tf1compat check`` reads it).
"""

import functools
import sys
import types

from tf1compat._tf import v1
from tf1compat.v1 import contrib, queue_runtime, tf1_flags, tf1_rules, tutorials
from tf1compat.v1.contrib_table import missing_module_message
from tf1compat.v1.proxy import ProxyModule, tf1_name
from tf1compat.v1.settings import RunSettings

__all__ = ["build_tensorflow_module", "tensorflow_module", "resolve"]


def _real_submodule(name):
    """``tensorflow.<name>`` as TensorFlow itself loaded it (e.g. ``python``), or None."""
    return sys.modules.get(f"tensorflow.{name}")


def build_tensorflow_module(table, runtime):
    """A TF1 ``tensorflow`` module object answering the queue API from ``table``
    and ``tf.Session`` / ``tf.InteractiveSession`` with ``runtime``'s classes."""
    flags = tf1_flags.build_flags_module()
    top = ProxyModule(
        "tensorflow", v1, table=table, fallback=_real_submodule,
        attributes={"Session": runtime.Session,
                    "flags": flags,
                    "app": ProxyModule("tensorflow.app", v1.app, attributes={"flags": flags}),
                    "InteractiveSession": runtime.InteractiveSession,
                    **dict.fromkeys(tf1_rules.VERSION_ATTRIBUTES, tf1_rules.TF1_VERSION),
                    "version": tf1_rules.build_version_module(), **tf1_rules.tf_functions()},
        lazy={"contrib": lambda: contrib.build_contrib(table),
              "examples": tutorials.build_examples})
    vars(top)["train"] = ProxyModule("tensorflow.train", v1.train, table=table)
    vars(top)["compat"] = ProxyModule("tensorflow.compat", v1.compat, attributes={"v1": top})
    return top


@functools.cache
def tensorflow_module():
    """The TF1 ``tensorflow`` of a run mode with default settings (one per process)."""
    defaults = RunSettings()
    return build_tensorflow_module(queue_runtime.QUEUE_API,
                                   queue_runtime.QueueRuntime(lambda: defaults))


def resolve(dotted, top=None):
    """The module run mode gives for ``import <dotted>`` (e.g.
    ``tensorflow.contrib.slim``), or None when it is not part of the TF1 tree
    (then TensorFlow's own module of that name is imported). An unknown
    ``tensorflow.contrib.*`` or ``tensorflow.examples.*`` module raises
    ``ModuleNotFoundError``. ``top``: the
    ``tensorflow`` module to look in (default: :func:`tensorflow_module`)."""
    node = top if top is not None else tensorflow_module()
    parts = dotted.split(".")
    for depth, part in enumerate(parts[1:], start=2):
        try:
            node = getattr(node, part)
        except AttributeError as e:
            reason = e
        else:
            if isinstance(node, types.ModuleType):
                continue
            # a name of a module without counterpart (a placeholder), not a module
            reason = f"{tf1_name('.'.join(parts[:depth]))} is not a module"
        message = missing_module_message(dotted, reason)
        if message is not None:
            raise ModuleNotFoundError(message, name=dotted) from None
        return None
    return node
