"""Each file's chunks of rows kept in memory as its first reading streams, within a
byte budget: the store both in-memory caches share (the lowering's,
:mod:`tf1compat.migrate.lowering.caching`, and the fast paths',
:mod:`tf1compat.pipeline.epoch_cache`).

:class:`KeptChunks` holds one tf.data in-memory cache (``Dataset.cache()``) per file;
``chunks(name)`` gives a file's chunks: its first reading reads them
(``file_chunks(filename)``) and keeps them as they stream on; later readings give
the kept chunks. The bytes kept are counted chunk by chunk; the chunk that would pass
the budget is not kept, nor any later chunk of its file, and that file is read again
every time from then on (the files kept before stay kept: the store never holds more
than the budget). Every reading gives every chunk of its file once, in order: a
reading of kept chunks that end early (a file cut at the budget, or kept by two
readings at once) reads the rest from the file.

:class:`KeptWhole` is the store without the counting, for rows known to fit: each
file kept whole by its first reading, as it streams, for pipelines whose files are
never read by two readings at once. It sets up fewer functions before the first
element.

A store lives as long as one iteration of the dataset built over it
(:func:`per_iteration`): iterating again reads the files again. How its bytes are
counted: :func:`row_bytes` (kept) and :func:`estimated_bytes` (before reading).
"""

import os

from tf1compat._tf import tf

__all__ = ["KeptChunks", "KeptWhole", "MISSING_FILE", "per_iteration", "STRING_BYTES", "row_bytes",
           "estimated_bytes"]

STRING_BYTES = 24                # what TensorFlow holds per string besides its characters

# What a reading of a name outside the files fails with (InvalidArgumentError).
MISSING_FILE = ("tf1compat: a file the in-memory cache does not hold (the file names "
                "changed since the cache was planned, when the pipeline was lowered or the "
                "fast path built); turn the cache off (cache=False, or --no-cache)")

# Up to this many files, each file's datasets are made in the dataset function itself;
# more, in a tf.map_fn over the files (a loop whose tracing and instantiation cost about
# 0.02-0.04 s before the first element, where a file made directly costs a few ms).
_FILES_MADE_ONE_BY_ONE = 8

_UNREAD, _KEEPING, _KEPT, _NOT_KEPT = 0, 1, 2, 3   # a file's status in the store
_DELIVERED, _ENDED = 0, 1                          # what a reading counts


def per_iteration(build):
    """The dataset ``build()`` makes, made again for each iteration (what it keeps,
    made inside ``build``, lives as long as that iteration)."""
    @tf.autograph.experimental.do_not_convert
    def iteration(_):
        return build()
    return tf.data.Dataset.range(1).flat_map(iteration)


def _per_file(count, datasets, outputs):
    """The variant tensors (each ``[count]``) of ``datasets(index)`` (``outputs``
    datasets of file ``index``, as variants) for every file: made one by one for a few
    files, else by a ``tf.map_fn`` (which traces ``datasets`` even for no file: the
    chunks' spec is then known)."""
    if 0 < count <= _FILES_MADE_ONE_BY_ONE:
        made = [datasets(tf.constant(index, tf.int64)) for index in range(count)]
        return tuple(tf.stack([each[i] for each in made]) for i in range(outputs))
    variant = tf.TensorSpec([], tf.variant)
    return tf.map_fn(datasets, tf.range(count, dtype=tf.int64),
                     fn_output_signature=(variant,) * outputs)


def _count_if(condition):
    """For ``take``: everything when ``condition`` holds, else nothing."""
    return tf.where(condition, tf.constant(-1, tf.int64), tf.constant(0, tf.int64))


def _table():
    """A table of int64 by int64 key (0 when unset), owned by the dataset function
    that makes it (a new one at every call)."""
    return tf.lookup.experimental.MutableHashTable(
        tf.int64, tf.int64, default_value=0, experimental_is_anonymous=True)


