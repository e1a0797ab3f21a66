"""The fast paths' in-memory cache: a multi-epoch fast path parses each file once and
gives the same batches, epoch by epoch, as without the cache and as the queues."""

import collections

import numpy as np
import pytest
from record_files import IMAGE_COUNTS, IMAGE_SHAPE, write_image_files, write_reader_files

from tf1compat.errors import PipelineConfigError
from tf1compat.records.example import make_example
from tf1compat.records.tfrecord import write_records

tf = pytest.importorskip("tensorflow")
import tf1compat as tc  # noqa: E402  (after the skip: needs TensorFlow)
from tf1compat.pipeline import fastpath  # noqa: E402
from tf1compat.pipeline.cache_budget import BUDGET_VARIABLE  # noqa: E402

pytestmark = [pytest.mark.tf, pytest.mark.usefixtures("no_thread_leaks")]

SHAPE = IMAGE_SHAPE
FEATURES = {"id": tf.io.FixedLenFeature([], tf.int64),
            "image": tf.io.FixedLenFeature([], tf.string)}
COUNTS = IMAGE_COUNTS
TOTAL = sum(COUNTS)


@pytest.fixture
def image_files(tmp_path, rng):
    return write_image_files(tmp_path, rng)


def decode_batch(parsed):
    images = tf.reshape(tf.io.decode_raw(parsed["image"], tf.uint8), [-1, *SHAPE])
    return {"id": parsed["id"], "image": images}


def producer(paths, num_epochs, shuffle_files):
    return tc.string_input_producer(paths, num_epochs=num_epochs, shuffle=shuffle_files, seed=5)


def fast(paths, num_epochs=3, shuffle_files=False, shuffle=False, cache=None, decode=None,
         readers=1, compression=None, **options):
    """build_example_batches of batches of 4 (a shuffle buffer of 8 + 4 with ``shuffle``)
    with ``readers`` TFRecordReaders."""
    options["reader"] = [tc.TFRecordReader(options=tf.io.TFRecordOptions(
        compression_type=compression)) for _ in range(readers)]
    if shuffle:
        options.update(shuffle=True, capacity=20, min_after_dequeue=8, seed=3)
    return fastpath.build_example_batches(
        producer(paths, num_epochs, shuffle_files), FEATURES, 4,
        decode=decode or decode_batch, allow_smaller_final_batch=True, cache=cache,
        records_per_read=8, **options)


def classic(paths, num_epochs=3, shuffle_files=False, shuffle=False):
    """The queue pipeline the fast path stands for: read -> parse -> decode -> batch."""
    _, value = tc.TFRecordReader().read(producer(paths, num_epochs, shuffle_files))
    parsed = tf.io.parse_single_example(value, FEATURES)
    one = {"id": parsed["id"], "image": tf.reshape(tf.io.decode_raw(parsed["image"], tf.uint8),
                                                   SHAPE)}
    if shuffle:
        return tc.shuffle_batch(one, 4, capacity=20, min_after_dequeue=8, seed=3,
                                allow_smaller_final_batch=True)
    return tc.batch(one, 4, allow_smaller_final_batch=True)


def run(build, *args, **kwargs):
    """``(batches, describe_cache's text)`` of a fast path built in a fresh graph."""
    with tc.legacy_graph(seed=11):
        batch = build(*args, **kwargs)
        text = fastpath.describe_cache(batch)
        with tc.SessionIterator(batch) as batches:
            return list(batches), text


def queue_report(paths, batches, ordered, **options):
    """tc.compare of the queue pipeline with the fast path's ``batches``."""
    with tc.legacy_graph(seed=11):
        return tc.compare(classic(paths, **options), batches, ordered=ordered,
                          reference_batched=True)


def assert_same_batches(got, expected):
    assert len(got) == len(expected)
    for one, other in zip(got, expected, strict=True):
        assert one.keys() == other.keys()
        for key in one:
            np.testing.assert_array_equal(one[key], other[key], err_msg=key)


def ids_of(batches):
    return [int(i) for batch in batches for i in batch["id"]]


def assert_true_images(batches, images):
    for batch in batches:
        for example_id, image in zip(batch["id"], batch["image"], strict=True):
            np.testing.assert_array_equal(image, images[int(example_id)])


