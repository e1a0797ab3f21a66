"""Automatic in-memory caching of a lowered pipeline's deterministic per-example work.

A legacy program training for many epochs reads, parses and decodes every record
again each epoch. When a lowered pipeline reads its files for more than one epoch
and its per-example map starts with deterministic work (parse, decode, fixed
reshapes), :func:`plan_cache` rewrites the plan so that work is done once:

- the first reading of each file maps it through the deterministic part of the map
  (batch-then-parse where it applies), in chunks of 256 rows kept as they were made
  and as they stream on to the rest of the pipeline (:class:`FileCache`, over
  :mod:`tf1compat.pipeline.kept_chunks`: a tf.data in-memory cache per file), the
  narrowest values the rest uses (uint8 pixels rather than their float32 cast,
  which then runs every epoch); several readers of one file read it once, each row
  handed to every reader in turn (:class:`OneFileReaders`);
- each later epoch follows the producer's file order (its per-epoch shuffle with its
  seeds included) over those rows (:class:`CachedRead`), and the rest runs as
  before: shuffle buffers with their seeds, the per-example ops that vary (random
  crops and flips, py_func) on every epoch, batching. The elements are the same,
  epoch by epoch. A shuffle buffer after the map of such ops moves before it by the
  plan's rule (:func:`~tf1compat.migrate.lowering.plan.shuffle_first`), the kept
  rows being what fills it.

Not cached: a pipeline that reads its files once, one without a producer of files,
one whose per-example map starts with nothing deterministic, one whose cached
values have no fixed shape, and one estimated above the budget before reading
(rows: the files' sizes over the size of the first file's first records; a row:
its fixed-size values, and at most a record per string).
While filling, the bytes held are counted; a file whose chunk would pass the
budget is read again every epoch (the files kept before stay kept), with the same
elements. Rows estimated within half the budget, from uncompressed files each read
by one reading at a time, are kept whole without counting (fewer functions to set
up before the first element).
"""

import copy
import itertools
import os
from typing import NamedTuple

from tf1compat._tf import tf, v1
from tf1compat.errors import CorruptRecordError
from tf1compat.migrate.lowering.batch_then_parse import vectorize
from tf1compat.migrate.lowering.graph_function import GraphFunction, trace_function
from tf1compat.migrate.lowering.plan import (
    Batch,
    Element,
    Interleave,
    Map,
    Read,
    RoundRobin,
    Shuffle,
    Step,
    Values,
    build_steps,
    element_bytes,
    relinked,
    shuffle_first,
)
from tf1compat.pipeline.cache_budget import BUDGET_VARIABLE, size_text
from tf1compat.pipeline.graph_model import op_types
from tf1compat.pipeline.graph_model.structure import fixpoint, input_ops
from tf1compat.pipeline.graph_model.varying import varying_ops
from tf1compat.pipeline.kept_chunks import KeptChunks, KeptWhole, estimated_bytes, per_iteration

__all__ = ["CachedPipeline", "CachedRead", "FileCache", "OneFileReaders", "Rebatch", "plan_cache"]

_FILL_CHUNK = 256                # records read and mapped together while filling


class _NotCached(Exception):
    """Why a plan is not cached: what :func:`plan_cache` says after ``not cached:``."""


class _Split(NamedTuple):
    """A map's function split where the cache keeps its values."""

    prefix: GraphFunction   # its deterministic start, computing ``columns`` from its inputs
    suffix: GraphFunction | None   # the rest, from ``columns`` (None: nothing varies or widens)
    columns: list           # the narrowest tensors the rest uses, or the function's outputs


class _CachePoint(NamedTuple):
    """Where a plan is cached: the producer of its file names, the read and the map
    after it, each with the chain it is in (a list) and that chain's holder (the
    :class:`Interleave` whose template it is, or None for the plan)."""

    values: Values
    read: Read
    read_place: tuple
    map_step: Map
    map_place: tuple


# ------------------------------------------------------------ splitting the map

