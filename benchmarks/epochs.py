"""``scripts/bench --suite epochs``: CIFAR-10's 50,000 training images for 10 epochs,
with the in-memory caches of the lowering and the fast paths against hand-written
tf.data.

The records are :mod:`.reading`'s (raw bytes, and PNG in slim's layout, built once under
``out_dir/data``): as many as CIFAR-10's training split, read for as many epochs as a
short training run (``--quick``: 300 records, 2 epochs) at batch 128, files in order.
Each row is timed, wall clock and the process's CPU (all its threads), from building the
pipeline to its last batch (the cache is filled in that time), and its set-up apart (to
the first batch), in a fresh subprocess per row and round, rounds interleaved. Rows: the
classic queue pipeline (read, ``parse_single_example``, decode, ``tf.train.batch``) and
slim's ``DatasetDataProvider`` pipeline, each lowered with ``to_tf_data`` (with the
cache, as by default, and without it), the same two as fast paths
(``build_example_batches`` and slim's ``BatchedDatasetDataProvider``, with their cache
and without it), and the hand-written tf.data batch-then-parse of TensorFlow's guides,
without a cache and with ``.cache()`` added by hand. Ratio: the reference's time over
the row's, per round, then the median (and the rounds' range); the cache's gain: a row's
time without its cache over its time with it. Writes ``epochs.md`` and ``epochs.json``.
"""

import json
import os
import statistics
import sys
import time

from benchmarks import peak_rss_mb, run_child, write_report

BATCH_SIZE = 128
FULL = {"examples": 50_000, "epochs": 10, "rounds": 3, "one_process": False}
QUICK = {"examples": 300, "epochs": 2, "rounds": 1, "one_process": True}
REFERENCE = "tf.data batch-then-parse"
CACHED_REFERENCE = "tf.data batch-then-parse + .cache()"
# (row, reference, target ratio): issue 32's goals for the cached lowered rows: the
# port with .cache() added by hand (1x), and the uncached port on PNG records (2x)
TARGETS = [(f"{kind}{row}", f"{kind}{reference}", goal)
           for row in ("classic TF1, lowered", "slim, lowered")
           for kind, reference, goal in (("", CACHED_REFERENCE, 1.0),
                                         ("PNG: ", CACHED_REFERENCE, 1.0),
                                         ("PNG: ", REFERENCE, 2.0))]


# ------------------------------------------------------------ the rows (in a child)

def _classic(path, png, cache, epochs):
    import tf1compat as tc
    from benchmarks.reading_variants import _decode_one

    with tc.legacy_graph():
        queue = tc.string_input_producer([path], num_epochs=epochs, shuffle=False)
        _, value = tc.TFRecordReader().read(queue)
        batch = tc.batch(_decode_one(value, png), BATCH_SIZE, num_threads=2,
                         capacity=4 * BATCH_SIZE, allow_smaller_final_batch=True)
    return tc.to_tf_data(batch, cache=cache)


def _slim(path, png, cache, epochs):
    import tf1compat as tc
    from benchmarks.reading_variants import _slim_dataset
    from tf1compat.slim import dataset_data_provider

    with tc.legacy_graph():
        provider = dataset_data_provider.DatasetDataProvider(
            _slim_dataset(path), num_readers=1, shuffle=False, num_epochs=epochs)
        image, label = provider.get(["image", "label"])
        batch = tc.batch({"image": image, "label": label}, BATCH_SIZE, num_threads=2,
                         capacity=4 * BATCH_SIZE, allow_smaller_final_batch=True)
    return tc.to_tf_data(batch, cache=cache)


def _fast_path(path, png, cache, epochs):
    import tf1compat as tc
    from benchmarks.reading_variants import FEATURES
    from tf1compat.pipeline import fastpath

    with tc.legacy_graph():
        queue = tc.string_input_producer([path], num_epochs=epochs, shuffle=False)
        batch = fastpath.build_example_batches(
            queue, FEATURES, BATCH_SIZE, decode=lambda parsed: _decode_batch(parsed, png),
            num_threads=2, allow_smaller_final_batch=True, cache=cache)
    return tc.SessionIterator(batch)


def _slim_fast_path(path, png, cache, epochs):
    import tf1compat as tc
    from benchmarks.reading_variants import _slim_dataset
    from tf1compat.slim import BatchedDatasetDataProvider

    with tc.legacy_graph():
        provider = BatchedDatasetDataProvider(
            _slim_dataset(path), BATCH_SIZE, shuffle=False, num_epochs=epochs, num_threads=2,
            allow_smaller_final_batch=True, cache=cache)
        image, label = provider.get(["image", "label"])
    return tc.SessionIterator({"image": image, "label": label})


