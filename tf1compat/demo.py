"""``tf1compat demo``: a classic TF1 queue pipeline, run and checked on TF2.

Writes a small seeded TFRecord set, reads it the TF1 way
(``string_input_producer`` -> ``TFRecordReader`` -> ``parse_single_example`` ->
``shuffle_batch``) through :class:`~tf1compat.SessionIterator`, and checks that
every record arrived exactly once.
"""

import collections
import os
import tempfile
import time

import numpy as np

NUM_FILES = 4
RECORDS_PER_FILE = 250
BATCH_SIZE = 32


def write_dataset(directory, seed):
    """Seeded files of Examples {'id': int64, 'features': float32[8]}; returns paths."""
    from tf1compat._tf import tf

    rng = np.random.default_rng(seed)
    paths = []
    for f in range(NUM_FILES):
        path = os.path.join(directory, f"demo-{f:05d}-of-{NUM_FILES:05d}.tfrecord")
        with tf.io.TFRecordWriter(path) as writer:
            for r in range(RECORDS_PER_FILE):
                example = tf.train.Example(features=tf.train.Features(feature={
                    "id": tf.train.Feature(int64_list=tf.train.Int64List(
                        value=[f * RECORDS_PER_FILE + r])),
                    "features": tf.train.Feature(float_list=tf.train.FloatList(
                        value=rng.standard_normal(8).astype(np.float32))),
                }))
                writer.write(example.SerializeToString())
        paths.append(path)
    return paths


def read_legacy(paths, seed):
    """Read every record once through the TF1 queue pipeline; returns (ids, seconds)."""
    import tf1compat as tc
    from tf1compat._tf import tf

    with tc.legacy_graph(seed=seed):
        filenames = tc.string_input_producer(paths, num_epochs=1, shuffle=True, seed=seed)
        _, serialized = tc.TFRecordReader().read(filenames)
        example = tf.io.parse_single_example(serialized, {
            "id": tf.io.FixedLenFeature([], tf.int64),
            "features": tf.io.FixedLenFeature([8], tf.float32),
        })
        batch = tc.shuffle_batch(example, BATCH_SIZE, capacity=500, min_after_dequeue=200,
                                 seed=seed, allow_smaller_final_batch=True)
        start = time.perf_counter()
        with tc.SessionIterator(batch) as it:
            ids = [int(i) for b in it for i in b["id"]]
        return ids, time.perf_counter() - start


def run(workdir=None, seed=0):
    """Run the demo; returns 0 when every record arrived exactly once."""
    with tempfile.TemporaryDirectory(prefix="tf1compat-demo-") as tmp:
        directory = workdir or tmp
        os.makedirs(directory, exist_ok=True)
        paths = write_dataset(directory, seed)
        total = NUM_FILES * RECORDS_PER_FILE
        print(f"wrote {total} records in {NUM_FILES} TFRecord files under {directory}")
        ids, seconds = read_legacy(paths, seed)
        counts = collections.Counter(ids)
        missing = sorted(set(range(total)) - set(counts))
        repeated = sorted(i for i, n in counts.items() if n > 1)
        print(f"read {len(ids)} records in {-(-len(ids) // BATCH_SIZE)} batches through "
              f"string_input_producer -> TFRecordReader -> shuffle_batch -> SessionIterator "
              f"({len(ids) / seconds:,.0f} records/s)")
        if missing or repeated:
            print(f"FAIL: {len(missing)} records missing (first: {missing[:5]}), "
                  f"{len(repeated)} repeated (first: {repeated[:5]})")
            return 1
        print(f"PASS: each of the {total} records arrived exactly once, shuffled")
        return 0
