"""Fast paths deliver exactly what the classic per-example pipelines deliver."""

import collections
import time

import numpy as np
import pytest
from record_files import write_reader_files

import tf1compat as tc
from tf1compat import cifar10, example, tfrecord
from tf1compat.errors import PipelineConfigError
from tf1compat.pipeline import fastpath

tf = pytest.importorskip("tensorflow")
pytestmark = [pytest.mark.tf, pytest.mark.usefixtures("no_thread_leaks")]

FILE_SIZES = (37, 20, 9)          # not multiples of the batch sizes used below
FEATURES = {"id": tf.io.FixedLenFeature((), tf.int64),
            "pixels": tf.io.FixedLenFeature((), tf.string)}


@pytest.fixture
def record_files(tmp_path, rng):
    """Three files of Examples {'id': int64, 'pixels': 12 raw bytes}; ids are unique."""
    paths, next_id = [], 0
    for index, size in enumerate(FILE_SIZES):
        path = str(tmp_path / f"part-{index}.tfrecord")
        tfrecord.write_records(path, (example.make_example({
            "id": next_id + i, "pixels": rng.integers(0, 256, 12, dtype=np.uint8).tobytes(),
        }) for i in range(size)))
        paths.append(path)
        next_id += size
    return paths


def decode_pixels(parsed):
    """Batch decoding for the fast path: one decode_raw for all examples."""
    pixels = tf.reshape(tf.io.decode_raw(parsed["pixels"], tf.uint8), [-1, 2, 2, 3])
    return {"id": parsed["id"], "pixels": pixels}


def classic(files, batch_size, num_epochs=1, shuffle=False, allow_smaller=True):
    """The per-example TF1 pipeline: read -> parse_single_example -> decode -> batch."""
    queue = tc.string_input_producer(files, num_epochs=num_epochs, shuffle=False)
    _, value = tc.TFRecordReader().read(queue)
    parsed = tf.io.parse_single_example(value, FEATURES)
    one = {"id": parsed["id"],
           "pixels": tf.reshape(tf.io.decode_raw(parsed["pixels"], tf.uint8), [2, 2, 3])}
    if shuffle:
        return tc.shuffle_batch(one, batch_size, capacity=64, min_after_dequeue=16, seed=3,
                                allow_smaller_final_batch=allow_smaller)
    return tc.batch(one, batch_size, allow_smaller_final_batch=allow_smaller)


def fast(files, batch_size, num_epochs=1, allow_smaller=True, **options):
    queue = tc.string_input_producer(files, num_epochs=num_epochs, shuffle=False)
    return fastpath.build_example_batches(queue, FEATURES, batch_size, decode=decode_pixels,
                                          allow_smaller_final_batch=allow_smaller, **options)


def collect(build, *args, **kwargs):
    with tc.legacy_graph(seed=7):
        return list(tc.SessionIterator(build(*args, **kwargs)))


def examples(batches):
    """Each example as a hashable (id, pixel bytes) pair, in delivery order."""
    return [(int(i), p.tobytes())
            for b in batches for i, p in zip(b["id"], b["pixels"], strict=True)]


# ------------------------------------------------------------ TFRecord fast path

@pytest.mark.parametrize("records_per_read", [8, 24, None])   # None: 1024, whole files
def test_ordered_batches_equal_the_classic_pipeline(record_files, records_per_read):
    expected = collect(classic, record_files, 8)
    got = collect(fast, record_files, 8, records_per_read=records_per_read)
    assert [len(b["id"]) for b in got] == [len(b["id"]) for b in expected] == [8] * 8 + [2]
    assert examples(got) == examples(expected)
    assert got[0]["pixels"].dtype == np.uint8 and got[0]["pixels"].shape == (8, 2, 2, 3)


def test_partial_final_batch_is_dropped_as_in_tf1(record_files):
    with tc.legacy_graph():
        batch = fast(record_files, 8, allow_smaller=False)
        assert batch["pixels"].shape.as_list() == [8, 2, 2, 3]
        got = list(tc.SessionIterator(batch))
    assert [len(b["id"]) for b in got] == [8] * 8
    assert examples(got) == examples(collect(classic, record_files, 8, allow_smaller=False))