def _decode_batch(parsed, png):
    """A batch of parsed records' images decoded (PNG one by one in a map_fn)."""
    from benchmarks.reading_variants import IMAGE_SHAPE
    from tf1compat._tf import tf

    if png:
        images = tf.map_fn(lambda data: tf.io.decode_png(data, channels=3),
                           parsed["image/encoded"], fn_output_signature=tf.uint8)
    else:
        images = tf.io.decode_raw(parsed["image/encoded"], tf.uint8)
    return {"image": tf.reshape(images, [-1, *IMAGE_SHAPE]), "label": parsed["image/class/label"]}


def _batch_then_parse(path, png, cache, epochs):
    from benchmarks.reading_variants import FEATURES
    from tf1compat._tf import tf

    batches = tf.data.TFRecordDataset([path]).batch(BATCH_SIZE).map(
        lambda serialized: _decode_batch(tf.io.parse_example(serialized, FEATURES), png),
        num_parallel_calls=tf.data.AUTOTUNE)
    if cache:
        batches = batches.cache()
    return batches.repeat(epochs).prefetch(tf.data.AUTOTUNE)


# row name -> (builder, cache)
ROWS = {
    "classic TF1, lowered": (_classic, None),
    "classic TF1, lowered, no cache": (_classic, False),
    "slim, lowered": (_slim, None),
    "slim, lowered, no cache": (_slim, False),
    "fast path": (_fast_path, None),
    "fast path, no cache": (_fast_path, False),
    "slim fast path": (_slim_fast_path, None),
    "slim fast path, no cache": (_slim_fast_path, False),
    REFERENCE: (_batch_then_parse, False),
    CACHED_REFERENCE: (_batch_then_parse, True),
}


def _load_modules():
    """Import TensorFlow and what the rows use, before any timing: a user's program
    has them loaded (the first import takes seconds, which no row should count)."""
    import benchmarks.reading_variants  # noqa: F401
    import tf1compat.migrate.tfdata  # noqa: F401  (what tc.to_tf_data loads when first used)
    from tf1compat._tf import tf
    from tf1compat.pipeline import fastpath  # noqa: F401
    from tf1compat.slim import BatchedDatasetDataProvider, dataset_data_provider  # noqa: F401

    tf.constant(0).numpy()


def measure(row, path, png, epochs):
    """Wall-clock and CPU seconds (this process, all threads) for ``epochs`` epochs of
    ``row`` over ``path``, from building to the last batch (TensorFlow already imported)."""
    build, cache = ROWS[row]
    _load_modules()
    start, start_cpu = time.perf_counter(), time.process_time()
    batches = iter(build(path, png, cache, epochs))
    examples = len(next(batches)["label"])
    first = time.perf_counter() - start
    examples += sum(len(batch["label"]) for batch in batches)
    return {"seconds": time.perf_counter() - start, "cpu_seconds": time.process_time() - start_cpu,
            "first_batch_seconds": first, "examples": examples, "peak_rss_mb": peak_rss_mb()}


# ------------------------------------------------------------ the suite

def _run_child(arguments):
    return run_child("benchmarks.epochs", arguments)


def _rows():
    """(table row, row, records kind) in table order."""
    return [(f"{'PNG: ' if kind == 'png' else ''}{row}", row, kind)
            for kind in ("raw", "png") for row in ROWS]


def _ratios(results, row, reference):
    """Per round, the time of ``reference`` over the time of ``row``."""
    return [r["seconds"] / m["seconds"]
            for m, r in zip(results[row], results[reference], strict=True) if m["seconds"]]


def _spread(values):
    """``[median, lowest, highest]``."""
    return [statistics.median(values), min(values), max(values)]


def summarize(results):
    """Per row: median seconds (wall and CPU), the median (range) of per-round ratios to
    each reference, and for a cached row the cache's gain: its uncached twin's time
    over its own, per round."""
    summary = {}
    for row, rounds in results.items():
        prefix = "PNG: " if row.startswith("PNG: ") else ""
        summary[row] = {"seconds": statistics.median(m["seconds"] for m in rounds),
                        "cpu_seconds": statistics.median(m["cpu_seconds"] for m in rounds),
                        "first_batch_seconds": statistics.median(
                            m["first_batch_seconds"] for m in rounds),
                        "after_first_seconds": statistics.median(
                            m["seconds"] - m["first_batch_seconds"] for m in rounds),
                        "examples": rounds[0]["examples"],
                        "peak_rss_mb": max(m["peak_rss_mb"] for m in rounds)}
        for key, reference in (("vs_uncached", REFERENCE), ("vs_cached", CACHED_REFERENCE)):
            summary[row][key] = _spread(_ratios(results, row, prefix + reference))
        twin = _uncached_twin(row)
        summary[row]["cache_gain"] = (_spread(_ratios(results, row, twin))
                                      if twin in results else None)
    return summary