def _split(map_step, graph_def):
    """The :class:`_Split` of the map's function; raises :class:`_NotCached` when there
    is nothing to cache."""
    function = map_step.function
    order = function._in_graph_order()
    inputs = {t.name for t in function.inputs}
    varying = set(varying_ops(order, graph_def))
    tainted, fed = set(), set()

    def spread(op):
        """Taint ``op`` when it varies or takes from a tainted op, else feed it from the
        inputs; whether that changed anything."""
        if op in tainted:
            return False
        if op in varying or any(o in tainted for o in input_ops(op)):
            tainted.add(op)
            fed.discard(op)
            return True
        if op not in fed and any(t.name in inputs or t.op in fed for t in op.inputs):
            fed.add(op)
            return True
        return False
    fixpoint(order, spread)   # not one pass: a TF1 cond adds its Switch after the op using it
    if not any(op.type not in op_types.PLUMBING for op in fed):
        raise _NotCached("the per-example map starts with no deterministic work to keep")

    def cached(tensor):
        return tensor.name in inputs or tensor.op in fed
    if tainted:
        used = [t for t in function.outputs if cached(t)]
        used += [t for op in order if op in tainted for t in op.inputs if cached(t)]
        columns = list({t.name: t for t in used}.values())
    else:
        columns = list(function.outputs)
    in_branch = _inside_tf1_cond(order)
    branched = [t for t in columns if t.op in in_branch]
    if branched:
        raise _NotCached(f"the deterministic part ends inside a TF1 cond ('{branched[0].name}' "
                         "has a value only when its branch is taken)")
    unshaped = [t for t in columns if not t.shape.is_fully_defined()]
    if unshaped:
        raise _NotCached(f"the values to keep have no fixed shape ('{unshaped[0].name}' is "
                         f"{unshaped[0].shape})")
    sources, moved = {t.op for t in function.inputs}, set()
    narrowed = [_narrowest(t, fed, cached, in_branch, moved) for t in columns]
    suffix = None
    if tainted or moved:   # the rest of the map, widening ops included, runs after the cache
        suffix = trace_function(graph_def, function.outputs,
                                lambda op: op in sources or op in fed and op not in moved)
        needed = {t.name for t in suffix.inputs}
        columns = [t for t in {t.name: t for t in narrowed}.values() if t.name in needed]
    return _Split(trace_function(graph_def, columns, lambda op: op in sources), suffix, columns)


def _held_bytes(tensor):
    return tensor.shape.num_elements() * tensor.dtype.size


def _narrowest(column, fed, cached, in_branch, moved):
    """The tensor of fewest bytes that ``column`` is computed from by a chain of
    ``RECOMPUTED_AFTER_CACHE`` ops of constant arguments (uint8 pixels for their
    float32 cast), or ``column``; adds the chain's ops to ``moved``."""
    chain, tensor, best = [], column, (_held_bytes(column), 0, column)
    while (tensor.op in fed and tensor.op.type in op_types.RECOMPUTED_AFTER_CACHE
           and not tensor.op.control_inputs
           and not any(cached(t) for t in op_types.shaping_inputs(tensor.op))):
        chain.append(tensor.op)
        tensor = op_types.value_input(tensor.op)
        if (tensor.op not in fed or tensor.op in in_branch or tensor.dtype == tf.string
                or not tensor.shape.is_fully_defined()):
            break
        best = min(best, (_held_bytes(tensor), len(chain), tensor), key=lambda b: b[:2])
    moved.update(chain[:best[1]])
    return best[2]


def _inside_tf1_cond(order):
    """The ops of ``order`` inside a branch of a TF1 cond: after more Switches than
    Merges on a path from the function's inputs (control inputs count: a branch's
    constants hang on its pivot)."""
    depth = dict.fromkeys(order, 0)

    def deepen(op):
        level = max((depth.get(o, 0) for o in input_ops(op)), default=0)
        if op.type in op_types.COND_SWITCHES:
            level += 1
        elif op.type in op_types.COND_MERGES:
            level = max(level - 1, 0)
        if level > depth[op] and level <= len(order):
            depth[op] = level
            return True
        return False
    fixpoint(order, deepen)
    return {op for op, level in depth.items() if level}


# ------------------------------------------------------------ the cache

class FileCache:
    """The cached rows of every file: ``fill`` is the chain (from an :class:`Element`
    file name) giving a file's rows in chunks of 256; ``specs`` the rows' components;
    ``estimate`` the bytes expected before reading; ``store`` the store of the
    iteration :class:`CachedPipeline` builds the plan in: a
    :class:`~tf1compat.pipeline.kept_chunks.KeptChunks`, which counts the bytes it
    holds, or with ``whole`` (rows estimated within half the budget, each file read by
    one reading at a time) a :class:`~tf1compat.pipeline.kept_chunks.KeptWhole`,
    which sets up fewer functions."""

    def __init__(self, files, fill, specs, budget, estimate):
        self.files, self.fill, self.specs = files, fill, specs
        self.budget, self.estimate = budget, estimate
        self.whole = False
        self.store = None

    def text(self):
        count = f"{len(self.files)} file{'s' if len(self.files) != 1 else ''}"
        kept = ", ".join(dict.fromkeys(spec.dtype.name for spec in self.specs))
        return (f"cache({count} read once into memory, about {size_text(self.estimate)} "
                f"({kept}) of a {size_text(self.budget)} budget: {self.fill.describe()}; "
                "kept as each file's first reading streams)")

    def _file_chunks(self, filename):
        return self.fill.build(tf.data.Dataset.from_tensors(filename))

    def new_store(self):
        """A store for one iteration (inside a dataset function)."""
        file_chunks = tf.autograph.experimental.do_not_convert(self._file_chunks)
        if self.whole:
            return KeptWhole(self.files, file_chunks)
        return KeptChunks(self.files, file_chunks, self.budget)


