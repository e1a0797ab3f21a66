"""Chunks of rows kept in memory, file by file, within a byte budget: the store both
in-memory caches share (the lowering's, :mod:`tf1compat.migrate.lowering.caching`,
and the fast paths', :mod:`tf1compat.pipeline.epoch_cache`).

:func:`fill` reads every file's chunks once into one TensorArray per column, each
chunk kept as it was made (never copied together), counting the bytes held; above
the budget it keeps nothing. :class:`KeptChunks` then gives a file's chunks by its
name.
:func:`streamed` keeps the chunks as the first epoch streams them instead: every
epoch's chunks come out in the order the file names come, the first epoch's as they
are read, later ones' from memory.
"""

from tf1compat._tf import tf
from tf1compat.pipeline.cache_budget import row_bytes

__all__ = ["KeptChunks", "fill", "streamed"]


def _arrays(specs):
    """Empty TensorArrays: a chunk per entry of each column, then the chunks' files."""
    return (tuple(tf.TensorArray(spec.dtype, 0, dynamic_size=True, infer_shape=False,
                                 element_shape=spec.shape) for spec in specs),
            tf.TensorArray(tf.int64, 0, dynamic_size=True))


def fill(files, file_chunks, specs, budget):
    """A dataset of one element: each column's chunks (a TensorArray; empty when the
    rows did not fit ``budget`` bytes), each file's first chunk and number of chunks,
    and whether every file fitted. ``file_chunks(filename)`` gives a file's chunks as
    flat tuples of columns of ``specs`` (chunk specs: ``[None, ...]``)."""
    size, names = len(files), tf.constant(files)

    @tf.autograph.experimental.do_not_convert
    def numbered(index, filename):
        @tf.autograph.experimental.do_not_convert
        def with_file(*columns):
            return (*columns, index)
        return file_chunks(filename).map(with_file)

    @tf.autograph.experimental.do_not_convert
    def count(total, chunk):
        total += row_bytes(chunk[:-1])
        return total, (*chunk, total <= budget)

    @tf.autograph.experimental.do_not_convert
    def within_budget(*chunk):
        return chunk[-1]

    @tf.autograph.experimental.do_not_convert
    def keep(arrays, chunk):
        columns, files_of_chunks = arrays
        *values, index, _ = chunk
        columns = tuple(array.write(array.size(), value)
                        for array, value in zip(columns, values, strict=True))
        return columns, files_of_chunks.write(files_of_chunks.size(), index)

    chunks = tf.data.Dataset.from_tensor_slices(
        (tf.range(size, dtype=tf.int64), names)).flat_map(numbered)
    end = tf.data.Dataset.from_tensors((   # a chunk of one row after the last file
        *(tf.zeros([1, *spec.shape[1:]], spec.dtype) for spec in specs),
        tf.constant(-1, tf.int64)))
    kept = chunks.concatenate(end).scan(tf.constant(0, tf.int64), count).take_while(
        within_budget)

    @tf.autograph.experimental.do_not_convert
    def gathered(_):
        columns, files_of_chunks = kept.reduce(_arrays(specs), keep)
        index = files_of_chunks.stack()
        complete = tf.reduce_any(tf.equal(index, -1))
        ids = tf.where(index >= 0, index, size)
        counts = tf.math.unsorted_segment_sum(tf.ones_like(index), ids, size + 1)[:size]
        first = tf.math.unsorted_segment_min(tf.range(tf.size(index, tf.int64)), ids,
                                             size + 1)[:size]
        # Over the budget: keep nothing (the chunks read so far are freed here).
        columns = [tf.cond(complete, lambda c=c: c, lambda e=e: e)
                   for c, e in zip(columns, _arrays(specs)[0], strict=True)]
        return (*columns, first, counts, complete)
    return tf.data.Dataset.range(1).map(gathered)


class KeptChunks:
    """The element :func:`fill` gives, inside a dataset function: ``chunks(filename)``
    is the dataset of that file's chunks (flat tuples of columns); ``complete``
    whether every file fitted. A name the store does not hold fails with ``missing``
    (what changed, what to do)."""

    def __init__(self, files, filled, missing):
        *self.columns, self.first, self.counts, self.complete = filled
        self.files, self.missing = tf.constant(files), missing

    def _chunk(self, position):
        return tuple(column.read(tf.cast(position, tf.int32)) for column in self.columns)

    def chunks(self, filename):
        matches = tf.equal(self.files, filename)
        found = tf.debugging.assert_equal(tf.reduce_any(matches), True, message=(
            f"tf1compat: a file the in-memory cache does not hold ({self.missing})"))
        with tf.control_dependencies([found]):
            index = tf.argmax(tf.cast(matches, tf.int32))
        first = self.first[index]
        return tf.data.Dataset.range(first, first + self.counts[index]).map(
            tf.autograph.experimental.do_not_convert(self._chunk))


_FRESH, _KEPT, _AGAIN = 0, 1, 2   # how streamed serves a chunk or a file


