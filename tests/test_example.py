"""tf1compat.records.example: Example encoding/decoding without TensorFlow, schema inference.

Unmarked tests are pure Python; the ``tf`` ones check the bytes against
``tf.train.Example`` and the inferred specs against ``tf.io.parse_single_example``
and tf-slim's ``TFExampleDecoder``.
"""

import numpy as np
import pytest

from tf1compat import example, tfrecord


@pytest.fixture
def mapping(rng):
    """One value of every supported type, under keys whose order is tricky."""
    return {
        "int": 3, "bool": True, "float": 1.5, "str": "héllo", "bytes": b"\x00\x01\x00",
        "int_list": [1, -2, 2**63 - 1, -2**63], "float_tuple": (0.5, -2.0),
        "str_list": ["x", b"y"], "bool_list": [True, False, 1],
        "uint8_image": rng.integers(0, 256, (2, 3), dtype=np.uint8),
        "float64_array": rng.random(4), "str_array": np.array(["a", "bc"]),
        "bytes_array": np.array([b"p", b"qr"]), "object_array": np.array([b"u", b"vw"], object),
        "empty_int64": np.array([], np.int64), "np_int32": np.int32(7),
        "np_float16": np.float16(0.25),
        "np_bool": np.bool_(False), "zero_d": np.array(9.0), "": 0, "b": 1, "by": 2, "a/b": 3,
    }


def _expected(value):
    """The flat array tf.train.Example keeps for ``value``."""
    if isinstance(value, np.ndarray):
        items = value.ravel().tolist()
    else:
        items = list(value) if isinstance(value, (list, tuple)) else [value]
    if items and isinstance(items[0], (str, bytes)):
        return np.array([v.encode() if isinstance(v, str) else bytes(v) for v in items], object)
    if items and isinstance(items[0], (float, np.floating)):
        return np.array(items, np.float32)
    return np.array([int(v) for v in items], np.int64)


def test_round_trip_through_example_to_dict(mapping):
    parsed = example.example_to_dict(example.make_example(mapping))
    assert list(parsed) == sorted(mapping)
    for key, value in mapping.items():
        expected = _expected(value)
        assert parsed[key].dtype == expected.dtype, key
        np.testing.assert_array_equal(parsed[key], expected, err_msg=key)


def test_bytes_values_keep_trailing_nul(mapping):
    assert example.example_to_dict(example.make_example({"b": b"ab\x00"}))["b"][0] == b"ab\x00"


def test_empty_mapping_is_an_example_with_empty_features():
    assert example.make_example({}) == b"\x0a\x00"
    assert example.example_to_dict(b"\x0a\x00") == {}


@pytest.mark.parametrize("value, message", [
    (None, r"feature 'bad': got None; expected bool, int, float, str or bytes"),
    ({"a": 1}, r"feature 'bad': got a dict"),
    ({1, 2}, r"feature 'bad': got a set"),
    ([[1, 2], [3]], r"feature 'bad': element 0 is a list; .*nested lists: flatten them first"),
    ([1, None], r"feature 'bad': element 1 is None"),
    ([1, 2.5], r"feature 'bad': mixes int64 and float values "
               r"\(element 0 is an int, element 1 is a float\)"),
    (["a", 1], r"feature 'bad': mixes bytes and int64 values"),
    ([], r"feature 'bad': an empty list has no element kind; pass a typed numpy array"),
    (np.array([1 + 2j]), r"feature 'bad': numpy dtype complex128 is not supported"),
    (np.array([[1], None], object), r"feature 'bad': element 0 is a list"),
    (object(), r"feature 'bad': got an object"),
])
def test_unsupported_values_raise_type_error_naming_the_key(value, message):
    with pytest.raises(TypeError, match=message):
        example.make_example({"ok": 1, "bad": value})


def test_bad_keys_and_mappings_raise_type_error():
    with pytest.raises(TypeError, match=r"feature key 3 is an int; keys must be str"):
        example.make_example({3: 1})
    with pytest.raises(TypeError, match=r"make_example needs a mapping .*got a list"):
        example.make_example([("a", 1)])


@pytest.mark.parametrize("value", [2**63, [0, -2**63 - 1], np.array([2**64 - 1], np.uint64)])
def test_integers_outside_int64_raise_value_error(value):
    with pytest.raises(ValueError, match=r"feature 'big': integer outside the int64 range"):
        example.make_example({"big": value})


def _field(number, payload):
    return bytes([number << 3 | 2, len(payload)]) + payload


def test_decoder_accepts_unpacked_lists():
    int64_list = b"\x08\x05" + b"\x08" + b"\xff" * 9 + b"\x01"  # 5, -1 as unpacked varints
    float_list = b"\x0d" + np.float32(2.5).tobytes()  # one unpacked fixed32
    features = b"".join(
        _field(1, _field(1, key) + _field(2, _field(number, payload)))
        for key, number, payload in [(b"i", 3, int64_list), (b"f", 2, float_list)])
    parsed = example.example_to_dict(_field(1, features))
    np.testing.assert_array_equal(parsed["i"], np.array([5, -1], np.int64))
    np.testing.assert_array_equal(parsed["f"], np.array([2.5], np.float32))


