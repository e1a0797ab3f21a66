"""The reading pipelines that ``scripts/bench --suite reading`` times, one per process.

Every variant delivers the same batches of ``{"image": uint8 [32, 32, 3], "label":
int64}`` as numpy arrays to Python (the floor delivers undecoded record batches).
``measure(name, path, ...)`` times one epoch of one variant (after a warm-up
epoch) and returns examples/s counted from the first batch to the last (start-up
is reported separately), the start-up time and the process's peak resident
memory. :mod:`.reading` runs it in a fresh subprocess per variant and round, so
the peak memory is the variant's own.
"""

import contextlib
import time

from benchmarks import peak_rss_mb
from tf1compat._tf import tf, v1
from tf1compat.records.tfrecord import framed_size

FEATURES = {
    "image/encoded": tf.io.FixedLenFeature((), tf.string),
    "image/class/label": tf.io.FixedLenFeature((), tf.int64),
}
IMAGE_SHAPE = [32, 32, 3]
NUM_THREADS = 2   # queue pipelines' reading threads; sessions use TensorFlow's default config


def _decode_raw(parsed):
    images = tf.io.decode_raw(parsed["image/encoded"], tf.uint8)
    return {"image": tf.reshape(images, [-1, *IMAGE_SHAPE]), "label": parsed["image/class/label"]}


def _decode_one(serialized, png):
    parsed = tf.io.parse_single_example(serialized, FEATURES)
    encoded = parsed["image/encoded"]
    image = tf.io.decode_png(encoded, channels=3) if png else tf.io.decode_raw(encoded, tf.uint8)
    return {"image": tf.reshape(image, IMAGE_SHAPE), "label": parsed["image/class/label"]}


def _slim_dataset(path):
    """A slim Dataset like slim's ``datasets/cifar10.py`` for one file."""
    from tf1compat.pipeline import queues
    from tf1compat.slim import dataset, tfexample_decoder

    keys_to_features = {
        "image/encoded": tf.io.FixedLenFeature((), tf.string, default_value=""),
        "image/format": tf.io.FixedLenFeature((), tf.string, default_value="png"),
        "image/class/label": tf.io.FixedLenFeature((), tf.int64, default_value=0),
    }
    items_to_handlers = {"image": tfexample_decoder.Image(shape=IMAGE_SHAPE),
                         "label": tfexample_decoder.Tensor("image/class/label")}
    return dataset.Dataset(
        data_sources=[path], reader=queues.TFRecordReader, num_samples=None,
        decoder=tfexample_decoder.TFExampleDecoder(keys_to_features, items_to_handlers),
        items_to_descriptions={})


# ----------------------------------------------------------- queue pipelines

def _classic(path, batch_size, shuffle):
    """TF1 per example: read -> parse_single_example -> decode -> (shuffle_)batch."""
    import tf1compat as tc

    queue = tc.string_input_producer([path], num_epochs=1, shuffle=False)
    _, value = tc.TFRecordReader().read(queue)
    return _batched(_decode_one(value, png=False), batch_size, shuffle)


def _batched(example, batch_size, shuffle):
    """``example`` batched by ``tf.train.batch``, or ``shuffle_batch`` with ``shuffle``."""
    import tf1compat as tc

    if shuffle:
        return tc.shuffle_batch(example, batch_size, num_threads=NUM_THREADS,
                                allow_smaller_final_batch=True, seed=1, **shuffle)
    return tc.batch(example, batch_size, num_threads=NUM_THREADS, capacity=4 * batch_size,
                    allow_smaller_final_batch=True)


def _lowered(path, batch_size, shuffle):
    """The classic pipeline as tf.data: ``to_tf_data`` of its fetches."""
    import tf1compat as tc

    with tc.legacy_graph():
        fetches = _classic(path, batch_size, shuffle)
    return tc.to_tf_data(fetches)


