"""``scripts/bench --suite service``: a program's input throughput with and without
tf.data service.

The classic pipeline of :mod:`.reading_variants` (``string_input_producer`` +
``TFRecordReader`` + ``parse_single_example`` + ``decode_raw`` + ``batch(128)``),
lowered with ``to_tf_data(fetches)``, reads CIFAR-shaped records in 8 files
(dynamic sharding hands out files: one file would keep one worker busy) three
ways: in the reading process, and with ``service=`` on a dispatcher with one
worker and on one with two, read with the bounded wait (the default) and, on two
workers, by TensorFlow's own client (``service_timeout=inf``), side by side
(``tf1compat data-service`` processes on 127.0.0.1,
started here and stopped at the end). Each measurement is a fresh process timing
one epoch after a warm-up epoch; rounds are interleaved; medians are reported.
Writes ``service.md`` and ``service.json`` to ``out_dir``.
"""

import contextlib
import json
import os
import queue
import signal
import statistics
import subprocess
import sys
import threading
import time

from benchmarks import run_child, write_report, write_text
from benchmarks.reading import (
    BATCH_SIZE,
    _synthetic_images,
    _write_split,
)

SHARDS = 8
FULL = {"examples": 50_000, "rounds": 3}
QUICK = {"examples": 4_000, "rounds": 1}
LOCAL = "lowered to tf.data, in the reading process"
UNBOUNDED = "tf.data service, 2 workers, unbounded read (TensorFlow's client)"
# row -> (workers, service_timeout): the bounded read (the default) and TensorFlow's own
ROWS = {LOCAL: (0, None), "tf.data service, 1 worker": (1, None),
        "tf.data service, 2 workers": (2, None), UNBOUNDED: (2, "inf")}
_START_TIMEOUT = 180   # seconds a server may take to print where it listens


def build_shards(data_dir, count):
    """Write (or reuse) ``SHARDS`` files of ``count`` raw CIFAR-shaped examples in all;
    returns their glob pattern."""
    os.makedirs(data_dir, exist_ok=True)
    stamp = os.path.join(data_dir, "stamp.json")
    wanted = {"count": count, "shards": SHARDS, "version": 1}
    pattern = os.path.join(data_dir, "raw-*.tfrecord")
    if os.path.exists(stamp):
        with open(stamp) as f:
            if json.load(f) == wanted:
                return pattern
    images, labels = _synthetic_images(count, seed=0)
    for shard in range(SHARDS):
        _write_split(os.path.join(data_dir, f"raw-{shard}.tfrecord"), b"raw",
                     [image.tobytes() for image in images[shard::SHARDS]], labels[shard::SHARDS])
    write_text(stamp, json.dumps(wanted))
    return pattern


def _start_server(*arguments):
    """A ``tf1compat data-service`` process and the port it says it listens on."""
    process = subprocess.Popen([sys.executable, "-m", "tf1compat", "data-service", *arguments],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines = queue.Queue()
    threading.Thread(target=lambda: lines.put(process.stdout.readline()), daemon=True).start()
    try:
        line = lines.get(timeout=_START_TIMEOUT)
    except queue.Empty:
        line = ""
    if "listening on" not in line:
        process.kill()
        raise RuntimeError(f"data-service {arguments[0]} did not start: {process.stderr.read()}")
    return process, int(line.split(",")[0].rsplit(":", 1)[1])


@contextlib.contextmanager
def _cluster(workers):
    """A dispatcher and ``workers`` workers on 127.0.0.1; yields ``grpc://...``."""
    processes = []
    try:
        dispatcher, port = _start_server("dispatcher", "--port", "0")
        processes.append(dispatcher)
        for _ in range(workers):
            processes.append(_start_server("worker", "--dispatcher", f"127.0.0.1:{port}",
                                           "--host", "127.0.0.1")[0])
        yield f"grpc://127.0.0.1:{port}"
    finally:
        for process in reversed(processes):
            process.send_signal(signal.SIGTERM)
        for process in processes:
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def _run_child(service, pattern, service_timeout):
    return run_child("benchmarks.service",
                     [service or "-", pattern, service_timeout or "-"])


def measure(service, pattern, service_timeout=None):
    """One epoch of the lowered classic pipeline (after a warm-up epoch), on ``service``
    when given (each wait bounded by ``service_timeout``): examples/s from the first
    batch to the last, and start-up seconds."""
    import tf1compat as tc
    from benchmarks.reading_variants import _classic

    def epoch():
        start = time.perf_counter()
        with tc.legacy_graph():
            fetches = _classic(pattern, BATCH_SIZE, None)
        times, count = [], 0
        served = {} if service is None else {"service": service,
                                             "service_timeout": service_timeout}
        for batch in tc.to_tf_data(fetches, **served):
            batch = {key: value.numpy() for key, value in batch.items()}
            times.append(time.perf_counter())
            count += len(batch["label"])
        rest = count - len(batch["label"]) if len(times) > 1 else 0
        return {"examples_per_s": rest / (times[-1] - times[0]) if rest else 0.0,
                "examples": count, "startup_s": times[0] - start}
    epoch()
    return epoch()


def _table(results, settings):
    medians = {row: statistics.median(r["examples_per_s"] for r in rounds)
               for row, rounds in results.items()}
    startup = {row: statistics.median(r["startup_s"] for r in rounds)
               for row, rounds in results.items()}
    lines = [f"One epoch of {settings['examples']:,} CIFAR-shaped records in {SHARDS} files, "
             f"batch {BATCH_SIZE}; median of {settings['rounds']} interleaved rounds.", "",
             "| input pipeline | workers | examples/s | per worker | vs in-process | "
             "start-up s |", "|---|---:|---:|---:|---:|---:|"]
    for row, (workers, _) in ROWS.items():
        per_worker = f"{medians[row] / workers:,.0f}" if workers else ""
        lines.append(f"| {row} | {workers or ''} | {medians[row]:,.0f} | {per_worker} | "
                     f"{medians[row] / medians[LOCAL]:.2f} | {startup[row]:.2f} |")
    return "\n".join(lines), medians


def run(quick=False, out_dir="bench-results"):
    """Build the data, measure the rows, print and write the table; returns 0."""
    settings = QUICK if quick else FULL
    os.makedirs(out_dir, exist_ok=True)
    data_dir = os.path.join(out_dir, "data", "service-quick" if quick else "service")
    pattern = build_shards(data_dir, settings["examples"])
    print(f"service: data in {data_dir} (built once, not timed)", flush=True)
    load_before = os.getloadavg()[0]
    results = {row: [] for row in ROWS}
    with _cluster(1) as one, _cluster(2) as two:
        services = {0: None, 1: one, 2: two}
        for round_index in range(settings["rounds"]):
            for row, (workers, service_timeout) in ROWS.items():
                results[row].append(_run_child(services[workers], pattern, service_timeout))
                print(f"round {round_index + 1}/{settings['rounds']}  {row:45s} "
                      f"{results[row][-1]['examples_per_s']:10,.0f} ex/s", flush=True)
    load_after = os.getloadavg()[0]
    table, medians = _table(results, settings)
    write_report("service", quick, out_dir, (load_before, load_after), [table],
                 {"settings": settings, "shards": SHARDS, "batch_size": BATCH_SIZE,
                  "medians": medians, "rounds": results})
    return 0


if __name__ == "__main__":
    service_argument, pattern_argument, timeout_argument = sys.argv[1:4]
    print(json.dumps(measure(None if service_argument == "-" else service_argument,
                             pattern_argument,
                             None if timeout_argument == "-" else float(timeout_argument))))
