"""The steps of a lowered queue pipeline: each builds one ``tf.data`` stage and says
what it is, so the same plan gives the dataset and its readable description.

A plan is a chain of steps, each holding its ``upstream`` step; a chain starts at a
:class:`Values` (a producer's file names or slices) or, inside an
:class:`Interleave`, at an :class:`Element` (one upstream element as a dataset).
Elements are flat tuples of tensors (or one tensor).
:mod:`tf1compat.migrate.lowering.graph_reader` reads the graph and assembles the steps.

The plan also owns the one rule by which a lowered pipeline runs in another order
than its graph: a shuffle buffer right after a per-example map moves before it
when :meth:`Map.lets_shuffle_go_first` (:func:`shuffle_first`); the uncached plan
and ``tf1compat port`` apply it after a read (:func:`shuffle_after_reads`), the
cache (:mod:`.caching`) after its kept rows.
"""

from tf1compat._tf import tf

__all__ = ["Batch", "build_steps", "Element", "element_bytes", "Interleave", "Map", "Prefetch",
           "Read", "relinked", "RoundRobin", "Shuffle", "shuffle_after_reads", "shuffle_first",
           "Values", "describe_seed"]

_DEFAULT_GRAPH_SEED = 87654321   # TF1's graph seed when only an op seed is given
_KEY_CHUNK = 256                 # records per chunk when computing reader keys


def describe_seed(seed, seed2):
    """A TF1 op's ``seed``/``seed2`` attributes as the user gave them."""
    if not seed and not seed2:
        return "unseeded"
    if seed == _DEFAULT_GRAPH_SEED:
        return f"seed {seed2}"
    return f"graph seed {seed}, op seed {seed2}"


def _dataset_seed(seed, seed2):
    """One tf.data seed from a TF1 op's two seeds (None when unseeded)."""
    if not seed and not seed2:
        return None
    return (seed * 1_000_003 + seed2) % (2 ** 31 - 1)


def element_bytes(values):
    """Bytes of one element made of ``values`` (tensors or specs); None when a shape is
    not fixed."""
    if not all(value.shape.is_fully_defined() for value in values):
        return None
    return sum(value.shape.num_elements() * value.dtype.size for value in values)


class Step:
    """One stage; ``apply(dataset)`` adds it to the dataset built by the upstream steps."""

    upstream = None
    deterministic = True        # delivers the order a one-thread TF1 pipeline delivers

    def chain(self):
        steps, step = [], self
        while step is not None:
            steps.append(step)
            step = step.upstream
        return steps[::-1]

    def build(self, dataset=None):
        """The dataset of the whole chain (``dataset`` feeds an :class:`Element` start);
        a :class:`Read` and the :class:`Batch` right after it (maps that pass the
        elements on as they are aside) may build together (:meth:`Read.batched_by`)."""
        return build_steps(self.chain(), dataset)

    def describe(self) -> str:
        """The chain, e.g. ``3 files, 1 epoch, in order -> TFRecordDataset -> batch(8, ...)``."""
        return " -> ".join(text for step in self.chain() if (text := step.text()))

    def is_deterministic(self) -> bool:
        return all(step.deterministic for step in self.chain())

    def text(self):
        raise NotImplementedError

    def apply(self, dataset):
        raise NotImplementedError


def build_steps(steps, dataset=None):
    """``dataset`` (None: nothing) with ``steps`` (a chain, or its tail) applied in turn;
    see :meth:`Step.build`."""
    chain = [step for step in steps if not (isinstance(step, Map) and step.is_noop())]
    position = 0
    while position < len(chain):
        step, following = chain[position], chain[position + 1:position + 2]
        if isinstance(step, Read) and following and step.batched_by(following[0]):
            dataset = step.apply_batched(dataset, following[0])
            position += 2
        else:
            dataset = step.apply(dataset)
            position += 1
    return dataset


class Element(Step):
    """The start of a per-element chain inside :class:`Interleave`."""

    def text(self):
        return ""

    def apply(self, dataset):
        return dataset


