"""``tf1compat port --verify``: the original and its port feed the same data.

:func:`verify_pipelines` runs the original program under run mode
(:mod:`~tf1compat.port.pipelines.observe`, original side) and the port under plain
TensorFlow (:mod:`~tf1compat.port.pipelines._harness`, run as a script, tf1compat
unimportable), both with the same arguments, from the current folder, at once.
Each side stops its program at its first read of its input, reads every ported
pipeline to its end and writes the batches to a pipe; here they are compared
pipeline by pipeline with :func:`~tf1compat.compare`: in order where TF1 delivered
one order every run and the port can deliver it too (one thread, no shuffling), as
multisets otherwise: a seeded shuffle gives one order every run, but TF1's
``RandomShuffle`` order, which tf.data's ``shuffle`` does not give for the same seeds
(the note says so, and names both sides' graph-level seeds where they differ: a
program that seeds TensorFlow anew on each run). What both
sides do to make that comparison meaningful (random ops as fixed draws, endless
pipelines read for two epochs) is in :mod:`._harness`.
"""

import dataclasses
import json
import os
import pickle
import subprocess
import sys
import tempfile
import threading

from tf1compat.migrate.comparison import compare
from tf1compat.pipeline.graph_model import op_types
from tf1compat.port.pipelines import _harness
from tf1compat.port.pipelines.rewrite import iterator_line
from tf1compat.port.pipelines.syntax import shown_path
from tf1compat.v1.keras2 import keras2_environment

__all__ = ["verify_pipelines", "PipelineCheck", "Verification", "VERIFY_TIMEOUT",
           "structure_mismatch"]

VERIFY_TIMEOUT = 1800.0   # seconds both sides may take, together
NO_SEED = object()        # a side that sent no seed (it failed first)


@dataclasses.dataclass
class PipelineCheck:
    """One pipeline's verification: its comparison ``report`` (None when a side
    failed: ``error``), whether it ``passed``, a ``note`` on what was compared, and
    ``mismatch``, what differs in the batches' structure (dict keys, nesting)."""

    pipeline: object
    report: object = None
    error: str | None = None
    passed: bool = False
    note: str = ""
    mismatch: str | None = None

    def lines(self):
        pipeline = self.pipeline
        where = f"{shown_path(pipeline.path)}:{pipeline.line}: {pipeline.api}"
        if self.error is not None:
            return [f"verify: {where}: FAILED: {self.error}"]
        if self.mismatch is not None:
            lines = [f"verify: {where}: DIFFERENT structure: {self.mismatch}"]
        else:
            verdict = "same data" if self.passed else "DIFFERENT data"
            lines = [f"verify: {where}: {verdict} ({self.note})"]
        report = str(self.report).splitlines()
        if self.passed and not self.report.equal:   # only the dropped remainders differ
            report[0] = report[0].replace("pipelines DIFFER", "pipelines EQUAL but for the "
                                          "last partial batch", 1)
        lines += [f"  {line}" for line in report]
        return lines


@dataclasses.dataclass
class Verification:
    """Every ported pipeline's :class:`PipelineCheck`; ``passed`` when all passed."""

    checks: list
    skipped: list = dataclasses.field(default_factory=list)

    @property
    def passed(self):
        return all(check.passed for check in self.checks)

    def lines(self):
        lines = [line for check in self.checks for line in check.lines()]
        lines += [f"verify: {shown_path(p.path)}:{p.line}: {p.api}: not verified: written "
                  f"like the pipeline at {p.like}, which the program ran; this one it did "
                  "not run" for p in self.skipped]
        passed = sum(check.passed for check in self.checks)
        lines.append(f"verify: {passed} of {len(self.checks)} pipeline(s) feed the same data")
        return lines


