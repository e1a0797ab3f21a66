"""to_tf_data(fetches): each classic queue pattern lowered to tf.data and compared with
its queue version (tc.compare without a reference), the readable plan, and the refusals."""

import os
import pathlib

import numpy as np
import pytest
from slim_data import get_split_factory, legacy_items, make_examples, write_slim_files

from tf1compat.cifar10 import encode_png
from tf1compat.errors import LoweringError
from tf1compat.records.example import make_example
from tf1compat.records.tfrecord import HEADER_SIZE, framed_size, write_records

tf = pytest.importorskip("tensorflow")
import tf1compat as tc  # noqa: E402  (after the skip: needs TensorFlow)

pytestmark = [pytest.mark.tf, pytest.mark.usefixtures("no_thread_leaks")]
v1 = tf.compat.v1

FEATURES = {"id": tf.io.FixedLenFeature([], tf.int64),
            "x": tf.io.FixedLenFeature([3], tf.float32)}


@pytest.fixture
def tfrecords(tmp_path, rng):
    """Three TFRecord files of 7, 5 and 9 Examples {id, x}, ids 0..20."""
    paths, start = [], 0
    for index, count in enumerate((7, 5, 9)):
        path = str(tmp_path / f"part-{index}.tfrecord")
        write_records(path, [make_example({"id": start + i, "x": rng.random(3)})
                             for i in range(count)])
        paths.append(path)
        start += count
    return paths


def parsed(paths, **producer):
    """``(key, example)`` of the classic read + parse_single_example."""
    producer = {"num_epochs": 1, "shuffle": False, **producer}
    key, value = tc.TFRecordReader().read(tc.string_input_producer(paths, **producer))
    return key, tf.io.parse_single_example(value, FEATURES)


def assert_equal_to_own_lowering(fetches, *, ordered, count):
    report = tc.compare(fetches)
    assert report.equal, report
    assert report.ordered is ordered
    assert report.legacy_count == report.reference_count == count
    return report


def ids_of(batches):
    return [int(i) for batch in batches for i in batch["id"]]


# ------------------------------------------------------------ patterns

def test_one_thread_in_order_with_structure_dtypes_and_batch_shapes(tfrecords):
    with tc.legacy_graph():
        _, example = parsed(tfrecords)
        batch = tc.batch(example, 4, allow_smaller_final_batch=True)
        dataset = tc.to_tf_data(batch)
        assert dataset.element_spec == {"id": tf.TensorSpec([None], tf.int64),
                                        "x": tf.TensorSpec([None, 3], tf.float32)}
        assert tc.describe_lowering(batch) == (
            "3 files, 1 epoch, in order -> TFRecordDataset -> batch(4, keep remainder) "
            "-> map(vectorized: 1 op: ParseExampleV2) -> prefetch(autotune); "
            "not cached: the files are read once (1 epoch)")
        assert_equal_to_own_lowering(batch, ordered=True, count=21)
    assert ids_of(dataset) == list(range(21))          # usable eagerly, outside the graph
    assert [len(b["id"]) for b in dataset] == [4, 4, 4, 4, 4, 1]


def test_read_plan_is_the_graphs_own_order_before_vectorizing_and_caching(tfrecords):
    from tf1compat.migrate.lowering import read_plan

    with tc.legacy_graph():
        _, example = parsed(tfrecords, num_epochs=2)
        batch = tc.shuffle_batch(example, 4, capacity=20, min_after_dequeue=8, num_threads=2)
        read = read_plan(batch, prune_features=False)
    assert read.plan.describe() == (
        "3 files, 2 epochs, in order -> TFRecordDataset -> map(1 op: ParseExampleV2, 2 threads "
        "-> parallel) -> "
        "shuffle(buffer 8, unseeded) -> batch(4, drop remainder)")
    assert read.batched and len(read.queues) == 2     # the producer's and the batch's
    parse = read.plan.chain()[2].function
    assert [t.op.type for t in parse.inputs] == ["ReaderReadV2"]


def test_two_epochs_of_seeded_shuffled_files_keep_tf1_order(tfrecords):
    with tc.legacy_graph():
        _, example = parsed(tfrecords, num_epochs=2, shuffle=True, seed=5)
        batch = tc.batch(example, 5, allow_smaller_final_batch=True)
        assert tc.describe_lowering(batch, cache=False).startswith(
            "3 files, 2 epochs, reshuffled every epoch (seed 5) -> TFRecordDataset")
        assert_equal_to_own_lowering(batch, ordered=True, count=42)
        dataset = tc.to_tf_data(batch)
    ids = ids_of(dataset)
    assert sorted(ids) == sorted(list(range(21)) * 2)
    assert ids[:21] != list(range(21))                  # the files were reshuffled


def test_shuffle_batch_with_threads_equal_as_multisets(tfrecords):
    with tc.legacy_graph():
        _, example = parsed(tfrecords, num_epochs=2, shuffle=True)
        batch = tc.shuffle_batch(example, 4, capacity=30, min_after_dequeue=10, num_threads=3,
                                 seed=7, allow_smaller_final_batch=True)
        plan = tc.describe_lowering(batch, cache=False)
        assert "reshuffled every epoch (unseeded)" in plan
        assert "2 threads" not in plan and "3 threads -> parallel" in plan
        assert plan.endswith("-> shuffle(buffer 10, seed 7) -> batch(4, keep remainder) -> "
                             "map(vectorized: 1 op: ParseExampleV2, 3 threads -> parallel) "
                             "-> prefetch(autotune); not cached: caching is off "
                             "(TF1COMPAT_CACHE_BUDGET=off, --no-cache or cache=False)")
        assert_equal_to_own_lowering(batch, ordered=False, count=42)
        with pytest.raises(ValueError, match="this pipeline's order depends on thread timing "
                           "or shuffling, .* pass ordered=True to compare in order"):
            tc.compare(batch, rtol=1e-6)


def test_the_remainder_is_dropped_as_tf1_drops_it(tfrecords):
    with tc.legacy_graph():
        _, example = parsed(tfrecords)
        batch = tc.batch(example, 4)
        assert "batch(4, drop remainder)" in tc.describe_lowering(batch)
        assert_equal_to_own_lowering(batch, ordered=True, count=20)
        dataset = tc.to_tf_data(batch)
    assert [len(b["id"]) for b in dataset] == [4] * 5


