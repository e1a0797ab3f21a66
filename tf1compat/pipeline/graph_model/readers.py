"""One spec per TF1 reader op type: what it reads and how TensorFlow names its records.

A :class:`ReaderSpec`, made from a reader op, reader instances or a reader class,
gives a file's records as tf.data and in Python (which locates a damaged record),
with each record's key as the TF1 reader builds it: ``file:byte offset`` for
TFRecords, ``file:record number`` for fixed-length records, ``file:line number``
for text lines, the file name for whole files.
"""

import inspect
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, cast

# TensorFlow is imported by _tf first (its quiet start-up).
from tf1compat._tf import tf, v1  # isort: split

from tensorflow.core.framework import full_type_pb2

from tf1compat._typing import Dataset, Operation, Tensor
from tf1compat.errors import PipelineConfigError
from tf1compat.pipeline.graph_model import op_types
from tf1compat.records import tfrecord

__all__ = ["ReaderSpec", "reader_settings", "spec_of_reader_op", "spec_of_readers",
           "spec_of_reader_class"]

_READER_CLASSES = ("TFRecordReader", "FixedLengthRecordReader", "TextLineReader",
                   "WholeFileReader")
# tf.data's read buffer when none is given (readers.py's _DEFAULT_*_BUFFER_SIZE_BYTES).
_BUFFER_BYTES = 256 * 1024


class ReaderSpec:
    """How one kind of reader reads a file: its records and their key positions."""

    op_type: str          # the reader op type (op_types.READERS)
    dataset_name: str     # its tf.data counterpart, as plans name it
    compression: str | None = None    # "GZIP", "ZLIB" or None
    hop_bytes = 0
    record_bytes: int | None = None   # every record's size, when the reader fixes it
    settings: dict[str, Any] = {}     # the reader's attributes as plans show them

    def arguments(self) -> dict[str, Any]:
        """The settings that differ from the defaults."""
        return {key: value for key, value in self.settings.items() if value}

    def describe(self) -> str:
        shown = ", ".join(f"{key}={value!r}" for key, value in self.arguments().items())
        return f"{self.dataset_name}({shown})" if shown else self.dataset_name

    def records(self, filename: Tensor) -> Dataset:
        """The records of the file ``filename`` as tf.data."""
        raise NotImplementedError

    def keyed_chunks(self, filename: Tensor, size: int) -> Dataset:
        """``(keys, records)`` of the file ``filename`` in chunks of up to ``size``
        records, each record's key as the TF1 reader makes it."""
        def keyed(start: Tensor, records: Tensor) -> tuple[Tensor, tuple[Tensor, Tensor]]:
            keys = self.keys(filename, self.positions(start, records))
            return self.advance(start, records), (keys, records)
        return self.records(filename).batch(size).scan(tf.constant(0, tf.int64), keyed)

    def iter_records(self, path: str) -> Iterator[tuple[str, str, bytes]]:
        """``(description, reader key, record)`` of each record of the file at ``path``,
        read in Python (raises CorruptRecordError or OSError for a damaged file)."""
        raise NotImplementedError

    def advance(self, start: Tensor, records: Tensor) -> Tensor:
        """The position after a chunk of ``records`` of one file starting at ``start``."""
        return start + tf.shape(records, out_type=tf.int64)[0]

    def positions(self, start: Tensor, records: Tensor) -> Tensor:
        """The position of each record of a chunk of one file starting at ``start``."""
        return start + tf.range(tf.shape(records, out_type=tf.int64)[0], dtype=tf.int64)

    def keys(self, files: Tensor, positions: Tensor) -> Tensor:
        """The TF1 reader's keys of records from ``files`` (one or each) at ``positions``."""
        return tf.strings.join([files, tf.strings.as_string(positions)], ":")

    def per_record(self, chunk: Mapping[str, Tensor]) -> dict[str, Tensor]:
        """A chunk ``{"records", "file", "start"}`` with each record's file and position,
        so that it can be unbatched (and shuffled)."""
        return {"records": chunk["records"],
                "files": tf.fill(tf.shape(chunk["records"]), chunk["file"]),
                "positions": self.positions(chunk["start"], chunk["records"])}

    def chunk_keys(self, chunk: Mapping[str, Tensor]) -> Tensor:
        """The keys of the records of a chunk, or of a chunk made by :meth:`per_record`."""
        if "positions" in chunk:
            return self.keys(chunk["files"], chunk["positions"])
        return self.keys(chunk["file"], self.positions(chunk["start"], chunk["records"]))

    def key_parts(self, chunk: Mapping[str, Tensor], files: Tensor) -> tuple[Tensor, Tensor]:
        """``(file numbers, positions)``: each record's key as two numbers, the index of
        its file in ``files`` (all files the queue can hand out) and its position;
        :meth:`keys` of ``tf.gather(files, numbers)`` and positions makes the strings."""
        def number(names: Tensor) -> Tensor:
            return tf.argmax(tf.cast(tf.equal(names[..., None], files), tf.int32), axis=-1)

        if "positions" in chunk:
            return number(chunk["files"]), chunk["positions"]
        positions = self.positions(chunk["start"], chunk["records"])
        return tf.fill(tf.shape(positions), number(chunk["file"])), positions


