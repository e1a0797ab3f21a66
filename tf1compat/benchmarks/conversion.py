"""CIFAR-10 binary -> slim TFRecords: :func:`tf1compat.cifar10.convert` (PNG and
raw) against the classic converter, side by side on the same synthetic data.

The classic converter is written the way slim's ``download_and_convert_cifar10.py``
was: one Session per batch file, one ``sess.run(tf.image.encode_png)`` per image,
``tf.train.Example`` protos, ``tf.io.TFRecordWriter``. At about a millisecond per
image it is timed on two of the six batch files (20,000 images); images/s compare
directly. Every measurement (and the data generation) runs in a fresh Python
process (``python -m tf1compat.benchmarks.conversion``), so its peak memory is its
own: ``resource.getrusage`` ``ru_maxrss`` of that process and of its largest child
(our encoding workers); the small parent keeps the fork baseline low. Times cover
the conversion only, not interpreter start-up or importing TensorFlow. Rounds are
interleaved; the table shows medians.
"""

import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

from tf1compat import cifar10
from tf1compat.benchmarks import write_text

_FULL = {"num_train": 50000, "num_test": 10000, "rounds": 3}
_QUICK = {"num_train": 50, "num_test": 10, "rounds": 1}
_CONVERTERS = ("tf1compat png", "tf1compat raw", "classic session-per-image png")
_CLASSIC_FILES = {"train": ["data_batch_1.bin"], "test": ["test_batch.bin"]}


def _convert_classic(folder, output_dir):
    """Convert the way the old slim script did; returns the number of images."""
    import numpy as np

    from tf1compat._tf import tf, v1

    def int64_feature(value):
        return tf.train.Feature(int64_list=tf.train.Int64List(value=[value]))

    def bytes_feature(value):
        return tf.train.Feature(bytes_list=tf.train.BytesList(value=[value]))

    count = 0
    for split, names in _CLASSIC_FILES.items():
        with tf.io.TFRecordWriter(os.path.join(output_dir, f"cifar10_{split}.tfrecord")) as w:
            for name in names:
                records = np.fromfile(os.path.join(folder, name), np.uint8).reshape(-1, 3073)
                with tf.Graph().as_default():
                    image_placeholder = v1.placeholder(dtype=tf.uint8)
                    encoded_image = tf.image.encode_png(image_placeholder)
                    with v1.Session() as sess:
                        for record in records:
                            image = record[1:].reshape(3, 32, 32).transpose(1, 2, 0)
                            png = sess.run(encoded_image, feed_dict={image_placeholder: image})
                            example = tf.train.Example(features=tf.train.Features(feature={
                                "image/encoded": bytes_feature(png),
                                "image/format": bytes_feature(b"png"),
                                "image/class/label": int64_feature(int(record[0])),
                                "image/height": int64_feature(32),
                                "image/width": int64_feature(32)}))
                            w.write(example.SerializeToString())
                            count += 1
    return count


def _measure(converter, folder, output_dir):
    """Run one converter in this process; returns its numbers as a dict."""
    classic = converter == _CONVERTERS[-1]
    if classic:
        import tf1compat._tf  # noqa: F401 - the TensorFlow import is not timed
    start = time.perf_counter()
    if classic:
        images = _convert_classic(folder, output_dir)
    else:
        summary = cifar10.convert(folder, output_dir, image_format=converter.split()[-1],
                                  overwrite=True, quiet=True)
        images = sum(summary.counts.values())
    seconds = time.perf_counter() - start
    return {"images": images, "seconds": seconds,
            "bytes": sum(e.stat().st_size for e in os.scandir(output_dir)),
            "rss_main_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "rss_worker_mb": None if classic else
            resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024}


def _run_python(*args):
    """Run this module in a fresh interpreter; returns the JSON its last line prints."""
    result = subprocess.run([sys.executable, "-m", "tf1compat.benchmarks.conversion", *args],
                            check=True, capture_output=True, text=True)
    return json.loads(result.stdout.splitlines()[-1])


def _measure_in_subprocess(converter, folder, work_dir):
    with tempfile.TemporaryDirectory(dir=work_dir) as output_dir:
        return _run_python("measure", converter, folder, output_dir)


def _worker_rss(results):
    if results[0]["rss_worker_mb"] is None:
        return "no workers"
    return f"{max(r['rss_worker_mb'] for r in results):.0f}"


def _row(converter, results, classic_rate):
    rate = statistics.median(r["images"] / r["seconds"] for r in results)
    ratio = "1.0x" if classic_rate is None else f"{rate / classic_rate:.1f}x"
    return (f"| {converter} | {results[0]['images']} | "
            f"{statistics.median(r['seconds'] for r in results):.2f} | {rate:,.0f} | {ratio} | "
            f"{max(r['rss_main_mb'] for r in results):.0f} | "
            f"{_worker_rss(results)} | "
            f"{results[0]['bytes'] / results[0]['images']:,.0f} |")


def _table(results, settings):
    classic_rate = statistics.median(
        r["images"] / r["seconds"] for r in results[_CONVERTERS[-1]])
    rows = [_row(c, results[c], None if c == _CONVERTERS[-1] else classic_rate)
            for c in _CONVERTERS]
    note = " (--quick: a harness check, the numbers mean nothing)" if settings is _QUICK else ""
    return "\n".join([
        f"CIFAR-10 conversion, {settings['num_train']} + {settings['num_test']} synthetic "
        f"images, median of {settings['rounds']} round(s), {os.cpu_count()} CPU(s){note}",
        "",
        "| converter | images | seconds | images/s | vs classic | peak RSS main (MB) "
        "| peak RSS largest worker (MB) | output bytes/image |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
        *rows,
        "",
        "The classic converter is timed on data_batch_1.bin + test_batch.bin only (a third "
        "of the data); images/s compare directly. Seconds exclude interpreter start-up and "
        "the TensorFlow import; peak RSS is ru_maxrss of the measuring process and of its "
        "largest child process.",
    ])


def run(quick=False, out_dir="bench-results"):
    """Measure the converters, print the markdown table, write it to
    ``out_dir/conversion.md``; returns 0. ``quick``: tiny data, one round."""
    settings = _QUICK if quick else _FULL
    results = {converter: [] for converter in _CONVERTERS}
    with tempfile.TemporaryDirectory() as work_dir:
        folder = _run_python("synthetic", work_dir, str(settings["num_train"]),
                             str(settings["num_test"]))
        for _ in range(settings["rounds"]):
            for converter in _CONVERTERS:
                results[converter].append(_measure_in_subprocess(converter, folder, work_dir))
    table = _table(results, settings)
    print(table)
    os.makedirs(out_dir, exist_ok=True)
    write_text(os.path.join(out_dir, "conversion.md"), table + "\n")
    return 0


if __name__ == "__main__":
    # python -m tf1compat.benchmarks.conversion measure CONVERTER FOLDER OUTPUT_DIR
    #                                          | synthetic DIRECTORY NUM_TRAIN NUM_TEST
    if sys.argv[1] == "measure":
        print(json.dumps(_measure(*sys.argv[2:5])))
    else:
        print(json.dumps(cifar10.make_synthetic(sys.argv[2], int(sys.argv[3]),
                                                int(sys.argv[4]))))
