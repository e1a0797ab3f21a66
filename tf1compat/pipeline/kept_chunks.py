"""Chunks of rows kept in memory, file by file, within a byte budget: the store both
in-memory caches share (the lowering's, :mod:`tf1compat.migrate.lowering.caching`,
and the fast paths', :mod:`tf1compat.pipeline.epoch_cache`).

:func:`fill` reads every file's chunks once into one TensorArray per column, each
chunk kept as it was made (never copied together), counting the bytes held; above
the budget it keeps nothing. :class:`KeptChunks` then gives a file's chunks by its
name.
"""

from tf1compat._tf import tf
from tf1compat.pipeline.cache_budget import row_bytes

__all__ = ["KeptChunks", "fill"]


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
