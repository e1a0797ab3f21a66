"""The reading end of a tf-slim pipeline: ``DatasetDataProvider(dataset, ...)`` and
its ``provider.get(items)``, written again as tf.data over the same slim ``Dataset``
(:class:`ProviderPart`).

The provider's files (``dataset.data_sources``), shuffling, epochs, readers and
common queue become ``list_files``, ``interleave`` over the reader's tf.data twin
and ``shuffle``; ``get`` becomes the decoder's own ``decode`` of each record, the
first statement of the map function, so slim's decoding is what it was.
"""

import libcst as cst

from tf1compat.port.pipelines.syntax import assignment, call_tail, calls_in, name_uses

__all__ = ["ProviderPart", "is_provider"]

_READER_DATASETS = {"TFRecordReaderV2": "TFRecordDataset",
                    "FixedLengthRecordReaderV2": "FixedLengthRecordDataset",
                    "TextLineReaderV2": "TextLineDataset"}
_DEFAULTS = {"num_readers": "1", "shuffle": "True", "num_epochs": None,
             "common_queue_min": "128"}


def is_provider(site):
    """Whether the statement at ``site`` makes a slim ``DatasetDataProvider``."""
    return any(call_tail(c) == "DatasetDataProvider" for c in calls_in(site.statement))


class ProviderPart:
    """A ``DatasetDataProvider`` made at ``site`` in ``F`` and its ``get`` there."""

    forced_first = True      # the get statement starts the example's code

    def __init__(self, porter, pipeline, shape, site):
        self.porter, self.pipeline, self.shape, self.site = porter, pipeline, shape, site
        self.source = source = site.source
        self.function = source.function_of(site.statement)
        self.call = porter.call_at(site, ("DatasetDataProvider",), "DatasetDataProvider")
        self.bound = porter.bound(self.call, "DatasetDataProvider", site)
        assigned = assignment(site.statement)
        if assigned is None or assigned[1] is not self.call or \
                not isinstance(assigned[0], cst.Name):
            raise porter.fail(site, "DatasetDataProvider", "the provider is not assigned to "
                              "one name")
        self.provider = assigned[0].value
        uses = name_uses(source, self.function, self.provider, exclude=site.statement)
        gets = [c for c in calls_in(self.function) if isinstance(c.func, cst.Attribute)
                and c.func.attr.value == "get" and isinstance(c.func.value, cst.Name)
                and c.func.value.value == self.provider]
        if len(gets) != 1 or len(uses) != 1 or not gets[0].args:
            raise porter.fail(site, "DatasetDataProvider", f"'{self.provider}' is used for "
                              "more than one get(items)")
        self.get = gets[0]
        self.get_statement = _statement_holding(source, self.get)
        items = source.code(self.get.args[0].value)
        if "record_key" in items:
            raise porter.fail(site, "DatasetDataProvider", "the item 'record_key' (the "
                              "reader's key) has no tf.data counterpart")
        if self.bound["dataset"] is None:
            raise porter.fail(site, "DatasetDataProvider", "no dataset given")
        reader = shape.read.settings["reader"] if shape.read is not None else None
        if reader not in _READER_DATASETS:
            raise porter.fail(site, "DatasetDataProvider", f"its reader ({reader}) is not "
                              "ported yet")
        self.reader = _READER_DATASETS[reader]
        self.record = None

    def parameters(self):
        return [self.record]

    def taint(self):
        return set()

    def start(self):
        return self.get_statement

    def write_records(self, chooser, tf, edits):
        """The records of the slim dataset's files, read and shuffled as the provider
        did; returns the dataset's name."""
        source, bound = self.source, self.bound
        code = lambda name: (source.code(bound[name]).strip()  # noqa: E731
                             if bound[name] is not None else _DEFAULTS.get(name))
        dataset = code("dataset")
        names = chooser.choose("filenames", "filename_dataset")
        records = chooser.choose("records", "examples", "data")
        self.record = chooser.choose("record", "serialized", "example")
        shuffle = code("shuffle")
        seed = f", seed={code('seed')}" if bound["seed"] is not None else ""
        epochs = code("num_epochs")
        repeat = "" if epochs == "1" else f".repeat({'' if epochs in (None, 'None') else epochs})"
        lines = [f"{names} = {tf}.data.Dataset.list_files({dataset}.data_sources, "
                 f"shuffle={shuffle}{seed}){repeat}"]
        arguments = ", ".join(f"{key}={value!r}" for key, value in
                              self.shape.read.settings["arguments"].items() if value)
        reader = f"{tf}.data.{self.reader}"
        read = (f"lambda filename: {reader}(filename, {arguments})" if arguments else reader)
        readers = code("num_readers")
        if readers == "1":
            lines.append(f"{records} = {names}.flat_map({read})" if arguments or
                         self.reader == "TextLineDataset" else f"{records} = {reader}({names})")
        else:
            lines.append(f"{records} = {names}.interleave({read}, cycle_length={readers})")
        if shuffle != "False":
            queue_min = code("common_queue_min")
            shuffled = f"{records}.shuffle({queue_min}{seed})"
            if shuffle == "True":
                lines.append(f"{records} = {shuffled}")
            else:
                indent = edits.indent_of(self.site.statement)
                lines.append(f"if {shuffle}:\n{indent}{records} = {shuffled}")
        edits.replace(self.site.statement, [edits.generated(line + "\n", self.site.statement)
                                            for line in lines])
        self.porter.rewritten_calls.add(self.porter.iterator_of(source, self.call)[:1] + (
            source.lines(self.call)[0],))
        decode = edits.parse_expression(
            f"{dataset}.decoder.decode({self.record}, {source.code(self.get.args[0].value)})")
        edits.replace_expression(self.get, decode)
        return records


def _statement_holding(source, node):
    statement = node
    while not isinstance(statement, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
        statement = source.parents[statement]
    return statement
