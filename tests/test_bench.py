"""``tf1compat bench --suite reading --quick``: the harness runs and writes every row."""

import json

import pytest

from tf1compat import cli
from tf1compat.benchmarks import conversion, reading

pytestmark = [pytest.mark.tf, pytest.mark.slow]


def test_quick_reading_bench_writes_table_and_chart(tmp_path, capsys):
    assert cli.main(["bench", "--suite", "reading", "--quick", "--out", str(tmp_path)]) == 0
    table = (tmp_path / "reading.md").read_text()
    rows = [row for row, _, _ in reading._plan()]
    assert len(rows) == 17
    for row in rows:
        assert f"| {row} |" in table
    assert "baseline" in table and "Targets" in table
    assert table.startswith("`scripts/bench --suite reading --quick` on ")
    assert "load average" in table and "default session config" in table
    assert (tmp_path / "reading.png").read_bytes().startswith(b"\x89PNG")
    results = json.loads((tmp_path / "reading.json").read_text())
    assert set(results["summary"]) == set(rows)
    assert all(values["examples"] == reading.QUICK["examples"]
               for values in results["summary"].values())
    assert "reading.md" in capsys.readouterr().out


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