# ------------------------------------------------------------ same batches

@pytest.mark.parametrize("shuffle_files", [False, True], ids=["files in order", "reshuffled"])
def test_example_batches_same_as_uncached_and_the_queues_epoch_by_epoch(image_files,
                                                                       shuffle_files):
    paths, images = image_files
    cached, text = run(fast, paths, shuffle_files=shuffle_files)
    uncached, off = run(fast, paths, shuffle_files=shuffle_files, cache=False)
    assert text.startswith("cached: 3 files read once into memory, about ")
    assert off == "not cached: caching is off (TF1COMPAT_CACHE_BUDGET=off or cache=False)"
    assert_same_batches(cached, uncached)
    report = queue_report(paths, cached, ordered=True, shuffle_files=shuffle_files)
    assert report, report
    ids = ids_of(cached)
    epochs = [ids[i * TOTAL:(i + 1) * TOTAL] for i in range(3)]
    assert len(ids) == 3 * TOTAL and all(sorted(e) == list(range(TOTAL)) for e in epochs)
    if shuffle_files:   # the producer reshuffles the files every epoch, with the cache too
        assert len({tuple(epoch) for epoch in epochs}) > 1
    else:
        assert epochs[0] == epochs[1] == epochs[2] == list(range(TOTAL))
    assert_true_images(cached, images)


def test_shuffled_examples_two_readers_same_as_uncached(image_files):
    paths, images = image_files
    cached, text = run(fast, paths, num_epochs=4, shuffle_files=True, shuffle=True,
                       readers=2, num_threads=2)
    uncached, _ = run(fast, paths, num_epochs=4, shuffle_files=True, shuffle=True,
                      readers=2, num_threads=2, cache=False)
    assert text.startswith("cached: 3 files")
    assert_same_batches(cached, uncached)   # the same seeded shuffle buffer, same rows
    assert collections.Counter(ids_of(cached)) == {i: 4 for i in range(TOTAL)}
    report = queue_report(paths, cached, ordered=False, num_epochs=4, shuffle_files=True,
                          shuffle=True)
    assert report, report
    assert_true_images(cached, images)


def png_bytes(image):
    with tf.device("/cpu:0"):
        return tf.io.encode_png(image).numpy()


def slim_dataset(tmp_path, images):
    """The images as PNGs in slim's layout, with a slim Dataset reading them."""
    from tf1compat.pipeline import queues
    from tf1compat.slim import dataset, tfexample_decoder

    paths = []
    for index in range(len(COUNTS)):
        path = str(tmp_path / f"slim-{index}.tfrecord")
        write_records(path, [make_example({
            "id": i, "image/encoded": png_bytes(images[i]), "image/format": b"png"})
            for i in range(sum(COUNTS[:index]), sum(COUNTS[:index + 1]))])
        paths.append(path)
    keys_to_features = {"id": tf.io.FixedLenFeature((), tf.int64),
                        "image/encoded": tf.io.FixedLenFeature((), tf.string),
                        "image/format": tf.io.FixedLenFeature((), tf.string, "raw")}
    return dataset.Dataset(
        data_sources=paths, reader=queues.TFRecordReader, num_samples=TOTAL,
        decoder=tfexample_decoder.TFExampleDecoder(keys_to_features, {
            "image": tfexample_decoder.Image(shape=SHAPE), "id": tfexample_decoder.Tensor("id")}),
        items_to_descriptions={})