class _Side:
    """One program run whose pipelines' batches arrive on a pipe."""

    def __init__(self, command, request, folder, name, cwd, env=None):
        self.structures = {}     # pipeline -> its first batch's structure
        read, write = os.pipe()
        request["fd"] = write
        request.setdefault("verify", {})["fd"] = write
        path = os.path.join(folder, f"{name}.json")
        with open(path, "w", encoding="utf-8") as f:
            json.dump(request, f)
        self.log = open(os.path.join(folder, f"{name}.log"), "w+", encoding="utf-8")  # noqa: SIM115
        self.process = subprocess.Popen([*command, path], pass_fds=(write,), cwd=cwd,
                                        stdin=subprocess.DEVNULL, stdout=self.log,
                                        stderr=subprocess.STDOUT, env=env)
        os.close(write)
        self.pipe = os.fdopen(read, "rb")
        self.name = name
        self.pending = None      # a message read ahead by seed()

    def seed(self, index):
        """The graph-level seed pipeline ``index`` was built with (None: unset), or
        ``NO_SEED`` when the side sent none (it failed before: its batches say why)."""
        message = self._next()
        if message[0] == "seed" and message[1] == index:
            return message[2]
        self.pending = message
        return NO_SEED

    def batches(self, index, names):
        """The batches of pipeline ``index`` as dicts of ``names``; raises RuntimeError
        with the side's error when it failed."""
        while True:
            message = self._next()
            kind, number, payload = message
            if kind == "seed" and number == index:   # not read by seed(): the side failed
                continue
            if number != index:
                raise RuntimeError(f"{self.name} side: pipeline {number} arrived while "
                                   f"pipeline {index} was read")
            if kind == "end":
                if payload is not None:
                    raise RuntimeError(f"{self.name} side: {payload} (the program's output "
                                       f"ended with: {self.tail()})")
                return
            structure, arrays = payload
            self.structures.setdefault(index, structure)
            yield _named(arrays, names)

    def drain(self, index):
        """Read what is left of pipeline ``index``."""
        try:
            for _ in self.batches(index, ()):
                pass
        except RuntimeError:
            pass

    def _next(self):
        if self.pending is not None:
            message, self.pending = self.pending, None
            return message
        try:
            return pickle.load(self.pipe)
        except EOFError:
            self.process.wait()
            raise RuntimeError(f"{self.name} side: the program ended (exit "
                               f"{self.process.returncode}) before its pipelines were read: "
                               f"{self.tail()}") from None

    def tail(self):
        self.log.flush()
        self.log.seek(0)
        lines = [line for line in self.log.read().splitlines() if line.strip()]
        return lines[-1].strip() if lines else "(no output)"

    def close(self):
        self.pipe.close()
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        self.log.close()


def _named(arrays, names):
    if len(names) == len(arrays):
        return dict(zip(names, arrays, strict=True))
    return {str(i): array for i, array in enumerate(arrays)}


def _ported_file(path, root, out_root):
    return os.path.join(out_root, os.path.relpath(os.path.realpath(path), root))


def verify_pipelines(pipelines, entry, ported_entry, argv, root, out_root, files,
                     timeout=VERIFY_TIMEOUT):
    """Compare what each ported pipeline of ``pipelines`` (the pipeline pass's
    :class:`~tf1compat.port.pipelines.PortedPipeline`) delivers in the original
    program ``entry`` and in its port ``ported_entry`` (the program's folder ``root``
    ported to ``out_root``; ``files``: the program's files), both run with ``argv``.
    Returns a :class:`Verification`."""
    checked = [p for p in pipelines if not p.like and p.iterator is not None]
    skipped = [p for p in pipelines if p.like]
    if not checked:
        return Verification([], skipped)
    run = (entry, ported_entry, argv, root, out_root, files, timeout)
    checks = _run_both(checked, _harness.EPOCHS, *run)
    # an endless pipeline of little data may give no whole batch in a few epochs: its
    # batches each take several (a batch of 8 from 2 files)
    empty = [c.pipeline for c in checks if c.error is None and not c.report.legacy_count
             and not c.report.reference_count and c.pipeline.endless]
    if empty:
        epochs = 2 * max(p.batch_size or 1 for p in empty)
        again = {id(c.pipeline): c for c in _run_both(empty, epochs, *run)}
        checks = [again.get(id(c.pipeline), c) for c in checks]
    return Verification(checks, skipped)


def _run_both(checked, epochs, entry, ported_entry, argv, root, out_root, files, timeout):
    """Run both sides once, endless pipelines bounded to ``epochs``; the checks."""
    sites, port_sites = [], []
    for pipeline in checked:
        # a line that made several pipelines (a batching helper's) made them in the same
        # order on both sides: its batching calls, then its port's iterators
        sites.append(pipeline.observed_at)
        occurrence = pipeline.observed_at[2]
        path, index = pipeline.iterator
        ported = _ported_file(path, root, out_root)
        with open(ported, encoding="utf-8") as f:
            port_sites.append((os.path.realpath(ported), iterator_line(f.read(), index),
                               occurrence))
    ported_files = [_ported_file(f, root, out_root) for f in files]
    with tempfile.TemporaryDirectory(prefix="tf1compat-verify-") as folder:
        original = _Side([sys.executable, "-m", "tf1compat.port.pipelines.observe"], {
            "entry": os.fspath(entry), "argv": list(argv), "files": [os.fspath(f) for f in files],
            "verify": {"sites": sites, "epochs": epochs}}, folder, "original", os.getcwd(),
            env=keras2_environment(os.environ))   # run mode's Keras 2, as `tf1compat run`
        port = _Side([sys.executable, "-c", _RUN_HARNESS, _harness.__file__], {
            "entry": os.fspath(ported_entry), "argv": list(argv), "files": ported_files,
            "sites": port_sites, "epochs": epochs, "random_module": op_types.RANDOM_OP_MODULE,
            "random_functions": op_types.RANDOM_OP_FUNCTIONS,
            "session": list(op_types.SESSION_RUN), "unfinalize": op_types.GRAPH_UNFINALIZE,
            "iterator_outputs": sorted(op_types.ITERATOR_OUTPUTS)},
            folder, "port", os.getcwd())
        watchdog = threading.Timer(timeout, lambda: [side.process.kill()
                                                     for side in (original, port)])
        watchdog.start()
        try:
            return [_check(index, pipeline, original, port)
                    for index, pipeline in enumerate(checked)]
        finally:
            watchdog.cancel()
            original.close()
            port.close()


