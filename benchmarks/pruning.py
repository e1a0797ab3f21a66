"""``scripts/bench --suite pruning``: programs declaring 8 features and using 2,
lowered (parsing only what they use), vs the same lowerings parsing every key and
vs the hand-written tf.data port that parses every key.

The records carry what image datasets carry beside the image: a 32x32x3 image
(raw bytes, format ``raw``, as CIFAR's slim records do), its format, label,
height, width, file name, a 512-float embedding and a variable-length list of
object labels. Two programs declare all 8 keys and batch an image and a label
(``tf.train.batch(128)``): a slim one (the ``image`` and ``label`` items of a
``DatasetDataProvider``: 3 keys needed) and a classic one
(``parse_single_example`` + ``decode_raw``: 2 keys needed). Each is lowered
with ``to_tf_data``'s lowering and with ``prune_features=False``. The
hand-written reference is the port a migration guide suggests:
``TFRecordDataset -> batch -> parse_example(every key) -> decode_raw``. Two
more rows time what pruning removes, alone: batches of records parsed with
``parse_example`` of the 2 keys used and of all 8, nothing decoded. All run
in one process, one epoch each after a warm-up epoch, in interleaved rounds; the
table shows median examples/s and the medians of the per-round ratios with their
spread. Writes ``pruning.md`` and ``pruning.json`` to ``out_dir``.
"""

import os
import statistics
import time

import numpy as np

from benchmarks import write_report
from benchmarks.reading import BATCH_SIZE, _synthetic_images

FULL = {"examples": 20_000, "rounds": 5}
QUICK = {"examples": 300, "rounds": 1}
EMBEDDING_SIZE = 512
IMAGE_SHAPE = [32, 32, 3]
SLIM = "slim program (items image, label of 8 keys), lowered"
CLASSIC = "classic program (parse_single_example of 8 keys, uses 2), lowered"
EVERY_KEY = ", prune_features=False"
REFERENCE = "hand-written tf.data: batch, parse_example of 8 keys, decode_raw"
PARSE_USED = "the parse alone: parse_example of the 2 keys used, batches of records"
PARSE_ALL = "the parse alone: parse_example of all 8 keys, batches of records"
ROWS = (SLIM, SLIM + EVERY_KEY, CLASSIC, CLASSIC + EVERY_KEY, REFERENCE, PARSE_USED,
        PARSE_ALL)
UNPRUNED = {SLIM: SLIM + EVERY_KEY, CLASSIC: CLASSIC + EVERY_KEY, PARSE_USED: PARSE_ALL}
TARGET = 1.3    # the lowered slim program vs the hand-written port (issue 23)


def keys_to_features():
    """The 8 keys the program declares (call inside the graph that uses them)."""
    from tf1compat._tf import tf

    return {
        "image/encoded": tf.io.FixedLenFeature((), tf.string, default_value=""),
        "image/format": tf.io.FixedLenFeature((), tf.string, default_value="png"),
        "image/class/label": tf.io.FixedLenFeature((), tf.int64, default_value=0),
        "image/height": tf.io.FixedLenFeature((), tf.int64, default_value=0),
        "image/width": tf.io.FixedLenFeature((), tf.int64, default_value=0),
        "image/filename": tf.io.FixedLenFeature((), tf.string, default_value=""),
        "image/embedding": tf.io.FixedLenFeature([EMBEDDING_SIZE], tf.float32,
                                                 default_value=[0.0] * EMBEDDING_SIZE),
        "image/object/class/label": tf.io.VarLenFeature(tf.int64),
    }