@pytest.mark.parametrize("shuffle", [False, True], ids=["in order", "shuffled"])
def test_slim_batched_provider_png_same_as_uncached_and_the_queues(tmp_path, image_files,
                                                                  shuffle):
    from tf1compat.slim import BatchedDatasetDataProvider, dataset_data_provider

    images = image_files[1]
    data = slim_dataset(tmp_path, images)
    options = {"shuffle": shuffle, "num_epochs": 3, "seed": 1, "common_queue_capacity": 16,
               "common_queue_min": 4}

    def batched(cache=None):
        provider = BatchedDatasetDataProvider(data, 4, allow_smaller_final_batch=True,
                                              records_per_read=8, cache=cache, **options)
        return dict(zip(["image", "id", "key"], provider.get(["image", "id", "record_key"]),
                        strict=True))

    cached, text = run(batched)
    uncached, _ = run(batched, cache=False)
    assert text.startswith("cached: 3 files read once into memory")
    assert_same_batches(cached, uncached)   # record keys included
    assert_true_images(cached, images)
    assert {key.decode().rsplit(":", 1)[0][-len("slim-0.tfrecord"):]
            for batch in cached for key in batch["key"]} == {
        f"slim-{i}.tfrecord" for i in range(3)}
    with tc.legacy_graph(seed=11):
        provider = dataset_data_provider.DatasetDataProvider(data, **options)
        image, example_id = provider.get(["image", "id"])
        queue = tc.batch({"id": example_id, "image": image}, 4, allow_smaller_final_batch=True)
        report = tc.compare(queue, [{"id": b["id"], "image": b["image"]} for b in cached],
                            ordered=not shuffle, reference_batched=True)
    assert report, report


READERS = {
    "fixed_length": lambda: tc.FixedLengthRecordReader(3, header_bytes=2, footer_bytes=1),
    "text_line": lambda: tc.TextLineReader(skip_header_lines=1),
    "whole_file": tc.WholeFileReader,
}


@pytest.mark.parametrize("kind", sorted(READERS))
def test_record_batches_keys_and_values_of_other_readers(tmp_path, rng, kind):
    """build_record_batches over each reader, files reshuffled every epoch: the
    cached keys and records are the uncached ones and the queue pipeline's."""
    paths = write_reader_files(tmp_path, rng, kind)

    def batched(cache=None):
        return fastpath.build_record_batches(
            producer(paths, 3, True), 2, lambda keys, values: {"key": keys, "value": values},
            reader=READERS[kind](), allow_smaller_final_batch=True, cache=cache)

    cached, text = run(batched)
    uncached, _ = run(batched, cache=False)
    assert text.startswith("cached: 3 files read once into memory"), text
    assert_same_batches(cached, uncached)
    assert len({bytes(key) for batch in cached for key in batch["key"]}) == (
        3 if kind == "whole_file" else 11)
    with tc.legacy_graph(seed=11):
        key, value = READERS[kind]().read(producer(paths, 3, True))
        report = tc.compare(tc.batch({"key": key, "value": value}, 2,
                                     allow_smaller_final_batch=True),
                            cached, ordered=True, reference_batched=True)
    assert report, report


def test_random_decode_is_not_cached_and_said(image_files):
    paths, _ = image_files

    def flipped(parsed):
        decoded = decode_batch(parsed)
        decoded["image"] = tf.image.random_flip_left_right(decoded["image"], seed=4)
        return decoded

    batches, text = run(fast, paths, num_epochs=2, decode=flipped)
    assert text == ("not cached: the parse may give other values every epoch (stateful "
                    "RandomUniform)"), text
    assert sorted(ids_of(batches)) == sorted(2 * list(range(TOTAL)))


