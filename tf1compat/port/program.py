"""``port_program``: a TF1 program written again, for TensorFlow 2, into a new folder.

The program is a file or a folder, as ``tf1compat run`` and ``check`` take them. Of
a file, the program is that file (the entry) and the modules of its folder it
imports, directly or not; of a folder, every Python file in it (the entry is its
``__main__.py``, if any). The port is the program's whole folder copied to ``out``
with those files ported, so it runs as the original did.

Each file goes first through the pipeline pass (:mod:`tf1compat.port.pipelines`:
queue input pipelines to tf.data, found from the graph's op tracebacks, so it
reads the source as the user wrote it), then through the fixers
(:mod:`tf1compat.port.fixers`) in order, each a LibCST codemod that changes only
the nodes it must. The folder is written next to ``out`` and renamed into place:
an interrupted port leaves no half-written ``out``.
"""

import ast
import dataclasses
import difflib
import os
import pathlib
import shutil
import tempfile

import libcst as cst
from libcst.codemod import CodemodContext

from tf1compat.errors import display_path
from tf1compat.port.findings import Finding
from tf1compat.port.fixers import ENTRY_FIXERS, FILE_FIXERS
from tf1compat.port.fixers._base import PortedFile
from tf1compat.port.pipelines import rewrite_pipelines
from tf1compat.port.report import FileDiff, PortReport
from tf1compat.port.support import (
    SLIM_REPAIR,
    SUPPORT_PACKAGE,
    package_source,
    slim_repair_source,
    support_source,
)
from tf1compat.v1.check import iter_program_files

__all__ = ["port_program", "fix_source"]


