"""Source forms of table rows, as the tables of :mod:`tf1compat.v1` write them: a
Python expression where ``NP`` is the program's ``numpy``, ``SELF`` a method
call's object, ``ARGS`` a call's arguments and ``ARG0`` its only argument
(``"NP.isin(ARGS).ravel()"``, ``"SELF.tobytes(ARGS)"``, ``"-NP.inf"``).
:func:`fill` makes the LibCST expression of one, for one use in a program."""

import builtins

import libcst as cst

__all__ = ["fill", "fits", "takes_call", "modules_named", "needs_parentheses"]

_PLACEHOLDERS = frozenset({"NP", "SELF", "ARGS", "ARG0"})
_ATOMS = (cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.Integer, cst.Float,
          cst.SimpleString, cst.List, cst.Tuple, cst.Dict, cst.Set)


def needs_parentheses(expression):
    """True for an expression that must be parenthesized before ``.x`` or an operator."""
    return not isinstance(expression, _ATOMS) or bool(expression.lpar)


def _parenthesized(expression):
    if not needs_parentheses(expression) or expression.lpar:
        return expression
    return expression.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


def takes_call(template):
    """True for a form of a whole call (with ``ARGS`` or ``ARG0``), False for a form
    of the function or value alone."""
    return "ARGS" in template or "ARG0" in template


def fits(template, call):
    """Whether the form ``template`` can be written for ``call`` (None: a use that is
    no call): a call form needs a call, and ``ARG0`` one positional argument."""
    if not takes_call(template):
        return True
    if call is None:
        return False
    return "ARG0" not in template or len(call.args) == 1 and call.args[0].keyword is None \
        and not call.args[0].star


def modules_named(template):
    """The modules a template's spelling needs imported (``pickle`` of
    ``pickle.loads``), builtins and placeholders left out."""
    root = cst.parse_expression(template)
    while isinstance(root, (cst.Attribute, cst.Call, cst.UnaryOperation)):
        root = root.value if isinstance(root, cst.Attribute) else \
            root.func if isinstance(root, cst.Call) else root.expression
    if isinstance(root, cst.Name) and root.value not in _PLACEHOLDERS \
            and not hasattr(builtins, root.value):
        return [root.value]
    return []


class _Filler(cst.CSTTransformer):
    def __init__(self, numpy, receiver, call):
        self.numpy, self.receiver, self.call = numpy, receiver, call

    def leave_Name(self, original_node, updated_node):
        if updated_node.value == "NP":
            return cst.Name(self.numpy)
        if updated_node.value == "SELF":
            return _parenthesized(self.receiver)
        if updated_node.value == "ARG0":
            return _parenthesized(self.call.args[0].value)
        return updated_node

    def leave_Call(self, original_node, updated_node):
        if not any(isinstance(arg.value, cst.Name) and arg.value.value == "ARGS"
                   for arg in original_node.args):
            return updated_node
        args = []
        for template_arg, arg in zip(original_node.args, updated_node.args, strict=True):
            if isinstance(template_arg.value, cst.Name) and template_arg.value.value == "ARGS":
                args.extend(self.call.args)
            else:
                args.append(arg)
        comma = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
        args = [arg.with_changes(comma=comma) if arg.comma is cst.MaybeSentinel.DEFAULT
                else arg for arg in args[:-1]] + \
            [args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)] if args else []
        return updated_node.with_changes(args=args)


def fill(template, *, numpy="np", receiver=None, call=None):
    """The expression of ``template`` for one use: ``numpy`` the program's name of
    NumPy, ``receiver`` a method call's object, ``call`` the call whose arguments
    ``ARGS`` / ``ARG0`` stand for."""
    return cst.parse_expression(template).visit(_Filler(numpy, receiver, call))
