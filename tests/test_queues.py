"""TF1 producers, readers and batching: same data as tf.data, and early validation."""

import collections
import os

import numpy as np
import pytest

import tf1compat as tc
from tf1compat.errors import PipelineConfigError

tf = pytest.importorskip("tensorflow")
pytestmark = [pytest.mark.tf, pytest.mark.usefixtures("no_thread_leaks")]

v1 = tf.compat.v1


def write_tfrecords(directory, num_files, per_file, rng):
    """Files of serialized Examples {'id': int64, 'payload': bytes of varying length}."""
    paths, records = [], []
    for f in range(num_files):
        path = os.path.join(directory, f"part-{f}.tfrecord")
        with tf.io.TFRecordWriter(path) as writer:
            for r in range(per_file):
                payload = rng.integers(0, 256, size=int(rng.integers(1, 40)), dtype=np.uint8)
                example = tf.train.Example(features=tf.train.Features(feature={
                    "id": tf.train.Feature(int64_list=tf.train.Int64List(value=[f * 1000 + r])),
                    "payload": tf.train.Feature(bytes_list=tf.train.BytesList(
                        value=[payload.tobytes()])),
                }))
                serialized = example.SerializeToString()
                writer.write(serialized)
                records.append(serialized)
        paths.append(path)
    return paths, records


@pytest.fixture
def tfrecord_files(tmp_path, rng):
    return write_tfrecords(str(tmp_path), num_files=3, per_file=7, rng=rng)


def read_all(fetches):
    with tc.SessionIterator(fetches) as it:
        return list(it)


def flat_bytes(batches):
    return [bytes(x) for b in batches for x in b]


def reader_values(make_reader, files, batch_size=4):
    """Every value a reader delivers from ``files`` (one epoch, file order)."""
    with tc.legacy_graph():
        queue = tc.string_input_producer(files, num_epochs=1, shuffle=False)
        _, value = make_reader().read(queue)
        return flat_bytes(read_all(tc.batch(value, batch_size, allow_smaller_final_batch=True)))


def dataset_values(dataset):
    return [bytes(x.numpy()) for x in dataset]


# ------------------------------------------------------------ readers vs tf.data

def test_tfrecord_reader_matches_tf_data(tfrecord_files):
    paths, records = tfrecord_files
    got = reader_values(tc.TFRecordReader, paths)
    assert got == dataset_values(tf.data.TFRecordDataset(paths)) == records


def test_gzip_tfrecord_reader_matches_tf_data(tmp_path, rng):
    path = str(tmp_path / "z.tfrecord.gz")
    records = [rng.bytes(int(n)) for n in rng.integers(1, 50, size=9)]
    with tf.io.TFRecordWriter(path, options="GZIP") as writer:
        for record in records:
            writer.write(record)
    got = reader_values(lambda: tc.TFRecordReader(
        options=tf.io.TFRecordOptions(compression_type="GZIP")), [path])
    assert got == dataset_values(tf.data.TFRecordDataset(path, compression_type="GZIP")) == records


def test_fixed_length_reader_matches_tf_data(tmp_path, rng):
    header, record_bytes, footer = 5, 11, 3
    paths = []
    for i in range(2):
        path = tmp_path / f"fixed-{i}.bin"
        path.write_bytes(rng.bytes(header + record_bytes * (4 + i) + footer))
        paths.append(str(path))
    got = reader_values(lambda: tc.FixedLengthRecordReader(
        record_bytes, header_bytes=header, footer_bytes=footer), paths)
    expected = dataset_values(tf.data.FixedLengthRecordDataset(
        paths, record_bytes, header_bytes=header, footer_bytes=footer))
    assert len(got) == 9
    assert got == expected


def test_whole_file_reader_matches_read_file(tmp_path, rng):
    paths = []
    for i in range(3):
        path = tmp_path / f"blob-{i}.bin"
        path.write_bytes(rng.bytes(int(rng.integers(1, 300))))
        paths.append(str(path))
    got = reader_values(tc.WholeFileReader, paths, batch_size=2)
    assert got == [bytes(tf.io.read_file(p).numpy()) for p in paths]