def test_batch_join_of_readers_interleaves_equal_as_multisets(tfrecords):
    with tc.legacy_graph():
        queue = tc.string_input_producer(tfrecords, num_epochs=1, shuffle=False)
        examples = [tf.io.parse_single_example(tc.TFRecordReader().read(queue)[1], FEATURES)
                    for _ in range(3)]
        batch = tc.batch_join(examples, 4, allow_smaller_final_batch=True)
        assert tc.describe_lowering(batch) == (
            "3 files, 1 epoch, in order -> interleave(3 readers: TFRecordDataset -> "
            "map(1 op: ParseExampleV2)) -> batch(4, keep remainder) -> prefetch(autotune); "
            "not cached: the files are read once (1 epoch)")
        assert_equal_to_own_lowering(batch, ordered=False, count=21)


def test_tf_compat_v1_shuffle_batch_join_and_input_producer(tfrecords):
    with tc.legacy_graph(seed=2):
        queue = v1.train.string_input_producer(tfrecords, num_epochs=1)
        examples = [tf.io.parse_single_example(v1.TFRecordReader().read(queue)[1], FEATURES)
                    for _ in range(2)]
        batch = v1.train.shuffle_batch_join(examples, 4, capacity=20, min_after_dequeue=6,
                                            allow_smaller_final_batch=True)
        plan = tc.describe_lowering(batch)
        assert "interleave(2 readers: TFRecordDataset -> map(" in plan
        assert "-> shuffle(buffer 6, graph seed 2, op seed " in plan
        assert_equal_to_own_lowering(batch, ordered=False, count=21)

        rows = v1.train.input_producer(np.arange(12).reshape(6, 2), num_epochs=2, shuffle=False)
        batch = v1.train.batch([rows.dequeue() * 3], 5, allow_smaller_final_batch=True)
        assert tc.describe_lowering(batch).startswith("6 values, 2 epochs, in order -> batch(5")
        assert_equal_to_own_lowering(batch, ordered=True, count=12)


def test_enqueue_many_dynamic_pad_and_separate_producers(tmp_path, tfrecords):
    lines = tmp_path / "lines.txt"
    lines.write_text("".join("ab" * (i % 4) + "\n" for i in range(9)))
    with tc.legacy_graph():
        _, value = tc.TFRecordReader().read(tc.string_input_producer(tfrecords, num_epochs=1,
                                                                    shuffle=False))
        x = tf.io.parse_single_example(value, FEATURES)["x"]
        pairs = tf.stack([x, x * 2.0])                    # two rows per record
        batch = tc.batch(pairs, 5, enqueue_many=True, allow_smaller_final_batch=True)
        assert "-> unbatch -> batch(5, keep remainder)" in tc.describe_lowering(batch)
        assert_equal_to_own_lowering(batch, ordered=True, count=42)

        _, line = tc.TextLineReader().read(tc.string_input_producer([str(lines)], num_epochs=1,
                                                                    shuffle=False))
        padded = tc.batch(tf.io.decode_raw(line, tf.uint8), 4, dynamic_pad=True,
                          allow_smaller_final_batch=True)
        assert "padded_batch(4, keep remainder)" in tc.describe_lowering(padded)
        assert_equal_to_own_lowering(padded, ordered=True, count=9)

        first = parsed(tfrecords[:1])[1]
        second = parsed(tfrecords[1:])[1]
        joined = tc.batch_join([first, second], 4, allow_smaller_final_batch=True)
        assert tc.describe_lowering(joined).startswith("round-robin(1 file, 1 epoch, in order")
        assert_equal_to_own_lowering(joined, ordered=False, count=21)


def test_shuffle_batch_of_values_enqueued_many_keeps_its_shuffle():
    with tc.legacy_graph():
        values = tf.compat.v1.train.limit_epochs(tf.constant(np.arange(20)), num_epochs=1)
        batch = tc.shuffle_batch([values], 5, capacity=30, min_after_dequeue=10,
                                 enqueue_many=True, seed=3, allow_smaller_final_batch=True)
        plan = tc.describe_lowering(batch)
        assert plan.startswith("20 values, 1 epoch, in order -> shuffle(buffer 10, seed "), plan
        report = tc.compare(batch)
    assert report.equal and not report.ordered and report.legacy_count == 20, report


def test_match_filenames_once(tfrecords, tmp_path):
    with tc.legacy_graph():
        files = v1.train.match_filenames_once(str(tmp_path / "part-*.tfrecord"))
        _, value = tc.TFRecordReader().read(
            tc.string_input_producer(files, num_epochs=2, shuffle=False))
        batch = tc.batch(tf.io.parse_single_example(value, FEATURES), 4)
        assert tc.describe_lowering(batch).startswith("files, 2 epochs, in order -> ")
        assert_equal_to_own_lowering(batch, ordered=True, count=40)


def test_reader_key_used_downstream(tfrecords):
    with tc.legacy_graph():
        key, example = parsed(tfrecords)
        offset = tf.strings.to_number(tf.strings.split(key, ":")[-1], tf.int64)
        batch = tc.batch({"id": example["id"], "key": key, "offset": offset}, 3,
                         allow_smaller_final_batch=True)
        assert "TFRecordDataset with reader keys" in tc.describe_lowering(batch)
        assert_equal_to_own_lowering(batch, ordered=True, count=21)
        dataset = tc.to_tf_data(batch)
    first = next(iter(dataset))
    assert first["key"][1].numpy().decode().endswith(f"part-0.tfrecord:{first['offset'][1]}")


@pytest.mark.parametrize("drop_remainder", [False, True], ids=["keep", "drop"])
def test_reader_keys_batched_across_files_and_epochs_are_tf1s(tfrecords, drop_remainder):
    """Keys read straight into a batch are made per file in chunks, then rebatched:
    batches span files (7, 7, 5, 9 records: the first file twice in a row) as TF1's do."""
    with tc.legacy_graph():
        key, example = parsed(tfrecords[:1] + tfrecords)
        batch = tc.batch([key, example["id"]], 5, allow_smaller_final_batch=not drop_remainder)
        rule = "drop remainder" if drop_remainder else "keep remainder"
        assert f"TFRecordDataset with reader keys -> batch(5, {rule})" in \
            tc.describe_lowering(batch)
        assert_equal_to_own_lowering(batch, ordered=True, count=25 if drop_remainder else 28)


