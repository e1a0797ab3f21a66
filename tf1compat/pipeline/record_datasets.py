"""The four TF1 readers as tf.data datasets that take their files from a filename queue.

:func:`build_record_chunks` reads the files a producer (``string_input_producer``)
puts in its queue, in the order it dequeues them, so epochs, file shuffling and its
seed stay the producer's; the stream ends when the producer closes the queue. It
yields chunks ``{"records", "file", "start"}`` of up to ``chunk_size`` records of one
file: the file's last chunk may be smaller. ``file`` and ``start`` (the position of
the chunk's first record) give each record's reader key, built only when asked for
(:meth:`Reading.chunk_keys`), as the TF1 reader builds it: ``file:byte offset`` for
TFRecords, ``file:record number`` for fixed-length records, ``file:line number`` for
text lines, the file name for whole files.
"""

from tf1compat._tf import tf, v1
from tf1compat.errors import PipelineConfigError

__all__ = ["Reading", "reading_of", "reading_of_op", "build_record_chunks"]

_READER_NAMES = "TFRecordReader, FixedLengthRecordReader, TextLineReader or WholeFileReader"


class Reading:
    """How one kind of reader reads a file: its records and their key positions."""

    kind = None          # "tfrecord", "fixed_length", "text_line" or "whole_file"
    compression = None

    def records(self, filename):
        raise NotImplementedError

    def advance(self, start, records):
        """The position after a chunk of ``records`` of one file starting at ``start``."""
        return start + tf.shape(records, out_type=tf.int64)[0]

    def positions(self, start, records):
        """The position of each record of a chunk of one file starting at ``start``."""
        return start + tf.range(tf.shape(records, out_type=tf.int64)[0], dtype=tf.int64)

    def keys(self, files, positions):
        """The TF1 reader's keys of records from ``files`` (one or each) at ``positions``."""
        return tf.strings.join([files, tf.strings.as_string(positions)], ":")

    def per_record(self, chunk):
        """A chunk from :func:`build_record_chunks` with each record's file and position,
        so that it can be unbatched (and shuffled)."""
        return {"records": chunk["records"],
                "files": tf.fill(tf.shape(chunk["records"]), chunk["file"]),
                "positions": self.positions(chunk["start"], chunk["records"])}

    def chunk_keys(self, chunk):
        """The keys of the records of a chunk, as made by :func:`build_record_chunks`
        or by :meth:`per_record`."""
        if "positions" in chunk:
            return self.keys(chunk["files"], chunk["positions"])
        return self.keys(chunk["file"], self.positions(chunk["start"], chunk["records"]))

    def key_parts(self, chunk, files):
        """``(file numbers, positions)``: each record's key as two numbers, the index of
        its file in ``files`` (all files the queue can hand out) and its position;
        :meth:`keys` of ``tf.gather(files, numbers)`` and positions makes the strings."""
        def number(names):
            return tf.argmax(tf.cast(tf.equal(names[..., None], files), tf.int32), axis=-1)

        if "positions" in chunk:
            return number(chunk["files"]), chunk["positions"]
        positions = self.positions(chunk["start"], chunk["records"])
        return tf.fill(tf.shape(positions), number(chunk["file"])), positions


class _TFRecords(Reading):
    kind = "tfrecord"

    def __init__(self, compression):
        self.compression = compression

    def records(self, filename):
        return tf.data.TFRecordDataset(filename, compression_type=self.compression)

    def advance(self, start, records):
        return start + tf.reduce_sum(_framed_sizes(records))

    def positions(self, start, records):
        return start + tf.math.cumsum(_framed_sizes(records), exclusive=True)


def _framed_sizes(records):
    """Bytes each TFRecord takes in its (uncompressed) file: length, 2 CRCs and data."""
    return tf.cast(tf.strings.length(records), tf.int64) + 16