def test_text_line_reader_matches_tf_data(tmp_path):
    paths = []
    for i in range(2):
        path = tmp_path / f"rows-{i}.csv"
        path.write_text("a,b\n" + "".join(f"{i},{j}\n" for j in range(5)))
        paths.append(str(path))
    got = reader_values(lambda: tc.TextLineReader(skip_header_lines=1), paths)
    expected = dataset_values(tf.data.Dataset.from_tensor_slices(paths).flat_map(
        lambda p: tf.data.TextLineDataset(p).skip(1)))
    assert got == expected
    assert got[0] == b"0,0" and len(got) == 10


# ------------------------------------------------------------ epochs, order, seeds

def ids_of(batches):
    return [int(i) for b in batches for i in b]


def id_pipeline(paths, *, num_epochs=1, shuffle=False, seed=None, batch_size=4,
                smaller=True, shuffle_batch_seed=None):
    queue = tc.string_input_producer(paths, num_epochs=num_epochs, shuffle=shuffle, seed=seed)
    _, value = tc.TFRecordReader().read(queue)
    ident = tf.io.parse_single_example(value, {"id": tf.io.FixedLenFeature([], tf.int64)})["id"]
    if shuffle_batch_seed is not None:
        return tc.shuffle_batch(ident, batch_size, capacity=20, min_after_dequeue=10,
                                seed=shuffle_batch_seed, allow_smaller_final_batch=smaller)
    return tc.batch(ident, batch_size, allow_smaller_final_batch=smaller)


def file_order_ids(num_files, per_file):
    return [f * 1000 + r for f in range(num_files) for r in range(per_file)]


def test_unshuffled_single_thread_order_is_file_order(tfrecord_files):
    paths, _ = tfrecord_files
    with tc.legacy_graph():
        assert ids_of(read_all(id_pipeline(paths))) == file_order_ids(3, 7)


def test_two_epochs_deliver_every_record_exactly_twice(tfrecord_files):
    paths, _ = tfrecord_files
    with tc.legacy_graph():
        got = ids_of(read_all(id_pipeline(paths, num_epochs=2, shuffle=True, seed=3)))
    assert collections.Counter(got) == collections.Counter(file_order_ids(3, 7) * 2)


def test_seed_gives_repeatable_file_order(tmp_path, rng):
    paths, _ = write_tfrecords(str(tmp_path), num_files=8, per_file=2, rng=rng)

    def run(seed):
        with tc.legacy_graph():
            return ids_of(read_all(id_pipeline(paths, num_epochs=2, shuffle=True, seed=seed)))

    first, again, other = run(7), run(7), run(8)
    assert first == again
    assert sorted(first) == sorted(file_order_ids(8, 2) * 2)
    assert first != file_order_ids(8, 2) * 2
    assert other != first


def test_shuffle_batch_delivers_a_seeded_shuffle_of_every_record(tfrecord_files):
    # RandomShuffleQueue draws from what the reader thread has enqueued so far,
    # so its order depends on thread timing even with a seed (README: known
    # differences); what is guaranteed is every record exactly once, shuffled.
    paths, _ = tfrecord_files
    with tc.legacy_graph():
        got = ids_of(read_all(id_pipeline(paths, shuffle=True, seed=7, shuffle_batch_seed=7)))
    assert sorted(got) == file_order_ids(3, 7)
    assert got != file_order_ids(3, 7)


def test_remainder_dropped_by_default_and_kept_on_request(tfrecord_files):
    paths, _ = tfrecord_files  # 21 records, batch 4 -> 5 full batches + 1
    with tc.legacy_graph():
        dropped = read_all(id_pipeline(paths, smaller=False))
    with tc.legacy_graph():
        kept = read_all(id_pipeline(paths, smaller=True))
    assert [len(b) for b in dropped] == [4] * 5
    assert [len(b) for b in kept] == [4] * 5 + [1]
    assert ids_of(kept) == file_order_ids(3, 7)


