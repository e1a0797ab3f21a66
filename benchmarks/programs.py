"""``scripts/bench --suite programs``: whole programs as a user runs them.

Input loops: two TF1-era programs (:mod:`.program_sources`) -- the CIFAR-10
tutorial's ``distorted_inputs`` (``FixedLengthRecordReader``, random distortions,
``shuffle_batch`` of 128 with 16 threads over a 20,000-image buffer) and the input
half of slim's ``train_image_classifier.py`` (``DatasetDataProvider`` with 4 readers
over PNG TFRecords in slim's layout, preprocessing, ``tf.train.batch``,
``prefetch_queue``) -- each run as ``tf1compat run`` (what a user gets without a
flag: each pipeline on tf.data where that gives the same run), ``tf1compat run
--queues`` (TF1's queues), as ``tf1compat port`` writes it (ported at set-up, its
queue pipelines as tf.data) run by plain ``python`` with tf1compat not importable,
and as its hand-written TF2 tf.data port, every run in its own process. Each program
times its own loop (``time.time()`` and the process's CPU time after every
``sess.run`` or batch) and prints it last with its ``VmHWM``; steps/s count the
steps after a warm-up, start-up is from launching the process to the first batch
(and the CPU it took, which the machine's load does not change), CPU per step is
over the timed steps. Start-up: ``tf1compat check`` on a generated 50-file TF1
project, and a trivial ``tf.compat.v1`` program under plain ``python`` and under
``tf1compat run`` (wall time to exit). Rounds are interleaved; the tables show
medians and per-round ratios with their range. Writes ``programs.md``,
``programs.json`` and ``programs.png`` to ``out_dir``.

This process never imports TensorFlow: it writes the data and programs, ports
them with the ``tf1compat port`` command, then launches and waits.
"""

import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

from benchmarks import bar_chart, program_sources, vm_hwm_mb, write_report, write_text
from corpus.plain import plain_python_command

FULL = {"train_images": 50000, "warmup_steps": 20, "max_steps": 300, "rounds": 5,
        "start_rounds": 5, "check_files": 50}
QUICK = {"train_images": 500, "warmup_steps": 2, "max_steps": 3, "rounds": 1,
         "start_rounds": 1, "check_files": 50}
BATCH_SIZE = 128
PORT = "TF2 tf.data port"
PORTED = "tf1compat port, plain python"
MODES = ("tf1compat run", "tf1compat run --queues", PORTED, PORT)
# program -> (TF1 source, TF2 port source, data folder under the data directory)
PROGRAMS = {
    "CIFAR-10 tutorial distorted_inputs": (
        program_sources.CIFAR10_TUTORIAL, program_sources.CIFAR10_TUTORIAL_TF2,
        os.path.join("binary", "cifar-10-batches-bin")),
    "slim DatasetDataProvider + batch": (
        program_sources.SLIM_PROVIDER, program_sources.SLIM_PROVIDER_TF2, "slim"),
}
LOOP_ROWS = [f"{program}: {mode}" for program in PROGRAMS for mode in MODES]
CHECK_ROW = "tf1compat check, 50-file TF1 project"
PLAIN_ROW = "python trivial.py (tf.compat.v1)"
RUN_ROW = "tf1compat run trivial.py"
START_ROWS = [CHECK_ROW, PLAIN_ROW, RUN_ROW]
CHILD_TIMEOUT_S = 900


# ------------------------------------------------------------------ set-up

def prepare(work_dir, settings):
    """Write (or reuse) the data, the programs and the check project under
    ``work_dir``; returns the folder of the programs."""
    from tf1compat import cifar10

    data_dir = os.path.join(work_dir, "data")
    stamp = os.path.join(data_dir, "stamp.json")
    wanted = {"train_images": settings["train_images"], "version": 1}
    try:
        with open(stamp) as f:
            ready = json.load(f) == wanted
    except (OSError, ValueError):
        ready = False
    if not ready:
        folder = cifar10.make_synthetic(os.path.join(data_dir, "binary"),
                                        settings["train_images"], 100)
        cifar10.convert(folder, os.path.join(data_dir, "slim"), image_format="png",
                        overwrite=True, quiet=True)
        write_text(stamp, json.dumps(wanted))
    programs_dir = os.path.join(work_dir, "programs")
    os.makedirs(programs_dir, exist_ok=True)
    sources = {"trivial.py": program_sources.TRIVIAL_COMPAT_V1}
    for program, (tf1_source, port_source, _) in PROGRAMS.items():
        stem = _stem(program)
        sources[f"{stem}.py"] = tf1_source
        sources[f"{stem}_tf2.py"] = port_source
    for name, source in sources.items():
        write_text(os.path.join(programs_dir, name), source)
    program_sources.write_check_project(os.path.join(work_dir, "project"),
                                        settings["check_files"])
    return programs_dir