def _classic_named(path, batch_size, shuffle):
    """The classic pipeline whose parse names each record by its reader key
    (``file:offset``), as slim's decoder does under tf1compat so that a parse error
    names the record, lowered with ``to_tf_data``."""
    import tf1compat as tc

    with tc.legacy_graph():
        queue = tc.string_input_producer([path], num_epochs=1, shuffle=False)
        key, value = tc.TFRecordReader().read(queue)
        parsed = v1.io.parse_example(tf.expand_dims(value, 0), FEATURES,
                                     example_names=tf.expand_dims(key, 0))
        example = {"image": tf.reshape(tf.io.decode_raw(parsed["image/encoded"][0], tf.uint8),
                                       IMAGE_SHAPE),
                   "label": parsed["image/class/label"][0]}
        fetches = _batched(example, batch_size, shuffle)
    return tc.to_tf_data(fetches)


def _fast(path, batch_size, shuffle):
    """fastpath.build_example_batches: read_up_to + parse_example + decode_raw."""
    import tf1compat as tc
    from tf1compat.pipeline import fastpath

    queue = tc.string_input_producer([path], num_epochs=1, shuffle=False)
    return fastpath.build_example_batches(
        queue, FEATURES, batch_size, decode=_decode_raw, num_threads=NUM_THREADS,
        allow_smaller_final_batch=True, seed=1,
        **({"shuffle": True, **shuffle} if shuffle else {}))


def _slim_fast(path, batch_size, shuffle):
    """BatchedDatasetDataProvider over a slim Dataset (Image + Tensor handlers)."""
    from tf1compat.slim.batched_provider import BatchedDatasetDataProvider

    options = ({"common_queue_capacity": shuffle["capacity"],
                "common_queue_min": shuffle["min_after_dequeue"]} if shuffle
               else {"common_queue_capacity": 4 * batch_size})
    provider = BatchedDatasetDataProvider(
        _slim_dataset(path), batch_size, shuffle=bool(shuffle), num_epochs=1, seed=1,
        num_threads=NUM_THREADS, allow_smaller_final_batch=True, **options)
    image, label = provider.get(["image", "label"])
    return {"image": image, "label": label}


def _iterate_session_iterator(fetches):
    import tf1compat as tc

    with tc.SessionIterator(fetches) as batches:
        yield from batches


def _iterate_session_loop(fetches):
    """The hand-written TF1 loop: Session, initializers, runners, sess.run until the end."""
    with v1.Session() as session:
        session.run([v1.global_variables_initializer(), v1.local_variables_initializer()])
        coordinator = v1.train.Coordinator()
        threads = v1.train.start_queue_runners(session, coordinator)
        try:
            while True:
                yield session.run(fetches)
        except tf.errors.OutOfRangeError:
            pass
        finally:
            coordinator.request_stop()
            coordinator.join(threads)


# ------------------------------------------------------------- tf.data pipelines

def _tfdata_per_example(path, batch_size, shuffle, png=False):
    records = tf.data.TFRecordDataset([path])
    if shuffle:
        records = records.shuffle(shuffle["min_after_dequeue"], seed=1)
    return (records.map(lambda s: _decode_one(s, png), num_parallel_calls=tf.data.AUTOTUNE)
            .batch(batch_size).prefetch(tf.data.AUTOTUNE))


def _tfdata_batch_then_parse(path, batch_size, shuffle):
    records = tf.data.TFRecordDataset([path])
    if shuffle:
        records = records.shuffle(shuffle["min_after_dequeue"], seed=1)
    return (records.batch(batch_size)
            .map(lambda s: _decode_raw(tf.io.parse_example(s, FEATURES)),
                 num_parallel_calls=tf.data.AUTOTUNE)
            .prefetch(tf.data.AUTOTUNE))


def _tfdata_batch_then_parse_counting_bytes(path, batch_size, shuffle):
    """Batch-then-parse with what every reader key needs besides: the bytes read
    before each batch, counted in order (a ``scan`` per batch), no key made from them.
    Records in order only, as :mod:`.reading` measures it."""
    if shuffle:
        raise ValueError("the bytes read are counted in the file's order: no shuffle")

    def count(start, records):
        framed = tf.cast(tf.strings.length(records), tf.int64) + framed_size(0)
        return start + tf.reduce_sum(framed), (start, records)

    return (tf.data.TFRecordDataset([path]).batch(batch_size)
            .scan(tf.constant(0, tf.int64), count)
            .map(lambda start, s: _decode_raw(tf.io.parse_example(s, FEATURES)),
                 num_parallel_calls=tf.data.AUTOTUNE)
            .prefetch(tf.data.AUTOTUNE))


