"""The values end of a pipeline in the program's source:
``tf.train.slice_input_producer(tensor_list, ...)``, whose slices the program takes
one at a time, written again as a dataset of those slices (:class:`ValuesPart`).

The producer is in the function ``F`` that joins it with its batching call; its
slices are assigned to one name (``input_queue``, indexed or passed on) or unpacked
(``image_path, label = ...``), which become the map function's parameters.
"""

import libcst as cst

from tf1compat.port.pipelines import codegen
from tf1compat.port.pipelines.syntax import assignment

__all__ = ["ValuesPart"]

NAME = "slice_input_producer"


class ValuesPart:
    """``slice_input_producer`` at ``site``, a statement of ``F`` assigning its slices."""

    forced_first = False   # the example's code starts after the producer's statement

    def __init__(self, porter, pipeline, shape, site):
        self.porter, self.pipeline, self.shape, self.site = porter, pipeline, shape, site
        self.source = site.source
        self.call = porter.call_at(site, (NAME,), NAME)
        self.producer = porter.bound(self.call, NAME, site)
        targets = assignment(site.statement)
        if targets is None or targets[1] is not self.call:
            raise porter.fail(site, NAME, "its slices are not assigned to names")
        target = targets[0]
        if isinstance(target, cst.Name):
            self.names, self.packed = [target.value], True
        elif isinstance(target, (cst.Tuple, cst.List)) and all(
                isinstance(element.value, cst.Name) for element in target.elements):
            self.names, self.packed = [e.value.value for e in target.elements], False
        else:
            raise porter.fail(site, NAME, "its slices are not assigned to names")
        tensors = self.producer["tensor_list"]
        if not isinstance(tensors, (cst.List, cst.Tuple)) or not tensors.elements or any(
                isinstance(element, cst.StarredElement) for element in tensors.elements):
            raise porter.fail(site, NAME, "its tensor_list is not a list written in the call")
        self.tensors = [element.value for element in tensors.elements]

    def parameters(self):
        """The map function's parameters: the slices' names (``*input_queue`` for one
        name holding them all: tf.data passes a tuple's items one by one)."""
        return [f"*{self.names[0]}"] if self.packed else list(self.names)

    def taint(self):
        """Names holding the example right after the producer's statement."""
        return set(self.names)

    def start(self):
        return self.site.statement

    def write_records(self, chooser, tf, edits):
        """Write the dataset of the slices in the producer's place; returns its name."""
        source, producer = self.source, self.producer
        code = lambda node: None if node is None else source.code(node).strip()  # noqa: E731
        dataset = codegen.choose_dataset_name(chooser, self.names[0] if self.packed else None)
        tensors = [code(tensor) for tensor in self.tensors]
        slices = f"({', '.join(tensors)}{',' if len(tensors) == 1 else ''})"
        first = self.tensors[0]
        count = (str(len(first.elements)) if isinstance(first, (cst.List, cst.Tuple))
                 else f"{tf}.shape({tensors[0]}, out_type={tf}.int64)[0]")
        unit = edits.indent_of(self.site.statement)
        lines = codegen.file_list_statements(
            tf, dataset, slices, count, codegen.shuffle_code(code(producer["shuffle"])),
            code(producer["seed"]), codegen.epochs_code(code(producer["num_epochs"])), unit)
        near = self.site.statement
        edits.replace(near, edits.generated_blocks(lines, unit, near))
        return dataset