def _stem(program):
    return "cifar10_tutorial" if program.startswith("CIFAR") else "slim_provider"


def _flags(work_dir, settings, data):
    """An input loop's command-line flags: its data folder, batch size and steps."""
    return [f"--data_dir={os.path.join(work_dir, 'data', data)}", f"--batch_size={BATCH_SIZE}",
            f"--warmup_steps={settings['warmup_steps']}", f"--max_steps={settings['max_steps']}"]


def _ported_entry(work_dir, stem):
    return os.path.join(work_dir, "ported", stem, f"{stem}.py")


def port_programs(work_dir, settings, rows):
    """Port each TF1 program a ``PORTED`` row of ``rows`` runs, with ``tf1compat port``
    and the loop's flags (it runs the program to its first read to find its pipelines),
    into ``work_dir/ported/<stem>/`` (set-up, not timed); returns {row: why} for the
    ports that failed or left a part unported (those rows are not run)."""
    failed = {}
    for program, (_, _, data) in PROGRAMS.items():
        row = f"{program}: {PORTED}"
        if row not in rows:
            continue
        stem = _stem(program)
        command = [sys.executable, "-m", "tf1compat", "port", f"{stem}.py", "--out",
                   os.path.dirname(_ported_entry(work_dir, stem)), "--overwrite", "--",
                   *_flags(work_dir, settings, data)]
        try:
            done = subprocess.run(command, cwd=os.path.join(work_dir, "programs"), text=True,
                                  capture_output=True, stdin=subprocess.DEVNULL,
                                  timeout=CHILD_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            failed[row] = f"tf1compat port: no exit within {CHILD_TIMEOUT_S} s (killed)"
            continue
        if done.returncode != 0:
            findings = [line for line in done.stdout.splitlines()
                        if line.startswith("not ported: ")]
            failed[row] = (f"tf1compat port exit status {done.returncode}: "
                           f"{findings[0] if findings else _last_error(done.stderr)}")
    return failed


def commands(work_dir, settings):
    """row -> the command line that measures it (run in ``work_dir/programs``)."""
    python = sys.executable
    tf1compat = [python, "-m", "tf1compat"]
    rows = {}
    for program, (_, _, data) in PROGRAMS.items():
        stem = _stem(program)
        flags = _flags(work_dir, settings, data)
        rows[f"{program}: tf1compat run"] = [*tf1compat, "run", f"{stem}.py", *flags]
        rows[f"{program}: tf1compat run --queues"] = [
            *tf1compat, "run", "--queues", f"{stem}.py", *flags]
        rows[f"{program}: {PORTED}"] = plain_python_command(_ported_entry(work_dir, stem),
                                                            *flags)
        rows[f"{program}: {PORT}"] = [python, f"{stem}_tf2.py", *flags]
    rows[CHECK_ROW] = [*tf1compat, "check", os.path.join(work_dir, "project")]
    rows[PLAIN_ROW] = [python, "trivial.py"]
    rows[RUN_ROW] = [*tf1compat, "run", "trivial.py"]
    return rows


# ------------------------------------------------------------ measurement

def run_child(command, cwd, ok_codes=(0,), needs_report=False, timeout=CHILD_TIMEOUT_S):
    """Run ``command``; returns its wall time, exit status and peak RSS (its ``VmHWM``
    in MB, polled every 5 ms: ``ru_maxrss`` would show this process's peak, which the
    child inherits at the fork) and, for an input loop, its ``BENCH`` report with ``startup_s``
    (launch to first batch) and ``steps_per_s`` added. With ``error`` (the exit status
    and the exception, or the last line, on stderr) when it exits with a status not in
    ``ok_codes``, or without a report when it ``needs_report``."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        launched = time.time()
        process = subprocess.Popen(command, cwd=cwd, stdout=out, stderr=err)
        status, peak_mb = _wait(process.pid, launched + timeout)
        wall_s = time.time() - launched
        if status is None:
            process.kill()
            process.wait()
            return {"error": f"no exit within {timeout} s (killed)"}
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout = out.read().decode(errors="replace")
        stderr = err.read().decode(errors="replace")
    result = {"wall_s": wall_s, "returncode": process.returncode, "peak_rss_mb": peak_mb}
    if process.returncode not in ok_codes:
        result["error"] = f"exit status {process.returncode}: {_last_error(stderr)}"
        return result
    reports = [line[len("BENCH "):] for line in stdout.splitlines() if line.startswith("BENCH ")]
    if not reports:
        if needs_report:
            result["error"] = f"exit status {process.returncode} without a BENCH line"
        return result
    try:
        report = json.loads(reports[-1])
        result.update(report, startup_s=report["first_batch_time"] - launched,
                      steps_per_s=report["timed_steps"] / report["timed_seconds"],
                      step_cpu_ms=1000 * report["timed_cpu_s"] / report["timed_steps"])
    except (ValueError, KeyError, TypeError, ZeroDivisionError) as error:
        result["error"] = f"unreadable BENCH line {reports[-1][:80]!r}: {error!r}"
    return result


def _last_error(stderr):
    """The last exception line on ``stderr`` (``ValueError: ...``), else its last line."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    exceptions = [line for line in lines
                  if re.match(r"[A-Za-z_][\w.]*(Error|Exception|Interrupt)\b", line)]
    return (exceptions or lines or ["(nothing on stderr)"])[-1]