class Values(Step):
    """A producer: ``function(*initial values)`` gives one epoch's values (shuffled by
    the producer's own ``RandomShuffle`` op, so seeded orders are TF1's),
    ``num_epochs`` times. ``initial`` are functions giving the values of variables
    set once (``match_filenames_once``), evaluated once per iteration."""

    def __init__(self, function, initial, length, num_epochs, seeds, noun):
        self.function, self.initial = function, initial
        self.length, self.num_epochs = length, num_epochs
        self.seeds, self.noun = seeds, noun
        self.deterministic = seeds is None or any(seeds)

    def text(self):
        noun = self.noun[:-1] if self.length == 1 else self.noun   # "1 file"
        count = "" if self.length is None else f"{self.length} "
        epochs = ("repeated forever" if self.num_epochs is None else
                  f"{self.num_epochs} epoch{'s' if self.num_epochs != 1 else ''}")
        order = ("in order" if self.seeds is None else
                 f"reshuffled every epoch ({describe_seed(*self.seeds)})")
        return f"{count}{noun}, {epochs}, {order}"

    def apply(self, dataset):
        num_epochs, function, initial = self.num_epochs, self.function, self.initial

        @tf.autograph.experimental.do_not_convert
        def all_epochs(*values):
            epochs = (tf.data.Dataset.range(1).repeat() if num_epochs is None
                      else tf.data.Dataset.range(num_epochs))
            # Sequential map: the shuffle op's state carries from one epoch to the next.
            return epochs.map(lambda _: tuple(function(*values))).unbatch()

        if not initial:
            return all_epochs()
        once = tf.data.Dataset.range(1).map(tf.autograph.experimental.do_not_convert(
            lambda _: tuple(value for f in initial for value in f())))
        return once.flat_map(all_epochs)


class Read(Step):
    """Each upstream file name read into records as the TF1 reader op would
    (``reading``, a :class:`~tf1compat.pipeline.graph_model.readers.ReaderSpec`):
    ``(key, record)`` elements when the pipeline uses the reader's key, else
    ``record``; ``files``: the names the producer of its queue queued, when the
    graph says (else None)."""

    def __init__(self, upstream, reading, with_keys, files=None):
        self.upstream, self.reading, self.with_keys = upstream, reading, with_keys
        self.files = files

    def text(self):
        name = self.reading.describe()
        return f"{name} with reader keys" if self.with_keys else name

    def row_bytes(self):
        """Bytes of each element it gives: a fixed-length reader's record size (without
        keys); None where the size is known only when read (a TFRecord, a line, a file,
        a key)."""
        return None if self.with_keys else self.reading.record_bytes

    def apply(self, dataset):
        reading, with_keys = self.reading, self.with_keys

        @tf.autograph.experimental.do_not_convert
        def read(filename):
            if with_keys:
                return reading.keyed_chunks(filename, _KEY_CHUNK)
            return reading.records(filename)
        # Keyed chunks are unbatched after the flat_map, which then passes on chunks.
        return dataset.flat_map(read).unbatch() if with_keys else dataset.flat_map(read)

    def batched_by(self, step):
        """Whether ``step``, following this read, builds with it: a plain batch of
        records with their keys."""
        return self.with_keys and isinstance(step, Batch) and not step.padded

    def apply_batched(self, dataset, batch):
        """The read with keys followed by ``batch``: each file's keys and records made in
        chunks of the batch size, then rebatched across files; the same batches as
        :meth:`apply` then ``batch``, without passing each record on alone. A damaged
        record fails its whole chunk, so up to a batch of the records read before it
        is not delivered (TF1 delivers each batch filled before it)."""
        reading, size = self.reading, batch.batch_size

        @tf.autograph.experimental.do_not_convert
        def read(filename):
            return reading.keyed_chunks(filename, size)
        return dataset.flat_map(read).rebatch(size, drop_remainder=batch.drop_remainder)


