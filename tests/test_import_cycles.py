"""scripts/import_cycles.py (run by scripts/test): tf1compat's modules import each other
in no cycle, also counting imports inside functions and the package ``__init__`` an
import runs first; on packages made here, the check finds such cycles and names them."""

import importlib.util
import pathlib
import textwrap

import pytest

SCRIPT = pathlib.Path(__file__).resolve().parents[1] / "scripts" / "import_cycles.py"


@pytest.fixture(scope="module")
def import_cycles():
    spec = importlib.util.spec_from_file_location("import_cycles", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def write_package(root, files):
    for name, source in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(source))


def test_tf1compat_has_no_import_cycle(import_cycles, capsys):
    assert import_cycles.main(["tf1compat"]) == 0
    assert capsys.readouterr().err == ""
    graph = import_cycles.import_graph("tf1compat")
    # an import inside a function (the queue runtime's of the service) is in the graph
    assert "tf1compat.migrate.service" in graph["tf1compat.v1.queue_runtime"]


def test_a_cycle_hidden_in_a_function_is_named(import_cycles, tmp_path, monkeypatch, capsys):
    write_package(tmp_path, {
        "hidden_a/__init__.py": "",
        "hidden_a/reader.py": "import hidden_a.writer\n",
        "hidden_a/writer.py": """
            def write():
                from hidden_a import reader  # a cycle all the same
                return reader
        """,
        "hidden_a/alone.py": "import hidden_a.reader\n",
    })
    monkeypatch.syspath_prepend(str(tmp_path))
    assert import_cycles.main(["hidden_a"]) == 1
    assert capsys.readouterr().err == (
        "import cycle: hidden_a.reader -> hidden_a.writer -> hidden_a.reader\n")


def test_a_cycle_through_a_package_init_is_named(import_cycles, tmp_path, monkeypatch,
                                                 capsys):
    """``service`` imports ``lowering.plan``, which runs ``lowering/__init__`` first; that
    imports ``service`` inside a function: the shape of the lowering <-> service cycle.
    Siblings of one package importing each other through its ``__init__`` are not one."""
    write_package(tmp_path, {
        "hidden_b/__init__.py": "",
        "hidden_b/lowering/__init__.py": """
            from hidden_b.lowering import plan

            def build():
                from hidden_b.service import distribute
                return distribute(plan)
        """,
        "hidden_b/lowering/plan.py": "from hidden_b.lowering import steps\n",
        "hidden_b/lowering/steps.py": "",
        "hidden_b/service.py": """
            from hidden_b.lowering.plan import steps

            def distribute(plan):
                return plan, steps
        """,
    })
    monkeypatch.syspath_prepend(str(tmp_path))
    assert import_cycles.main(["hidden_b"]) == 1
    assert capsys.readouterr().err == (
        "import cycle: hidden_b.lowering -> hidden_b.service -> hidden_b.lowering\n")


def test_every_cycle_is_named_once_shortest(import_cycles):
    edges = {"p.a": {"p.b"}, "p.b": {"p.c", "p.a"}, "p.c": {"p.a"}, "p.d": {"p.d"},
             "p.e": {"p.a"}}
    assert import_cycles.find_cycles(edges) == [["p.a", "p.b", "p.a"], ["p.d", "p.d"]]