class KeptChunks:
    """The chunks of ``files`` (file names), each read by ``file_chunks(filename)``
    (flat tuples of columns, chunk shapes ``[None, ...]``; no chunk is empty), kept
    within ``budget`` bytes. Made inside a dataset function (:func:`per_iteration`),
    which traces ``file_chunks`` once; ``chunk_spec`` is then its chunks' spec. A name
    outside ``files`` fails (:data:`MISSING_FILE`)."""

    def __init__(self, files, file_chunks, budget):
        self.files = tf.constant(files)
        self.status, self.held = _table(), _table()   # by file position
        self.everyone = tf.range(len(files), dtype=tf.int64)
        self.chunk_spec = None

        @tf.autograph.experimental.do_not_convert
        def datasets(index):
            """A file's chunks as read, and as kept: cut where the budget is passed,
            else up to the empty chunk after its last one."""
            read = file_chunks(self.files[index])
            self.chunk_spec = read.element_spec
            kept = read.concatenate(tf.data.Dataset.from_tensors(_end(self.chunk_spec))) \
                .take_while(self._fits(index, budget)).cache()
            return (tf.data.experimental.to_variant(read),
                    tf.data.experimental.to_variant(kept))
        self.read, self.kept = _per_file(len(files), datasets, 2)

    def _fits(self, index, budget):
        """Whether a chunk of a file (at ``index``) is kept: while the file is kept and
        the bytes held stay within ``budget``; counts the chunk, or marks the file not
        kept."""
        status, held, everyone = self.status, self.held, self.everyone

        @tf.autograph.experimental.do_not_convert
        def fits(*columns):
            at = index[None]
            size = row_bytes(columns)
            now = status.lookup(at)
            fit = tf.logical_and(tf.not_equal(now[0], _NOT_KEPT),
                                 tf.reduce_sum(held.lookup(everyone)) + size <= budget)
            updates = [held.insert(at, held.lookup(at) + tf.where(fit, size, 0)),
                       status.insert(at, tf.where(fit, now, _NOT_KEPT))]
            with tf.control_dependencies(updates):
                return tf.identity(fit)
        return fits

    def chunks(self, *name):
        """The chunks of the file ``name`` names (a file name, or ``(file name,
        *extra)``: its chunks are then ``(*extra, *columns)``): kept, or read."""
        filename, *extra = tf.nest.flatten(name)
        index = _file_index(self.files, filename)
        at = index[None]
        status = self.status.lookup(at)[0]
        unread = tf.equal(status, _UNREAD)
        from_store = tf.logical_or(unread, tf.equal(status, _KEPT))
        claim = self.status.insert(at, tf.where(unread, tf.constant(_KEEPING, tf.int64),
                                                status)[None])
        with tf.control_dependencies([claim]):
            read, kept = (tf.data.experimental.from_variant(tf.gather(datasets, index),
                                                            self.chunk_spec)
                          for datasets in (self.read, self.kept))
        reading = _table()   # what this reading gave: chunks, and whether it saw the end
        keys = tf.constant([_DELIVERED, _ENDED], tf.int64)

        @tf.autograph.experimental.do_not_convert
        def counted(*columns):
            """Whether a kept chunk has rows (the empty one after a file's last is
            not given), counting it."""
            rows = tf.shape(columns[0], out_type=tf.int64)[0]
            counts = reading.lookup(keys) + tf.cast(tf.stack([rows > 0, tf.equal(rows, 0)]),
                                                    tf.int64)
            with tf.control_dependencies([reading.insert(keys, counts)]):
                return rows > 0

        @tf.autograph.experimental.do_not_convert
        def rest(_):
            """After the kept chunks: the file is kept when they reached its end, else
            the chunks they lacked are read."""
            delivered, ended = tf.unstack(reading.lookup(keys))
            complete = ended > 0
            mark = self.status.insert(
                at, tf.where(complete, tf.constant(_KEPT, tf.int64), _NOT_KEPT)[None])
            with tf.control_dependencies([mark]):
                return read.skip(delivered).take(_count_if(~complete))

        chunks = kept.filter(counted).take(_count_if(from_store)).concatenate(
            tf.data.Dataset.range(1).take(_count_if(from_store)).flat_map(rest)).concatenate(
            read.take(_count_if(~from_store)))
        return _tagged(chunks, extra)


class KeptWhole:
    """The chunks of ``files`` (file names), each read by ``file_chunks(filename)``
    (as for :class:`KeptChunks`, ``chunk_spec`` too), each file kept whole as its
    first reading streams, its bytes not counted: for rows estimated well within the
    budget, and files never read by two readings at once (one reader). Made inside a
    dataset function (:func:`per_iteration`). A name outside ``files`` fails
    (:data:`MISSING_FILE`)."""

    def __init__(self, files, file_chunks):
        self.files = tf.constant(files)
        self.chunk_spec = None

        @tf.autograph.experimental.do_not_convert
        def kept(index):
            read = file_chunks(self.files[index])
            self.chunk_spec = read.element_spec
            return (tf.data.experimental.to_variant(read.cache()),)
        self.kept, = _per_file(len(files), kept, 1)

    def chunks(self, *name):
        """The chunks of the file ``name`` names (as :meth:`KeptChunks.chunks`)."""
        filename, *extra = tf.nest.flatten(name)
        chunks = tf.data.experimental.from_variant(
            tf.gather(self.kept, _file_index(self.files, filename)), self.chunk_spec)
        return _tagged(chunks, extra)


def _end(spec):
    """An empty chunk of ``spec`` (chunk shapes ``[None, ...]``): it marks the end of a
    file among its kept chunks."""
    return tf.nest.map_structure(
        lambda column: tf.zeros([0, *(size or 0 for size in column.shape[1:])], column.dtype),
        spec)


def _file_index(files, filename):
    """The position of ``filename`` in ``files``; fails with :data:`MISSING_FILE` when
    it is not there."""
    matches = tf.equal(files, filename)
    found = tf.debugging.Assert(tf.reduce_any(matches), [MISSING_FILE])
    with tf.control_dependencies([found]):
        return tf.argmax(tf.cast(matches, tf.int64), output_type=tf.int64)


def _tagged(chunks, extra):
    """``chunks`` with ``extra`` tensors before each chunk's columns."""
    if not extra:
        return chunks

    @tf.autograph.experimental.do_not_convert
    def tagged(*columns):
        return (*extra, *columns)
    return chunks.map(tagged)


def row_bytes(columns):
    """Bytes held by a batch of rows (a list of tensors, one per column)."""
    total = tf.constant(0, tf.int64)
    for column in columns:
        if column.dtype == tf.string:
            total += tf.reduce_sum(tf.cast(tf.strings.length(column), tf.int64) + STRING_BYTES)
        else:
            total += tf.size(column, tf.int64) * column.dtype.size
    return total


def estimated_bytes(files, sample_records, sample_bytes, row_specs):
    """Bytes the rows of ``files`` will hold, before reading them: the files' sizes
    over the mean size of a sample of their records (``sample_records`` records of
    ``sample_bytes`` bytes in all) give the number of rows; a row holds its fixed-size
    values (``row_specs``) and, per string, a record. 0 for an empty sample."""
    if not sample_records:
        return 0
    mean = max(sample_bytes / sample_records, 1)
    row = sum(spec.shape.num_elements() * (
        mean + STRING_BYTES if spec.dtype == tf.string else spec.dtype.size)
        for spec in row_specs)
    total = sum(tf.io.gfile.stat(os.fsdecode(name)).length for name in files)
    return int(total / mean * row)
