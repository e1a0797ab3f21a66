"""The README's tables cite tests by name: every one must exist, so the tables cannot rot."""

import ast
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
CITATION = re.compile(r"`(test_\w+\.py)::(test_\w+)`")


def functions_in(file_name):
    tree = ast.parse((ROOT / "tests" / file_name).read_text(encoding="utf-8"))
    return {node.name for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)}


def reliability_rows():
    section = README.split("\n## Reliability\n", 1)[1].split("\n## ", 1)[0]
    return [line for line in section.splitlines()
            if line.startswith("| ") and not line.startswith("| fault")
            and not line.startswith("| **")]


def test_every_test_the_readme_cites_exists():
    cited = CITATION.findall(README)
    assert len(cited) >= 40
    missing = [f"{file_name}::{name}" for file_name, name in cited
               if not (ROOT / "tests" / file_name).is_file()
               or name not in functions_in(file_name)]
    assert not missing, f"README cites tests that do not exist: {missing}"


def test_every_reliability_row_cites_a_test():
    rows = reliability_rows()
    assert len(rows) >= 40
    uncited = [row for row in rows if not CITATION.search(row)]
    assert not uncited, uncited
