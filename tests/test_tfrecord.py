"""tf1compat.records.tfrecord: framing, CRCs, corruption handling, atomic and sharded writing.

Unmarked tests are pure Python; the ``tf`` ones compare against TensorFlow's own
writer and reader.
"""

import gzip
import os
import re

import pytest

from tf1compat import example, tfrecord
from tf1compat.errors import CorruptRecordError

HEADER = 12  # uint64 length + uint32 length CRC
FOOTER = 4   # uint32 data CRC


@pytest.fixture
def records(rng):
    """Seeded records of decreasing lengths, including an empty one."""
    return [rng.integers(0, 256, n, dtype="uint8").tobytes() for n in (300, 120, 40, 7, 1, 0)]


@pytest.fixture
def three_records_file(tmp_path, rng):
    """A file of records of 10, 20 and 30 bytes; record 1 starts at byte 26."""
    recs = [rng.integers(0, 256, n, dtype="uint8").tobytes() for n in (10, 20, 30)]
    path = tmp_path / "train.tfrecord"
    tfrecord.write_records(path, recs)
    return path, recs


def _damage(path, offset=None, truncate=None):
    data = bytearray(path.read_bytes())
    if offset is not None:
        data[offset] ^= 0xFF
    path.write_bytes(bytes(data[:truncate]))


def test_crc32c_known_answer():
    assert tfrecord.crc32c(b"123456789") == 0xE3069283