@pytest.mark.parametrize("data", [b"\x0a\x05\x0a", b"\x0a\xff", b"\x0f\x00"])
def test_malformed_bytes_raise_value_error(data):
    with pytest.raises(ValueError, match="not a serialized tf.train.Example"):
        example.example_to_dict(data)


def _records():
    """Three records: 'label' always 1 value, 'tags' 0-2 values, 'extra' only in one."""
    return [example.make_example({"label": i, "tags": np.array([b"t"] * i, bytes),
                                  "pixels": [0.5, float(i)],
                                  **({"extra": b"x"} if i == 1 else {})})
            for i in range(3)]


def test_schema_fixed_where_constant_var_where_not():
    schema = example.infer_schema(_records())
    assert schema.records == 3
    assert schema.feature_specs() == {
        "extra": example.FeatureSpec("string", None),
        "label": example.FeatureSpec("int64", ()),
        "pixels": example.FeatureSpec("float32", (2,)),
        "tags": example.FeatureSpec("string", None),
    }
    assert schema.to_code() == (
        "keys_to_features = {\n"
        "    'extra': tf.io.VarLenFeature(tf.string),\n"
        "    'label': tf.io.FixedLenFeature([], tf.int64),\n"
        "    'pixels': tf.io.FixedLenFeature([2], tf.float32),\n"
        "    'tags': tf.io.VarLenFeature(tf.string),\n"
        "}")
    assert schema.to_table().splitlines() == [
        "key     kind   length  sample",
        "extra   bytes  0-1     [b'x']",
        "label   int64  1       [0]",
        "pixels  float  2       [0.5, 0]",
        "tags    bytes  0-2     [b't']",
    ]


def test_schema_from_files_samples_each_file(tmp_path):
    paths = [tmp_path / "a.tfrecord", tmp_path / "b.tfrecord"]
    tfrecord.write_records(paths[0], _records())
    tfrecord.write_records(paths[1], [example.make_example({"label": 7, "tags": [b"a"] * 5})] * 3)
    assert example.infer_schema(paths, sample=1).records == 2
    schema = example.infer_schema(paths, sample=None)
    assert schema.records == 6
    assert (schema.features["tags"].min_length, schema.features["tags"].max_length) == (0, 5)
    merged = example.infer_schema(paths[0], sample=None)
    merged.merge(example.infer_schema(paths[1], sample=None))
    assert merged.records == schema.records
    assert _counts(merged) == _counts(schema)


def _counts(schema):
    return {key: (s.kinds, s.present, s.min_length, s.max_length)
            for key, s in schema.features.items()}


def test_schema_rejects_conflicting_kinds_and_bad_input():
    schema = example.infer_schema([example.make_example({"x": 1}),
                                   example.make_example({"x": 1.0})])
    with pytest.raises(ValueError, match=r"feature 'x' holds float and int64 values in different"):
        schema.feature_specs()
    with pytest.raises(ValueError, match=r"^record 1: not a serialized tf.train.Example"):
        example.infer_schema([example.make_example({"x": 1}), b"\x0a\xff"])
    with pytest.raises(TypeError, match="expected TFRecord paths or serialized records, got an"):
        example.infer_schema([3])
    with pytest.raises(ValueError, match="^infer_schema: sample must be a positive integer "
                                         "or None, got 0$"):
        example.infer_schema([], sample=0)


# --------------------------------------------------------------- against TensorFlow

@pytest.fixture
def tf():
    from tf1compat._tf import tf
    return tf


def _tf_feature(tf, value):
    flat = _expected(value)
    if flat.dtype == object:
        return tf.train.Feature(bytes_list=tf.train.BytesList(value=list(flat)))
    if flat.dtype == np.float32:
        return tf.train.Feature(float_list=tf.train.FloatList(value=flat.tolist()))
    return tf.train.Feature(int64_list=tf.train.Int64List(value=flat.tolist()))


@pytest.mark.tf
def test_bytes_equal_tensorflow_serialization(tf, mapping):
    features = tf.train.Features(feature={k: _tf_feature(tf, v) for k, v in mapping.items()})
    theirs = tf.train.Example(features=features).SerializeToString(deterministic=True)
    assert example.make_example(mapping) == theirs


@pytest.mark.tf
def test_tensorflow_examples_decode(tf, mapping):
    features = tf.train.Features(feature={k: _tf_feature(tf, v) for k, v in mapping.items()})
    parsed = example.example_to_dict(tf.train.Example(features=features).SerializeToString())
    for key, value in mapping.items():
        np.testing.assert_array_equal(parsed[key], _expected(value), err_msg=key)


@pytest.mark.tf
def test_parse_single_example_with_inferred_spec_returns_the_values(tf, mapping):
    serialized = example.make_example(mapping)
    keys_to_features = example.infer_features([serialized])
    parsed = tf.io.parse_single_example(serialized, keys_to_features)
    for key, value in mapping.items():
        values = parsed[key].numpy()  # a scalar bytes must not go through NUL-stripping np.ravel
        flat = np.array([values], object) if isinstance(values, bytes) else np.ravel(values)
        np.testing.assert_array_equal(flat, _expected(value), err_msg=key)