def test_two_epochs_deliver_every_example_twice_in_classic_order(record_files):
    got = examples(collect(fast, record_files, 16, num_epochs=2, records_per_read=32))
    assert got == examples(collect(classic, record_files, 16, num_epochs=2))
    assert set(collections.Counter(i for i, _ in got).values()) == {2}


def test_threads_and_shuffling_keep_the_multiset(record_files):
    expected = sorted(examples(collect(classic, record_files, 8, num_epochs=2, shuffle=True)))
    threaded = examples(collect(fast, record_files, 8, num_epochs=2, num_threads=3))
    shuffled = examples(collect(fast, record_files, 8, num_epochs=2, num_threads=2,
                                shuffle=True, capacity=64, min_after_dequeue=16, seed=3))
    assert sorted(threaded) == sorted(shuffled) == expected
    assert [i for i, _ in shuffled] != sorted(i for i, _ in shuffled)


def test_several_readers_read_files_at_once_in_a_fixed_order(record_files):
    def two_readers(files, batch_size):
        return fast(files, batch_size, num_epochs=2, records_per_read=16,
                    reader=[tc.TFRecordReader(), tc.TFRecordReader()])

    first = examples(collect(two_readers, record_files, 8))
    assert first == examples(collect(two_readers, record_files, 8))
    assert sorted(first) == sorted(examples(collect(classic, record_files, 8, num_epochs=2)))
    # Chunks of 16 alternate between the two files read at once: ids 0-15, 37-52, ...
    assert [i for i, _ in first[:32]] == [*range(16), *range(37, 53)]


def test_corrupt_record_raises_data_loss_naming_the_file(record_files):
    with open(record_files[1], "r+b") as f:
        f.seek(12 + 5)                   # inside the first record's data
        f.write(b"\xff\xff")
    for build in (classic, fast):
        with pytest.raises(tf.errors.DataLossError, match="part-1.tfrecord"):
            collect(build, record_files, 8)


def test_records_off_the_template_give_the_classic_batches(tmp_path, rng):
    """ids from 100: from 128 on they are 2-byte varints, off the first record's template."""
    files = []
    for index, ids in enumerate((range(100, 137), range(137, 150))):
        files.append(str(tmp_path / f"mixed-{index}.tfrecord"))
        tfrecord.write_records(files[-1], (example.make_example({
            "id": i, "pixels": rng.integers(0, 256, 12, dtype=np.uint8).tobytes()})
            for i in ids))
    got = examples(collect(fast, files, 8, num_epochs=2, num_threads=2))
    assert got == examples(collect(classic, files, 8, num_epochs=2))
    assert [i for i, _ in got] == list(range(100, 150)) * 2


def test_parse_error_names_the_feature_and_the_files_read(record_files):
    records = list(tfrecord.iter_records(record_files[1]))
    records[3] = example.make_example({"id": 5})              # no 'pixels'
    tfrecord.write_records(record_files[1], records)
    with pytest.raises(tf.errors.InvalidArgumentError) as error:
        collect(fast, record_files, 8)
    message = str(error.value)
    assert "Feature: pixels (data type: string) is required" in message
    assert "reading failed in op 'record_batches/IteratorGetNext'" in message
    assert all(repr(path) in message for path in record_files)


@pytest.mark.parametrize("options, argument", [
    ({"records_per_read": 12}, "records_per_read"),
    ({"shuffle": True}, "min_after_dequeue"),
    ({"shuffle": True, "capacity": 16, "min_after_dequeue": 16}, "capacity"),
    ({"num_threads": 0}, "num_threads"),
])
def test_bad_options_are_refused_naming_the_argument(record_files, options, argument):
    with tc.legacy_graph(), pytest.raises(PipelineConfigError) as error:
        fast(record_files, 8, **options)
    assert error.value.argument == argument


def test_sparse_features_are_refused(record_files):
    with tc.legacy_graph(), pytest.raises(PipelineConfigError, match="dense"):
        queue = tc.string_input_producer(record_files, num_epochs=1)
        fastpath.build_example_batches(queue, {"id": tf.io.VarLenFeature(tf.int64)}, 8)


# ---------------------------------------------------------------- slim fast path

