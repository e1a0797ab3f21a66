"""``scripts/bench --quick`` (``python -m benchmarks``): the harness runs and writes every row."""

import json
import re
import sys

import numpy as np
import pytest

from benchmarks import conversion, epochs, reading, reading_variants
from benchmarks.__main__ import main as bench

pytestmark = [pytest.mark.tf, pytest.mark.slow]


def test_quick_reading_bench_writes_table_and_chart(tmp_path, capsys):
    assert bench(["--suite", "reading", "--quick", "--out", str(tmp_path)]) == 0
    table = (tmp_path / "reading.md").read_text()
    rows = [row for row, _, _ in reading._plan()]
    assert len(rows) == 20
    for row in rows:
        assert f"| {row} |" in table
    assert "baseline" in table and "Targets" in table
    assert "- tf.data batch-then-parse counting the bytes read, vs the same without: " in table
    assert "; a measure, no target)" in table
    assert table.startswith("`scripts/bench --suite reading --quick` on ")
    assert "load average" in table and "default session config" in table
    assert (tmp_path / "reading.png").read_bytes().startswith(b"\x89PNG")
    results = json.loads((tmp_path / "reading.json").read_text())
    assert set(results["summary"]) == set(rows)
    assert all(values["examples"] == reading.QUICK["examples"]
               for values in results["summary"].values())
    assert "reading.md" in capsys.readouterr().out


def test_counting_the_bytes_read_delivers_the_batches_of_batch_then_parse(tmp_path):
    """The floor of reader keys reads what it measures against: the same arrays."""
    path = reading.build_data(str(tmp_path), 300)["raw"]
    counted, plain = (list(reading_variants._iterate_dataset(build(path, 128, None)))
                      for build in (reading_variants._tfdata_batch_then_parse_counting_bytes,
                                    reading_variants._tfdata_batch_then_parse))
    assert [len(batch["label"]) for batch in counted] == [128, 128, 44]
    for one, other in zip(counted, plain, strict=True):
        np.testing.assert_array_equal(one["image"], other["image"])
        np.testing.assert_array_equal(one["label"], other["label"])
    with pytest.raises(ValueError, match="counted in the file's order: no shuffle"):
        reading_variants._tfdata_batch_then_parse_counting_bytes(
            path, 128, {"capacity": 64, "min_after_dequeue": 32})


def test_quick_epochs_bench_times_every_row_over_its_epochs(tmp_path, capsys):
    assert bench(["--suite", "epochs", "--quick", "--out", str(tmp_path)]) == 0
    table = (tmp_path / "epochs.md").read_text()
    assert table.startswith("`scripts/bench --suite epochs --quick` on ")
    assert "load average" in table and "Targets:" in table
    results = json.loads((tmp_path / "epochs.json").read_text())
    rows = [row for row, _, _ in epochs._rows()]
    assert len(rows) == 20 and set(results["summary"]) == set(rows)
    for row in rows:
        assert f"| {row} |" in table
        # every row delivers every example of every epoch
        summary = results["summary"][row]
        assert summary["examples"] == epochs.QUICK["epochs"] * epochs.QUICK["examples"]
        assert summary["cpu_seconds"] > 0
        # set-up (to the first batch) and the epochs after it make the row's time
        assert 0 < summary["first_batch_seconds"] and 0 <= summary["after_first_seconds"]
        # the cache's gain: for the cached rows, over their uncached twins
        assert (summary["cache_gain"] is None) == (row.endswith("no cache") or
                                                   row.endswith(epochs.REFERENCE))
    assert results["summary"][epochs.REFERENCE]["vs_uncached"] == [1.0, 1.0, 1.0]
    cached = results["summary"][epochs.CACHED_REFERENCE]
    assert cached["cache_gain"] == cached["vs_uncached"]
    assert "epochs.md" in capsys.readouterr().out


@pytest.mark.timeout(300)
def test_quick_conversion_bench_writes_its_rows(tmp_path, capsys):
    # each kind of row once (Beam's two processes start slowly; test_convert runs them)
    rows = ["CIFAR-10 raw: tf1compat local", "CIFAR-10 png: classic session-per-image",
            "photos: tf1compat beam in-memory", "photos: classic decode-per-image"]
    assert conversion.run(quick=True, out_dir=str(tmp_path), rows=rows) == 0
    table = (tmp_path / "conversion.md").read_text()
    assert table.strip() == capsys.readouterr().out.strip()
    assert table.count("\n| ") == 1 + len(rows)         # the header and one line per row
    for row in rows:
        dataset, converter, _ = conversion.VARIANTS[row]
        images = {"cifar": 60, "photos": 30}[dataset] // (3 if converter == "classic" else 1)
        assert f"| {row} | {images} |" in table


