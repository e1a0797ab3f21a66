"""What ``tf1compat port`` did to a program: :class:`PortReport`."""

import dataclasses
import difflib
import pathlib

__all__ = ["PortReport", "FileDiff"]


@dataclasses.dataclass(frozen=True)
class FileDiff:
    """A program file as the user wrote it (``before``) and as ported (``after``);
    ``path`` relative to the program's folder, with ``/``."""

    path: str
    before: str
    after: str

    def unified(self):
        """The unified diff, ``a/PATH`` against ``b/PATH`` (empty when unchanged)."""
        return "".join(difflib.unified_diff(
            self.before.splitlines(keepends=True), self.after.splitlines(keepends=True),
            f"a/{self.path}", f"b/{self.path}"))

    def counts(self):
        """``(lines added, lines removed)``."""
        added = removed = 0
        for line in self.unified().splitlines():
            if line.startswith("+") and not line.startswith("+++"):
                added += 1
            elif line.startswith("-") and not line.startswith("---"):
                removed += 1
        return added, removed


@dataclasses.dataclass(frozen=True)
class PortReport:
    """The port of one program into ``out``.

    ``changes`` are the edits made (:class:`~tf1compat.port.findings.Change`),
    ``findings`` the TF1 names left as they were and why
    (:class:`~tf1compat.port.findings.Finding`), ``pipelines`` what the pipeline
    pass ported, each at a file and line the user wrote; ``files`` the program's
    files (:class:`FileDiff`, changed or not), ``support`` the modules written
    beside them for the port to run without tf1compat, ``requirements`` the
    packages the ported program needs besides TensorFlow; ``root``, ``out_root``,
    ``entry`` and ``program_files`` where the program and its port are (``port
    --verify`` runs both)."""

    source: str
    out: str
    files: tuple
    changes: tuple
    findings: tuple
    pipelines: tuple = ()
    support: tuple = ()
    requirements: tuple = ()
    root: pathlib.Path | None = None           # the program's folder
    out_root: pathlib.Path | None = None       # where it was ported to
    entry: pathlib.Path | None = None          # the file that runs it (None: none)
    program_files: tuple = ()                  # its files that were ported

    @property
    def ported_entry(self):
        """The port's entry file, or None."""
        if self.entry is None:
            return None
        return self.out_root / self.entry.relative_to(self.root)

    @property
    def complete(self):
        """True when every TF1 name was ported (no finding)."""
        return not self.findings

    def lines(self):
        """The report: each change, pipeline and finding as a line, then what the
        ported program needs."""
        lines = [f"ported: {change}" for change in self.changes]
        lines += [f"pipeline: {pipeline}" for pipeline in self.pipelines]
        lines += [f"not ported: {finding}" for finding in self.findings]
        lines += [f"wrote {module} (the port's support module)" for module in self.support]
        if self.requirements:
            lines.append(f"the ported program needs TensorFlow 2 and: "
                         f"{', '.join(self.requirements)}")
        return lines

    def diff(self):
        """The unified diff of every changed file."""
        return "".join(file.unified() for file in self.files)

    def diffstat(self):
        """One line per changed file: ``PATH | +A -R``."""
        stats = []
        for file in self.files:
            added, removed = file.counts()
            if added or removed:
                stats.append(f"{file.path} | +{added} -{removed}")
        return stats

    def summary(self):
        """``N file(s) ported to OUT: C change(s), F finding(s)`` and what follows."""
        changed = sum(file.before != file.after for file in self.files)
        line = (f"{len(self.files)} file(s) ported to {self.out} ({changed} changed): "
                f"{len(self.changes)} change(s), {len(self.findings)} not ported")
        if self.findings:
            line += "; the parts not ported still need tf1compat (`tf1compat run`)"
        return line
