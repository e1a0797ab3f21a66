"""The fast paths' in-memory cache: a file's parsed rows, read once, served every epoch.

A fast path (:mod:`tf1compat.pipeline.fastpath`) over a producer that hands out its
files for more than one epoch reads, parses and decodes every record again each
epoch. When the parse (with ``decode``) is deterministic and the rows fit the
budget, :class:`EpochCache` does that work once: the first reading of each file
reads and parses it in chunks, as the fast path parses them, and keeps the parsed
chunks as they stream on (:mod:`tf1compat.pipeline.kept_chunks`: a tf.data
in-memory cache per file); each epoch takes the file names from the producer's
queue as before (its per-epoch shuffle included) and serves each file's kept
chunks, so shuffle buffers, batches and their order are those of the uncached fast
path.

Not cached: a producer that hands out its files once, a queue not made by
``string_input_producer`` over a list of files, a parse with ops that may give
other values on another call (random ops, ``py_func``), and rows estimated above the
budget before reading (rows: the files' sizes over the size of the first file's
first records; a row: its fixed-size values, and a record per string). While
filling, the bytes held are counted; a file whose chunk would pass the budget is
read and parsed every epoch (the same rows; the files kept before stay kept). A
damaged record fails where the uncached fast path fails.
"""

import itertools
import os
from collections.abc import Callable, Sequence
from typing import Any

from tf1compat._tf import tf, v1
from tf1compat._typing import Dataset, Tensor
from tf1compat.errors import CorruptRecordError
from tf1compat.pipeline.cache_budget import BUDGET_VARIABLE, size_text
from tf1compat.pipeline.graph_model.readers import ReaderSpec
from tf1compat.pipeline.graph_model.varying import varying_op_types
from tf1compat.pipeline.kept_chunks import KeptChunks, estimated_bytes, per_iteration

# the chunks of records of one file, by its name (a string tensor)
FileChunks = Callable[[Tensor], Dataset]
# a chunk of records to its parsed rows (a structure of tensors)
ParseChunk = Callable[[Any], Any]

__all__ = ["EpochCache", "plan_epoch_cache"]

_SAMPLE = 256          # records of the first file whose sizes give the estimate


def _estimate(reading: ReaderSpec, files: Sequence[str | bytes], specs: Sequence[Any]) -> int:
    """Bytes the rows of ``files`` will hold
    (:func:`~tf1compat.pipeline.kept_chunks.estimated_bytes`), from the first file's
    first records; ``specs``: the parsed chunks' specs."""
    sizes = [len(record) for _, _, record in itertools.islice(
        reading.iter_records(os.fsdecode(files[0])), _SAMPLE)]
    estimate: int = estimated_bytes(files, len(sizes), sum(sizes),
                                    [tf.TensorSpec(spec.shape[1:], spec.dtype) for spec in specs])
    return estimate


