"""Run the corpus: each program of ``programs.json``, fetched into a local folder,
unmodified, with ``tf1compat run`` (its pipelines on tf.data where that gives the same
run, the default), ``tf1compat run --queues`` (TF1's queues) and ``tf1compat run
--tf-data`` on synthetic data; or (``--mode port``) ported with ``tf1compat port
--verify`` and the port run by plain ``python``, tf1compat not importable; or
(``--mode upgrade``) converted by TensorFlow's own ``tf_upgrade_v2``, the migration
guide's ``disable_v2_behavior()`` line added, and run the same way.

``python -m corpus.run --from FOLDER`` expects ``FOLDER/<name>/`` to hold each
program's files as its repository has them (docs/corpus.md says how to fetch them).
Each run gets a fresh working folder (a copy of the program's files plus its data,
under ``--out``; a program's ``setup`` commands, each one of its own scripts run there
with ``tf1compat run`` before it: an evaluation's checkpoint made by its training
script), a time limit, and one of four outcomes:

- ``ok``: the program exited 0;
- ``stopped``: it ran past its ``reached`` mark (its training loop) and was stopped
  by the time limit -- counted as a success, and said so;
- ``fail``: it exited non-zero; the table shows its first failing line;
- ``timeout``: the time limit came before its ``reached`` mark (or it has none).

Port mode gives three outcomes per program: ``port`` (``ok``: every part ported;
``fail``: the first part that was not), ``verify`` (``ok``: every ported pipeline fed
the same data as the original under run mode; ``fail``: the first that did not, or
none ported; ``none``: the program has no queue pipeline, and is not counted), and
``plain`` (the port's own run, an outcome as above).

Upgrade mode gives two: ``upgrade`` (``ok``: ``tf_upgrade_v2`` reported no issue;
``fail``: how many it reported and the first) and ``upgraded`` (its output with
``tf.compat.v1.disable_v2_behavior()`` after the entry file's ``import tensorflow``,
run by plain ``python`` with tf1compat not importable, an outcome as above).

It prints one row per program and ``K/N`` for each mode; exit status 0 when every
run succeeded, 1 otherwise.
"""

import argparse
import ast
import dataclasses
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import time

from corpus.data import make_data
from corpus.plain import plain_python_command
from tf1compat import _process_groups as process_groups

PROGRAMS = pathlib.Path(__file__).with_name("programs.json")
MODES = {"run": [], "queues": ["--queues"], "tf-data": ["--tf-data"]}
PORT_MODES = ("port", "verify", "plain")   # the outcomes of --mode port
UPGRADE_MODES = ("upgrade", "upgraded")   # the outcomes of --mode upgrade
UPGRADE_SCRIPT = "tensorflow.tools.compatibility.tf_upgrade_v2_main"   # tf_upgrade_v2
_ISSUES = re.compile(r"^Detected (\d+) issues that require attention$", re.MULTILINE)
_ISSUE = re.compile(r"^(?P<file>.+?):(?P<where>\d+:\d+: (ERROR|WARNING): .*)$")
_VERIFIED = re.compile(r"^verify: (\d+) of (\d+) pipeline\(s\) feed the same data$", re.MULTILINE)
SUCCESS = ("ok", "stopped")
LEFT_RUNNING = "it left processes running when it ended; the runner killed them"
_EXCEPTION_LINE = re.compile(r"^[A-Za-z_][\w.]*(Error|Exception|Exit|Interrupt|Warning)\b")
_FRAME = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+)')


@dataclasses.dataclass
class Outcome:
    """One program's run in one mode."""

    name: str
    mode: str
    status: str  # ok, stopped, fail or timeout
    seconds: float
    detail: str = ""  # the first failing line, or what the stopped run reached


def load_programs(path=PROGRAMS):
    """The corpus entries of ``programs.json`` (or of another list, ``path``)."""
    with open(path, encoding="utf-8") as f:
        return json.load(f)["programs"]


