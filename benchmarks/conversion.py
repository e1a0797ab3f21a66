"""Conversion to slim TFRecords, side by side: tf1compat's shard plans on the local runner
and on Apache Beam (in-memory and two processes) against the classic converters, on
CIFAR-10 and on a folder of JPEG photos.

The classic converters are written the way slim's scripts were. CIFAR-10
(``download_and_convert_cifar10.py``): one Session per batch file, one
``sess.run(tf.image.encode_png)`` per image. Image folder
(``download_and_convert_flowers.py``): one ``sess.run(tf.image.decode_jpeg)`` per
image to learn its size, the file's bytes as ``image/encoded``, 5 shards per split.
Both write ``tf.train.Example`` protos with ``tf.io.TFRecordWriter``. They take about a
millisecond per image, so they are timed on a part of the data (CIFAR: 2 of the 6 batch
files; photos: the first third); images/s compare directly.

Every measurement (and the data generation) runs in a fresh Python process (``python -m
benchmarks.conversion``), so its peak memory is its own: ``VmHWM`` of that
process and the largest ``VmHWM`` among its descendants (our workers, Beam's SDK
workers), polled every 50 ms while it converts: each child's own peak, which
``RUSAGE_CHILDREN`` cannot give (its ``ru_maxrss`` keeps the parent's size at the fork). Times
cover the conversion only, not interpreter start-up or importing TensorFlow or Beam; Beam's
pipeline start-up is inside. Rounds are interleaved; the table shows medians.
"""

import json
import os
import statistics
import sys
import tempfile
import threading
import time

import numpy as np

from benchmarks import peak_rss_mb, run_child, vm_hwm_mb, write_text
from tf1compat import cifar10

_FULL = {"cifar_train": 50000, "cifar_test": 10000, "photos": 6000, "rounds": 3}
_QUICK = {"cifar_train": 50, "cifar_test": 10, "photos": 30, "rounds": 1}
_TWO_PROCESSES = ["--direct_running_mode=multi_processing", "--direct_num_workers=2"]
# row -> (dataset, converter, options)
VARIANTS = {
    "CIFAR-10 png: tf1compat local": ("cifar", "local", {"image_format": "png"}),
    "CIFAR-10 raw: tf1compat local": ("cifar", "local", {"image_format": "raw"}),
    "CIFAR-10 png: tf1compat beam in-memory": ("cifar", "beam", {"image_format": "png"}),
    "CIFAR-10 png: tf1compat beam 2 processes": (
        "cifar", "beam", {"image_format": "png", "beam_options": _TWO_PROCESSES}),
    "CIFAR-10 png: classic session-per-image": ("cifar", "classic", {}),
    "photos: tf1compat local": ("photos", "local", {}),
    "photos: tf1compat beam in-memory": ("photos", "beam", {}),
    "photos: tf1compat beam 2 processes": ("photos", "beam", {"beam_options": _TWO_PROCESSES}),
    "photos: classic decode-per-image": ("photos", "classic", {}),
}
_CLASSIC_FILES = {"train": ["data_batch_1.bin"], "test": ["test_batch.bin"]}
_CLASSES = ("daisy", "dandelion", "roses", "sunflowers", "tulips")


def _make_photos(directory, count):
    """``count`` seeded JPEG photos (smooth colour fields with grain, 120-320 pixels a
    side) in 5 class folders; returns the folder."""
    from PIL import Image
    rng = np.random.default_rng(0)
    folder = os.path.join(directory, "photos")
    for i in range(count):
        height, width = (int(n) for n in rng.integers(120, 321, 2))
        coarse = rng.integers(0, 256, (4, 4, 3), dtype=np.uint8)
        image = Image.fromarray(coarse).resize((width, height), Image.BILINEAR)
        pixels = np.asarray(image, np.int16) + rng.integers(-8, 9, (height, width, 3))
        path = os.path.join(folder, _CLASSES[i % len(_CLASSES)], f"{i:06d}.jpg")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        Image.fromarray(np.clip(pixels, 0, 255).astype(np.uint8)).save(path, quality=90)
    return folder


def _classic_cifar(folder, output_dir):
    """Convert the way slim's CIFAR-10 script did; returns the number of images."""
    from tf1compat._tf import tf, v1

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
                            w.write(_classic_example(png, b"png", int(record[0]), 32, 32))
                            count += 1
    return count


