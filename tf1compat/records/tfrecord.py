"""TFRecord files in pure Python: CRC-checked reading, atomic writing, verifying.

A TFRecord file is a sequence of records, each framed as (little-endian)::

    uint64 length | uint32 masked_crc32c(length) | data | uint32 masked_crc32c(data)

optionally with the whole file compressed as one GZIP or ZLIB stream. Our output is
byte-identical to ``tf.io.TFRecordWriter``'s, compressed or not. This module never
imports TensorFlow. The payload of each record is usually a serialized
``tf.train.Example``; see :mod:`tf1compat.records.example`.

Byte offsets in errors count bytes of the uncompressed record stream, which for
plain files are file offsets.
"""

import contextlib
import errno
import functools
import io
import itertools
import os
import struct
import sys
import uuid
import weakref
import zlib
from collections.abc import Callable, Generator, Iterable, Iterator
from dataclasses import dataclass
from types import TracebackType
from typing import IO, Any

import google_crc32c
import numpy as np
import numpy.typing as npt

from tf1compat._checks import check_choice, check_path
from tf1compat._typing import PathArg
from tf1compat.errors import CorruptRecordError, NotATFRecordFileError, display_path
from tf1compat.records import _fs
from tf1compat.records._files import lock_while_open, name_path, remove_unless_locked
from tf1compat.records._progress import progress_bar
from tf1compat.records.committed import check_committed

COMPRESSION_TYPES = ("", "GZIP", "ZLIB")
AUTO = "AUTO"  # reading only: detect per file from its first bytes
ON_ERROR_CHOICES = ("raise", "skip")

_WBITS = {"GZIP": zlib.MAX_WBITS | 16, "ZLIB": zlib.MAX_WBITS}
_DETECT_SIZE = 1024  # bytes of a file's start that say how it is compressed ("auto")
_GZIP_MAGIC = b"\x1f\x8b\x08"    # and deflate
_ZLIB_MEM_LEVEL = 9  # TensorFlow's ZlibCompressionOptions; needed for identical bytes
_MASK_DELTA = 0xA282EAD8
_LENGTH = struct.Struct("<Q")
_CRC = struct.Struct("<I")
_HEADER_SIZE = _LENGTH.size + _CRC.size
HEADER_SIZE = _HEADER_SIZE  # bytes before a record's data: its length and the length's CRC
_CHUNK = 1 << 20
# what a record or a CRC's input may be
Bytes = bytes | bytearray | memoryview


def framed_size(length: int) -> int:
    """Bytes a record of ``length`` data bytes takes in an uncompressed TFRecord file."""
    return _HEADER_SIZE + length + _CRC.size


def crc32c(data: Bytes) -> int:
    """CRC-32C (Castagnoli) of ``data``, computed by the C-accelerated google-crc32c."""
    crc: int = google_crc32c.value(bytes(data))
    return crc


def masked_crc32c(data: Bytes) -> int:
    """The masked CRC-32C stored in TFRecord framing: rotate right by 15, add a constant."""
    crc = crc32c(data)
    return (((crc >> 15) | (crc << 17)) + _MASK_DELTA) & 0xFFFFFFFF


def _compression_type(compression: str | None, reading: bool = False) -> str:
    """Normalize a compression argument (None, "", "GZIP", "ZLIB", and for reading
    "auto"; any case) to its name."""
    name = "" if compression is None else compression
    if isinstance(name, str):
        name = name.upper()
    valid = COMPRESSION_TYPES + ((AUTO,) if reading else ())
    if name not in valid:
        raise ValueError(f"unknown compression {compression!r}; valid choices: None, "
                         f"{', '.join(repr(c.lower() if c == AUTO else c) for c in valid)}")
    return name


def _header_is_valid(header: bytes) -> bool:
    return (len(header) == _HEADER_SIZE
            and masked_crc32c(header[:_LENGTH.size]) == _CRC.unpack_from(header, _LENGTH.size)[0])


