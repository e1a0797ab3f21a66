"""``tensorflow.contrib`` in run mode, built from the TF-free table
:data:`~tf1compat.v1.contrib_table.CONTRIB` (module name ->
:class:`~tf1compat.v1.contrib_table.ContribModule`). A mapped module answers from its
``extras`` first, then its ``bases`` in order; names listed in ``unsupported``
and every name of a module without counterpart are placeholders
(:func:`~tf1compat.v1.proxy.unsupported`): they import fine and raise
:class:`~tf1compat.errors.UnsupportedTF1Error` naming the alternative when called.
Names of ``keras2`` are TensorFlow's under Keras 2 and those placeholders under
Keras 3. ``learn`` is such a module except for its datasets (:mod:`tf1compat.v1.tutorials`);
tf-slim's layers and variables take TF 1.x's float dimensions
(:mod:`tf1compat.v1.tf1_rules`).
"""

import importlib

from tf1compat._tf import tf, v1
from tf1compat.v1 import tf1_rules, tutorials
from tf1compat.v1.contrib_table import CONTRIB, unknown_contrib_message
from tf1compat.v1.proxy import ProxyModule, tf1_name, unsupported, unsupported_module

__all__ = ["build_contrib", "public_names"]


def _referenced(reference):
    """What a table reference names: ``tf.X`` / ``v1.X`` an attribute path of
    TensorFlow 2 / ``tf.compat.v1``, ``module:name`` an attribute of a module, anything
    else a module to import."""
    module, _, attribute = reference.partition(":")
    if attribute:
        return getattr(importlib.import_module(module), attribute)
    root, _, path = reference.partition(".")
    if root not in ("tf", "v1"):
        return importlib.import_module(reference)
    node = tf if root == "tf" else v1
    for part in path.split("."):
        node = getattr(node, part)
    return node


def _with_keras2(reference, placeholder):
    """What ``reference`` names under Keras 2; under Keras 3, which lacks it
    (TensorFlow 2's "`X` is not available with Keras 3."), the placeholder."""
    try:
        return _referenced(reference)
    except AttributeError:
        return placeholder


def public_names(module):
    """What ``from module import *`` would give: the names a contrib module takes
    from its base ``module`` (``tf_slim.ops.variables``' ``arg_scope``, the module it
    imported, is not one)."""
    names = getattr(module, "__all__", None)
    return frozenset(names if names is not None else
                     (n for n in dir(module) if not n.startswith("_")))


def _build_module(name, spec, table):
    module_name = f"tensorflow.contrib.{name}"
    if name == "learn":  # its datasets are real (the MNIST tutorials')
        return tutorials.build_learn(spec.alternative, spec.constants)
    if spec.maps_to is None:
        return unsupported_module(module_name, spec.alternative, spec.constants)
    bases = [(base, public_names(base)) for base in map(_referenced, spec.bases)]
    placeholders = {n: unsupported(tf1_name(module_name, n), alternative)
                    for n, alternative in spec.unsupported.items()}
    float_dimensions = {}  # tf-slim's layers and variables taking TF 1.x's float dimensions
    for base, _ in reversed(bases):
        float_dimensions.update(tf1_rules.slim_functions(base, module_name))

    def from_bases(attribute):
        for base, names in bases:
            if attribute in names:
                return getattr(base, attribute)
        return None

    lazy = {n: (lambda reference=reference: _referenced(reference))
            for n, reference in spec.extras.items()}
    keras2_placeholders = {n: placeholders.pop(n) for n in spec.keras2}
    lazy.update({n: (lambda n=n, reference=reference:
                     _with_keras2(reference, keras2_placeholders[n]))
                 for n, reference in spec.keras2.items()})
    attributes = {**float_dimensions, **placeholders}
    if name == "slim":  # tf1compat's prefetch_queue, through the replaceable table
        attributes["prefetch_queue"] = ProxyModule(
            f"{module_name}.prefetch_queue", importlib.import_module(
                "tf_slim.data.prefetch_queue"), table=table)
    return ProxyModule(module_name, attributes=attributes, lazy=lazy, fallback=from_bases,
                       fallback_names=frozenset().union(*(names for _, names in bases)),
                       doc=f"{tf1_name(module_name)} in tf1compat run mode: {spec.maps_to}")


def build_contrib(table):
    """The ``tensorflow.contrib`` module: each entry of :data:`CONTRIB`, built on
    first use. ``table`` is the queue API table (for slim's ``prefetch_queue``)."""
    lazy = {name: (lambda name=name, spec=spec: _build_module(name, spec, table))
            for name, spec in CONTRIB.items()}

    def unknown(name):
        raise AttributeError(unknown_contrib_message(name))

    return ProxyModule("tensorflow.contrib", lazy=lazy, fallback=unknown,
                       doc="tf.contrib in tf1compat run mode; see "
                                          "tf1compat.v1.contrib_table.CONTRIB")