@pytest.fixture(params=["png", "raw", "mixed"])
def cifar_split(request, tmp_path, rng):
    """A slim CIFAR-10 train split of 45 images in PNG or raw records (mixed: PNG,
    every 20th raw, record 30 a JPEG of a flat gray image), and the images."""
    images = rng.integers(0, 256, (45, 32, 32, 3), dtype=np.uint8)
    labels = rng.integers(0, 10, 45)
    formats = [request.param.encode()] * 45
    if request.param == "mixed":
        images[30] = 128
        formats = [b"raw" if i % 20 == 7 else b"jpeg" if i == 30 else b"png" for i in range(45)]
    pngs = cifar10.encode_png(images)
    encoded = [image.tobytes() if kind == b"raw" else
               tf.io.encode_jpeg(image, quality=100).numpy() if kind == b"jpeg" else png
               for image, png, kind in zip(images, pngs, formats, strict=True)]
    tfrecord.write_records(str(tmp_path / "cifar10_train.tfrecord"), (example.make_example({
        "image/encoded": data, "image/format": kind,
        "image/class/label": int(label), "image/height": 32, "image/width": 32,
    }) for data, kind, label in zip(encoded, formats, labels, strict=True)))
    return cifar10.get_split("train", str(tmp_path)), images, labels


def slim_items(provider_class, dataset, batch_size=16, **options):
    """Items image, label, record_key of one provider, batched like the classic slim input."""
    from tf1compat.slim import dataset_data_provider

    items = ["image", "label", "record_key"]
    with tc.legacy_graph(seed=5):
        if provider_class is dataset_data_provider.DatasetDataProvider:
            provider = provider_class(dataset, **options)
            tensors = provider.get(items)
            tensors[2].set_shape([])     # the common queue's record key has no static rank
            tensors = tc.batch(tensors, batch_size, allow_smaller_final_batch=True)
        else:
            provider = provider_class(dataset, batch_size, allow_smaller_final_batch=True,
                                      **options)
            tensors = provider.get(items)
        batches = list(tc.SessionIterator(dict(zip(items, tensors, strict=True))))
    return [(k, int(label), image.tobytes()) for b in batches
            for k, label, image in zip(b["record_key"], b["label"], b["image"], strict=True)]


@pytest.mark.slow
def test_slim_fast_path_items_equal_dataset_data_provider(cifar_split):
    from tf1compat.slim import dataset_data_provider
    from tf1compat.slim.batched_provider import BatchedDatasetDataProvider

    DatasetDataProvider = dataset_data_provider.DatasetDataProvider
    dataset, images, labels = cifar_split
    classic_items = slim_items(DatasetDataProvider, dataset, shuffle=False, num_epochs=1)
    fast_items = slim_items(BatchedDatasetDataProvider, dataset, shuffle=False, num_epochs=1)
    assert fast_items == classic_items
    assert [image for _, _, image in fast_items] == [image.tobytes() for image in images]
    assert [label for _, label, _ in fast_items] == labels.tolist()


@pytest.mark.slow
def test_slim_fast_path_shuffles_epochs_like_the_provider(cifar_split):
    from tf1compat.slim.batched_provider import BatchedDatasetDataProvider

    dataset, _, _ = cifar_split
    items = slim_items(BatchedDatasetDataProvider, dataset, shuffle=True, num_epochs=2,
                       common_queue_capacity=64, common_queue_min=16, seed=2, num_threads=2)
    assert sorted(items) == sorted(slim_items(BatchedDatasetDataProvider, dataset,
                                              shuffle=False, num_epochs=1) * 2)
    assert items[:45] != sorted(items[:45])


def test_slim_fast_path_refuses_variable_length_features(tmp_path):
    from tf1compat.slim import dataset, tfexample_decoder
    from tf1compat.slim.batched_provider import BatchedDatasetDataProvider

    path = str(tmp_path / "v.tfrecord")
    tfrecord.write_records(path, [example.make_example({"ids": [1, 2]})])
    decoder = tfexample_decoder.TFExampleDecoder(
        {"ids": tf.io.VarLenFeature(tf.int64)}, {"ids": tfexample_decoder.Tensor("ids")})
    variable = dataset.Dataset(data_sources=[path], reader=tc.TFRecordReader, decoder=decoder,
                               num_samples=1, items_to_descriptions={})
    with tc.legacy_graph(), pytest.raises(PipelineConfigError, match="VarLenFeature"):
        BatchedDatasetDataProvider(variable, 4)