def first_failing_line(stderr, workdir):
    """Where and what failed: the innermost traceback frame in the program's own
    files (``file.py:LINE``) and the exception line; else the last line of stderr."""
    lines = [line for line in stderr.splitlines() if line.strip()]
    exception = next((line.strip() for line in reversed(lines)
                      if _EXCEPTION_LINE.match(line.strip())), None)
    if exception is None:
        return lines[-1].strip() if lines else "(no output)"
    where = None
    root = os.path.realpath(workdir) + os.sep
    for line in lines:
        match = _FRAME.match(line)
        if match and os.path.realpath(match["file"]).startswith(root):
            where = f"{os.path.relpath(os.path.realpath(match['file']), root)}:{match['line']}"
    return f"{where}: {exception}" if where else exception


def classify(returncode, timed_out, output, reached=None):
    """``(status, detail)`` of a run: see the module's docstring."""
    if timed_out:
        mark = re.search(reached, output, re.MULTILINE) if reached else None
        if mark:
            return "stopped", f"reached {mark.group(0)!r}, stopped by the time limit"
        return "timeout", "the time limit came before the program reached its training loop"
    if returncode == 0:
        return "ok", ""
    return "fail", None  # the caller fills in the first failing line


def prepare(program, folder, timeout, seed=0):
    """Make the program's data in ``folder`` and run its ``setup`` commands there
    (``[SCRIPT, ARGS...]`` each, with ``tf1compat run``, their output in
    ``FOLDER.setup-N.txt``); None, or what the first failed setup said."""
    make_data(folder, program.get("data", []), seed=seed)
    for index, setup in enumerate(program.get("setup", [])):
        command = [sys.executable, "-m", "tf1compat", "run", *setup]
        returncode, _, stderr, timed_out, _, _ = _run(
            command, folder, program.get("timeout", timeout), f"{folder}.setup-{index}.txt")
        if timed_out or returncode != 0:
            why = "the time limit came" if timed_out else first_failing_line(stderr, folder)
            return f"setup {' '.join(setup)} failed: {why}"
    return None


def run_program(program, mode, source, out, timeout, seed=0):
    """Copy the program's files from ``source`` into a fresh folder under ``out``,
    make its data there, run it in ``mode``; returns an :class:`Outcome`."""
    workdir = os.path.join(out, program["name"], mode)
    shutil.rmtree(workdir, ignore_errors=True)
    shutil.copytree(os.path.join(source, program["name"]), workdir)
    failed = prepare(program, workdir, timeout, seed)
    if failed:
        return Outcome(program["name"], mode, "fail", 0.0, failed)
    command = [sys.executable, "-m", "tf1compat", "run", *MODES[mode],
               program["entry"], *program.get("args", [])]
    return _run_outcome(program, mode, command, workdir, program.get("timeout", timeout),
                        os.path.join(workdir, "output.txt"))


def _run(command, cwd, limit, log):
    """Run ``command`` in ``cwd`` for at most ``limit`` seconds, its output written to
    ``log``; returns ``(returncode, stdout, stderr, timed_out, seconds, left)``, ``left``
    whether it left processes running (ended with it)."""
    env = {**os.environ, "MPLBACKEND": "Agg", "PYTHONDONTWRITEBYTECODE": "1"}
    start = time.monotonic()
    # Output into files, not pipes: a background child holding them open would keep a
    # reader of pipes waiting after the program ended.
    with tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace") as out, \
            tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace") as err:
        process = process_groups.start(command, cwd=cwd, env=env, stdout=out, stderr=err,
                                       stdin=subprocess.DEVNULL)
        try:
            process.wait(timeout=limit)
            timed_out = False
        except subprocess.TimeoutExpired:
            timed_out = True
        seconds = time.monotonic() - start
        left = process_groups.end(process, grace=0)  # with any child it started
        stdout, stderr = (_read(out), _read(err))
    with open(log, "w", encoding="utf-8") as f:
        f.write(f"$ {' '.join(command)}\n--- stdout\n{stdout}\n--- stderr\n{stderr}")
    return process.returncode, stdout, stderr, timed_out, seconds, left