# ------------------------------------------------------------ batching structures

def test_batching_accepts_tensor_list_and_dict():
    with tc.legacy_graph():
        row = tc.input_producer(tf.reshape(tf.range(12), [6, 2]), num_epochs=1, shuffle=False)
        element = row.dequeue()
        single = tc.batch(element, 3, capacity=10)
        as_list = tc.batch([element, element * 10], 3, capacity=10)
        as_dict = tc.batch({"a": element}, 3, capacity=10)
        # the three batch queues each take every other third element; just check shapes
        assert single.shape.as_list() == [3, 2]
        assert [t.shape.as_list() for t in as_list] == [[3, 2], [3, 2]]
        assert as_dict["a"].shape.as_list() == [3, 2]


def test_slice_input_producer_single_and_list():
    labels = np.arange(5, dtype=np.int64)
    with tc.legacy_graph():
        single = tc.slice_input_producer(labels, num_epochs=1, shuffle=False)
        got = ids_of(read_all(tc.batch(single, 5)))
    assert got == list(range(5))
    with tc.legacy_graph():
        a, b = tc.slice_input_producer([labels, labels * 2], num_epochs=1, shuffle=False)
        batches = read_all(tc.batch([a, b], 5))
    np.testing.assert_array_equal(batches[0][1], labels * 2)


def test_batch_join_reads_every_record_once(tfrecord_files):
    paths, records = tfrecord_files
    with tc.legacy_graph():
        queue = tc.string_input_producer(paths, num_epochs=1, shuffle=False)
        values = [tc.TFRecordReader().read(queue)[1] for _ in range(3)]
        got = flat_bytes(read_all(tc.batch_join(values, 5, allow_smaller_final_batch=True)))
    assert sorted(got) == sorted(records)


def test_shuffle_batch_join_with_dicts(tfrecord_files):
    paths, records = tfrecord_files
    with tc.legacy_graph():
        queue = tc.string_input_producer(paths, num_epochs=1, shuffle=True, seed=1)
        values = [{"v": tc.TFRecordReader().read(queue)[1]} for _ in range(2)]
        batched = tc.shuffle_batch_join(values, 4, capacity=16, min_after_dequeue=4, seed=2,
                                        allow_smaller_final_batch=True)
        got = flat_bytes(b["v"] for b in read_all(batched))
    assert sorted(got) == sorted(records)


@pytest.mark.parametrize("structure", ["tensor", "list", "dict"])
def test_prefetch_queue_round_trips_structures(structure):
    with tc.legacy_graph():
        row = tc.input_producer(tf.range(8), num_epochs=1, shuffle=False).dequeue()
        batched = {"tensor": lambda: tc.batch(row, 4),
                   "list": lambda: tc.batch([row, row + 100], 4),
                   "dict": lambda: tc.batch({"x": row, "y": row + 100}, 4)}[structure]()
        out = tc.prefetch_queue(batched, capacity=2).dequeue()
        got = read_all(out)
    if structure == "tensor":
        assert ids_of(got) == list(range(8))
    elif structure == "list":
        assert ids_of(b[0] for b in got) == list(range(8))
        assert ids_of(b[1] for b in got) == list(range(100, 108))
    else:
        assert ids_of(b["y"] for b in got) == list(range(100, 108))


# ------------------------------------------------------------ graph-build validation

def assert_config_error(excinfo, argument, *fragments):
    error = excinfo.value
    assert isinstance(error, ValueError)
    assert error.argument == argument
    for fragment in fragments:
        assert fragment in str(error), str(error)


def test_empty_file_list_is_rejected():
    with tc.legacy_graph(), pytest.raises(PipelineConfigError) as excinfo:
        tc.string_input_producer([])
    assert_config_error(excinfo, "string_tensor", "is empty", "at least one file")


