"""TensorFlow version checks, judged as run mode answers them.

A TF1 program that checks ``tf.__version__`` (``if tf.__version__.split('.')[0] !=
"1": raise ...``) guards TF1's API. Under ``tf1compat run`` it sees TF1's version
(:data:`tf1compat.v1.tf1_rules.TF1_VERSION`, at the names
:data:`~tf1compat.v1.tf1_rules.VERSION_NAMES`), and the port gives it TF1's API
through ``tf.compat.v1``; under plain TensorFlow 2 the check would see 2.x and stop
the program. So a check is decided once, with TF1's version, as run mode decides
it: an ``if`` keeps the branch taken (a refusal that TF1 passes goes), an
``assert`` TF1 passes goes, ``a if check else b`` becomes the side taken.

A check is judged only when it reads nothing but the version: literals, string
methods (``split``, ``startswith``, ...), indexing, ``int``/``float``/``tuple``/
``map``, comparisons, ``and``/``or``/``not``, and version parsers
(``LooseVersion``, ``StrictVersion``, ``version.parse``, ``Version``,
``parse_version``) over release numbers alone (``1.4``, ``2.0.0``: a pre-release
such as ``2.0.0rc1`` is not judged, where those parsers disagree). Anything else that
compares the version (a variable holding it, a check TF1 itself fails, a ``while``)
is a finding naming the line; printing or logging the version is left as it is.
"""

import ast
import operator
import re

import libcst as cst

from tf1compat.port.fixers._base import Fixer
from tf1compat.v1.tf1_rules import TF1_VERSION, VERSION_NAMES

__all__ = ["TFVersion", "CannotJudge", "judge"]

_NAMES = VERSION_NAMES | {name.replace("tensorflow.", "tensorflow.compat.v1.", 1)
                          for name in VERSION_NAMES}
_PLACEHOLDER = "__tf1_version__"
_STRING_METHODS = frozenset({"split", "rsplit", "startswith", "endswith", "strip", "lstrip",
                             "rstrip", "partition", "rpartition", "lower", "upper", "replace",
                             "isdigit"})
_BUILTINS = {"int": int, "float": float, "str": str, "tuple": tuple, "list": list,
             "len": len, "map": lambda f, xs: list(map(f, xs))}
_PARSERS = frozenset({"LooseVersion", "StrictVersion", "Version", "parse_version", "parse"})
_COMPARE = {ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt,
            ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge,
            ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b}
# calls that only show the version: a use inside them is no check
_SHOWING = frozenset({"print", "info", "debug", "warning", "warn", "error", "log"})


class CannotJudge(Exception):
    """The expression reads more than the version, or in a way not modelled."""


_RELEASE = re.compile(r"\d+(\.\d+)*")


class _Release(tuple):
    """A version's release numbers, ordered as ``LooseVersion``, ``StrictVersion`` and
    ``packaging`` all order them; where they disagree (``2`` and ``2.0``: equal to
    ``packaging``, not to ``LooseVersion``) the check is not judged."""

    def _key(self, other):
        if not isinstance(other, _Release):
            raise CannotJudge
        shorter, longer = sorted((tuple(self), tuple(other)), key=len)
        if len(shorter) != len(longer) and longer[:len(shorter)] == shorter:
            raise CannotJudge
        return tuple(self), tuple(other)

    def __eq__(self, other):
        mine, theirs = self._key(other)
        return mine == theirs

    def __ne__(self, other):
        return not self == other

    def __lt__(self, other):
        mine, theirs = self._key(other)
        return mine < theirs

    def __le__(self, other):
        return self < other or self == other

    def __gt__(self, other):
        return not self <= other

    def __ge__(self, other):
        return not self < other

    __hash__ = tuple.__hash__


def _release(text):
    """The :class:`_Release` of a version of release numbers only (``1.4``)."""
    if not isinstance(text, str) or not _RELEASE.fullmatch(text.strip()):
        raise CannotJudge
    return _Release(int(part) for part in text.strip().split("."))


def _parser(node):
    name = node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", None)
    if name == "parse" and not (isinstance(node, ast.Attribute)
                                and getattr(node.value, "id", None) == "version"):
        return False      # a bare parse(...) may be anything; version.parse is packaging's
    return name in _PARSERS