def _run_outcome(program, mode, command, cwd, limit, log):
    """The :class:`Outcome` of running the program (or its port) with ``command`` in
    ``cwd``, its output written to ``log``."""
    returncode, stdout, stderr, timed_out, seconds, left = _run(command, cwd, limit, log)
    status, detail = classify(returncode, timed_out, stdout + stderr, program.get("reached"))
    if detail is None:
        detail = first_failing_line(stderr, cwd)
    if left:
        detail = "; ".join(filter(None, [detail, LEFT_RUNNING]))
    return Outcome(program["name"], mode, status, seconds, detail)


def _read(file):
    file.seek(0)
    return file.read()


def port_outcomes(port_output, returncode, timed_out):
    """``(port, verify)`` as ``(status, detail)`` pairs, from ``tf1compat port --verify``'s
    output and exit status (see the module docstring)."""
    if timed_out:
        failed = ("timeout", "the time limit came before port --verify ended")
        return failed, failed
    lines = port_output.splitlines()
    if returncode == 2:
        failed = ("fail", lines[-1].strip() if lines else "(no output)")
        return failed, failed
    not_ported = [line for line in lines if line.startswith("not ported: ")]
    port = ("fail", not_ported[0]) if not_ported else ("ok", "")
    counts = _VERIFIED.search(port_output)
    if counts is None:
        return port, ("fail", "port --verify printed no verification")
    verified, pipelines = int(counts[1]), int(counts[2])
    if pipelines == 0 and not_ported:
        return port, ("fail", "no pipeline was ported, so none was verified")
    if pipelines == 0:
        return port, ("none", "no queue pipeline: nothing to verify")
    if verified < pipelines:
        failing = next((line for line in lines if line.startswith("verify: ") and (
            "FAILED" in line or "DIFFERENT" in line)), counts[0])
        return port, ("fail", failing)
    return port, ("ok", "")


def port_program(program, source, out, timeout, seed=0):
    """Copy the program's files from ``source`` into a fresh folder under ``out`` with
    its data, port it there with ``tf1compat port --verify`` and run the port with plain
    ``python`` (tf1compat not importable); the three :class:`Outcome` of port mode."""
    workdir = os.path.join(out, program["name"], "port")
    shutil.rmtree(workdir, ignore_errors=True)
    original = os.path.join(workdir, "original")
    shutil.copytree(os.path.join(source, program["name"]), original)
    failed = prepare(program, original, timeout, seed)
    if failed:
        return [Outcome(program["name"], mode, "fail", 0.0, failed) for mode in PORT_MODES]
    ported = os.path.join(workdir, "ported")
    args = program.get("args", [])
    limit = program.get("timeout", timeout)
    command = [sys.executable, "-m", "tf1compat", "port", program["entry"], "--out", ported,
               "--verify", "--", *args]
    # port runs the program up to its first read three times (to find, then to verify)
    returncode, stdout, stderr, timed_out, seconds, _ = _run(
        command, original, 3 * limit, os.path.join(workdir, "port.txt"))
    (port_status, port_detail), (verify_status, verify_detail) = port_outcomes(
        stdout + stderr, returncode, timed_out)
    outcomes = [Outcome(program["name"], "port", port_status, seconds, port_detail),
                Outcome(program["name"], "verify", verify_status, seconds, verify_detail)]
    entry = os.path.join(ported, program["entry"])
    if not os.path.exists(entry):
        outcomes.append(Outcome(program["name"], "plain", "fail", 0.0, "no port was written"))
        return outcomes
    outcomes.append(_run_outcome(program, "plain", plain_python_command(entry, *args),
                                 ported, limit, os.path.join(workdir, "plain.txt")))
    return outcomes