class CachedRead(Step):
    """Each upstream file name's rows from the :class:`FileCache`; with
    ``whole_files``, in the chunks they were kept in, for :class:`Rebatch`."""

    def __init__(self, upstream, cache, whole_files=False):
        self.upstream, self.cache, self.whole_files = upstream, cache, whole_files

    def text(self):
        return self.cache.text()

    def apply(self, dataset):
        chunks = dataset.flat_map(self.cache.store.chunks)
        return chunks if self.whole_files else chunks.unbatch()


class OneFileReaders(Step):
    """An :class:`~tf1compat.migrate.lowering.plan.Interleave` of ``count`` readers
    whose only step is a :class:`CachedRead` of a producer of one file (slim's
    ``DatasetDataProvider(num_readers=4)`` over one file): the readers take the name
    in turn and read the same rows in step, so the interleave gives each row
    ``count`` times in a row (fewer for a last group of names). Here each group of
    ``count`` names is one name, its rows read once, kept as the first group
    streams, and each row given once per name of the group: the interleave's
    elements, in its order."""

    def __init__(self, upstream, cache, count):
        self.upstream, self.cache, self.count = upstream, cache, count

    def text(self):
        return f"interleave({self.count} readers: {self.cache.text()})"

    def apply(self, dataset):
        @tf.autograph.experimental.do_not_convert
        def group_of(names):
            names = tf.nest.flatten(names)[0]
            return names[0], tf.size(names, tf.int64)

        @tf.autograph.experimental.do_not_convert
        def each_row_per_name(readers, *columns):
            return tuple(tf.repeat(column, readers, axis=0) for column in columns)
        groups = dataset.batch(self.count).map(group_of)
        return groups.flat_map(self.cache.store.chunks).map(each_row_per_name).unbatch()


class Rebatch(Step):
    """A :class:`~tf1compat.migrate.lowering.plan.Batch` straight after a
    :class:`CachedRead`: the same batches, cut from the kept chunks without going
    through single elements."""

    def __init__(self, upstream, batch):
        self.upstream, self.batch = upstream, batch

    def text(self):
        return self.batch.text()

    def apply(self, dataset):
        return dataset.rebatch(self.batch.batch_size, drop_remainder=self.batch.drop_remainder)


class CachedPipeline(Step):
    """The root of a cached plan: builds ``upstream`` (the plan with a
    :class:`CachedRead`) over a new store at each iteration. Only the steps up to the
    last that reads the store are built in the iteration's dataset function; the
    rest are applied to it at the top, where tf.data's own rewrites of a pipeline
    (e.g. a map and the batch after it fused) reach them, as they reach an uncached
    plan."""

    def __init__(self, upstream, cache):
        self.upstream, self.cache = upstream, cache

    def text(self):
        return ""

    def build(self, dataset=None):
        cache, chain = self.cache, self.upstream.chain()
        last = max(position for position, step in enumerate(chain) if _reads_store(step))

        def iteration():
            cache.store = cache.new_store()
            try:
                return chain[last].build()
            finally:
                cache.store = None
        return build_steps(chain[last + 1:], per_iteration(iteration))


def _reads_store(step):
    """Whether ``step`` reads the cache's store: a :class:`CachedRead` or
    :class:`OneFileReaders`, or an interleave of readers that are."""
    if isinstance(step, Interleave):
        return any(_reads_store(inner) for inner in step.template.chain())
    return isinstance(step, (CachedRead, OneFileReaders))


# ------------------------------------------------------------ planning

def _copy_chain(last):
    """A copy of the steps of the chain ending at ``last`` (functions shared)."""
    copies = {}

    def copied(step):
        if step is None:
            return None
        if id(step) not in copies:
            twin = copies[id(step)] = copy.copy(step)
            twin.upstream = copied(step.upstream)
            if isinstance(step, Interleave):
                twin.template = copied(step.template)
            if isinstance(step, RoundRobin):
                twin.branches = [copied(branch) for branch in step.branches]
        return copies[id(step)]
    return copied(last)