def test_vs_classic_divides_by_the_classic_row_wherever_it_is():
    fast = {"images": 100, "seconds": 1.0, "rss_main_mb": 1.0, "rss_child_mb": None}
    slow = {**fast, "seconds": 4.0}
    results = {"photos: classic decode-per-image": [slow], "photos: tf1compat local": [fast]}
    table = conversion._table(results, conversion._QUICK)
    assert "| photos: tf1compat local | 100 | 1.00 | 100 | 4.0x |" in table
    with pytest.raises(ValueError, match="no classic row for photos"):
        conversion._table({"photos: tf1compat local": [fast]}, conversion._QUICK)


CHILD_OF_A_LARGE_PARENT = """\
import json, resource, subprocess, sys
from benchmarks import conversion
ballast = bytearray(200 << 20)      # the parent: 200 MB more when it starts the child
with conversion._ChildPeak() as children:
    subprocess.run([sys.executable, "-c",
                    "import time; b = bytearray(40 << 20); time.sleep(0.5)"], check=True)
print(json.dumps([children.mb, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024]))
"""


@pytest.mark.timeout(60)
def test_child_peak_is_the_childs_own_not_its_parents_size():
    import subprocess
    import sys
    result = subprocess.run([sys.executable, "-c", CHILD_OF_A_LARGE_PARENT], check=True,
                            capture_output=True, text=True, timeout=50)
    child_mb, rusage_children_mb = json.loads(result.stdout)
    assert 40 < child_mb < 100             # its 40 MB and an interpreter
    assert rusage_children_mb > 200        # what ru_maxrss says: the parent's size at the fork


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_quick_engine_rows_start_their_servers_and_measure(tmp_path, capsys):
    from benchmarks import engines
    rows = ["local, 1 worker -> disk", "dask, 2 workers -> S3"]
    assert engines.run(quick=True, out_dir=str(tmp_path), rows=rows) == 0
    table = (tmp_path / "engines.md").read_text()
    assert table.strip() == capsys.readouterr().out.strip()
    assert "| local, 1 worker -> disk | 600 |" in table and "| 100% |" in table
    assert "| dask, 2 workers -> S3 | 600 |" in table


def test_the_engine_table_compares_with_n_times_the_per_worker_rate():
    from benchmarks import engines
    results = {"local, 1 worker -> disk": [{"images": 100, "seconds": 1.0}],
               "dask, 2 workers -> S3": [{"images": 100, "seconds": 0.8},
                                         {"images": 100, "seconds": 0.4},
                                         {"images": 100, "seconds": 1.0}]}
    table = engines.table(results, engines.QUICK)
    assert "| local, 1 worker -> disk | 100 | 1.00 | 100 | 100% |" in table
    assert "| dask, 2 workers -> S3 | 100 | 0.80 | 125 | 62% |" in table


def test_quick_pruning_bench_writes_its_rows(tmp_path, capsys):
    from benchmarks import pruning

    assert bench(["--suite", "pruning", "--quick", "--out", str(tmp_path)]) == 0
    table = (tmp_path / "pruning.md").read_text()
    assert table.strip() in capsys.readouterr().out
    assert table.startswith("`scripts/bench --suite pruning --quick` on ")
    assert "load average" in table
    for row in pruning.ROWS:
        assert f"| {row} | " in table
    results = json.loads((tmp_path / "pruning.json").read_text())
    assert list(results["rounds"]) == list(pruning.ROWS)
    assert all(len(values) == pruning.QUICK["rounds"] for values in results["rounds"].values())


@pytest.mark.timeout(600)
def test_quick_programs_bench_writes_its_rows(tmp_path, capsys):
    from benchmarks import programs
    slim = "slim DatasetDataProvider + batch"
    rows = [f"{slim}: tf1compat run", f"{slim}: {programs.PORTED}", f"{slim}: TF2 tf.data port",
            programs.CHECK_ROW]
    assert programs.run(quick=True, out_dir=str(tmp_path), rows=rows) == 0
    table = (tmp_path / "programs.md").read_text()
    assert table.startswith("`scripts/bench --suite programs --quick` on ")
    assert "load average" in table and table.strip() in capsys.readouterr().out
    for row in rows:
        assert re.search(rf"^\| {re.escape(row)} \| \d", table, re.M), row
    assert f"| {slim}: TF2 tf.data port | " in table and "| 1.00 (1.00-1.00) |" in table
    results = json.loads((tmp_path / "programs.json").read_text())
    loop = results["rounds"][rows[0]][0]
    assert loop["timed_steps"] == programs.QUICK["max_steps"] and loop["startup_s"] > 0
    assert loop["peak_rss_mb"] > 100                         # TensorFlow is in it
    assert results["rounds"][programs.CHECK_ROW][0]["returncode"] == 1   # its findings
    assert (tmp_path / "programs.png").read_bytes().startswith(b"\x89PNG")
    written = tmp_path / "programs-quick" / "programs"
    assert {p.name for p in written.iterdir()} == {
        "trivial.py", "cifar10_tutorial.py", "cifar10_tutorial_tf2.py",
        "slim_provider.py", "slim_provider_tf2.py"}
    assert len(list((tmp_path / "programs-quick" / "project").glob("*.py"))) == 50
    # the bench ports the program itself: queue pipelines as tf.data, run without tf1compat
    ported = (tmp_path / "programs-quick" / "ported" / "slim_provider" / "slim_provider.py")
    assert "interleave(tf.data.TFRecordDataset, cycle_length=4)" in ported.read_text()
    assert "dataset_data_provider.DatasetDataProvider(" not in ported.read_text()
    assert results["commands"][rows[1]][1:3] == ["-I", "-S"]
    assert results["rounds"][rows[1]][0]["timed_steps"] == programs.QUICK["max_steps"]


