"""``scripts/bench --suite epochs``: five epochs of CIFAR-shaped records, with the
in-memory caches of the lowering and the fast paths against hand-written tf.data.

The records are :mod:`.reading`'s (raw bytes and PNG, built once under
``out_dir/data``). Each row reads them for 5 epochs at batch 128, files in order,
and is timed from building the pipeline to its last batch (the cache is filled in
that time), in a fresh subprocess per row and round, rounds interleaved. Rows: the
classic queue pipeline (read, ``parse_single_example``, decode, ``tf.train.batch``)
and slim's ``DatasetDataProvider`` pipeline, each lowered with ``to_tf_data`` (with
the cache, as by default, and without it), the same two as fast paths
(``build_example_batches`` and slim's ``BatchedDatasetDataProvider``, with their
cache and without it), and the hand-written tf.data
batch-then-parse of TensorFlow's guides, without a cache and with ``.cache()``
added by hand. Ratio: the reference's time over the row's, per round, then the
median (and the rounds' range). Writes ``epochs.md`` and ``epochs.json``.
"""

import json
import os
import statistics
import sys
import time

from benchmarks import peak_rss_mb, run_child, write_report

EPOCHS = 5
BATCH_SIZE = 128
FULL = {"examples": 25_000, "rounds": 3, "one_process": False}
QUICK = {"examples": 300, "rounds": 1, "one_process": True}
REFERENCE = "tf.data batch-then-parse"
CACHED_REFERENCE = "tf.data batch-then-parse + .cache()"
# (row, reference, target ratio): issue 23's goals for the cached rows, each against
# the port (2x on raw records, 4x on PNG) and the port with .cache() (1x)
TARGETS = [(f"{kind}{row}", f"{kind}{reference}", goals[kind])
           for rows in (("classic TF1, lowered", "slim, lowered"),
                        ("fast path", "slim fast path"))
           for reference, goals in ((REFERENCE, {"": 2.0, "PNG: ": 4.0}),
                                    (CACHED_REFERENCE, {"": 1.0, "PNG: ": 1.0}))
           for kind in ("", "PNG: ") for row in rows]


# ------------------------------------------------------------ the rows (in a child)

def _classic(path, png, cache):
    import tf1compat as tc
    from benchmarks.reading_variants import _decode_one

    with tc.legacy_graph():
        queue = tc.string_input_producer([path], num_epochs=EPOCHS, shuffle=False)
        _, value = tc.TFRecordReader().read(queue)
        batch = tc.batch(_decode_one(value, png), BATCH_SIZE, num_threads=2,
                         capacity=4 * BATCH_SIZE, allow_smaller_final_batch=True)
    return tc.to_tf_data(batch, cache=cache)


def _slim(path, png, cache):
    import tf1compat as tc
    from benchmarks.reading_variants import _slim_dataset
    from tf1compat.slim import dataset_data_provider

    with tc.legacy_graph():
        provider = dataset_data_provider.DatasetDataProvider(
            _slim_dataset(path), num_readers=1, shuffle=False, num_epochs=EPOCHS)
        image, label = provider.get(["image", "label"])
        batch = tc.batch({"image": image, "label": label}, BATCH_SIZE, num_threads=2,
                         capacity=4 * BATCH_SIZE, allow_smaller_final_batch=True)
    return tc.to_tf_data(batch, cache=cache)


def _fast_path(path, png, cache):
    import tf1compat as tc
    from benchmarks.reading_variants import FEATURES
    from tf1compat.pipeline import fastpath

    with tc.legacy_graph():
        queue = tc.string_input_producer([path], num_epochs=EPOCHS, shuffle=False)
        batch = fastpath.build_example_batches(
            queue, FEATURES, BATCH_SIZE, decode=lambda parsed: _decode_batch(parsed, png),
            num_threads=2, allow_smaller_final_batch=True, cache=cache)
    return tc.SessionIterator(batch)