def write_records(path, count, seed=0, image_format=b"raw"):
    """Write ``count`` Examples with the 8 features to ``path``, images encoded as
    ``image_format`` (``png`` or ``raw``)."""
    from tf1compat import cifar10
    from tf1compat.records import example, tfrecord

    images, labels = _synthetic_images(count, seed)
    encoded = (cifar10.encode_png(images) if image_format == b"png"
               else [image.tobytes() for image in images])
    rng = np.random.default_rng(seed)
    embeddings = rng.standard_normal((count, EMBEDDING_SIZE)).astype(np.float32)
    tfrecord.write_records(path, (example.make_example({
        "image/encoded": data, "image/format": image_format, "image/class/label": int(label),
        "image/height": 32, "image/width": 32,
        "image/filename": f"images/train/{index:08d}.png".encode(),
        "image/embedding": embedding,
        "image/object/class/label": rng.integers(0, 10, 1 + index % 4)})
        for index, (data, label, embedding) in enumerate(
            zip(encoded, labels, embeddings, strict=True))))


def slim_dataset(data_sources, num_samples=None):
    """The slim Dataset declaring the 8 keys, with ``image`` and ``label`` items."""
    from tf1compat._tf import tf
    from tf1compat.slim import dataset, tfexample_decoder

    items_to_handlers = {"image": tfexample_decoder.Image(shape=IMAGE_SHAPE),
                         "label": tfexample_decoder.Tensor("image/class/label")}
    return dataset.Dataset(
        data_sources=data_sources, reader=tf.compat.v1.TFRecordReader,
        decoder=tfexample_decoder.TFExampleDecoder(keys_to_features(), items_to_handlers),
        num_samples=num_samples, items_to_descriptions={})


def slim_batches(data_sources, batch_size, num_epochs=1):
    """The program's fetches: ``(images, labels)`` batches of a DatasetDataProvider
    (call inside a ``legacy_graph()``)."""
    import tf1compat as tc
    from tf1compat.slim import dataset_data_provider

    provider = dataset_data_provider.DatasetDataProvider(
        slim_dataset(data_sources), num_readers=1, shuffle=False, num_epochs=num_epochs)
    image, label = provider.get(["image", "label"])
    return tc.batch([image, label], batch_size, allow_smaller_final_batch=True)


def classic_batches(data_sources, batch_size, num_epochs=1):
    """The classic program's fetches: ``(images, labels)`` batches of a reader, a
    ``parse_single_example`` of the 8 keys and ``decode_raw`` (inside a ``legacy_graph()``)."""
    import tf1compat as tc
    from tf1compat._tf import tf

    queue = tc.string_input_producer(data_sources, num_epochs=num_epochs, shuffle=False)
    _, serialized = tc.TFRecordReader().read(queue)
    parsed = tf.io.parse_single_example(serialized, keys_to_features())
    image = tf.reshape(tf.io.decode_raw(parsed["image/encoded"], tf.uint8), IMAGE_SHAPE)
    return tc.batch([image, parsed["image/class/label"]], batch_size,
                    allow_smaller_final_batch=True)


def _lowered(program, path, prune_features):
    import tf1compat as tc
    from tf1compat.migrate.lowering import lower

    with tc.legacy_graph():
        fetches = program([path], BATCH_SIZE)
    return lower(fetches, prune_features).to_tf_data()


def _hand_written(path):
    from tf1compat._tf import tf

    features = keys_to_features()

    def decode(parsed):
        images = tf.io.decode_raw(parsed["image/encoded"], tf.uint8)
        return tf.reshape(images, [-1, *IMAGE_SHAPE]), parsed["image/class/label"]
    return (tf.data.TFRecordDataset([path]).batch(BATCH_SIZE)
            .map(lambda records: decode(tf.io.parse_example(records, features)),
                 num_parallel_calls=tf.data.AUTOTUNE)
            .prefetch(tf.data.AUTOTUNE))


def _parse_alone(path, keys):
    """What pruning removes, measured alone: records in batches, parsed, no decoding;
    the labels are delivered (a SparseTensor's conversion to numpy would be timed)."""
    from tf1compat._tf import tf

    features = {key: feature for key, feature in keys_to_features().items()
                if keys is None or key in keys}
    return (tf.data.TFRecordDataset([path]).batch(BATCH_SIZE)
            .map(lambda records: tf.io.parse_example(records, features)["image/class/label"],
                 num_parallel_calls=tf.data.AUTOTUNE)
            .prefetch(tf.data.AUTOTUNE))


