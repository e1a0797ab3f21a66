"""One observed queue pipeline rewritten as tf.data in the program's source.

The graph says what the pipeline is (:class:`~tf1compat.port.pipelines.observed.Pipeline`:
its plan, and the program lines behind its producer, reader, read, per-example
ops and batching call); the source says how to write it. :class:`Porter` finds
those lines, then:

- the producer and the reader become the records dataset, where the program read
  its record (``dataset = tf.data.TFRecordDataset(files)``, files shuffled and
  repeated as the producer did);
- the statements between the read and the batching call that compute the example
  (they read the record, directly or through names it flows into) move, as they
  are, into a function ``parse`` mapped over the records; the others stay where
  they were;
- the batching call becomes ``shuffle``/``batch``/``prefetch`` (with the ``map``
  after the ``shuffle`` where the plan shuffles the records first) and is replaced
  by the iterator's ``get_next()``, so the code after it is untouched.

A read inside a helper (``read_and_decode(filename_queue)``) makes the helper
take the record; a batching call inside a helper
(``_generate_image_and_label_batch(image, label, ...)``) makes it take the
dataset (and the map function, where the plan maps after the shuffle buffer).
What cannot be written faithfully raises :class:`NotPortable` naming the line and
why; that pipeline is left as it was.
"""

import dataclasses
import re

import libcst as cst

from tf1compat.port.pipelines import codegen
from tf1compat.port.pipelines.batch_part import BatchPart, PrefetchPart
from tf1compat.port.pipelines.edits import Conflict, FileEdits
from tf1compat.port.pipelines.observed import Frame, OpRecord, Pipeline, Step
from tf1compat.port.pipelines.provider_part import ProviderPart, is_provider
from tf1compat.port.pipelines.read_part import ReadPart
from tf1compat.port.pipelines.region import Region
from tf1compat.port.pipelines.signatures import (
    BATCHING,
    ArgumentsNotBound,
    bind,
    dotted,
)
from tf1compat.port.pipelines.source import SourceFile, names_of
from tf1compat.port.pipelines.syntax import (
    Site,
    api_name,
    assignment,
    call_tail,
    calls_in,
    common_invocation,
    innermost,
    real_path,
    shown_path,
    statement_of,
)
from tf1compat.port.pipelines.values_part import NAME as VALUES_NAME
from tf1compat.port.pipelines.values_part import ValuesPart

__all__ = ["NotPortable", "PortedPipeline", "Porter", "iterator_line"]

_ITERATOR = re.compile(r"make_one_shot_iterator\(")


def _position(text, offset):
    """``(line, column)`` of ``offset`` in ``text``."""
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1)


def iterator_line(text, index):
    """The line of the ``index``-th ``make_one_shot_iterator(`` of ``text``."""
    matches = list(_ITERATOR.finditer(text))
    return _position(text, matches[index].start())[0] if index < len(matches) else None


class NotPortable(Exception):
    """A pipeline the rewrite leaves as it was: ``path``, ``line``, ``name`` (the TF1
    call) and ``why``."""

    def __init__(self, path, line, name, why):
        super().__init__(f"{path}:{line}: {name}: {why}")
        self.path, self.line, self.name, self.why = path, line, name, why