def detect_compression(path: PathArg) -> str | None:
    """Guess how a TFRecord file is compressed from its first bytes: None, "GZIP" or "ZLIB".

    A plain file starts with a header whose length CRC checks, so it wins over the
    gzip/zlib magic numbers; a file matching nothing is reported as None, and reading
    it then reports the damage. (Reading with ``compression="auto"`` detects it
    without opening the file twice, which also works on a FIFO.)
    """
    with _fs.open_file(path, "rb") as f:
        return _compression_of_head(_read_head(f))


def _starts_like_a_stream(head: bytes) -> bool:
    """Whether ``head`` starts like a gzip stream or a zlib one (deflate, its header's
    check bits a multiple of 31)."""
    return head.startswith(_GZIP_MAGIC) or (
        len(head) >= 2 and head[0] & 0x0F == 8 and (head[0] << 8 | head[1]) % 31 == 0)


def _read_head(file: IO[bytes]) -> bytes:
    """The first bytes of ``file`` that say how it is compressed: a record header, and
    when that is not valid and starts like a stream, up to ``_DETECT_SIZE`` (a FIFO's
    writer is not waited for beyond what is needed)."""
    head = b""
    for want in (_HEADER_SIZE, _DETECT_SIZE):
        while len(head) < want and (more := file.read(want - len(head))):
            head += more
        if _header_is_valid(head[:_HEADER_SIZE]) or not _starts_like_a_stream(head):
            break
    return head


def _compression_of_head(head: bytes) -> str | None:
    """None, "GZIP" or "ZLIB" for a file's first bytes (up to ``_DETECT_SIZE``): a
    stream's magic numbers count only when those bytes inflate as its start, to a
    record header when they give one (a plain file whose damaged first length happens
    to begin like a zlib header is still plain)."""
    if not head or _header_is_valid(head[:_HEADER_SIZE]) or not _starts_like_a_stream(head):
        return None
    kind = "GZIP" if head.startswith(_GZIP_MAGIC) else "ZLIB"
    try:
        start = zlib.decompressobj(_WBITS[kind]).decompress(head)
    except zlib.error:
        return None
    if len(start) >= _HEADER_SIZE and not _header_is_valid(start[:_HEADER_SIZE]):
        return None     # it inflates, to something that is no TFRecord file
    return kind


# ---------------------------------------------------------------------------- reading

