"""SciPy's removed image functions (``scipy.misc.imread``, ``imsave``, ``imresize``,
``toimage``, ``fromimage``, ``bytescale``: gone since SciPy 1.2) to run mode's own
Pillow functions, which keep SciPy 1.1's behaviour (palette images read as RGB,
arrays that are not uint8 scaled by their minimum and maximum before they are saved
or resized): written beside the program (:mod:`tf1compat.port.support`) as
``tf1_legacy/scipy_misc.py``, from :data:`tf1compat.v1.scipy_misc.IMAGE_FUNCTIONS`.

``from scipy.misc import imread`` becomes ``from tf1_legacy.scipy_misc import
imread``, ``from scipy import misc`` ``from tf1_legacy import scipy_misc as misc``,
and ``scipy.misc.imread(...)`` ``scipy_misc.imread(...)``. A file that also uses
another ``scipy.misc`` name keeps its imports, with a finding for each.
"""

import libcst as cst
from libcst.codemod.visitors import RemoveImportsVisitor

from tf1compat.port.fixers._base import Fixer, dotted_source
from tf1compat.port.support import SUPPORT_PACKAGE
from tf1compat.v1 import scipy_misc

__all__ = ["ScipyMisc"]

_MODULE = "scipy.misc"
_SUPPORT = scipy_misc.__name__.rpartition(".")[2]
_PILLOW = "pillow"


class ScipyMisc(Fixer):
    """Moves ``scipy.misc``'s image functions to the support module."""

    def __init__(self, context, file):
        super().__init__(context, file)
        self._others = []     # (node, name) of scipy.misc names that are no image function
        self._uses = []       # scipy.misc.<function> attribute nodes
        self._names = set()
        self._imports = {}    # (original, updated) import statement -> its rewrite

    def visit_Attribute(self, node):
        dotted = self.dotted_name(node)
        if dotted is None or not dotted.startswith(_MODULE + "."):
            return True
        name, _, rest = dotted[len(_MODULE) + 1:].partition(".")
        if rest:
            return True  # the function's node is further in
        if name in scipy_misc.IMAGE_FUNCTIONS:
            self._uses.append(node)
            self._names.add(name)
        else:
            self._others.append((node, f"{_MODULE}.{name}"))
        return False

    def visit_ImportFrom(self, node):
        module = cst.Module([]).code_for_node(node.module) if node.module else ""
        if module == _MODULE and not isinstance(node.names, cst.ImportStar):
            for alias in node.names:
                name = alias.name.value
                if name in scipy_misc.IMAGE_FUNCTIONS:
                    self._names.add(name)
                else:
                    self._others.append((node, f"{_MODULE}.{name}"))
        return False

    def leave_Module(self, original_node, updated_node):
        """The imports, decided now that every use in the file has been seen."""
        if self._others and self._names:
            for node, name in self._others:
                self.not_ported(node, name, "not one of SciPy 1.1's image functions the port "
                                "moves to Pillow; its imports of scipy.misc stay")
        if not self._moving():
            return updated_node
        for (original, updated), replacement in self._imports.items():
            new = replacement(original, updated)
            if new is not updated:
                updated_node = updated_node.deep_replace(updated, new)
        return updated_node

    def _moving(self):
        return bool(self._names) and not self._others

    def _record(self, node, replacement):
        self.file.support.update((scipy_misc.__name__, name) for name in self._names)
        self.file.requirements.add(_PILLOW)
        self.changed(node, _MODULE, replacement)

    def leave_ImportFrom(self, original_node, updated_node):
        self._imports[(original_node, updated_node)] = self._import_from
        return updated_node

    def leave_Import(self, original_node, updated_node):
        self._imports[(original_node, updated_node)] = self._import
        return updated_node

    def _import_from(self, original_node, updated_node):
        if updated_node.module is None:
            return updated_node
        module = cst.Module([]).code_for_node(updated_node.module)
        if module == _MODULE:  # from scipy.misc import imread
            self._record(original_node, f"{SUPPORT_PACKAGE}.{_SUPPORT}")
            return updated_node.with_changes(
                module=dotted_source(f"{SUPPORT_PACKAGE}.{_SUPPORT}"))
        if module == "scipy" and not isinstance(updated_node.names, cst.ImportStar) \
                and [alias.name.value for alias in updated_node.names] == ["misc"]:
            alias = updated_node.names[0]
            asname = alias.asname or cst.AsName(name=cst.Name("misc"))
            self._record(original_node, f"{SUPPORT_PACKAGE}.{_SUPPORT}")
            return updated_node.with_changes(
                module=cst.Name(SUPPORT_PACKAGE),
                names=[alias.with_changes(name=cst.Name(_SUPPORT), asname=asname)])
        return updated_node

    def _import(self, original_node, updated_node):
        names = list(updated_node.names)
        for index, alias in enumerate(names):
            if alias.evaluated_name == _MODULE and alias.asname is not None:
                names[index] = alias.with_changes(
                    name=dotted_source(f"{SUPPORT_PACKAGE}.{_SUPPORT}"))
                self._record(original_node, f"{SUPPORT_PACKAGE}.{_SUPPORT}")
        return updated_node.with_changes(names=names) if names != list(updated_node.names) \
            else updated_node

    def leave_Attribute(self, original_node, updated_node):
        if not self._moving() or original_node not in self._uses:
            return updated_node
        # scipy.misc.imread: the scipy.misc part, reached through an import of scipy
        misc = updated_node.value
        if self.dotted_name(original_node.value) != _MODULE or not isinstance(misc, cst.Attribute):
            return updated_node
        self.add_import(SUPPORT_PACKAGE, _SUPPORT)
        RemoveImportsVisitor.remove_unused_import(self.context, _MODULE)
        RemoveImportsVisitor.remove_unused_import(self.context, "scipy")
        self._record(original_node, f"{_SUPPORT}.{original_node.attr.value}")
        return updated_node.with_changes(value=cst.Name(_SUPPORT))
