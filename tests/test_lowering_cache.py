"""The lowering's in-memory cache: a multi-epoch pipeline keeps its deterministic
per-example work after reading each file once, and gives the same elements, epoch
by epoch, as without the cache; random per-example ops still run every epoch."""

import collections

import numpy as np
import pytest
from legacy_programs import tf1compat_run, write_program
from record_files import IMAGE_COUNTS, IMAGE_SHAPE, write_image_files

from tf1compat.errors import PipelineConfigError
from tf1compat.records.example import make_example
from tf1compat.records.tfrecord import write_records

tf = pytest.importorskip("tensorflow")
import tf1compat as tc  # noqa: E402  (after the skip: needs TensorFlow)
from tf1compat.migrate.lowering import lower  # noqa: E402
from tf1compat.pipeline.cache_budget import BUDGET_VARIABLE, cache_budget  # noqa: E402

pytestmark = [pytest.mark.tf, pytest.mark.usefixtures("no_thread_leaks")]

SHAPE = IMAGE_SHAPE
FEATURES = {"id": tf.io.FixedLenFeature([], tf.int64),
            "image": tf.io.FixedLenFeature([], tf.string)}
COUNTS = IMAGE_COUNTS


@pytest.fixture
def image_files(tmp_path, rng):
    return write_image_files(tmp_path, rng)


def decoded(value):
    example = tf.io.parse_single_example(value, FEATURES)
    image = tf.reshape(tf.io.decode_raw(example["image"], tf.uint8), SHAPE)
    return {"id": example["id"], "image": image}


def classic(paths, num_epochs=3, shuffle_files=False, batching="batch", augment=False):
    """read -> parse -> decode -> (random flip and crop) -> (shuffle_)batch."""
    queue = tc.string_input_producer(paths, num_epochs=num_epochs, shuffle=shuffle_files,
                                     seed=5)
    example = decoded(tc.TFRecordReader().read(queue)[1])
    if augment:
        flipped = tf.image.random_flip_left_right(example["image"], seed=7)
        example["augmented"] = tf.image.random_crop(flipped, [3, 3, 3], seed=8)
    if batching == "shuffle_batch":
        return tc.shuffle_batch(example, 4, capacity=20, min_after_dequeue=8, seed=3,
                                allow_smaller_final_batch=True)
    return tc.batch(example, 4, allow_smaller_final_batch=True)


def with_and_without(fetches, cache=None):
    """The lowered datasets with the cache (``cache``: its budget) and without."""
    return tc.to_tf_data(fetches, cache=cache), tc.to_tf_data(fetches, cache=False)


def batches(dataset):
    return list(dataset.as_numpy_iterator())


def examples(batch_list):
    """The batches cut into examples: a list of {key: array}."""
    return [{key: batch[key][i] for key in batch} for batch in batch_list
            for i in range(len(batch["id"]))]


def assert_same_batches(cached, uncached):
    assert len(cached) == len(uncached)
    for got, expected in zip(cached, uncached, strict=True):
        assert got.keys() == expected.keys()
        for key in got:
            np.testing.assert_array_equal(got[key], expected[key], err_msg=key)


def assert_true_images(examples_list, images):
    for example in examples_list:
        np.testing.assert_array_equal(example["image"], images[int(example["id"])])


# ------------------------------------------------------------ same elements

@pytest.mark.parametrize("shuffle_files", [False, True], ids=["files in order", "reshuffled"])
def test_classic_pipeline_same_batches_epoch_by_epoch(image_files, shuffle_files):
    paths, images = image_files
    with tc.legacy_graph():
        batch = classic(paths, num_epochs=3, shuffle_files=shuffle_files)
        plan = tc.describe_lowering(batch)
        datasets = with_and_without(batch)
    cached, uncached = map(batches, datasets)
    assert "-> cache(3 files read once into memory, about" in plan
    assert "TFRecordDataset -> batch(256, keep remainder) -> map(vectorized: " in plan
    assert "; kept as each file's first reading streams) -> batch(4" in plan
    assert_same_batches(cached, uncached)
    ids = [int(example["id"]) for example in examples(cached)]
    assert len(ids) == 3 * sum(COUNTS)
    epochs = [ids[i * sum(COUNTS):(i + 1) * sum(COUNTS)] for i in range(3)]
    assert all(sorted(epoch) == list(range(sum(COUNTS))) for epoch in epochs)
    if shuffle_files:   # the producer reshuffles the files every epoch, with the cache too
        assert len({tuple(epoch) for epoch in epochs}) > 1
    else:
        assert epochs[0] == epochs[1] == epochs[2] == list(range(sum(COUNTS)))
    assert_true_images(examples(cached), images)


