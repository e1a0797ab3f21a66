"""tf.train.Example <-> Python and numpy without TensorFlow, and feature-spec inference.

Serialization is the protobuf package's, on message classes built from
``tensorflow/core/example/{example,feature}.proto`` without importing TensorFlow
(:mod:`tf1compat.records._example_proto`). ``make_example`` serializes
deterministically (map entries by key bytes), so its output equals
``tf.train.Example.SerializeToString(deterministic=True)``. Only turning an inferred
schema into TensorFlow objects imports TensorFlow. The file framing around these
records is :mod:`tf1compat.records.tfrecord`.
"""

import itertools
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, NamedTuple, Union, cast

import numpy as np
import numpy.typing as npt
from google.protobuf.message import DecodeError

from tf1compat._checks import check_positive_int
from tf1compat._typing import PathArg
from tf1compat.records._example_proto import Example
from tf1compat.records.tfrecord import Bytes, iter_records

# a value make_example takes: a scalar, a flat sequence of one kind, or an array
Scalar = Union[bool, int, float, str, bytes, np.generic]
FeatureValue = Union[Scalar, Sequence[Scalar], npt.NDArray[Any]]
# what the inference reads: a TFRecord file, serialized Examples, or several of either
PathsOrRecords = Union[PathArg, bytes, Iterable[Union[PathArg, Bytes]]]
# a kind's values as the encoder takes them: a list of bytes, or an int64/float32 array
_Encoded = Union[list[bytes], npt.NDArray[Any]]

KINDS = ("bytes", "float", "int64")  # tf.train.Feature's bytes_list, float_list, int64_list
_LIST_OF_KIND = {"bytes": "bytes_list", "float": "float_list", "int64": "int64_list"}
_KIND_OF_LIST = {field: kind for kind, field in _LIST_OF_KIND.items()}
_DTYPE_OF_KIND = {"bytes": "string", "float": "float32", "int64": "int64"}
_KIND_OF_DTYPE_CHAR = {"b": "int64", "i": "int64", "u": "int64", "f": "float",
                       "S": "bytes", "U": "bytes"}
_INT64_MAX = (1 << 63) - 1
_EXPECTED = ("expected bool, int, float, str or bytes, a flat list or tuple of one of "
             "these kinds, or a numpy array")


# ------------------------------------------------------------------ Python -> bytes

def _scalar_kind(value: object) -> str | None:
    """The Feature kind a scalar maps to, or None if it is not a valid scalar."""
    if isinstance(value, (bool, int, np.bool_, np.integer)):
        return "int64"
    if isinstance(value, (float, np.floating)):
        return "float"
    if isinstance(value, (str, bytes, bytearray, memoryview)):  # np.str_ / np.bytes_ too
        return "bytes"
    return None


def _describe(value: object) -> str:
    """'None', 'an int', 'a dict', ... for error messages."""
    if value is None:
        return "None"
    name = type(value).__name__
    return f"{'an' if name[0] in 'aeiou' else 'a'} {name}"


def _utf8(text: str, key: str, index: int | None = None) -> bytes:
    """``text`` (feature ``key``'s element ``index``, or the key itself) as UTF-8."""
    try:
        return text.encode()
    except UnicodeEncodeError as e:
        where = "feature key" if index is None else f"feature {key!r}: element {index}"
        raise ValueError(
            f"{where}: {text!r} is not valid Unicode ({e.reason} at position {e.start}; "
            "a file name decoded with os.fsdecode?); pass it as bytes, e.g. "
            "os.fsencode(name)") from e


def _converted(key: str, kind: str, values: Sequence[Any]) -> _Encoded:
    """``values`` (all of ``kind``) as the encoder wants them: int64/float32 arrays or bytes."""
    if kind == "bytes":
        return [_utf8(v, key, i) if isinstance(v, str) else bytes(v)
                for i, v in enumerate(values)]
    if kind == "float":
        return np.asarray(values, np.float32)
    try:
        return np.asarray([int(v) for v in values], np.int64)
    except OverflowError as e:
        raise ValueError(f"feature {key!r}: integer outside the int64 range") from e