def _cache_point(plan):
    """The :class:`_CachePoint` of ``plan``; raises :class:`_NotCached` when it has none."""
    outer = plan.chain()
    if any(isinstance(step, RoundRobin) for step in outer):
        raise _NotCached("several pipelines are joined (batch_join over separate producers)")
    index = next((i for i, step in enumerate(outer) if isinstance(step, Read) or isinstance(
        step, Interleave) and isinstance(step.template.chain()[1], Read)), None)
    if index is None:
        raise _NotCached("no reader")
    step = outer[index]
    template = step.template.chain() if isinstance(step, Interleave) else None
    values = outer[index - 1] if index else None
    if not isinstance(values, Values) or values.noun != "files":
        raise _NotCached("the reader's files do not come from a producer of file names")
    if values.num_epochs == 1:
        raise _NotCached("the files are read once (1 epoch)")
    read_place = (template, step) if template else (outer, None)
    read = template[1] if template else step
    after = [(s, read_place) for s in read_place[0][read_place[0].index(read) + 1:]]
    if template and all(_passes_through(s) for s, _ in after):
        after += [(s, (outer, None)) for s in outer[index + 1:]]
    for candidate, place in after:
        if isinstance(candidate, Map) and not candidate.is_noop():
            if candidate.unbatch or candidate.function.is_selection:
                break
            return _CachePoint(values, read, read_place, candidate, place)
        if not _passes_through(candidate):
            break
    raise _NotCached("no per-example map right after the reader")


def _passes_through(step):
    """Whether ``step`` keeps the elements as they are, only reordering them."""
    return isinstance(step, Shuffle) or isinstance(step, Map) and step.is_noop()


def _substitute(plan, old, new, chain, holder):
    """Put ``new`` in the place of ``old`` in ``chain`` (held by ``holder``); returns
    the plan's last step."""
    position = chain.index(old)
    chain[position] = new
    if position + 1 == len(chain) and holder is not None:
        holder.template = new
        return plan
    return relinked(plan, chain, position, new)


def _values_of(make):
    """The numpy values of the tensors ``make()`` builds: eagerly, or in a scratch
    graph's session when eager execution is off (as in run mode)."""
    if tf.executing_eagerly():
        return tf.nest.map_structure(lambda tensor: tensor.numpy(), make())
    with tf.Graph().as_default():
        tensors = make()
        with v1.Session() as session:
            return session.run(tensors)


def _files(values, read):
    """The distinct file names the producer yields: those the graph notes for the
    queue of ``read`` (a string_input_producer of a list), else evaluated once;
    raises :class:`_NotCached` when they are known only when the pipeline runs."""
    if read.files is not None:
        return sorted({name.encode() if isinstance(name, str) else name
                       for name in read.files})
    @tf.autograph.experimental.do_not_convert
    def one_epoch(_):
        return values.function(*(value for f in values.initial for value in f()))[0]
    try:
        names = _values_of(lambda: tf.data.Dataset.range(1).map(one_epoch).get_single_element())
    except (tf.errors.OpError, ValueError) as e:
        raise _NotCached(f"the file names are known only when the pipeline runs ({e})") from e
    return sorted(set(names.tolist()))


def _record_sizes(reading, name):
    """``(records, bytes)`` of the first records of file ``name`` (up to 256): read in
    Python where it can (a local file), else with tf.data."""
    try:
        sizes = [len(record) for _, _, record in itertools.islice(
            reading.iter_records(os.fsdecode(name)), _FILL_CHUNK)]
    except (OSError, CorruptRecordError):
        sizes = []   # tf.data reads it below, and says what is wrong as it does uncached
    if sizes:
        return len(sizes), sum(sizes)

    @tf.autograph.experimental.do_not_convert
    def measured(total, record):
        return total[0] + 1, total[1] + tf.cast(tf.strings.length(record), tf.int64)

    def make():
        zero = tf.constant(0, tf.int64)
        return reading.records(name).take(_FILL_CHUNK).reduce((zero, zero), measured)
    return _values_of(make)


def _estimate(specs, reading, files):
    """Bytes the cache will hold (:func:`~tf1compat.pipeline.kept_chunks.estimated_bytes`),
    from the first records of the first file that has any."""
    for name in files:
        records, size = _record_sizes(reading, name)
        if records:
            return estimated_bytes(files, records, size, specs)
    return 0


def _without_noops_after(plan, step):
    """``plan`` without the maps that pass the elements on as they are right after
    ``step`` (a map of the reader's key and record that slim's provider leaves before
    its decoding map): the step after the cached rows is then their own (a batch cut
    from the kept chunks, not one of single rows)."""
    chain = plan.chain()
    while step in chain and chain.index(step) + 1 < len(chain):
        position = chain.index(step) + 1
        noop = chain[position]
        if not (isinstance(noop, Map) and noop.is_noop()):
            break
        plan = relinked(plan, chain, position, step)
        if plan is step:
            return step
        chain = plan.chain()
    return plan


