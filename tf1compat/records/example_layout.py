"""Where the values of a serialized ``tf.train.Example`` sit: its layout as a template.

Records written by one program from fixed-size data (CIFAR-like: an image of a fixed
size, a small label) are byte-identical outside their values: the same keys in the
same order, the same tags and lengths. :func:`example_layout` walks one such record
(the wire format is described in :mod:`tf1compat.records.example`) and returns the
byte ranges of the wanted features' values. Any record that equals the template
outside those ranges, has the same length and whose varints end where the template's
do, has the same protobuf structure, so its values are exactly the bytes in those
ranges; :mod:`tf1compat.pipeline.example_parsing` cuts them out instead of parsing.
"""

from typing import NamedTuple

from tf1compat.records.example import _KIND_OF_FIELD, _read_varint

__all__ = ["Payload", "ExampleLayout", "example_layout"]

_VARINT, _LEN = 0, 2
_MAX_VARINT_SIZE = 9  # 10-byte varints are negative int64s; their last byte is special


class Payload(NamedTuple):
    """The bytes of one feature's values: one bytes value, all floats, or all int64s."""
    key: str
    kind: str                  # "bytes", "float" or "int64"
    offset: int
    size: int
    varint_sizes: tuple = ()   # int64: the size of each packed varint, in order


class ExampleLayout(NamedTuple):
    """A template record and the payloads of the wanted features, by offset."""
    record: bytes
    payloads: tuple

    def fixed_segments(self):
        """``(start, end)`` of every non-empty byte range outside the payloads."""
        segments, start = [], 0
        for payload in self.payloads:
            if payload.offset > start:
                segments.append((start, payload.offset))
            start = payload.offset + payload.size
        if start < len(self.record):
            segments.append((start, len(self.record)))
        return segments


def _fields(data, start, end):
    """Yield ``(number, wire, value_start, value_end)`` of the fields in ``data[start:end]``;
    only varint and length-delimited fields, which are all an Example holds."""
    pos = start
    while pos < end:
        tag, pos = _read_varint(data, pos)
        number, wire = tag >> 3, tag & 7
        if wire == _VARINT:
            _, value_end = _read_varint(data, pos)
        elif wire == _LEN:
            size, pos = _read_varint(data, pos)
            value_end = pos + size
        else:
            raise ValueError(f"field {number} has wire type {wire}, which Example never uses")
        if value_end > end:
            raise ValueError(f"field {number} runs past the end of its message")
        yield number, wire, pos, value_end
        pos = value_end


def _only_field(data, start, end, what):
    """``(number, start, end)`` of the single length-delimited field of a message."""
    fields = list(_fields(data, start, end))
    if len(fields) != 1 or fields[0][1] != _LEN:
        raise ValueError(f"{what} is not one length-delimited field")
    number, _, value_start, value_end = fields[0]
    return number, value_start, value_end


def _entries(data, start, end):
    """``{key: (feature_start, feature_end)}`` of the map entries of a Features message."""
    entries = {}
    for number, wire, entry_start, entry_end in _fields(data, start, end):
        if (number, wire) != (1, _LEN):
            raise ValueError(f"Features has a field {number}, not a map entry")
        fields = list(_fields(data, entry_start, entry_end))
        parts = {n: (s, e) for n, w, s, e in fields if w == _LEN}
        if len(fields) != 2 or sorted(parts) != [1, 2]:
            raise ValueError("a map entry is not one key and one value")
        key = bytes(data[slice(*parts[1])]).decode()
        if key in entries:
            raise ValueError(f"key {key!r} appears twice")
        entries[key] = parts[2]
    return entries


def _payloads(data, key, kind, start, end):
    """The payloads of one list (BytesList, FloatList or Int64List) in ``data[start:end]``."""
    fields = list(_fields(data, start, end))
    if any((number, wire) != (1, _LEN) for number, wire, _, _ in fields):
        raise ValueError(f"feature {key!r}: values are not packed")
    if kind == "bytes":
        return [Payload(key, kind, s, e - s) for _, _, s, e in fields]
    if len(fields) != 1:
        raise ValueError(f"feature {key!r}: {len(fields)} packed runs, expected 1")
    _, _, value_start, value_end = fields[0]
    if kind == "float":
        if (value_end - value_start) % 4:
            raise ValueError(f"feature {key!r}: packed floats are not a multiple of 4 bytes")
        return [Payload(key, kind, value_start, value_end - value_start)]
    sizes, pos = [], value_start
    while pos < value_end:
        _, after = _read_varint(data, pos)
        sizes.append(after - pos)
        pos = after
    if pos != value_end or max(sizes) > _MAX_VARINT_SIZE:
        raise ValueError(f"feature {key!r}: a varint runs past its list or is negative")
    return [Payload(key, kind, value_start, value_end - value_start, tuple(sizes))]


def _count(payloads):
    kind = payloads[0].kind
    if kind == "bytes":
        return len(payloads)
    return payloads[0].size // 4 if kind == "float" else len(payloads[0].varint_sizes)


def example_layout(serialized, wanted):
    """The layout of ``serialized`` (bytes of one Example) as a template for ``wanted``.

    ``wanted`` maps each feature key to ``(kind, count)``: the kind of list
    (``"bytes"``, ``"float"``, ``"int64"``) and its number of values. Raises
    ValueError saying why the record cannot serve as a template: a wanted key
    missing, of another kind or count, an empty list, a negative int64, an
    unpacked list, a repeated key or field, or anything an Example does not hold.
    """
    data = memoryview(serialized)
    try:
        number, start, end = _only_field(data, 0, len(data), "the Example")
        if number != 1:
            raise ValueError(f"the Example's field is {number}, not features")
        entries = _entries(data, start, end)
        payloads = []
        for key, (kind, count) in sorted(wanted.items()):
            if key not in entries:
                raise ValueError(f"feature {key!r} is missing")
            field, list_start, list_end = _only_field(data, *entries[key], f"feature {key!r}")
            found = _KIND_OF_FIELD.get(field)
            if found != kind:
                raise ValueError(f"feature {key!r} is a {found} list, expected {kind}")
            mine = _payloads(data, key, kind, list_start, list_end)
            if not mine or _count(mine) != count:
                raise ValueError(f"feature {key!r} has {_count(mine) if mine else 0} values, "
                                 f"expected {count}")
            payloads.extend(mine)
    except UnicodeDecodeError as e:
        raise ValueError(f"a key is not UTF-8: {e}") from e
    return ExampleLayout(bytes(serialized), tuple(sorted(payloads, key=lambda p: p.offset)))