def _list_values(key: str, values: Sequence[Any]) -> tuple[str, _Encoded]:
    if not values:
        raise TypeError(f"feature {key!r}: an empty list has no element kind; pass a typed "
                        "numpy array instead: np.array([], np.int64), np.array([], np.float32) "
                        "or np.array([], bytes)")
    kinds = [_scalar_kind(v) for v in values]
    if None in kinds:
        i = kinds.index(None)
        raise TypeError(f"feature {key!r}: element {i} is {_describe(values[i])}; elements must "
                        "be bool, int, float, str or bytes (nested lists: flatten them first)")
    odd = next((i for i, kind in enumerate(kinds) if kind != kinds[0]), None)
    if odd is not None:
        raise TypeError(f"feature {key!r}: mixes {kinds[0]} and {kinds[odd]} values (element 0 is "
                        f"{_describe(values[0])}, element {odd} is {_describe(values[odd])}); "
                        "use one kind")
    kind = cast(str, kinds[0])     # None was refused above
    return kind, _converted(key, kind, values)


def _array_values(key: str, array: npt.NDArray[Any]) -> tuple[str, _Encoded]:
    flat = array.ravel()
    if array.dtype.kind == "O":
        return _list_values(key, flat.tolist())
    kind = _KIND_OF_DTYPE_CHAR.get(array.dtype.kind)
    if kind is None:
        raise TypeError(f"feature {key!r}: numpy dtype {array.dtype} is not supported; {_EXPECTED}")
    if array.dtype.kind == "u" and flat.size and int(flat.max()) > _INT64_MAX:
        raise ValueError(f"feature {key!r}: integer outside the int64 range")
    if kind == "int64":
        return kind, flat.astype(np.int64)
    if kind == "float":
        return kind, flat.astype(np.float32)
    return kind, _converted(key, kind, flat.tolist())


def _feature_values(key: str, value: object) -> tuple[str, _Encoded | list[int] | list[bytes]]:
    """(kind, values) of one mapping entry, by tf.train.Example's type rules: a list,
    or a numpy array of int64 or float32."""
    if type(value) is int and -_INT64_MAX - 1 <= value <= _INT64_MAX:  # the common scalars
        return "int64", [value]
    if type(value) is bytes:
        return "bytes", [value]
    if isinstance(value, np.ndarray):
        return _array_values(key, value)
    if isinstance(value, (list, tuple)):
        return _list_values(key, list(value))
    if _scalar_kind(value) is None:
        raise TypeError(f"feature {key!r}: got {_describe(value)}; {_EXPECTED}")
    return _list_values(key, [value])


def make_example(mapping: Mapping[str, FeatureValue]) -> bytes:
    """Serialize ``{key: value}`` as a tf.train.Example, with tf.train.Feature's rules.

    bool and int values become an int64_list, float a float_list (float32), str
    (UTF-8) and bytes a bytes_list. A value is a scalar, a flat list or tuple of one
    kind, or a numpy array of any shape (flattened, C order). Anything else (None,
    nested lists, mixed kinds, dicts, empty lists, ...) raises TypeError naming the key.
    """
    if not isinstance(mapping, Mapping):
        raise TypeError(f"make_example needs a mapping of feature name to values, "
                        f"got {_describe(mapping)}")
    example = Example()
    example.features.SetInParent()  # as tf.train.Example(features=...), also for {}
    features = example.features.feature
    for key in mapping:
        if not isinstance(key, str):
            raise TypeError(f"feature key {key!r} is {_describe(key)}; keys must be str")
        _utf8(key, key)
        kind, values = _feature_values(key, mapping[key])
        feature_list = getattr(features[key], _LIST_OF_KIND[kind])
        feature_list.SetInParent()  # an empty list still says its kind
        feature_list.value.extend(values.tolist() if isinstance(values, np.ndarray) else values)
    serialized: bytes = example.SerializeToString(deterministic=True)
    return serialized


# ------------------------------------------------------------------ bytes -> numpy

def _list_values_of(feature: Any) -> tuple[str | None, npt.NDArray[Any]]:
    """(kind, 1-D numpy array) of a Feature message; no kind set gives (None, empty float32)."""
    field = feature.WhichOneof("kind")
    if field is None:
        return None, np.empty(0, np.float32)
    kind = _KIND_OF_LIST[field]
    values = getattr(feature, field).value
    if kind == "bytes":
        array = np.empty(len(values), object)
        array[:] = values
        return kind, array
    return kind, np.array(values, np.float32 if kind == "float" else np.int64)