def test_reader_keys_through_a_shuffle_buffer_are_tf1s(tfrecords):
    """Keys of records read one by one (into a shuffle buffer): the same (key, id) pairs."""
    with tc.legacy_graph():
        key, example = parsed(tfrecords)
        batch = tc.shuffle_batch([key, example["id"]], 4, capacity=20, min_after_dequeue=6,
                                 seed=5, allow_smaller_final_batch=True)
        assert "TFRecordDataset with reader keys -> shuffle(buffer 6" in \
            tc.describe_lowering(batch)
        assert_equal_to_own_lowering(batch, ordered=False, count=21)


def _ids_with_keys(path):
    key, example = parsed([path])
    return tc.batch([key, example["id"]], 3)


def _slim_ids(path):
    """Ids of slim's DatasetDataProvider, whose common queue passes (key, record) on."""
    from tf1compat import slim

    keys_to_features = {"id": tf.io.FixedLenFeature([], tf.int64)}
    dataset = slim.dataset.Dataset(
        data_sources=path, reader=v1.TFRecordReader, num_samples=10,
        decoder=slim.tfexample_decoder.TFExampleDecoder(
            keys_to_features, {"id": slim.tfexample_decoder.Tensor("id")}),
        items_to_descriptions={})
    provider = slim.dataset_data_provider.DatasetDataProvider(dataset, shuffle=False,
                                                                 num_epochs=1)
    return tc.batch(provider.get(["id"]), 3)


@pytest.mark.parametrize("pipeline", [_ids_with_keys, _slim_ids])
def test_a_damaged_record_read_with_keys_fails_with_its_offset(tmp_path, pipeline):
    """A damaged record fails the chunk of a batch's size it is read in: the batches of
    the chunks before it come first, then TensorFlow's error naming its offset."""
    path = str(tmp_path / "damaged.tfrecord")
    records = [make_example({"id": i, "x": np.zeros(3)}) for i in range(10)]
    write_records(path, records)
    offset = 7 * framed_size(len(records[0]))      # the eighth record's
    data = bytearray(open(path, "rb").read())
    data[offset + HEADER_SIZE] ^= 0xFF              # its data
    with open(path, "wb") as f:
        f.write(bytes(data))
    with tc.legacy_graph():
        fetches = pipeline(path)
        assert "with reader keys -> batch(3, drop remainder)" in tc.describe_lowering(fetches)
        dataset = tc.to_tf_data(fetches)
    delivered = []
    with pytest.raises(tf.errors.DataLossError,
                       match=f"corrupted record at {offset + HEADER_SIZE}"):
        for batch in dataset:
            delivered.extend(tf.nest.flatten(batch)[-1].numpy().tolist())
    assert delivered == list(range(6))


def test_gzip_tfrecords_with_keys(tmp_path):
    path = str(tmp_path / "data.tfrecord.gz")
    write_records(path, [b"a" * 5, b"bb" * 70, b""], compression="GZIP")
    with tc.legacy_graph():
        queue = tc.string_input_producer([path], num_epochs=1, shuffle=False)
        key, value = tc.TFRecordReader(options=tf.io.TFRecordOptions("GZIP")).read(queue)
        assert "TFRecordDataset(compression_type='GZIP')" in tc.describe_lowering([key, value])
        assert_equal_to_own_lowering([key, value], ordered=True, count=3)


def test_fixed_length_with_header_footer_and_hop(tmp_path):
    path = str(tmp_path / "records.bin")
    with open(path, "wb") as f:
        f.write(b"HEAD" + bytes(range(60)) + b"FOOT!")
    for hop_bytes in (None, 3):
        with tc.legacy_graph():
            queue = tc.string_input_producer([path, path], num_epochs=1, shuffle=False)
            reader = tc.FixedLengthRecordReader(6, header_bytes=4, footer_bytes=5,
                                                hop_bytes=hop_bytes)
            key, value = reader.read(queue)
            record = tf.reshape(tf.io.decode_raw(value, tf.uint8), [6])
            batch = tc.batch([key, record], 4, allow_smaller_final_batch=True)
            assert "FixedLengthRecordDataset(record_bytes=6, header_bytes=4, footer_bytes=5" \
                in tc.describe_lowering(batch)
            count = 2 * (10 if hop_bytes is None else 19)
            assert_equal_to_own_lowering(batch, ordered=True, count=count)


def test_text_lines_with_header_and_decode_csv(tmp_path):
    paths = []
    for index in range(2):
        path = tmp_path / f"table-{index}.csv"
        path.write_text("id,score,name\n# comment\n" + "".join(
            f"{index * 10 + i},{i * 0.5},n{i}\n" for i in range(6)) + "99,1.5,last")
        paths.append(str(path))
    with tc.legacy_graph():
        key, line = tc.TextLineReader(skip_header_lines=2).read(
            tc.string_input_producer(paths, num_epochs=1, shuffle=False))
        row = tf.io.decode_csv(line, [[0], [0.0], [""]])
        batch = tc.batch([key, *row], 5, allow_smaller_final_batch=True)
        assert "TextLineDataset(skip_header_lines=2) with reader keys" in \
            tc.describe_lowering(batch)
        assert_equal_to_own_lowering(batch, ordered=True, count=14)
        dataset = tc.to_tf_data(batch)
    keys = [k.decode() for b in dataset.as_numpy_iterator() for k in b[0]]
    assert keys[0].endswith("table-0.csv:3") and keys[-1].endswith("table-1.csv:9")


def test_whole_files_and_decode_png(tmp_path, rng):
    images = rng.integers(0, 256, (5, 6, 4, 3), dtype=np.uint8)
    for index, png in enumerate(encode_png(images)):
        (tmp_path / f"image-{index}.png").write_bytes(png)
    with tc.legacy_graph():
        queue = tc.string_input_producer([str(tmp_path / "image-*.png")], num_epochs=2,
                                         shuffle=False)
        filename, contents = tc.WholeFileReader().read(queue)
        image = tf.io.decode_png(contents, channels=3)
        image.set_shape([6, 4, 3])
        batch = tc.batch([filename, image], 3, allow_smaller_final_batch=True)
        assert "read_file (whole files) with reader keys" in tc.describe_lowering(batch)
        assert_equal_to_own_lowering(batch, ordered=True, count=10)
        dataset = tc.to_tf_data(batch)
    lowered = np.concatenate([b[1] for b in dataset.as_numpy_iterator()])
    np.testing.assert_array_equal(lowered, np.concatenate([images, images]))


