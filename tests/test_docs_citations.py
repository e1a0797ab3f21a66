"""The docs cite tests by name: every one must exist, so the tables cannot rot. The README
stays one screenful that names the two commands, and every docs page is in the site."""

import ast
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
README = (ROOT / "README.md").read_text(encoding="utf-8")
CITATION = re.compile(r"`(?:tests/)?(test_\w+\.py)::(test_\w+)`")


def functions_in(file_name):
    tree = ast.parse((ROOT / "tests" / file_name).read_text(encoding="utf-8"))
    return {node.name for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)}


def reliability_rows():
    text = (DOCS / "reliability.md").read_text(encoding="utf-8")
    return [line for line in text.splitlines()
            if line.startswith("| ") and not line.startswith("| fault")
            and not line.startswith("| **")]


def test_every_test_the_docs_cite_exists():
    cited = [match for page in [ROOT / "README.md", *DOCS.glob("*.md")]
             for match in CITATION.findall(page.read_text(encoding="utf-8"))]
    assert len(cited) >= 40
    missing = [f"{file_name}::{name}" for file_name, name in cited
               if not (ROOT / "tests" / file_name).is_file()
               or name not in functions_in(file_name)]
    assert not missing, f"the docs cite tests that do not exist: {missing}"


def test_every_reliability_row_cites_a_test():
    rows = reliability_rows()
    assert len(rows) >= 40
    uncited = [row for row in rows if not CITATION.search(row)]
    assert not uncited, uncited


def test_readme_is_short_and_names_the_two_commands():
    assert len(README.splitlines()) <= 250
    assert "scripts/demo" in README and "scripts/test" in README


def test_every_docs_page_is_in_the_site_and_linked_from_the_readme():
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    pages = sorted(page.name for page in DOCS.glob("*.md"))
    assert [page for page in pages if f": {page}" not in nav] == []
    assert [page for page in pages
            if page != "index.md" and f"(docs/{page})" not in README] == []