class _TFRecords(ReaderSpec):
    op_type, dataset_name = op_types.TFRECORD_READER, "TFRecordDataset"

    def __init__(self, compression: str | None) -> None:
        self.compression, self.settings = compression, {"compression_type": compression}

    def records(self, filename: Tensor) -> Dataset:
        return _one_file(tf.raw_ops.TFRecordDataset(
            filenames=filename, compression_type=self.compression or "",
            buffer_size=_BUFFER_BYTES))

    def advance(self, start: Tensor, records: Tensor) -> Tensor:
        return start + tf.reduce_sum(_framed_sizes(records))

    def positions(self, start: Tensor, records: Tensor) -> Tensor:
        return start + tf.math.cumsum(_framed_sizes(records), exclusive=True)

    def iter_records(self, path: str) -> Iterator[tuple[str, str, bytes]]:
        offset = 0
        for index, data in enumerate(tfrecord.iter_records(path, compression=self.compression)):
            yield f"{path}: record {index} at byte {offset}", f"{path}:{offset}", data
            offset += tfrecord.framed_size(len(data))


def _full_type(type_id: int, *args: Any) -> Any:
    return full_type_pb2.FullTypeDef(type_id=type_id, args=args)


# The type of a reader op's output: a dataset of elements of one string tensor.
_STRINGS_DATASET = _full_type(full_type_pb2.TFT_PRODUCT, _full_type(
    full_type_pb2.TFT_DATASET, _full_type(full_type_pb2.TFT_PRODUCT, _full_type(
        full_type_pb2.TFT_TENSOR, _full_type(full_type_pb2.TFT_STRING)))))


def _one_file(variant: Tensor) -> Dataset:
    """The dataset of strings a reader dataset op (``variant``) gives: the records of
    one file in one op, where ``tf.data.TFRecordDataset(filename)`` & co. make a
    dataset of the names and a ``flat_map`` over it (one more step per record).
    In a graph the op gets its full type: TensorFlow's reader ops register one without
    the element's tuple, and its type inference warns ("Type inference failed") when
    a batch takes their records in a function."""
    if not tf.executing_eagerly():
        variant.op.experimental_set_type(_STRINGS_DATASET)
    return tf.data.experimental.from_variant(variant, tf.TensorSpec([], tf.string))


def _framed_sizes(records: Tensor) -> Tensor:
    """Bytes each TFRecord takes in its (uncompressed) file: length, 2 CRCs and data."""
    return tf.cast(tf.strings.length(records), tf.int64) + tfrecord.framed_size(0)


