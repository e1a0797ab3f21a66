"""The order scripts/test's two workers take the modules in (tests/conftest.py): the
modules with the most tests marked slow first, each module's tests kept together and
in their order; what the processes tests start inherit from the suite; and the exit
status of .ci/run."""

import pathlib
import re
import shutil
import subprocess
import sys

import pytest
from conftest import pytest_collection_modifyitems

ROOT = pathlib.Path(__file__).parent.parent
SCRIPT = ROOT / "scripts" / "test"


class Item:
    """What the ordering reads of a collected test: its file and its slow mark."""

    def __init__(self, module, name, slow=False):
        self.path = pathlib.Path(module)
        self.name = name
        self.slow = slow

    def get_closest_marker(self, name):
        return "slow" if name == "slow" and self.slow else None


def test_modules_with_more_slow_tests_come_first_each_in_its_order():
    items = [Item("test_a.py", "a1"), Item("test_a.py", "a2"), Item("test_a.py", "a3"),
             Item("test_b.py", "b1", slow=True),
             Item("test_c.py", "c1", slow=True), Item("test_c.py", "c2"),
             Item("test_c.py", "c3", slow=True),
             Item("test_d.py", "d1"), Item("test_d.py", "d2")]
    pytest_collection_modifyitems(items)
    # c: 2 slow; b: 1 slow (a single test: pytest-xdist's own order put it last);
    # then a and d by their number of tests
    assert [item.name for item in items] == ["c1", "c2", "c3", "b1", "a1", "a2", "a3",
                                             "d1", "d2"]


def test_a_worker_that_dies_fails_the_run_and_the_run_ends(tmp_path):
    """scripts/test's options for the two workers, on a module whose test ends its
    worker's process (as pytest-timeout does to a test over its limit): the test is
    reported crashed, the run fails and ends (with a replacement worker, pytest-xdist
    3.8's loadscope run waited forever)."""
    options = re.search(r'^XDIST="([^"]+)"$', SCRIPT.read_text(), re.MULTILINE)
    assert options, "scripts/test names its xdist options in XDIST"
    for module in "abcd":
        body = "    os._exit(1)\n" if module == "b" else "    pass\n"
        (tmp_path / f"test_{module}.py").write_text(
            "import os\n\n\ndef test_1():\n    pass\n\n\ndef test_2():\n" + body
            + "\n\ndef test_3():\n    pass\n")
    result = subprocess.run([sys.executable, "-m", "pytest", *options.group(1).split(),
                             "-q", "-p", "no:cacheprovider", "-p", "no:randomly", str(tmp_path)],
                            cwd=tmp_path, capture_output=True, text=True, timeout=120)
    # 1: the crash is reported as the test's failure; 3: pytest-xdist's own internal
    # error on the dead worker's channel (about one run in four) -- either way it ends
    assert result.returncode in (1, 3), result.stdout[-2000:]
    if result.returncode == 1:
        assert "worker 'gw" in result.stdout
        assert "crashed while running 'test_b.py::test_2'" in result.stdout
        assert re.fullmatch(r"1 failed, \d+ passed in [\d.]+s",
                            result.stdout.splitlines()[-1]), result.stdout[-2000:]


def test_programs_a_test_starts_take_ctrl_c_however_the_suite_was_started(tmp_path):
    """A suite started as a shell's background job (SIGINT ignored) still gives the
    programs its tests interrupt Python's KeyboardInterrupt (tests/conftest.py), here
    through a pytest run of its own started with SIGINT ignored."""
    (tmp_path / "conftest.py").write_text(
        (pathlib.Path(__file__).parent / "conftest.py").read_text())
    (tmp_path / "test_child.py").write_text(
        "import subprocess, sys\n"
        "def test_child():\n"
        "    code = 'import signal; print(signal.getsignal(signal.SIGINT).__name__)'\n"
        "    out = subprocess.run([sys.executable, '-c', code], capture_output=True,\n"
        "                         text=True, check=True).stdout\n"
        "    assert out == 'default_int_handler\\n', out\n")
    ignoring = "import signal, sys, pytest; signal.signal(signal.SIGINT, signal.SIG_IGN); "
    for conftest in (True, False):
        if not conftest:
            (tmp_path / "conftest.py").unlink()
        result = subprocess.run(
            [sys.executable, "-c", ignoring + "sys.exit(pytest.main(['-q', '-p', "
             "'no:cacheprovider', '-p', 'no:xdist', sys.argv[1]]))", str(tmp_path)],
            capture_output=True, text=True, timeout=120)
        assert (result.returncode == 0) == conftest, result.stdout[-2000:]


@pytest.mark.parametrize("failing, status", [(None, 0), ("newest", 4), ("lowest", 3)])
def test_ci_exits_with_the_status_of_the_test_run_that_failed_or_0(tmp_path, failing, status):
    """.ci/run, with a scripts/test that only exits: 0 when both sets pass, else the
    failing run's status. Its exit trap stops the lowest set's install; finding it long
    done must not become the status (under set -e it was 1, and CI failed on a passing
    run)."""
    (tmp_path / ".ci").mkdir()
    (tmp_path / "scripts").mkdir()
    shutil.copy(ROOT / ".ci" / "run", tmp_path / ".ci" / "run")
    (tmp_path / "scripts" / "test").write_text(
        'case " $* " in *" --setup "*) exit 0 ;; esac\n'
        f'case " $* " in *" --lowest "*) [ {failing!r} = \'lowest\' ] && exit 3; exit 0 ;; esac\n'
        f'[ {failing!r} = \'newest\' ] && exit 4; exit 0\n')
    result = subprocess.run(["bash", str(tmp_path / ".ci" / "run")], capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == status, result.stderr