def read_error(names, make_reader=tc.TFRecordReader):
    """The error raised when a reader is connected to a queue of ``names``: only then
    are they known to be files (TF1 also queues strings that are not)."""
    with tc.legacy_graph():
        queue = tc.string_input_producer(names)
        reader = make_reader()
        with pytest.raises(PipelineConfigError) as excinfo:
            reader.read(queue)
    return excinfo


def test_glob_matching_nothing_is_rejected(tmp_path):
    pattern = str(tmp_path / "train-*.tfrecord")
    excinfo = read_error([pattern])
    assert_config_error(excinfo, "string_tensor", pattern, "matches no file",
                        "TFRecordReader reads file names from this queue")
    assert excinfo.value.path == pattern


def test_glob_is_expanded_sorted(tfrecord_files, tmp_path):
    paths, records = tfrecord_files
    got = reader_values(tc.TFRecordReader, [str(tmp_path / "part-*.tfrecord")])
    assert got == records


def test_missing_file_is_rejected(tfrecord_files, tmp_path):
    paths, _ = tfrecord_files
    missing = str(tmp_path / "nope.tfrecord")
    excinfo = read_error(paths + [missing])
    assert_config_error(excinfo, "string_tensor", "string_tensor[3]", missing, "does not exist")


def test_directory_is_rejected(tmp_path):
    excinfo = read_error([str(tmp_path)], tc.WholeFileReader)
    assert_config_error(excinfo, "string_tensor", "is a directory",
                        "WholeFileReader reads file names")


@pytest.mark.parametrize("capacity, min_after_dequeue", [(10, 10), (5, 10)])
def test_shuffle_capacity_must_exceed_min_after_dequeue(capacity, min_after_dequeue):
    with tc.legacy_graph(), pytest.raises(PipelineConfigError) as excinfo:
        tc.shuffle_batch(tf.constant(1), 2, capacity=capacity, min_after_dequeue=min_after_dequeue)
    assert_config_error(excinfo, "capacity", f"capacity={capacity}",
                        f"min_after_dequeue={min_after_dequeue}")
    assert excinfo.value.expected == f"capacity > {min_after_dequeue}"


@pytest.mark.parametrize("batch_size", [0, -3, 2.5])
def test_non_positive_batch_size_is_rejected(batch_size):
    with tc.legacy_graph(), pytest.raises(PipelineConfigError) as excinfo:
        tc.batch(tf.constant(1), batch_size)
    assert_config_error(excinfo, "batch_size", repr(batch_size), "positive integer")


def test_zero_num_epochs_is_rejected(tfrecord_files):
    with tc.legacy_graph(), pytest.raises(PipelineConfigError) as excinfo:
        tc.string_input_producer(tfrecord_files[0], num_epochs=0)
    assert_config_error(excinfo, "num_epochs", "positive integer")


def test_fixed_length_record_size_must_divide_file(tmp_path):
    good = tmp_path / "good.bin"
    good.write_bytes(bytes(2 + 3 * 10))
    bad = tmp_path / "bad.bin"
    bad.write_bytes(bytes(2 + 3 * 10 + 4))
    with tc.legacy_graph():
        queue = tc.string_input_producer([str(good), str(bad)])
        reader = tc.FixedLengthRecordReader(10, header_bytes=2)
        with pytest.raises(PipelineConfigError) as excinfo:
            reader.read(queue)
    assert_config_error(excinfo, "record_bytes", str(bad), "36 bytes", "record_bytes=10",
                        "expected a size of 32 or 42")
    assert excinfo.value.path == str(bad)


def test_join_needs_a_list():
    with tc.legacy_graph(), pytest.raises(PipelineConfigError) as excinfo:
        tc.batch_join([], 2)
    assert_config_error(excinfo, "tensors_list", "non-empty list")