def _file_index(files, filename, missing):
    """The position of ``filename`` in the constant ``files``; fails with ``missing``
    when it is not there."""
    matches = tf.equal(files, filename)
    found = tf.debugging.assert_equal(tf.reduce_any(matches), True, message=(
        f"tf1compat: a file the in-memory cache does not hold ({missing})"))
    with tf.control_dependencies([found]):
        return tf.argmax(tf.cast(matches, tf.int32))


def streamed(names, files, per_epoch, file_chunks, specs, budget, missing):
    """Each file name's chunks (flat tuples of columns of ``specs``, chunk specs
    ``[None, ...]``), for the dataset ``names`` of file names (every epoch's, in
    order, ``per_epoch`` of them an epoch, each of them in ``files``); an element of
    ``names`` may be ``(file name, *extra)``, its chunks then ``(*extra, *columns)``.

    The first epoch's names are read (``file_chunks(filename)``, as in :func:`fill`)
    and each chunk, as it comes out, is kept in one TensorArray per column; later
    names give their file's kept chunks. While the bytes kept stay within ``budget``;
    the chunk that passes it drops everything kept, and from there on every name is
    read again: no chunk is lost or given twice. A name of a file the first epoch
    gave twice gives the chunks its first reading kept. A name outside ``files``
    fails with ``missing`` (what changed, what to do)."""
    size, names_table = len(files), tf.constant(files)
    blank = tuple(tf.zeros([0, *spec.shape[1:]], spec.dtype) for spec in specs)

    @tf.autograph.experimental.do_not_convert
    def slots(position, name):
        """A first epoch's name: its chunks, as read; a later one: one empty slot."""
        filename, *extra = tf.nest.flatten(name)   # a producer's element: (file name,)
        fresh = position < per_epoch
        index = _file_index(names_table, filename, missing)

        @tf.autograph.experimental.do_not_convert
        def read(*columns):
            return (True, position, index, filename, tuple(extra), columns)
        chunks = file_chunks(filename).map(read)
        later = tf.data.Dataset.from_tensors(
            (False, position, index, filename, tuple(extra), blank))
        return chunks.take(_count_if(fresh)).concatenate(later.take(_count_if(~fresh)))

    @tf.autograph.experimental.do_not_convert
    def keep(state, slot):
        columns, first, counts, kept_at, total, over = state
        fresh, position, index, filename, extra, values = slot
        unclaimed = tf.logical_or(tf.equal(kept_at[index], -1),
                                  tf.equal(kept_at[index], position))
        claims = fresh & ~over & unclaimed
        total += tf.where(claims, row_bytes(values), 0)
        within = total <= budget
        kept = claims & within
        over |= claims & ~within
        at = [[index]]
        first = tf.where(kept & tf.equal(kept_at[index], -1), tf.tensor_scatter_nd_update(
            first, at, [tf.cast(columns[0].size(), tf.int64)]), first)
        counts = tf.where(kept, tf.tensor_scatter_nd_add(counts, at, [1]), counts)
        kept_at = tf.where(kept, tf.tensor_scatter_nd_update(kept_at, at, [position]), kept_at)
        # One cond for all columns: each cond is a function to trace.
        columns = tf.cond(kept, lambda: tuple(
            array.write(array.size(), value) for array, value in zip(columns, values,
                                                                     strict=True)),
            lambda: tf.cond(over, lambda: _arrays(specs)[0], lambda: columns))
        mode = tf.where(fresh, _FRESH, tf.where(over, _AGAIN, _KEPT))
        served = tf.cond(tf.equal(mode, _KEPT), lambda: columns, lambda: _arrays(specs)[0])
        return ((columns, first, counts, kept_at, total, over),
                (mode, filename, first[index], counts[index], extra, values, served))

    @tf.autograph.experimental.do_not_convert
    def serve(mode, filename, first, count, extra, values, columns):
        @tf.autograph.experimental.do_not_convert
        def chunk(position):
            position = tf.cast(position, tf.int32)
            return (*extra, *(column.read(position) for column in columns))

        @tf.autograph.experimental.do_not_convert
        def tagged(*values):
            return (*extra, *values)
        fresh = tf.data.Dataset.from_tensors((*extra, *values))
        kept = tf.data.Dataset.range(first, first + count).map(chunk)
        again = file_chunks(filename).map(tagged)
        return fresh.take(_count_if(tf.equal(mode, _FRESH))).concatenate(
            kept.take(_count_if(tf.equal(mode, _KEPT)))).concatenate(
            again.take(_count_if(tf.equal(mode, _AGAIN))))

    @tf.autograph.experimental.do_not_convert
    def scanned(_):
        zeros = tf.zeros([size], tf.int64)
        start = (_arrays(specs)[0], zeros, zeros, zeros - 1, tf.constant(0, tf.int64),
                 tf.constant(False))
        return names.enumerate().flat_map(slots).scan(start, keep)
    # Built inside a dataset function: TensorArrays are graph values there.
    return tf.data.Dataset.range(1).flat_map(scanned).flat_map(serve)


def _count_if(condition):
    """For ``take``: everything when ``condition`` holds, else nothing."""
    return tf.where(condition, tf.constant(-1, tf.int64), tf.constant(0, tf.int64))
