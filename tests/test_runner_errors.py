"""A queue-runner thread's error names the file, record and byte offset it came from:
damaged TFRecords, and per-example ops failing on one record (issue 14)."""

import numpy as np
import pytest
from slim_data import get_split_factory, make_examples, write_slim_files

import tf1compat as tc
from tf1compat.records.example import make_example
from tf1compat.records.tfrecord import write_records

tf = pytest.importorskip("tensorflow")
pytestmark = [pytest.mark.tf, pytest.mark.usefixtures("no_thread_leaks")]

FRAME = 16  # bytes of framing around each record's data


def first_error(fetches):
    with pytest.raises(tf.errors.OpError) as excinfo:
        list(tc.SessionIterator(fetches))
    return excinfo.value


def tfrecord_values(paths):
    queue = tc.string_input_producer([str(p) for p in paths], num_epochs=1, shuffle=False)
    return tc.TFRecordReader().read(queue)[1]


def test_truncated_record_names_file_record_and_offset(tmp_path):
    paths = [tmp_path / f"part-{i}.tfrecord" for i in range(4)]
    for path in paths:
        write_records(path, [b"r" * 20] * 5)
    truncated = paths[2]
    truncated.write_bytes(truncated.read_bytes()[:-7])  # the last record loses 7 bytes
    with tc.legacy_graph():
        error = first_error(tc.batch(tfrecord_values(paths), 2))
    assert isinstance(error, tf.errors.DataLossError)
    message = str(error)
    assert f"{truncated}: record 4 at byte {4 * (20 + FRAME)}: truncated data" in message
    assert "reading from" not in message  # located, not the whole file list
    assert str(paths[0]) not in message


def test_length_crc_damage_is_located_among_many_files(tmp_path):
    paths = [tmp_path / f"part-{i}.tfrecord" for i in range(8)]
    for index, path in enumerate(paths):
        write_records(path, [bytes([index]) * (10 + index)] * 3)
    damaged = paths[5]
    data = bytearray(damaged.read_bytes())
    data[(15 + FRAME) + 2] ^= 0x01  # the length field of record 1
    damaged.write_bytes(bytes(data))
    with tc.legacy_graph():
        error = first_error(tc.batch(tfrecord_values(paths), 2))
    assert f"{damaged}: record 1 at byte {15 + FRAME}: length CRC mismatch" in str(error)


def png_record(value):
    return make_example({"image/encoded": tf.io.encode_png(
        np.full((2, 2, 3), value, np.uint8)).numpy(), "label": value})


def test_decode_png_on_one_garbage_record_names_that_record(tmp_path):
    good, mixed = tmp_path / "good.tfrecord", tmp_path / "mixed.tfrecord"
    write_records(good, [png_record(i) for i in range(4)])
    records = [png_record(i) for i in range(5)]
    records[3] = make_example({"image/encoded": b"not a png at all", "label": 3})
    write_records(mixed, records)
    offset = sum(len(r) + FRAME for r in records[:3])
    with tc.legacy_graph():
        features = tf.io.parse_single_example(tfrecord_values([good, mixed]), {
            "image/encoded": tf.io.FixedLenFeature([], tf.string)})
        image = tf.io.decode_png(features["image/encoded"], channels=3, name="decode_image")
        error = first_error(tc.batch(tf.reshape(image, [2, 2, 3]), 2))
    assert isinstance(error, tf.errors.InvalidArgumentError)
    message = str(error)
    assert "failed in op 'decode_image' (DecodePng)" in message
    assert f"comes from {mixed}: record 3 at byte {offset} (reader key '{mixed}:{offset}')" \
        in message


def test_bad_reshape_on_one_record_names_it(tmp_path):
    path = tmp_path / "rows.tfrecord"
    write_records(path, [b"abcd", b"efgh", b"ijklm", b"nopq"])
    with tc.legacy_graph():
        raw = tf.io.decode_raw(tfrecord_values([path]), tf.uint8)
        error = first_error(tc.batch(tf.reshape(raw, [2, 2], name="to_square"), 1))
    assert f"comes from {path}: record 2 at byte {2 * (4 + FRAME)}" in str(error)


def test_bad_csv_line_names_the_line(tmp_path):
    path = tmp_path / "rows.csv"
    path.write_text("a,b\n1,2\n3,4\n5,oops\n7,8\n")
    with tc.legacy_graph():
        queue = tc.string_input_producer([str(path)], num_epochs=1, shuffle=False)
        _, line = tc.TextLineReader(skip_header_lines=1).read(queue)
        columns = tf.io.decode_csv(line, record_defaults=[[0], [0]])
        error = first_error(tc.batch(columns, 1))
    assert f"comes from {path}: line 4 (reader key '{path}:4')" in str(error)


def test_whole_file_garbage_image_names_the_file(tmp_path):
    paths = [tmp_path / f"img-{i}.png" for i in range(3)]
    for i, path in enumerate(paths):
        path.write_bytes(tf.io.encode_png(np.full((2, 2, 1), i, np.uint8)).numpy())
    paths[1].write_bytes(b"garbage")
    with tc.legacy_graph():
        queue = tc.string_input_producer([str(p) for p in paths], num_epochs=1, shuffle=False)
        _, contents = tc.WholeFileReader().read(queue)
        image = tf.reshape(tf.io.decode_png(contents, channels=1), [2, 2, 1])
        error = first_error(tc.batch(image, 1))
    assert f"comes from {paths[1]} (reader key '{paths[1]}')" in str(error)


def test_slim_provider_garbage_image_names_record_through_the_common_queue(tmp_path, rng):
    pattern = write_slim_files(str(tmp_path), make_examples(rng, 8), num_files=2)
    bad = tmp_path / "train-00001.tfrecord"
    write_records(bad, [make_example({"image/encoded": b"\x89PNG broken", "image/format": b"png",
                                      "image/class/label": 1})])
    from tf1compat import slim
    with tc.legacy_graph():
        dataset = get_split_factory(pattern, 5)()
        provider = slim.dataset_data_provider.DatasetDataProvider(dataset, shuffle=False,
                                                                  num_epochs=1)
        image, label = provider.get(["image", "label"])
        error = first_error(tc.batch([image, label], 1))
    assert isinstance(error, tf.errors.InvalidArgumentError)
    assert f"comes from {bad}: record 0 at byte 0 (reader key '{bad}:0')" in str(error)


def test_error_not_tied_to_a_reader_names_only_the_op():
    with tc.legacy_graph():
        row = tc.input_producer(tf.constant([b"ten bytes!"] * 2), num_epochs=1).dequeue()
        wrong = tf.reshape(tf.io.decode_raw(row, tf.uint8), [3, 3], name="bad_reshape")
        error = first_error(tc.batch(wrong, 2))
    message = str(error)
    assert "failed in op 'bad_reshape' (Reshape)" in message
    assert "comes from" not in message and "reading from" not in message
