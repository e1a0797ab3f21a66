"""Cutting Example records by a template gives exactly what parse_example gives."""

import numpy as np
import pytest

from tf1compat import example, tfrecord
from tf1compat.pipeline.example_parsing import build_example_parser, find_template

tf = pytest.importorskip("tensorflow")
pytestmark = pytest.mark.tf

FEATURES = {
    "image": tf.io.FixedLenFeature([], tf.string),
    "label": tf.io.FixedLenFeature([], tf.int64),
    "ids": tf.io.FixedLenFeature([3], tf.int64),
    "box": tf.io.FixedLenFeature([2, 2], tf.float32),
    "names": tf.io.FixedLenFeature([2], tf.string),
}


def make_record(rng, label=None, ids=None, image_format=b"raw", **extra):
    """A record like the template: varint sizes of 'ids' are 1, 2, 3 bytes unless given."""
    return example.make_example({
        "image": rng.integers(0, 256, 24, dtype=np.uint8).tobytes(),
        "label": int(rng.integers(0, 128)) if label is None else label,
        "ids": ids if ids is not None else [int(rng.integers(0, 128)),
                                            int(rng.integers(128, 16384)),
                                            int(rng.integers(16384, 2 ** 21))],
        "box": rng.random(4).astype(np.float32),
        "names": [rng.integers(0, 256, 3, dtype=np.uint8).tobytes(), b"xy"],
        "format": image_format, **extra})


def deviating_records(rng):
    """Records the template must not cut: each differs from it in one way."""
    return [
        make_record(rng, label=300),                      # a 2-byte varint: longer
        make_record(rng, ids=[300, 5, 2 ** 20]),          # same length, varints end elsewhere
        make_record(rng, image_format=b"png"),            # same length, a fixed byte differs
        make_record(rng, extra=b"1"),                     # another key: longer
        make_record(rng, label=-3),                       # a 10-byte varint
    ]


def parse_both(records, layout):
    """(cut, parse_example) outputs as numpy, and whether the names were asked for."""
    asked = []

    def names():
        asked.append(True)
        return tf.constant([f"r{i}" for i in range(len(records))])

    cut = build_example_parser(FEATURES, layout)(tf.constant(records), names)
    parsed = tf.io.parse_example(tf.constant(records), FEATURES)
    return ({k: v.numpy() for k, v in cut.items()},
            {k: v.numpy() for k, v in parsed.items()}, bool(asked))


def assert_same(cut, parsed):
    assert sorted(cut) == sorted(parsed)
    for key in parsed:
        assert cut[key].dtype == parsed[key].dtype and cut[key].shape == parsed[key].shape, key
        np.testing.assert_array_equal(cut[key], parsed[key], err_msg=key)


@pytest.fixture
def layout(rng, tmp_path):
    path = str(tmp_path / "first.tfrecord")
    tfrecord.write_records(path, [make_record(rng)])
    found = find_template([path], FEATURES)
    assert found is not None
    return found


def test_records_following_the_template_are_cut_without_parsing(rng, layout):
    records = [make_record(rng) for _ in range(9)]
    cut, parsed, asked = parse_both(records, layout)
    assert_same(cut, parsed)
    assert not asked            # names are built only to parse records that differ


@pytest.mark.parametrize("position", [0, 4, 8])
def test_records_that_differ_are_parsed_and_stitched_in_order(rng, layout, position):
    records = [make_record(rng) for _ in range(8)]
    for offset, record in enumerate(deviating_records(rng)):
        records.insert((position + offset) % (len(records) + 1), record)
    cut, parsed, asked = parse_both(records, layout)
    assert_same(cut, parsed)
    assert asked


def test_a_batch_with_no_record_following_the_template(rng, layout):
    cut, parsed, _ = parse_both(deviating_records(rng), layout)
    assert_same(cut, parsed)


def test_no_template_when_the_first_record_cannot_serve(rng, tmp_path):
    path = str(tmp_path / "odd.tfrecord")
    tfrecord.write_records(path, [make_record(rng, label=-1), make_record(rng)])
    empty = str(tmp_path / "empty.tfrecord")
    tfrecord.write_records(empty, [])
    assert find_template([empty, path], FEATURES) is None
    assert find_template([empty], FEATURES) is None
    assert find_template([path], {"v": tf.io.VarLenFeature(tf.int64)}) is None
    records = [make_record(rng) for _ in range(3)]
    cut, parsed, asked = parse_both(records, None)
    assert_same(cut, parsed)
    assert asked


def test_parse_errors_of_records_that_differ_name_the_record(rng, layout):
    records = [make_record(rng), example.make_example({"other": 1}), make_record(rng)]
    parse = build_example_parser(FEATURES, layout)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Name: r1, Feature: box"):
        parse(tf.constant(records), lambda: tf.constant(["r0", "r1", "r2"]))