def test_shuffle_batch_with_reshuffled_files_same_batches(image_files):
    paths, images = image_files
    with tc.legacy_graph():
        batch = classic(paths, num_epochs=4, shuffle_files=True, batching="shuffle_batch")
        plan = tc.describe_lowering(batch)
        datasets = with_and_without(batch)
    cached, uncached = map(batches, datasets)
    assert "cache(3 files" in plan and "shuffle(buffer 8, seed 3)" in plan
    assert_same_batches(cached, uncached)
    assert collections.Counter(int(e["id"]) for e in examples(cached)) == {
        i: 4 for i in range(sum(COUNTS))}
    assert_true_images(examples(cached), images)


def slim_data(tmp_path, image_files):
    """The image files in slim's layout (image/encoded, image/format) as a slim Dataset."""
    from tf1compat.pipeline import queues
    from tf1compat.slim import dataset, tfexample_decoder

    paths, images = image_files
    keys_to_features = {"id": tf.io.FixedLenFeature((), tf.int64),
                        "image/encoded": tf.io.FixedLenFeature((), tf.string),
                        "image/format": tf.io.FixedLenFeature((), tf.string, "raw")}
    slim_paths = []
    for index in range(len(paths)):   # slim's keys: image/encoded, image/format
        slim_path = str(tmp_path / f"slim-{index}.tfrecord")
        write_records(slim_path, [make_example({
            "id": i, "image/encoded": images[i].tobytes(), "image/format": b"raw"})
            for i in range(sum(COUNTS[:index]), sum(COUNTS[:index + 1]))])
        slim_paths.append(slim_path)
    data = dataset.Dataset(
        data_sources=slim_paths, reader=queues.TFRecordReader, num_samples=sum(COUNTS),
        decoder=tfexample_decoder.TFExampleDecoder(keys_to_features, {
            "image": tfexample_decoder.Image(shape=SHAPE), "id": tfexample_decoder.Tensor("id")}),
        items_to_descriptions={})
    return data


def test_slim_provider_with_shuffle_batch_same_examples_per_epoch(tmp_path, image_files):
    from tf1compat.slim import dataset_data_provider

    images = image_files[1]
    data = slim_data(tmp_path, image_files)
    with tc.legacy_graph():
        provider = dataset_data_provider.DatasetDataProvider(
            data, num_readers=2, shuffle=True, num_epochs=3, seed=1, common_queue_capacity=16,
            common_queue_min=4)
        image, example_id = provider.get(["image", "id"])
        batch = tc.shuffle_batch({"image": image, "id": example_id}, 3, capacity=20,
                                 min_after_dequeue=6, seed=2)
        plan = tc.describe_lowering(batch)
        datasets = with_and_without(batch)
    cached, uncached = map(batches, datasets)
    assert "interleave(2 readers: cache(3 files read once into memory" in plan
    assert "; kept as each file's first reading streams)) -> shuffle(" in plan
    assert len(cached) == len(uncached) == 3 * sum(COUNTS) // 3
    # Each stretch of one epoch's worth of examples: the same multiset with and without.
    for got, expected in zip(np.split(np.concatenate([b["id"] for b in cached]), 3),
                             np.split(np.concatenate([b["id"] for b in uncached]), 3),
                             strict=True):
        assert collections.Counter(got.tolist()) == collections.Counter(expected.tolist())
    assert_true_images(examples(cached), images)


def one_file_slim_data(tmp_path, count):
    """One file of ``count`` records in slim's layout (raw images of the id's value)."""
    from tf1compat.pipeline import queues
    from tf1compat.slim import dataset, tfexample_decoder

    path = str(tmp_path / "train.tfrecord")
    write_records(path, [make_example({"id": i, "image/encoded": bytes(
        [i % 256] * int(np.prod(SHAPE))), "image/format": b"raw"}) for i in range(count)])
    keys_to_features = {"id": tf.io.FixedLenFeature((), tf.int64),
                        "image/encoded": tf.io.FixedLenFeature((), tf.string),
                        "image/format": tf.io.FixedLenFeature((), tf.string, "raw")}
    return dataset.Dataset(
        data_sources=[path], reader=queues.TFRecordReader, num_samples=count,
        decoder=tfexample_decoder.TFExampleDecoder(keys_to_features, {
            "image": tfexample_decoder.Image(shape=SHAPE), "id": tfexample_decoder.Tensor("id")}),
        items_to_descriptions={})


