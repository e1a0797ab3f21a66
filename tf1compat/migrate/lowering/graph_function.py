"""A piece of a legacy graph as a function that ``tf.data`` can call.

:func:`trace_function` collects the ops between some *stop ops* (the readers and
dequeues a queue pipeline starts from) and a list of output tensors, and
:class:`GraphFunction` re-creates exactly those ops wherever it is called: in a
``Dataset.map`` function, eagerly, or in another graph. The ops are copied from
the graph's ``GraphDef`` (with its function library, so ``tf.cond`` bodies come
along) and imported with the stop ops' outputs mapped to the call's arguments:
the ``wrap_function`` + ``prune`` idea, cut to the ops that are needed.

What cannot run inside a tf.data function raises
:class:`~tf1compat.errors.LoweringError` naming the op: a placeholder (queue
runners never feed one), a variable (a copy would not see its updates) and any
other op using a stateful resource (tables, queues, readers).
"""

from tf1compat._tf import tf, v1
from tf1compat.errors import LoweringError
from tf1compat.migrate.lowering.feature_pruning import prune_parses
from tf1compat.pipeline.graph_model import op_types
from tf1compat.pipeline.graph_model.structure import (
    InputName,
    add_constant_node,
    ancestors,
    consumed_tensors,
    keep_reachable,
    parse_input,
    rename_inputs,
    sub_graph_def,
)
from tf1compat.pipeline.graph_model.varying import has_stateful_branches, varying_ops

__all__ = ["GraphFunction", "trace_function", "check_fetch"]

_SPARSE_REASON = ("a SparseTensor through a batching queue (e.g. a VarLenFeature) is not "
                  "lowered; make it dense before batching (tf.sparse.to_dense)")
_SHOWN_TYPES = 3


def _is_stateful_resource(dtype):
    return dtype == tf.resource or dtype.base_dtype != dtype


def _check_op(op):
    """Raise LoweringError when ``op`` cannot be part of a tf.data function."""
    if op.type in op_types.PLACEHOLDERS:
        raise LoweringError(
            op.name, op.type, "a placeholder: queue-runner threads never feed it (the queue "
            "pipeline fails here too); use a constant or tf.compat.v1.placeholder_with_default")
    if op.type in op_types.ITERATOR_OUTPUTS:
        raise LoweringError(op.name, op.type, "a tf.data iterator's output: this part is "
                            "tf.data already (a fast path, or a batching call tf1compat run "
                            "put on tf.data); lower the queue pipeline it came from instead")
    if op.type in op_types.SPARSE_MAPS:
        raise LoweringError(op.name, op.type, _SPARSE_REASON)
    if op.type in op_types.VARIABLES:
        raise LoweringError(
            op.name, op.type, "a variable in the per-example path: a tf.data function would "
            "not see its updates; use its value as a constant")
    for tensor in op.inputs:
        if _is_stateful_resource(tensor.dtype):
            source = tensor.op
            raise LoweringError(
                source.name, source.type, f"a stateful resource used by op '{op.name}' "
                f"({op.type}) in the per-example path; only stateless ops and random ops "
                "can be carried into tf.data")


def check_fetch(fetch):
    """Raise LoweringError for a fetch that is not a plain tensor (a SparseTensor)."""
    if isinstance(fetch, tf.SparseTensor):
        raise LoweringError(fetch.values.op.name, fetch.values.op.type, _SPARSE_REASON)


def trace_function(graph_def, outputs, is_stop=lambda op: False, prune_features=False):
    """The :class:`GraphFunction` computing ``outputs`` from the outputs of stop ops
    (those for which ``is_stop(op)`` is true).

    ``graph_def`` is the graph's ``as_graph_def()`` (made once by the caller).
    The function's ``inputs`` are the outputs of stop ops that the copied ops
    (or ``outputs`` themselves) use, ordered by op name and output index.
    ``prune_features``: its parse ops parse only the keys it needs
    (:mod:`~tf1compat.migrate.lowering.feature_pruning`).
    """
    ops = [op for op in ancestors(outputs, is_stop) if not is_stop(op)]
    inputs = {t for t in outputs if is_stop(t.op)}
    inputs.update(t for op in ops for t in op.inputs if is_stop(t.op))
    # Name what the user wrote: a placeholder or a variable before the ops using it.
    for op in sorted(ops, key=lambda o: (o.type not in op_types.PLACEHOLDERS,
                                         o.type not in op_types.VARIABLES, o.name)):
        _check_op(op)
    ordered = sorted(inputs, key=lambda t: (t.op.name, t.value_index))
    prunings = prune_parses(ops, outputs) if prune_features else {}
    return GraphFunction(graph_def, ops, ordered, list(outputs), prunings)


def _string_constant(graph_def):
    """``add(name, values)``: adds a constant node of the strings ``values`` to
    ``graph_def``, returns its name."""
    return lambda name, values: add_constant_node(
        graph_def, name, tf.make_tensor_proto(values, tf.string, [len(values)]))


def _prune(graph_def, prunings, computed):
    """Rebuild the parse nodes of ``graph_def`` with the kept keys (``prunings``), point
    their consumers at the moved outputs and drop the nodes nothing needs any more
    (the defaults of pruned keys); returns the names of ``computed`` in it."""
    if not prunings:
        return list(computed)
    moved = {}
    for node in list(graph_def.node):
        if node.name in prunings:
            prunings[node.name].rebuild_node(node, _string_constant(graph_def))
            moved.update({InputName(node.name, old).tensor: InputName(node.name, new).tensor
                          for old, new in prunings[node.name].output_map().items()})
    rename_inputs(graph_def, moved)
    returned = [moved.get(name, name) for name in computed]
    keep_reachable(graph_def, returned)
    return returned