@dataclasses.dataclass
class PortedPipeline:
    """A pipeline the rewrite wrote as tf.data: where its batching call (or, for
    examples fetched one at a time, its read) was, what it is (``text``, the plan),
    whether TF1 delivered one order every run (``deterministic``), whether that order
    comes from a seeded shuffle (``seeded``), and the names of what it delivers
    (``names``)."""

    path: str
    line: int
    api: str
    text: str
    deterministic: bool
    names: list
    like: str | None = None    # ported like the pipeline there (the program did not run it)
    batched: bool = True
    batch_size: int | None = None
    drop_remainder: bool = False
    iterator_at: tuple | None = None   # (file, position in the original) of its get_next
    iterator: tuple | None = None      # (path, n): the n-th make_one_shot_iterator( there
    notes: list = dataclasses.field(default_factory=list)
    endless: bool = False              # its files repeat forever (TF1's default)
    observed_at: tuple | None = None   # (file, line, occurrence) of its call in the graph's
    #                                    traceback (Pipeline.occurrence)
    seeded: bool = False               # its order comes from a seeded shuffle

    def __str__(self):
        where = f"{shown_path(self.path)}:{self.line}: {self.api} -> tf.data"
        notes = "".join(f"; {note}" for note in self.notes)
        if self.like:
            return (f"{where}, written like the pipeline at {self.like} (the program did "
                    f"not run this one, so it is not verified){notes}")
        return f"{where}: {self.text}{notes}"


@dataclasses.dataclass
class _Shape:
    """The parts of a plan the rewrite writes, read from its steps."""

    values: object = None
    read: object = None
    readers: int = 1
    example_map: object = None
    shuffle: object = None
    batch: object = None
    batch_maps: list = dataclasses.field(default_factory=list)

    @property
    def sequential_map(self):
        """Whether the per-example map runs in order: random ops TF1 ran on one thread
        draw in step (ops sharing a seed stay paired)."""
        settings = self.example_map.settings if self.example_map is not None else {}
        return bool(settings.get("stateful")) and settings.get("threads", 1) == 1

    @property
    def shuffle_first(self):
        """Whether the plan runs the per-example map after the batching call's shuffle
        buffer (:func:`~tf1compat.migrate.lowering.plan.shuffle_first`)."""
        return self.example_map is not None and bool(
            self.example_map.settings.get("after_shuffle"))


def _shape(pipeline):
    shape = _Shape()
    for step in pipeline.plan:
        if step.kind == "values":
            shape.values = step
        elif step.kind == "read":
            shape.read = step
        elif step.kind == "interleave":
            inner = [s for s in step.steps[0] if s.kind == "read"]
            shape.read, shape.readers = (inner[0] if inner else None), step.settings["count"]
        elif step.kind == "map" and shape.batch is None:
            if not step.settings["selection"] or step.settings["unbatch"]:
                if shape.example_map is not None:
                    raise ValueError("two per-example maps")
                shape.example_map = step
        elif step.kind == "map":
            shape.batch_maps.append(step)
        elif step.kind == "shuffle" and shape.batch is None:
            shape.shuffle = step
        elif step.kind == "batch":
            shape.batch = step
        elif step.kind in ("prefetch",):
            continue
        else:
            raise ValueError(f"a {step.kind} step")
    return shape


