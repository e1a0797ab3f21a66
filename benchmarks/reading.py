"""``scripts/bench --suite reading``: TF1 queue pipelines, our fast paths and tf.data.

Builds CIFAR-shaped TFRecords once (50,000 Examples of a 32x32x3 uint8 image and
an int64 label, as raw bytes and as PNG; cached under ``out_dir/data``), then
times epochs (after a warm-up epoch; as many as span a second of batches, at least
one) of every variant of
:mod:`.reading_variants` at batch 128, each in a fresh subprocess, interleaved
over several rounds (round 1 runs every variant once, then round 2, ...) so
slow drifts of a shared machine hit all variants alike. Reported per variant:
the median examples/s (first batch to last), the median of its per-round ratio
to tf.data per-example (same records, same shuffling), start-up time, and peak
RSS of its process (:func:`~benchmarks.peak_rss_mb`; it includes TensorFlow, shown as the
baseline row). Writes ``reading.md``,
``reading.png`` and ``reading.json`` to ``out_dir``.
"""

import json
import os
import statistics
import sys

import numpy as np

from benchmarks import bar_chart, run_child, write_report, write_text

BATCH_SIZE = 128
# measured_s: the seconds of batches each measurement spans at least, in whole epochs
# (one epoch of the fastest rows takes about 0.15 s, which jitter alone moves by half)
FULL = {"examples": 50_000, "rounds": 5, "shuffle_buffer": 1024, "one_process": False,
        "measured_s": 1.0}
QUICK = {"examples": 300, "rounds": 1, "shuffle_buffer": 64, "one_process": True,
         "measured_s": 0.0}
SEED = 0
REFERENCE = "tf.data per-example"
PNG_REFERENCE = "PNG: tf.data per-example"
COUNTING = "tf.data batch-then-parse, counting the bytes read"
# (what, variant, reference, target ratio), checked on raw records without shuffling
TARGETS = [
    ("TFRecord fast path vs tf.data batch-then-parse", "fast path (TFRecord)",
     "tf.data batch-then-parse", 1.2),
    ("TFRecord fast path vs no-parse floor", "fast path (TFRecord)",
     "floor: tf.data, no parsing", 0.7),
    ("slim fast path vs tf.data batch-then-parse", "fast path (slim)",
     "tf.data batch-then-parse", 1.2),
    ("PNG: slim fast path vs tf.data per-example", "PNG: fast path (slim)",
     PNG_REFERENCE, 1.5),
    ("classic pipeline lowered vs tf.data per-example", "classic TF1, lowered to tf.data",
     REFERENCE, 1.0),
    ("classic pipeline lowered vs tf.data batch-then-parse", "classic TF1, lowered to tf.data",
     "tf.data batch-then-parse", 0.9),
    ("classic pipeline naming records by their reader keys, lowered, vs the same without",
     "classic TF1 naming records by their keys, lowered", "classic TF1, lowered to tf.data",
     0.95),
    # no target: what any reader key costs in tf.data, the bytes before each batch
    # counted in order (a scan per batch), written by hand
    ("tf.data batch-then-parse counting the bytes read, vs the same without",
     COUNTING, "tf.data batch-then-parse", None),
]
# measured on records in order only
UNSHUFFLED_ONLY = ("classic TF1, sess.run loop", COUNTING)


# ------------------------------------------------------------------ data

def _synthetic_images(count, seed):
    """CIFAR-like images: 8x8 colour blocks plus noise, so PNGs compress as real ones do."""
    rng = np.random.default_rng(seed)
    blocks = rng.integers(0, 256, (count, 8, 8, 3)).astype(np.int16)
    images = blocks.repeat(4, axis=1).repeat(4, axis=2)
    images += rng.integers(-6, 7, images.shape, dtype=np.int16)
    return np.clip(images, 0, 255).astype(np.uint8), rng.integers(0, 10, count)


def _write_split(path, image_format, encoded, labels):
    from tf1compat.records import example, tfrecord

    tfrecord.write_records(path, (example.make_example({
        "image/encoded": data, "image/format": image_format,
        "image/class/label": int(label), "image/height": 32, "image/width": 32,
    }) for data, label in zip(encoded, labels, strict=True)))


