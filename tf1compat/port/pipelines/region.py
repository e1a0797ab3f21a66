"""The code between a pipeline's read and its batching call (:class:`Region`): the
statements computing the example move, as they are, into the map function; the
others stay where they were.
"""

import libcst as cst

from tf1compat.port.pipelines import codegen
from tf1compat.port.pipelines.source import names_of
from tf1compat.port.pipelines.syntax import (
    assignment,
    is_stateful,
    names_in,
    target_names,
)

__all__ = ["Region"]


class Region:
    """The statements of ``F`` between the read and the batching call (``end``; for
    examples fetched one at a time, up to the statement fetching them): those that
    compute the example move into the map function, the others stay."""

    def __init__(self, porter, read, end_site, stop_line=None, returned=()):
        self.porter, self.read, self.returned = porter, read, returned
        self.source = read.source
        start = read.start()
        self.items = []          # (statement, (with statements around it, outermost first))
        if end_site is not None:
            self._between(start, end_site.statement)
        else:
            self._to_the_end(start, stop_line)
        self._classify()

    # -------------------------------------------------------- which statements

    def _between(self, start, end):
        source = self.source
        chain_s, chain_e = source.ancestors(start), source.ancestors(end)
        i = 0
        while i < min(len(chain_s), len(chain_e)) and chain_s[i] is chain_e[i]:
            i += 1
        if i >= len(chain_s) or i >= len(chain_e):
            raise self.porter.fail(self.read.site, "reader.read", "the read and the "
                                   "batching call are in one statement")
        containers = chain_s[i:-1]
        if any(not isinstance(c, cst.With) for c in containers) or len(chain_e) > i + 1:
            raise self.porter.fail(self.read.site, "reader.read", "the read and the "
                                   "batching call are in different blocks (if, for, try)")
        if self.read.forced_first:
            self.items.append((start, tuple(containers)))
        inner = start
        for depth in range(len(containers) - 1, -1, -1):
            container = containers[depth]
            body = list(container.body.body)
            for statement in body[body.index(inner) + 1:]:
                self.items.append((statement, tuple(containers[:depth + 1])))
            inner = container
        _, body = source.block_of(chain_s[i])
        first, last = body.index(chain_s[i]), body.index(chain_e[i])
        self.items += [(s, ()) for s in body[first + 1:last]]
        self.end = end
        self.level = body           # the block holding both ends

    def _to_the_end(self, start, stop_line):
        source = self.source
        _, body = source.block_of(start)
        self.level = body
        index = body.index(start)
        if self.read.forced_first:
            self.items.append((start, ()))
        for statement in body[index + 1:]:
            first, last = source.lines(statement)
            if stop_line is not None and first <= stop_line <= last:
                break
            if _is_return(statement):
                break
            self.items.append((statement, ()))
        self.end = None

    # -------------------------------------------------------- which move

    def _map_op_lines(self):
        """``{line of F: stateful?}`` of the ops of the per-example map made in ``F``."""
        function = self.source.function_of(self.read.site.statement)
        name = function.name.value if isinstance(function, cst.FunctionDef) else "<module>"
        lines = {}
        shape = self.read.shape
        example_map = shape.example_map if shape is not None else None
        for op in (example_map.ops if example_map is not None else []):
            for frame in op.stack:
                if frame.file == self.read.site.frame.file and frame.function == name:
                    lines[frame.line] = lines.get(frame.line, False) or is_stateful(op.type)
        return lines

    def _classify(self):
        source = self.source
        tainted = set(self.read.taint())
        op_lines = self._map_op_lines()
        self.moved = []
        for index, (statement, containers) in enumerate(self.items):
            names = names_of(source, statement)
            first, last = source.lines(statement)
            stateful = any(flag for line, flag in op_lines.items() if first <= line <= last)
            forced = index == 0 and self.read.forced_first
            if forced or stateful or (names.reads & tainted):
                self.moved.append((statement, containers))
                tainted |= names.writes
        self.tainted = tainted

    def check(self):
        """Raise NotPortable when moving the example's statements changes the program."""
        source, porter = self.source, self.porter
        moved = [s for s, _ in self.moved]
        written = {}
        for statement in moved:
            for name in names_of(source, statement).writes:
                written.setdefault(name, statement)
        staying = [s for s, _ in self.items if s not in moved]
        for statement in staying:
            # moved, the example's code runs after this statement: it must not change
            # what the example's code before it read
            before = [m for m in moved if source.lines(m)[0] < source.lines(statement)[0]]
            reads = set().union(set(), *(names_of(source, m).reads for m in before))
            clash = names_of(source, statement).writes & reads
            if clash:
                name = sorted(clash)[0]
                raise porter.fail(self.read.site, "reader.read", f"line "
                                  f"{source.lines(statement)[0]} sets '{name}' after the "
                                  "example's code that reads it")
        if self.end is not None:
            self._check_after(written)

    def _check_after(self, written):
        """Names the example's statements set must not be read after them (but by the
        batching call's tensors)."""
        source, porter = self.source, self.porter
        excluded = set()
        for expression in self.returned:
            excluded |= set(names_in(source, expression))
        function = source.function_of(self.end)
        later = [self.end, *_statements_after(source, function, source.lines(self.end)[1])]
        written = dict(written)
        for statement in later:
            for head in _heads(statement):
                loads = names_of(source, head).reads & set(written)
                uses = [n for n in names_in(source, head)
                        if n.value in loads and n not in excluded]
                if uses:
                    name = uses[0].value
                    raise porter.fail(
                        self.read.site, "reader.read", f"'{name}', computed from the example "
                        f"at line {source.lines(written[name])[0]}, is used at line "
                        f"{source.lines(uses[0])[0]}, after the batching call")
            for name in names_of(source, statement).writes:   # set again: another value
                if not isinstance(statement, cst.BaseCompoundStatement) or \
                        isinstance(statement, cst.For):
                    written.pop(name, None)

    def outputs(self):
        """Names the example's statements set that the code after them reads (examples
        fetched one at a time), in the order they are first set."""
        source = self.source
        moved = [s for s, _ in self.moved]
        if not moved:
            return []
        written = []
        for statement in moved:
            for name in sorted(names_of(source, statement).writes):
                if name not in written:
                    written.append(name)
        after = source.lines(moved[0])[0]
        function = source.function_of(moved[0])
        reads = set()
        for statement in _statements_after(source, function, after):
            if statement in moved or any(statement in source.ancestors(m) for m in moved):
                continue
            reads |= names_of(source, statement).reads
        return [name for name in written if name in reads]

    # -------------------------------------------------------- writing

    def write_map(self, chooser, tf, edits, dataset, parameters, outputs, shape, after=(),
                  names=("parse", "parse_example", "parse_record"), with_batching=False):
        """Move the example's statements into ``def parse(parameters)`` returning
        ``outputs``, mapped over ``dataset`` (no map when the records are the examples;
        ``with_batching``: the batching statement maps it, after its shuffle), then
        ``after``; returns the statement they all follow. ``function`` is then the name
        of the function mapped (None: no map)."""
        moved = self.moved
        statements = list(after)
        self.function = None
        if not moved and outputs.rstrip(",") == ", ".join(parameters):
            anchor = self.items[-1][0] if self.items else self.read.start()
            edits.insert_after(anchor, statements)
            return anchor
        for statement, _ in moved:
            edits.move(statement)
        anchor = self._anchor()
        name = _the_one_call(self.source, moved, parameters, outputs, edits.expressions)
        defined = []
        if name is None:   # the statements, as they are, in a function of the record
            prefix = codegen.prefix_of(dataset).rstrip("_")
            name = chooser.choose(f"{names[0]}_{prefix}" if prefix else names[0], *names[1:])
            indent = edits.indent_of(anchor)
            definition = edits.parse_statement(
                f"def {name}({', '.join(parameters)}):\n{indent}pass\n")
            body = _nest(moved, 0) + [edits.parse_statement(f"return {outputs}\n")]
            body = [_blank_lines_unindented(statement, first=index == 0)
                    for index, statement in enumerate(body)]
            defined = [definition.with_changes(
                body=definition.body.with_changes(body=body, indent=indent),
                leading_lines=[cst.EmptyLine(indent=False)])]
        self.function = name
        sequential = shape is not None and shape.sequential_map
        mappings = []
        if not with_batching:
            mapping = edits.generated(
                codegen.map_statement(tf, dataset, name, sequential=sequential) + "\n", anchor)
            if defined:
                mapping = mapping.with_changes(leading_lines=[cst.EmptyLine(indent=False)])
            mappings.append(mapping)
        edits.insert_after(anchor, [*defined, *mappings, *statements])
        return anchor

    def _anchor(self):
        """The statement of the shared block after which the map function goes: the one
        holding the last statement that moves."""
        if not self.moved and not self.items:   # the example's ops all in the batching call
            return self.read.start()
        statement, containers = self.moved[-1] if self.moved else self.items[-1]
        return containers[0] if containers else statement