# ------------------------------------------------- any reader, keys, TF1 loops

def classic_keys_and_values(files, reader):
    """Every (key, value) the TF1 reader yields for ``files``, in order."""
    with tc.legacy_graph():
        queue = tc.string_input_producer(files, num_epochs=1, shuffle=False)
        key, value = reader().read(queue)
        return [(k, v) for k, v in tc.SessionIterator((key, value))]


def fast_keys_and_values(files, reader, batch_size=3, **options):
    with tc.legacy_graph():
        queue = tc.string_input_producer(files, num_epochs=1, shuffle=False)
        batch = fastpath.build_record_batches(
            queue, batch_size, lambda keys, values: {"key": keys, "value": values},
            reader=reader(), allow_smaller_final_batch=True, **options)
        return [(k, v) for b in tc.SessionIterator(batch)
                for k, v in zip(b["key"], b["value"], strict=True)]


@pytest.mark.parametrize("kind", ["fixed_length", "text_line", "whole_file", "gzip_tfrecord"])
def test_every_reader_gives_the_classic_keys_and_records(tmp_path, rng, kind):
    files = write_reader_files(tmp_path, rng, kind)
    reader = {
        "fixed_length": lambda: tc.FixedLengthRecordReader(3, header_bytes=2, footer_bytes=1),
        "text_line": lambda: tc.TextLineReader(skip_header_lines=1),
        "whole_file": tc.WholeFileReader,
        "gzip_tfrecord": lambda: tc.TFRecordReader(
            options=tf.io.TFRecordOptions(compression_type="GZIP")),
    }[kind]
    expected = classic_keys_and_values(files, reader)
    assert len(expected) == (3 if kind == "whole_file" else 11)
    assert fast_keys_and_values(files, reader) == expected
    assert sorted(fast_keys_and_values(files, reader, shuffle=True, capacity=8,
                                       min_after_dequeue=2, seed=1)) == sorted(expected)


@pytest.mark.parametrize("reader, message", [
    (lambda: [tc.TFRecordReader(), tc.WholeFileReader()], "the readers differ"),
    (lambda: [tc.TFRecordReader(), tc.TFRecordReader(options=tf.io.TFRecordOptions(
        compression_type="GZIP"))], "the readers differ"),
    (lambda: tc.FixedLengthRecordReader(4, hop_bytes=2), "hop_bytes=2"),
    (lambda: tf.compat.v1.IdentityReader(), "IdentityReaderV2"),
])
def test_readers_the_fast_path_cannot_read_are_refused(record_files, reader, message):
    with tc.legacy_graph(), pytest.raises(PipelineConfigError, match=message) as error:
        queue = tc.string_input_producer(record_files, num_epochs=1)
        fastpath.build_record_batches(queue, 4, lambda keys, values: {"v": values},
                                      reader=reader())
    assert error.value.argument == "reader"


def test_a_hand_written_tf1_loop_runs_the_fast_path(record_files):
    """Session + the usual initializers + start_queue_runners: local init starts it."""
    v1 = tf.compat.v1
    with tc.legacy_graph():
        batch = fast(record_files, 8)
        with v1.Session() as session:
            session.run([v1.global_variables_initializer(), v1.local_variables_initializer()])
            coordinator = v1.train.Coordinator()
            threads = v1.train.start_queue_runners(session, coordinator)
            got = []
            try:
                while True:
                    got.append(session.run(batch))
            except tf.errors.OutOfRangeError:
                pass
            coordinator.request_stop()
            coordinator.join(threads)
    assert examples(got) == examples(collect(classic, record_files, 8))


@pytest.mark.timeout(60)
def test_break_from_endless_epochs_stops_within_seconds(record_files):
    with tc.legacy_graph():
        batches = tc.SessionIterator(fast(record_files, 8, num_epochs=None))
        for step, _ in enumerate(batches, 1):
            if step == 30:                # more than three epochs of 66 examples
                break
        started = time.monotonic()
        batches.close()
    assert time.monotonic() - started < 5
    assert batches.steps == 30