@pytest.mark.parametrize("num_epochs, batching", [(4, "batch"), (6, "shuffle_batch")])
def test_several_readers_of_one_file_stream_the_interleaves_elements(tmp_path, num_epochs,
                                                                     batching):
    """slim's DatasetDataProvider(num_readers=3) over one file of 600 records (chunks
    of 256, 256, 88): the readers read the same rows in step, each row 3 times in a
    row, then a last group of 1 (4 epochs) or 3 (6 epochs) names; cached, the first
    group streams and the batches are the uncached interleave's, in order."""
    from tf1compat.slim import dataset_data_provider

    with tc.legacy_graph():
        provider = dataset_data_provider.DatasetDataProvider(
            one_file_slim_data(tmp_path, 600), num_readers=3, shuffle=False,
            num_epochs=num_epochs)
        image, example_id = provider.get(["image", "id"])
        example = {"image": image, "id": example_id}
        if batching == "batch":
            batch = tc.batch(example, 50, allow_smaller_final_batch=True)
        else:
            batch = tc.shuffle_batch(example, 50, capacity=400, min_after_dequeue=300, seed=2,
                                     allow_smaller_final_batch=True)
        plan = tc.describe_lowering(batch)
        datasets = with_and_without(batch)
    cached, uncached = map(batches, datasets)
    assert "interleave(3 readers: cache(1 file read once into memory" in plan
    assert "; kept as each file's first reading streams)) -> " in plan
    assert_same_batches(cached, uncached)
    ids = [int(example["id"]) for example in examples(cached)]
    assert collections.Counter(ids) == {i: num_epochs for i in range(600)}
    if batching == "batch":
        assert ids[:7] == [0, 0, 0, 1, 1, 1, 2]
    assert all((example["image"] == example["id"] % 256).all() for example in examples(cached))


def test_one_reader_of_slim_batches_cut_from_the_kept_chunks(tmp_path):
    """slim's DatasetDataProvider(num_readers=1) leaves a map of the reader's key and
    record before its decoding map; cached, it is not a step between the kept rows and
    the batch: the batches are cut from the kept chunks (a rebatch, no batch of single
    rows after each epoch's unbatch), the uncached batches, epoch by epoch."""
    from tf1compat.slim import dataset_data_provider

    with tc.legacy_graph():
        provider = dataset_data_provider.DatasetDataProvider(
            one_file_slim_data(tmp_path, 300), num_readers=1, shuffle=False, num_epochs=3)
        image, example_id = provider.get(["image", "id"])
        batch = tc.batch({"image": image, "id": example_id}, 7, allow_smaller_final_batch=True)
        lowering = lower(batch)
        datasets = with_and_without(batch)
    graph = tf.compat.v1.GraphDef.FromString(
        lowering.cached.build()._as_serialized_graph().numpy())
    top = {node.op for node in graph.node}
    assert "RebatchDatasetV2" in top and "BatchDatasetV2" not in top, sorted(top)
    cached, uncached = map(batches, datasets)
    assert_same_batches(cached, uncached)
    assert [int(i) for b in cached for i in b["id"]] == list(range(300)) * 3


def if_ops(dataset):
    """The If ops of ``dataset``'s functions: {inlined by TensorFlow: count}."""
    graph = tf.compat.v1.GraphDef.FromString(dataset._as_serialized_graph().numpy())
    inlined = [node.attr["_lower_using_switch_merge"].b for function in graph.library.function
               for node in function.node_def if node.op in ("If", "StatelessIf")]
    return collections.Counter(inlined)


def test_the_fill_sets_up_its_per_example_fallback_only_when_a_chunk_needs_it(tmp_path):
    """The cache's fill runs once over the records: the cond between decoding a chunk's
    strings as one matrix and decoding them one by one (strings of different lengths)
    is called, not inlined (TensorFlow instantiates its branches when a chunk first
    takes them, not before the first element); the uncached map, run every epoch,
    inlines it. Chunks of strings of one length and of two: the uncached batches,
    epoch by epoch."""
    path = str(tmp_path / "rows.tfrecord")
    lengths = [12] * 300 + [12, 16] * 100    # the fill's second chunk has both lengths
    write_records(path, [make_example({"id": i, "image": bytes([i % 256] * length)})
                         for i, length in enumerate(lengths)])
    with tc.legacy_graph():
        queue = tc.string_input_producer([path], num_epochs=3, shuffle=False)
        example = tf.io.parse_single_example(tc.TFRecordReader().read(queue)[1], FEATURES)
        pixels = tf.reshape(tf.io.decode_raw(example["image"], tf.uint8)[:12], [12])
        batch = tc.batch({"id": example["id"], "pixels": pixels}, 32,
                         allow_smaller_final_batch=True)
        lowering = lower(batch)
        datasets = with_and_without(batch)
    assert if_ops(lowering.cached.build()) == {False: 1}
    assert if_ops(lowering.plan.build())[True] == 1
    cached, uncached = map(batches, datasets)
    assert_same_batches(cached, uncached)
    assert [int(i) for b in cached for i in b["id"]] == list(range(500)) * 3
    assert all((b["pixels"] == (b["id"] % 256)[:, None]).all() for b in cached)


