"""The reading end of a pipeline in the program's source: its producer, its reader
and the read, written again as the records dataset (:class:`ReadPart`).

The read is in the function ``F`` that joins it with what uses the example, or in a
helper ``F`` calls (``read_and_decode(filename_queue)``, the CIFAR-10 tutorial's
``read_cifar10``), which then takes the record instead of the queue.
"""

import libcst as cst

from tf1compat.port.pipelines import codegen
from tf1compat.port.pipelines.signatures import PRODUCERS, READERS
from tf1compat.port.pipelines.syntax import (
    assignment,
    call_tail,
    calls_in,
    innermost,
    name_uses,
    names_in,
    real_path,
    target_names,
)

__all__ = ["ReadPart"]


class ReadPart:
    """The producer, the reader and the read of a pipeline, in the function ``F``
    joining the read with what uses the example (``stack[0]``, at ``site``); the read
    is there or in a helper ``F`` calls (``stack[1]``)."""

    def __init__(self, porter, pipeline, shape, stack, site):
        self.porter, self.pipeline, self.shape = porter, pipeline, shape
        self.site = site                      # the statement of F reaching the read
        self.source = site.source
        self.function = self.source.function_of(site.statement)
        self.in_helper = len(stack) > 1
        self.read_site = porter.site(stack[-1], "reader.read") if self.in_helper else site
        self.read_call = porter.call_at(self.read_site, ("read",), "reader.read")
        self.read_statement = self.read_site.statement
        targets = assignment(self.read_statement)
        names = target_names(targets[0]) if targets else None
        if (targets is None or not isinstance(targets[0], (cst.Tuple, cst.List))
                or len(targets[0].elements) != 2
                or not isinstance(targets[0].elements[1].value, cst.Name)):
            raise porter.fail(self.read_site, "reader.read", "the read's result is not "
                              "assigned to two names (key, value)")
        self.key_target = targets[0].elements[0].value
        self.value_name = targets[0].elements[1].value.value
        self.key_name = names[0] if names and len(names) == 2 else None
        self.reader_kind = _reader_kind(shape.read.settings["reader"])
        self.key_used = shape.read.settings["with_keys"]
        if self.key_used and self.reader_kind != "WholeFileReader":
            raise porter.fail(self.read_site, "reader.read", "the reader's key "
                              "(file:record) is used; tf.data's readers give no keys")
        if self.key_used and self.in_helper:
            raise porter.fail(self.read_site, "reader.read", "the key of a read inside a "
                              "helper function is used")
        self._find_producer()
        self._find_reader()

    # -------------------------------------------------------- producer, reader

    def _find_producer(self):
        porter = self.porter
        frames = [innermost(op.stack) for op in self.shape.values.ops if op.stack]
        if not frames:
            raise porter.fail(self.read_site, "string_input_producer", "the file queue is "
                              "not made in the program's own files")
        site = porter.site(frames[0], "string_input_producer")
        if site.source is not self.source or \
                site.source.function_of(site.statement) is not self.function:
            raise porter.fail(site, "string_input_producer", "the file queue is made in "
                              "another function than the one reading it")
        self.producer_site = site
        self.producer_call = porter.call_at(site, PRODUCERS, "string_input_producer")
        if call_tail(self.producer_call) != "string_input_producer":
            raise porter.fail(site, call_tail(self.producer_call), "a reader reading from a "
                              "queue other than string_input_producer's")
        self.producer = porter.bound(self.producer_call, "string_input_producer", site)
        allowed = self.site.statement if self.in_helper else self.read_statement
        self.queue_name = None   # the producer called inline: reader.read(tf.train.s_i_p(...))
        if site.statement is allowed and self._inline_argument() is not None:
            return
        assigned = assignment(site.statement)
        if assigned is None or not isinstance(assigned[0], cst.Name) or \
                assigned[1] is not self.producer_call:
            raise porter.fail(site, "string_input_producer", "its queue is not assigned "
                              "to one name, nor given to the read (or the reading helper) "
                              "as it is made")
        self.queue_name = assigned[0].value
        uses = name_uses(self.source, self.function, self.queue_name,
                          exclude=site.statement)
        others = [node for node in uses if node not in names_in(self.source, allowed)]
        if others:
            line = self.source.lines(others[0])[0]
            raise porter.fail(site, "string_input_producer", f"its queue "
                              f"'{self.queue_name}' is also used at line {line}")

    def _inline_argument(self):
        """The argument of the read's call (or the reading helper's) that is the
        producer's call itself, or None."""
        if self.in_helper:
            calls = [c for c in calls_in(self.site.statement)
                     if any(a.value is self.producer_call for a in c.args)]
            call = calls[0] if calls else None
        else:
            call = self.read_call
        if call is None:
            return None
        return next((a for a in call.args if a.value is self.producer_call), None)

    def _find_reader(self):
        porter = self.porter
        record = self.pipeline.readers[0]
        frame = innermost(record.stack)
        self.reader_statement = None
        self.reader_arguments = None
        reader_function = self.read_site.source.function_of(self.read_statement)
        func = self.read_call.func
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Call):
            call = func.value    # tf.TFRecordReader().read(queue)
        else:
            site = porter.site(frame, self.reader_kind)
            if site.source is not self.read_site.source or \
                    site.source.function_of(site.statement) is not reader_function:
                raise porter.fail(site, self.reader_kind, "the reader is made in another "
                                  "function than the one reading with it")
            assigned = assignment(site.statement)
            call = porter.call_at(site, READERS, self.reader_kind)
            if assigned is None or assigned[1] is not call or \
                    not isinstance(assigned[0], cst.Name):
                raise porter.fail(site, self.reader_kind, "the reader is not assigned to "
                                  "one name")
            if not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name)
                    and func.value.value == assigned[0].value):
                raise porter.fail(self.read_site, "reader.read", "the read is not the "
                                  "reader's")
            uses = name_uses(site.source, reader_function, assigned[0].value,
                              exclude=site.statement)
            if any(node not in names_in(site.source, self.read_statement)
                   for node in uses):
                raise porter.fail(site, self.reader_kind, "the reader is used for more "
                                  "than this read")
            self.reader_statement = site.statement
        if self.in_helper:
            self.reader_arguments = _graph_reader_arguments(self.shape.read)
        else:
            bound = porter.bound(call, call_tail(call), self.site)
            self.reader_arguments = _source_reader_arguments(self.source, bound,
                                                             self.shape.read)
        if self.reader_arguments.get("hop_bytes") not in (None, "0", "None"):
            raise porter.fail(self.read_site, self.reader_kind, "hop_bytes (overlapping "
                              "records) has no tf.data reader")

    # -------------------------------------------------------- what it writes

    @property
    def forced_first(self):
        """Whether the statement reaching the read starts the example's code (a
        helper's call, which computes from the record)."""
        return self.in_helper

    def parameters(self):
        """The parameters of the map function: the record's name (and the file's)."""
        if self.key_used:
            return [self.key_name, self.value_name]
        return [self.value_name]

    def taint(self):
        """Names holding the example right after the read (in ``F``)."""
        if self.in_helper:
            return set()
        return set(self.parameters())

    def start(self):
        """The statement of ``F`` the example's code starts after (the read), or the
        one that starts it (the helper's call)."""
        return self.site.statement

    def write_records(self, chooser, tf, edits):
        """Write the records dataset where the program read its record; returns its name."""
        source, producer = self.source, self.producer
        dataset = codegen.choose_dataset_name(chooser, self.queue_name)
        self.dataset = dataset
        code = lambda node: None if node is None else source.code(node).strip()  # noqa: E731
        files = producer["string_tensor"]
        shuffle = (None if _single_file(files)
                   else codegen.shuffle_code(code(producer["shuffle"])))
        seed = code(producer["seed"])
        epochs = codegen.epochs_code(code(producer["num_epochs"]))
        listing = _glob_call(files)
        needs_names = (shuffle is not None or listing is not None or self.shape.readers > 1
                       or self.reader_kind == "WholeFileReader"
                       or (self.reader_kind == "TextLineReader"
                           and self.reader_arguments.get("skip_header_lines")))
        readers = None if self.shape.readers == 1 else str(self.shape.readers)
        lines = []
        if needs_names:
            names = chooser.choose(f"{codegen.prefix_of(dataset)}filenames", "filenames",
                                   "filename_dataset", "file_names")
            if listing is not None:
                shuffled = "True" if shuffle == "True" else (shuffle or "False")
                keywords = f", seed={seed}" if seed is not None and shuffle else ""
                first = (f"{names} = {tf}.data.Dataset.list_files({code(listing)}, "
                         f"shuffle={shuffled}{keywords})")
                lines.append(first + (f".repeat({epochs})" if epochs is not None else ""))
            else:
                listed = code(files)
                if shuffle is not None and not isinstance(files, (cst.Name, cst.List,
                                                                  cst.Tuple)):
                    # the list is named once, for the dataset and the shuffle's buffer
                    listed = chooser.choose("files", "file_list", "paths")
                    lines.append(f"{listed} = {code(files)}")
                lines += codegen.file_list_statements(
                    tf, names, listed, _count_code(tf, files, listed), shuffle, seed,
                    epochs, edits.indent_of(self.read_statement))
            records = codegen.reader_expression(tf, self.reader_kind, self.reader_arguments,
                                                names, True, readers, self.key_used)
            lines.append(f"{dataset} = {records}")
        else:
            records = codegen.reader_expression(tf, self.reader_kind, self.reader_arguments,
                                                code(files), False, readers, self.key_used)
            if epochs is not None:
                records += f".repeat({epochs})"
            lines.append(f"{dataset} = {records}")
        unit = edits.indent_of(self.read_statement)
        near = self.site.statement
        statements = edits.generated_blocks(lines, unit, near)
        if self.queue_name is not None:
            edits.remove(self.producer_site.statement)
        if self.in_helper:
            edits.insert_before(self.site.statement, statements)
            self._rewrite_helper()
        else:
            edits.replace(self.read_statement, statements)
            if self.reader_statement is not None:
                edits.remove(self.reader_statement)
        return dataset

    def _rewrite_helper(self):
        """The helper that read from the queue now takes the record."""
        porter, site = self.porter, self.read_site
        source = site.source
        helper = source.function_of(site.statement)
        queue_argument = self.read_call.args[0].value if self.read_call.args else None
        parameters = [p.name.value for p in helper.params.params]
        if not isinstance(queue_argument, cst.Name) or queue_argument.value not in parameters:
            raise porter.fail(site, "reader.read", "the helper does not read from the queue "
                              "it is given")
        uses = name_uses(source, helper, queue_argument.value, exclude=self.read_statement)
        if uses:
            raise porter.fail(site, "reader.read", f"'{queue_argument.value}' is used for "
                              "more than the read in the helper")
        key = (site.frame.file, helper.name.value)
        calls = porter.helper_calls(site.frame.file, helper)
        handled = self.pipeline_calls()
        porter.analogs += [c for c in calls if c not in handled]
        edits = porter.edits[site.frame.file]
        if key not in porter.rewritten_functions:
            renamed = [p.with_changes(name=cst.Name(self.value_name))
                       if p.name.value == queue_argument.value else p
                       for p in helper.params.params]
            edits.replace_parameters(helper, helper.params.with_changes(params=renamed))
            edits.remove(self.read_statement)
            if self.reader_statement is not None:
                edits.remove(self.reader_statement)
            porter.rewritten_functions[key] = "record"
        call = [c for c in calls_in(self.site.statement)
                if call_tail(c) == helper.name.value][0]
        arguments = [a.with_changes(value=cst.Name(self.value_name))
                     if a.value is self.producer_call or (isinstance(a.value, cst.Name)
                                                          and a.value.value == self.queue_name)
                     else a for a in call.args]
        porter.edits[real_path(self.source.path)].replace_expression(
            call, call.with_changes(args=arguments))

    def pipeline_calls(self):
        """The helper's call site this pipeline goes through: ``{(path, line)}``."""
        return {(self.source.path, self.site.frame.line)}