class GraphFunction:
    """``outputs`` computed from ``inputs`` by copies of ``ops``; call with one value per input.

    ``prunings``: ``{op name: ParsePruning}`` of the parse ops rebuilt with fewer keys.
    """

    def __init__(self, graph_def, ops, inputs, outputs, prunings=None):
        self.inputs = inputs
        self.outputs = outputs
        self.prunings = prunings or {}
        names = {op.name for op in ops}
        self._computed = [t.name for t in outputs if t.op.name in names]
        self._graph_def = sub_graph_def(graph_def, names)
        self._returned = _prune(self._graph_def, self.prunings, self._computed)
        kept = {node.name for node in self._graph_def.node}
        self.ops = [op for op in ops if op.name in kept]
        consumed = consumed_tensors(self._graph_def)
        self._mapped = [t.name for t in inputs if t.name in consumed]
        self._isolated = has_stateful_branches(self._graph_def)

    @property
    def is_selection(self):
        """Whether the outputs are inputs as they are (nothing computed)."""
        return not self._computed and not self.ops

    def _in_graph_order(self):
        order = {node.name: index for index, node in enumerate(self._graph_def.node)}
        return sorted(self.ops, key=lambda o: order[o.name])

    def stateful_op_types(self):
        """The types of the ops whose values may depend on the order of the calls (random
        ops, py_func, a ``tf.cond`` with one inside, ...), each once, in graph order; an
        ``Assert``, and a ``tf.cond`` or ``tf.case`` holding only asserts, have none."""
        varying = set(varying_ops(self.ops, self._graph_def))
        return list(dict.fromkeys(op.type for op in self._in_graph_order() if op in varying))

    def op_types(self):
        """The op types doing the work, in graph order (no constants or identities)."""
        return [op.type for op in self._in_graph_order() if op.type not in op_types.PLUMBING]

    def describe(self):
        """``"5 ops: ParseExampleV2, DecodeRaw, Reshape, ..."`` (counting working ops)."""
        types = self.op_types()
        shown = list(dict.fromkeys(types))
        listed = ", ".join(shown[:_SHOWN_TYPES] + (["..."] if len(shown) > _SHOWN_TYPES else []))
        count = f"{len(types)} op{'s' if len(types) != 1 else ''}"
        return f"{count}: {listed}" if listed else count

    def signature(self):
        """What the function computes, independent of op names: equal for two copies
        of the same per-example code (e.g. the branches of ``batch_join``)."""
        position = {node.name: index for index, node in enumerate(self._graph_def.node)}
        position.update({t.op.name: f"in{t.op.type}" for t in self.inputs})
        nodes = []
        for node in self._graph_def.node:
            inputs = [(name.control, position.get(name.op, name.op), name.index)
                      for name in map(parse_input, node.input)]
            attrs = sorted((key, value.SerializeToString(deterministic=True))
                           for key, value in node.attr.items())
            nodes.append((node.op, tuple(inputs), tuple(attrs)))
        outputs = [(position.get(t.op.name), t.value_index) for t in self.outputs]
        inputs = [(t.op.type, t.value_index) for t in self.inputs]
        return (tuple(nodes), tuple(inputs), tuple(outputs))

    def __call__(self, *values):
        """The outputs for ``values`` (one per input), as a list of tensors."""
        by_name = dict(zip((t.name for t in self.inputs), values, strict=True))
        computed = {}
        if self._computed:
            # a value of an enclosing function (a producer's files, captured by the map
            # of its epochs) is captured here first: import_graph_def's input_map would
            # take its name for a tensor of this graph ("args_0:0")
            mapped = [_here(tf.convert_to_tensor(by_name[name])) for name in self._mapped]

            def imported(*arguments):
                return v1.import_graph_def(
                    self._graph_def, input_map=dict(zip(self._mapped, arguments, strict=True)),
                    return_elements=self._returned, name="lowered")

            # Ops with a stateful op inside control flow are imported in a function of
            # their own (wrap_function: no automatic control dependencies), called with
            # the values of the enclosing one. Imported into a tf.data function
            # directly, they met tf.function's automatic control dependencies, which do
            # not know imported v1 conds: with a cond holding an Assert
            # (tf.case(exclusive=True)) and another Assert (tf.random_crop's check) the
            # function returned nothing ("No return value for index 0"). Other ops are
            # imported where they are called: wrapping costs a trace, pfor a conversion
            # of the wrapped function (seconds of start-up), and each call of the map a
            # call of the wrapped function (the CIFAR-10 tutorial's distortions:
            # 10.8-13.5 ms of CPU per batch of 128 wrapped, 9.3-9.5 ms imported).
            if self._isolated:
                imported = v1.wrap_function(
                    imported, [tf.TensorSpec.from_tensor(t) for t in mapped])
            computed = dict(zip(self._computed, imported(*mapped), strict=True))
        return [computed[t.name] if t.name in computed else by_name[t.name]
                for t in self.outputs]


def _here(tensor):
    """``tensor``, or its capture when it belongs to another graph than the current one."""
    if tf.executing_eagerly() or tensor.graph is v1.get_default_graph():
        return tensor
    return tf.identity(tensor)
