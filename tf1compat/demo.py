"""``tf1compat demo``: the main job, end to end, on an embedded synthetic CIFAR-10.

1. A classic TF1 queue pipeline (``string_input_producer`` -> ``TFRecordReader``
   -> ``parse_single_example`` -> ``shuffle_batch``) through
   :class:`~tf1compat.SessionIterator` delivers every record exactly once.
2. A seeded synthetic CIFAR-10 (or the real one, ``--cifar PATH``) is converted
   to slim's TFRecords with :func:`tf1compat.cifar10.convert`.
3. Its train split is read the TF1 slim way (``get_split`` ->
   ``DatasetDataProvider`` -> ``tf.train.batch`` -> ``SessionIterator``) and the
   tf.data way (:func:`tf1compat.to_tf_data` -> ``batch``); both are timed.
4. :func:`tf1compat.compare` checks them example by example: in order with one
   reader and no shuffling, and as multisets with four readers, shuffled.
5. The tutorial's ``cifar10_input.inputs`` queue pipeline over the binary
   batches is lowered to tf.data by :func:`tf1compat.to_tf_data` (its plan is
   shown), compared in order with its queue version, and both are timed.

The verdict passes only when every step does.
"""

import collections
import os
import tarfile
import tempfile
import time

import numpy as np

NUM_FILES = 4
RECORDS_PER_FILE = 250
BATCH_SIZE = 32
NUM_TRAIN = 2000               # synthetic CIFAR-10 sizes: well under a minute on 2 cores
NUM_TEST = 200
NUM_SHARDS = 4
NUM_READERS = 4                # for the shuffled comparison


def write_dataset(directory, seed):
    """Seeded files of Examples {'id': int64, 'features': float32[8]}; returns paths."""
    from tf1compat.records.example import make_example
    from tf1compat.records.tfrecord import TFRecordWriter

    rng = np.random.default_rng(seed)
    paths = []
    for f in range(NUM_FILES):
        path = os.path.join(directory, f"demo-{f:05d}-of-{NUM_FILES:05d}.tfrecord")
        with TFRecordWriter(path) as writer:
            for r in range(RECORDS_PER_FILE):
                writer.write(make_example({
                    "id": f * RECORDS_PER_FILE + r,
                    "features": rng.standard_normal(8).astype(np.float32),
                }))
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


def check_exactly_once(directory, seed):
    """Step 1: the classic queue pipeline delivers each record once; True if so."""
    paths = write_dataset(directory, seed)
    total = NUM_FILES * RECORDS_PER_FILE
    ids, seconds = read_legacy(paths, seed)
    counts = collections.Counter(ids)
    missing = sorted(set(range(total)) - set(counts))
    repeated = sorted(i for i, n in counts.items() if n > 1)
    print(f"[1/5] queue pipeline: {len(ids)} of {total} records in {NUM_FILES} TFRecord files "
          f"through string_input_producer -> TFRecordReader -> shuffle_batch -> "
          f"SessionIterator ({len(ids) / seconds:,.0f} records/s)")
    if missing or repeated:
        print(f"      FAIL: {len(missing)} records missing (first: {missing[:5]}), "
              f"{len(repeated)} repeated (first: {repeated[:5]})")
        return False
    print(f"      each of the {total} records arrived exactly once, shuffled")
    return True


def prepare_cifar(directory, seed, cifar=None):
    """Step 2: convert ``cifar`` (or a fresh synthetic CIFAR-10) to slim TFRecords;
    returns the binary source and the dataset directory."""
    from tf1compat import cifar10

    source = cifar
    if source is None:
        source = cifar10.make_synthetic(os.path.join(directory, "cifar-source"),
                                        NUM_TRAIN, NUM_TEST, seed=seed)
    dataset_dir = os.path.join(directory, "cifar10-tfrecords")
    summary = cifar10.convert(source, dataset_dir, num_shards=NUM_SHARDS, quiet=True)
    kind = "real" if cifar else "synthetic"
    counts = ", ".join(f"{split} {n}" for split, n in summary.counts.items())
    print(f"[2/5] {kind} CIFAR-10 ({counts} images) -> slim TFRecords, {NUM_SHARDS} shards "
          f"per split, in {summary.seconds:.1f} s")
    return source, dataset_dir


def build_legacy_batches(dataset_dir, *, shuffle, num_readers, seed):
    """The TF1 slim input of the train split: DatasetDataProvider -> batch (or
    shuffle_batch), one epoch, final partial batch kept. Call in legacy_graph()."""
    import tf1compat as tc
    from tf1compat import cifar10, slim

    provider = slim.dataset_data_provider.DatasetDataProvider(
        cifar10.get_split("train", dataset_dir), num_readers=num_readers, shuffle=shuffle,
        num_epochs=1, seed=seed)
    image, label = provider.get(["image", "label"])
    example = {"image": image, "label": label}
    if shuffle:
        return tc.shuffle_batch(example, BATCH_SIZE, capacity=20 * BATCH_SIZE,
                                min_after_dequeue=10 * BATCH_SIZE, seed=seed,
                                allow_smaller_final_batch=True)
    return tc.batch(example, BATCH_SIZE, allow_smaller_final_batch=True)


