"""Run a lowered per-example map on whole batches when that gives the same values.

A classic pipeline parses each record with ``parse_single_example`` and decodes it
op by op; tf.data runs the same work several times faster on batches
("batch-then-parse"). :func:`vectorize` moves a :class:`Map` that feeds a
:class:`Batch` (directly, or through a shuffle buffer, which does not care whether
it holds records or parsed examples) behind the batch, where one call handles the
whole batch:

- ``ParseExampleV2`` of a record (``parse_single_example``, or slim's
  ``parse_example`` of the record made a vector of one) becomes the same op on
  the batch of records (dense features only);
- ``DecodeRaw`` becomes one ``DecodeRaw`` of the batch, guarded: a batch whose
  strings differ in length runs the per-example function instead (``tf.map_fn``),
  so nothing fails that did not fail before;
- the other ops are vectorized by TensorFlow's ``pfor`` (``tf.vectorized_map``)
  when their values do not depend on batching (reshapes, slices, casts,
  comparisons, integer arithmetic); else, when they are image decoding, parsing,
  string work or conds (``op_types.PER_EXAMPLE_EXACT``, also inside the conds'
  branches), they run example by example inside the batch's call (``tf.map_fn``:
  the same ops on the same values, without tf.data's cost per element, two to
  three times a CIFAR-sized example's parse and decode);
- a ``tf.cond`` (slim's image decoding picks its decoder by the record's format)
  runs on the batch when every example of the batch takes the same branch: the
  function with the cond replaced by that branch's ops is planned as above
  (vectorized, or ``tf.map_fn`` without the cond's call per example), and
  batches whose predicates all agree with it run it, the others the per-example
  way. An assert's cond has one such branch, the passing one.

Anything else keeps the per-example map: random numbers and py_func (their values
depend on the order of the calls), float arithmetic (TensorFlow's optimizer
rewrites it by the graph around it: measured to round differently inside
tf.map_fn), outputs of no fixed shape. The values are the same bit for bit.
"""

import itertools

from tf1compat._tf import tf, v1
from tf1compat.migrate.lowering.feature_pruning import ParsePruning
from tf1compat.migrate.lowering.graph_function import trace_function
from tf1compat.migrate.lowering.plan import Batch, Map, Shuffle, Step
from tf1compat.pipeline.graph_model import cond_branches, op_types
from tf1compat.pipeline.graph_model.structure import ancestors, sub_graph_def
from tf1compat.pipeline.graph_model.varying import called_nodes

__all__ = ["vectorize", "VectorizedMap"]

# Branch combinations tried for a function's conds (each is planned and traced).
_MAX_BRANCH_CHOICES = 4


def _dense_outputs(parse):
    """The dense value outputs of a ParseExampleV2 op."""
    positions = op_types.parse_output_positions(op_types.parse_key_counts(parse))
    return [parse.outputs[position] for position, in positions["dense"]]


def _has_shape(tensor, dimensions):
    return tensor.shape.rank is not None and tensor.shape.as_list() == dimensions


def _one_value_of(tensor, inputs):
    """``(function input, op)`` when ``tensor`` holds one value of a function input:
    the input itself when it is a scalar (op None), or the input an ``ExpandDims``
    or a reshape to ``[1]`` (the op's type) made a vector of one; else None."""
    if tensor.name in inputs:
        return (tensor.name, None) if tensor.shape.rank == 0 else None
    op = tensor.op
    if op.type not in (op_types.EXPAND_DIMS, op_types.RESHAPE):
        return None
    source = op_types.value_input(op)
    if source.name not in inputs:
        return None
    if op.type == op_types.EXPAND_DIMS and source.shape.rank in (0, None) and \
            tf.get_static_value(op_types.expand_dims_axis(op)) == 0:
        return source.name, op.type
    if op.type == op_types.RESHAPE and _has_shape(tensor, [1]):
        return source.name, op.type
    return None