class EpochCache:
    """The rows of ``files`` parsed by ``parse_chunk`` from the chunks of records
    ``file_chunks(name)`` gives, held within ``budget`` bytes. :meth:`chunks` builds
    the dataset (tracing ``parse_chunk`` once, where the dataset calls it) or says why
    the rows are not kept after all; ``estimate`` is then what they are expected to
    hold."""

    def __init__(self, files: Sequence[str | bytes], reading: ReaderSpec,
                 file_chunks: FileChunks, parse_chunk: ParseChunk, budget: int) -> None:
        self.files, self.reading = files, reading
        self.file_chunks, self.parse_chunk, self.budget = file_chunks, parse_chunk, budget
        self.estimate = 0

    def text(self) -> str:
        count = f"{len(self.files)} file{'s' if len(self.files) != 1 else ''}"
        return (f"cached: {count} read once into memory, about {size_text(self.estimate)} "
                f"of a {size_text(self.budget)} budget")

    def _parse_function(self, traced: dict[str, Any]) -> Callable[[Any], tuple[Tensor, ...]]:
        """The parse of a chunk as flat tuples of columns, one tf.function for every
        file (traced once, where the first file's dataset calls it); ``traced`` gets
        the parse's structure and the graph it is traced in."""
        parse_chunk = self.parse_chunk

        def flat(chunk: Any) -> tuple[Tensor, ...]:
            parsed = parse_chunk(chunk)
            traced["graph"] = v1.get_default_graph()
            traced["structure"] = tf.nest.map_structure(
                lambda t: tf.TensorSpec(t.shape, t.dtype), parsed)
            return tuple(tf.nest.flatten(parsed))
        traced_once: Callable[[Any], tuple[Tensor, ...]] = tf.function(flat, autograph=False)
        return traced_once

    def _not_kept(self, traced: dict[str, Any]) -> str | None:
        """Why the traced parse's rows are not kept (they may vary, or pass the
        budget), or None; sets ``estimate``."""
        varying = varying_op_types(traced["graph"])
        if varying:
            return (f"the parse may give other values every epoch (stateful "
                    f"{', '.join(varying)})")
        try:
            self.estimate = _estimate(self.reading, self.files,
                                      tf.nest.flatten(traced["structure"]))
        except (CorruptRecordError, OSError) as e:   # the fast path raises it when it runs
            return f"its size cannot be estimated ({e})"
        if self.estimate > self.budget:
            return (f"about {size_text(self.estimate)} to keep, above the "
                    f"{size_text(self.budget)} budget")
        return None

    def chunks(self, names: Dataset, parallel_files: int,
               threads: int) -> tuple[Dataset | None, str | None]:
        """``(dataset, None)``: the parsed chunks (as ``parse_chunk`` gives them) of the
        files named by ``names`` (a dataset), ``parallel_files`` at once interleaved
        chunk by chunk: each file's first reading keeps its chunks as they stream,
        later readings give them (or read and parse the file again when it did not
        fit the budget). ``(None, why not)`` when the parse, traced there, may vary
        or its rows are estimated above the budget (the dataset is then left unused)."""
        traced: dict[str, Any] = {}

        @tf.autograph.experimental.do_not_convert
        def unflattened(*columns: Tensor) -> Any:
            return tf.nest.pack_sequence_as(traced["structure"], list(columns))

        parsed = self._parse_function(traced)

        def iteration() -> Dataset:
            store = KeptChunks(self.files, lambda filename: self.file_chunks(filename).map(
                parsed, num_parallel_calls=threads, deterministic=True), self.budget)

            @tf.autograph.experimental.do_not_convert
            def per_file(filename: Tensor) -> Dataset:
                return store.chunks(filename).map(unflattened)

            if parallel_files == 1:
                return names.flat_map(per_file)
            return names.interleave(per_file, cycle_length=parallel_files,
                                    num_parallel_calls=parallel_files, deterministic=True)
        dataset = per_iteration(iteration)
        why = self._not_kept(traced)
        return (None, why) if why else (dataset, None)


def plan_epoch_cache(files: Sequence[str | bytes] | None, num_epochs: int | None, budget: int,
                     reading: ReaderSpec, file_chunks: FileChunks,
                     parse_chunk: ParseChunk) -> tuple[EpochCache | None, str | None]:
    """``(EpochCache, None)`` for a fast path reading ``files`` (None: unknown) for
    ``num_epochs`` with ``reading`` (a ReaderSpec), or ``(None, why not)``; what the
    parse gives is checked when :meth:`EpochCache.chunks` traces it."""
    if not budget:
        return None, f"caching is off ({BUDGET_VARIABLE}=off or cache=False)"
    if files is None:
        return None, ("the files are not known while the graph is built (they are for "
                      "string_input_producer of a list of files)")
    if num_epochs == 1:
        return None, "the files are read once (1 epoch)"
    return EpochCache(files, reading, file_chunks, parse_chunk, budget), None
