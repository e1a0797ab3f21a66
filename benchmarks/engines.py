"""The conversion engines side by side: CIFAR-10 (PNG) converted by the local runner, a
Dask cluster (a ``dask scheduler`` and two ``dask worker`` processes) and Beam (two
processes), to local disk and to an S3-compatible server (moto), all started here on
127.0.0.1. Rows of ``scripts/bench --suite conversion``.

Each measurement runs in a fresh Python process (``python -m
benchmarks.engines``); its time covers the conversion call only (Beam's
pipeline start-up and the Dask client's connection inside it, the cluster's and the
server's start-up not). Rounds are interleaved; the table shows medians. The
"1 worker" row is the per-worker rate ``r1`` of the scaling model: on a machine with
more cores than workers, ``n`` workers convert at most ``n * r1`` images/s, less the
fixed cost of a run (planning, staging, the commit) and the engine's per-task overhead,
which the 2-worker rows show against ``2 * r1``.
"""

import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid

from benchmarks import child_env, write_text
from benchmarks._servers import S3_ENV, dask_cluster, moto_server
from tf1compat import cifar10

FULL = {"cifar_train": 10000, "cifar_test": 2000, "rounds": 3}
QUICK = {"cifar_train": 500, "cifar_test": 100, "rounds": 1}
_TWO_PROCESSES = ["--direct_running_mode=multi_processing", "--direct_num_workers=2"]
# row -> (runner, options, output: "disk" or "s3")
VARIANTS = {
    "local, 1 worker -> disk": ("local", {"workers": 1}, "disk"),
    "local, 2 workers -> disk": ("local", {"workers": 2}, "disk"),
    "dask, 2 workers -> disk": ("dask", {}, "disk"),
    "beam, 2 processes -> disk": ("beam", {"beam_options": _TWO_PROCESSES}, "disk"),
    "local, 2 workers -> S3": ("local", {"workers": 2}, "s3"),
    "dask, 2 workers -> S3": ("dask", {}, "s3"),
    "beam, 2 processes -> S3": ("beam", {"beam_options": _TWO_PROCESSES}, "s3"),
}
_BUCKET = "bench"


def _measure(row, source, output_dir, scheduler):
    """Convert with one variant in this process; its images and seconds."""
    runner, options, _ = VARIANTS[row]
    if runner == "beam":
        import apache_beam  # noqa: F401 - importing Beam is not timed
    if runner == "dask":
        options = {**options, "scheduler": scheduler}
    start = time.perf_counter()
    summary = cifar10.convert(source, output_dir, num_shards=4, runner=runner, quiet=True,
                              overwrite=True, **options)
    return {"images": sum(summary.counts.values()), "seconds": time.perf_counter() - start}


def _measure_in_subprocess(row, source, work_dir, scheduler, env):
    if VARIANTS[row][2] == "s3":
        output = f"s3://{_BUCKET}/{uuid.uuid4().hex}"
        context = contextlib.nullcontext(output)
    else:
        context = tempfile.TemporaryDirectory(dir=work_dir)
    with context as output_dir:
        result = subprocess.run(
            [sys.executable, "-m", "benchmarks.engines", row, source, output_dir,
             scheduler], check=True, capture_output=True, text=True, env=env)
    return json.loads(result.stdout.splitlines()[-1])


def table(results, settings):
    """The markdown table of ``{row: [result, ...]}``."""
    rates = {row: statistics.median(r["images"] / r["seconds"] for r in rounds)
             for row, rounds in results.items()}
    per_worker = rates.get("local, 1 worker -> disk")
    lines = []
    for row, rounds in results.items():
        workers = 1 if row.startswith("local, 1 worker") else 2
        model = f"{rates[row] / (workers * per_worker):.0%}" if per_worker else "n/a"
        lines.append(f"| {row} | {rounds[0]['images']} | "
                     f"{statistics.median(r['seconds'] for r in rounds):.2f} | "
                     f"{rates[row]:,.0f} | {model} |")
    note = " (--quick: a harness check, the numbers mean nothing)" if settings is QUICK else ""
    return "\n".join([
        f"Conversion engines: CIFAR-10 {settings['cifar_train']} + {settings['cifar_test']} "
        f"synthetic images to PNG, 4 shards; median of {settings['rounds']} round(s), "
        f"{os.cpu_count()} CPU(s){note}",
        "",
        "| engine -> output | images | seconds | images/s | of n x per-worker rate |",
        "|---|---:|---:|---:|---:|",
        *lines,
        "",
        "Dask: a scheduler and two one-thread worker processes on this machine, started "
        "before the timing (a standing cluster), while the local runner and Beam start "
        "their processes inside it; Beam: "
        "--direct_running_mode=multi_processing --direct_num_workers=2; S3: a moto server "
        "on 127.0.0.1 (in-memory, one Python process: slower than a real store). The last "
        "column is the rate over n times the 1-worker rate (n = 2): with as many cores as "
        "workers the scaling model says n workers give n x per-worker rate less each "
        "engine's overhead; on a machine with fewer free cores than workers (this one) "
        "it shows overhead, not scaling.",
    ])


def run(quick=False, out_dir="bench-results", rows=None):
    """Measure the engines (``rows``: which VARIANTS; default all), print the table and
    write it to ``out_dir/engines.md``; returns 0."""
    import s3fs
    settings = QUICK if quick else FULL
    results = {row: [] for row in rows or VARIANTS}
    with tempfile.TemporaryDirectory() as work_dir, moto_server() as endpoint:
        env = {**child_env(), **S3_ENV, "AWS_ENDPOINT_URL": endpoint}
        fs = s3fs.S3FileSystem(endpoint_url=endpoint, key=S3_ENV["AWS_ACCESS_KEY_ID"],
                               secret=S3_ENV["AWS_SECRET_ACCESS_KEY"], skip_instance_cache=True)
        fs.mkdir(_BUCKET)
        source = cifar10.make_synthetic(work_dir, settings["cifar_train"],
                                        settings["cifar_test"])
        with dask_cluster(env, 2, work_dir) as (scheduler, _):
            for _ in range(settings["rounds"]):
                for row in results:
                    results[row].append(_measure_in_subprocess(row, source, work_dir,
                                                               scheduler, env))
    text = table(results, settings)
    print(text)
    os.makedirs(out_dir, exist_ok=True)
    write_text(os.path.join(out_dir, "engines.md"), text + "\n")
    return 0


if __name__ == "__main__":
    # python -m benchmarks.engines ROW SOURCE OUTPUT SCHEDULER
    print(json.dumps(_measure(*sys.argv[1:])))