class _BatchedParse:
    """A parse of one record run on the batch's records (see :func:`_batched_parse`)."""

    def __init__(self, op, records, names, graph_def, pruning):
        self.op, self.records, self.names = op, records, names
        self.pruning = pruning or ParsePruning(op, {t.name for t in op.outputs})
        given_names = [] if names is not None else [op_types.parse_names(op)]
        self.arguments = trace_function(graph_def,
                                        given_names + op_types.parse_keys_and_defaults(op))

    def outputs(self):
        """The parse's outputs the batched parse gives (its kept dense values)."""
        return [_dense_outputs(self.op)[i] for i in self.pruning.kept["dense"]]

    def __call__(self, values):
        """``{output name: batched value}``; each example's value has the op's shape
        (with a leading 1 where the records were made vectors of one)."""
        def batch_vector(name, op_type):
            """The batch's values of one example each, failing where the per-example op
            fails: a reshape to [1] of an example of more values, an ExpandDims or a
            parse of an example that is not a scalar."""
            value = values[name]
            if op_type == op_types.RESHAPE:
                return tf.reshape(value, tf.shape(value)[:1])
            return tf.ensure_shape(value, [None])
        arguments = self.arguments()
        if self.names is not None:
            arguments = [batch_vector(*self.names), *arguments]
        parsed = tf.raw_ops.ParseExampleV2(serialized=batch_vector(*self.records),
                                           **self.pruning.batched_arguments(arguments))
        vector = self.records[1] is not None
        dense = [tf.expand_dims(v, 1) if vector else v for v in parsed.dense_values]
        return dict(zip((t.name for t in self.outputs()), dense, strict=True))


def _batched_parse(op, inputs, function, graph_def):
    """A :class:`_BatchedParse` of ``op``, or None: a parse of one record (or of a
    vector of one) of a function input, with no example names or the input's own,
    whose outputs the function uses are dense features of fully defined shapes."""
    records = _one_value_of(op_types.parse_records(op), inputs)
    names = _one_value_of(op_types.parse_names(op), inputs)
    if records is None or (names is None and not _has_shape(op_types.parse_names(op), [0])):
        return None
    if names is not None and (names[1] is None) != (records[1] is None):
        return None     # one of names and records a vector of one, the other a scalar
    pruning = function.prunings.get(op.name)
    shapes = op_types.parse_dense_shapes(op)
    parsed = pruning.kept["dense"] if pruning is not None else range(len(shapes))
    if not all(tf.TensorShape(shapes[i]).is_fully_defined() for i in parsed):
        return None
    ops = set(function.ops)
    dense = {t.name for t in _dense_outputs(op)}
    if not all(t.name in dense or not ops.intersection(t.consumers()) for t in op.outputs):
        return None
    return _BatchedParse(op, records, names, graph_def, pruning)


def _exact_one_by_one(node):
    """Whether the op of ``node`` gives its values example by example inside tf.map_fn."""
    if node.op in op_types.BATCH_EXACT or node.op in op_types.PER_EXAMPLE_EXACT:
        return True
    dtype = op_types.node_type(node)
    return node.op in op_types.INTEGER_BATCH_EXACT and dtype is not None and (
        tf.as_dtype(dtype).is_integer or tf.as_dtype(dtype) == tf.bool)


def _exact(op):
    if op.type in op_types.BATCH_EXACT:
        return True
    return op.type in op_types.INTEGER_BATCH_EXACT and all(
        t.dtype.is_integer or t.dtype == tf.bool for t in [*op.inputs, *op.outputs])