def _classic_example(encoded, image_format, label, height, width):
    from tf1compat._tf import tf

    def feature(value):
        if isinstance(value, bytes):
            return tf.train.Feature(bytes_list=tf.train.BytesList(value=[value]))
        return tf.train.Feature(int64_list=tf.train.Int64List(value=[value]))

    return tf.train.Example(features=tf.train.Features(feature={
        "image/encoded": feature(encoded), "image/format": feature(image_format),
        "image/class/label": feature(label), "image/height": feature(height),
        "image/width": feature(width)})).SerializeToString()


def _classic_photos(folder, output_dir, num_shards=5):
    """Convert the first third of the photos the way slim's flowers script did."""
    from tf1compat._tf import tf, v1

    classes = sorted(os.listdir(folder))
    files = sorted(os.path.join(folder, c, f) for c in classes
                   for f in os.listdir(os.path.join(folder, c)))
    files = files[:max(1, len(files) // 3)]
    per_shard = -(-len(files) // num_shards)
    with tf.Graph().as_default():
        jpeg_data = v1.placeholder(dtype=tf.string)
        decoded = tf.image.decode_jpeg(jpeg_data, channels=3)
        with v1.Session() as sess:
            for shard in range(num_shards):
                name = f"flowers_train_{shard:05d}-of-{num_shards:05d}.tfrecord"
                with tf.io.TFRecordWriter(os.path.join(output_dir, name)) as writer:
                    for path in files[shard * per_shard:(shard + 1) * per_shard]:
                        data = tf.io.gfile.GFile(path, "rb").read()
                        height, width = sess.run(decoded, feed_dict={jpeg_data: data}).shape[:2]
                        label = classes.index(os.path.basename(os.path.dirname(path)))
                        writer.write(_classic_example(data, b"jpg", label, height, width))
    return len(files)


def _descendants():
    """The process ids of this process's children, their children, and so on."""
    children = {}
    with os.scandir("/proc") as entries:
        for entry in entries:
            if entry.name.isdigit():
                try:
                    with open(f"/proc/{entry.name}/stat", "rb") as f:
                        stat = f.read()
                except OSError:     # gone meanwhile
                    continue
                parent = int(stat[stat.rindex(b")") + 2:].split()[1])  # after "(comm)"
                children.setdefault(parent, []).append(int(entry.name))
    found, pending = [], [os.getpid()]
    while pending:
        below = children.get(pending.pop(), [])
        found.extend(below)
        pending.extend(below)
    return found


class _ChildPeak:
    """The largest own peak RSS (VmHWM) of this process's descendants while the block
    runs, polled every ``interval`` seconds (``mb``: None if there were none)."""

    def __init__(self, interval=0.05):
        self.interval = interval
        self.mb = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True)

    def _sample(self):
        for pid in _descendants():
            peak = vm_hwm_mb(pid)
            if peak is not None:
                self.mb = max(self.mb or 0, peak)

    def _poll(self):
        while not self._stop.wait(self.interval):
            self._sample()

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc_info):
        self._stop.set()
        self._thread.join()


def _measure(row, source, output_dir):
    """Run one variant in this process; returns its numbers as a dict."""
    dataset, converter, options = VARIANTS[row]
    if converter == "classic":
        import tf1compat._tf  # noqa: F401 - the TensorFlow import is not timed
    if converter == "beam":
        import apache_beam  # noqa: F401 - neither is Beam's
    with _ChildPeak() as children:
        start = time.perf_counter()
        if converter == "classic":
            images = (_classic_cifar if dataset == "cifar" else _classic_photos)(
                source, output_dir)
        elif dataset == "cifar":
            summary = cifar10.convert(source, output_dir, runner=converter, overwrite=True,
                                      quiet=True, **options)
            images = sum(summary.counts.values())
        else:
            from tf1compat.convert import imagefolder
            summary = imagefolder.convert(source, output_dir, name="flowers",
                                          runner=converter, quiet=True, **options)
            images = sum(summary.counts.values())
        seconds = time.perf_counter() - start
    return {"images": images, "seconds": seconds,
            "bytes": sum(e.stat().st_size for e in os.scandir(output_dir)),
            "rss_main_mb": peak_rss_mb(),
            # the classic converters start no workers (TensorFlow's own short-lived
            # forks would show the parent's size)
            "rss_child_mb": None if converter == "classic" else children.mb}


def _run_python(*args):
    """Run this module in a fresh interpreter; returns the JSON its last line prints."""
    return run_child("benchmarks.conversion", args)


def _measure_in_subprocess(row, source, work_dir):
    with tempfile.TemporaryDirectory(dir=work_dir) as output_dir:
        return _run_python("measure", row, source, output_dir)


def _row(row, results, classic_rate):
    rate = statistics.median(r["images"] / r["seconds"] for r in results)
    children = [r["rss_child_mb"] for r in results if r["rss_child_mb"]]
    return (f"| {row} | {results[0]['images']} | "
            f"{statistics.median(r['seconds'] for r in results):.2f} | {rate:,.0f} | "
            f"{rate / classic_rate:.1f}x | {max(r['rss_main_mb'] for r in results):.0f} | "
            f"{f'{max(children):.0f}' if children else 'none'} |")


def _table(results, settings):
    lines = []
    for dataset in ("cifar", "photos"):
        rows = [row for row in results if VARIANTS[row][0] == dataset]
        if not rows:
            continue
        classic = [row for row in rows if VARIANTS[row][1] == "classic"]
        if not classic:
            raise ValueError(f"no classic row for {dataset} among {rows}: the 'vs classic' "
                             "column divides by it")
        classic_rate = statistics.median(r["images"] / r["seconds"] for r in results[classic[0]])
        lines.extend(_row(row, results[row], classic_rate) for row in rows)
    note = " (--quick: a harness check, the numbers mean nothing)" if settings is _QUICK else ""
    return "\n".join([
        f"Conversion to slim TFRecords: CIFAR-10 {settings['cifar_train']} + "
        f"{settings['cifar_test']} synthetic images; {settings['photos']} synthetic JPEG "
        f"photos (120-320 px a side, 5 classes, 10% validation); median of "
        f"{settings['rounds']} round(s), {os.cpu_count()} CPU(s){note}",
        "",
        "| converter | images | seconds | images/s | vs classic | peak RSS main (MB) "
        "| peak RSS largest child (MB) |",
        "|---|---:|---:|---:|---:|---:|---:|",
        *lines,
        "",
        "tf1compat local: worker processes on all cores. Beam: FnApiRunner in this process "
        "(in-memory) or with --direct_running_mode=multi_processing --direct_num_workers=2. "
        "The classic converters are timed on a third of the data; images/s compare "
        "directly. Seconds exclude interpreter start-up and importing TensorFlow or Beam; "
        "peak RSS main is VmHWM of the measuring process; largest child, the largest VmHWM "
        "among its child processes (their own peak, polled every 50 ms; none: no children).",
    ])


def run(quick=False, out_dir="bench-results", rows=None):
    """Measure the converters, print the markdown table, write it to
    ``out_dir/conversion.md`` (without ``rows``, then the engines' table of
    :mod:`benchmarks.engines`, ``out_dir/engines.md``); returns 0.
    ``quick``: tiny data, one round; ``rows``: the VARIANTS to measure (default all;
    each dataset's classic row among them)."""
    settings = _QUICK if quick else _FULL
    results = {row: [] for row in rows or VARIANTS}
    with tempfile.TemporaryDirectory() as work_dir:
        sources = {"cifar": _run_python("cifar", work_dir, str(settings["cifar_train"]),
                                        str(settings["cifar_test"])),
                   "photos": _run_python("photos", work_dir, str(settings["photos"]))}
        for _ in range(settings["rounds"]):
            for row in results:
                results[row].append(_measure_in_subprocess(row, sources[VARIANTS[row][0]],
                                                           work_dir))
    table = _table(results, settings)
    print(table)
    os.makedirs(out_dir, exist_ok=True)
    write_text(os.path.join(out_dir, "conversion.md"), table + "\n")
    if rows is None:        # and the engines: local, Dask, Beam, to disk and to S3
        from benchmarks import engines
        engines.run(quick=quick, out_dir=out_dir)
    return 0


if __name__ == "__main__":
    # python -m benchmarks.conversion measure ROW SOURCE OUTPUT_DIR
    #                                          | cifar DIRECTORY NUM_TRAIN NUM_TEST
    #                                          | photos DIRECTORY COUNT
    command, arguments = sys.argv[1], sys.argv[2:]
    if command == "measure":
        print(json.dumps(_measure(*arguments)))
    elif command == "cifar":
        print(json.dumps(cifar10.make_synthetic(arguments[0], int(arguments[1]),
                                                int(arguments[2]))))
    else:
        print(json.dumps(_make_photos(arguments[0], int(arguments[1]))))