def _tfdata_floor(path, batch_size, shuffle):
    records = tf.data.TFRecordDataset([path])
    if shuffle:
        records = records.shuffle(shuffle["min_after_dequeue"], seed=1)
    return records.batch(batch_size).prefetch(tf.data.AUTOTUNE)


def _iterate_dataset(dataset):
    for batch in dataset:
        if isinstance(batch, dict):
            yield {key: value.numpy() for key, value in batch.items()}
        else:
            yield {"label": batch}   # undecoded records: only counted


# name -> (records, builder, iterate); builders take (path, batch_size, shuffle)
VARIANTS = {
    "classic TF1, sess.run loop": ("raw", _classic, _iterate_session_loop),
    "classic TF1, SessionIterator": ("raw", _classic, _iterate_session_iterator),
    "classic TF1, lowered to tf.data": ("raw", _lowered, _iterate_dataset),
    "classic TF1 naming records by their keys, lowered": ("raw", _classic_named,
                                                          _iterate_dataset),
    "fast path (TFRecord)": ("raw", _fast, _iterate_session_iterator),
    "fast path (slim)": ("raw", _slim_fast, _iterate_session_iterator),
    "tf.data per-example": ("raw", _tfdata_per_example, _iterate_dataset),
    "tf.data batch-then-parse": ("raw", _tfdata_batch_then_parse, _iterate_dataset),
    "tf.data batch-then-parse, counting the bytes read": (
        "raw", _tfdata_batch_then_parse_counting_bytes, _iterate_dataset),
    "floor: tf.data, no parsing": ("raw", _tfdata_floor, _iterate_dataset),
    "PNG: fast path (slim)": ("png", _slim_fast, _iterate_session_iterator),
    "PNG: tf.data per-example": (
        "png", lambda p, b, s: _tfdata_per_example(p, b, s, png=True), _iterate_dataset),
}


def measure(name, path, batch_size, shuffle, seconds=0.0):
    """Run variant ``name`` over ``path`` once to warm up, then measure epochs until
    they span ``seconds`` of batches (at least one epoch).

    The first run warms what a long job has warm (allocator arenas, page cache,
    TensorFlow's lazy initialisation); each run builds the pipeline anew. The rate
    is all the measured epochs' examples after their first batches over their time
    from first batch to last; start-up and ``examples`` are the first measured run's.
    ``shuffle`` is None or ``{"capacity": ..., "min_after_dequeue": ...}``.
    """
    _run_once(name, path, batch_size, shuffle)
    runs = [_run_once(name, path, batch_size, shuffle)]
    while sum(run["steady_s"] for run in runs) < seconds:
        runs.append(_run_once(name, path, batch_size, shuffle))
    steady_s = sum(run["steady_s"] for run in runs)
    return {"examples_per_s": sum(run["steady_examples"] for run in runs) / steady_s
            if steady_s else 0.0,
            "examples": runs[0]["examples"], "startup_s": runs[0]["startup_s"],
            "epochs": len(runs), "peak_rss_mb": peak_rss_mb()}


def _run_once(name, path, batch_size, shuffle):
    _, build, iterate = VARIANTS[name]
    start = time.perf_counter()
    graph = tf.Graph() if iterate is not _iterate_dataset else None
    times, sizes = [], []
    with graph.as_default() if graph is not None else contextlib.nullcontext():
        for batch in iterate(build(path, batch_size, shuffle)):
            times.append(time.perf_counter())
            sizes.append(len(batch["label"]))
    return {"steady_examples": sum(sizes[1:]), "steady_s": times[-1] - times[0],
            "examples": sum(sizes), "startup_s": times[0] - start}


def measure_baseline():
    """Peak memory of a process that only imported TensorFlow (the floor of every row)."""
    return {"peak_rss_mb": peak_rss_mb()}