class _FixedLengthRecords(ReaderSpec):
    """Fixed-length records; with ``hop_bytes`` they overlap, as TF1 reads them
    (tf.data has no such reader: they are cut from the whole file)."""

    op_type, dataset_name = op_types.FIXED_LENGTH_READER, "FixedLengthRecordDataset"
    record_bytes: int

    def __init__(self, record_bytes: int, header_bytes: int, footer_bytes: int, hop_bytes: int,
                 compression: str | None) -> None:
        self.record_bytes, self.header_bytes, self.footer_bytes = (record_bytes, header_bytes,
                                                                   footer_bytes)
        self.hop_bytes, self.compression = hop_bytes, compression
        self.settings = {"record_bytes": record_bytes, "header_bytes": header_bytes,
                         "footer_bytes": footer_bytes, "hop_bytes": hop_bytes,
                         "encoding": compression}

    def records(self, filename: Tensor) -> Dataset:
        record_bytes, header_bytes, footer_bytes = (self.record_bytes, self.header_bytes,
                                                    self.footer_bytes)
        if not self.hop_bytes:
            return _one_file(tf.raw_ops.FixedLengthRecordDatasetV2(
                filenames=filename, header_bytes=header_bytes, record_bytes=record_bytes,
                footer_bytes=footer_bytes, buffer_size=_BUFFER_BYTES,
                compression_type=self.compression or ""))
        hop_bytes = self.hop_bytes
        contents = tf.io.read_file(filename)
        body = tf.strings.length(contents) - header_bytes - footer_bytes
        count = tf.maximum((body - record_bytes) // hop_bytes + 1, 0)
        return tf.data.Dataset.range(tf.cast(count, tf.int64)).map(
            lambda index: tf.strings.substr(
                contents, header_bytes + tf.cast(index, tf.int32) * hop_bytes, record_bytes))

    def iter_records(self, path: str) -> Iterator[tuple[str, str, bytes]]:
        if self.hop_bytes or self.compression:
            return
        record_bytes, header_bytes, footer_bytes = (self.record_bytes, self.header_bytes,
                                                    self.footer_bytes)
        with open(path, "rb") as f:
            body = f.read()[header_bytes:]
        body = body[:len(body) - footer_bytes]
        for index in range(len(body) // record_bytes):
            yield (f"{path}: record {index} at byte {header_bytes + index * record_bytes}",
                   f"{path}:{index}", body[index * record_bytes:(index + 1) * record_bytes])


class _TextLines(ReaderSpec):
    op_type, dataset_name = op_types.TEXT_LINE_READER, "TextLineDataset"

    def __init__(self, skip_header_lines: int) -> None:
        self.skip_header_lines = skip_header_lines
        self.settings = {"skip_header_lines": skip_header_lines}

    def records(self, filename: Tensor) -> Dataset:
        return _one_file(tf.raw_ops.TextLineDataset(
            filenames=filename, compression_type="", buffer_size=_BUFFER_BYTES)
        ).skip(self.skip_header_lines)

    def positions(self, start: Tensor, records: Tensor) -> Tensor:
        return super().positions(start, records) + self.skip_header_lines + 1  # from line 1

    def iter_records(self, path: str) -> Iterator[tuple[str, str, bytes]]:
        with open(path, "rb") as f:
            for number, line in enumerate(f, start=1):
                if number > self.skip_header_lines:
                    line = line.removesuffix(b"\n").removesuffix(b"\r")
                    yield f"{path}: line {number}", f"{path}:{number}", line


class _WholeFiles(ReaderSpec):
    op_type, dataset_name = op_types.WHOLE_FILE_READER, "read_file (whole files)"

    def records(self, filename: Tensor) -> Dataset:
        return tf.data.Dataset.from_tensors(tf.io.read_file(filename))

    def keys(self, files: Tensor, positions: Tensor) -> Tensor:
        return tf.broadcast_to(files, tf.shape(positions))

    def iter_records(self, path: str) -> Iterator[tuple[str, str, bytes]]:
        with open(path, "rb") as f:
            yield path, path, f.read()


def spec_of_reader_op(reader: Operation) -> ReaderSpec | None:
    """The :class:`ReaderSpec` of a reader op (``op_types.READERS``), else None."""
    if reader.type not in op_types.READERS:
        return None
    attrs = reader.node_def.attr
    if reader.type == op_types.TFRECORD_READER:
        return _TFRecords(attrs["compression_type"].s.decode() or None)
    if reader.type == op_types.FIXED_LENGTH_READER:
        return _FixedLengthRecords(attrs["record_bytes"].i, attrs["header_bytes"].i,
                                   attrs["footer_bytes"].i, attrs["hop_bytes"].i,
                                   attrs["encoding"].s.decode() or None)
    if reader.type == op_types.TEXT_LINE_READER:
        return _TextLines(attrs["skip_header_lines"].i)
    return _WholeFiles()


def reader_settings(reader: Operation) -> tuple[str, tuple[tuple[str, bytes], ...]]:
    """What makes two reader ops read alike: the op type and its attributes, in key
    order (a protobuf map iterates in no fixed order), without the instance's names."""
    return reader.type, tuple(sorted(
        (key, value.SerializeToString(deterministic=True))
        for key, value in reader.node_def.attr.items()
        if key not in op_types.READER_INSTANCE_ATTRIBUTES))


def _reader_op_of(reader: Any) -> Operation | None:
    return getattr(getattr(reader, "reader_ref", None), "op", None)


def spec_of_readers(api: str, readers: Sequence[Any]) -> ReaderSpec:
    """The :class:`ReaderSpec` of a list of reader instances, which must all read
    alike, without overlapping records (the fast paths)."""
    ops = [_reader_op_of(reader) for reader in readers]
    for op, reader in zip(ops, readers, strict=True):
        if op is None or op.type not in op_types.READERS:
            names = ", ".join(_READER_CLASSES[:-1]) + " or " + _READER_CLASSES[-1]
            raise PipelineConfigError(
                f"{api}: cannot read with a {type(reader).__name__ if op is None else op.type}"
                f"; expected a {names}", argument="reader", expected=names)
    kinds = {reader_settings(op) for op in ops}
    if len(kinds) > 1:
        raise PipelineConfigError(
            f"{api}: the readers differ ({len(kinds)} kinds or settings); give readers "
            "of one kind with the same arguments", argument="reader",
            expected="readers of one kind and settings")
    spec = cast(ReaderSpec, spec_of_reader_op(ops[0]))     # a reader op: checked above
    if spec.hop_bytes:
        raise PipelineConfigError(
            f"{api}: FixedLengthRecordReader with hop_bytes={spec.hop_bytes} is not "
            "supported here (records would overlap); use the classic pipeline",
            argument="reader", expected="hop_bytes=0")
    return spec


def spec_of_reader_class(api: str, reader: Any,
                         reader_kwargs: Mapping[str, Any] | None) -> ReaderSpec:
    """The :class:`ReaderSpec` of what ``reader(**reader_kwargs)`` (a TF1 reader class
    or a subclass of one) reads: the reader is built in a scratch graph and read."""
    if not (isinstance(reader, type) and issubclass(reader, v1.ReaderBase)):
        name = getattr(reader, "__name__", repr(reader))
        raise PipelineConfigError(
            f"{api}: reader {name} has no tf.data equivalent; supported readers (or their "
            f"subclasses): {sorted(_READER_CLASSES)}", argument="reader",
            expected=sorted(_READER_CLASSES))
    kwargs = dict(reader_kwargs or {})
    try:
        with tf.Graph().as_default():
            spec = cast(ReaderSpec, spec_of_reader_op(_reader_op_of(reader(**kwargs))))
    except (TypeError, ValueError) as e:
        init = reader.__init__  # type: ignore[misc]  # the class's own, self first
        valid = [name for name in list(inspect.signature(init).parameters)[1:]
                 if name != "name"]
        raise PipelineConfigError(
            f"{api}: reader_kwargs {kwargs} do not fit {reader.__name__} ({e}); valid "
            f"arguments: {valid}", argument="reader_kwargs", expected=valid) from e
    if spec.hop_bytes:
        raise PipelineConfigError(
            f"{api}: FixedLengthRecordReader hop_bytes={spec.hop_bytes} (overlapping "
            "records) has no tf.data equivalent; expected hop_bytes 0 or None",
            argument="reader_kwargs", expected="hop_bytes=None")
    return spec