def _slim_fast_path(path, png, cache):
    import tf1compat as tc
    from benchmarks.reading_variants import _slim_dataset
    from tf1compat.slim import BatchedDatasetDataProvider

    with tc.legacy_graph():
        provider = BatchedDatasetDataProvider(
            _slim_dataset(path), BATCH_SIZE, shuffle=False, num_epochs=EPOCHS, num_threads=2,
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


def _batch_then_parse(path, png, cache):
    from benchmarks.reading_variants import FEATURES
    from tf1compat._tf import tf

    batches = tf.data.TFRecordDataset([path]).batch(BATCH_SIZE).map(
        lambda serialized: _decode_batch(tf.io.parse_example(serialized, FEATURES), png),
        num_parallel_calls=tf.data.AUTOTUNE)
    if cache:
        batches = batches.cache()
    return batches.repeat(EPOCHS).prefetch(tf.data.AUTOTUNE)


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
    from tf1compat._tf import tf
    from tf1compat.pipeline import fastpath  # noqa: F401
    from tf1compat.slim import BatchedDatasetDataProvider, dataset_data_provider  # noqa: F401

    tf.constant(0).numpy()


def measure(row, path, png):
    """Seconds for 5 epochs of ``row`` over ``path``, from building to the last batch
    (TensorFlow already imported)."""
    build, cache = ROWS[row]
    _load_modules()
    start = time.perf_counter()
    examples = sum(len(batch["label"]) for batch in build(path, png, cache))
    return {"seconds": time.perf_counter() - start, "examples": examples,
            "peak_rss_mb": peak_rss_mb()}


# ------------------------------------------------------------ the suite

def _run_child(arguments):
    return run_child("benchmarks.epochs", arguments)


def _rows():
    """(table row, row, records kind) in table order."""
    return [(f"{'PNG: ' if kind == 'png' else ''}{row}", row, kind)
            for kind in ("raw", "png") for row in ROWS]


def _ratios(results, row, reference):
    return [r["seconds"] / m["seconds"]
            for m, r in zip(results[row], results[reference], strict=True) if m["seconds"]]


def summarize(results):
    """Per row: median seconds, and the median (range) of per-round ratios to each reference."""
    summary = {}
    for row, rounds in results.items():
        prefix = "PNG: " if row.startswith("PNG: ") else ""
        summary[row] = {"seconds": statistics.median(m["seconds"] for m in rounds),
                        "examples": rounds[0]["examples"],
                        "peak_rss_mb": max(m["peak_rss_mb"] for m in rounds)}
        for key, reference in (("vs_uncached", REFERENCE), ("vs_cached", CACHED_REFERENCE)):
            ratios = _ratios(results, row, prefix + reference)
            summary[row][key] = [statistics.median(ratios), min(ratios), max(ratios)]
    return summary


def format_table(summary, settings):
    lines = [
        f"{EPOCHS} epochs of {settings['examples']:,} CIFAR-shaped records (32x32x3 uint8 + "
        f"int64 label), files in order, batch {BATCH_SIZE}; seconds from building the "
        f"pipeline to its last batch (TensorFlow already imported), median of "
        f"{settings['rounds']} interleaved rounds, one process per row and round. "
        "Speed-up: the reference's time over the row's, per round, median (range of the "
        "rounds).",
        "",
        f"| pipeline | seconds | examples | speed-up vs {REFERENCE} | speed-up vs "
        f"{CACHED_REFERENCE} | peak RSS MB |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for row, values in summary.items():
        cells = [f"{median:.2f} ({low:.2f}-{high:.2f})"
                 for median, low, high in (values["vs_uncached"], values["vs_cached"])]
        lines.append(f"| {row} | {values['seconds']:.2f} | {values['examples']:,} | "
                     f"{cells[0]} | {cells[1]} | {values['peak_rss_mb']:,.0f} |")
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
                [[row, paths[kind], kind] for _, row, kind in group])])
            for (name, _, _), measured in zip(group, answers, strict=True):
                results[name].append(measured)
                print(f"round {round_index + 1}/{settings['rounds']}  {name:45s} "
                      f"{measured['seconds']:8.2f} s", flush=True)
    load_after = os.getloadavg()[0]
    summary = summarize(results)
    write_report("epochs", quick, out_dir, (load_before, load_after), [
        format_table(summary, settings), "\n".join(["Targets:", *_target_lines(results)])],
        {"settings": settings, "epochs": EPOCHS, "batch_size": BATCH_SIZE, "summary": summary,
         "rounds": results})
    return 0


def _child_main(argv):
    """``data DIR COUNT`` or ``measure JOBS_JSON`` (a list of [row, path, kind]): print
    the answer as one JSON line."""
    if argv[0] == "data":
        from benchmarks.reading import build_data
        print(json.dumps(build_data(argv[1], int(argv[2]))))
        return
    print(json.dumps([measure(row, path, kind == "png")
                      for row, path, kind in json.loads(argv[1])]))


if __name__ == "__main__":
    _child_main(sys.argv[1:])