def test_random_ops_run_every_epoch_after_the_cached_part(image_files):
    paths, images = image_files
    with tc.legacy_graph():
        batch = classic(paths, num_epochs=6, augment=True)
        plan = tc.describe_lowering(batch)
        datasets = with_and_without(batch)
    cached, uncached = map(batches, datasets)
    assert "cache(3 files" in plan
    after_cache = plan.rsplit("budget: ", 1)[1]
    assert ") -> map(" in after_cache and "in order: stateful RandomUniform" in after_cache
    assert_same_batches(cached, uncached)   # seeded: the same draws, in the same order
    crops = collections.defaultdict(set)
    for example in examples(cached):
        crops[int(example["id"])].add(example["augmented"].tobytes())
    # Over 6 epochs each example gets other flips and crops (8 crops x 2 flips possible).
    assert sum(len(seen) > 1 for seen in crops.values()) >= sum(COUNTS) - 2
    assert_true_images(examples(cached), images)


@pytest.mark.parametrize("threads", [1, 2])
def test_random_ops_on_several_threads_run_after_the_shuffle_buffer(image_files, threads):
    """Random flips and crops that TF1 ran on 2 threads (drawn in no fixed order) run
    after the shuffle buffer, which then holds the kept uint8 rows (48 bytes against
    the crops' 27 floats): each epoch still gives every example once, with new draws.
    On one thread the seeded draws keep TF1's order: the map stays before it."""
    paths, images = image_files
    with tc.legacy_graph():
        queue = tc.string_input_producer(paths, num_epochs=4, shuffle=False)
        example = decoded(tc.TFRecordReader().read(queue)[1])
        flipped = tf.image.random_flip_left_right(example["image"], seed=7)
        example["augmented"] = tf.cast(tf.image.random_crop(flipped, [3, 3, 3], seed=8),
                                       tf.float32)
        batch = tc.shuffle_batch(example, 3, capacity=20, min_after_dequeue=10, seed=3,
                                 num_threads=threads, allow_smaller_final_batch=True)
        plan = tc.describe_lowering(batch)
        datasets = with_and_without(batch)
    cached, uncached = map(batches, datasets)
    after_cache = plan.rsplit("streams) -> ", 1)[1]
    if threads == 1:
        assert after_cache.startswith("map(") and "in order: stateful" in after_cache
        assert_same_batches(cached, uncached)
        return
    assert after_cache.startswith("shuffle(buffer 10, seed 3) -> map("), plan
    ids = [int(example["id"]) for example in examples(cached)]
    assert collections.Counter(ids) == {i: 4 for i in range(sum(COUNTS))}
    crops = collections.defaultdict(set)
    for example in examples(cached):
        image = images[int(example["id"])]
        windows = [np.asarray(flip[r:r + 3, c:c + 3], np.float32)
                   for flip in (image, image[:, ::-1]) for r in range(2) for c in range(2)]
        assert any((example["augmented"] == window).all() for window in windows)
        crops[int(example["id"])].add(example["augmented"].tobytes())
    assert sum(len(seen) > 1 for seen in crops.values()) >= sum(COUNTS) - 3


def test_only_the_stores_reading_is_built_per_iteration(image_files):
    """The steps after the cached read (the shuffle buffer, the map of random ops, the
    batch) are datasets of the pipeline itself, not of the per-iteration function: so
    tf.data's rewrites of a pipeline (a map fused with the batch after it) reach them,
    as they reach the uncached plan. The same batches as uncached, epoch by epoch."""
    paths, _ = image_files
    with tc.legacy_graph():
        queue = tc.string_input_producer(paths, num_epochs=2, shuffle=False)
        example = decoded(tc.TFRecordReader().read(queue)[1])
        example["flipped"] = tf.image.random_flip_left_right(example["image"], seed=7)
        batch = tc.shuffle_batch(example, 3, capacity=20, min_after_dequeue=10, seed=3,
                                 allow_smaller_final_batch=True)
        lowering = lower(batch)
        datasets = with_and_without(batch)
    graph = tf.compat.v1.GraphDef.FromString(
        lowering.cached.build()._as_serialized_graph().numpy())
    top = {node.op for node in graph.node}
    assert {"ShuffleDatasetV3", "BatchDatasetV2"} <= top, sorted(top)
    assert any(op.startswith(("MapDataset", "ParallelMapDataset")) for op in top), sorted(top)
    assert_same_batches(*map(batches, datasets))