def _uncached_twin(row):
    """The row reading the same records the same way without a cache."""
    if row.endswith(CACHED_REFERENCE):
        return row.replace(CACHED_REFERENCE, REFERENCE)
    return f"{row}, no cache"


def _cell(spread):
    return "" if spread is None else f"{spread[0]:.2f} ({spread[1]:.2f}-{spread[2]:.2f})"


def format_table(summary, settings):
    lines = [
        f"{settings['epochs']} epochs of {settings['examples']:,} CIFAR-shaped records "
        f"(32x32x3 uint8 + int64 label), files in order, batch {BATCH_SIZE}; seconds from "
        "building the pipeline to its last batch (TensorFlow already imported), wall clock "
        "and the process's CPU (all its threads: what the load does not change), median of "
        f"{settings['rounds']} interleaved rounds, one process per row and round. "
        "Speed-up: the reference's time over the row's, per round, median (range of the "
        "rounds); the cache's gain: the row's time without its cache over its time with it. "
        "Set-up: seconds to the first batch (building the pipeline, its functions and the "
        "first batch); the epochs: the rest, to the last batch (medians each).",
        "",
        f"| pipeline | seconds | set-up s | the epochs s | CPU s | examples | speed-up vs "
        f"{REFERENCE} | speed-up vs {CACHED_REFERENCE} | the cache's gain | peak RSS MB |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row, values in summary.items():
        lines.append(f"| {row} | {values['seconds']:.2f} | {values['first_batch_seconds']:.2f} | "
                     f"{values['after_first_seconds']:.2f} | {values['cpu_seconds']:.2f} | "
                     f"{values['examples']:,} | {_cell(values['vs_uncached'])} | "
                     f"{_cell(values['vs_cached'])} | {_cell(values['cache_gain'])} | "
                     f"{values['peak_rss_mb']:,.0f} |")
    return "\n".join(lines)


def _target_lines(results):
    lines = []
    for row, reference, threshold in TARGETS:
        ratios = _ratios(results, row, reference)
        median = statistics.median(ratios)
        verdict = "reached" if median >= threshold else "missed"
        lines.append(f"- {row} vs {reference}: {median:.2f}x (rounds {min(ratios):.2f}-"
                     f"{max(ratios):.2f}; target >= {threshold}x: {verdict})")
    return lines


def run(quick=False, out_dir="bench-results"):
    """Build the data, time every row, print and write the table; returns 0."""
    settings = QUICK if quick else FULL
    os.makedirs(out_dir, exist_ok=True)
    data_dir = os.path.join(out_dir, "data", "quick" if quick else f"epochs-{settings['examples']}")
    epochs = str(settings["epochs"])
    print(f"epochs: data in {data_dir} (built once, not timed)", flush=True)
    paths = _run_child(["data", data_dir, str(settings["examples"])])
    load_before = os.getloadavg()[0]
    rows = _rows()
    results = {name: [] for name, _, _ in rows}
    # Full runs time each row in its own process; --quick all rows in one, to stay short.
    groups = [rows] if settings["one_process"] else [[row] for row in rows]
    for round_index in range(settings["rounds"]):
        for group in groups:
            answers = _run_child(["measure", json.dumps(
                [[row, paths[kind], kind, epochs] for _, row, kind in group])])
            for (name, _, _), measured in zip(group, answers, strict=True):
                results[name].append(measured)
                print(f"round {round_index + 1}/{settings['rounds']}  {name:45s} "
                      f"{measured['seconds']:8.2f} s ({measured['first_batch_seconds']:.2f} s "
                      f"to the first batch) {measured['cpu_seconds']:8.2f} CPU s",
                      flush=True)
    load_after = os.getloadavg()[0]
    summary = summarize(results)
    write_report("epochs", quick, out_dir, (load_before, load_after), [
        format_table(summary, settings), "\n".join(["Targets:", *_target_lines(results)])],
        {"settings": settings, "batch_size": BATCH_SIZE, "summary": summary, "rounds": results})
    return 0


def _child_main(argv):
    """``data DIR COUNT`` or ``measure JOBS_JSON`` (a list of [row, path, kind, epochs]):
    print the answer as one JSON line."""
    if argv[0] == "data":
        from benchmarks.reading import build_data
        print(json.dumps(build_data(argv[1], int(argv[2]))))
        return
    print(json.dumps([measure(row, path, kind == "png", int(epochs))
                      for row, path, kind, epochs in json.loads(argv[1])]))


if __name__ == "__main__":
    _child_main(sys.argv[1:])
