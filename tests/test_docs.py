"""Every code block of README.md and docs/*.md runs as written.

A page's blocks run in order, in a fresh folder (with the clone's `examples/` linked
in, so paths read as they do from a clone's root): ```python blocks in one namespace
per page, in this process, so all pages share one TensorFlow; ```bash blocks with
`bash -e -o pipefail`, the `tf1compat` command on PATH. ```text blocks are output and
are not run. Any other info string fails, so no block is skipped by accident; the only
blocks not run are the ones after a `<!-- not run: REASON -->` line, listed in
NOT_RUN below with why.
"""

import os
import pathlib
import re
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^(?P<indent> *)```(?P<info>[^`\n]*)\n(?P<body>.*?)^(?P=indent)```[ \t]*$",
                   re.MULTILINE | re.DOTALL)
NOT_RUN_MARK = re.compile(r"<!-- not run: (?P<reason>[^>]+) -->\s*$")
RUN = {"python", "bash"}
OUTPUT = {"text"}
# (page, first command of the block): blocks that install packages, run the whole suite
# (scripts/test runs this file; scripts/demo's job is tests/test_demo.py's), benchmark
# for minutes (tests/test_bench.py runs the harness on tiny data), or fetch and run the
# corpus's programs (network; tests/test_corpus.py runs the runner on programs of its own).
NOT_RUN = {
    ("README.md", "pip install \".[cpu]\""),
    ("README.md", "scripts/demo"),
    ("docs/install.md", "pip install \"tf1compat-0.2.0-py3-none-any.whl[cpu]\""),
    ("docs/benchmarks.md", "scripts/bench --suite reading"),
    ("docs/benchmarks.md", "scripts/bench --suite conversion"),
    ("docs/benchmarks.md", "scripts/bench --suite pruning"),
    ("docs/benchmarks.md", "scripts/bench --suite epochs"),
    ("docs/benchmarks.md", "scripts/bench --suite programs"),
    ("docs/data-service.md", "scripts/bench --suite service"),
    ("docs/corpus.md", "mkdir -p corpus-src repositories"),
    ("docs/corpus.md", "scripts/corpus --from corpus-src"),
    ("docs/corpus.md", "git clone -q https://github.com/tensorflow/models "
                       "repositories/tensorflow/models"),
    ("docs/port.md", "scripts/corpus --programs corpus/models.json --from models-src "
                     "--mode port --timeout 600"),
    ("docs/port.md", "import tarfile"),  # tensorflow/models' slim, ported (not ours)
}


def page_name(page):
    return page.relative_to(ROOT).as_posix()


def code_blocks(page):
    """(info, code, line number, reason it is not run or None) for each fenced block."""
    text = page.read_text(encoding="utf-8")
    blocks = []
    for match in FENCE.finditer(text):
        indent = len(match.group("indent"))
        code = "\n".join(line[indent:] for line in match.group("body").splitlines())
        before = text[:match.start()].rstrip("\n").rsplit("\n", 1)[-1]
        mark = NOT_RUN_MARK.search(before)
        line = text.count("\n", 0, match.start()) + 1
        info = match.group("info").strip().split(" ")[0]
        blocks.append((info, code, line, mark.group("reason") if mark else None))
    return blocks


def test_blocks_have_known_kinds_and_only_the_listed_ones_are_not_run():
    kinds, not_run = set(), set()
    for page in PAGES:
        for info, code, _, reason in code_blocks(page):
            kinds.add(info)
            if reason:
                not_run.add((page_name(page), code.splitlines()[0].split("  ")[0].strip()))
    assert kinds <= RUN | OUTPUT, f"blocks of unknown kind: {kinds - RUN - OUTPUT}"
    assert not_run == NOT_RUN


def run_bash(code, cwd, where):
    env = dict(os.environ, PATH=os.pathsep.join([os.path.dirname(sys.executable),
                                                 os.environ.get("PATH", "")]))
    env.pop("TF1COMPAT_VERBOSE", None)
    done = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", code], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=600)
    if done.returncode:
        pytest.fail(f"{where}: bash block exited {done.returncode}\n{code}\n"
                    f"--- stdout\n{done.stdout}\n--- stderr\n{done.stderr}", pytrace=False)


@pytest.mark.tf
@pytest.mark.slow
@pytest.mark.usefixtures("no_thread_leaks")
@pytest.mark.parametrize("page", PAGES, ids=page_name)
def test_page_blocks_run_as_written(page, tmp_path, monkeypatch):
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    monkeypatch.chdir(tmp_path)
    namespace = {"__name__": "__main__"}
    for info, code, line, reason in code_blocks(page):
        where = f"{page_name(page)}:{line}"
        if info == "python" and not reason:
            exec(compile(code, where, "exec"), namespace)  # noqa: S102 - the docs' own code
        elif info == "bash" and not reason:
            run_bash(code, tmp_path, where)