class Porter:
    """Rewrites observed pipelines in ``sources`` (``{path: text}``); ``edits`` holds
    the changes per file until :meth:`new_sources`."""

    def __init__(self, sources, observed=()):
        self.observed = list(observed)  # every pipeline the program ran
        self.sources = {}
        self.paths = {}
        for path, text in sources.items():
            real = real_path(path)
            self.sources[real] = SourceFile(path, text)
            self.paths[real] = path
        self.edits = {real: FileEdits(source) for real, source in self.sources.items()}
        self.rewritten_functions = {}   # (file, def name) -> what it takes now
        self.choosers = {}
        self.analogs = []               # [(path, line)]: other calls of a rewritten helper
        self.ported_sites = {}          # (file, line) of a pipeline's read in F -> Ported
        self.analog_pipelines = []      # pipelines ported like an observed one
        self.rewritten_calls = set()    # (file, line) of each batching call replaced
        self.iterators = {}             # file -> [(line, column)] of each get_next written
        self.ported = []
        # whether a batching helper may take the map function, mapping it after its
        # shuffle (False: its callers map, before the shuffle, in TF1's order)
        self.maps_in_helpers = True

    # ------------------------------------------------------------ helpers

    def site(self, frame, what):
        source = self.sources.get(frame.file)
        if source is None:
            raise NotPortable(frame.file, frame.line, what, "not one of the program's files")
        statement = source.statement_at(frame.line)
        if statement is None:
            raise NotPortable(source.path, frame.line, what, "no statement at this line")
        return Site(source, frame, statement)

    def fail(self, site_or_frame, name, why):
        if isinstance(site_or_frame, Site):
            return NotPortable(site_or_frame.source.path, site_or_frame.frame.line, name, why)
        frame = site_or_frame
        path = self.sources[frame.file].path if frame.file in self.sources else frame.file
        return NotPortable(path, frame.line, name, why)

    def call_at(self, site, tails, what):
        """The call named one of ``tails`` at the site's line (the innermost)."""
        line = site.frame.line
        calls = [c for c in calls_in(site.statement) if call_tail(c) in tails
                 and site.source.lines(c)[0] <= line <= site.source.lines(c)[1]]
        if not calls:
            calls = [c for c in calls_in(site.statement) if call_tail(c) in tails]
        if not calls:
            raise self.fail(site, what, f"no call of {' or '.join(tails)} found here")
        return min(calls, key=lambda c: site.source.lines(c)[1] - site.source.lines(c)[0])

    def tf_name(self, source):
        """The name the file imports TensorFlow as."""
        for statement in source.module.body:
            if not isinstance(statement, cst.SimpleStatementLine):
                continue
            for small in statement.body:
                if isinstance(small, cst.Import):
                    for alias in small.names:
                        if dotted(alias.name) == "tensorflow":
                            return alias.asname.name.value if alias.asname else "tensorflow"
        return "tf"

    def chooser(self, source, function):
        key = (source.path, id(function))
        if key not in self.choosers:
            taken = set()
            for node in (source.module, function):
                for statement in (node.body if isinstance(node, cst.Module)
                                  else node.body.body):
                    taken |= names_of(source, statement).reads
                    taken |= names_of(source, statement).writes
            if isinstance(function, cst.FunctionDef):
                taken |= {p.name.value for p in function.params.params}
            self.choosers[key] = codegen.NameChooser(taken)
        return self.choosers[key]

    def bound(self, call, function, site):
        try:
            return bind(function, call)
        except ArgumentsNotBound as e:
            raise self.fail(site, function, str(e)) from None

    def note_iterator(self, source, node, at_end=False):
        """Record that ``node`` (a batching call; ``at_end``: the statement a
        ``get_next()`` goes after) gives way to an iterator; returns ``(file, position)``."""
        key = self.iterator_of(source, node, at_end)
        self.iterators.setdefault(key[0], []).append(key[1])
        self.rewritten_calls.add((key[0], key[1][0]))
        return key

    def iterator_of(self, source, node, at_end=False):
        position = source.positions[node].end if at_end else source.positions[node].start
        return real_path(source.path), (position.line, position.column)

    def helper_calls(self, file, helper):
        """``[(path, line)]`` of every call of the function ``helper`` (defined in
        ``file``) in the program: ``helper(...)`` in its file, ``module.helper(...)``
        elsewhere."""
        name, found = helper.name.value, []
        for real, source in self.sources.items():
            for call in calls_in(source.module):
                func = call.func
                if real == file and isinstance(func, cst.Name) and func.value == name:
                    found.append((source.path, source.lines(call)[0]))
                elif isinstance(func, cst.Attribute) and func.attr.value == name and \
                        isinstance(func.value, cst.Name) and real != file:
                    found.append((source.path, source.lines(call)[0]))
        return found

    # ------------------------------------------------------------ entry

    def port(self, pipeline):
        """Rewrite ``pipeline``; returns its :class:`PortedPipeline` or raises
        :class:`NotPortable` (nothing of it is changed then)."""
        where = innermost(pipeline.error_stack) or innermost(pipeline.stack)
        name = api_name(pipeline.api)
        if pipeline.error:
            raise self.fail(where, name, f"cannot be ported: {pipeline.error}")
        if not pipeline.stack:
            raise NotPortable("?", 0, name, "not called from the program's own files")
        for op in pipeline.side_ops:
            frame = innermost(op.stack) or where
            raise self.fail(frame, name, f"op '{op.name}' ({op.type}) uses an example "
                            "outside the pipeline; tf.data gives examples only to the "
                            "iterator")
        try:
            shape = _shape(pipeline)
        except ValueError as e:
            raise self.fail(where, name, f"its plan has {e}, which port does not write: "
                            f"{pipeline.text}") from None
        site = self._read_site_key(pipeline)
        if site in self.ported_sites:     # ported already, like another pipeline
            ported = self.ported_sites[site]
            self.analog_pipelines.remove(ported)
            ported.text, ported.deterministic = pipeline.text, pipeline.deterministic
            ported.seeded = pipeline.seeded
            ported.like = None
            call = innermost(pipeline.stack)
            ported.observed_at = (call.file, call.line, pipeline.occurrence)
            return ported
        saved = {real: _snapshot(edits) for real, edits in self.edits.items()}
        saved_state = (dict(self.rewritten_functions), list(self.analog_pipelines),
                       dict(self.ported_sites))
        self.analogs = []
        try:
            ported = self._port(pipeline, shape)
            self._port_analogs(pipeline, shape, ported)
            return ported
        except (NotPortable, Conflict) as e:
            for real, snapshot in saved.items():
                _restore(self.edits[real], snapshot)
            self.rewritten_functions, self.analog_pipelines, self.ported_sites = saved_state
            if shape.shuffle_first and self.maps_in_helpers:
                # a batching helper that maps after its shuffle may not serve its other
                # callers (one whose records are its examples has no map to pass): the
                # callers map instead, before the shuffle
                self.maps_in_helpers = False
                try:
                    ported = self.port(pipeline)
                finally:
                    self.maps_in_helpers = True
                why = e.why if isinstance(e, NotPortable) else str(e)
                ported.notes.append("mapped before the shuffle, in TF1's order: mapping "
                                    f"after it, in the batching helper, failed ({why})")
                return ported
            if isinstance(e, Conflict):
                raise self.fail(where, name, str(e)) from None
            raise

    def _summary_notes(self, pipeline):
        """What the report says of the summaries of one example the map now makes."""
        notes = []
        for op in pipeline.summaries:
            frame = innermost(op.stack)
            where = f"{shown_path(frame.file)}:{frame.line}" if frame else op.name
            note = (f"the summary of one example made at {where} ({op.type}) is no longer "
                    "written: TensorFlow collects no summaries from a tf.data function")
            if note not in notes:
                notes.append(note)
        return notes

    def _read_site_key(self, pipeline):
        """``(file, line)`` of the statement of ``F`` reaching the pipeline's read."""
        if not pipeline.reads or pipeline.api == "fetch":
            return None
        k = common_invocation(pipeline.reads[0].stack, pipeline.stack)
        if k is None:
            return None
        frame = pipeline.reads[0].stack[k]
        return (frame.file, frame.line)

    def _port_analogs(self, template, shape, ported):
        """Port the other calls of the helpers ``template``'s rewrite changed, like it
        (they take the record or the dataset now): a call the program ran, as the
        pipeline it built there; one it did not run, as ``template`` was made."""
        done = set()
        while self.analogs:
            path, line = self.analogs.pop(0)
            key = (real_path(path), line)
            if key in done:
                continue
            done.add(key)
            run = self._run_through(key)
            if run is not None:
                if self._read_site_key(run) in self.ported_sites:
                    continue
                try:
                    self.analog_pipelines.append(self._port(run, _shape(run)))
                except NotPortable as e:
                    raise NotPortable(e.path, e.line, e.name, (
                        f"{e.why} (a pipeline the program built through a helper that port "
                        f"changes for the pipeline at {ported.path}:{ported.line})")) from None
                continue
            try:
                analog = self._analog(template, path, line)
                if self._read_site_key(analog) in self.ported_sites:
                    continue
                result = self._port(analog, _shape(analog))
            except NotPortable as e:
                raise NotPortable(e.path, e.line, e.name, (
                    f"{e.why} (this code was not run by the program; it calls a helper that "
                    f"port changes for the pipeline at {ported.path}:{ported.line})")) from None
            result.like = f"{shown_path(ported.path)}:{ported.line}"
            call = analog.stack[0]           # where the code not run calls the helper
            result.path, result.line = self.sources[call.file].path, call.line
            if len(analog.stack) > 1:
                result.api = f"{analog.stack[1].function}()"
            self.analog_pipelines.append(result)

    def _run_through(self, call):
        """The pipeline the program built through the call at ``call`` (file, line) of
        a helper (its batching or its reading), or None when it did not run that call."""
        for pipeline in self.observed:
            stacks = [pipeline.stack, *(read.stack for read in pipeline.reads)]
            if not pipeline.error and any(
                    (frame.file, frame.line) == call for stack in stacks for frame in stack):
                return pipeline
        return None

    def _analog(self, template, path, line):
        """A :class:`Pipeline` record for the code around the call at ``path``:``line``
        of a helper of ``template``'s, made from the source as ``template`` was made."""
        real = real_path(path)
        source = self.sources[real]
        statement = source.statement_at(line)
        function = source.function_of(statement)
        if not isinstance(function, cst.FunctionDef):
            raise NotPortable(path, line, "(helper)", "called outside a function")
        name = function.name.value
        read_stack, batch_stack = template.reads[0].stack, template.stack
        k = common_invocation(read_stack, batch_stack)
        read_helper = read_stack[k + 1] if len(read_stack) > k + 1 else None
        batch_helper = batch_stack[k + 1] if len(batch_stack) > k + 1 else None
        statements = [s for s in source.statements() if source.function_of(s) is function]

        def first_calling(tails, after=0, what="call"):
            for candidate in statements:
                if source.lines(candidate)[0] >= after and any(
                        call_tail(c) in tails for c in calls_in(candidate)
                        if source.function_of(statement_of(source, c)) is function):
                    return candidate
            raise NotPortable(path, line, what, f"no {what} found in {name}()")

        def frame(node):
            return Frame(real, source.lines(node)[0], name)

        if read_helper is not None:
            read_statement = first_calling((read_helper.function,), what=read_helper.function)
            queue_call = [c for c in calls_in(read_statement)
                          if call_tail(c) == read_helper.function][0]
            reads = (frame(read_statement), read_helper)
            readers = (template.readers[0].stack[-1],)
        else:
            read_statement = first_calling(("read",), what="reader.read")
            queue_call = [c for c in calls_in(read_statement) if call_tail(c) == "read"][0]
            reads = (frame(read_statement),)
            receiver = queue_call.func.value
            reader_name = receiver.value if isinstance(receiver, cst.Name) else None
            reader_statement = next((s for s in statements if assignment(s) and isinstance(
                assignment(s)[0], cst.Name) and assignment(s)[0].value == reader_name),
                read_statement)
            readers = (frame(reader_statement),)
        queue = queue_call.args[0].value if queue_call.args else None
        producer_statement = next((s for s in statements if assignment(s) and isinstance(
            assignment(s)[0], cst.Name) and isinstance(queue, cst.Name)
            and assignment(s)[0].value == queue.value), None)
        if producer_statement is None:
            raise NotPortable(path, line, "string_input_producer", f"the queue read in "
                              f"{name}() is not made there")
        after = source.lines(read_statement)[0]
        if batch_helper is not None:
            batch_statement = first_calling((batch_helper.function,), after,
                                            batch_helper.function)
            batch = (frame(batch_statement), batch_helper)
            api = template.api
        else:
            batch_statement = first_calling(BATCHING, after, "tf.train.batch")
            batch = (frame(batch_statement),)
            api = "train." + next(call_tail(c) for c in calls_in(batch_statement)
                                  if call_tail(c) in BATCHING)
        plan = []
        for step in template.plan:
            if step.kind == "values":
                step = Step("values", step.text, step.settings,
                            [OpRecord("producer", "FIFOQueueV2", (frame(producer_statement),))])
            elif step.kind == "map" and not step.settings["selection"]:
                step = Step("map", step.text, {**step.settings, "stateful": []})
            plan.append(step)
        return Pipeline(api, batch, template.structure, plan=plan, text=template.text,
                        deterministic=False, reads=[OpRecord("read", "ReaderReadV2", reads)],
                        readers=[OpRecord("reader", "ReaderV2", readers)])

    def new_sources(self):
        """``{path: new text}`` of the files the rewrite changed; each ported pipeline's
        ``iterator`` then says which ``make_one_shot_iterator(`` of its file is its own."""
        for ported in self.ported + self.analog_pipelines:
            if ported.iterator_at is None:
                continue
            real, position = ported.iterator_at
            text = self.sources[real].text
            existing = [_position(text, m.start()) for m in _ITERATOR.finditer(text)]
            order = sorted(existing + self.iterators.get(real, []))
            ported.iterator = (self.paths[real], order.index(position))
        return {self.paths[real]: edits.apply() for real, edits in self.edits.items()
                if edits.changed}

    # ------------------------------------------------------------ the shapes

    def _port(self, pipeline, shape):
        name = api_name(pipeline.api)
        if shape.read is None:
            return self._port_values(pipeline, shape)
        read_stack = pipeline.reads[0].stack if pipeline.reads else ()
        if len({innermost(read.stack) for read in pipeline.reads}) != 1:
            raise self.fail(innermost(pipeline.stack), name, f"{len(pipeline.reads)} reads "
                            "feed it (batch_join of several readers): not ported yet")
        if pipeline.api == "fetch":
            self._check_own_read(pipeline, read_stack)
            return self._port_fetched(pipeline, shape, read_stack)
        return self._port_batched(pipeline, shape, read_stack)

    def _check_own_read(self, pipeline, read_stack):
        """Raise NotPortable when the read of examples fetched one at a time also feeds
        a batching call: moving the read into a dataset would take it from that batch."""
        reads = {read.name for read in pipeline.reads}
        for other in self.observed:
            if other is not pipeline and other.api != "fetch" and other.stack and \
                    reads & {read.name for read in other.reads}:
                call = innermost(other.stack)
                raise self.fail(read_stack[-1], "reader.read", "its examples are fetched "
                                f"beside the batch of the same read ({api_name(other.api)} at "
                                f"{shown_path(self.sources[call.file].path)}:{call.line}); "
                                "tf.data gives one reader's examples to one iterator")

    def _port_batched(self, pipeline, shape, read_stack):
        name = api_name(pipeline.api)
        prefetched = pipeline.api == "prefetch_queue"
        batch_stack = pipeline.batch_stack if prefetched else pipeline.stack
        if not batch_stack:
            raise self.fail(innermost(pipeline.stack), name, "it does not hold the batches "
                            "of one batching call")
        k = common_invocation(read_stack, batch_stack)
        if k is None:
            raise self.fail(innermost(batch_stack), name, "the read and the batching "
                            "call are not in one function call")
        read_frame, batch_frame = read_stack[k], batch_stack[k]
        read_site = self.site(read_frame, "read")
        batch_site = self.site(batch_frame, name)
        if len(read_stack) > k + 2 or len(batch_stack) > k + 2:
            raise self.fail(batch_site, name, "the read or the batching call is more than "
                            "one function call away from the code joining them")
        if is_provider(read_site):
            read = ProviderPart(self, pipeline, shape, read_site)
        else:
            read = ReadPart(self, pipeline, shape, read_stack[k:], read_site)
        batch = BatchPart(self, pipeline, shape, batch_stack[k:], batch_site,
                          api=pipeline.batch_api if prefetched else None)
        prefetch = PrefetchPart(self, pipeline, batch, pipeline.stack) if prefetched else None
        return self._write(pipeline, shape, read, batch, batch_site, prefetch, read_frame)

    def _port_values(self, pipeline, shape):
        """Port a pipeline of ``slice_input_producer``'s slices batched in the function
        making them (:class:`ValuesPart`)."""
        name = api_name(pipeline.api)
        stacks = [op.stack for op in shape.values.ops if op.stack] if shape.values else []
        producer_site = self.site(innermost(stacks[0]), "producer") if stacks else None
        if producer_site is None or pipeline.api in ("prefetch_queue", "fetch") or not any(
                call_tail(c) == VALUES_NAME for c in calls_in(producer_site.statement)):
            raise self.fail(innermost(pipeline.stack), name, "a pipeline with no reader is "
                            "ported from slice_input_producer's slices only (not from "
                            "input_producer, range_input_producer or values the program "
                            "enqueues, nor into a prefetch_queue) yet")
        producer_stack, batch_stack = stacks[0], pipeline.stack
        k = common_invocation(producer_stack, batch_stack)
        if k is None or len(producer_stack) != k + 1 or len(batch_stack) > k + 2:
            raise self.fail(producer_site, VALUES_NAME, "the producer and the batching call "
                            "are not in one function (or the batching call more than one "
                            "helper call away)")
        batch_site = self.site(batch_stack[k], name)
        values = ValuesPart(self, pipeline, shape, producer_site)
        batch = BatchPart(self, pipeline, shape, batch_stack[k:], batch_site)
        return self._write(pipeline, shape, values, batch, batch_site, None, producer_stack[k])

    def _write(self, pipeline, shape, read, batch, batch_site, prefetch, read_frame):
        """Write ``pipeline`` from its parts: the records (``read``, at ``read_frame``),
        the map of the example's statements, the batching (``prefetch`` too, or None)."""
        name = api_name(pipeline.api)
        read_site = read.site
        region = Region(self, read, batch_site, returned=batch.examples())
        region.check()
        source, tf = read_site.source, self.tf_name(read_site.source)
        edits = self.edits[real_path(source.path)]
        chooser = self.chooser(source, source.function_of(read_site.statement))
        dataset = read.write_records(chooser, tf, edits)
        outputs = batch.tensors_code(source)
        # the map goes with the batching call, after its shuffle, where the plan says so
        # (a batching helper port rewrote already maps, or not, for every caller)
        helper_maps = batch.helper_maps()
        if helper_maps is None:
            shuffle_first = shape.shuffle_first and (self.maps_in_helpers or
                                                     not batch.in_helper)
        else:
            shuffle_first = helper_maps
        region.write_map(chooser, tf, edits, dataset, read.parameters(), outputs, shape,
                         with_batching=shuffle_first)
        mapped = region.function if shuffle_first else None
        if shuffle_first and mapped is None:
            raise self.fail(batch.call_site, batch.api, "its helper maps the function it is "
                            "given, and this pipeline's records are its examples")
        if prefetch is not None:
            iterator = prefetch.write(tf, dataset, edits, chooser, mapped)
        else:
            iterator = batch.write(tf, dataset, edits, mapped)
        call = innermost(pipeline.stack)    # the batching call (or prefetch_queue) itself
        node = prefetch.call if prefetch is not None else batch.call
        source_of_call = prefetch.source if prefetch is not None else batch.call_site.source
        ported = PortedPipeline(self.sources[call.file].path, source_of_call.lines(node)[0],
                                name, pipeline.text, pipeline.deterministic, batch.names(),
                                iterator_at=iterator, notes=self._summary_notes(pipeline),
                                observed_at=(call.file, call.line, pipeline.occurrence),
                                seeded=pipeline.seeded,
                                **_batching(shape))
        self.ported.append(ported)
        self.ported_sites[(read_frame.file, read_frame.line)] = ported
        return ported

    def _port_fetched(self, pipeline, shape, read_stack):
        name = "reader.read"
        read_site = self.site(read_stack[-1], name)
        read = ReadPart(self, pipeline, shape, read_stack[-1:], read_site)
        stop = pipeline.stack
        depth = len(read_stack) - 1
        stop_line = (stop[depth].line if len(stop) > depth and stop[:depth] == read_stack[:depth]
                     and stop[depth].function == read_stack[depth].function else None)
        region = Region(self, read, None, stop_line=stop_line)
        region.check()
        outputs = _in_fetch_order(region.outputs(), region, pipeline)
        if not outputs:
            raise self.fail(read_site, name, "nothing computed from the record is used "
                            "after the reading code")
        source, tf = read_site.source, self.tf_name(read_site.source)
        edits = self.edits[real_path(source.path)]
        chooser = self.chooser(source, source.function_of(read_site.statement))
        dataset = read.write_records(chooser, tf, edits)
        result = ", ".join(outputs)
        nxt = edits.generated(
            f"{result} = {codegen.iterator_next(tf, dataset)}\n", read.site.statement)
        anchor = region.write_map(chooser, tf, edits, dataset, read.parameters(), result,
                                  shape, after=[nxt])
        ported = PortedPipeline(source.path, source.lines(read.read_call)[0], name,
                                pipeline.text, pipeline.deterministic, list(outputs),
                                observed_at=(read_site.frame.file, read_site.frame.line, 0),
                                iterator_at=self.note_iterator(source, anchor, at_end=True),
                                seeded=pipeline.seeded,
                                **_batching(shape))
        self.ported.append(ported)
        return ported