def upgrade_outcome(output, returncode, timed_out, tree):
    """``(status, detail)`` of ``tf_upgrade_v2 --intree TREE``, from its output and exit
    status: ``ok`` when it reported no issue, else how many and the first (its file
    named relative to ``tree``)."""
    if timed_out:
        return "timeout", "the time limit came before tf_upgrade_v2 ended"
    lines = [line for line in output.splitlines() if line.strip()]
    counted = _ISSUES.search(output)
    if returncode != 0 or counted is None:
        return "fail", lines[-1].strip() if lines else "(no output)"
    if counted[1] == "0":
        return "ok", ""
    first = next((match for match in map(_ISSUE.match, lines) if match), None)
    where = f"; the first: {os.path.relpath(first['file'], tree)}:{first['where']}" \
        if first else ""
    return "fail", f"{counted[1]} issue(s) reported{where}"


def add_guide_line(path):
    """Add ``tf.compat.v1.disable_v2_behavior()`` on the line after the first top-level
    ``import tensorflow`` of the file at ``path`` (``tf`` its name there), as TensorFlow's
    migration guide tells users of ``tf_upgrade_v2``'s output; raise ValueError when the
    file has none."""
    with open(path, encoding="utf-8", newline="") as f:
        source = f.read()
    for statement in ast.parse(source, path).body:
        if isinstance(statement, ast.Import):
            alias = next((a for a in statement.names if a.name == "tensorflow"), None)
            if alias is not None:
                lines = source.splitlines(keepends=True)
                end = statement.end_lineno
                newline = "\r\n" if lines[end - 1].endswith("\r\n") else "\n"
                call = f"{alias.asname or 'tensorflow'}.compat.v1.disable_v2_behavior()"
                lines[end - 1] = lines[end - 1].rstrip("\r\n") + newline
                lines.insert(end, call + newline)
                with open(path, "w", encoding="utf-8", newline="") as f:
                    f.write("".join(lines))
                return
    raise ValueError(f"{os.path.basename(path)} has no top-level 'import tensorflow' "
                     "to add disable_v2_behavior() after")


def upgrade_program(program, source, out, timeout, seed=0):
    """Copy the program's files from ``source`` into a fresh folder under ``out``,
    convert them with ``tf_upgrade_v2`` (into ``upgraded/``), add the migration guide's
    ``disable_v2_behavior()`` line, make the data there and run the result with plain
    ``python`` (tf1compat not importable); the two :class:`Outcome` of upgrade mode."""
    workdir = os.path.join(out, program["name"], "upgrade")
    shutil.rmtree(workdir, ignore_errors=True)
    original = os.path.join(workdir, "original")
    shutil.copytree(os.path.join(source, program["name"]), original)
    upgraded = os.path.join(workdir, "upgraded")
    limit = program.get("timeout", timeout)
    command = [sys.executable, "-m", UPGRADE_SCRIPT, "--intree", original,
               "--outtree", upgraded, "--reportfile", os.path.join(workdir, "report.txt")]
    returncode, stdout, stderr, timed_out, seconds, _ = _run(
        command, workdir, limit, os.path.join(workdir, "upgrade.txt"))
    status, detail = upgrade_outcome(stdout + stderr, returncode, timed_out, original)
    outcomes = [Outcome(program["name"], "upgrade", status, seconds, detail)]
    entry = os.path.join(upgraded, program["entry"])
    try:
        add_guide_line(entry)
    except (OSError, SyntaxError, ValueError) as error:
        outcomes.append(Outcome(program["name"], "upgraded", "fail", 0.0,
                                f"no program to run: {error}"))
        return outcomes
    failed = prepare(program, upgraded, timeout, seed)
    if failed:
        outcomes.append(Outcome(program["name"], "upgraded", "fail", 0.0, failed))
        return outcomes
    args = program.get("args", [])
    outcomes.append(_run_outcome(program, "upgraded", plain_python_command(entry, *args),
                                 upgraded, limit, os.path.join(workdir, "plain.txt")))
    return outcomes