@pytest.mark.tf
def test_var_len_features_parse_to_sparse_values(tf):
    records = _records()
    keys_to_features = example.infer_features(records)
    assert isinstance(keys_to_features["tags"], tf.io.VarLenFeature)
    for i, serialized in enumerate(records):
        parsed = tf.io.parse_single_example(serialized, keys_to_features)
        assert parsed["tags"].values.numpy().tolist() == [b"t"] * i
        assert parsed["label"].numpy() == i


@pytest.mark.tf
def test_slim_tfexample_decoder_accepts_inferred_spec(tf):
    from tf_slim.data import tfexample_decoder
    records = _records()
    decoder = tfexample_decoder.TFExampleDecoder(
        example.infer_features(records),
        {"label": tfexample_decoder.Tensor("label"),
         "tags": tfexample_decoder.Tensor("tags", default_value="")})
    label, tags = decoder.decode(tf.constant(records[2]), ["label", "tags"])
    assert label.numpy() == 2
    assert tags.numpy().tolist() == [b"t", b"t"]


def _random_mappings(seed, count=60):
    """Seeded Examples of every kind: empty lists, full int64 range, odd floats, bytes
    with NULs, keys that are prefixes of each other or not ASCII."""
    rng = np.random.default_rng(seed)
    keys = ["", "a", "ab", "a/b", "b", "é", "z" * 20, "image/encoded", "\x7f", "ключ"]
    specials = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, 3.4e38], np.float32)
    mappings = []
    for _ in range(count):
        mapping = {}
        for key in rng.choice(keys, rng.integers(0, 6), replace=False):
            size = int(rng.integers(0, 5))
            kind = rng.integers(3)
            if kind == 0:
                mapping[str(key)] = np.array([rng.bytes(int(rng.integers(0, 6)))
                                              for _ in range(size)], object) \
                    if size else np.array([], bytes)
            elif kind == 1:
                mapping[str(key)] = np.where(rng.random(size) < 0.3, rng.choice(specials, size),
                                             rng.standard_normal(size)).astype(np.float32)
            else:
                mapping[str(key)] = rng.integers(-2**63, 2**63 - 1, size, dtype=np.int64,
                                                 endpoint=True)
        mappings.append(mapping)
    return mappings


def _tf_feature_of_kind(tf, array):
    """The tf.train.Feature of a typed array (also an empty one)."""
    if array.dtype.kind in "OS":
        return tf.train.Feature(bytes_list=tf.train.BytesList(value=list(array)))
    if array.dtype == np.float32:
        return tf.train.Feature(float_list=tf.train.FloatList(value=array.tolist()))
    return tf.train.Feature(int64_list=tf.train.Int64List(value=array.tolist()))


@pytest.mark.tf
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_random_examples_equal_tensorflow_bytes_and_decode_alike(tf, seed):
    for mapping in _random_mappings(seed):
        features = tf.train.Features(feature={k: _tf_feature_of_kind(tf, v)
                                              for k, v in mapping.items()})
        theirs = tf.train.Example(features=features).SerializeToString(deterministic=True)
        assert example.make_example(mapping) == theirs, mapping
        decoded = example.example_to_dict(theirs)
        assert list(decoded) == sorted(mapping)
        for key, value in mapping.items():
            expected = value.astype(object) if value.dtype.kind == "S" else value
            assert decoded[key].dtype == expected.dtype, key
            np.testing.assert_array_equal(decoded[key], expected, err_msg=key)


@pytest.mark.tf
def test_message_classes_match_tensorflows_descriptors(tf):
    from tf1compat.records import _example_proto

    def fields(descriptor):
        """The message's fields as written in its .proto (the same API on protobuf 4 to 7)."""
        from google.protobuf import descriptor_pb2
        proto = descriptor_pb2.DescriptorProto()
        descriptor.CopyToProto(proto)
        return sorted((f.name, f.number, f.type, f.label, f.type_name, f.proto3_optional,
                       proto.oneof_decl[f.oneof_index].name if f.HasField("oneof_index")
                       else None, f.options.packed) for f in proto.field)

    ours, theirs = _example_proto.Example.DESCRIPTOR, tf.train.Example.DESCRIPTOR
    seen = set()
    pending = [(ours, theirs)]
    while pending:
        mine, reference = pending.pop()
        assert mine.full_name == reference.full_name
        assert fields(mine) == fields(reference), mine.full_name
        assert mine.GetOptions().map_entry == reference.GetOptions().map_entry
        seen.add(mine.full_name)
        pending.extend((f.message_type, g.message_type)
                       for f, g in zip(mine.fields, reference.fields, strict=True)
                       if f.message_type and f.message_type.full_name not in seen)
    assert {"tensorflow.Example", "tensorflow.Features", "tensorflow.Feature",
            "tensorflow.BytesList", "tensorflow.FloatList", "tensorflow.Int64List"} <= seen