class _FixedLengthRecords(Reading):
    kind = "fixed_length"

    def __init__(self, record_bytes, header_bytes, footer_bytes, compression):
        self.options = (record_bytes, header_bytes, footer_bytes)
        self.compression = compression

    def records(self, filename):
        record_bytes, header_bytes, footer_bytes = self.options
        return tf.data.FixedLengthRecordDataset(
            filename, record_bytes, header_bytes=header_bytes, footer_bytes=footer_bytes,
            compression_type=self.compression)


class _TextLines(Reading):
    kind = "text_line"

    def __init__(self, skip_header_lines):
        self.skip_header_lines = skip_header_lines

    def records(self, filename):
        return tf.data.TextLineDataset(filename).skip(self.skip_header_lines)

    def positions(self, start, records):
        return super().positions(start, records) + self.skip_header_lines + 1  # from line 1


class _WholeFiles(Reading):
    kind = "whole_file"

    def records(self, filename):
        return tf.data.Dataset.from_tensors(tf.io.read_file(filename))

    def keys(self, files, positions):
        return tf.broadcast_to(files, tf.shape(positions))


def _describe(reader):
    op = getattr(getattr(reader, "reader_ref", None), "op", None)
    return (op.type, op.node_def.attr) if op is not None else (type(reader).__name__, None)


def _settings(reader):
    """What makes two readers read alike: the op type and its attributes, in key order
    (a protobuf map iterates in no fixed order), without the per-instance names."""
    op_type, attrs = _describe(reader)
    return op_type, tuple(sorted(
        (key, value.SerializeToString(deterministic=True)) for key, value in (attrs or {}).items()
        if key not in ("container", "shared_name")))


def reading_of(api, readers):
    """The :class:`Reading` of a list of reader instances, which must all read alike."""
    kinds = {_settings(reader) for reader in readers}
    if len(kinds) > 1:
        raise PipelineConfigError(
            f"{api}: the readers differ ({len(kinds)} kinds or settings); give readers "
            "of one kind with the same arguments", argument="reader",
            expected="readers of one kind and settings")
    return _reading(api, *_describe(readers[0]))


def reading_of_op(api, op):
    """The :class:`Reading` of a reader op (e.g. ``TFRecordReaderV2``) of a graph."""
    return _reading(api, op.type, op.node_def.attr)


def _reading(api, op_type, attrs):
    if op_type == "TFRecordReaderV2":
        return _TFRecords(attrs["compression_type"].s.decode() or None)
    if op_type == "FixedLengthRecordReaderV2":
        if attrs["hop_bytes"].i:
            raise PipelineConfigError(
                f"{api}: FixedLengthRecordReader with hop_bytes={attrs['hop_bytes'].i} is not "
                "supported here (records would overlap); use the classic pipeline",
                argument="reader", expected="hop_bytes=0")
        return _FixedLengthRecords(attrs["record_bytes"].i, attrs["header_bytes"].i,
                                   attrs["footer_bytes"].i, attrs["encoding"].s.decode() or None)
    if op_type == "TextLineReaderV2":
        return _TextLines(attrs["skip_header_lines"].i)
    if op_type == "WholeFileReaderV2":
        return _WholeFiles()
    raise PipelineConfigError(
        f"{api}: cannot read with a {op_type}; expected a {_READER_NAMES}",
        argument="reader", expected=_READER_NAMES)


def _file_names(filename_queue):
    """The names dequeued from ``filename_queue`` (a queue or its handle), until it is
    closed and empty: the dequeue's OutOfRangeError ends a (v1) map dataset."""
    handle = getattr(filename_queue, "queue_ref", filename_queue)

    def dequeue(_):
        name = tf.raw_ops.QueueDequeueV2(handle=handle, component_types=[tf.string])[0]
        name.set_shape([])
        return name

    return v1.data.Dataset.from_tensors(0).repeat().map(dequeue)


def build_record_chunks(filename_queue, reading, chunk_size, parallel_files=1):
    """Dataset of chunks ``{"records", "file", "start"}`` of up to ``chunk_size`` records
    of one file, from the files of ``filename_queue``; ``parallel_files`` files are
    read at once, interleaved chunk by chunk in a fixed order."""

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