def format_table(names, outcomes, modes=tuple(MODES)):
    """The results as text: a row per program, K/N per mode, then each failure's
    first failing line (and each stopped run's mark)."""
    by_key = {(o.name, o.mode): o for o in outcomes}
    width = max([len("program"), *map(len, names)])
    header = f"{'program':<{width}}  " + "  ".join(f"{m:<16}" for m in modes)
    rows = [header, "-" * len(header)]
    for name in names:
        cells = []
        for mode in modes:
            o = by_key.get((name, mode))
            cells.append(f"{o.status} ({o.seconds:.0f} s)" if o else "-")
        rows.append(f"{name:<{width}}  " + "  ".join(f"{c:<16}" for c in cells))
    rows.append("")
    for mode in modes:
        ran = [by_key[(n, mode)] for n in names
               if (n, mode) in by_key and by_key[(n, mode)].status != "none"]
        good = sum(o.status in SUCCESS for o in ran)
        rows.append(f"{mode}: {good}/{len(ran)} succeeded")
    notes = [o for o in outcomes if o.detail and o.status != "none"]
    if notes:
        rows.append("")
        rows.extend(f"{o.name} [{o.mode}] {o.status}: {o.detail}" for o in notes)
    return "\n".join(rows)


# the modes that turn each program into a TF2 program: how, and the outcomes they give
COMPARED = {"port": (port_program, PORT_MODES), "upgrade": (upgrade_program, UPGRADE_MODES)}


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m corpus.run", description=__doc__.split(
        "\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--programs", default=PROGRAMS, type=pathlib.Path,
                        help="the list of programs (default: corpus/programs.json; "
                             "corpus/models.json: tensorflow/models' slim and CIFAR-10)")
    parser.add_argument("--from", dest="source", required=True,
                        help="folder holding each program's fetched files in <name>/")
    parser.add_argument("--out", default="corpus-output",
                        help="folder for the working copies, data and outputs")
    parser.add_argument("--timeout", type=float, default=300.0,
                        help="seconds per run, unless the program sets its own")
    parser.add_argument("--only", nargs="+", metavar="NAME", help="run only these programs")
    parser.add_argument("--mode", choices=(*MODES, *COMPARED), action="append",
                        help="run in this mode (repeatable; default: run, queues and "
                             "tf-data); port: port --verify, then the port with plain "
                             "python; upgrade: tf_upgrade_v2 and the guide's "
                             "disable_v2_behavior() line, then plain python")
    args = parser.parse_args(argv)
    programs = load_programs(args.programs)
    if args.only:
        unknown = sorted(set(args.only) - {p["name"] for p in programs})
        if unknown:
            parser.error(f"unknown program(s) {', '.join(unknown)}; the corpus has "
                         f"{', '.join(p['name'] for p in programs)}")
        programs = [p for p in programs if p["name"] in args.only]
    missing = [p["name"] for p in programs
               if not os.path.isdir(os.path.join(args.source, p["name"]))]
    if missing:
        parser.error(f"{args.source} has no folder for {', '.join(missing)} "
                     "(fetch them as docs/corpus.md shows)")
    modes = tuple(dict.fromkeys(args.mode or MODES))
    out = os.path.abspath(args.out)
    outcomes = []
    for program in programs:
        for mode in modes:
            if mode in COMPARED:
                done = COMPARED[mode][0](program, args.source, out, args.timeout)
            else:
                done = [run_program(program, mode, args.source, out, args.timeout)]
            for outcome in done:
                print(f"{outcome.name} [{outcome.mode}]: {outcome.status} "
                      f"({outcome.seconds:.0f} s)", flush=True)
            outcomes += done
    columns = [column for mode in modes
               for column in (COMPARED[mode][1] if mode in COMPARED else (mode,))]
    print()
    print(format_table([p["name"] for p in programs], outcomes, columns))
    return 0 if all(o.status in (*SUCCESS, "none") for o in outcomes) else 1


if __name__ == "__main__":
    raise SystemExit(main())