def _wait(pid, deadline):
    """Wait for the child until ``deadline``, polling its ``VmHWM``: (exit status, peak
    MB), or (None, None) when it is still running."""
    peak_mb = None
    while True:
        peak_mb = max(filter(None, [peak_mb, vm_hwm_mb(pid)]), default=None)
        reaped, status = os.waitpid(pid, os.WNOHANG)
        if reaped:
            return status, peak_mb
        if time.time() > deadline:
            return None, None
        time.sleep(0.005)


def measure_rounds(work_dir, settings, rows, log=print, unported=None):
    """Interleaved rounds of every row (cheap start-up rows get more rounds); returns
    {row: [result per round]}. A row of ``unported`` ({row: why}) is not run: each of
    its rounds is that error."""
    all_commands = commands(work_dir, settings)
    cwd = os.path.join(work_dir, "programs")
    results = {row: [] for row in rows}
    for round_index in range(max(settings["rounds"], settings["start_rounds"])):
        for row in rows:
            wanted = settings["start_rounds"] if row in START_ROWS else settings["rounds"]
            if round_index >= wanted:
                continue
            if row in (unported or {}):
                result = {"error": unported[row]}
            else:
                result = run_child(all_commands[row], cwd,
                                   (0, 1) if row == CHECK_ROW else (0,),
                                   needs_report=row in LOOP_ROWS)
            results[row].append(result)
            shown = (f"{result['steps_per_s']:7.1f} steps/s" if "steps_per_s" in result
                     else f"{result['wall_s']:7.2f} s" if "wall_s" in result else "")
            log(f"round {round_index + 1}  {row:58s} {shown} {result.get('error', '')}")
    return results


# ---------------------------------------------------------------- summary

def _spread(values):
    return f"{statistics.median(values):.2f} ({min(values):.2f}-{max(values):.2f})"