def build_data(data_dir, count, seed=SEED):
    """Write (or reuse) ``raw.tfrecord`` and ``png.tfrecord`` of ``count`` examples."""
    from tf1compat import cifar10

    os.makedirs(data_dir, exist_ok=True)
    paths = {kind: os.path.join(data_dir, f"{kind}.tfrecord") for kind in ("raw", "png")}
    stamp = os.path.join(data_dir, "stamp.json")
    wanted = {"count": count, "seed": seed, "version": 1}
    if all(map(os.path.exists, paths.values())) and os.path.exists(stamp):
        with open(stamp) as f:
            if json.load(f) == wanted:
                return paths
    images, labels = _synthetic_images(count, seed)
    _write_split(paths["raw"], b"raw", (image.tobytes() for image in images), labels)
    _write_split(paths["png"], b"png", cifar10.encode_png(images), labels)
    write_text(stamp, json.dumps(wanted))
    return paths


# ------------------------------------------------------------ measurement

def _run_child(arguments):
    """Run ``python -m benchmarks.reading ARGUMENTS``; returns its JSON answer."""
    return run_child("benchmarks.reading", arguments)


def _plan():
    """(row name, variant, shuffled) for every row of the table, in table order."""
    from benchmarks.reading_variants import VARIANTS

    rows = []
    for shuffled in (False, True):
        for variant, (records, _, _) in VARIANTS.items():
            if shuffled and (records == "png" or variant in UNSHUFFLED_ONLY):
                continue
            rows.append((f"{variant}{', shuffled' if shuffled else ''}", variant, shuffled))
    return rows


def _jobs(paths, settings):
    """(row, measure job) per table row; a job is what one child measures."""
    from benchmarks.reading_variants import VARIANTS

    buffer = settings["shuffle_buffer"]
    shuffle = {"capacity": buffer + 3 * BATCH_SIZE, "min_after_dequeue": buffer}
    return [(row, [variant, paths[VARIANTS[variant][0]], shuffle if shuffled else None,
                   settings["measured_s"]])
            for row, variant, shuffled in _plan()]


def _measure_rounds(paths, settings, log):
    """Interleaved rounds; returns {row: [measurement per round]} and the baseline.

    Full runs measure each row in its own process (so peak memory is the row's
    own); ``--quick`` measures all rows in one process to keep the check short.
    """
    jobs = _jobs(paths, settings)
    results = {row: [] for row, _ in jobs}
    for round_index in range(settings["rounds"]):
        batches = [jobs] if settings["one_process"] else [[job] for job in jobs]
        for batch in batches:
            measured = _run_child(["measure", json.dumps([job for _, job in batch])])
            for (row, _), values in zip(batch, measured, strict=True):
                results[row].append(values)
                log(f"round {round_index + 1}/{settings['rounds']}  {row:45s} "
                    f"{values['examples_per_s']:10,.0f} ex/s")
    return results, _run_child(["baseline"])


def _reference_row(row):
    name = PNG_REFERENCE if row.startswith("PNG") else REFERENCE
    return name + (", shuffled" if row.endswith("shuffled") else "")


def summarize(results):
    """Per row: median examples/s, median per-round ratio to its reference, start-up, memory."""
    summary = {}
    for row, rounds in results.items():
        reference = results[_reference_row(row)]
        ratios = [m["examples_per_s"] / r["examples_per_s"]
                  for m, r in zip(rounds, reference, strict=True) if r["examples_per_s"]]
        summary[row] = {
            "examples_per_s": statistics.median(m["examples_per_s"] for m in rounds),
            "ratio": statistics.median(ratios) if ratios else float("nan"),
            "ratio_range": [min(ratios), max(ratios)] if ratios else None,
            "startup_s": statistics.median(m["startup_s"] for m in rounds),
            "peak_rss_mb": max(m["peak_rss_mb"] for m in rounds),
            "examples": rounds[0]["examples"],
        }
    return summary


def _target_lines(results):
    """Each target's per-round ratios (median and range) against its threshold."""
    lines = []
    for what, variant, reference, threshold in TARGETS:
        ratios = [m["examples_per_s"] / r["examples_per_s"] for m, r in
                  zip(results[variant], results[reference], strict=True) if r["examples_per_s"]]
        if not ratios:
            continue
        median = statistics.median(ratios)
        verdict = ("a measure, no target" if threshold is None else
                   f"target >= {threshold}x: {'reached' if median >= threshold else 'missed'}")
        lines.append(f"- {what}: {median:.2f}x (rounds {min(ratios):.2f}-{max(ratios):.2f}; "
                     f"{verdict})")
    return lines