class Map(Step):
    """The per-example (or per-batch) ops of the legacy graph as a map function.

    :meth:`link` says where the function's inputs are in the element; ``threads``
    is the number of TF1 threads that ran the ops. The map runs in parallel (order kept)
    unless the function has stateful ops (random ops, py_func) and TF1 ran it on one
    thread: then it runs in order, so they are called as TF1 calls them.
    ``after_shuffle``: :func:`shuffle_first` moved the shuffle buffer TF1 filled from
    it before it.
    """

    after_shuffle = False

    def __init__(self, upstream, function, threads=1, unbatch=False):
        self.upstream, self.function, self.positions = upstream, function, None
        self.threads, self.unbatch = threads, unbatch
        self.deterministic = threads == 1
        self.stateful = function.stateful_op_types()
        self.sequential = threads == 1 and bool(self.stateful)

    def link(self, upstream, components):
        """Set the upstream step, whose elements are made of graph tensors ``components``."""
        names = [t.name for t in components]
        self.upstream = upstream
        self.positions = [names.index(t.name) for t in self.function.inputs]
        return self

    def is_noop(self):
        return (self.function.is_selection and not self.unbatch
                and self.positions == list(range(len(self.positions)))
                and self.function.inputs == self.function.outputs)

    def lets_shuffle_go_first(self, row_bytes):
        """Whether a shuffle buffer right after this map may hold the map's input rows
        instead, the map running after it: TF1 ran the map on several threads with ops
        that vary (random distortions, py_func: drawn in no fixed order, so the draws
        may as well come after the shuffle; one thread keeps TF1's order of draws), the
        map gives one element per row (not an unbatch), and a row (``row_bytes``; None:
        not known before reading) takes no more bytes than the map's results. The
        buffer then fills without running the map and holds no more (the CIFAR-10
        tutorial's 3,073-byte records instead of its 6,916 bytes of distorted float32
        image and label). A row of unknown size stays behind the map: a TFRecord can be
        a 100 KB JPEG that the map crops to a few KB."""
        made = element_bytes(self.function.outputs)
        return (self.threads > 1 and bool(self.stateful) and not self.unbatch
                and row_bytes is not None and made is not None and row_bytes <= made)

    def parts(self):
        """What the map does and how it runs, for :meth:`text`."""
        parts = [self.function.describe()]
        parts += [pruning.describe() for pruning in self.function.prunings.values()]
        if self.threads > 1:
            parts.append(f"{self.threads} threads -> parallel")
        elif self.sequential:
            parts.append(f"in order: stateful {', '.join(self.stateful)}")
        return parts

    def text(self):
        if self.function.is_selection and not self.unbatch:
            return ""
        text = f"map({', '.join(self.parts())})"
        return f"{text} -> unbatch" if self.unbatch else text

    def apply(self, dataset):
        if self.is_noop():
            return dataset
        function, positions = self.function, self.positions

        @tf.autograph.experimental.do_not_convert
        def call(*components):
            return tuple(function(*(components[i] for i in positions)))
        if self.sequential:
            dataset = dataset.map(call)
        else:
            dataset = dataset.map(call, num_parallel_calls=tf.data.AUTOTUNE, deterministic=True)
        return dataset.unbatch() if self.unbatch else dataset


def shuffle_first(plan, map_step, row_bytes):
    """``plan`` (its last step) with the :class:`Shuffle` right after ``map_step`` moved
    before it when ``map_step.lets_shuffle_go_first(row_bytes)`` (rows of ``row_bytes``
    each come into the map), the map marked ``after_shuffle``; else ``plan`` as it is.
    The steps are relinked in place."""
    chain = plan.chain()
    position = chain.index(map_step) + 1
    shuffle = chain[position] if position < len(chain) else None
    if not (isinstance(map_step, Map) and isinstance(shuffle, Shuffle)
            and map_step.lets_shuffle_go_first(row_bytes)):
        return plan
    shuffle.upstream, map_step.upstream = map_step.upstream, shuffle
    map_step.after_shuffle = True
    return relinked(plan, chain, position, map_step)