def build_tf_data_batches(dataset_dir, *, shuffle, num_readers, seed):
    """The same input as tf.data: to_tf_data(get_split(...)) -> batch."""
    import tf1compat as tc
    from tf1compat import cifar10

    dataset = tc.to_tf_data(cifar10.get_split("train", dataset_dir), shuffle=shuffle,
                            seed=seed, num_parallel_reads=num_readers)
    return dataset.batch(BATCH_SIZE).prefetch(2)


def _examples_per_second(batches, labels="label"):
    """Read every batch; returns (examples, examples per second)."""
    start = time.perf_counter()
    count = sum(len(batch[labels]) for batch in batches)
    return count, count / (time.perf_counter() - start)


def measure_throughput(dataset_dir, seed):
    """Step 3: read the train split both ways, one reader, no shuffling."""
    import tf1compat as tc

    spec = {"shuffle": False, "num_readers": 1, "seed": seed}
    with tc.legacy_graph(seed=seed):
        legacy = build_legacy_batches(dataset_dir, **spec)
    with tc.SessionIterator(legacy) as iterator:
        legacy_count, legacy_rate = _examples_per_second(iterator)
    reference = build_tf_data_batches(dataset_dir, **spec).as_numpy_iterator()
    tf_data_count, tf_data_rate = _examples_per_second(reference)
    print(f"[3/5] train split, batches of {BATCH_SIZE} (start-up included):\n"
          f"      TF1 slim  get_split -> DatasetDataProvider -> batch -> SessionIterator: "
          f"{legacy_count} examples, {legacy_rate:,.0f} examples/s\n"
          f"      tf.data   to_tf_data(get_split) -> batch:                                "
          f"{tf_data_count} examples, {tf_data_rate:,.0f} examples/s")


def compare_both_ways(dataset_dir, seed):
    """Step 4: compare in order (1 reader, no shuffle) and as multisets (4 readers,
    shuffled); returns the two reports."""
    import tf1compat as tc

    reports = []
    for ordered, num_readers in ((True, 1), (False, NUM_READERS)):
        spec = {"shuffle": not ordered, "num_readers": num_readers, "seed": seed}
        reference = build_tf_data_batches(dataset_dir, **spec)
        with tc.legacy_graph(seed=seed):
            legacy = build_legacy_batches(dataset_dir, **spec)
        reports.append(tc.compare(legacy, reference, ordered=ordered, reference_batched=True))
    print("[4/5] compare, example by example:")
    ways = ("in order, 1 reader, no shuffling", f"as multisets, {NUM_READERS} readers, shuffled")
    for report, how in zip(reports, ways, strict=True):
        verdict = "EQUAL" if report.equal else "DIFFER"
        print(f"      {how:<40} {verdict}: legacy {report.legacy_count}, "
              f"tf.data {report.reference_count} examples")
    return reports


def _binary_folder(source, directory):
    """The folder of the binary batches: ``source`` itself, or its archive extracted."""
    if os.path.isdir(source):
        return source
    extracted = os.path.join(directory, "cifar-binary")
    with tarfile.open(source) as archive:
        archive.extractall(extracted, filter="data")
    return extracted


def lower_tutorial_inputs(source, directory):
    """Step 5: the tutorial's queue input lowered to tf.data, compared, both timed;
    returns the comparison report."""
    import tf1compat as tc
    from tf1compat import cifar10

    folder = _binary_folder(source, directory)
    with tc.legacy_graph():
        legacy = cifar10.inputs(False, folder, BATCH_SIZE, num_epochs=1)
        plan = tc.describe_lowering(legacy)
        lowered = tc.to_tf_data(legacy)
    report = tc.compare(legacy)
    with tc.SessionIterator(legacy) as iterator:
        _, legacy_rate = _examples_per_second(iterator, labels=1)
    _, lowered_rate = _examples_per_second(lowered.as_numpy_iterator(), labels=1)
    verdict = "EQUAL" if report.equal else "DIFFER"
    how = "in order" if report.ordered else "as multisets"
    print(f"[5/5] the tutorial's cifar10_input.inputs(), queues -> to_tf_data(fetches):\n"
          f"      plan: {plan}\n"
          f"      compared {how}: {verdict}: queues {report.legacy_count}, "
          f"tf.data {report.reference_count} examples\n"
          f"      queues (SessionIterator) {legacy_rate:,.0f} examples/s, lowered tf.data "
          f"{lowered_rate:,.0f} examples/s ({lowered_rate / legacy_rate:.1f}x)")
    return report


def run(workdir=None, seed=0, cifar=None):
    """Run the demo; returns 0 when every step passes, 1 otherwise.

    ``cifar`` is the real CIFAR-10 binary (folder or .tar.gz) to use instead of
    the synthetic one; data goes to ``workdir`` (default: a temporary directory).
    """
    with tempfile.TemporaryDirectory(prefix="tf1compat-demo-") as tmp:
        directory = workdir or tmp
        os.makedirs(directory, exist_ok=True)
        exactly_once = check_exactly_once(directory, seed)
        source, dataset_dir = prepare_cifar(directory, seed, cifar)
        measure_throughput(dataset_dir, seed)
        reports = compare_both_ways(dataset_dir, seed)
        reports.append(lower_tutorial_inputs(source, directory))
        for report in reports:
            if not report.equal:
                print(report)
        if exactly_once and all(reports):
            print("PASS: the TF1 queue pipeline and its tf.data replacement feed the "
                  "same examples")
            return 0
        print("FAIL: see above")
        return 1