def _value(node, version):
    """The value of the ``ast`` expression ``node`` where ``__tf1_version__`` is
    ``version``; raises :class:`CannotJudge` for anything else it reads."""
    if isinstance(node, ast.Constant) and isinstance(node.value, (str, int, float, bool)):
        return node.value
    if isinstance(node, ast.Name) and node.id == _PLACEHOLDER:
        return version
    if isinstance(node, (ast.Tuple, ast.List)):
        return [_value(item, version) for item in node.elts]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.Not, ast.USub)):
        operand = _value(node.operand, version)
        return not operand if isinstance(node.op, ast.Not) else -operand
    if isinstance(node, ast.BoolOp):
        values = (_value(value, version) for value in node.values)
        return all(values) if isinstance(node.op, ast.And) else any(values)
    if isinstance(node, ast.Compare):
        left = _value(node.left, version)
        for op, right_node in zip(node.ops, node.comparators, strict=True):
            if type(op) not in _COMPARE:
                raise CannotJudge
            right = _value(right_node, version)
            if not _COMPARE[type(op)](_ordered(left), _ordered(right)):
                return False
            left = right
        return True
    if isinstance(node, ast.Subscript):
        container = _value(node.value, version)
        if isinstance(node.slice, ast.Slice):
            bounds = [None if part is None else _value(part, version)
                      for part in (node.slice.lower, node.slice.upper, node.slice.step)]
            return container[slice(*bounds)]
        return container[_value(node.slice, version)]
    if isinstance(node, ast.Call) and not node.keywords:
        arguments = [_value(argument, version) if not _is_builtin(argument) else
                     _BUILTINS[argument.id] for argument in node.args]
        if _parser(node.func) and len(arguments) == 1:
            return _release(arguments[0])
        if isinstance(node.func, ast.Attribute) and node.func.attr in _STRING_METHODS:
            target = _value(node.func.value, version)
            if isinstance(target, str):
                return getattr(target, node.func.attr)(*arguments)
        if _is_builtin(node.func):
            return _BUILTINS[node.func.id](*arguments)
    raise CannotJudge


def _is_builtin(node):
    return isinstance(node, ast.Name) and node.id in _BUILTINS


def _ordered(value):
    return tuple(value) if isinstance(value, list) else value


def judge(expression, version=TF1_VERSION):
    """The truth of ``expression`` (Python source where ``__tf1_version__`` stands
    for TensorFlow's version) at ``version``; raises :class:`CannotJudge`."""
    try:
        return bool(_value(ast.parse(f"({expression})", mode="eval").body, version))
    except CannotJudge:
        raise
    except (ArithmeticError, LookupError, TypeError, ValueError, SyntaxError) as e:
        raise CannotJudge from e


class _Substitute(cst.CSTTransformer):
    """Puts the placeholder name where a version name was (nodes by identity)."""

    def __init__(self, nodes):
        super().__init__()
        self.nodes = nodes

    def leave_Attribute(self, original_node, updated_node):
        return cst.Name(_PLACEHOLDER) if original_node in self.nodes else updated_node


class _Find(cst.CSTVisitor):
    """Collects the version names (nodes by identity) under a node."""

    def __init__(self, nodes):
        super().__init__()
        self.nodes, self.found = nodes, []

    def visit_Attribute(self, node):
        if node in self.nodes:
            self.found.append(node)
            return False
        return True


def _statements(suite, leading_lines):
    """The statements of an ``if`` branch, to stand where the ``if`` stood (its
    comments above it kept on the first)."""
    if isinstance(suite, cst.SimpleStatementSuite):
        statements = [cst.SimpleStatementLine(body=list(suite.body))]
    else:
        statements = list(suite.body)
    statements[0] = statements[0].with_changes(
        leading_lines=(*leading_lines, *statements[0].leading_lines))
    return statements


