"""Which ops of a graph may give other values on another call with the same inputs.

Random ops, ``py_func`` and any other op TensorFlow registers as stateful with
outputs vary; an ``Assert`` (stateful, no outputs) does not. A control-flow op
(``If``, ``While``, ``Case``, a function call) varies when an op of its functions
does: slim's image decoding is an ``If`` that TensorFlow marks stateful only
because a branch holds an ``Assert``. An op type TensorFlow does not know varies.
"""

from collections.abc import Callable, Iterable, Iterator
from typing import Any

from tensorflow.python.framework import op_def_registry  # each op type's is_stateful

from tf1compat._typing import Graph, GraphDef, NodeDef, Operation
from tf1compat.pipeline.graph_model import op_types
from tf1compat.pipeline.graph_model.structure import parse_input, walk

__all__ = ["called_nodes", "has_stateful_branches", "varying_ops", "varying_op_types"]

_Functions = dict[str, Any]     # a graph's library functions (FunctionDef) by name
_Known = dict[str, bool]        # a test's answer for each library function seen
_NodeTest = Callable[[NodeDef, _Functions, _Known], bool]


def _attribute_functions(attributes: Any) -> Iterator[str]:
    """Names of the functions a node's attributes call (``then_branch``, ``body``, ...)."""
    for value in attributes.values():
        if value.HasField("func"):
            yield value.func.name
        elif value.HasField("list"):
            yield from (function.name for function in value.list.func)


def _node_varies(node: NodeDef, functions: _Functions, known: _Known) -> bool:
    called = list(_attribute_functions(node.attr))
    if called:
        return any(_function_has(name, functions, known, _node_varies) for name in called)
    op_def = op_def_registry.get(node.op)
    if op_def is None:
        return node.op not in functions or _function_has(node.op, functions, known, _node_varies)
    return op_def.is_stateful and bool(op_def.output_arg)


def _function_has(name: str, functions: _Functions, known: _Known,
                  node_test: _NodeTest) -> bool:
    """Whether library function ``name`` (one not in ``functions``: yes) has a node
    passing ``node_test(node, functions, known)``; ``known`` keeps the answers of
    the functions seen, for that one test."""
    if name not in known:
        known[name] = False   # a recursive call adds nothing new
        function = functions.get(name)
        known[name] = function is None or any(
            node_test(node, functions, known) for node in function.node_def)
    return known[name]


def varying_ops(ops: Iterable[Operation], graph_def: GraphDef) -> list[Operation]:
    """The ops of ``ops`` (graph operations) whose values may vary between calls
    (see the module docstring); ``graph_def`` gives the function library."""
    functions = {f.signature.name: f for f in graph_def.library.function}
    known: _Known = {}
    return [op for op in ops if _node_varies(op.node_def, functions, known)]


def varying_op_types(graph: Graph) -> list[str]:
    """The types of the ops of ``graph`` whose values may vary between calls, sorted."""
    return sorted({op.type for op in varying_ops(graph.get_operations(), graph.as_graph_def())})


def called_nodes(node: NodeDef, graph_def: GraphDef) -> list[NodeDef]:
    """The nodes of the functions ``node`` calls (``If`` branches, ``Case``
    branches, ...), and of those they call."""
    functions = {f.signature.name: f for f in graph_def.library.function}

    def library_calls(attributes: Any) -> list[str]:
        return [name for name in _attribute_functions(attributes) if name in functions]
    called = walk(library_calls(node.attr), lambda name: [
        callee for inner in functions[name].node_def for callee in library_calls(inner.attr)])
    return [inner for name in called for inner in functions[name].node_def]


def _stateful_node(node: NodeDef, functions: _Functions, known: _Known) -> bool:
    if node.op in functions:    # a call of a library function by its name
        return _function_has(node.op, functions, known, _stateful_node)
    op_def = op_def_registry.get(node.op)
    return op_def is None or op_def.is_stateful or any(
        _function_has(name, functions, known, _stateful_node)
        for name in _attribute_functions(node.attr))


# v1 control flow: the ops a cond branch or a loop body starts and ends with
_BRANCH_STARTS = op_types.COND_SWITCHES | {"Enter", "RefEnter"}
_BRANCH_ENDS = op_types.COND_MERGES | {"Exit", "RefExit"}
_CONTROL_FLOW = _BRANCH_STARTS | _BRANCH_ENDS


def has_stateful_branches(graph_def: GraphDef) -> bool:
    """Whether ``graph_def`` has a stateful op inside control flow: in a branch or body
    of a function it calls (an ``If`` holding an ``Assert``, as ``tf.case(exclusive=
    True)`` makes), or between a v1 cond's ``Switch`` and ``Merge`` (a loop's ``Enter``
    and ``Exit``); or an op of a type TensorFlow does not know. Imported into a
    tf.function, such a graph meets automatic control dependencies that do not know
    its control flow; stateful ops outside any (random draws, ``tf.random_crop``'s
    ``Assert``) do not."""
    functions = {f.signature.name: f for f in graph_def.library.function}
    known: _Known = {}
    nodes = {node.name: node for node in graph_def.node}
    consumers: dict[str, list[str]] = {}
    for node in graph_def.node:
        for name in node.input:
            consumers.setdefault(parse_input(name).op, []).append(node.name)
        if op_def_registry.get(node.op) is None and node.op not in functions:
            return True
        called = [*_attribute_functions(node.attr), *([node.op] if node.op in functions else [])]
        if any(_function_has(name, functions, known, _stateful_node) for name in called):
            return True
    inside = walk([name for name, node in nodes.items() if node.op in _BRANCH_STARTS],
                  lambda name: consumers.get(name, []),
                  stop=lambda name: nodes[name].op in _BRANCH_ENDS)
    return any(nodes[name].op not in _CONTROL_FLOW
               and _stateful_node(nodes[name], functions, known) for name in inside)
