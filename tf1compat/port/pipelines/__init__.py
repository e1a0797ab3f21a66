"""Queue input pipelines written again as tf.data source code (``tf1compat port``).

:func:`rewrite_pipelines` runs the program (in a child process, under run mode,
with its arguments) until its pipelines are built
(:mod:`~tf1compat.port.pipelines.observe`), reads each one's plan and the program
lines behind its ops, and writes it as tf.data where the program wrote the queue
code (:mod:`~tf1compat.port.pipelines.rewrite`). ``tf1compat port`` calls it before
its name fixers, on the program's original text.
"""

import dataclasses
import json
import os
import pathlib
import subprocess
import sys
import tempfile

import libcst as cst

from tf1compat.port.findings import Finding
from tf1compat.port.pipelines.observed import Observation, load_observation
from tf1compat.port.pipelines.rewrite import NotPortable, PortedPipeline, Porter
from tf1compat.port.pipelines.runners import drop_runner_starts
from tf1compat.port.pipelines.signatures import BATCHING
from tf1compat.port.pipelines.source import SourceFile
from tf1compat.port.pipelines.syntax import call_tail, calls_in, shown_path
from tf1compat.v1.keras2 import keras2_environment

__all__ = ["rewrite_pipelines", "PipelineRewrite", "PortedPipeline", "OBSERVE_TIMEOUT"]

OBSERVE_TIMEOUT = 600.0   # seconds the program may take to reach its first read
# Names whose calls make queue pipelines: a program without them is not run.
_REPORTED = frozenset({f"tf.train.{name}" for name in BATCHING} | {"DatasetDataProvider",
                                                                  "prefetch_queue"})
_TRAIN_NAMES = (*BATCHING, "string_input_producer", "slice_input_producer", "input_producer",
                "range_input_producer")   # tf.train's: dataset.batch(...) is none of them
_QUEUE_NAMES = (*_TRAIN_NAMES, "DatasetDataProvider", "prefetch_queue")


@dataclasses.dataclass
class PipelineRewrite:
    """What :func:`rewrite_pipelines` did: ``sources`` the changed files' new text,
    ``changes`` its edits besides the pipelines (the queue runners' starts removed),
    ``findings`` the pipelines left as they were (and why), ``pipelines`` those
    written as tf.data. The name fixers then treat its tf.data code as the
    program's own: TF2's names, or ``tf.compat.v1.data``'s in a file that uses a
    member only TF1's datasets have (so the port of the port changes nothing)."""

    sources: dict
    findings: list
    pipelines: list
    changes: list = dataclasses.field(default_factory=list)


def rewrite_pipelines(sources, entry, argv, *, timeout=OBSERVE_TIMEOUT):
    """Write the queue input pipelines of the program ``sources`` (``{path: text}``,
    its files) as tf.data; ``entry`` is the file to run (with ``argv``) to find them,
    None when there is none. Returns a :class:`PipelineRewrite`."""
    sources = {pathlib.Path(path): text for path, text in sources.items()}
    calls = _queue_calls(sources)
    if not calls:
        return PipelineRewrite({}, [], [])
    if entry is None:
        return PipelineRewrite({}, [Finding(shown_path(path), line, name, (
            "no entry program to run, so its input pipeline was not seen (port a file, or "
            "a folder with a __main__.py)")) for path, line, name in calls], [])
    observation, failure = _observe(pathlib.Path(entry), list(argv), list(sources), timeout)
    findings = [] if failure is None else [failure]
    if observation.status not in (None, 0):
        findings.append(Finding(shown_path(entry), 0, "(the program)", (
            f"exited with status {observation.status} before its first read from a queue: "
            f"{observation.output or 'see its output'}")))
    porter = Porter(sources, observation.pipelines)
    ported, covered = [], set()
    for pipeline in observation.pipelines:
        frame = pipeline.stack[-1] if pipeline.stack else None
        if frame is not None:
            covered.add((os.path.realpath(frame.file), frame.line))
        try:
            ported.append(porter.port(pipeline))
        except NotPortable as e:
            findings.append(Finding(shown_path(e.path), e.line, e.name, e.why))
            covered.add((os.path.realpath(e.path), e.line))
    ported += porter.analog_pipelines
    covered |= porter.rewritten_calls
    for path, line, name in calls:
        if (os.path.realpath(path), line) not in covered and name in _REPORTED:
            findings.append(Finding(shown_path(path), line, name, (
                "the program did not reach this call before its first read from a queue; "
                "left as it was (port with the arguments that reach it)")))
    rewritten, changes = porter.new_sources(), []
    if ported and not findings:    # no queue runner left anywhere in the program
        started, changes = drop_runner_starts(sources, rewritten)
        rewritten.update(started)
    return PipelineRewrite(rewritten, findings, ported, changes)


def _queue_calls(sources):
    """``(path, line, name)`` of each call of the queue API in the program's files."""
    found = []
    for path, text in sources.items():
        try:
            source = SourceFile(path, text)
        except cst.ParserSyntaxError:
            continue
        for call in calls_in(source.module):
            name = call_tail(call)
            if name in _QUEUE_NAMES and _of_the_queue_api(call, name):
                shown = "tf.train." + name if name in (*BATCHING, "string_input_producer") else name
                found.append((path, source.lines(call)[0], shown))
    return found


def _of_the_queue_api(call, name):
    """Whether ``call`` of ``name`` is the queue API's: ``tf.train.batch`` (any module
    path ending in ``train``) or ``batch`` imported alone, not ``dataset.batch``."""
    func = call.func
    if name not in _TRAIN_NAMES or isinstance(func, cst.Name):
        return True
    return isinstance(func, cst.Attribute) and isinstance(func.value, cst.Attribute) \
        and func.value.attr.value == "train"


def _observe(entry, argv, files, timeout):
    """Run the program in a child process; returns ``(Observation, finding or None)``."""
    with tempfile.TemporaryDirectory(prefix="tf1compat-port-") as folder:
        request = os.path.join(folder, "request.json")
        output = os.path.join(folder, "observation.json")
        with open(request, "w", encoding="utf-8") as f:
            json.dump({"entry": os.fspath(entry), "argv": argv, "output": output,
                       "files": [os.fspath(p) for p in files]}, f)
        command = [sys.executable, "-m", "tf1compat.port.pipelines.observe", request]
        try:
            result = subprocess.run(command, capture_output=True, text=True, timeout=timeout,
                                    stdin=subprocess.DEVNULL,
                                    env=keras2_environment(os.environ))
        except subprocess.TimeoutExpired:
            return Observation([]), Finding(shown_path(entry), 0, "(the program)", (
                f"did not reach its first read from a queue within {timeout:.0f} s of running "
                "it; its input pipelines were not seen"))
        last = (result.stderr.strip().splitlines() or ["(no output)"])[-1]
        if not os.path.exists(output):
            return Observation([]), Finding(shown_path(entry), 0, "(the program)", (
                f"running it to find its input pipelines failed (exit {result.returncode}): "
                f"{last}"))
        observation = load_observation(output)
        observation.output = last
        return observation, None