def test_queue_apis_explain_eager_mode(tfrecord_files):
    with pytest.raises(RuntimeError, match="legacy_graph"):
        tc.string_input_producer(tfrecord_files[0])
    with pytest.raises(RuntimeError, match="legacy_graph"):
        tc.TFRecordReader()


# ------------------------------------------------------------ sharding

def test_shard_files_is_disjoint_complete_and_deterministic(tmp_path):
    for i in range(7):
        (tmp_path / f"s-{i}.tfrecord").write_bytes(b"")
    pattern = str(tmp_path / "s-*.tfrecord")
    shares = [tc.shard_files(pattern, 3, w) for w in range(3)]
    assert shares == [tc.shard_files([pattern], 3, w) for w in range(3)]
    assert sorted(sum(shares, [])) == sorted(str(p) for p in tmp_path.iterdir())
    assert [len(s) for s in shares] == [3, 2, 2]


def test_shard_files_validates(tmp_path):
    (tmp_path / "only.tfrecord").write_bytes(b"")
    only = str(tmp_path / "only.tfrecord")
    with pytest.raises(PipelineConfigError) as excinfo:
        tc.shard_files([only], 2, 0)
    assert_config_error(excinfo, "num_workers", "1 file(s) cannot be shared by 2 workers")
    with pytest.raises(PipelineConfigError) as excinfo:
        tc.shard_files([only], 1, 1)
    assert_config_error(excinfo, "worker_index", "worker_index must be an integer in [0, 1), got 1")


def test_batches_larger_than_capacity_are_accepted_and_delivered():
    # Looks like a deadlock, but TF 2.21 queues dequeue incrementally: TF1 accepted it.
    with tc.legacy_graph():
        row = tc.input_producer(tf.range(40), num_epochs=1, shuffle=False).dequeue()
        assert ids_of(read_all(tc.batch(row, 16, capacity=8))) == list(range(32))
    with tc.legacy_graph():
        row = tc.input_producer(tf.range(40), num_epochs=1, shuffle=False).dequeue()
        got = ids_of(read_all(tc.shuffle_batch(row, 16, capacity=20, min_after_dequeue=10,
                                               seed=1, allow_smaller_final_batch=True)))
    assert sorted(got) == list(range(40))


@pytest.mark.parametrize("tensor_list, fragment", [
    ([], "tensor_list is empty"),
    ([np.arange(3), np.arange(4)], "different first dimensions [3, 4]"),
    ([np.zeros([0, 2])], "has no rows (first dimension 0) and num_epochs=None"),
])
def test_slice_input_producer_validates_its_tensors(tensor_list, fragment):
    with tc.legacy_graph(), pytest.raises(PipelineConfigError) as excinfo:
        tc.slice_input_producer(tensor_list)
    assert_config_error(excinfo, "tensor_list", fragment)


@pytest.mark.parametrize("input_tensor, fragment", [
    (5, "is a scalar"), (np.zeros([0, 3]), "has no rows"),
])
def test_input_producer_needs_rows(input_tensor, fragment):
    with tc.legacy_graph(), pytest.raises(PipelineConfigError) as excinfo:
        tc.input_producer(input_tensor)
    assert_config_error(excinfo, "input_tensor", fragment)


def test_fixed_length_reader_rejects_negative_header():
    with tc.legacy_graph(), pytest.raises(PipelineConfigError) as excinfo:
        tc.FixedLengthRecordReader(10, header_bytes=-1)
    assert_config_error(excinfo, "header_bytes", "non-negative integer or None, got -1")


def test_prefetch_queue_validates_its_arguments():
    with tc.legacy_graph(), pytest.raises(PipelineConfigError) as excinfo:
        tc.prefetch_queue([])
    assert_config_error(excinfo, "tensors", "tensors is empty")
    with tc.legacy_graph(), pytest.raises(PipelineConfigError) as excinfo:
        tc.prefetch_queue(tf.constant([1]), num_threads=0)
    assert_config_error(excinfo, "num_threads", "positive integer, got 0")