def test_a_program_port_could_not_write_is_a_failed_row_not_run(tmp_path):
    from benchmarks import programs
    row = f"slim DatasetDataProvider + batch: {programs.PORTED}"
    why = "tf1compat port exit status 1: not ported: slim_provider.py:9: tf.contrib.x: why"
    settings = {**programs.QUICK, "rounds": 2}
    results = programs.measure_rounds(tmp_path, settings, [row], lambda line: None,
                                      {row: why})
    assert results == {row: [{"error": why}, {"error": why}]}
    assert f"| {row} | failed: {why} |" in programs.loop_table(results)


def test_start_up_table_shows_run_modes_overhead_per_round():
    from benchmarks import programs
    results = {programs.PLAIN_ROW: [{"wall_s": w, "peak_rss_mb": 500} for w in (3.0, 4.0, 9.0)],
               programs.RUN_ROW: [{"wall_s": w, "peak_rss_mb": 520} for w in (3.5, 4.1, 9.9)]}
    table = programs.start_table(results)
    assert f"| {programs.PLAIN_ROW} | 4.00 (3.00-9.00) | 500 |" in table
    assert f"| {programs.RUN_ROW} | 4.10 (3.50-9.90) | 520 |" in table
    assert "| run mode's overhead (per-round difference) | 0.50 (0.10-0.90) | |" in table


def test_loop_ratios_are_per_round_against_the_port():
    from benchmarks import programs
    slim = "slim DatasetDataProvider + batch"

    def rounds(steps, startups):
        return [{"steps_per_s": s, "startup_s": t, "first_batch_cpu_s": t / 2,
                 "step_cpu_ms": 1000 / s, "peak_rss_mb": 600}
                for s, t in zip(steps, startups, strict=True)]
    table = programs.loop_table({f"{slim}: tf1compat run": rounds((10, 30, 20), (5, 6, 7)),
                                 f"{slim}: {programs.PORT}": rounds((20, 40, 80), (4, 6, 4))})
    assert (f"| {slim}: tf1compat run | 20.0 | 2,560 | 0.50 (0.25-0.75) | 6.00 (5.00-7.00) "
            "| 1.00 (0.00-3.00) | 3.00 (2.50-3.50) | 50.00 (33.33-100.00) | 600 |") in table


@pytest.mark.timeout(60)
def test_a_failing_program_is_a_row_naming_its_error(tmp_path):
    from benchmarks import programs
    failing = [sys.executable, "-c", "raise ValueError('no data_dir given')"]
    result = programs.run_child(failing, tmp_path)
    assert result["error"] == "exit status 1: ValueError: no data_dir given"
    silent = programs.run_child([sys.executable, "-c", "print('done')"], tmp_path,
                                needs_report=True)
    assert silent["error"] == "exit status 0 without a BENCH line"
    garbled = programs.run_child([sys.executable, "-c", "print('BENCH {\"timed_steps\": 3')"],
                                 tmp_path)
    assert garbled["error"].startswith("unreadable BENCH line '{\"timed_steps\": 3'")
    hanging = programs.run_child([sys.executable, "-c", "import time; time.sleep(60)"],
                                 tmp_path, timeout=1)
    assert hanging == {"error": "no exit within 1 s (killed)"}
    row = "slim DatasetDataProvider + batch: tf1compat run --queues"
    table = programs.loop_table({row: [result]})
    assert f"| {row} | failed: exit status 1: ValueError: no data_dir given |" in table


@pytest.mark.timeout(60)
def test_a_programs_peak_memory_is_its_own_not_the_benchs(tmp_path):
    from benchmarks import programs
    ballast = b"\x01" * (300 << 20)             # this process: 300 MB more at the fork
    child = [sys.executable, "-c", "import time; b = b'\\x01' * (40 << 20); time.sleep(0.5)"]
    result = programs.run_child(child, tmp_path)
    assert 40 < result["peak_rss_mb"] < 150 and len(ballast) == 300 << 20