def test_masked_crc32c_rotates_and_adds_delta():
    crc = 0xE3069283
    expected = (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF
    assert tfrecord.masked_crc32c(b"123456789") == expected


@pytest.mark.parametrize("compression", [None, "GZIP", "ZLIB", "gzip"])
def test_records_of_decreasing_lengths_are_kept_intact(tmp_path, records, compression):
    path = tmp_path / "r.tfrecord"
    assert tfrecord.write_records(path, records, compression) == len(records)
    kept = list(tfrecord.iter_records(path, compression=compression))
    assert kept == records
    assert all(type(r) is bytes for r in kept)
    assert tfrecord.count_records(path, compression) == len(records)


def test_empty_file_has_no_records(tmp_path):
    path = tmp_path / "empty.tfrecord"
    tfrecord.write_records(path, [])
    assert path.read_bytes() == b""
    assert list(tfrecord.iter_records(path)) == []


@pytest.mark.parametrize("region, where, reason", [
    ("length", 26 + 0, "length CRC mismatch"),
    ("length CRC", 26 + 9, "length CRC mismatch"),
    ("data", 26 + HEADER + 5, "data CRC mismatch"),
    ("data CRC", 26 + HEADER + 20 + 1, "data CRC mismatch"),
])
def test_flipped_byte_in_each_region(three_records_file, region, where, reason):
    path, recs = three_records_file
    _damage(path, offset=where)
    with pytest.raises(CorruptRecordError) as info:
        list(tfrecord.iter_records(path))
    error = info.value
    assert (error.path, error.index, error.offset) == (str(path), 1, 26)
    crc_pair = r"\(stored 0x[0-9a-f]{8}, computed 0x[0-9a-f]{8}\)"
    assert re.fullmatch(f"{re.escape(reason)} {crc_pair}", error.reason)
    assert str(error) == f"{path}: record 1 at byte 26: {error.reason}"

    skipping = tfrecord.iter_records(path, on_error="skip")
    assert list(skipping) == [recs[0], recs[2]]
    assert [(e.index, e.offset, e.reason) for e in skipping.skipped] == [(1, 26, error.reason)]


@pytest.mark.parametrize("cut, reason", [
    (26 + 3, "truncated length (3 of 12 header bytes)"),
    (26 + HEADER, "truncated data (0 of 24 bytes of data and data CRC)"),
    (26 + HEADER + 11, "truncated data (11 of 24 bytes of data and data CRC)"),
    (26 + HEADER + 20 + 2, "truncated data (22 of 24 bytes of data and data CRC)"),
])
def test_truncation_points(three_records_file, cut, reason):
    path, recs = three_records_file
    _damage(path, truncate=cut)
    with pytest.raises(CorruptRecordError) as info:
        list(tfrecord.iter_records(path))
    assert (info.value.index, info.value.offset, info.value.reason) == (1, 26, reason)

    skipping = tfrecord.iter_records(path, on_error="skip")
    assert list(skipping) == [recs[0]]
    assert [(e.index, e.offset) for e in skipping.skipped] == [(1, 26)]


def test_skip_mode_resyncs_after_garbage_between_records(tmp_path, rng):
    recs = [rng.integers(0, 256, n, dtype="uint8").tobytes() for n in (50, 60, 70)]
    path = tmp_path / "r.tfrecord"
    tfrecord.write_records(path, recs)
    data = path.read_bytes()
    second = HEADER + 50 + FOOTER
    path.write_bytes(data[:second] + b"\x07" * 100 + data[second:])
    skipping = tfrecord.iter_records(path, on_error="skip")
    assert list(skipping) == recs
    assert [(e.index, e.offset) for e in skipping.skipped] == [(1, second)]


def test_without_verify_a_data_crc_flip_goes_unnoticed(three_records_file):
    path, recs = three_records_file
    _damage(path, offset=26 + HEADER + 20 + 1)
    assert list(tfrecord.iter_records(path, verify=False)) == recs


def test_truncated_gzip_stream_is_a_corrupt_record(tmp_path, records):
    path = tmp_path / "r.tfrecord.gz"
    tfrecord.write_records(path, records, "GZIP")
    _damage(path, truncate=-5)
    with pytest.raises(CorruptRecordError, match="GZIP stream ends before its end marker"):
        list(tfrecord.iter_records(path, compression="GZIP"))


def test_concatenated_gzip_members_read_as_one_stream(tmp_path, records):
    plain = tmp_path / "r.tfrecord"
    tfrecord.write_records(plain, records)
    data = plain.read_bytes()
    path = tmp_path / "cat.tfrecord.gz"
    path.write_bytes(gzip.compress(data[:100]) + gzip.compress(data[100:]))
    assert list(tfrecord.iter_records(path, compression="GZIP")) == records


def test_verify_reports_every_bad_record(three_records_file):
    path, _ = three_records_file
    size = path.stat().st_size
    assert tfrecord.verify(path).ok
    _damage(path, offset=HEADER + 1)  # data of record 0
    _damage(path, offset=26 + HEADER + 20 + 1)  # data CRC of record 1
    report = tfrecord.verify(path)
    assert (report.ok, report.records, report.size_bytes) == (False, 1, size)
    assert [(e.index, e.offset) for e in report.errors] == [(0, 0), (1, 26)]
    assert str(report) == f"{path}: 1 records, {size} bytes, 2 corrupt"


@pytest.mark.parametrize("compression", [None, "GZIP", "ZLIB"])
def test_detect_compression(tmp_path, records, compression):
    path = tmp_path / "r.tfrecord"
    tfrecord.write_records(path, records, compression)
    assert tfrecord.detect_compression(path) == compression


def test_bad_arguments_name_the_valid_choices(tmp_path):
    with pytest.raises(ValueError, match=r"unknown compression 'BZIP2'; "
                                         r"valid choices: None, '', 'GZIP', 'ZLIB'"):
        tfrecord.TFRecordWriter(tmp_path / "r.tfrecord", "BZIP2")
    with pytest.raises(ValueError, match=r"^iter_records: on_error must be one of "
                                         r"\['raise', 'skip'\], got 'ignore'$"):
        tfrecord.iter_records(tmp_path / "r.tfrecord", on_error="ignore")


def test_writer_rejects_non_bytes_and_writes_after_close(tmp_path):
    path = tmp_path / "r.tfrecord"
    with tfrecord.TFRecordWriter(path) as writer:
        writer.write(b"a")
        with pytest.raises(TypeError, match=r"record 1 is str; expected bytes"):
            writer.write("b")
    with pytest.raises(ValueError, match="writer is closed"):
        writer.write(b"c")
    assert list(tfrecord.iter_records(path)) == [b"a"]


def test_writer_is_atomic(tmp_path):
    path = tmp_path / "r.tfrecord"
    with tfrecord.TFRecordWriter(path) as writer:
        writer.write(b"complete")
        assert not path.exists()
    assert path.exists()
    with pytest.raises(RuntimeError), tfrecord.TFRecordWriter(path) as writer:
        writer.write(b"partial")
        raise RuntimeError("interrupted")
    assert os.listdir(tmp_path) == ["r.tfrecord"]
    assert list(tfrecord.iter_records(path)) == [b"complete"]


def test_shard_paths():
    assert tfrecord.shard_paths("out/train.tfrecord", 2) == [
        "out/train-00000-of-00002.tfrecord", "out/train-00001-of-00002.tfrecord"]
    assert tfrecord.shard_paths("out/train", 1) == ["out/train-00000-of-00001.tfrecord"]
    with pytest.raises(ValueError, match="^shard_paths: num_shards must be a positive "
                                         "integer, got 0$"):
        tfrecord.shard_paths("out/train", 0)


def _items(n):
    return [{"index": i, "name": f"item {i}"} for i in range(n)]


@pytest.mark.parametrize("workers", [0, 2])
def test_write_sharded_spreads_items_round_robin(tmp_path, workers):
    paths = tfrecord.write_sharded(_items(10), tmp_path / "train.tfrecord", 3,
                                   workers=workers, encode=example.make_example)
    assert [os.path.basename(p) for p in paths] == [
        f"train-0000{i}-of-00003.tfrecord" for i in range(3)]
    for shard, path in enumerate(paths):
        indices = [example.example_to_dict(r)["index"][0] for r in tfrecord.iter_records(path)]
        assert indices == list(range(shard, 10, 3))


def test_write_sharded_without_encode_takes_bytes(tmp_path):
    paths = tfrecord.write_sharded([b"a", b"b", b"c"], tmp_path / "x", 2, compression="GZIP")
    shards = [list(tfrecord.iter_records(p, compression="GZIP")) for p in paths]
    assert shards == [[b"a", b"c"], [b"b"]]


def _interrupted_items():
    yield from [b"a", b"b", b"c"]
    raise KeyboardInterrupt


def test_interrupted_write_sharded_leaves_no_shard(tmp_path):
    with pytest.raises(KeyboardInterrupt):
        tfrecord.write_sharded(_interrupted_items(), tmp_path / "train.tfrecord", 2)
    assert os.listdir(tmp_path) == []


def test_failing_encode_in_a_worker_leaves_no_shard(tmp_path):
    items = _items(5) + [{"index": None}]
    with pytest.raises(TypeError, match="feature 'index': got None"):
        tfrecord.write_sharded(items, tmp_path / "train.tfrecord", 2, workers=2,
                               encode=example.make_example)
    assert os.listdir(tmp_path) == []


def _encode_or_not(item):
    """Bytes, except for item 3 (module-level: the workers import it)."""
    return 5 if item == 3 else str(item).encode()


@pytest.mark.timeout(60)
@pytest.mark.parametrize("workers", [0, 1, 2])
def test_write_sharded_names_the_output_and_the_item_that_is_not_bytes(
        tmp_path, monkeypatch, workers):
    monkeypatch.chdir(tmp_path)
    os.mkdir("o2")
    shard = r"^o2/t-00001-of-00002\.tfrecord: item 3"
    with pytest.raises(TypeError, match=shard + " is int; expected bytes"):
        tfrecord.write_sharded([b"a", b"b", b"c", 5, b"d"], "o2/t.tfrecord", 2,
                               workers=workers)
    with pytest.raises(TypeError, match=shard + ": encode returned int; expected bytes"):
        tfrecord.write_sharded(range(5), "o2/t.tfrecord", 2, workers=workers,
                               encode=_encode_or_not)
    assert os.listdir("o2") == []


# --------------------------------------------------------------- against TensorFlow

@pytest.fixture
def tf():
    from tf1compat._tf import tf
    return tf


@pytest.fixture
def large_records(records, rng):
    """Records including one larger than TensorFlow's 256 KiB zlib buffer."""
    return records + [rng.integers(0, 256, 300_000, dtype="uint8").tobytes()]


@pytest.fixture(params=[None, "GZIP", "ZLIB"])
def ours_and_theirs(request, tmp_path, tf, large_records):
    """(our file, TensorFlow's file, compression) holding ``large_records``."""
    ours, theirs = tmp_path / "ours.tfrecord", tmp_path / "theirs.tfrecord"
    tfrecord.write_records(ours, large_records, request.param)
    with tf.io.TFRecordWriter(str(theirs), request.param or "") as writer:
        for record in large_records:
            writer.write(record)
    return ours, theirs, request.param


@pytest.mark.tf
def test_bytes_equal_tensorflow_writer(ours_and_theirs):
    ours, theirs, _ = ours_and_theirs
    assert ours.read_bytes() == theirs.read_bytes()


@pytest.mark.tf
def test_reader_yields_what_tfrecorddataset_yields(tf, ours_and_theirs, large_records):
    ours, theirs, compression = ours_and_theirs
    tf_reads_ours = [t.numpy() for t in tf.data.TFRecordDataset(str(ours), compression or "")]
    assert tf_reads_ours == large_records
    assert list(tfrecord.iter_records(theirs, compression=compression)) == large_records