def test_slice_input_producer_over_arrays(rng):
    features = rng.random((23, 4)).astype(np.float32)
    labels = np.arange(23)
    with tc.legacy_graph():
        feature, label = tc.slice_input_producer([features, labels], num_epochs=2, seed=3)
        batch = tc.batch([feature * 2.0, label], 5, allow_smaller_final_batch=True)
        assert tc.describe_lowering(batch).startswith(
            "23 values, 2 epochs, reshuffled every epoch (seed 3) -> map(3 ops: GatherV2, Mul) "
            "-> batch(5, keep remainder)")
        assert_equal_to_own_lowering(batch, ordered=True, count=46)
        dataset = tc.to_tf_data(batch)
    lowered = list(dataset.as_numpy_iterator())
    got_labels = np.concatenate([b[1] for b in lowered])
    np.testing.assert_array_equal(np.concatenate([b[0] for b in lowered]),
                                  features[got_labels] * 2.0)


def test_slim_provider_batch_and_prefetch_queue(tmp_path, rng):
    pattern = write_slim_files(str(tmp_path), make_examples(rng, 26))
    get_split = get_split_factory(pattern, 26)
    for num_readers, ordered in ((1, True), (3, False)):
        with tc.legacy_graph():
            items = legacy_items(get_split, shuffle=False, num_readers=num_readers)
            images, labels = tc.batch([items["image"], items["label"]], 4,
                                      allow_smaller_final_batch=True)
            queue = tc.prefetch_queue([images, labels], capacity=2, dynamic_pad=True)
            fetches = queue.dequeue()
            plan = tc.describe_lowering(fetches)
            assert ("-> batch(4, keep remainder) -> map(vectorized when a batch takes one "
                    "branch of its 2 conds, else per batch, map_fn: ") in plan, plan
            assert plan.endswith(") -> prefetch(2); not cached: the files are read once "
                                 "(1 epoch)"), plan
            assert ("interleave(3 readers" in plan) is (num_readers == 3)
            assert_equal_to_own_lowering(fetches, ordered=ordered, count=26)


@pytest.mark.parametrize("png_every", [None, 7])
def test_slim_raw_images_decode_on_the_batch_when_no_example_of_it_is_png(
        tmp_path, rng, png_every):
    """slim's Image handler picks its decoder with a cond on the record's format: a
    batch of raw images only decodes as one, batches holding a PNG go one by one."""
    examples = make_examples(rng, 26)

    def image_format(index):
        return b"png" if png_every and index % png_every == 3 else b"raw"
    pattern = write_slim_files(str(tmp_path), examples, num_files=1, image_format=image_format)
    with tc.legacy_graph():
        items = legacy_items(get_split_factory(pattern, 26), shuffle=False)
        batch = tc.batch([items["image"], items["label"]], 4, allow_smaller_final_batch=True)
        assert ("-> batch(4, keep remainder) -> map(vectorized when a batch takes one branch "
                "of its 2 conds, else per batch, map_fn: ") in tc.describe_lowering(batch)
        assert_equal_to_own_lowering(batch, ordered=True, count=26)
        dataset = tc.to_tf_data(batch)
    got = np.concatenate([images for images, _ in dataset.as_numpy_iterator()])
    np.testing.assert_array_equal(got, np.stack([e["image"] for e in examples]))


def test_a_cond_with_exact_branches_runs_each_on_the_batches_that_all_take_it(tfrecords):
    with tc.legacy_graph():
        _, example = parsed(tfrecords)
        ident = example["id"]
        value = tf.cond(ident < 6, lambda: ident * 3, lambda: ident - 100)
        batch = tc.batch([value, ident], 4, allow_smaller_final_batch=True)
        assert "map(vectorized when a batch takes one branch of its 1 cond, else per batch, " \
            "map_fn: " in tc.describe_lowering(batch)
        assert_equal_to_own_lowering(batch, ordered=True, count=21)
        dataset = tc.to_tf_data(batch)
    values = np.concatenate([v for v, _ in dataset.as_numpy_iterator()])
    np.testing.assert_array_equal(values, [i * 3 if i < 6 else i - 100 for i in range(21)])


def test_a_decode_of_a_string_made_inside_a_branch_checks_it_once_the_batch_takes_it(
        tmp_path, rng):
    """The raw branch reshapes the string it decodes: the batch's strings are made and
    checked inside the branch once every example takes it. Batches: raw, PNG, mixed,
    raw; the ways after the raw version are traced once each (one loop for the PNG
    version, one for the example-by-example fallback)."""
    images = rng.integers(0, 256, (13, 4, 4, 3), dtype=np.uint8)
    is_png = [4 <= index < 8 or index == 9 for index in range(13)]
    path = str(tmp_path / "images.tfrecord")
    write_records(path, [
        make_example({"image": png if png_record else image.tobytes(),
                      "format": b"png" if png_record else b"raw", "id": index})
        for index, (image, png, png_record) in enumerate(
            zip(images, encode_png(images), is_png, strict=True))])
    with tc.legacy_graph():
        _, value = tc.TFRecordReader().read(
            tc.string_input_producer([path], num_epochs=1, shuffle=False))
        example = tf.io.parse_single_example(value, {
            "image": tf.io.FixedLenFeature([], tf.string),
            "format": tf.io.FixedLenFeature([], tf.string),
            "id": tf.io.FixedLenFeature([], tf.int64)})
        image = tf.cond(
            tf.equal(example["format"], "raw"),
            lambda: tf.reshape(tf.io.decode_raw(tf.reshape(example["image"], []), tf.uint8),
                               [4, 4, 3]),
            lambda: tf.reshape(tf.io.decode_png(example["image"], channels=3), [4, 4, 3]))
        batch = tc.batch([image, example["id"]], 4, allow_smaller_final_batch=True)
        assert ("map(vectorized when a batch takes one branch of its 1 cond, else per batch, "
                "map_fn: ") in tc.describe_lowering(batch)
        assert_equal_to_own_lowering(batch, ordered=True, count=13)
        dataset = tc.to_tf_data(batch)
    got = np.concatenate([images for images, _ in dataset.as_numpy_iterator()])
    np.testing.assert_array_equal(got, images)
    library = v1.GraphDef.FromString(dataset._as_serialized_graph().numpy()).library
    loops = [node for function in library.function for node in function.node_def
             if node.op in ("While", "StatelessWhile")]
    assert len(loops) == 2

