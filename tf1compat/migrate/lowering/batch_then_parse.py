"""Run a lowered per-example map on whole batches when that gives the same values.

A classic pipeline parses each record with ``parse_single_example`` and decodes it
op by op; tf.data runs the same work several times faster on batches
("batch-then-parse"). :func:`vectorize` moves a :class:`Map` that feeds a
:class:`Batch` (directly, or through a shuffle buffer, which does not care whether
it holds records or parsed examples) behind the batch, where one call handles the
whole batch:

- ``ParseExampleV2`` of a record (``parse_single_example``) becomes the same op on
  the batch of records (dense features only);
- ``DecodeRaw`` of a record or of a parsed string becomes one ``DecodeRaw`` of the
  batch, guarded: a batch whose strings differ in length runs the per-example
  function instead (``tf.map_fn``), so nothing fails that did not fail before;
- the other ops are vectorized by TensorFlow's ``pfor`` (``tf.vectorized_map``)
  when their values do not depend on batching (reshapes, slices, casts,
  comparisons, integer arithmetic); else, when they are image decoding, parsing,
  string work or conds (``op_types.PER_EXAMPLE_EXACT``, also inside the conds'
  branches), they run example by example inside the batch's call (``tf.map_fn``:
  the same ops on the same values, without tf.data's cost per element, two to
  three times a CIFAR-sized example's parse and decode).

Anything else keeps the per-example map: random numbers and py_func (their values
depend on the order of the calls), float arithmetic (TensorFlow's optimizer
rewrites it by the graph around it: measured to round differently inside
tf.map_fn), outputs of no fixed shape. The values are the same bit for bit.
"""

from tf1compat._tf import tf
from tf1compat.migrate.lowering.feature_pruning import ParsePruning
from tf1compat.migrate.lowering.graph_function import trace_function
from tf1compat.migrate.lowering.plan import Batch, Map, Shuffle, Step
from tf1compat.pipeline.graph_model import op_types
from tf1compat.pipeline.graph_model.varying import called_nodes

__all__ = ["vectorize", "VectorizedMap"]



def _dense_outputs(parse):
    """The dense value outputs of a ParseExampleV2 op."""
    positions = op_types.parse_output_positions(op_types.parse_key_counts(parse))
    return [parse.outputs[position] for position, in positions["dense"]]


def _liftable_parse(op, inputs, function):
    """A parse_single_example of a function input whose outputs the function uses
    are dense features only, of fully defined shapes (those of the keys it parses)."""
    serialized = op.inputs[0]
    if serialized.name not in inputs or serialized.shape.rank != 0:
        return False
    shapes = op.get_attr("dense_shapes")
    pruning = function.prunings.get(op.name)
    parsed = pruning.kept["dense"] if pruning is not None else range(len(shapes))
    if not all(tf.TensorShape(shapes[i]).is_fully_defined() for i in parsed):
        return False
    ops = set(function.ops)
    dense = {t.name for t in _dense_outputs(op)}
    return all(t.name in dense or not ops.intersection(t.consumers()) for t in op.outputs)


def _exact_one_by_one(node):
    """Whether the op of ``node`` gives its values example by example inside tf.map_fn."""
    if node.op in op_types.BATCH_EXACT or node.op in op_types.PER_EXAMPLE_EXACT:
        return True
    dtype = node.attr["T"].type if "T" in node.attr else None
    return node.op in op_types.INTEGER_PER_EXAMPLE_EXACT and dtype is not None and (
        tf.as_dtype(dtype).is_integer or tf.as_dtype(dtype) == tf.bool)


def _plan_lifting(function, graph_def):
    """``(parse ops, decode ops, whether the rest is vectorized)``: what runs on the
    batch, or None when the function cannot run on batches with the same values."""
    if function.is_selection or function.stateful_op_types():
        return None
    inputs = {t.name for t in function.inputs}
    parses = [op for op in function.ops
              if op.type == op_types.PARSE_EXAMPLE and _liftable_parse(op, inputs, function)]
    batched = inputs | {t.name for op in parses for t in _dense_outputs(op)}
    decodes = [op for op in function.ops
               if op.type == op_types.DECODE_RAW and op.inputs[0].name in batched]
    lifted = set(parses) | set(decodes)
    if all(op in lifted or _exact(op) for op in function.ops):
        return parses, decodes, True
    if not all(t.shape.is_fully_defined() for t in function.outputs):  # tf.map_fn stacks
        return None
    if all(_exact_one_by_one(node) for op in function.ops
           for node in (op.node_def, *called_nodes(op.node_def, graph_def))):
        return parses, decodes, False
    return None


def _exact(op):
    if op.type in op_types.BATCH_EXACT:
        return True
    return op.type in op_types.INTEGER_BATCH_EXACT and all(
        t.dtype.is_integer or t.dtype == tf.bool for t in [*op.inputs, *op.outputs])