class _Lifting:
    """How one function runs on a batch: its parses on the batch's records, its
    ``DecodeRaw`` ops on the batch (their inputs computed by ``pfor`` first when the
    parse does not give them), then the rest, by ``pfor`` (``vectorized``) or
    ``tf.map_fn``."""

    def __init__(self, function, graph_def, parses, decodes, vectorized):
        self.function, self.parses, self.decodes = function, parses, decodes
        self.vectorized = vectorized
        sources = {t.op for t in function.inputs}
        parse_ops = {parse.op.name for parse in parses}
        given = {t.name for t in function.inputs} | {
            t.name for parse in parses for t in parse.outputs()}
        decoded = [op_types.decode_raw_bytes(op) for op in decodes
                   if op_types.decode_raw_bytes(op).name not in given]
        self.decode_inputs = trace_function(
            graph_def, decoded, lambda op: op.name in parse_ops or op in sources) \
            if decoded else None
        lifted, own = parse_ops | {op.name for op in decodes}, set(function.ops)
        computed = [t for t in function.outputs if t.op in own and t.op.name not in lifted]
        # A parse left in the rest (tf.map_fn) parses only the keys the function's parse does.
        self.rest = trace_function(graph_def, computed,
                                   lambda op: op.name in lifted or op in sources,
                                   prune_features=bool(function.prunings))

    def has_decode_inputs(self, values):
        """Whether ``values`` holds the decodes' inputs."""
        return self.decode_inputs is None or all(
            t.name in values for t in self.decode_inputs.outputs)

    def decode_checks(self, values):
        """``values`` with the decodes' inputs added, and one check per decode: its
        strings have one length (the decode gives a matrix)."""
        values = dict(values)
        if not self.has_decode_inputs(values):
            values.update(_run_vectorized(self.decode_inputs, values))
        lengths = [tf.strings.length(values[op_types.decode_raw_bytes(op).name])
                   for op in self.decodes]
        return values, [tf.reduce_all(tf.equal(n, n[:1])) for n in lengths]

    def outputs(self, values):
        """The function's outputs from ``values`` (decode inputs included): decode,
        then the rest (pfor, or ``tf.map_fn``)."""
        values = dict(values)
        for op in self.decodes:
            values[op.outputs[0].name] = tf.io.decode_raw(
                values[op_types.decode_raw_bytes(op).name], **op_types.decode_raw_settings(op))
        if self.rest.outputs:
            if self.vectorized:
                results = _run_vectorized(self.rest, values)
            else:
                arguments = tuple(values[t.name] for t in self.rest.inputs)
                signature = tuple(tf.TensorSpec(t.shape, t.dtype) for t in self.rest.outputs)
                results = dict(zip((t.name for t in self.rest.outputs), tf.map_fn(
                    lambda sliced: tuple(self.rest(*sliced)), arguments,
                    fn_output_signature=signature), strict=True))
            values.update(results)
        return tuple(values[t.name] for t in self.function.outputs)


def _choose(predicate, true_fn, false_fn, inlined):
    """``tf.cond``; ``inlined`` False: the taken branch's function is called, and so
    instantiated only when a batch first takes this cond (the fallbacks no batch
    needs cost no start-up), see :func:`.cond_branches.called_cond`."""
    if inlined:
        return tf.cond(predicate, true_fn, false_fn)
    return cond_branches.called_cond(predicate, true_fn, false_fn)


def _run_vectorized(function, values):
    """``{output name: batched value}`` of ``function`` run by pfor on ``values``."""
    arguments = tuple(values[t.name] for t in function.inputs)
    results = tf.vectorized_map(lambda sliced: tuple(function(*sliced)), arguments,
                                fallback_to_while_loop=False)
    return dict(zip((t.name for t in function.outputs), results, strict=True))


def _plan_lifting(function, graph_def, parses=None):
    """The :class:`_Lifting` of ``function``, or None when it cannot run on batches
    with the same values. ``parses``: the batched parses to use (by default, every
    parse that can be)."""
    if function.is_selection or function.stateful_op_types():
        return None
    inputs = {t.name for t in function.inputs}
    if parses is None:
        parses = [parse for op in function.ops if op.type == op_types.PARSE_EXAMPLE
                  for parse in [_batched_parse(op, inputs, function, graph_def)] if parse]
    parse_ops = {parse.op.name for parse in parses}
    sources = {t.op for t in function.inputs}
    decodes = [op for op in function.ops if op.type == op_types.DECODE_RAW and all(
        _exact(before) for before in ancestors([op_types.decode_raw_bytes(op)],
                                               lambda o: o.name in parse_ops or o in sources)
        if before.name not in parse_ops and before not in sources)]
    lifted = parse_ops | {op.name for op in decodes}
    if all(op.name in lifted or _exact(op) for op in function.ops):
        return _Lifting(function, graph_def, parses, decodes, True)
    if not all(t.shape.is_fully_defined() for t in function.outputs):  # tf.map_fn stacks
        return None
    if all(_exact_one_by_one(node) for op in function.ops
           for node in (op.node_def, *called_nodes(op.node_def, graph_def))):
        return _Lifting(function, graph_def, parses, decodes, False)
    return None