def tutorial_crops(paths, num_epochs):
    """The CIFAR tutorial's shape of work: uint8 pixels cast to float32, padded and
    transposed, then randomly cropped and flipped (the widening kept before the crop)."""
    queue = tc.string_input_producer(paths, num_epochs=num_epochs, shuffle=True, seed=5)
    example = decoded(tc.TFRecordReader().read(queue)[1])
    pixels = tf.transpose(tf.pad(tf.cast(example["image"], tf.float32), [[1, 1], [1, 1], [0, 0]]),
                          [1, 0, 2])
    crop = tf.image.random_flip_left_right(tf.image.random_crop(pixels, [5, 5, 3], seed=8),
                                           seed=9)
    return tc.batch({"id": example["id"], "crop": crop, "pixels": pixels}, 4,
                    allow_smaller_final_batch=True)


def test_a_widening_cast_runs_after_the_cache_and_the_narrow_values_are_kept(image_files):
    paths, images = image_files
    with tc.legacy_graph():
        batch = tutorial_crops(paths, num_epochs=3)
        lowering = lower(batch)
        datasets = with_and_without(batch)
    plan = lowering.describe()
    specs = lowering.cached.cache.specs
    assert sorted((spec.dtype.name, spec.shape.as_list()) for spec in specs) == [
        ("int64", []), ("uint8", SHAPE)]
    assert "about 1 kB (int64, uint8) of a " in plan   # 21 x (8 + 48) bytes
    after_cache = plan.rsplit("budget: ", 1)[1]
    assert "-> map(" in after_cache and "Cast" in after_cache
    cached, uncached = map(batches, datasets)
    assert len(cached) == 3 * -(-sum(COUNTS) // 4) - 2   # 63 examples in batches of 4
    assert_same_batches(cached, uncached)                # float32 values bit for bit
    for example in examples(cached):
        padded = np.pad(images[int(example["id"])].astype(np.float32), [[1, 1], [1, 1], [0, 0]])
        np.testing.assert_array_equal(example["pixels"], padded.transpose(1, 0, 2))


@pytest.mark.parametrize("batching", ["batch", "shuffle_batch"])
def test_a_cast_at_the_end_of_deterministic_work_runs_on_the_batches(image_files, batching):
    paths, images = image_files
    with tc.legacy_graph():
        queue = tc.string_input_producer(paths, num_epochs=3, shuffle=True, seed=5)
        example = decoded(tc.TFRecordReader().read(queue)[1])
        example["image"] = tf.cast(example["image"], tf.float32)
        if batching == "batch":
            batch = tc.batch(example, 4, allow_smaller_final_batch=True)
        else:
            batch = tc.shuffle_batch(example, 4, capacity=20, min_after_dequeue=8, seed=3,
                                     allow_smaller_final_batch=True)
        lowering = lower(batch)
        datasets = with_and_without(batch)
    plan = lowering.describe()
    assert "(int64, uint8) of a " in plan
    assert plan.rsplit("budget: ", 1)[1].endswith(
        " -> map(vectorized: 1 op: Cast) -> prefetch(autotune)"), plan
    cached, uncached = map(batches, datasets)
    assert_same_batches(cached, uncached)
    assert cached[0]["image"].dtype == np.float32
    assert collections.Counter(int(e["id"]) for e in examples(cached)) == {
        i: 3 for i in range(sum(COUNTS))}
    assert_true_images(examples(cached), images)


def test_the_budget_counts_the_narrow_values(image_files):
    """A budget of 3,000 bytes holds 21 rows of 48 uint8 pixels and an int64 id (about
    1,200 bytes), not their padded float32 pixels (21 x 432 bytes); a budget below the
    narrow values falls back."""
    paths, _ = image_files
    with tc.legacy_graph():
        batch = tutorial_crops(paths, num_epochs=2)
        cached = lower(batch, cache=3000).cached
        assert cached is not None
        estimate = cached.cache.estimate
        # within half the budget: kept whole, the bytes not counted
        assert lower(batch, cache=2 * estimate).cached.cache.whole
        assert not lower(batch, cache=2 * estimate - 1).cached.cache.whole
        assert sum(COUNTS) * (48 + 8) * 0.8 < estimate < sum(COUNTS) * 432
        plan = tc.describe_lowering(batch, cache=estimate - 1)
        datasets = with_and_without(batch, cache=estimate - 1)
    assert "cache(" not in plan and "; not cached: about " in plan
    assert_same_batches(*map(batches, datasets))


@pytest.mark.parametrize("batching", ["batch", "shuffle_batch"])
def test_files_of_several_chunks_same_batches(tmp_path, batching):
    """Files of 300 and 700 records are kept in chunks of 256 rows (the last one of
    each file short): batches across chunks and files are the uncached ones."""
    paths = []
    for index, count in enumerate((300, 700)):
        path = str(tmp_path / f"rows-{index}.tfrecord")
        first = index * 300
        write_records(path, [make_example({"id": first + i, "image": bytes(
            [(first + i) % 256] * int(np.prod(SHAPE)))}) for i in range(count)])
        paths.append(path)
    with tc.legacy_graph():
        queue = tc.string_input_producer(paths, num_epochs=2, shuffle=True, seed=2)
        example = decoded(tc.TFRecordReader().read(queue)[1])
        if batching == "batch":
            batch = tc.batch(example, 100, allow_smaller_final_batch=True)
        else:
            batch = tc.shuffle_batch(example, 100, capacity=300, min_after_dequeue=150,
                                     seed=4, allow_smaller_final_batch=True)
        datasets = with_and_without(batch)
    got, expected = map(batches, datasets)
    assert_same_batches(got, expected)
    ids = [int(i) for b in got for i in b["id"]]
    assert collections.Counter(ids) == {i: 2 for i in range(1000)}
    assert all((example["image"] == example["id"] % 256).all() for example in examples(got))


@pytest.mark.usefixtures("control_flow_v1")
def test_slim_decoder_under_tf1_conds_then_a_random_crop_same_batches(tmp_path, image_files):
    # A TF1 cond adds the Switch feeding a branch after the op using it: the cut
    # between the cached part and the random crop must still be found (it failed
    # under run --tf-data with "'case/cond/DecodeRaw/Switch:1' is not in list").
    from tf1compat.slim import dataset_data_provider

    data = slim_data(tmp_path, image_files)
    with tc.legacy_graph():
        provider = dataset_data_provider.DatasetDataProvider(
            data, num_readers=1, shuffle=False, num_epochs=4)
        image, example_id = provider.get(["image", "id"])
        crop = tf.compat.v1.random_crop(tf.cast(image, tf.float32), [3, 3, 3], seed=4)
        batch = tc.batch({"image": crop, "id": example_id}, 4, allow_smaller_final_batch=True)
        plan = tc.describe_lowering(batch)
        datasets = with_and_without(batch)
    cached, uncached = map(batches, datasets)
    assert "cache(3 files read once into memory" in plan
    assert "in order: stateful RandomUniformInt" in plan.rsplit("budget: ", 1)[1]
    assert len(cached) == 4 * sum(COUNTS) // 4       # 4 epochs of 21 examples
    assert_same_batches(cached, uncached)


@pytest.mark.usefixtures("control_flow_v1")
def test_a_cut_inside_a_tf1_cond_is_not_cached_and_said(image_files):
    paths, images = image_files
    with tc.legacy_graph():
        queue = tc.string_input_producer(paths, num_epochs=2, shuffle=False)
        example = decoded(tc.TFRecordReader().read(queue)[1])
        pixels = tf.cast(example["image"], tf.float32)
        noisy = tf.compat.v1.cond(example["id"] % 2 > 0,
                                  lambda: pixels + tf.random.uniform(SHAPE, seed=6),
                                  lambda: pixels)
        batch = tc.batch({"id": example["id"], "image": noisy}, 4,
                         allow_smaller_final_batch=True)
        plan = tc.describe_lowering(batch)
        dataset = tc.to_tf_data(batch)
    ids = [b["id"] for b in batches(dataset)]
    assert plan.endswith("; not cached: the deterministic part ends inside a TF1 cond "
                         "('cond/add/Switch:1' has a value only when its branch is taken)"), plan
    assert np.concatenate(ids).tolist() == 2 * list(range(sum(COUNTS)))


# ------------------------------------------------------------ not cached

def test_a_corrupt_record_fails_after_the_batches_of_the_chunks_before_it(image_files):
    """The first epoch streams: the batches come out as the cache fills, so those
    before the chunk of 256 records holding the bad record (here: the first file's)
    are delivered, then TensorFlow's error, as without the cache."""
    paths, _ = image_files
    data = bytearray(open(paths[1], "rb").read())
    data[200] ^= 0xFF     # inside the second file's second record: id 8
    with open(paths[1], "wb") as f:
        f.write(bytes(data))
    with tc.legacy_graph():
        cached, uncached = with_and_without(classic(paths))
    for dataset, delivered in ((cached, 4), (uncached, 8)):
        ids = []
        with pytest.raises(tf.errors.DataLossError, match="corrupted record at "):
            for batch in dataset:
                ids.extend(batch["id"].numpy().tolist())
        # Cached: the second file's chunk (ids 7-11) fails whole, so the batch of ids
        # 4-7 never fills; uncached, the batches before the one holding id 8 come
        # first, as on queues.
        assert ids == list(range(delivered))


def test_planning_the_cache_of_a_list_of_files_runs_nothing(image_files):
    """The files of a string_input_producer of a list are the names the graph notes
    for its queue: planning the cache runs no dataset of the producer's epoch
    (``one_epoch``, mapped over ``Dataset.range(1)``) to learn them (it reads the first
    records in Python for the estimate). TensorFlow 2.16 also lists the functions the
    lowering builds, later versions none, so only the producer's is looked for."""
    from tensorflow.python.eager import context

    paths, _ = image_files
    with tc.legacy_graph():
        batch = classic(paths, num_epochs=2)
        functions = set(context.context().list_function_names())
        lowering = lower(batch)
        added = set(context.context().list_function_names()) - functions
        assert not [name for name in added if "one_epoch" in name], added
        cached, uncached = with_and_without(batch)
    assert lowering.describe().startswith("3 files, 2 epochs, in order -> cache(3 files")
    assert_same_batches(batches(cached), batches(uncached))


def test_single_epoch_is_not_cached(image_files):
    with tc.legacy_graph():
        batch = classic(image_files[0], num_epochs=1)
        assert tc.describe_lowering(batch).endswith(
            "; not cached: the files are read once (1 epoch)")


def test_above_the_budget_is_not_cached_and_said(image_files):
    paths, _ = image_files
    with tc.legacy_graph():
        batch = classic(paths)
        plan = tc.describe_lowering(batch, cache=100)
        assert "cache(" not in plan
        assert plan.endswith("budget") and "; not cached: about " in plan
        assert "above the 100 bytes budget" in plan
        datasets = with_and_without(batch, cache=100)
    assert_same_batches(*map(batches, datasets))


@pytest.mark.parametrize("batching", ["batch", "shuffle_batch"])
def test_above_the_budget_while_filling_reads_uncached(tmp_path, batching):
    """GZIP files of zeros: the estimate (file sizes) is far below what decoding
    holds, so the cache is planned and found too big while the first epoch streams
    (in the first file's second chunk): the files are read again in later epochs,
    with the same batches (a batch or a shuffle buffer after the read)."""
    paths = []
    for index in range(2):
        path = str(tmp_path / f"zeros-{index}.tfrecord.gz")
        write_records(path, [make_example({"id": index * 300 + i,
                                           "image": bytes(np.prod(SHAPE))})
                             for i in range(300)], compression="GZIP")
        paths.append(path)
    budget = 15_000   # decoded: 600 x (48 + 8) bytes, files: a few kB
    with tc.legacy_graph():
        queue = tc.string_input_producer(paths, num_epochs=2, shuffle=False)
        _, value = tc.TFRecordReader(
            options=tf.io.TFRecordOptions(compression_type="GZIP")).read(queue)
        if batching == "batch":
            batch = tc.batch(decoded(value), 64, allow_smaller_final_batch=True)
        else:
            batch = tc.shuffle_batch(decoded(value), 64, capacity=200, min_after_dequeue=100,
                                     seed=3, allow_smaller_final_batch=True)
        lowering = lower(batch, cache=budget)
        datasets = with_and_without(batch, cache=budget)
    got, expected = map(batches, datasets)
    assert "cache(2 files" in lowering.describe()
    assert not lowering.cached.cache.whole   # compressed: the bytes are counted
    assert_same_batches(got, expected)
    ids = [int(i) for b in got for i in b["id"]]
    if batching == "batch":
        assert ids == list(range(600)) * 2
    else:
        assert collections.Counter(ids) == {i: 2 for i in range(600)}
    assert not any(example["image"].any() for example in examples(got))


def test_turned_off_by_the_setting_and_the_argument(image_files, monkeypatch):
    with tc.legacy_graph():
        batch = classic(image_files[0])
        monkeypatch.setenv(BUDGET_VARIABLE, "off")
        assert "; not cached: caching is off" in tc.describe_lowering(batch)
        monkeypatch.setenv(BUDGET_VARIABLE, "1G")
        assert "of a 1,024 MB budget" in tc.describe_lowering(batch)
        monkeypatch.delenv(BUDGET_VARIABLE)
        assert "; not cached: caching is off" in tc.describe_lowering(batch, cache=False)
        assert "cache(3 files" in tc.describe_lowering(batch)


@pytest.mark.parametrize(("value", "budget"), [
    ("500M", 500 * 2 ** 20), ("2g", 2 * 2 ** 30), ("1.5GiB", int(1.5 * 2 ** 30)),
    ("4096", 4096), ("64kB", 64 * 1024), ("off", 0), (False, 0), (123, 123),
    (np.int64(10 ** 6), 10 ** 6), (2 ** 63 - 1, 2 ** 63 - 1)])
def test_budget_values(value, budget):
    assert cache_budget(value) == budget


@pytest.mark.parametrize("value", ["lots", "-5M", "nan", "1X", -3, 2.5, 10 ** 20, 2 ** 63,
                                   "1e30", "99999999999T", "inf"])
def test_bad_budget_is_refused_naming_what_is_expected(value, monkeypatch):
    with pytest.raises(PipelineConfigError, match=r"must be a size in bytes up to "
                       r"9223372036854775807 \(e.g. 500M, 2G") as info:
        cache_budget(value)
    assert info.value.argument == "cache"
    if isinstance(value, str):
        monkeypatch.setenv(BUDGET_VARIABLE, value)
        with pytest.raises(PipelineConfigError, match=BUDGET_VARIABLE) as info:
            cache_budget(None)
        assert info.value.argument == BUDGET_VARIABLE


def test_a_budget_past_the_largest_is_refused_and_numpy_integers_taken(image_files):
    """A budget TensorFlow's int64 counters cannot hold is one clear error naming the
    largest size taken (it was an OverflowError from deep inside TensorFlow); a numpy
    integer is a budget as a Python one is."""
    with tc.legacy_graph():
        batch = classic(image_files[0])
        with pytest.raises(PipelineConfigError) as info:
            tc.to_tf_data(batch, cache=10 ** 20)
        assert str(info.value) == (
            "cache must be a size in bytes up to 9223372036854775807 (e.g. 500M, 2G, "
            "1073741824), or off, got 100000000000000000000")
        assert "of a 977 kB budget" in tc.describe_lowering(batch, cache=np.int64(10 ** 6))
        got, plain = with_and_without(batch, cache=np.int64(10 ** 6))
    assert [b["id"].tolist() for b in batches(got)] == [b["id"].tolist() for b in batches(plain)]


def test_cache_argument_is_for_fetches_only(image_files):
    with pytest.raises(TypeError, match="cache applies to the fetches of a queue pipeline"):
        tc.to_tf_data(image_files[0], cache=False)


# ------------------------------------------------------------ run --tf-data

PROGRAM = """
    import sys
    import numpy as np
    import tensorflow as tf

    features = {"id": tf.FixedLenFeature([], tf.int64), "image": tf.FixedLenFeature([], tf.string)}
    queue = tf.train.string_input_producer(sys.argv[1:], num_epochs=3, shuffle=True, seed=4)
    _, value = tf.TFRecordReader().read(queue)
    example = tf.parse_single_example(value, features)
    image = tf.reshape(tf.decode_raw(example["image"], tf.uint8), [4, 4, 3])
    flipped = tf.image.random_flip_left_right(image, seed=6)
    ids, images, flips = tf.train.shuffle_batch([example["id"], image, flipped], 5,
                                                capacity=30, min_after_dequeue=10, seed=2,
                                                allow_smaller_final_batch=True)
    total = 0
    with tf.Session() as sess:
        sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord)
        try:
            while True:
                i, m, f = sess.run([ids, images, flips])
                print("batch", i.tolist(), int(m.astype(np.int64).sum()),
                      int((f.astype(np.int64) * np.arange(48).reshape(4, 4, 3)).sum()))
        except tf.errors.OutOfRangeError:
            pass
        coord.request_stop()
        coord.join(threads)
"""


@pytest.mark.slow
def test_run_tf_data_same_values_with_and_without_the_cache(tmp_path, image_files):
    program = write_program(tmp_path, "train.py", PROGRAM)
    outputs = {}
    for flags in ([], ["--no-cache"], ["--cache-budget", "1M"]):
        done = tf1compat_run("--tf-data", *flags, program, *image_files[0], cwd=tmp_path)
        assert done.returncode == 0, done.stderr[-3000:]
        outputs[" ".join(flags)] = [line for line in done.stdout.splitlines()
                                    if line.startswith("batch")]
    assert len(outputs[""]) == -(-3 * sum(COUNTS) // 5)
    assert outputs[""] == outputs["--no-cache"] == outputs["--cache-budget 1M"]


def test_run_refuses_cache_flags_with_queues_and_bad_sizes(tmp_path):
    program = write_program(tmp_path, "nothing.py", "print('ran')\n")
    done = tf1compat_run("--no-cache", program, cwd=tmp_path)   # tf.data by default
    assert done.returncode == 0 and done.stdout == "ran\n"
    done = tf1compat_run("--queues", "--no-cache", program, cwd=tmp_path)
    assert done.returncode == 2 and done.stderr.splitlines() == [
        "tf1compat run: error: --no-cache cannot be used with --queues: it sets the in-memory "
        "cache of the pipelines on tf.data, and --queues keeps every pipeline on TF1's queues"]
    done = tf1compat_run("--tf-data", "--cache-budget", "lots", program, cwd=tmp_path)
    assert done.returncode == 2 and done.stderr.splitlines() == [
        "tf1compat run: error: --cache-budget must be a size in bytes up to "
        "9223372036854775807 (e.g. 500M, 2G, 1073741824), or off, got 'lots'"]