def _reader_kind(op_type):
    return {"TFRecordReaderV2": "TFRecordReader",
            "FixedLengthRecordReaderV2": "FixedLengthRecordReader",
            "TextLineReaderV2": "TextLineReader",
            "WholeFileReaderV2": "WholeFileReader"}.get(op_type, op_type)


def _graph_reader_arguments(read):
    """The reader's arguments as literals, from the graph (a reader made in a helper)."""
    arguments = {}
    for name, value in read.settings["arguments"].items():
        arguments[name] = repr(value)
    return arguments


def _source_reader_arguments(source, bound, read):
    """The reader's arguments as the program wrote them (the compression from the graph)."""
    arguments = {}
    for name in ("record_bytes", "header_bytes", "footer_bytes", "hop_bytes",
                 "skip_header_lines"):
        if bound[name] is not None:
            arguments[name] = source.code(bound[name]).strip()
    graph = read.settings["arguments"]
    if graph.get("compression_type"):
        arguments["compression_type"] = repr(graph["compression_type"])
    if graph.get("encoding"):
        arguments["encoding"] = repr(graph["encoding"])
    return arguments






def _glob_call(files):
    """The pattern of ``tf.train.match_filenames_once(pattern)``, else None."""
    if isinstance(files, cst.Call) and call_tail(files) == "match_filenames_once" and files.args:
        return files.args[0].value
    return None


def _single_file(files):
    """Whether ``files`` is a list or tuple literal of one name (nothing to shuffle)."""
    return isinstance(files, (cst.List, cst.Tuple)) and len(files.elements) == 1


# Calls that give a Python list of file names (the others may give a tensor).
_LISTING = frozenset({"Glob", "glob", "listdir", "sorted", "list"})


def _count_code(tf, files, name):
    """How many names the file list ``files`` (named ``name``) holds, as code."""
    if isinstance(files, (cst.List, cst.Tuple)):
        return str(len(files.elements))
    if isinstance(files, cst.Name) or (isinstance(files, cst.Call)
                                       and call_tail(files) in _LISTING):
        return f"len({name})"
    return f"{tf}.size({name}, out_type={tf}.int64)"