class _BranchVariant:
    """The function with each of its conds replaced by one branch (``taken``: the
    predicate's value for it), run on the batch when every example's predicates
    agree. ``first`` (None: nothing) computes what the variants before it have not:
    the predicates (for the first variant only: every variant's are the same ops,
    outside the conds), then the decodes' inputs when they are computed outside
    the branches (or only passed into them): the predicates and the decodes'
    strings are then checked in one cond, not two (a cond costs a call per batch)."""

    def __init__(self, conds, taken, lifting, first, predicates):
        self.conds, self.taken, self.lifting, self.first = conds, taken, lifting, first
        self.predicates = predicates    # the conds' predicates' names

    def outputs_or(self, values, otherwise, inlined):
        """The outputs on the batch when its examples all take these branches (and
        the decodes' strings have one length), else ``otherwise(values)`` (values
        with what ``first`` computed); ``inlined``: as for :func:`_choose`."""
        if self.first is not None:
            values = {**values, **_run_vectorized(self.first, values)}
        agree = [tf.reduce_all(tf.equal(values[name], taken))
                 for name, taken in zip(self.predicates, self.taken, strict=True)]
        if self.lifting.has_decode_inputs(values):
            decoded, checks = self.lifting.decode_checks(values)
            return _choose(tf.reduce_all(agree + checks), lambda: self.lifting.outputs(decoded),
                           lambda: otherwise(values), inlined)

        # The decodes' strings are made inside the branches: made and checked once the
        # batch takes them, then one cond for the outputs or ``otherwise`` (traced once).
        made = self.lifting.decode_inputs.outputs

        def checked():
            decoded, checks = self.lifting.decode_checks(values)
            return tf.reduce_all(checks), *(decoded[t.name] for t in made)

        def not_taken():
            return tf.constant(False), *(tf.zeros([0] * ((t.shape.rank or 0) + 1), t.dtype)
                                         for t in made)
        decodable, *strings = _choose(tf.reduce_all(agree), checked, not_taken, inlined)
        decoded = {**values, **{t.name: value for t, value in zip(made, strings, strict=True)}}
        for t in made:
            decoded[t.name].set_shape(tf.TensorShape([None]).concatenate(t.shape))
        return _choose(decodable, lambda: self.lifting.outputs(decoded),
                       lambda: otherwise(values), inlined)


def _branch_variants(function, graph_def, base):
    """The :class:`_BranchVariant` s of ``function`` that run on batches (those that
    vectorize first), given its ``base`` lifting (their parses are its); none when it
    has no cond, or too many."""
    conds = [op for op in function.ops if op.type in op_types.IFS]
    predicates = [op_types.cond_predicate(op) for op in conds]
    if any(p.dtype != tf.bool or p.shape.rank != 0 for p in predicates):
        return []   # an If's predicate that is not a boolean scalar (tf.cond makes those)
    choices = []
    for op in conds:
        passing = cond_branches.passing_branch(graph_def, op.node_def)
        choices.append([passing] if passing is not None else [True, False])
    if not conds or len(list(itertools.product(*choices))) > _MAX_BRANCH_CHOICES:
        return []
    parse_ops = {parse.op.name for parse in base.parses}
    sources = {t.op for t in function.inputs}
    if any(not _exact(op) for op in trace_function(
            graph_def, predicates, lambda op: op.name in parse_ops or op in sources).ops):
        return []   # a predicate computed inside a cond, or not by pfor
    closure = sub_graph_def(graph_def, {op.name for op in ancestors(function.outputs)})
    cond_names = {op.name for op in conds}
    inlined = tuple(cond_branches.copied_prefix(name, taken)
                    for name in cond_names for taken in (True, False))

    def in_branch(op):
        return op.name.startswith(inlined) or op.name in cond_names
    planned = []
    for taken in itertools.product(*choices):
        variant_def = closure
        for op, branch in zip(conds, taken, strict=True):
            variant_def = cond_branches.with_branch(variant_def, op.name, branch)
        graph = tf.Graph()
        with graph.as_default():
            v1.import_graph_def(variant_def, name="")
        inputs = [graph.get_tensor_by_name(t.name) for t in function.inputs]
        variant = trace_function(variant_def, [graph.get_tensor_by_name(t.name)
                                               for t in function.outputs],
                                 lambda op, inputs={t.op for t in inputs}: op in inputs)
        # The base's parses run first: the variant reads their values by name.
        lifting = _plan_lifting(variant, variant_def, base.parses)
        if lifting is None:
            continue
        decode_inputs = lifting.decode_inputs.outputs if lifting.decode_inputs else []
        if lifting.decode_inputs and any(in_branch(op) and op.type not in op_types.PLUMBING
                                         for op in lifting.decode_inputs.ops):
            decode_inputs = []      # computed inside a branch: only once the branch is sure
        planned.append((taken, lifting, variant_def, inputs, decode_inputs))
    # Those that vectorize first; the first computes the predicates for all.
    planned.sort(key=lambda plan: not plan[1].vectorized)
    variants = []
    for index, (taken, lifting, variant_def, inputs, decode_inputs) in enumerate(planned):
        graph = inputs[0].graph
        computed = decode_inputs if index else [
            graph.get_tensor_by_name(t.name) for t in predicates] + decode_inputs
        first = trace_function(
            variant_def, computed,
            lambda op, inputs={t.op for t in inputs}: op.name in parse_ops or op in inputs
        ) if computed else None
        variants.append(_BranchVariant(conds, taken, lifting, first,
                                       [t.name for t in predicates]))
    return variants