def _the_one_call(source, moved, parameters, outputs, replaced):
    """``f`` when the example's code is ``a, b = f(record)`` returning ``a, b``: then
    the dataset maps ``f`` itself (TensorFlow's ``read_and_decode`` ported);
    ``replaced``: the calls the rewrite changes (a helper's, to take the record)."""
    if len(moved) != 1 or moved[0][1]:
        return None
    assigned = assignment(moved[0][0])
    if assigned is None or not isinstance(assigned[1], cst.Call):
        return None
    call = replaced.get(assigned[1], assigned[1])   # the helper's call, given the record
    names = target_names(assigned[0])
    arguments = [a.value for a in call.args]
    if (not isinstance(call.func, (cst.Name, cst.Attribute)) or names is None
            or ", ".join(names) != outputs.rstrip(",") or len(arguments) != len(parameters)
            or any(not isinstance(a, cst.Name) or a.value != p or a_keyword
                   for a, p, a_keyword in zip(arguments, parameters,
                                              [x.keyword for x in call.args], strict=True))):
        return None
    return source.code(call.func).strip()


def _blank_lines_unindented(statement, first):
    """``statement``, moved into a block, with its blank lines left blank (no trailing
    indentation) and, as the block's first statement, without blank lines before it."""
    lines = [line.with_changes(indent=False) if line.comment is None else line
             for line in statement.leading_lines]
    if first:
        while lines and lines[0].comment is None:
            lines.pop(0)
    return statement.with_changes(leading_lines=lines)


