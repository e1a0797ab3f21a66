"""The MNIST helpers TensorFlow 1.x shipped beside its API
(``tensorflow.examples.tutorials.mnist.input_data`` and ``.mnist``,
``tf.contrib.learn.datasets.mnist``), gone from TensorFlow 2: the port writes run
mode's own (:mod:`tf1compat.v1.mnist_tutorial`: ``read_data_sets`` over the four
``*-idx*-ubyte.gz`` files, ``DataSet.next_batch``, the tutorial's model) beside the
program as ``tf1_legacy/mnist_tutorial.py`` and imports it instead, for the names
:data:`tf1compat.v1.tutorials.MNIST_MODULES` lists.

``from tensorflow.examples.tutorials.mnist import input_data`` becomes ``from
tf1_legacy import mnist_tutorial as input_data``; ``from ...input_data import
read_data_sets`` ``from tf1_legacy.mnist_tutorial import read_data_sets``;
``tf.contrib.learn.datasets.mnist.load_mnist()`` ``mnist_tutorial.load_mnist()``.
A name run mode does not give either (``maybe_download``: it downloads) is a finding.
"""

import libcst as cst

from tf1compat.port.fixers._base import Fixer, dotted_source
from tf1compat.port.support import SUPPORT_PACKAGE
from tf1compat.v1 import mnist_tutorial
from tf1compat.v1.tutorials import MNIST_ALIASES, MNIST_MODULES

__all__ = ["MnistTutorial"]

_SUPPORT = mnist_tutorial.__name__.rpartition(".")[2]
_MODULE = f"{SUPPORT_PACKAGE}.{_SUPPORT}"
_EXAMPLES = "tensorflow.examples"
_NOT_GIVEN = ("TensorFlow 2 has no tensorflow.examples; the port gives its MNIST modules "
              "(input_data, mnist), imported by name")


def _tf1_module(dotted):
    """The MNIST_MODULES key of the TF1 module ``dotted``, or None."""
    dotted = MNIST_ALIASES.get(dotted, dotted)
    return dotted if dotted in MNIST_MODULES else None


def _code(node):
    return cst.Module([]).code_for_node(node)


class MnistTutorial(Fixer):
    """Imports TF 1.x's MNIST helpers from the support module."""

    def _use(self, node, module, names):
        """Report the port of ``module``'s ``names``: the support module holds them."""
        missing = [name for name in names if name not in MNIST_MODULES[module]]
        for name in missing:
            self.not_ported(node, f"{module}.{name}", "not one of TensorFlow 1.x's MNIST "
                            "helpers tf1compat gives (it downloaded, or was TensorFlow's data)")
        self.file.support.update((mnist_tutorial.__name__, name) for name in MNIST_MODULES[module])
        self.changed(node, module, _MODULE)
        return not missing

    def leave_ImportFrom(self, original_node, updated_node):
        if updated_node.relative or updated_node.module is None \
                or isinstance(updated_node.names, cst.ImportStar):
            return updated_node
        module = _code(updated_node.module)
        if _tf1_module(module):   # from ...input_data import read_data_sets
            names = [alias.name.value for alias in updated_node.names]
            if not self._use(original_node, _tf1_module(module), names):
                return updated_node
            return updated_node.with_changes(module=dotted_source(_MODULE))
        modules = [_tf1_module(f"{module}.{alias.name.value}") for alias in updated_node.names]
        if not any(modules):
            if module.startswith(_EXAMPLES):
                self.not_ported(original_node, module, _NOT_GIVEN)
            return updated_node
        if not all(modules):
            self.not_ported(original_node, module, "imports MNIST helpers with other names; "
                            "import them in a statement of their own")
            return updated_node
        names = []
        for alias, tf1_module in zip(updated_node.names, modules, strict=True):
            self._use(original_node, tf1_module, ())
            asname = alias.asname or cst.AsName(name=cst.Name(alias.name.value))
            names.append(alias.with_changes(name=cst.Name(_SUPPORT), asname=asname))
        return updated_node.with_changes(module=cst.Name(SUPPORT_PACKAGE), names=names)

    def leave_Import(self, original_node, updated_node):
        names = list(updated_node.names)
        for index, alias in enumerate(names):
            tf1_module = _tf1_module(alias.evaluated_name)
            if tf1_module and alias.asname is not None:
                self._use(original_node, tf1_module, ())
                names[index] = alias.with_changes(name=dotted_source(_MODULE))
            elif alias.evaluated_name.startswith(_EXAMPLES):
                self.not_ported(original_node, alias.evaluated_name, _NOT_GIVEN)
        return updated_node.with_changes(names=names)

    def visit_Import(self, node):
        return False

    def visit_ImportFrom(self, node):
        return False

    def visit_Attribute(self, node):
        return _tf1_module(self.dotted_name(node) or "") is None

    def leave_Attribute(self, original_node, updated_node):
        tf1_module = _tf1_module(self.dotted_name(original_node) or "")
        if tf1_module is None:
            return updated_node
        self._use(original_node, tf1_module, ())
        self.add_import(SUPPORT_PACKAGE, _SUPPORT)
        return cst.Name(_SUPPORT)