def test_a_failing_assert_in_a_batch_run_on_the_batch_raises_its_message(tfrecords):
    with tc.legacy_graph():
        _, example = parsed(tfrecords)
        check = tf.debugging.Assert(example["id"] < 13, ["id too large:", example["id"]])
        with tf.control_dependencies([check]):
            ident = tf.identity(example["id"])
        batch = tc.batch([ident], 4, allow_smaller_final_batch=True)
        assert "map(vectorized when a batch takes one branch of its 1 cond" in \
            tc.describe_lowering(batch)
        dataset = tc.to_tf_data(batch)
    delivered = []
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"id too large:.*\b13\b"):
        for ids in dataset:
            delivered.append(ids.numpy().tolist())
    assert delivered == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]]


def test_tutorial_inputs_with_per_batch_ops(tmp_path):
    from tf1compat import cifar10

    source = cifar10.make_synthetic(str(tmp_path), 20, 10, seed=2)
    with tc.legacy_graph():
        images, labels = cifar10.inputs(True, source, batch_size=4, num_epochs=1)
        plan = tc.describe_lowering((images, labels))
        assert plan.startswith("1 file, 1 epoch, in order -> FixedLengthRecordDataset(")
        assert plan.endswith("batch(4, keep remainder) -> map(1 op: Reshape) -> "
                             "prefetch(autotune); not cached: the files are read once (1 epoch)")
        assert_equal_to_own_lowering((images, labels), ordered=True, count=10)


def test_seeded_random_preprocessing_gives_tf1_values(tmp_path):
    from tf1compat import cifar10

    source = cifar10.make_synthetic(str(tmp_path), 12, 2, seed=2)
    files = [os.path.join(source, f"data_batch_{i}.bin") for i in range(1, 6)]
    with tc.legacy_graph(seed=4):
        queue = tc.string_input_producer(files, num_epochs=2, seed=1)
        _, value = tc.FixedLengthRecordReader(1 + 32 * 32 * 3).read(queue)
        image = tf.reshape(tf.io.decode_raw(value, tf.uint8)[1:], [32, 32, 3])
        image = tf.image.random_flip_left_right(tf.image.random_crop(image, [24, 24, 3]))
        image = tf.image.random_brightness(tf.cast(image, tf.float32), 63)
        batch = tc.batch(image, 5, allow_smaller_final_batch=True)
        assert "in order: stateful Random" in tc.describe_lowering(batch)
        assert_equal_to_own_lowering(batch, ordered=True, count=24)


@pytest.mark.parametrize("reader, threads, shuffled_first", [
    ("fixed_length", 4, True), ("fixed_length", 1, False), ("tfrecord", 4, False)])
def test_random_distortions_on_threads_run_after_a_shuffle_of_records_of_known_size(
        tmp_path, reader, threads, shuffled_first):
    """Uncached, a shuffle buffer after random crops TF1 ran on several threads (drawn
    in no fixed order) holds the fixed-length records (3,073 bytes) instead of the
    crops (24x24x3 float32 and a label: 6,916 bytes), the map running after it; on one
    thread (TF1's order of draws) and over TFRecords (a record's size is known only
    when read) it stays after the map. Each epoch gives every record once, cropped."""
    from tf1compat import cifar10

    source = cifar10.make_synthetic(str(tmp_path), 20, 2, seed=3)
    files = [os.path.join(source, f"data_batch_{i}.bin") for i in range(1, 6)]
    records = [pathlib.Path(f).read_bytes()[i:i + 3073] for f in files
               for i in range(0, 4 * 3073, 3073)]
    if reader == "tfrecord":
        files = [str(tmp_path / "records.tfrecord")]
        write_records(files[0], records)
    with tc.legacy_graph():
        queue = tc.string_input_producer(files, num_epochs=2)
        read = (tc.TFRecordReader() if reader == "tfrecord"
                else tc.FixedLengthRecordReader(1 + 32 * 32 * 3))
        _, value = read.read(queue)
        values = tf.io.decode_raw(value, tf.uint8)
        image = tf.transpose(tf.reshape(values[1:], [3, 32, 32]), [1, 2, 0])
        crop = tf.image.random_crop(tf.cast(image, tf.float32), [24, 24, 3])
        label = tf.cast(values[0], tf.int32)
        batch = tc.shuffle_batch([crop, label], 4, capacity=30, min_after_dequeue=12,
                                 num_threads=threads, allow_smaller_final_batch=True)
        plan = tc.describe_lowering(batch, cache=False)
        dataset = tc.to_tf_data(batch, cache=False)
    order = ["shuffle(buffer 12, unseeded)", "map(", "batch(4, keep remainder)"]
    if not shuffled_first:
        order[:2] = order[1::-1]
    positions = [plan.index(step) for step in order]
    assert positions == sorted(positions), plan
    crops = [(int(label), crop) for crops, labels in dataset.as_numpy_iterator()
             for crop, label in zip(crops, labels, strict=True)]
    assert sorted(label for label, _ in crops) == sorted([record[0] for record in records] * 2)
    sources = {}
    for record in records:
        sources.setdefault(record[0], []).append(
            np.frombuffer(record[1:], np.uint8).reshape(3, 32, 32).transpose(1, 2, 0))
    for label, crop in crops:
        assert any((crop == image[r:r + 24, c:c + 24]).all() for image in sources[label]
                   for r in range(9) for c in range(9))


# ------------------------------------------------------------ batch-then-parse