def _epoch(dataset):
    """``(examples, seconds)`` of one epoch delivered to Python as numpy arrays."""
    examples, start = 0, time.perf_counter()
    for element in dataset.as_numpy_iterator():
        examples += len(element[0] if isinstance(element, tuple) else element)
    return examples, time.perf_counter() - start


def measure(path, rounds, log):
    """``{row: [examples/s per round]}``, the rows interleaved, each after a warm-up epoch."""
    datasets = {REFERENCE: _hand_written(path)}
    for row, program in ((SLIM, slim_batches), (CLASSIC, classic_batches)):
        datasets[row] = _lowered(program, path, True)
        datasets[row + EVERY_KEY] = _lowered(program, path, False)
    datasets[PARSE_USED] = _parse_alone(path, ("image/encoded", "image/class/label"))
    datasets[PARSE_ALL] = _parse_alone(path, None)
    datasets = {row: datasets[row] for row in ROWS}
    for dataset in datasets.values():
        _epoch(dataset)
    results = {row: [] for row in datasets}
    for round_index in range(rounds):
        for row, dataset in datasets.items():
            examples, seconds = _epoch(dataset)
            results[row].append(examples / seconds)
            log(f"round {round_index + 1}/{rounds}  {row:70s} {results[row][-1]:10,.0f} ex/s")
    return results


def _ratios(results, row, reference):
    return [a / b for a, b in zip(results[row], results[reference], strict=True)]


def _shown(ratios):
    return f"{statistics.median(ratios):.2f}x ({min(ratios):.2f}-{max(ratios):.2f})"


def _table(results):
    """The markdown table and ``{"row / reference row": ratios}``."""
    pairs = [(SLIM, REFERENCE), (CLASSIC, REFERENCE), *UNPRUNED.items()]
    ratios = {f"{row} / {reference}": _ratios(results, row, reference)
              for row, reference in pairs}
    lines = ["| pipeline | examples/s (median) | vs hand-written (median ratio, spread) "
             "| vs the same without pruning |", "|---|---:|---:|---:|"]
    for row, values in results.items():
        versus_hand_written = (_shown(ratios[f"{row} / {REFERENCE}"])
                               if f"{row} / {REFERENCE}" in ratios else "")
        versus_unpruned = (_shown(ratios[f"{row} / {UNPRUNED[row]}"])
                           if row in UNPRUNED else "")
        lines.append(f"| {row} | {statistics.median(values):,.0f} | {versus_hand_written} "
                     f"| {versus_unpruned} |")
    return "\n".join(lines), ratios


def run(quick=False, out_dir="bench-results"):
    """Build the data, measure the rows, print and write the table; returns 0."""
    settings = QUICK if quick else FULL
    data_dir = os.path.join(out_dir, "data")
    os.makedirs(data_dir, exist_ok=True)
    path = os.path.join(data_dir, f"pruning-{settings['examples']}.tfrecord")
    if not os.path.exists(path):
        write_records(path, settings["examples"])
    print(f"pruning: data in {path} (built once, not timed)", flush=True)
    load_before = os.getloadavg()[0]
    results = measure(path, settings["rounds"], lambda line: print(line, flush=True))
    load_after = os.getloadavg()[0]
    table, ratios = _table(results)
    settings_line = (f"{settings['examples']:,} examples, batch {BATCH_SIZE}, "
                     f"{settings['rounds']} rounds; issue 23's target: the lowered slim "
                     f"program >= {TARGET}x the hand-written port.")
    write_report("pruning", quick, out_dir, (load_before, load_after), [settings_line, table],
                 {"settings": settings, "batch_size": BATCH_SIZE, "rounds": results,
                  "ratios": ratios})
    return 0