class _FrameError(Exception):
    """A framing problem of the current record; ``recovery`` says how skip mode goes on:
    "next" (framing intact), "resync" (length untrusted) or None (nothing more to read)."""

    def __init__(self, reason: str, recovery: str | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.recovery = recovery


class _Inflater(io.RawIOBase):
    """A readable stream of the decompressed bytes of a GZIP or ZLIB file, read in chunks.

    Concatenated streams (``cat a.gz b.gz``) read as one; damage raises _FrameError.
    """

    def __init__(self, raw: IO[bytes], compression: str) -> None:
        super().__init__()
        self._raw = raw
        self._compression = compression
        self._inflate = zlib.decompressobj(_WBITS[compression])

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        data = self._next_output(len(buffer))
        buffer[:len(data)] = data
        return len(data)

    def _next_output(self, size: int) -> bytes:
        while True:
            if self._inflate.unconsumed_tail:
                data = self._inflate.unconsumed_tail
            elif self._inflate.eof:
                data = self._inflate.unused_data or self._raw.read(_CHUNK)
                if not data:
                    return b""
                self._inflate = zlib.decompressobj(_WBITS[self._compression])
            else:
                data = self._raw.read(_CHUNK)
                if not data:
                    raise _FrameError(f"{self._compression} stream ends before its end marker")
            try:
                output = self._inflate.decompress(data, size)
            except zlib.error as e:
                raise _FrameError(f"corrupt {self._compression} stream ({e})") from e
            if output:
                return output


class _Cursor:
    """Reads a stream front to back, counting the bytes consumed and allowing pushback.

    Reads longer than a chunk go chunk by chunk, so a damaged huge length never
    allocates more memory than the stream still holds. The file's size is never
    trusted: FIFOs and /proc files report 0, and a file may still be growing.
    """

    def __init__(self, stream: IO[bytes]) -> None:
        self._stream = stream
        self._pushback = b""
        self._pushback_pos = 0
        self.offset = 0

    def read(self, n: int) -> bytes:
        """Up to ``n`` bytes; fewer only at the end of the stream."""
        data = self._read_pushback(n) if self._pushback else self._read_stream(n)
        self.offset += len(data)
        return data

    def unread(self, data: Bytes) -> None:
        self._pushback = bytes(data) + self._pushback[self._pushback_pos:]
        self._pushback_pos = 0
        self.offset -= len(data)

    def _read_pushback(self, n: int) -> bytes:
        head = self._pushback[self._pushback_pos:self._pushback_pos + n]
        self._pushback_pos += len(head)
        if self._pushback_pos == len(self._pushback):
            self._pushback, self._pushback_pos = b"", 0
        return head + self._read_stream(n - len(head)) if len(head) < n else head

    def _read_stream(self, n: int) -> bytes:
        if n <= _CHUNK:
            return self._stream.read(n)
        parts = []
        while n > 0:
            part = self._stream.read(min(n, _CHUNK))
            if not part:
                break
            parts.append(part)
            n -= len(part)
        return b"".join(parts)


def _mismatch(region: str, stored: int, computed: int) -> str:
    return f"{region} CRC mismatch (stored 0x{stored:08x}, computed 0x{computed:08x})"


def _read_frame(cursor: _Cursor, header: bytes, verify: bool) -> bytes:
    """The data of the record whose first bytes are ``header``; raises _FrameError."""
    if len(header) < _HEADER_SIZE:
        raise _FrameError(f"truncated length ({len(header)} of {_HEADER_SIZE} header bytes)")
    (length,), (stored,) = _LENGTH.unpack_from(header), _CRC.unpack_from(header, _LENGTH.size)
    if verify:
        computed = masked_crc32c(header[:_LENGTH.size])
        if stored != computed:
            raise _FrameError(_mismatch("length", stored, computed), "resync")
    data = cursor.read(length)
    footer = cursor.read(_CRC.size)
    if len(data) + len(footer) < length + _CRC.size:
        raise _FrameError(f"truncated data ({len(data) + len(footer)} of {length + _CRC.size} "
                          "bytes of data and data CRC)")
    if verify:
        (stored,), computed = _CRC.unpack(footer), masked_crc32c(data)
        if stored != computed:
            raise _FrameError(_mismatch("data", stored, computed), "next")
    return data


@functools.cache
def _header_crc_tables() -> tuple[int, npt.NDArray[np.uint32], npt.NDArray[np.uint8]]:
    """What finds every valid header of a buffer at once: the CRC-32C of 8 bytes is
    affine in them, ``crc(b0..b7) = crc(0^8) ^ T[0][b0] ^ ... ^ T[7][b7]``; also the
    masked CRC of a zero length, as bytes."""
    zero = crc32c(bytes(8))
    tables = np.empty((_LENGTH.size, 256), np.uint32)
    for position in range(_LENGTH.size):
        for value in range(256):
            tables[position, value] = crc32c(bytes(position) + bytes([value])
                                             + bytes(_LENGTH.size - 1 - position)) ^ zero
    zero_length_crc = np.frombuffer(_CRC.pack(masked_crc32c(bytes(8))), np.uint8)
    return zero, tables, zero_length_crc


def _first_header(window: bytes) -> int | None:
    """The first position in ``window`` where a header's length CRC checks, or None.

    Vectorized (a Python CRC at every byte took 0.5 s per MiB). Only lengths below
    2^48 bytes are considered, which makes random data nearly free; zero-filled
    damage (a zero length) is checked against one constant.
    """
    data = np.frombuffer(window, np.uint8)
    n = len(data) - _HEADER_SIZE + 1
    if n <= 0:
        return None
    zero, tables, zero_length_crc = _header_crc_tables()
    plausible = (data[6:6 + n] == 0) & (data[7:7 + n] == 0)
    zero_length = plausible.copy()
    for k in range(6):
        zero_length &= data[k:k + n] == 0
    found = zero_length.copy()
    for k in range(_CRC.size):
        found &= data[8 + k:8 + k + n] == zero_length_crc[k]
    starts = np.flatnonzero(plausible & ~zero_length)
    crc = np.full(len(starts), zero, np.uint32)
    for k in range(_LENGTH.size):
        crc ^= tables[k][data[starts + k]]
    masked = ((crc >> 15) | (crc << 17)) + np.uint32(_MASK_DELTA)  # uint32 wraps
    stored = np.zeros(len(starts), np.uint32)
    for k in range(_CRC.size):
        stored |= data[starts + 8 + k].astype(np.uint32) << (8 * k)
    found[starts[masked == stored]] = True
    first = np.argmax(found)
    return int(first) if found[first] else None


def _resync(cursor: _Cursor, window: bytes) -> None:
    """Move ``cursor`` to the next header whose length CRC checks (after ``window``,
    bytes already consumed), or to the end of the stream."""
    while True:
        start = _first_header(window)
        if start is not None:
            cursor.unread(window[start:])
            return
        more = cursor.read(_CHUNK)
        if not more:
            return
        window = window[-(_HEADER_SIZE - 1):] + more


class _FileBytes(io.RawIOBase):
    """A file's bytes read from the start, ``head`` (already read from it) first;
    ``count`` is how many have been read, ``on_read(n)`` (optional) hears of each read."""

    def __init__(self, file: Any, head: bytes = b"",
                 on_read: Callable[[int], object] | None = None) -> None:
        super().__init__()
        self._file = file
        self._head = head
        self._on_read = on_read
        self.count = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if self._head:
            n = min(len(buffer), len(self._head))
            buffer[:n], self._head = self._head[:n], self._head[n:]
        else:
            n = self._file.readinto(buffer)
        self.count += n
        if self._on_read is not None:
            self._on_read(n)
        return n


@contextlib.contextmanager
def _open_record_stream(path: str | bytes, compression: str | None,
                        on_read: Callable[[int], object] | None = None
                        ) -> Iterator[tuple[_Cursor, _FileBytes, str | None]]:
    """Yield ``(cursor, file_bytes, compression)``: a _Cursor over the uncompressed
    record stream of ``path``, the _FileBytes counting what was read of the file, and
    the compression (None, "GZIP" or "ZLIB"; AUTO is detected from the first bytes).

    The file is read once, front to back, so FIFOs and other streams work; a URL is
    read through fsspec."""
    with _fs.open_file(path, "rb", **({} if _fs.is_url(path) else {"buffering": 0})) as file:
        head = b""
        if compression == AUTO:
            head = _read_head(file)
            compression = _compression_of_head(head)
        file_bytes = _FileBytes(file, head, on_read)
        with io.BufferedReader(file_bytes, _CHUNK) as raw:
            if not compression:
                yield _Cursor(raw), file_bytes, None
            else:
                with io.BufferedReader(_Inflater(raw, compression), _CHUNK) as stream:
                    yield _Cursor(stream), file_bytes, compression


def _compression_hint(head: bytes) -> str:
    """For a file read as plain whose first header is bad: a hint when it looks
    compressed."""
    kind = _compression_of_head(head)
    if kind is None:
        return ""
    return f"; the file looks {kind}-compressed: pass compression={kind!r} (or 'auto')"


def _not_a_tfrecord_file(path: str | bytes, cursor: _Cursor, header: bytes,
                         error: _FrameError) -> NotATFRecordFileError | None:
    """The NotATFRecordFileError for a stream whose first header (``header``) is bad
    (``error``): shorter than a header, or with a length CRC mismatch and no valid
    header in the chunk after it (where a damaged first record's successor would be
    found); None when it looks like a damaged TFRecord file."""
    if len(header) < _HEADER_SIZE:
        return NotATFRecordFileError(path, f"{len(header)} bytes, shorter than a record "
                                           f"header ({_HEADER_SIZE} bytes)")
    if error.recovery != "resync":
        return None
    ahead = cursor.read(_CHUNK)
    cursor.unread(ahead)
    if _first_header(header[1:] + ahead) is not None:
        return None
    return NotATFRecordFileError(
        path, f"no record header at its start ({error.reason}) nor in the "
              f"{_CHUNK >> 20} MiB after it{_compression_hint(header)}")


class RecordIterator:
    """Iterator over the records of one TFRecord file; ``iter_records`` makes it.

    Yields each record's data as an independent ``bytes`` object. Attributes:
    ``path``; ``count``, records yielded so far; ``skipped``, one
    :class:`~tf1compat.errors.CorruptRecordError` per bad record passed over in
    ``on_error="skip"`` mode, in file order; ``record_offset``, where the last record
    yielded starts (in the uncompressed stream); ``bytes_read``, bytes read from the
    file so far; ``compression``, None, "GZIP" or "ZLIB" once the file is open
    (detected for "auto"). Closing it (or leaving its ``with`` block) closes the file.
    ``on_read(n)``, when given, is called with the size of each read of the file (to
    update a progress bar, also while a damaged stretch is searched).
    """

    def __init__(self, path: PathArg | bytes, verify: bool = True,
                 compression: str | None = None, on_error: str = "raise",
                 on_read: Callable[[int], object] | None = None) -> None:
        check_choice("iter_records", "on_error", on_error, ON_ERROR_CHOICES)
        self.path = check_path("iter_records", "path", path)
        self.count = 0
        self.skipped: list[CorruptRecordError] = []
        self.record_offset: int | None = None
        self._file_bytes: _FileBytes | None = None
        self.compression = _compression_type(compression, True) or None
        self._records = self._iter_records(verify, self.compression, on_error, on_read)

    @property
    def bytes_read(self) -> int:
        return self._file_bytes.count if self._file_bytes is not None else 0

    def __iter__(self) -> "RecordIterator":
        return self

    def __next__(self) -> bytes:
        record = next(self._records)
        self.count += 1
        return record

    def close(self) -> None:
        self._records.close()

    def __enter__(self) -> "RecordIterator":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _iter_records(self, verify: bool, compression: str | None, on_error: str,
                      on_read: Callable[[int], object] | None) -> Generator[bytes, None, None]:
        with _open_record_stream(self.path, compression, on_read) as opened:
            cursor, self._file_bytes, self.compression = opened
            window = None  # bytes to search for the next valid header after a bad length
            for index in itertools.count():
                start, header = cursor.offset, None
                error: CorruptRecordError
                try:
                    if window is not None:
                        _resync(cursor, window)
                        start, window = cursor.offset, None
                    header = cursor.read(_HEADER_SIZE)
                    if not header:
                        return
                    data = _read_frame(cursor, header, verify)
                except _FrameError as e:
                    error = CorruptRecordError(self.path, index, start, e.reason)
                    if start == 0 and header is not None:  # not when decompressing failed
                        error = _not_a_tfrecord_file(self.path, cursor, header, e) or error
                    if on_error == "raise":
                        raise error from None
                    self.skipped.append(error)
                    if e.recovery is None or isinstance(error, NotATFRecordFileError):
                        return
                    if e.recovery == "resync" and header is not None:
                        window = header[1:]
                    continue
                self.record_offset = start
                yield data


def iter_records(path: PathArg | bytes, verify: bool = True, compression: str | None = None,
                 on_error: str = "raise") -> RecordIterator:
    """Iterate over the records of a TFRecord file, as ``tf.data.TFRecordDataset`` does.
    ``path`` is a local path or an fsspec URL (``s3://bucket/train.tfrecord``; the
    ``tf1compat[s3]`` extra), read through fsspec, which only a URL imports.

    ``verify`` checks both CRCs of every record. ``compression`` is None, "GZIP" or
    "ZLIB" (TensorFlow's ``compression_type``), or "auto" to detect it from the
    file's first bytes. The file is read once, front to back, to its end (also a
    FIFO or a /proc file). A damaged record raises
    :class:`~tf1compat.errors.CorruptRecordError`; with ``on_error="skip"`` it is
    recorded in the iterator's ``skipped`` list instead and reading goes on: after a
    data CRC mismatch at the next record, after a length CRC mismatch at the next
    header whose CRC checks (record indices after that count the records found);
    truncation ends the file. Returns a :class:`RecordIterator`.

    A file in a folder where a tf1compat conversion is under way or was cut short, or
    one its manifest does not list as it is, raises
    :class:`~tf1compat.errors.IncompleteOutputError` (see
    :func:`~tf1compat.records.committed.committed_files` for a set of files).
    """
    check_committed([check_path("iter_records", "path", path)])
    return RecordIterator(path, verify=verify, compression=compression, on_error=on_error)


def count_records(path: PathArg | bytes, compression: str | None = None,
                  verify: bool = True) -> int:
    """Number of records in a TFRecord file (reads it all; raises on damage)."""
    with iter_records(path, verify=verify, compression=compression) as records:
        for _ in records:
            pass
        return records.count


@dataclass(frozen=True)
class VerifyReport:
    """Result of :func:`verify`: ``records`` intact records, ``size_bytes`` on disk,
    ``errors`` one CorruptRecordError per bad record (empty when the file is sound)."""

    path: str | bytes
    records: int
    size_bytes: int
    errors: list[CorruptRecordError]

    @property
    def ok(self) -> bool:
        return not self.errors

    def __str__(self) -> str:
        status = "ok" if self.ok else "not a TFRecord file" if isinstance(
            self.errors[0], NotATFRecordFileError) else f"{len(self.errors):,} corrupt"
        return (f"{display_path(self.path)}: {self.records:,} records, "
                f"{self.size_bytes:,} bytes, {status}")


def verify(path: PathArg | bytes, compression: str | None = None) -> VerifyReport:
    """Check every CRC of a TFRecord file, continuing past damage; returns a VerifyReport.

    ``size_bytes`` is the file's size, or for a stream (FIFO, /proc file) the bytes
    read from it. A check that takes more than a second shows a progress bar on a
    terminal (never in a pipe or CI). A file of an unfinished conversion raises
    :class:`~tf1compat.errors.IncompleteOutputError`, as :func:`iter_records`."""
    path = check_path("verify", "path", path)
    check_committed([path])
    size = _fs.size(path)
    with progress_bar(total=size or None, desc=display_path(os.path.basename(path)), unit="B",
                      unit_scale=True, unit_divisor=1024, leave=False, delay=1.0,
                      file=sys.stderr) as progress, \
            RecordIterator(path, compression=compression, on_error="skip",
                           on_read=progress.update) as records:
        for _ in records:
            pass
    return VerifyReport(records.path, records.count, max(size, records.bytes_read),
                        records.skipped)


# ---------------------------------------------------------------------------- writing

class TFRecordWriter:
    """Writes records to ``path`` atomically, byte-identical to ``tf.io.TFRecordWriter``.

    Records go to a hidden temporary file in the same directory, renamed onto ``path``
    by :meth:`close`; an exception inside the ``with`` block, :meth:`abort`, or the
    writer being garbage collected (or the interpreter exiting) unclosed deletes it,
    so ``path`` only ever holds a complete file. The temporary file stays locked
    while its writer lives; one left by a killed process (SIGKILL, power loss) is
    unlocked, and the next writer of the same ``path`` removes it. A symbolic link
    at ``path`` is written through: its target gets the records (and the temporary
    file sits beside it). A directory, FIFO or device at ``path`` is refused up
    front. ``compression`` is None, "GZIP" or "ZLIB". ``count`` is the number of
    records written.
    """

    def __init__(self, path: PathArg | bytes, compression: str | None = None) -> None:
        compression = _compression_type(compression)
        self.path = check_path("TFRecordWriter", "path", path)
        self._final_path = os.fsdecode(self.path)  # str and bytes do not mix in os.replace
        if os.path.islink(self._final_path):       # written through, as TensorFlow does
            self._final_path = os.path.realpath(self._final_path)
        directory, name = os.path.split(os.path.abspath(self._final_path))
        _check_writable_target(self._final_path, directory)
        self._tmp_path = os.path.join(directory, f".{name}.{uuid.uuid4().hex[:12]}.tmp")
        self._file = open(self._tmp_path, "xb", buffering=_CHUNK)
        self._discard = weakref.finalize(self, _discard, self._file, self._tmp_path)
        lock_while_open(self._file)
        _remove_stale_temporaries(directory, name, self._tmp_path)
        self._compressor = (zlib.compressobj(zlib.Z_DEFAULT_COMPRESSION, zlib.DEFLATED,
                                             _WBITS[compression], _ZLIB_MEM_LEVEL)
                            if compression else None)
        self.count = 0

    def write(self, record: Bytes) -> None:
        """Append one record (bytes-like)."""
        if self._file.closed:
            raise ValueError(f"{display_path(self.path)}: writer is closed")
        _check_bytes(record, f"{display_path(self.path)}: record {self.count} is")
        record = bytes(record)
        length = _LENGTH.pack(len(record))
        crcs = _CRC.pack(masked_crc32c(length)), _CRC.pack(masked_crc32c(record))
        try:
            for part in (length, crcs[0], record, crcs[1]):
                self._file.write(self._compressor.compress(part) if self._compressor else part)
        except OSError as e:        # a full disk names no file
            name_path(e, self._final_path)
            raise
        self.count += 1

    def close(self) -> None:
        """Finish the file and move it to its final name."""
        if self._file.closed:
            return
        try:
            if self._compressor:
                self._file.write(self._compressor.flush())
            self._file.flush()
            os.fsync(self._file.fileno())
            os.replace(self._tmp_path, self._final_path)  # still locked: not stale
            self._discard.detach()
            self._file.close()
        except BaseException as e:
            if isinstance(e, OSError):
                name_path(e, self._final_path)
            self.abort()
            raise

    def abort(self) -> None:
        """Discard everything written; ``path`` is left untouched. The temporary file is
        removed even when closing it fails (a full disk refusing the buffered bytes)."""
        self._discard()

    def __enter__(self) -> "TFRecordWriter":
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc_value: BaseException | None,
                 traceback: TracebackType | None) -> None:
        if exc_type is None:
            self.close()
        else:
            self.abort()


