"""How a graph's ops connect, TF-free: GraphDef input names, one walk, one fixpoint.

A GraphDef names a node's inputs as text: ``"op"`` (output 0 of node ``op``),
``"op:1"``, and ``"^op"`` (a control input: ``op`` runs first, no value passes).
:func:`parse_input` reads one into an :class:`InputName`; the GraphDef edits below
(:func:`sub_graph_def`, :func:`rename_inputs`, :func:`keep_reachable`,
:func:`add_constant_node`) go through it. :func:`walk` is the one traversal (seeds,
expand, stop): the ancestors of ops, the index's upstream walk, the nodes a GraphDef
needs, the functions a node calls, compare's endless-pipeline inference.
:func:`fixpoint` repeats an update over items until nothing changes.
``tests/test_graph_model.py`` checks the input syntax against TensorFlow.
"""

from collections.abc import Callable, Hashable, Iterable
from typing import Any, NamedTuple, TypeVar

from tf1compat._typing import GraphDef, NodeDef, Operation, Tensor
from tf1compat.pipeline.graph_model import op_types

__all__ = ["InputName", "parse_input", "data_inputs", "consumed_tensors", "rename_inputs",
           "keep_reachable", "sub_graph_def", "add_constant_node", "walk", "fixpoint",
           "input_ops", "ancestors"]

_CONTROL = "^"
Item = TypeVar("Item", bound=Hashable)


# ------------------------------------------------------------ GraphDef input names

class InputName(NamedTuple):
    """One input of a GraphDef node: output ``index`` of node ``op``, or (``control``)
    a control input from ``op``."""

    op: str
    index: int = 0  # type: ignore[assignment]  # the field hides tuple.index
    control: bool = False

    @property
    def tensor(self) -> str:
        """``op:index``, the tensor name ``Graph.get_tensor_by_name`` and
        ``import_graph_def``'s ``input_map`` and ``return_elements`` take."""
        return f"{self.op}:{self.index}"

    def __str__(self) -> str:
        if self.control:
            return _CONTROL + self.op
        return self.op if self.index == 0 else self.tensor


def parse_input(text: str) -> InputName:
    """The :class:`InputName` of a GraphDef input (``"op"``, ``"op:1"``, ``"^op"``) or
    of a tensor name (``"op:0"``)."""
    if text.startswith(_CONTROL):
        return InputName(text[len(_CONTROL):], control=True)
    op, _, index = text.partition(":")
    return InputName(op, int(index) if index else 0)


def _is_control(text: str) -> bool:
    return text.startswith(_CONTROL)


def _tensor_name(text: str) -> str:
    """The tensor name of a data input (``"op"`` -> ``"op:0"``), without parsing it
    (the walks over large GraphDefs call this for every input)."""
    return text if ":" in text else f"{text}:0"


def data_inputs(node: NodeDef) -> list[InputName]:
    """The inputs of a NodeDef that pass values (its control inputs left out), in order."""
    return [name for name in map(parse_input, node.input) if not name.control]


def consumed_tensors(graph_def: GraphDef) -> set[str]:
    """The tensor names (``op:index``) the nodes of ``graph_def`` take as values."""
    return {_tensor_name(text) for node in graph_def.node for text in node.input
            if not _is_control(text)}


def rename_inputs(graph_def: GraphDef, renamed: dict[str, str]) -> None:
    """Point every node input taking a tensor of ``renamed`` (``{"op:i": "other:j"}``)
    at its new name, in place."""
    for node in graph_def.node:
        inputs = [text if _is_control(text) else renamed.get(_tensor_name(text), text)
                  for text in node.input]
        del node.input[:]
        node.input.extend(inputs)


def _nodes_needed(graph_def: GraphDef, names: Iterable[str]) -> set[str]:
    """The names of the nodes ``names`` (node, tensor or input names) need: themselves
    and every node they take data or control from, directly or not."""
    nodes = {node.name: node for node in graph_def.node}
    seeds = [parse_input(name).op for name in names]
    reached = walk([name for name in seeds if name in nodes],
                   lambda name: [i.op for i in map(parse_input, nodes[name].input)
                                 if i.op in nodes])
    return set(reached)


def keep_reachable(graph_def: GraphDef, names: Iterable[str]) -> None:
    """Delete, in place, the nodes of ``graph_def`` that the nodes ``names`` do not need."""
    needed = _nodes_needed(graph_def, names)
    for index in reversed(range(len(graph_def.node))):
        if graph_def.node[index].name not in needed:
            del graph_def.node[index]


def sub_graph_def(graph_def: GraphDef, names: set[str]) -> GraphDef:
    """The nodes ``names`` of ``graph_def`` (graph order), importable on their own:
    no devices, no colocation, no control inputs from outside."""
    sub = type(graph_def)()
    sub.versions.CopyFrom(graph_def.versions)
    sub.library.CopyFrom(graph_def.library)
    for node in graph_def.node:
        if node.name not in names:
            continue
        copy = sub.node.add()
        copy.CopyFrom(node)
        copy.device = ""
        if op_types.COLOCATION in copy.attr:
            del copy.attr[op_types.COLOCATION]
        kept = [text for text in copy.input
                if not _is_control(text) or parse_input(text).op in names]
        del copy.input[:]
        copy.input.extend(kept)
    return sub


def add_constant_node(graph_def: GraphDef, name: str, tensor: Any) -> str:
    """Add a ``Const`` node holding ``tensor`` (a TensorProto) named ``name``, or
    ``name_1``, ... when that is taken; returns its name."""
    taken = {node.name for node in graph_def.node}
    unique, count = name, 0
    while unique in taken:
        count += 1
        unique = f"{name}_{count}"
    node = graph_def.node.add()
    node.name, node.op = unique, op_types.CONST
    node.attr[op_types.DTYPE_ATTRIBUTE].type = tensor.dtype
    node.attr[op_types.CONST_VALUE].tensor.CopyFrom(tensor)
    return unique


# ------------------------------------------------------------ walks

def walk(seeds: Iterable[Item], expand: Callable[[Item], Iterable[Item]],
         stop: Callable[[Item], bool] | None = None) -> list[Item]:
    """Every item reachable from ``seeds`` through ``expand(item)`` (the items it leads
    to), each once, in breadth-first order (the seeds first). An item for which
    ``stop(item)`` is true is reached but not expanded; ``stop`` and ``expand`` are
    called once per item."""
    order = list(dict.fromkeys(seeds))
    seen = set(order)
    for item in order:          # the list grows as the walk goes
        if stop is not None and stop(item):
            continue
        for following in expand(item):
            if following not in seen:
                seen.add(following)
                order.append(following)
    return order


def fixpoint(items: Iterable[Item], update: Callable[[Item], bool]) -> None:
    """Call ``update(item)`` for each of ``items`` in order, pass after pass, until a
    pass in which no call returns True (changed something)."""
    items = list(items)
    changed = True
    while changed:
        changed = False
        for item in items:
            changed = update(item) or changed


def input_ops(op: Operation) -> list[Operation]:
    """The ops ``op`` takes data or control from."""
    return [t.op for t in op.inputs] + list(op.control_inputs)


def ancestors(tensors_or_ops: Iterable[Tensor | Operation],
              stop: Callable[[Operation], bool] | None = None) -> set[Operation]:
    """Ops reachable backwards from ``tensors_or_ops`` through data and control inputs;
    ``stop(op)`` True ends a path (the op itself is included)."""
    return set(walk((getattr(t, "op", t) for t in tensors_or_ops), input_ops, stop))