def test_parse_and_decode_run_on_batches_with_the_same_values(tmp_path, rng):
    path = str(tmp_path / "images.tfrecord")
    images = rng.integers(0, 256, (11, 4, 4, 3), dtype=np.uint8)
    write_records(path, [make_example({"raw": image.tobytes(), "label": index})
                         for index, image in enumerate(images)])
    with tc.legacy_graph():
        _, value = tc.TFRecordReader().read(tc.string_input_producer([path], num_epochs=1))
        example = tf.io.parse_single_example(value, {
            "raw": tf.io.FixedLenFeature([], tf.string),
            "label": tf.io.FixedLenFeature([], tf.int64)})
        image = tf.reshape(tf.io.decode_raw(example["raw"], tf.uint8), [4, 4, 3])
        image = tf.cast(image[:, ::-1], tf.int32) * 3 - 128
        batch = tc.batch([image, example["label"]], 4, allow_smaller_final_batch=True)
        assert "-> batch(4, keep remainder) -> map(vectorized: 7 ops: ParseExampleV2, " \
               "DecodeRaw, Reshape, ...)" in tc.describe_lowering(batch)
        assert_equal_to_own_lowering(batch, ordered=False, count=11)
        dataset = tc.to_tf_data(batch)
    lowered = list(dataset.as_numpy_iterator())
    order = np.concatenate([labels for _, labels in lowered])
    np.testing.assert_array_equal(np.concatenate([b for b, _ in lowered]),
                                  images[order][:, :, ::-1].astype(np.int32) * 3 - 128)


def test_strings_of_different_lengths_are_decoded_one_by_one(tmp_path):
    path = tmp_path / "lines.txt"
    path.write_text("".join("x" * (4 + i % 3) + "\n" for i in range(10)))
    with tc.legacy_graph():
        _, line = tc.TextLineReader().read(
            tc.string_input_producer([str(path)], num_epochs=1, shuffle=False))
        head = tf.reshape(tf.io.decode_raw(line, tf.uint8)[:4], [4]) + 1
        batch = tc.batch(head, 3, allow_smaller_final_batch=True)
        assert "map(vectorized: 4 ops: DecodeRaw, StridedSlice, Reshape, ...)" in \
            tc.describe_lowering(batch)
        assert_equal_to_own_lowering(batch, ordered=True, count=10)


def png_batches(path, pngs, flip_from=None):
    """Batches of 4 ``[image, id]`` from records ``{raw: png, id}`` written to ``path``:
    decode_png and reshape (and, with ``flip_from``, a tf.cond flipping the images
    of ids from ``flip_from`` on)."""
    write_records(path, [make_example({"raw": png, "id": index})
                         for index, png in enumerate(pngs)])
    _, value = tc.TFRecordReader().read(
        tc.string_input_producer([path], num_epochs=1, shuffle=False))
    example = tf.io.parse_single_example(value, {
        "raw": tf.io.FixedLenFeature([], tf.string),
        "id": tf.io.FixedLenFeature([], tf.int64)})
    image = tf.reshape(tf.io.decode_png(example["raw"], channels=3), [5, 4, 3])
    if flip_from is not None:
        image = tf.cond(example["id"] < flip_from, lambda: image, lambda: image[::-1])
    return tc.batch([image, example["id"]], 4, allow_smaller_final_batch=True)


def test_png_decoding_and_conds_run_per_batch_example_by_example(tmp_path, rng):
    """Batches of ids 0-3 and 8 take one branch each, the batch of ids 4-7 both."""
    images = rng.integers(0, 256, (9, 5, 4, 3), dtype=np.uint8)
    with tc.legacy_graph():
        batch = png_batches(str(tmp_path / "images.tfrecord"), encode_png(images),
                            flip_from=6)
        assert ("-> batch(4, keep remainder) -> map(per batch, map_fn, one branch of its 1 "
                "cond when the batch takes it: ") in tc.describe_lowering(batch)
        assert_equal_to_own_lowering(batch, ordered=True, count=9)
        dataset = tc.to_tf_data(batch)
    got = np.concatenate([b for b, _ in dataset.as_numpy_iterator()])
    np.testing.assert_array_equal(got[:6], images[:6])
    np.testing.assert_array_equal(got[6:], images[6:, ::-1])


def test_a_bad_image_in_a_batch_decoded_example_by_example_raises_tensorflows_error(
        tmp_path, rng):
    pngs = encode_png(rng.integers(0, 256, (9, 5, 4, 3), dtype=np.uint8))
    pngs[6] = b"not a png"
    with tc.legacy_graph():
        batch = png_batches(str(tmp_path / "images.tfrecord"), pngs)
        assert "map(per batch, map_fn: " in tc.describe_lowering(batch)
        dataset = tc.to_tf_data(batch)
    delivered = []
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"(?s)Unknown image file format.*DecodePng"):
        for _, ids in dataset:
            delivered.append(ids.numpy().tolist())
    assert delivered == [[0, 1, 2, 3]]      # the batch holding record 6 is not delivered


def test_float_arithmetic_random_ops_and_unshaped_outputs_stay_per_example(tfrecords):
    with tc.legacy_graph():
        _, example = parsed(tfrecords)
        mean = tf.reduce_mean(example["x"])
        noisy = example["x"] + tf.random.uniform([3], seed=1)
        unshaped = tf.boolean_mask(example["x"], example["x"] > 0.5)
        for value in (mean, noisy, example["x"] / 255.0, example["x"] * 0.5 - 1.0, unshaped):
            plan = tc.describe_lowering(tc.batch(value, 4, dynamic_pad=value is unshaped))
            assert "map(vectorized" not in plan and "map_fn" not in plan, plan
            assert plan.index("map(") < plan.index("batch("), plan


# ------------------------------------------------------------ inside the graph

def test_replaced_inside_the_graph_runs_without_queue_runners(tfrecords):
    from tf1compat.migrate.lowering import replace_with_tf_data

    with tc.legacy_graph():
        _, example = parsed(tfrecords, num_epochs=2, shuffle=True, seed=4)
        batch = tc.batch(example, 4)
    with tc.SessionIterator(batch) as iterator:
        queued = list(iterator)
    with tc.legacy_graph() as graph:
        _, example = parsed(tfrecords, num_epochs=2, shuffle=True, seed=4)
        batch = replace_with_tf_data(tc.batch(example, 4))
        assert batch["x"].shape.as_list() == [4, 3]
        assert graph.get_collection(v1.GraphKeys.QUEUE_RUNNERS) == []
    for _ in range(2):                  # each session starts it anew
        with tc.SessionIterator(batch) as iterator:
            report = tc.compare(iterator, queued, legacy_batched=True, reference_batched=True)
        assert report.equal and report.legacy_count == 40, report