class VectorizedMap(Step):
    """A per-example :class:`Map` run once per batch (see the module docstring)."""

    def __init__(self, upstream, per_example, parses, decodes, vectorized, graph_def):
        self.upstream, self.per_example = upstream, per_example
        self.parses, self.decodes, self.vectorized = parses, decodes, vectorized
        self.deterministic = per_example.deterministic
        function = per_example.function
        self.parse_arguments = [trace_function(graph_def, list(op.inputs[1:])) for op in parses]
        lifted, own = set(parses) | set(decodes), set(function.ops)
        sources = {t.op for t in function.inputs}
        computed = [t for t in function.outputs if t.op in own and t.op not in lifted]
        # A parse left in the rest (tf.map_fn) parses only the keys the function's parse does.
        self.rest = trace_function(graph_def, computed,
                                   lambda op: op in lifted or op in sources,
                                   prune_features=bool(function.prunings))

    def text(self):
        how = "vectorized" if self.vectorized else "per batch, map_fn"
        return f"map({how}: {', '.join(self.per_example.parts())})"

    def _parsed(self, components):
        """``{graph tensor name: batched value}`` of the inputs and the parsed features."""
        map_step = self.per_example
        values = {t.name: components[i]
                  for t, i in zip(map_step.function.inputs, map_step.positions, strict=True)}
        prunings = map_step.function.prunings
        for op, arguments in zip(self.parses, self.parse_arguments, strict=True):
            pruning = prunings.get(op.name) or ParsePruning(op, {t.name for t in op.outputs})
            parsed = tf.raw_ops.ParseExampleV2(serialized=values[op.inputs[0].name],
                                               **pruning.batched_arguments(arguments()))
            kept = [_dense_outputs(op)[i] for i in pruning.kept["dense"]]
            values.update(zip((t.name for t in kept), parsed.dense_values, strict=True))
        return values

    def _rest(self, values):
        """The function's outputs from the parsed batch: decode, then the rest (pfor,
        or ``tf.map_fn``)."""
        values = dict(values)
        for op in self.decodes:
            values[op.outputs[0].name] = tf.io.decode_raw(
                values[op.inputs[0].name], op.get_attr("out_type"),
                little_endian=op.get_attr("little_endian"))
        if self.rest.outputs:
            arguments = tuple(values[t.name] for t in self.rest.inputs)
            if self.vectorized:
                results = tf.vectorized_map(lambda sliced: tuple(self.rest(*sliced)),
                                            arguments, fallback_to_while_loop=False)
            else:
                signature = tuple(tf.TensorSpec(t.shape, t.dtype) for t in self.rest.outputs)
                results = tf.map_fn(lambda sliced: tuple(self.rest(*sliced)), arguments,
                                    fn_output_signature=signature)
            values.update(zip((t.name for t in self.rest.outputs), results, strict=True))
        return tuple(values[t.name] for t in self.per_example.function.outputs)

    def _per_example(self, components):
        """The function applied to each element of the batch in turn."""
        map_step = self.per_example
        inputs = tuple(components[i] for i in map_step.positions)
        signature = tuple(tf.TensorSpec(t.shape, t.dtype) for t in map_step.function.outputs)
        return tf.map_fn(lambda sliced: tuple(map_step.function(*sliced)), inputs,
                         fn_output_signature=signature)

    def apply(self, dataset):
        @tf.autograph.experimental.do_not_convert
        def call(*components):
            values = self._parsed(components)
            if not self.decodes:
                return self._rest(values)
            # Strings of one length decode into a matrix; other batches go one by one.
            lengths = [tf.strings.length(values[op.inputs[0].name]) for op in self.decodes]
            same = tf.reduce_all([tf.reduce_all(tf.equal(n, n[:1])) for n in lengths])
            return tf.cond(same, lambda: self._rest(values),
                           lambda: self._per_example(components))
        return dataset.map(call, num_parallel_calls=tf.data.AUTOTUNE, deterministic=True)


def vectorize(plan, graph_def):
    """``plan`` with every Map that feeds a Batch run on the batches, where that gives
    the same values (the steps are relinked in place; returns the last step)."""
    steps = plan.chain()
    for index, batch in enumerate(steps):
        if not isinstance(batch, Batch) or batch.padded:
            continue
        below = batch.upstream
        shuffle = below if isinstance(below, Shuffle) else None
        map_step = shuffle.upstream if shuffle is not None else below
        if not isinstance(map_step, Map) or map_step.unbatch:
            continue
        lifting = _plan_lifting(map_step.function, graph_def)
        if lifting is None:
            continue
        if shuffle is not None:
            shuffle.upstream = map_step.upstream
        else:
            batch.upstream = map_step.upstream
        vectorized = VectorizedMap(batch, map_step, *lifting, graph_def)
        if index + 1 < len(steps):
            steps[index + 1].upstream = vectorized
        else:
            plan = vectorized
    return plan