class TFVersion(Fixer):
    """Decides the program's TensorFlow version checks with TF1's version."""

    def __init__(self, context, file):
        super().__init__(context, file)
        self._versions = set()     # the version names (original nodes)
        self._judged = set()       # those in a check decided or reported
        self._elifs = set()

    def visit_Attribute(self, node):
        if self.dotted_name(node) in _NAMES:
            self._versions.add(node)
            return False
        return True

    def _uses_in(self, node):
        finder = _Find(self._versions)
        node.visit(finder)
        return finder.found

    def _decide(self, node, test, what):
        """True/False of the check ``test`` (an original node) with TF1's version, or
        None when it reads no version; a check it cannot judge is a finding."""
        uses = self._uses_in(test)
        if not uses:
            return None
        self._judged.update(uses)
        code = cst.Module([]).code_for_node(test.visit(_Substitute(set(uses))))
        try:
            return judge(code)
        except CannotJudge:
            self.not_ported(node, what, (
                f"a TensorFlow version check port cannot judge: under tf1compat run it sees "
                f"{TF1_VERSION}, under TensorFlow 2 its own version; decide it by hand"))
            return None

    def _shown(self, test):
        return cst.Module([]).code_for_node(test).strip()

    def visit_If(self, node):
        if isinstance(node.orelse, cst.If):
            self._elifs.add(node.orelse)
        return True

    def leave_If(self, original_node, updated_node):
        if original_node in self._elifs:
            return updated_node   # decided with the chain it belongs to
        leading = updated_node.leading_lines
        original, updated, decided = original_node, updated_node, False
        while True:    # along the if / elif chain, while its tests are version checks
            shown = self._shown(original.test)
            taken = self._decide(original, original.test, shown)
            if taken is None:
                return updated.with_changes(leading_lines=leading) if decided else updated_node
            if taken:
                self._judge_rest(original.orelse)
                self.changed(original, shown, f"its branch kept (true with TF {TF1_VERSION})")
                return cst.FlattenSentinel(_statements(updated.body, leading))
            decided = True
            if updated.orelse is None:
                self.changed(original, shown, f"removed (false with TF {TF1_VERSION})")
                return cst.RemoveFromParent()
            self.changed(original, shown, f"the branch after it kept (false with TF "
                                          f"{TF1_VERSION})")
            if isinstance(updated.orelse, cst.Else):
                return cst.FlattenSentinel(_statements(updated.orelse.body, leading))
            original, updated = original.orelse, updated.orelse

    def _judge_rest(self, orelse):
        """The version names in the tests of a chain's dropped ``elif`` branches."""
        while isinstance(orelse, cst.If):
            self._judged.update(self._uses_in(orelse.test))
            orelse = orelse.orelse

    def leave_Assert(self, original_node, updated_node):
        shown = self._shown(original_node.test)
        holds = self._decide(original_node, original_node.test, shown)
        if holds:
            self.changed(original_node, f"assert {shown}", f"removed (true with TF {TF1_VERSION})")
            return cst.RemoveFromParent()
        if holds is False:
            self.not_ported(original_node, f"assert {shown}",
                            f"fails with TF1's version {TF1_VERSION} too; left as it was")
        return updated_node

    def leave_IfExp(self, original_node, updated_node):
        taken = self._decide(original_node, original_node.test, self._shown(original_node.test))
        if taken is None:
            return updated_node
        side = updated_node.body if taken else updated_node.orelse
        self.changed(original_node, self._shown(original_node.test),
                     f"{self._shown(side)} ({'true' if taken else 'false'} with TF {TF1_VERSION})")
        return side.with_changes(lpar=updated_node.lpar, rpar=updated_node.rpar) \
            if updated_node.lpar else side

    def leave_IndentedBlock(self, original_node, updated_node):
        if not updated_node.body:   # its only statement was a check that went
            return updated_node.with_changes(body=[cst.SimpleStatementLine([cst.Pass()])])
        return updated_node

    def leave_Call(self, original_node, updated_node):
        name = original_node.func
        name = name.attr.value if isinstance(name, cst.Attribute) else getattr(name, "value", "")
        if name in _SHOWING:
            self._judged.update(self._uses_in(original_node))
        return updated_node

    def leave_Module(self, original_node, updated_node):
        for node in self._versions - self._judged:
            self.not_ported(node, self._shown(node), (
                f"the TensorFlow version, read outside a check port can judge: under "
                f"tf1compat run it is {TF1_VERSION}, under TensorFlow 2 its own; check "
                "what the program does with it"))
        return updated_node
