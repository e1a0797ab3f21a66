"""A ``tf.cond`` replaced by the ops of one of its branches.

A v2 cond is an ``If`` op calling one of two functions of the graph's library. For
a batch whose examples all take the same branch, :func:`with_branch` gives the
graph with the ``If`` op replaced by a copy of that branch's ops, so the branch's
work can run on the whole batch. The copy keeps the ``If`` op's name: an
``IdentityN`` of that name passes on the branch's outputs, so its consumers are
unchanged. :func:`called_cond` builds a cond whose branches TensorFlow instantiates
when it first runs (the fallbacks of a batch function no batch takes cost no
start-up).
"""

from collections.abc import Callable
from typing import Any

from tensorflow.core.framework import attr_value_pb2, graph_pb2, node_def_pb2
from tensorflow.python.framework.function_def_to_graph import function_def_to_graph_def

from tf1compat._tf import tf, v1
from tf1compat._typing import GraphDef, NodeDef, Tensor
from tf1compat.pipeline.graph_model import op_types
from tf1compat.pipeline.graph_model.structure import InputName, data_inputs, parse_input

__all__ = ["with_branch", "branch_nodes", "copied_prefix", "passing_branch", "called_cond"]


def _function(graph_def: GraphDef, node: NodeDef, taken: bool) -> Any:
    name = node.attr[op_types.IF_BRANCHES[taken]].func.name
    return next(f for f in graph_def.library.function if f.signature.name == name)


def branch_nodes(graph_def: GraphDef, node: NodeDef, taken: bool) -> list[NodeDef]:
    """The nodes of the branch an ``If`` node runs when its predicate is ``taken``."""
    return list(_function(graph_def, node, taken).node_def)


def passing_branch(graph_def: GraphDef, node: NodeDef) -> bool | None:
    """For the cond of a ``tf.debugging.Assert`` (one branch holds an ``Assert``, the
    other only passes values on), the predicate's value taking the passing branch;
    None for other conds."""
    for taken in (True, False):
        passing = all(n.op in op_types.PLUMBING for n in branch_nodes(graph_def, node, taken))
        if passing and any(n.op == op_types.ASSERT
                           for n in branch_nodes(graph_def, node, not taken)):
            return taken
    return None


def _renamed(text: str, prefix: str) -> str:
    """The GraphDef input ``text`` with ``prefix`` before the name of its node."""
    name = parse_input(text)
    return str(name._replace(op=prefix + name.op))


def copied_prefix(name: str, taken: bool) -> str:
    """The prefix of the names of the ops :func:`with_branch` copies into the graph."""
    return f"{name}/{op_types.IF_BRANCHES[taken]}/"


def with_branch(graph_def: GraphDef, name: str, taken: bool) -> GraphDef:
    """A copy of ``graph_def`` whose ``If`` node ``name`` runs the branch for a
    predicate ``taken`` (True: ``then_branch``) unconditionally."""
    result = graph_pb2.GraphDef()
    result.CopyFrom(graph_def)
    index = next(i for i, node in enumerate(result.node) if node.name == name)
    node = result.node[index]
    function = _function(result, node, taken)
    body, flat_names = function_def_to_graph_def(function)
    prefix = copied_prefix(name, taken)
    arguments = [str(argument) for argument in data_inputs(node)[1:]]   # after the predicate
    controls = [text for text in node.input if parse_input(text).control]
    by_argument = dict(zip((a.name for a in function.signature.input_arg), arguments,
                           strict=True))
    copies = []
    for inner in body.node:
        copy = result.node.add()
        if inner.name in by_argument:     # an argument's placeholder: the If's input
            copy.name, copy.op = prefix + inner.name, op_types.IDENTITY
            copy.input.append(by_argument[inner.name])
            copy.attr[op_types.TYPE_ATTRIBUTE].type = inner.attr[op_types.DTYPE_ATTRIBUTE].type
        else:
            copy.CopyFrom(inner)
            copy.name = prefix + inner.name
            del copy.input[:]
            copy.input.extend(_renamed(i, prefix) for i in inner.input)
        copy.input.extend(controls)
        copies.append(copy.name)
    outputs = [_renamed(flat_names[function.ret[arg.name]], prefix)
               for arg in function.signature.output_arg]
    passed = node_def_pb2.NodeDef(name=name, op="IdentityN" if outputs else "NoOp")
    passed.input.extend(outputs or [str(InputName(copy, control=True)) for copy in copies])
    if outputs:
        output_types = node.attr[op_types.IF_OUTPUT_TYPES].list.type
        passed.attr[op_types.TYPE_ATTRIBUTE].list.type.extend(output_types)
    result.node[index].CopyFrom(passed)
    return result


def called_cond(predicate: Tensor, true_fn: Callable[[], Any],
                false_fn: Callable[[], Any]) -> Any:
    """``tf.cond(predicate, true_fn, false_fn)`` in a graph (a ``tf.function``) whose
    ``If`` op calls the taken branch's function instead of having both branches
    inlined: TensorFlow instantiates the branches when the op first runs, not when it
    instantiates the enclosing function (a cond in a branch no call takes costs
    nothing). A call per run of the op: for conds run once per batch."""
    graph = v1.get_default_graph()
    before = len(graph.get_operations())
    outputs = tf.cond(predicate, true_fn, false_fn)
    for op in graph.get_operations()[before:]:
        if op.type in op_types.IFS:
            op._set_attr(op_types.IF_INLINED, attr_value_pb2.AttrValue(b=False))
    return outputs