def _discard(file: IO[bytes], tmp_path: str) -> None:
    """Close ``file`` and remove it; what is being discarded may fail to flush."""
    try:
        file.close()
    except OSError:
        pass  # flushing what is being discarded failed (EFBIG, ENOSPC): drop it
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.remove(tmp_path)


def _remove_stale_temporaries(directory: str, name: str, own: str) -> None:
    """Remove the temporary files of ``name`` whose writer died: no lock is held on them."""
    prefix = f".{name}."
    with os.scandir(directory) as entries:
        stale = [entry.path for entry in entries if entry.name.startswith(prefix)
                 and entry.name.endswith(".tmp") and len(entry.name) == len(prefix) + 16
                 and entry.path != own]
    for path in stale:
        try:
            remove_unless_locked(path)
        except OSError:  # locked by a live writer, or already gone
            continue


def _check_writable_target(path: str, directory: str) -> None:
    """Refuse, before anything is written, a target the final rename cannot replace
    or should not (a FIFO or device would be swapped for a regular file)."""
    if not os.path.isdir(directory):
        raise FileNotFoundError(errno.ENOENT, f"directory {display_path(directory)!s} does "
                                "not exist (TFRecordWriter creates files, not folders)", path)
    if os.path.isdir(path):
        raise IsADirectoryError(errno.EISDIR, "a directory, where TFRecordWriter would "
                                "write a file", path)
    if os.path.exists(path) and not os.path.isfile(path):
        raise ValueError(f"path: {display_path(path)} is not a regular file (a FIFO or a "
                         "device?); TFRecordWriter writes a file under a temporary name and "
                         "renames it onto path, which would replace the FIFO or device")


def write_records(path: PathArg | bytes, records: Iterable[Bytes],
                  compression: str | None = None) -> int:
    """Write an iterable of bytes records to ``path`` atomically; returns how many."""
    with TFRecordWriter(path, compression) as writer:
        for record in records:
            writer.write(record)
    return writer.count


def _check_bytes(record: object, what: str) -> None:
    """Refuse a record that is not bytes-like, ``what`` (file, which record) first."""
    if not isinstance(record, (bytes, bytearray, memoryview)):
        raise TypeError(f"{what} {type(record).__name__}; expected bytes (encode it first, "
                        "e.g. with tf1compat.records.example.make_example)")