# The port side: the harness run as a script with nothing of tf1compat on sys.path
# before the program's own folder (python -c puts the current folder first, as it is).
_RUN_HARNESS = ("import runpy, sys; path = sys.argv.pop(1); "
                "runpy.run_path(path, run_name='__main__')")


def _check(index, pipeline, original, port):
    try:
        seeds = original.seed(index), port.seed(index)
    except RuntimeError as e:
        original.drain(index)
        port.drain(index)
        return PipelineCheck(pipeline, error=str(e))
    ordered = pipeline.deterministic and not pipeline.seeded
    names = list(pipeline.names)
    try:
        report = compare(original.batches(index, names), port.batches(index, names),
                         ordered=ordered, legacy_batched=pipeline.batched,
                         reference_batched=pipeline.batched)
    except RuntimeError as e:
        original.drain(index)
        port.drain(index)
        return PipelineCheck(pipeline, error=str(e))
    mismatch = structure_mismatch(original.structures.get(index), port.structures.get(index))
    if mismatch is not None:
        return PipelineCheck(pipeline, report, mismatch=mismatch)
    if not report.legacy_count and not report.reference_count:
        return PipelineCheck(pipeline, report, note=(
            "no example on either side: nothing was compared (the data gives no whole batch)"))
    passed, note = _verdict(report, pipeline, _unordered_because(pipeline, seeds))
    return PipelineCheck(pipeline, report, passed=passed, note=note)


def _unordered_because(pipeline, seeds):
    """Why the two sides' batches of ``pipeline`` come in orders that cannot match
    (``seeds``: the graph seeds each side reported)."""
    if not pipeline.seeded:
        return "TF1's order changes from run to run (shuffling or threads)"
    if NO_SEED not in seeds and seeds[0] != seeds[1]:
        return (f"the two runs were seeded differently (original graph seed {seeds[0]}, "
                f"port graph seed {seeds[1]}): the program seeds TensorFlow anew on each "
                "run, so its shuffled order is another on each run")
    return ("its order comes from a seeded shuffle, and for the same seeds tf.data's "
            "shuffle gives another order than TF1's RandomShuffle")


def _shown_structure(structure):
    if isinstance(structure, dict):
        return "{" + ", ".join(f"{key!r}: {_shown_structure(value)}"
                               for key, value in structure.items()) + "}"
    if isinstance(structure, tuple):
        return "(" + ", ".join(map(_shown_structure, structure)) + ("," if len(structure) == 1
                                                                     else "") + ")"
    return "array"


def structure_mismatch(original, port):
    """What differs between the structures (:func:`._harness.structure`) of the two
    sides' batches, or None when they are the same or a side gave no batch."""
    if original is None or port is None or original == port:
        return None
    return (f"the original's batches are {_shown_structure(original)}, the port's "
            f"{_shown_structure(port)}: the program reads them differently")


def _verdict(report, pipeline, unordered_because):
    """Whether ``report`` shows the same data, and what was compared
    (``unordered_because``: why it was compared as multisets, when it was)."""
    if report.ordered:
        return report.equal, "in order: TF1 delivered one order every run"
    note = f"as multisets: {unordered_because}"
    if report.equal:
        return True, note
    extra_legacy = sum(max(0, d.legacy_copies - d.reference_copies) for d in report.diffs)
    extra_reference = sum(max(0, d.reference_copies - d.legacy_copies) for d in report.diffs)
    if (pipeline.drop_remainder and report.legacy_count == report.reference_count
            and 0 < extra_legacy == extra_reference < (pipeline.batch_size or 0)):
        return True, (f"{note}; the last partial batch, dropped at random on both sides, "
                      f"leaves {extra_legacy} example(s) on each side unmatched")
    return False, note