def relinked(plan, chain, position, step):
    """``plan`` (its last step; ``chain``: its steps) with the step after
    ``chain[position]`` taking its elements from ``step``; ``step`` itself when no step
    follows (it is the plan's last step then)."""
    if position + 1 < len(chain):
        chain[position + 1].upstream = step
        return plan
    return step


def shuffle_after_reads(plan):
    """``plan`` (its last step) with :func:`shuffle_first` applied to each map right
    after a :class:`Read`, whose records are its rows (their size:
    :meth:`Read.row_bytes`): the order of the uncached plan and of ``tf1compat port``'s
    code. Relinked in place."""
    for step in plan.chain():
        if isinstance(step, Map) and isinstance(step.upstream, Read):
            plan = shuffle_first(plan, step, step.upstream.row_bytes())
    return plan


class Shuffle(Step):
    """A ``RandomShuffleQueue``: a shuffle buffer of ``min_after_dequeue`` elements
    (``capacity`` when that is 0), as TensorFlow's migration notes advise."""

    deterministic = False

    def __init__(self, upstream, buffer_size, seeds):
        self.upstream, self.buffer_size, self.seeds = upstream, buffer_size, seeds

    def text(self):
        return f"shuffle(buffer {self.buffer_size}, {describe_seed(*self.seeds)})"

    def apply(self, dataset):
        return dataset.shuffle(self.buffer_size, seed=_dataset_seed(*self.seeds))


class Batch(Step):
    """A batching dequeue: ``dequeue_many`` drops the last partial batch,
    ``dequeue_up_to`` (``allow_smaller_final_batch``) keeps it; a
    ``PaddingFIFOQueue`` (``dynamic_pad``) pads to the longest element."""

    def __init__(self, upstream, batch_size, drop_remainder, padded):
        self.upstream, self.batch_size = upstream, batch_size
        self.drop_remainder, self.padded = drop_remainder, padded

    def text(self):
        name = "padded_batch" if self.padded else "batch"
        rule = "drop remainder" if self.drop_remainder else "keep remainder"
        return f"{name}({self.batch_size}, {rule})"

    def apply(self, dataset):
        if self.padded:
            return dataset.padded_batch(self.batch_size, drop_remainder=self.drop_remainder)
        return dataset.batch(self.batch_size, drop_remainder=self.drop_remainder)


class Prefetch(Step):
    """A queue that only buffers batches (``prefetch_queue``), or the work ahead of
    the consumer that queue-runner threads do (``buffer_size`` AUTOTUNE)."""

    def __init__(self, upstream, buffer_size):
        self.upstream, self.buffer_size = upstream, buffer_size

    def text(self):
        size = "autotune" if self.buffer_size == tf.data.AUTOTUNE else self.buffer_size
        return f"prefetch({size})"

    def apply(self, dataset):
        return dataset.prefetch(self.buffer_size)


class Interleave(Step):
    """``count`` identical readers (or consumers) sharing one upstream queue: TF1 hands
    each the next upstream element when it is free; here they take turns."""

    deterministic = False

    def __init__(self, upstream, template, count):
        self.upstream, self.template, self.count = upstream, template, count

    def text(self):
        return f"interleave({self.count} readers: {self.template.describe()})"

    def apply(self, dataset):
        template = self.template

        @tf.autograph.experimental.do_not_convert
        def per_element(*components):
            return template.build(tf.data.Dataset.from_tensors(components))
        return dataset.interleave(per_element, cycle_length=self.count, block_length=1,
                                  num_parallel_calls=self.count, deterministic=True)


class RoundRobin(Step):
    """Independent pipelines feeding one queue (``batch_join`` over separate
    producers): one element from each in turn, skipping those that ended."""

    deterministic = False

    def __init__(self, branches):
        self.branches = branches

    def text(self):
        return "round-robin(" + " | ".join(b.describe() for b in self.branches) + ")"

    def apply(self, dataset):
        datasets = [branch.build() for branch in self.branches]
        order = tf.data.Dataset.range(len(datasets)).repeat()
        return tf.data.Dataset.choose_from_datasets(datasets, order,
                                                    stop_on_empty_dataset=False)
