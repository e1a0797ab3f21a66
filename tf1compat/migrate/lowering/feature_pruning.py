"""Parse only what is used: a ``ParseExampleV2`` op rebuilt with the keys a function needs.

slim programs declare many ``keys_to_features`` and use a few items, and a
``parse_single_example`` dict is often wider than what the pipeline fetches. A
lowered function computes only its outputs, so a key of a parse op none of whose
outputs the function uses is *pruned*: the rebuilt op never reads its values. A key
is pruned when its absence cannot fail: sparse (``VarLenFeature``) and ragged keys,
and dense keys with a default. A dense key without a default is kept, used or not:
a record without it fails the parse in TF1, and must fail here too. Keys are pruned
only when the key lists are constants (they always are for TF1's parse functions).

Every record TF1 parses gives the same values. A record whose pruned feature has
the wrong type (or a pruned dense feature the wrong number of values) fails in TF1
and parses here; ``prune_features=False`` keeps every key (see
:func:`tf1compat.migrate.lowering.lower`).
"""

from tf1compat._tf import tf
from tf1compat.pipeline.graph_model import op_types

__all__ = ["ParsePruning", "prune_parses"]


def _constant_keys(parse, kind):
    """The keys of ``kind`` (bytes), or None when they are not constants."""
    keys = tf.get_static_value(op_types.parse_keys(parse, kind))
    return None if keys is None else keys.tolist()


def _texts(keys):
    return [key.decode("utf-8", "backslashreplace") for key in keys]


def _select(container, kept):
    """Keep the entries of the repeated protobuf field ``container`` at positions ``kept``."""
    values = [value for value in container]
    if values and hasattr(values[0], "SerializeToString"):
        values = [type(value).FromString(value.SerializeToString()) for value in values]
    del container[:]
    container.extend(values[i] for i in kept)


class ParsePruning:
    """The keys of one ParseExampleV2 op that a function needs (see the module docstring).

    ``kept``: ``{kind: positions of the kept keys}``; ``used``: the names of the
    op's output tensors the function uses.
    """

    def __init__(self, parse, used):
        self.parse = parse
        counts = op_types.parse_key_counts(parse)
        self.positions = op_types.parse_output_positions(counts)
        self.keys = {kind: _constant_keys(parse, kind) for kind in op_types.PARSE_KEY_KINDS}
        constant = all(keys is not None for keys in self.keys.values())
        self.kept, self.required_unused = {}, []
        for kind, outputs in self.positions.items():
            self.kept[kind] = []
            for index, positions in enumerate(outputs):
                is_used = any(parse.outputs[p].name in used for p in positions)
                required = kind == "dense" and op_types.parse_key_is_required(parse, index)
                if is_used or required or not constant:
                    self.kept[kind].append(index)
                if required and not is_used and constant:
                    self.required_unused.append(self.keys[kind][index])
        self.required_unused = _texts(self.required_unused)

    def _count(self, keys_by_kind):
        return sum(len(keys) for keys in keys_by_kind.values())

    @property
    def prunes(self):
        """Whether some key is pruned."""
        return self._count(self.kept) < self._count(self.positions)

    def _keys(self, kind, indices):
        return [self.keys[kind][i] for i in indices]

    def describe(self):
        """E.g. ``parse: 2 of 8 features (image/encoded, image/class/label); pruned:
        image/height, ...; kept unused (required: a record without it fails): id``."""
        kept = [key for kind, kept in self.kept.items() for key in self._keys(kind, kept)]
        pruned = [key for kind, keys in self.keys.items() for i, key in enumerate(keys)
                  if i not in self.kept[kind]]
        kept, pruned = _texts(kept), _texts(pruned)
        text = (f"parse: {len(kept)} of {len(kept) + len(pruned)} features "
                f"({', '.join(kept)}); pruned: {', '.join(pruned)}")
        if self.required_unused:
            text += ("; kept unused (required: a record without it fails): "
                     + ", ".join(self.required_unused))
        return text

    def output_map(self):
        """``{output position in the op: output position in the rebuilt op}`` of the
        kept keys' outputs."""
        counts = {kind: len(kept) for kind, kept in self.kept.items()}
        rebuilt = op_types.parse_output_positions(counts)
        return {old: new for kind, kept in self.kept.items() for n, i in enumerate(kept)
                for old, new in zip(self.positions[kind][i], rebuilt[kind][n], strict=True)}

    def rebuild_node(self, node, add_constant):
        """Rewrite the NodeDef of the op in place to parse the kept keys only;
        ``add_constant(name, keys)`` adds a string constant node, returns its name."""
        for kind in op_types.PARSE_KEY_KINDS:
            position = op_types.PARSE_KEYS_INPUT[kind]
            node.input[position] = add_constant(f"{node.name}/{kind}_keys_used",
                                                self._keys(kind, self.kept[kind]))
            for name in op_types.PARSE_KEY_ATTRIBUTES[kind]:
                values = node.attr[name].list        # a list of shapes or of types
                _select(values.shape if len(values.shape) else values.type, self.kept[kind])
        node.attr[op_types.PARSE_NUM_SPARSE].i = len(self.kept["sparse"])
        first, count = op_types.PARSE_FIRST_DEFAULT, len(self.positions["dense"])
        defaults = list(node.input[first:first + count])
        rest = list(node.input[first + count:])
        del node.input[first:]
        node.input.extend([defaults[i] for i in self.kept["dense"]] + rest)

    def batched_arguments(self, arguments):
        """The keyword arguments of ``tf.raw_ops.ParseExampleV2`` parsing the kept keys,
        from the values of the op's inputs after ``serialized`` (names, the three key
        lists, the defaults)."""
        names, sparse_keys, dense_keys, ragged_keys, *defaults = arguments
        kept = self.kept

        def keys(kind, values):
            return tf.gather(values, tf.constant(kept[kind], tf.int32))
        return {"names": names, "sparse_keys": keys("sparse", sparse_keys),
                "dense_keys": keys("dense", dense_keys), "ragged_keys": keys("ragged", ragged_keys),
                "dense_defaults": [defaults[i] for i in kept["dense"]],
                op_types.PARSE_NUM_SPARSE: len(kept["sparse"]),
                **op_types.parse_key_attributes(self.parse, kept)}


def prune_parses(ops, outputs):
    """``{op name: ParsePruning}`` of the parse ops among ``ops`` that prune a key,
    given that the function computes ``outputs`` with ``ops``."""
    used = {t.name for op in ops for t in op.inputs} | {t.name for t in outputs}
    prunings = {}
    for op in ops:
        if op.type == op_types.PARSE_EXAMPLE:
            pruning = ParsePruning(op, used)
            if pruning.prunes:
                prunings[op.name] = pruning
    return prunings
