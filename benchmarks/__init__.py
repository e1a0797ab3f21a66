"""Benchmarks run by ``scripts/bench`` (``python -m benchmarks``), kept outside the
installed package: ``reading`` (queue pipelines vs tf.data), ``epochs``, ``conversion``
(CIFAR-10 converters and engines), ``service``, ``pruning`` and ``programs`` (whole TF1
programs' input loops, ``check`` and start-up). Each module has ``run(quick, out_dir) ->
int`` that prints its table and writes it under ``out_dir`` (atomically, with
:func:`~tf1compat.records._files.atomic_output`)."""

import json
import os
import platform
import resource
import subprocess
import sys

from tf1compat._versions import tensorflow_version
from tf1compat.records._files import atomic_output


def write_text(path, text):
    """Write ``text`` to ``path`` atomically."""
    with atomic_output(path) as temporary, open(temporary, "w") as f:
        f.write(text)


def describe_machine():
    """One line: cores, CPU model, memory, OS, Python and TensorFlow versions."""
    try:
        with open("/proc/cpuinfo") as f:
            model = next((line.split(":", 1)[1].strip() for line in f
                          if line.startswith("model name")), platform.processor())
    except OSError:
        model = platform.processor() or platform.machine()
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2 ** 30
    tensorflow = tensorflow_version()
    return (f"{os.cpu_count()} cores ({model}), {memory:.0f} GiB, {platform.system()} "
            f"{platform.release()}, Python {platform.python_version()}"
            + (f", TensorFlow {tensorflow}" if tensorflow else ""))


def write_report(suite, quick, out_dir, load, sections, data, also=()):
    """Print suite ``suite``'s report and write it to ``out_dir`` as ``SUITE.md`` (the
    command, this machine and the load average ``(before, after)`` of the run, then
    ``sections``, blank lines between) and ``SUITE.json`` (``data`` with the machine and
    the load); ``also`` names other files the suite wrote, for the closing line."""
    machine = describe_machine()
    command = (f"`scripts/bench --suite {suite}{' --quick' if quick else ''}` on {machine}; "
               "load average (1 minute, every job on the machine) "
               f"{load[0]:.1f} before and {load[1]:.1f} after the run.")
    report = "\n\n".join([command, *sections])
    print("\n" + report)
    write_text(os.path.join(out_dir, f"{suite}.md"), report + "\n")
    write_text(os.path.join(out_dir, f"{suite}.json"), json.dumps(
        {**data, "machine": machine, "load_average": {"before": load[0], "after": load[1]}},
        indent=2))
    written = ", ".join([f"{suite}.md", *also, f"{suite}.json"])
    print(f"{suite}: wrote {written} to {out_dir}")


def vm_hwm_mb(pid="self"):
    """The peak resident memory in MB of process ``pid`` so far: Linux's ``VmHWM``,
    which starts afresh with the program (``ru_maxrss`` keeps the parent's peak across
    fork and exec, so a child of a process that imported TensorFlow would show its
    size); None without ``/proc`` or once the process is gone."""
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


def peak_rss_mb():
    """This process's peak resident memory in MB: ``VmHWM`` on Linux (see
    :func:`vm_hwm_mb`), ``ru_maxrss`` elsewhere."""
    peak = vm_hwm_mb()
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 if peak is None else peak


def bar_chart(path, rows, values, colors, xlabel, title):
    """Horizontal bars, one per row, top to bottom (matplotlib, Agg), written to
    ``path`` atomically."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(9, 0.35 * len(rows) + 1.2))
    axes.barh(rows, values, color=colors)
    axes.invert_yaxis()
    axes.set_xlabel(xlabel)
    figure.suptitle(title)
    figure.tight_layout()
    with atomic_output(path) as temporary:
        figure.savefig(temporary, dpi=100)
    plt.close(figure)


def child_env():
    """This process's environment with the folder holding ``benchmarks`` first on
    ``PYTHONPATH``, so a child started anywhere imports the harness."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return {**os.environ,
            "PYTHONPATH": os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")]))}


def run_child(module, arguments):
    """Run ``python -m MODULE ARGUMENTS`` (a suite's measuring child); returns the JSON
    answer of its last line, or raises RuntimeError with the end of its stderr."""
    completed = subprocess.run([sys.executable, "-m", module, *arguments],
                               capture_output=True, text=True, check=False, env=child_env())
    if completed.returncode != 0:
        raise RuntimeError(f"benchmark child {arguments[:1]} failed:\n{completed.stderr[-3000:]}")
    return json.loads(completed.stdout.strip().splitlines()[-1])