def _heads(statement):
    """The parts of ``statement`` it runs itself (a compound statement's header, not
    its body, whose statements come one by one)."""
    if isinstance(statement, cst.SimpleStatementLine):
        return [statement]
    if isinstance(statement, cst.For):
        return [statement.iter]
    if isinstance(statement, (cst.If, cst.While)):
        return [statement.test]
    if isinstance(statement, cst.With):
        return [item.item for item in statement.items]
    return []


def _nest(items, depth):
    """The statements of ``items`` (statement, withs) inside copies of their ``with``s."""
    result, index = [], 0
    while index < len(items):
        statement, containers = items[index]
        if len(containers) <= depth:
            result.append(statement)
            index += 1
            continue
        container = containers[depth]
        run = []
        while index < len(items) and len(items[index][1]) > depth and \
                items[index][1][depth] is container:
            run.append(items[index])
            index += 1
        inner = _nest(run, depth + 1)
        inner[0] = _blank_lines_unindented(inner[0], first=True)
        result.append(container.with_changes(
            body=container.body.with_changes(body=inner), leading_lines=[]))
    return result


def _is_return(statement):
    return isinstance(statement, cst.SimpleStatementLine) and any(
        isinstance(small, cst.Return) for small in statement.body)


def _statements_after(source, function, line):
    """The statements of ``function`` (any depth) that start after ``line``."""
    body = function.body if isinstance(function, cst.Module) else function.body.body
    found = []

    def walk(statements):
        for statement in statements:
            if source.lines(statement)[0] > line:
                found.append(statement)
            elif isinstance(statement, cst.BaseCompoundStatement) and not isinstance(
                    statement, (cst.FunctionDef, cst.ClassDef)):
                walk(_inner_statements(statement))
    walk(body)
    return found


def _inner_statements(statement):
    blocks = [statement.body]
    for name in ("orelse", "finalbody"):
        other = getattr(statement, name, None)
        if other is not None:
            blocks.append(other.body if hasattr(other, "body") else other)
    for handler in getattr(statement, "handlers", ()):
        blocks.append(handler.body)
    result = []
    for block in blocks:
        inner = getattr(block, "body", block)
        if isinstance(inner, (list, tuple)):
            result.extend(inner)
    return result