def _parse_example(serialized: object) -> dict[str, tuple[str | None, npt.NDArray[Any]]]:
    """{key: (kind, values)} of a serialized Example, keys sorted."""
    if not isinstance(serialized, (bytes, bytearray, memoryview)):
        raise TypeError("expected a serialized tf.train.Example (bytes), "
                        f"got {_describe(serialized)}")
    example = Example()
    try:
        example.ParseFromString(bytes(serialized))
    except DecodeError as e:
        raise ValueError(f"not a serialized tf.train.Example: {e}") from e
    features = example.features.feature
    return {key: _list_values_of(features[key]) for key in sorted(features)}


def example_to_dict(serialized: Bytes) -> dict[str, npt.NDArray[Any]]:
    """Parse a serialized tf.train.Example into ``{key: 1-D numpy array}``, keys sorted.

    int64_list gives int64, float_list float32 and bytes_list an object array of
    ``bytes`` (not a NUL-stripping ``S`` array). Raises ValueError on malformed input.
    """
    return {key: values for key, (_, values) in _parse_example(serialized).items()}


# ------------------------------------------------------------------ schema inference

class FeatureSpec(NamedTuple):
    """A TensorFlow feature spec described without TensorFlow.

    ``dtype`` is a TF dtype name ("int64", "float32", "string"); ``shape`` is a tuple
    for ``tf.io.FixedLenFeature(shape, dtype)`` and None for ``tf.io.VarLenFeature(dtype)``.
    """

    dtype: str
    shape: tuple[int, ...] | None

    def to_tf(self) -> Any:
        """The ``tf.io`` feature object (imports TensorFlow)."""
        from tf1compat._tf import tf
        dtype = tf.as_dtype(self.dtype)
        if self.shape is None:
            return tf.io.VarLenFeature(dtype)
        return tf.io.FixedLenFeature(list(self.shape), dtype)

    def to_code(self) -> str:
        """The Python source that builds this spec, e.g. ``tf.io.FixedLenFeature([], tf.int64)``."""
        if self.shape is None:
            return f"tf.io.VarLenFeature(tf.{self.dtype})"
        return f"tf.io.FixedLenFeature({list(self.shape)}, tf.{self.dtype})"


@dataclass
class FeatureStats:
    """What the sampled records hold under one key: the kinds seen (more than one is a
    conflict), how many records have it, its value-count range and a first value."""

    kinds: set[str]
    present: int
    min_length: int
    max_length: int
    sample: npt.NDArray[Any]

    @classmethod
    def of(cls, kind: str | None, values: npt.NDArray[Any]) -> "FeatureStats":
        """Statistics of a single occurrence."""
        return cls(set() if kind is None else {kind}, 1, len(values), len(values), values)

    def merge(self, other: "FeatureStats") -> None:
        self.kinds |= other.kinds
        self.present += other.present
        self.min_length = min(self.min_length, other.min_length)
        self.max_length = max(self.max_length, other.max_length)
        if not len(self.sample):
            self.sample = other.sample

    def spec(self, key: str, records: int) -> FeatureSpec:
        """FixedLenFeature when present in all ``records`` with one length, else VarLenFeature.

        A constant length of 1 gives shape ``[]`` (a scalar), as slim's datasets declare it.
        """
        if len(self.kinds) > 1:
            raise ValueError(f"feature {key!r} holds {' and '.join(sorted(self.kinds))} values in "
                             "different records; no single feature spec fits")
        dtype = _DTYPE_OF_KIND[next(iter(self.kinds), "float")]
        if self.present < records or self.min_length != self.max_length:
            return FeatureSpec(dtype, None)
        return FeatureSpec(dtype, () if self.max_length == 1 else (self.max_length,))


def _format_sample(values: npt.NDArray[Any], max_items: int = 3, max_bytes: int = 16) -> str:
    def item(v: object) -> str:
        if isinstance(v, bytes):
            return repr(v[:max_bytes]) + (f"... ({len(v)} bytes)" if len(v) > max_bytes else "")
        return f"{v:g}" if isinstance(v, float) else str(v)
    shown = ", ".join(item(v) for v in values[:max_items].tolist())
    more = f", ... ({len(values)} values)" if len(values) > max_items else ""
    return f"[{shown}{more}]"


def _format_table(rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
                     for row in rows)