def test_replaced_inside_the_graph_needs_no_initializer(tfrecords):
    from tf1compat.migrate.lowering import replace_with_tf_data

    with tc.legacy_graph() as graph:
        _, example = parsed(tfrecords, num_epochs=None)   # TF1 needs no local init then
        batch = replace_with_tf_data(tc.batch(example, 8))
    with v1.Session(graph=graph) as session:
        session.run(v1.global_variables_initializer())
        ids = [i for _ in range(4) for i in session.run(batch)["id"]]
    assert ids == [*range(21), *range(11)]


def _py_func_pipeline(tfrecords, seed):
    """Ids plus a seeded numpy draw per example, made in a py_func: its values depend
    on the order of the calls (one runner thread calls it in record order)."""
    state = np.random.RandomState(seed)

    def augment(x):
        return (x + state.uniform(size=x.shape)).astype(np.float32)

    _, example = parsed(tfrecords, num_epochs=5)
    noisy = v1.py_func(augment, [example["x"]], tf.float32, stateful=True)
    noisy.set_shape([3])
    return tc.batch({"id": example["id"], "x": noisy}, 4, allow_smaller_final_batch=True)


def test_seeded_py_func_keeps_the_queue_values(tfrecords):
    with tc.legacy_graph():
        with tc.SessionIterator(_py_func_pipeline(tfrecords, seed=9)) as iterator:
            queued = np.concatenate([b["x"] for b in iterator])
    with tc.legacy_graph() as graph:        # kept alive: it holds the py_func
        batch = _py_func_pipeline(tfrecords, seed=9)
        assert "in order: stateful PyFunc" in tc.describe_lowering(batch)
        dataset = tc.to_tf_data(batch)
    lowered = np.concatenate([b["x"] for b in dataset.as_numpy_iterator()])
    assert graph.get_operations()
    assert queued.size == lowered.size == 5 * 21 * 3  # more than 100 values
    np.testing.assert_array_equal(lowered, queued)


def test_a_pipeline_read_outside_its_batching_call_has_its_runners_set_aside(tfrecords):
    """Its queues stay in the graph for what else reads them (run mode starts their
    runners for such a run); start_queue_runners finds none of them."""
    from tf1compat.migrate.lowering import replace_with_tf_data
    from tf1compat.pipeline.graph_model.index import graph_index, set_aside_runners

    with tc.legacy_graph() as graph:
        key, example = parsed(tfrecords)
        row = tf.strings.length(key, name="row_key_length")    # reads a record, if run
        batch = replace_with_tf_data(tc.batch(example, 4))
        assert batch["x"].op.type == "IteratorGetNext"
        assert graph.get_collection(v1.GraphKeys.QUEUE_RUNNERS) == []
        index = graph_index(graph)
        assert sorted(index.set_aside) == sorted(index.notes.queues_lowered) == [
            "batch/fifo_queue", "input_producer"]
        assert [r.queue.name for r in set_aside_runners(graph)] == [
            "input_producer", "batch/fifo_queue"]
        assert index.upstream([row])[1] == {"input_producer"}


# ------------------------------------------------------------ compare and arguments

def test_compare_splits_the_batches_of_a_session_iterator(tfrecords):
    with tc.legacy_graph():
        _, example = parsed(tfrecords)
        batch = tc.batch(example, 4, allow_smaller_final_batch=True)
    report = tc.compare(tc.SessionIterator(batch), tc.to_tf_data(batch).unbatch())
    assert report.equal and report.legacy_count == 21, report
    report = tc.compare(tc.SessionIterator(batch))
    assert report.equal and report.ordered and report.legacy_count == 21, report


def test_compare_finds_a_changed_pipeline(tfrecords):
    with tc.legacy_graph():
        _, example = parsed(tfrecords)
        batch = tc.batch(example, 4, allow_smaller_final_batch=True)
    changed = tc.to_tf_data(batch).map(lambda b: {**b, "id": b["id"] + 1})
    report = tc.compare(batch, changed, reference_batched=True)
    assert not report.equal
    assert report.first_mismatch.item == "id"


def test_fetches_take_no_slim_arguments(tfrecords):
    with tc.legacy_graph():
        batch = tc.batch(parsed(tfrecords)[1], 4)
        with pytest.raises(TypeError, match=r"\['num_epochs', 'shuffle'\] apply to a slim"):
            tc.to_tf_data(batch, shuffle=True, num_epochs=2)
        with pytest.raises(TypeError, match=r"\['num_epochs', 'seed'\] apply to a slim"):
            tc.to_tf_data(batch, num_epochs=None, seed=0)   # values that look falsy
    with pytest.raises(TypeError, match="without a reference, legacy must be the fetches"):
        tc.compare([{"a": np.zeros(2)}])


# ------------------------------------------------------------ refusals

def lowering_error(fetches):
    with pytest.raises(LoweringError) as caught:
        tc.to_tf_data(fetches)
    with pytest.raises(LoweringError):
        tc.compare(fetches)
    return caught.value


def test_placeholder_in_the_per_example_path_is_refused(tfrecords):
    with tc.legacy_graph():
        _, example = parsed(tfrecords)
        scale = v1.placeholder(tf.float32, [], name="scale")
        batch = tc.batch({"x": example["x"] * scale}, 4)
        error = lowering_error(batch)
    assert (error.op, error.op_type) == ("scale", "Placeholder")
    assert "queue-runner threads never feed it" in error.reason
    assert error.plan == "batch(4, drop remainder)"
    assert str(error).startswith("cannot lower op 'scale' (Placeholder) to tf.data: ")
    assert str(error).endswith("\nlowered downstream of it: " + error.plan)


def test_variable_in_the_per_example_path_is_refused(tfrecords):
    with tc.legacy_graph():
        _, example = parsed(tfrecords)
        mean = tf.Variable([0.5, 0.5, 0.5], name="mean")
        batch = tc.batch({"x": example["x"] - mean}, 4)
        error = lowering_error(batch)
    assert (error.op, error.op_type) == ("mean", "VarHandleOp")
    assert "variable" in error.reason