# ---------------------------------------------------------------- output

def format_table(summary, baseline_mb, settings):
    """The markdown table (examples/s, ratios, start-up, peak memory)."""
    lines = [
        f"Epochs of {settings['examples']:,} CIFAR-shaped records (32x32x3 uint8 + int64 "
        f"label), batch {BATCH_SIZE}, after a warm-up epoch: as many as span "
        f"{settings['measured_s']:g} s of batches (at least one), each building its pipeline "
        f"anew; median of {settings['rounds']} interleaved rounds. "
        f"Ratio: median of per-round ratios to tf.data per-example on the same records "
        f"(shuffled rows: to shuffled tf.data; shuffle buffer {settings['shuffle_buffer']}). "
        "Queue pipelines and fast paths run with TensorFlow's default session config "
        "(what a user has) and 2 threads; tf.data uses AUTOTUNE.",
        "",
        "| pipeline | examples/s | ratio to tf.data per-example | start-up s | peak RSS MB |",
        "|---|---:|---:|---:|---:|",
    ]
    for row, values in summary.items():
        lines.append(f"| {row} | {values['examples_per_s']:,.0f} | {values['ratio']:.2f} "
                     f"| {values['startup_s']:.2f} | {values['peak_rss_mb']:,.0f} |")
    lines.append(f"| baseline: Python + TensorFlow imported, no pipeline | | | | "
                 f"{baseline_mb:,.0f} |")
    return "\n".join(lines)


def write_chart(summary, path):
    """Horizontal bars of examples/s per row, written atomically."""
    rows = list(summary)
    colors = ["tab:green" if "fast path" in row else
              "tab:blue" if "tf.data" in row else "tab:gray" for row in rows]
    bar_chart(path, rows, [summary[row]["examples_per_s"] for row in rows], colors,
              xlabel=f"examples/s (batch {BATCH_SIZE}, median of interleaved rounds)",
              title="Reading CIFAR-shaped TFRecords (green: tf1compat fast paths)")


def run(quick=False, out_dir="bench-results"):
    """Build the data, measure every variant, print and write the table; returns 0."""
    settings = QUICK if quick else FULL
    os.makedirs(out_dir, exist_ok=True)
    data_dir = os.path.join(out_dir, "data", "quick" if quick else "full")
    print(f"reading: data in {data_dir} (built once, not timed)", flush=True)
    # In a child, so this process stays small: off Linux the measuring children report
    # ru_maxrss, which keeps the parent's peak across fork and exec.
    paths = _run_child(["data", data_dir, str(settings["examples"])])
    load_before = os.getloadavg()[0]
    results, baseline = _measure_rounds(paths, settings, lambda line: print(line, flush=True))
    load_after = os.getloadavg()[0]
    summary = summarize(results)
    table = format_table(summary, baseline["peak_rss_mb"], settings)
    write_chart(summary, os.path.join(out_dir, "reading.png"))
    write_report("reading", quick, out_dir, (load_before, load_after), [
        table, "\n".join(["Targets (raw records, not shuffled):", *_target_lines(results)])],
        {"settings": settings, "batch_size": BATCH_SIZE, "summary": summary, "rounds": results,
         "baseline": baseline}, also=["reading.png"])
    return 0


def _child_main(argv):
    """``data DIR COUNT`` (:func:`build_data`), ``measure JOBS_JSON`` (a list of
    [variant, path, shuffle, measured seconds]) or ``baseline``: print the answer as
    one JSON line."""
    if argv[0] == "data":
        print(json.dumps(build_data(argv[1], int(argv[2]))))
        return
    from benchmarks import reading_variants

    if argv[0] == "baseline":
        answer = reading_variants.measure_baseline()
    else:
        answer = [reading_variants.measure(variant, path, BATCH_SIZE, shuffle, seconds)
                  for variant, path, shuffle, seconds in json.loads(argv[1])]
    print(json.dumps(answer))


if __name__ == "__main__":
    _child_main(sys.argv[1:])
