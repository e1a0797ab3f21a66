"""The four TF1 readers as tf.data datasets that take their files from a filename queue.

:func:`build_record_chunks` reads the files a producer (``string_input_producer``)
puts in its queue, in the order it dequeues them, so epochs, file shuffling and its
seed stay the producer's; the stream ends when the producer closes the queue. It
yields chunks ``{"records", "file", "start"}`` of up to ``chunk_size`` records of one
file: the file's last chunk may be smaller. ``file`` and ``start`` (the position of
the chunk's first record) give each record's reader key, built only when asked for
(:meth:`~tf1compat.pipeline.graph_model.readers.ReaderSpec.chunk_keys`).
"""

from tf1compat._tf import tf, v1
from tf1compat.pipeline.graph_model import op_types

__all__ = ["build_record_chunks"]


def _file_names(filename_queue):
    """The names dequeued from ``filename_queue`` (a queue or its handle), until it is
    closed and empty: the dequeue's OutOfRangeError ends a (v1) map dataset."""
    handle = getattr(filename_queue, "queue_ref", filename_queue)

    def dequeue(_):
        dequeue_one = getattr(tf.raw_ops, op_types.DEQUEUE)
        name = dequeue_one(handle=handle, component_types=[tf.string])[0]
        name.set_shape([])
        return name

    return v1.data.Dataset.from_tensors(0).repeat().map(dequeue)


def build_record_chunks(filename_queue, reading, chunk_size, parallel_files=1):
    """Dataset of chunks ``{"records", "file", "start"}`` of up to ``chunk_size`` records
    of one file, from the files of ``filename_queue`` read as ``reading`` (a
    :class:`~tf1compat.pipeline.graph_model.readers.ReaderSpec`) says; ``parallel_files``
    files are read at once, interleaved chunk by chunk in a fixed order."""

    def file_chunks(filename):
        def chunk(start, records):
            return reading.advance(start, records), {"records": records, "file": filename,
                                                     "start": start}

        return reading.records(filename).batch(chunk_size).scan(
            tf.constant(0, tf.int64), chunk)

    names = _file_names(filename_queue)
    if parallel_files == 1:
        return names.flat_map(file_chunks)
    return names.interleave(file_chunks, cycle_length=parallel_files,
                            num_parallel_calls=parallel_files, deterministic=True)