@pytest.mark.parametrize("damaged", [0, 1], ids=["first file", "second file"])
def test_a_corrupt_record_raises_data_loss_naming_the_file(image_files, damaged):
    """In the second file: cached, the batches of the first file come out as it
    streams, then the error, as uncached; in the first file (read to estimate the
    size): not cached, and the run fails as uncached."""
    paths, _ = image_files
    with open(paths[damaged], "r+b") as f:
        f.seek(12 + 5)                   # inside the first record's data
        f.write(b"\xff\xff")
    delivered = {}
    for cache in (None, False):
        delivered[cache] = []
        with tc.legacy_graph():
            batch = fast(paths, num_epochs=2, cache=cache)
            text = fastpath.describe_cache(batch)
            with pytest.raises(tf.errors.DataLossError, match=f"part-{damaged}.tfrecord"):
                with tc.SessionIterator(batch) as batches:
                    delivered[cache].extend(batches)
        if cache is None and damaged:
            assert text.startswith("cached: 3 files"), text
        elif cache is None:
            assert text.startswith("not cached: its size cannot be estimated (")
            assert "part-0.tfrecord: record 0 at byte 0: data CRC mismatch" in text, text
    assert ids_of(delivered[None]) == ids_of(delivered[False])
    assert len(ids_of(delivered[None])) == (COUNTS[0] // 4 * 4 if damaged else 0)


@pytest.mark.parametrize("cache", [None, False], ids=["cached", "uncached"])
def test_the_decode_is_traced_once(image_files, cache):
    """Building a fast path calls the decode once (its trace in the dataset that runs
    it), cached or not: the cache's checks read that trace, they make none of their own."""
    paths, _ = image_files
    calls = []

    def counted(parsed):
        calls.append(1)
        return decode_batch(parsed)

    batches, text = run(fast, paths, num_epochs=2, decode=counted, cache=cache)
    assert text.startswith("cached: 3 files" if cache is None else "not cached: caching is off")
    assert len(calls) == 1
    assert sorted(ids_of(batches)) == sorted(2 * list(range(TOTAL)))


# ------------------------------------------------------------ not cached

def test_above_the_budget_is_not_cached_and_said(image_files):
    paths, _ = image_files
    batches, text = run(fast, paths, cache=100)
    assert text.startswith("not cached: about ") and text.endswith(
        "to keep, above the 100 bytes budget"), text
    uncached, _ = run(fast, paths, cache=False)
    assert_same_batches(batches, uncached)


@pytest.mark.parametrize("shuffle", [False, True], ids=["in order", "shuffled"])
def test_above_the_budget_while_filling_reads_every_epoch(tmp_path, shuffle):
    """GZIP files of zeros: the estimate (file sizes) is far below what decoding
    holds, so the cache is planned, found too big while filling and dropped: each
    file is read and parsed every epoch, with the same batches."""
    paths = []
    for index in range(2):
        path = str(tmp_path / f"zeros-{index}.tfrecord.gz")
        write_records(path, [make_example({"id": index * 300 + i, "image": bytes(48)})
                             for i in range(300)], compression="GZIP")
        paths.append(path)
    budget = 20_000   # decoded: 600 x (48 + 8) bytes, files: a few kB
    got, text = run(fast, paths, num_epochs=2, shuffle=shuffle, cache=budget,
                    compression="GZIP")
    expected, _ = run(fast, paths, num_epochs=2, shuffle=shuffle, cache=False,
                      compression="GZIP")
    assert text.startswith("cached: 2 files"), text
    assert_same_batches(got, expected)
    if shuffle:
        assert collections.Counter(ids_of(got)) == {i: 2 for i in range(600)}
    else:
        assert ids_of(got) == list(range(600)) * 2


def test_one_epoch_the_setting_and_a_bad_budget(image_files, monkeypatch):
    paths, _ = image_files
    with tc.legacy_graph():
        once = fast(paths, num_epochs=1)
        assert fastpath.describe_cache(once) == "not cached: the files are read once (1 epoch)"
        monkeypatch.setenv(BUDGET_VARIABLE, "off")
        assert fastpath.describe_cache(fast(paths)).startswith("not cached: caching is off")
        monkeypatch.setenv(BUDGET_VARIABLE, "1M")
        assert fastpath.describe_cache(fast(paths)).endswith("of a 1 MB budget")
        with pytest.raises(PipelineConfigError, match=r"must be a size in bytes .*500M") as info:
            fast(paths, cache="lots")
        assert info.value.argument == "cache"
        with pytest.raises(PipelineConfigError, match="is not the output of a fast path"):
            fastpath.describe_cache(tf.constant(1))


def test_a_file_queue_of_unknown_names_is_not_cached(image_files):
    paths, _ = image_files
    with tc.legacy_graph():
        names = tf.compat.v1.placeholder_with_default(tf.constant(paths), [None])
        queue = tc.string_input_producer(names, num_epochs=2, shuffle=False)
        batch = fastpath.build_example_batches(queue, FEATURES, 4, decode=decode_batch,
                                               allow_smaller_final_batch=True)
        assert fastpath.describe_cache(batch) == (
            "not cached: the files are not known while the graph is built (they are for "
            "string_input_producer of a list of files)")
        with tc.SessionIterator(batch) as batches:
            assert sorted(ids_of(batches)) == sorted(2 * list(range(TOTAL)))