def _batching(shape):
    """The batch's size and remainder rule, and whether the files repeat forever, for
    the verification."""
    endless = shape.values is not None and shape.values.settings["num_epochs"] is None
    if shape.batch is None:
        return {"batched": False, "endless": endless}
    settings = shape.batch.settings
    return {"batch_size": settings["batch_size"], "endless": endless,
            "drop_remainder": settings["drop_remainder"]}


def _in_fetch_order(outputs, region, pipeline):
    """``outputs`` in the order the program fetched them (each fetched op matched to
    the name whose statement made it), the others after."""
    source = region.source
    writers = {}
    for statement, _ in region.moved:
        for name in names_of(source, statement).writes:
            writers.setdefault(name, []).append(statement)
    ordered = []
    for op in pipeline.fetched:
        frame = innermost(op.stack)
        if frame is None:
            continue
        for name in outputs:
            if name not in ordered and any(
                    source.lines(s)[0] <= frame.line <= source.lines(s)[1]
                    for s in writers.get(name, ())):
                ordered.append(name)
                break
    unmatched = [name for name in outputs if name not in ordered]
    if len(ordered) + len(unmatched) == len(pipeline.fetched) and len(unmatched) == 1:
        position = next(i for i, op in enumerate(pipeline.fetched)
                        if not _matched(op, ordered, writers, source))
        ordered.insert(position, unmatched[0])
        return ordered
    return ordered + unmatched


def _matched(op, names, writers, source):
    frame = innermost(op.stack)
    return frame is not None and any(
        source.lines(s)[0] <= frame.line <= source.lines(s)[1]
        for name in names for s in writers.get(name, ()))


def _snapshot(edits):
    return (set(edits.removed), set(edits.moved), dict(edits.replaced),
            {k: list(v) for k, v in edits.before.items()},
            {k: list(v) for k, v in edits.after.items()}, dict(edits.expressions),
            dict(edits.parameters))


def _restore(edits, snapshot):
    (edits.removed, edits.moved, edits.replaced, edits.before, edits.after,
     edits.expressions, edits.parameters) = snapshot