@dataclass
class Schema:
    """Per-key statistics of sampled Example records, computed without TensorFlow.

    ``records`` is the number of records sampled, ``features`` maps key to
    :class:`FeatureStats`. Build one with :func:`infer_schema`.
    """

    records: int = 0
    features: dict[str, FeatureStats] = field(default_factory=dict)

    def add_example(self, serialized: Bytes) -> None:
        """Count one serialized Example in."""
        self.records += 1
        for key, (kind, values) in _parse_example(serialized).items():
            self._add_stats(key, FeatureStats.of(kind, values))

    def merge(self, other: "Schema") -> None:
        """Fold in another schema, e.g. another file's."""
        self.records += other.records
        for key, stats in other.features.items():
            self._add_stats(key, replace(stats, kinds=set(stats.kinds)))

    def _add_stats(self, key: str, stats: FeatureStats) -> None:
        if key in self.features:
            self.features[key].merge(stats)
        else:
            self.features[key] = stats

    def feature_specs(self) -> dict[str, FeatureSpec]:
        """``{key: FeatureSpec}``, keys sorted; ValueError for a key with conflicting kinds."""
        return {key: self.features[key].spec(key, self.records) for key in sorted(self.features)}

    def keys_to_features(self) -> dict[str, Any]:
        """``{key: tf.io.FixedLenFeature | tf.io.VarLenFeature}`` (imports TensorFlow)."""
        return {key: spec.to_tf() for key, spec in self.feature_specs().items()}

    def to_code(self, name: str = "keys_to_features") -> str:
        """Python source assigning the inferred specs to ``name``, ready to paste."""
        lines = [f"    {key!r}: {spec.to_code()}," for key, spec in self.feature_specs().items()]
        return "\n".join([f"{name} = {{", *lines, "}"])

    def to_table(self) -> str:
        """A text table: key, kind, value-count range (0 when a record lacks the key), sample."""
        rows = [("key", "kind", "length", "sample")]
        for key in sorted(self.features):
            stats = self.features[key]
            low = stats.min_length if stats.present == self.records else 0
            length = str(low) if low == stats.max_length else f"{low}-{stats.max_length}"
            kind = "|".join(sorted(stats.kinds)) or "-"
            rows.append((key, kind, length, _format_sample(stats.sample)))
        return _format_table(rows)


def _iter_sample(paths_or_records: PathsOrRecords, sample: int | None,
                 compression: str | None) -> Iterator[tuple[str, Bytes]]:
    """Yield (where, record): up to ``sample`` records of each path, and of the loose records."""
    if isinstance(paths_or_records, (str, os.PathLike, bytes)):
        paths_or_records = [paths_or_records]
    loose = 0
    for item in paths_or_records:
        if isinstance(item, (str, os.PathLike)):
            with iter_records(item, compression=compression) as records:
                for i, record in enumerate(itertools.islice(records, sample)):
                    yield f"{os.fspath(item)}: record {i}", record
        elif isinstance(item, (bytes, bytearray, memoryview)):
            if sample is not None and loose >= sample:
                return
            yield f"record {loose}", item
            loose += 1
        else:
            raise TypeError(f"expected TFRecord paths or serialized records, got {_describe(item)}")


def _names_a_file(record: Bytes) -> bool:
    try:
        return len(record) < 4096 and os.path.isfile(bytes(record))
    except (ValueError, OSError):  # a NUL byte, an unreadable name
        return False


def infer_schema(paths_or_records: PathsOrRecords, sample: int | None = 100,
                 compression: str | None = None) -> Schema:
    """Statistics of the first ``sample`` records of each TFRecord file (paths) or of
    an iterable of serialized Examples; ``sample=None`` reads everything. TF-free."""
    sample = check_positive_int("infer_schema", "sample", sample, allow_none=True)
    schema = Schema()
    for where, record in _iter_sample(paths_or_records, sample, compression):
        try:
            schema.add_example(record)
        except ValueError as e:
            hint = ("; it names a file: pass paths as str or pathlib.Path (bytes are "
                    "serialized records here)") if _names_a_file(record) else ""
            raise ValueError(f"{where}: {e}{hint}") from e
    return schema


def infer_features(paths_or_records: PathsOrRecords, sample: int | None = 100,
                   compression: str | None = None) -> dict[str, Any]:
    """``keys_to_features`` for ``tf.io.parse_single_example`` and slim's TFExampleDecoder.

    A key present with the same number of values in every sampled record gets
    ``tf.io.FixedLenFeature(shape, dtype)`` (shape ``[]`` for one value), any other
    key ``tf.io.VarLenFeature(dtype)``. See :func:`infer_schema` for the arguments
    and :meth:`Schema.to_code` for the same result as Python source.
    """
    return infer_schema(paths_or_records, sample, compression).keys_to_features()