class VectorizedMap(Step):
    """A per-example :class:`Map` run once per batch (see the module docstring); with
    ``once`` (a map run once over the data: the cache's fill) no cond is inlined."""

    def __init__(self, upstream, per_example, lifting, variants, once=False):
        self.upstream, self.per_example = upstream, per_example
        self.lifting, self.variants, self.once = lifting, variants, once
        self.deterministic = per_example.deterministic
        # One tf.function for every dataset this step is applied to (the cache reads a
        # file in two places): traced once, not once per dataset.map (about 0.4 s each).
        self._traced = tf.function(self._on_batch, autograph=False)

    def text(self):
        how = "vectorized" if self.lifting.vectorized else "per batch, map_fn"
        if self.variants:
            conds = len(self.variants[0].conds)
            branch = f"one branch of its {conds} cond{'s' if conds > 1 else ''}"
            how = (f"vectorized when a batch takes {branch}, else {how}"
                   if self.variants[0].lifting.vectorized
                   else f"{how}, {branch} when the batch takes it")
        return f"map({how}: {', '.join(self.per_example.parts())})"

    def _per_example(self, components):
        """The function applied to each element of the batch in turn."""
        map_step = self.per_example
        inputs = tuple(components[i] for i in map_step.positions)
        signature = tuple(tf.TensorSpec(t.shape, t.dtype) for t in map_step.function.outputs)
        return tf.map_fn(lambda sliced: tuple(map_step.function(*sliced)), inputs,
                         fn_output_signature=signature)

    def _on_batch(self, *components):
        """The function's outputs for a batch (its components as the upstream gives them)."""
        map_step = self.per_example
        values = {t.name: components[i]
                  for t, i in zip(map_step.function.inputs, map_step.positions, strict=True)}
        for parse in self.lifting.parses:
            values.update(parse(values))

        def lifted(values, inlined):
            # Strings of one length decode into a matrix; other batches go one by one.
            decoded, checks = self.lifting.decode_checks(values)
            if not checks:
                return self.lifting.outputs(decoded)
            return _choose(tf.reduce_all(checks), lambda: self.lifting.outputs(decoded),
                           lambda: self._per_example(components), inlined)

        # The first cond is inlined (the batches mostly take its first branch: no call
        # per batch), unless the map runs once over the data; those in its second
        # branch are called, so their branches are instantiated only when a batch
        # takes that way.
        def run(values, variants, inlined):
            if not variants:
                return lifted(values, inlined)
            return variants[0].outputs_or(
                values, lambda values: run(values, variants[1:], False), inlined)
        return run(values, self.variants, not self.once)

    def apply(self, dataset):
        return dataset.map(self._traced, num_parallel_calls=tf.data.AUTOTUNE,
                           deterministic=True)


def vectorize(plan, graph_def, once=False):
    """``plan`` with every Map that feeds a Batch run on the batches, where that gives
    the same values (the steps are relinked in place; returns the last step); ``once``:
    the plan runs once over its data (the cache's fill), its maps' per-example
    fallbacks (records that do not decode as one batch) are set up only when a batch
    needs them, at a call per batch (see :class:`VectorizedMap`)."""
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
        variants = [] if lifting.vectorized else _branch_variants(
            map_step.function, graph_def, lifting)
        if shuffle is not None:
            shuffle.upstream = map_step.upstream
        else:
            batch.upstream = map_step.upstream
        vectorized = VectorizedMap(batch, map_step, lifting, variants, once)
        if index + 1 < len(steps):
            steps[index + 1].upstream = vectorized
        else:
            plan = vectorized
    return plan