def _local_module(root, name):
    """The file of module ``name`` in the program's folder ``root``, or None."""
    base = root.joinpath(*name.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _imported_files(path, root):
    """The files under ``root`` that ``path``'s imports name (not parsed: none)."""
    try:
        tree = ast.parse(path.read_bytes(), filename=os.fspath(path))
    except (SyntaxError, ValueError, OSError):
        return []
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            package = path.parent.relative_to(root).parts if node.level else ()
            package = package[:len(package) - node.level + 1] if node.level else ()
            module = [*package, *(node.module.split(".") if node.module else ())]
            names.append(".".join(module))
            names += [".".join([*module, alias.name]) for alias in node.names]
    found = (_local_module(root, name) for name in names if name)
    return [file for file in found if file is not None]


def _is_support(path, root):
    """True for a file of the support package an earlier port wrote."""
    return path.relative_to(root).parts[0] == SUPPORT_PACKAGE


def _program_files(entry, root):
    """The entry and the files of ``root`` it imports, directly or not, in order."""
    files, pending = [entry], [entry]
    while pending:
        for file in _imported_files(pending.pop(), root):
            if file not in files and not _is_support(file, root):
                files.append(file)
                pending.append(file)
    return files


def _line_map(original, current):
    """A function from the lines of ``current`` to the lines of ``original`` they
    come from (a line moved and indented again: where it was; an inserted line: the
    original line after it)."""
    if original == current:
        return lambda line: line
    old_lines, new_lines = original.splitlines(), current.splitlines()
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    mapping = {}
    for _, start, end, new_start, new_end in matcher.get_opcodes():
        unused = {}   # stripped text -> its lines in the block's original, in order
        for index in range(start, end):
            unused.setdefault(old_lines[index].strip(), []).append(index + 1)
        for offset in range(new_end - new_start):
            same = unused.get(new_lines[new_start + offset].strip())
            mapping[new_start + offset + 1] = same.pop(0) if same else \
                start + min(offset, max(end - start - 1, 0)) + 1
    return lambda line: mapping.get(line, line)


@dataclasses.dataclass
class _Program:
    source: pathlib.Path
    root: pathlib.Path
    entry: pathlib.Path | None
    files: list

    def shown(self, path):
        """``path`` as the report names it: under the source as the user gave it."""
        if path == self.entry and not self.source.is_dir():
            return display_path(self.source)
        base = self.source if self.source.is_dir() else os.path.dirname(self.source)
        return display_path(os.path.join(base, path.relative_to(self.root)))


def _find_program(source):
    source = pathlib.Path(source)
    if source.is_dir():
        root = source.resolve()
        entry = root / "__main__.py" if (root / "__main__.py").is_file() else None
        files = [pathlib.Path(f) for f in iter_program_files(root)
                 if f.endswith(".py") and not _is_support(pathlib.Path(f), root)]
    elif source.is_file():
        entry = source.resolve()
        root = entry.parent
        files = _program_files(entry, root)
    else:
        raise FileNotFoundError(2, f"{display_path(source)} does not exist", os.fspath(source))
    return _Program(source, root, entry, files)


def _check_out(program, out, overwrite):
    out = pathlib.Path(out).resolve()
    if out == program.root or program.root.is_relative_to(out):
        raise ValueError(f"--out {display_path(out)} would write over the program in "
                         f"{display_path(program.root)}; choose a folder outside it")
    if out.exists() and not out.is_dir():
        raise ValueError(f"--out {display_path(out)} is a file; expected a folder")
    if out.is_dir() and any(out.iterdir()) and not overwrite:
        raise ValueError(f"--out {display_path(out)} exists and is not empty; pass "
                         "--overwrite to replace it")
    return out


def _uses_tensorflow(sources):
    return any("tensorflow" in text for text in sources.values())


def fix_source(text, ported, fixers=FILE_FIXERS, original=None):
    """``text`` (one file's source) through ``fixers`` (classes) in order, reporting
    into ``ported`` (a :class:`~tf1compat.port.fixers._base.PortedFile`) at the lines
    of ``original`` (the file as the user wrote it, when ``text`` is that file
    already changed; default ``text``); raises ``libcst.ParserSyntaxError`` when it
    is not Python 3."""
    original = text if original is None else original
    for fixer_class in fixers:
        module = cst.parse_module(text)
        ported.line_of = _line_map(original, text)
        fixer = fixer_class(CodemodContext(filename=ported.path), ported)
        text = fixer.transform_module(module).code
    return text


def _port_sources(program, sources, originals, findings):
    """Run the fixers over ``sources`` (path -> text, ``originals`` as the user wrote
    them); returns the ported texts and the :class:`PortedFile` of each."""
    ported = {}
    graph_program = _uses_tensorflow(sources)
    results = {}
    for path, text in sources.items():
        file = PortedFile(program.shown(path), is_entry=graph_program and path == program.entry)
        try:
            results[path] = fix_source(text, file, FILE_FIXERS, originals[path])
        except cst.ParserSyntaxError as e:
            findings.append(Finding(file.path, e.raw_line, "(the file)",
                                    f"cannot parse as Python 3: {e.message}"))
            results[path] = text
        ported[path] = file
    requirements = set().union(*(file.requirements for file in ported.values()))
    if program.entry in results and ported[program.entry].is_entry:
        entry = ported[program.entry]
        entry.requirements |= requirements
        try:
            results[program.entry] = fix_source(results[program.entry], entry, ENTRY_FIXERS,
                                                originals[program.entry])
        except cst.ParserSyntaxError:
            pass  # reported above
    return results, ported


def _support_modules(ported):
    """``{relative path: text}`` of the support modules the fixers asked for."""
    wanted = {}
    for file in ported.values():
        for module, name in file.support:
            wanted.setdefault(module, set()).add(name)
    if not wanted:
        return {}
    modules = {f"{SUPPORT_PACKAGE}/__init__.py": package_source()}
    for module, names in sorted(wanted.items()):
        modules[f"{SUPPORT_PACKAGE}/{module.rpartition('.')[2]}.py"] = \
            slim_repair_source() if module == SLIM_REPAIR else support_source(module, names)
    return modules


def _write(program, out, texts, support):
    """Copy the program's folder with ``texts`` (path -> text) in place of those
    files, and the ``support`` modules (relative path -> text), into a new folder
    beside ``out``, then move it to ``out``."""
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = pathlib.Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        for name in iter_program_files(program.root):
            path = pathlib.Path(name)
            if path.resolve().is_relative_to(out) or path.suffix == ".pyc":
                continue
            target = staging / path.relative_to(program.root)
            target.parent.mkdir(parents=True, exist_ok=True)
            if path in texts:
                target.write_text(texts[path], encoding="utf-8", newline="")
            else:
                shutil.copy2(path, target)
        for relative, text in support.items():
            target = staging / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
        if out.exists():
            old = pathlib.Path(tempfile.mkdtemp(prefix=f".{out.name}.old.", dir=out.parent))
            out.rename(old / out.name)
            staging.rename(out)
            shutil.rmtree(old)
        else:
            staging.rename(out)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


def port_program(source, out, *, argv=(), overwrite=False):
    """Port the TF1 program ``source`` (a file or a folder) to TensorFlow 2 in the
    folder ``out``; returns a :class:`~tf1compat.port.report.PortReport`.

    ``argv`` are the program's arguments, for the pipeline pass, which runs the
    program to find its pipelines. ``out`` must not be, or hold, the program's
    folder; an existing ``out`` that is not empty is replaced only with
    ``overwrite``. A missing ``source`` raises ``FileNotFoundError``, a bad
    ``out`` ``ValueError``."""
    program = _find_program(source)
    shown_out = display_path(out)
    out = _check_out(program, out, overwrite)
    program.files = [path for path in program.files if not path.resolve().is_relative_to(out)]
    originals, findings, pipelines, pipeline_changes = {}, [], (), []
    for path in program.files:
        raw = path.read_bytes()
        try:
            originals[path] = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            findings.append(Finding(program.shown(path), 0, "(the file)",
                                    f"not UTF-8 text ({e.reason} at byte {e.start}): copied "
                                    "as it is"))
    sources = dict(originals)
    if sources:
        rewrite = rewrite_pipelines(sources, program.entry, list(argv))
        sources.update(rewrite.sources)
        findings += rewrite.findings
        pipelines = tuple(rewrite.pipelines)
        pipeline_changes = rewrite.changes
    texts, ported = _port_sources(program, sources, originals, findings)
    support = _support_modules(ported)
    _write(program, out, texts, support)
    changes = sorted((*pipeline_changes,
                      *(change for file in ported.values() for change in file.changes)),
                     key=lambda change: (change.path, change.line))
    findings += [finding for file in ported.values() for finding in file.findings]
    requirements = set().union(*(file.requirements for file in ported.values()))
    files = tuple(FileDiff(path.relative_to(program.root).as_posix(), originals[path],
                           texts[path]) for path in originals)
    return PortReport(
        source=display_path(source), out=shown_out, files=files,
        changes=tuple(changes), findings=tuple(findings), pipelines=pipelines,
        support=tuple(sorted(support)), requirements=tuple(sorted(requirements)),
        root=program.root, out_root=out, entry=program.entry,
        program_files=tuple(program.files))