def loop_table(results):
    """The input loops' markdown table: steps/s, ratio to the port, start-up (wall and
    CPU, and against the port's), CPU per step, memory."""
    lines = ["| program: how it runs | steps/s | images/s | ratio to the TF2 port "
             "(rounds' range) | start-up to first batch s | start-up minus the port's s "
             "| CPU to first batch s | CPU per step ms | peak RSS MB |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for program in PROGRAMS:
        port = results.get(f"{program}: {PORT}", [])
        for mode in MODES:
            row = f"{program}: {mode}"
            if row not in results:
                continue
            rounds = results[row]
            failed = next((r["error"] for r in rounds if "error" in r), None)
            if failed:
                lines.append(f"| {row} | failed: {failed} | | | | | | | |")
                continue
            steps = [r["steps_per_s"] for r in rounds]
            paired = [(r, p) for r, p in zip(rounds, port, strict=False) if "steps_per_s" in p]
            ratios = [r["steps_per_s"] / p["steps_per_s"] for r, p in paired]
            later = [r["startup_s"] - p["startup_s"] for r, p in paired]
            lines.append(
                f"| {row} | {statistics.median(steps):.1f} "
                f"| {statistics.median(steps) * BATCH_SIZE:,.0f} "
                f"| {_spread(ratios) if ratios else ''} "
                f"| {_spread([r['startup_s'] for r in rounds])} "
                f"| {_spread(later) if later else ''} "
                f"| {_spread([r['first_batch_cpu_s'] for r in rounds])} "
                f"| {_spread([r['step_cpu_ms'] for r in rounds])} "
                f"| {max(r['peak_rss_mb'] for r in rounds):,.0f} |")
    return "\n".join(lines)


def start_table(results):
    """``check`` and start-up: wall time to exit, run mode's overhead per round."""
    lines = ["| command | wall time to exit s (rounds' range) | peak RSS MB |",
             "|---|---:|---:|"]
    for row in START_ROWS:
        rounds = results.get(row)
        if not rounds:
            continue
        failed = next((r["error"] for r in rounds if "error" in r), None)
        if failed:
            lines.append(f"| {row} | failed: {failed} | |")
            continue
        lines.append(f"| {row} | {_spread([r['wall_s'] for r in rounds])} "
                     f"| {max(r['peak_rss_mb'] for r in rounds):,.0f} |")
    plain, run = results.get(PLAIN_ROW), results.get(RUN_ROW)
    if plain and run and not any("error" in r for r in plain + run):
        overhead = [r["wall_s"] - p["wall_s"] for r, p in zip(run, plain, strict=True)]
        lines.append(f"| run mode's overhead (per-round difference) | {_spread(overhead)} | |")
    return "\n".join(lines)


def write_chart(results, path):
    """Bars of the input loops' median steps/s (green: the TF2 port, orange: the
    program as ``tf1compat port`` writes it)."""
    rows = [row for row in LOOP_ROWS
            if row in results and not any("error" in r for r in results[row])]
    values = [statistics.median(r["steps_per_s"] for r in results[row]) for row in rows]
    colors = ["tab:green" if row.endswith(PORT) else "tab:orange" if row.endswith(PORTED) else
              "tab:gray" if row.endswith("--queues") else "tab:blue" for row in rows]
    bar_chart(path, rows, values, colors,
              xlabel=f"steps/s (batch {BATCH_SIZE}, median of interleaved rounds)",
              title="Input loops (blue: run, gray: run --queues, orange: tf1compat port, "
                    "green: TF2 port)")


def run(quick=False, out_dir="bench-results", rows=None):
    """Prepare, measure ``rows`` (default: all), print and write the tables; returns 1
    when a program failed (the table names how), else 0."""

    settings = QUICK if quick else FULL
    rows = rows or [*LOOP_ROWS, *START_ROWS]
    work_dir = os.path.abspath(os.path.join(out_dir, "programs-quick" if quick else "programs"))
    print(f"programs: data, programs and project in {work_dir} (built once, not timed)",
          flush=True)
    prepare(work_dir, settings)
    unported = port_programs(work_dir, settings, rows)
    load_before = os.getloadavg()[0]
    results = measure_rounds(work_dir, settings, rows, lambda line: print(line, flush=True),
                             unported)
    load_after = os.getloadavg()[0]
    loops = (f"Input loops: {settings['warmup_steps']} warm-up steps, then "
             f"{settings['max_steps']} timed steps of batch {BATCH_SIZE} (each fetches the "
             f"batch and its mean); median of {settings['rounds']} interleaved rounds, each "
             "run in a fresh process. Ratio: per-round steps/s over the TF2 port's; start-up "
             "minus the port's: per round. CPU: the process's (all threads), from its start "
             "to the first batch, and per timed step.")
    starts = (f"Start-up: median of {settings['start_rounds']} interleaved rounds; "
              "the trivial program is the same file under both.")
    write_chart(results, os.path.join(out_dir, "programs.png"))
    write_report("programs", quick, out_dir, (load_before, load_after),
                 [loops, loop_table(results), starts, start_table(results)],
                 {"settings": settings, "batch_size": BATCH_SIZE,
                  "commands": commands(work_dir, settings), "rounds": results},
                 also=["programs.png"])
    return 1 if any("error" in r for rounds in results.values() for r in rounds) else 0