def test_queue_fed_from_python_is_refused():
    with tc.legacy_graph():
        queue = tf.queue.FIFOQueue(10, [tf.int64], shapes=[[]], name="fed_by_hand")
        queue.enqueue_many([[1, 2, 3]])
        error = lowering_error(queue.dequeue_many(2))
    assert (error.op, error.op_type) == ("fed_by_hand", "FIFOQueueV2")
    assert "no queue runner feeds this queue" in error.reason
    assert error.plan == "batch(2, drop remainder)"


def test_custom_queue_runner_is_refused():
    class MyRunner(v1.train.QueueRunner):
        pass

    with tc.legacy_graph():
        queue = tf.queue.FIFOQueue(10, [tf.int64], shapes=[[]], name="custom")
        v1.train.add_queue_runner(MyRunner(queue, [queue.enqueue([7])]))
        error = lowering_error(queue.dequeue())
    assert (error.op, error.reason) == ("custom", "fed by a custom queue runner (MyRunner): "
                                        "its Python code is not in the graph")


def test_branches_running_different_ops_are_refused(tfrecords):
    with tc.legacy_graph():
        queue = tc.string_input_producer(tfrecords, num_epochs=1)
        first = tf.io.parse_single_example(tc.TFRecordReader().read(queue)[1], FEATURES)
        second = tf.io.parse_single_example(tc.TFRecordReader().read(queue)[1], FEATURES)
        second["x"] = second["x"] * 2.0
        error = lowering_error(tc.batch_join([first, second], 4))
    assert error.op_type == "QueueEnqueueV2" and "branches reading one queue" in error.reason


def test_a_queue_read_by_two_dequeues_is_refused(tfrecords):
    with tc.legacy_graph():
        batch = tc.batch(parsed(tfrecords)[1], 4)
        queue = tc.prefetch_queue(batch, capacity=2)
        first, _ = queue.dequeue(), queue.dequeue(name="second_clone")
        error = lowering_error(first)
    assert "also read by 'second_clone'" in error.reason


def test_sparse_tensors_through_a_batch_are_refused(tfrecords):
    with tc.legacy_graph():
        _, value = tc.TFRecordReader().read(tc.string_input_producer(tfrecords, num_epochs=1))
        example = tf.io.parse_single_example(value, {
            "x": tf.io.VarLenFeature(tf.float32), "id": tf.io.FixedLenFeature([], tf.int64)})
        batch = tc.batch(example, 3)
        error = lowering_error(batch)
        assert error.op == batch["x"].values.op.name
        assert "a SparseTensor through a batching queue" in error.reason
        assert "make it dense before batching" in error.reason
        error = lowering_error(batch["id"])        # tied to the sparse part by the queue
    assert error.op_type == "TakeManySparseFromTensorsMap"


def test_fast_path_fetches_are_already_tf_data(tfrecords):
    with tc.legacy_graph():
        queue = tc.string_input_producer(tfrecords, num_epochs=1, shuffle=False)
        batch = tc.build_example_batches(queue, FEATURES, 4)
        error = lowering_error(batch)
    assert error.op_type == "IteratorGetNext" and error.reason.startswith(
        "a tf.data iterator's output: this part is tf.data already (a fast path, or a "
        "batching call tf1compat run put on tf.data)")


def test_read_up_to_is_refused(tfrecords):
    with tc.legacy_graph():
        queue = tc.string_input_producer(tfrecords, num_epochs=1)
        _, values = tc.TFRecordReader().read_up_to(queue, 4)
        error = lowering_error(values)
    assert error.op_type == "ReaderReadUpToV2"


def test_per_batch_constant_fetches_are_refused():
    with tc.legacy_graph():
        error = lowering_error(tf.constant([1, 2]) * 2)
    assert error.op_type == "Mul" and "come from no reader or queue" in error.reason


def test_an_endless_pipeline_needs_max_examples(tfrecords):
    with tc.legacy_graph():
        _, example = parsed(tfrecords, num_epochs=None)
        batch = tc.batch(example, 4)
        assert "3 files, repeated forever, in order" in tc.describe_lowering(batch)
        with pytest.raises(tc.PipelineConfigError, match="never ends: .* pass max_examples"):
            tc.compare(batch)
        report = tc.compare(batch, max_examples=50)
    assert report.equal and report.ordered and report.legacy_count == 50, report


# ------------------------------------------------------------ the command

@pytest.fixture
def pipeline_module(tmp_path, tfrecords, monkeypatch):
    """An importable module `old_input` whose functions build queue pipelines."""
    (tmp_path / "old_input.py").write_text(
        "import tensorflow as tf\n"
        "import tf1compat as tc\n"
        f"FILES = {tfrecords!r}\n"
        "def inputs():\n"
        "    queue = tc.string_input_producer(FILES, num_epochs=1, shuffle=False)\n"
        "    _, value = tc.TFRecordReader().read(queue)\n"
        "    example = tf.io.parse_single_example(value, {\n"
        "        'id': tf.io.FixedLenFeature([], tf.int64)})\n"
        "    return tc.shuffle_batch(example, 4, capacity=20, min_after_dequeue=5,\n"
        "                            allow_smaller_final_batch=True)\n"
        "def fed_inputs():\n"
        "    return tf.compat.v1.placeholder(tf.int64, [None], name='ids') * 2\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    return "old_input"


def test_cli_compare_pipeline(pipeline_module, capsys):
    from tf1compat import cli

    assert cli.main(["compare", "--pipeline", f"{pipeline_module}:inputs"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("tf.data lowering: 3 files, 1 epoch, in order -> TFRecordDataset")
    assert "\npipelines EQUAL (unordered comparison): 21 examples on each side" in out


@pytest.mark.parametrize("arguments, status, message", [
    (["--pipeline", "old_input:fed_inputs"], 1, "cannot lower op 'ids' (Placeholder)"),
    (["--pipeline", "old_input:missing"], 2, "has no function 'missing'"),
    (["--pipeline", "old_input:inputs", "--items", "id"], 2, "--items cannot be used with"),
    (["--dataset", "old_input:inputs", "--max-examples", "3"], 2, "--max-examples cannot"),
])
def test_cli_compare_pipeline_errors(pipeline_module, capsys, arguments, status, message):
    from tf1compat import cli

    assert cli.main(["compare", *arguments]) == status
    assert message in capsys.readouterr().err