def _one_file_readers(plan, interleave, cached_read, cache):
    """``plan`` with ``interleave`` (readers of one file) as :class:`OneFileReaders`
    when its template is ``cached_read`` then maps picking components (moved after
    it); else ``plan`` as it is."""
    template = interleave.template.chain()
    selections = template[2:]
    if template[1] is not cached_read or not all(
            isinstance(step, Map) and step.function.is_selection and not step.unbatch
            for step in selections):
        return plan
    readers = OneFileReaders(interleave.upstream, cache, interleave.count)
    for selection in selections:
        moved = copy.copy(selection)
        moved.upstream = readers
        readers = moved
    return _substitute(plan, interleave, readers, plan.chain(), None)


def plan_cache(plan, graph_def, budget):
    """``(cached plan, None)`` for ``plan`` (before batch-then-parse; its steps are
    not changed), or ``(None, why not)``; the cached plan is vectorized and starts
    with a :class:`CachedPipeline`. Runs eagerly (it reads a few records)."""
    try:
        return _cached_plan(_copy_chain(plan), graph_def, budget), None
    except _NotCached as e:
        return None, str(e)


def _fill(point, prefix, graph_def):
    """The chain giving a file's rows in chunks: the read, then ``prefix`` (the
    deterministic start of the map), on batches; run once per file, so its fallbacks
    are set up only when a chunk needs them."""
    fill_read = copy.copy(point.read)
    fill_read.upstream = Element()
    fill_map = Map(None, prefix)
    fill_map.upstream = fill_read
    map_step = point.map_step
    fill_map.positions = [map_step.positions[map_step.function.inputs.index(t)]
                          for t in prefix.inputs]
    return vectorize(Batch(fill_map, _FILL_CHUNK, False, False), graph_def, once=True)


def _cached_plan(plan, graph_def, budget):
    """The :class:`CachedPipeline` of ``plan`` (a copy, changed in place); raises
    :class:`_NotCached`."""
    if not budget:
        raise _NotCached(f"caching is off ({BUDGET_VARIABLE}=off, --no-cache or cache=False)")
    point = _cache_point(plan)
    split = _split(point.map_step, graph_def)
    files = _files(point.values, point.read)
    specs = [tf.TensorSpec(t.shape, t.dtype) for t in split.columns]
    estimate = _estimate(specs, point.read.reading, files)
    if estimate > budget:
        raise _NotCached(f"about {size_text(estimate)} to keep, above the "
                         f"{size_text(budget)} budget")
    cache = FileCache(files, _fill(point, split.prefix, graph_def), specs, budget, estimate)
    cached_read = CachedRead(point.read.upstream, cache)
    plan = _substitute(plan, point.read, cached_read, *point.read_place)
    map_step, replacement = point.map_step, point.map_step.upstream
    if split.suffix is not None:
        replacement = Map(None, split.suffix, map_step.threads, map_step.unbatch)
        replacement.link(map_step.upstream, split.columns)
    plan = _substitute(plan, map_step, replacement, *point.map_place)
    plan = vectorize(plan, graph_def)   # a suffix of widening ops runs on the batches
    chain = plan.chain()
    if point.read_place[1] is not None and len(files) == 1:
        plan = _one_file_readers(plan, point.read_place[1], cached_read, cache)
        chain = plan.chain()
    plan = _without_noops_after(plan, cached_read)
    chain = plan.chain()
    if cached_read in chain and chain.index(cached_read) + 1 < len(chain):
        plan = shuffle_first(plan, chain[chain.index(cached_read) + 1], element_bytes(specs))
        chain = plan.chain()
        batch = chain[chain.index(cached_read) + 1]
        if isinstance(batch, Batch) and not batch.padded:   # cut from the kept chunks
            whole_files = CachedRead(cached_read.upstream, cache, whole_files=True)
            plan = _substitute(plan, cached_read, whole_files, chain, None)
            plan = _substitute(plan, batch, Rebatch(whole_files, batch), chain, None)
    # Rows well within the budget (uncompressed files: their sizes give the rows),
    # read by one reading at a time (no interleave of readers): each file kept whole,
    # its bytes not counted.
    cache.whole = (2 * estimate <= budget and point.read.reading.compression is None
                   and not any(isinstance(step, Interleave) for step in plan.chain()))
    return CachedPipeline(plan, cache)
