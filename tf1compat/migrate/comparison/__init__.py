"""Example-by-example comparison of a legacy queue pipeline with a reference one.

:func:`compare` unbatches both sides into single examples (see
:mod:`tf1compat.migrate.comparison.example_stream`), so batch sizes and remainder handling do not
matter, then checks them pairwise (``ordered=True``) or as multisets of content
fingerprints (``ordered=False``, for shuffled pipelines), and returns a
:class:`~tf1compat.migrate.comparison.report.ComparisonReport`.

Memory stays bounded by the stream, not the data: each example is reduced to a
64-bit fingerprint (8 bytes kept per example, for the missing/duplicated
analysis); ordered mode compares the pairs on the fly, unordered mode keeps
only the examples not yet matched by the other side (their data up to
``_MAX_PENDING_BYTES``). :func:`tf1compat.migrate.testing.assert_pipelines_equal` turns a
failed comparison into a :class:`~tf1compat.errors.PipelineMismatchError`.
"""

import array
import difflib
import importlib
import itertools
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from tf1compat._checks import check_flag, check_positive_int, check_tolerance
from tf1compat.errors import PipelineConfigError
from tf1compat.migrate.comparison.example_stream import (
    dtype_name,
    fingerprint,
    item_digest,
    iter_examples,
    opened,
    why_endless,
)
from tf1compat.migrate.comparison.report import (
    MAX_SHAPES,
    SHOWN_VALUES,
    SIDES,
    ComparisonReport,
    ExampleDiff,
    ItemSummary,
    Mismatch,
)

__all__ = ["compare", "compare_split", "resolve_function", "ComparisonReport"]

_MAX_PENDING_BYTES = 256 << 20     # unordered mode: data kept of unmatched examples
_MAX_CANDIDATES = 1000             # unmatched examples searched for the closest one
_DIFF_CHUNK = 1 << 16              # elements of a pair of items diffed at a time

Array = npt.NDArray[Any]
Example = dict[str, Array]        # one example's items by name (a path for nested ones)
Indices = tuple[int | None, int | None]     # an example's index on each side
_Tallies = tuple["_Tally", "_Tally"]


# ------------------------------------------------------------ pairwise diff

def _differing_elements(left: Array, right: Array, rtol: float, atol: float) -> Array:
    """Boolean mask of the elements of two same-shaped arrays that differ."""
    numeric = left.dtype.kind in "iufc" and right.dtype.kind in "iufc"
    if numeric and (rtol or atol):
        return ~np.isclose(left, right, rtol=rtol, atol=atol, equal_nan=True)
    different = np.asarray(left != right)
    if numeric and left.dtype.kind in "fc" and right.dtype.kind in "fc":
        different &= ~(np.isnan(left) & np.isnan(right))
    return different


def _iter_chunks(left: Array, right: Array) -> Iterator[tuple[int, Array, Array]]:
    """Flat chunks of two same-shaped arrays: ``(offset, left chunk, right chunk)``.
    Working a chunk at a time keeps the memory of a diff near that of one example."""
    left, right = left.reshape(-1), right.reshape(-1)  # views when contiguous
    for start in range(0, left.size, _DIFF_CHUNK):
        yield start, left[start:start + _DIFF_CHUNK], right[start:start + _DIFF_CHUNK]


def _values_differ(left: Array, right: Array, rtol: float, atol: float) -> bool:
    """Whether any element differs (stops at the first chunk that does)."""
    return any(_differing_elements(a, b, rtol, atol).any()
               for _, a, b in _iter_chunks(left, right))


def _value_diff(left: Array, right: Array, rtol: float,
                atol: float) -> tuple[int, float | None, list[int]]:
    """``(differing elements, max abs diff or None, flat indices of the first few)``."""
    count, max_abs = 0, None
    first: list[int] = []
    distance = left.dtype.kind in "iuf" and right.dtype.kind in "iuf"
    for start, a, b in _iter_chunks(left, right):
        different = _differing_elements(a, b, rtol, atol)
        count += int(np.count_nonzero(different))
        if len(first) < SHOWN_VALUES:
            first += (np.flatnonzero(different)[:SHOWN_VALUES - len(first)] + start).tolist()
        if distance and a.size:
            chunk_max = float(np.max(np.abs(a.astype(np.float64) - b.astype(np.float64))))
            max_abs = chunk_max if max_abs is None else max(max_abs, chunk_max)
    return count, max_abs, first


def _batched_hint(left_shape: tuple[int, ...], right_shape: tuple[int, ...]) -> str:
    if left_shape[1:] == right_shape:
        return "; the legacy side looks batched: pass legacy_batched=True"
    if right_shape[1:] == left_shape:
        return "; the reference side looks batched: pass reference_batched=True"
    return ""


def _quoted_values(left: Array, right: Array, flat_indices: Sequence[int]
                   ) -> tuple[tuple[tuple[int, ...], object, object], ...]:
    """``(position, legacy value, reference value)`` of elements given by flat index."""
    positions = [tuple(int(i) for i in np.unravel_index(index, left.shape))
                 for index in flat_indices]
    return tuple((position, _python_value(left[position]), _python_value(right[position]))
                 for position in positions)


def _python_value(element: object) -> object:
    """A numpy scalar as the Python number it holds; objects (bytes) unchanged."""
    return element.item() if isinstance(element, np.generic) else element


def _diff_item(name: str, left: Array, right: Array, indices: Indices, rtol: float,
               atol: float) -> Mismatch | None:
    """A Mismatch for item ``name`` of two examples, or None when it agrees."""
    if left.shape != right.shape:
        return Mismatch(*indices, name, "shape",
                        f"shape {left.shape} vs {right.shape}"
                        + _batched_hint(left.shape, right.shape))
    left_dtype, right_dtype = dtype_name(left), dtype_name(right)
    if left_dtype == right_dtype and not _values_differ(left, right, rtol, atol):
        return None
    differing, max_abs, first = _value_diff(left, right, rtol, atol)
    values = _quoted_values(left, right, first)
    count = f"{differing} of {left.size} values differ"
    if max_abs is not None:
        count += f", max abs diff {max_abs:g}"
    if left_dtype != right_dtype:
        detail = f"dtype {left_dtype} vs {right_dtype} ({count if values else 'values equal'})"
        return Mismatch(*indices, name, "dtype", detail, max_abs, values)
    return Mismatch(*indices, name, "value", count, max_abs, values)


def _examples_differ(legacy: Example, reference: Example, rtol: float, atol: float) -> bool:
    """Whether two examples differ, without describing how (cheaper than _diff_examples)."""
    return legacy.keys() != reference.keys() or any(
        legacy[name].shape != reference[name].shape
        or dtype_name(legacy[name]) != dtype_name(reference[name])
        or _values_differ(legacy[name], reference[name], rtol, atol) for name in legacy)


def _diff_examples(legacy: Example, reference: Example, indices: Indices, rtol: float = 0,
                   atol: float = 0) -> Mismatch | None:
    """The first difference between two examples as a Mismatch, or None."""
    if legacy.keys() != reference.keys():
        only_legacy = sorted(legacy.keys() - reference.keys())
        only_reference = sorted(reference.keys() - legacy.keys())
        return Mismatch(*indices, None, "items",
                        f"items only in legacy: {only_legacy}; "
                        f"only in reference: {only_reference}")
    for name in legacy:
        mismatch = _diff_item(name, legacy[name], reference[name], indices, rtol, atol)
        if mismatch is not None:
            return mismatch
    return None


# ------------------------------------------------------------ per-side tally

class _Tally:
    """What one side delivered: count, fingerprints, dtypes and shapes per item."""

    def __init__(self) -> None:
        self.count = 0
        self.fingerprints = array.array("q")
        self.dtypes: dict[str, dict[str, None]] = {}     # ordered sets: first seen first
        self.shapes: dict[str, dict[tuple[int, ...], None]] = {}

    def add(self, example: Example, fingerprint: int) -> None:
        self.count += 1
        self.fingerprints.append(fingerprint)
        for name, value in example.items():
            self.dtypes.setdefault(name, {}).setdefault(dtype_name(value))
            shapes = self.shapes.setdefault(name, {})
            if len(shapes) < MAX_SHAPES:
                shapes.setdefault(value.shape)


def _item_summaries(legacy: "_Tally", reference: "_Tally") -> tuple[ItemSummary, ...]:
    names = sorted(legacy.dtypes.keys() | reference.dtypes.keys())
    return tuple(ItemSummary(
        name, tuple(legacy.dtypes.get(name, ())), tuple(reference.dtypes.get(name, ())),
        tuple(legacy.shapes.get(name, ())), tuple(reference.shapes.get(name, ())))
        for name in names)


def _multiset_diffs(legacy_fingerprints: "array.array[int]",
                    reference_fingerprints: "array.array[int]") -> tuple[ExampleDiff, ...]:
    """ExampleDiffs of the fingerprints whose counts differ, by first occurrence."""
    counts = []
    for fingerprints in (legacy_fingerprints, reference_fingerprints):
        unique, first, copies = np.unique(np.frombuffer(fingerprints, dtype=np.int64),
                                          return_index=True, return_counts=True)
        copies_and_first = zip(copies.tolist(), first.tolist(), strict=True)
        counts.append(dict(zip(unique.tolist(), copies_and_first, strict=True)))
    legacy, reference = counts
    diffs = []
    for content in legacy.keys() | reference.keys():
        legacy_copies, legacy_index = legacy.get(content, (0, None))
        reference_copies, reference_index = reference.get(content, (0, None))
        if legacy_copies != reference_copies:
            diffs.append(ExampleDiff(content, legacy_copies, reference_copies,
                                     legacy_index, reference_index))
    return tuple(sorted(diffs, key=_first_occurrence))


def _first_occurrence(diff: ExampleDiff) -> int:
    return min(i for i in (diff.legacy_index, diff.reference_index) if i is not None)


# ------------------------------------------------------------ the two modes

def _compare_ordered(legacy_examples: Iterable[Example], reference_examples: Iterable[Example],
                     rtol: float, atol: float) -> tuple[_Tallies, Mismatch | None, int]:
    tallies = (_Tally(), _Tally())
    first_mismatch, mismatched = None, 0
    for index, (legacy, reference) in enumerate(
            itertools.zip_longest(legacy_examples, reference_examples)):
        if legacy is None or reference is None:
            side = 0 if reference is None else 1
            present = legacy if side == 0 else reference
            tallies[side].add(present, fingerprint(present))
            mismatched += 1
            first_mismatch = first_mismatch or _unmatched(side, index)
            continue
        # Only the first mismatch is described; later pairs are only checked.
        if first_mismatch is None:
            mismatch = _diff_examples(legacy, reference, (index, index), rtol, atol)
            differ = mismatch is not None
            first_mismatch = mismatch
        else:
            differ = _examples_differ(legacy, reference, rtol, atol)
        legacy_fingerprint = fingerprint(legacy)
        tallies[0].add(legacy, legacy_fingerprint)
        # Pairs equal within tolerance count as the same example in the multiset.
        tallies[1].add(reference, fingerprint(reference) if differ else legacy_fingerprint)
        mismatched += differ
    return tallies, first_mismatch, mismatched


def _unmatched(side: int, index: int) -> Mismatch:
    other = SIDES[1 - side]
    indices: Indices = (index, None) if side == 0 else (None, index)
    return Mismatch(*indices, None, "unmatched",
                    f"{SIDES[side]} example has no counterpart in {other}")


class _Pending:
    """Examples of one side not yet matched by the other (data kept within a budget)."""

    def __init__(self) -> None:
        self.by_fingerprint: dict[int, list[tuple[int, Example | None, int]]] = {}
        self.bytes = 0

    def add(self, fingerprint: int, index: int, example: Example) -> None:
        size = sum(value.nbytes for value in example.values())
        kept: Example | None
        if self.bytes + size <= _MAX_PENDING_BYTES:
            kept = {name: value.copy() for name, value in example.items()}
            self.bytes += size
        else:
            kept, size = None, 0
        self.by_fingerprint.setdefault(fingerprint, []).append((index, kept, size))

    def take(self, fingerprint: int) -> bool:
        """Remove one example with ``fingerprint``; False when there is none."""
        entries = self.by_fingerprint.get(fingerprint)
        if not entries:
            return False
        self.bytes -= entries.pop(0)[2]
        if not entries:
            del self.by_fingerprint[fingerprint]
        return True

    def entries(self) -> list[tuple[int, Example | None]]:
        """``(index, example or None)`` of what is left, by index."""
        return sorted(((index, example) for entries in self.by_fingerprint.values()
                       for index, example, _ in entries), key=lambda entry: entry[0])


def _compare_unordered(legacy_examples: Iterable[Example],
                       reference_examples: Iterable[Example]) -> tuple[_Tallies, Mismatch | None]:
    tallies = (_Tally(), _Tally())
    pending = (_Pending(), _Pending())
    for pair in itertools.zip_longest(legacy_examples, reference_examples):
        for side, example in enumerate(pair):
            if example is None:
                continue
            content = fingerprint(example)
            index = tallies[side].count
            tallies[side].add(example, content)
            if not pending[1 - side].take(content):
                pending[side].add(content, index, example)
    return tallies, _closest_mismatch(*(p.entries() for p in pending))


def _closest_mismatch(legacy_left: list[tuple[int, Example | None]],
                      reference_left: list[tuple[int, Example | None]]) -> Mismatch | None:
    """Diff the first unmatched example against the most similar one of the other side."""
    if not legacy_left and not reference_left:
        return None
    side = 0 if legacy_left and (not reference_left
                                 or legacy_left[0][0] <= reference_left[0][0]) else 1
    own, others = (legacy_left, reference_left)[side], (legacy_left, reference_left)[1 - side]
    index, example = own[0]
    candidates = [(i, e) for i, e in others if e is not None][:_MAX_CANDIDATES]
    if example is None or not candidates:
        return _unmatched(side, index)
    digests = {name: item_digest(name, value) for name, value in example.items()}
    other_index, other = max(candidates, key=lambda c: (sum(
        digests.get(name) == item_digest(name, value) for name, value in c[1].items()),
        -c[0]))
    pair = (example, other) if side == 0 else (other, example)
    indices = (index, other_index) if side == 0 else (other_index, index)
    # Values can be equal while the bytes differ (0.0 and -0.0).
    return _diff_examples(*pair, indices) or _unmatched(side, index)


def _check_flags(**flags: object) -> None:
    for name, value in flags.items():
        check_flag("compare", name, value, allow_none=True)


def _check_arguments(ordered: bool, rtol: float, atol: float, max_examples: int | None,
                     unordered_why: str) -> None:
    for name, value in (("rtol", rtol), ("atol", atol)):
        check_tolerance("compare", name, value)
    if not ordered and (rtol or atol):
        raise ValueError(
            f"compare: {unordered_why}, so rtol and atol must be 0 (got rtol={rtol}, "
            f"atol={atol}); pass ordered=True to compare in order with a tolerance")
    check_positive_int("compare", "max_examples", max_examples, allow_none=True)


def _refuse_endless(source: object, side: str) -> None:
    reason = why_endless(source, side)
    if reason is not None:
        raise PipelineConfigError(
            f"compare: the {side} pipeline never ends: {reason}; pass max_examples=N to "
            "compare its first N examples, or build it with num_epochs=1",
            argument="max_examples", expected="a positive integer for an endless pipeline")


def compare(legacy: Any, reference: Any = None, *, ordered: bool | None = None,
            rtol: float = 0, atol: float = 0, max_examples: int | None = None,
            legacy_batched: bool | None = None,
            reference_batched: bool | None = None) -> ComparisonReport:
    """Compare what two input pipelines deliver, example by example.

    ``legacy``: fetches built in a ``legacy_graph()`` (compare runs them in a
    :class:`~tf1compat.SessionIterator` and stops it afterwards), a
    ``SessionIterator``, or any iterable of numpy structures. ``reference``: a
    ``tf.data.Dataset`` or any iterable of numpy structures. Both sides must
    deliver the same structure (dict, list/tuple or a single array).

    Without ``reference``, ``legacy`` (fetches or a ``SessionIterator``) is
    compared with its own lowering, :func:`~tf1compat.to_tf_data` of its fetches:
    in order when the queue pipeline delivers one order every run (one thread,
    no shuffle queue, files in order or shuffled with a seed), as multisets
    otherwise (``ordered`` overrides).

    Batches are split into examples along their leading dimension when a side
    is batched. For fetches and a ``SessionIterator``, ``legacy_batched=None``
    infers it from the graph: outputs of a batching dequeue (``tf.train.batch``,
    ``shuffle_batch``, the ``*_join`` variants, also behind ``prefetch_queue``)
    are batched; values computed from a batch after it is dequeued are not
    recognised, so pass ``legacy_batched=True`` for those, and for an iterable
    of batches (a shape mismatch in the report hints at it).
    ``reference_batched`` says whether the reference yields batches (default:
    no, or as the legacy side for its own lowering).

    ``ordered=True`` (the default with a reference) compares the i-th examples of
    both sides, numeric values equal within ``atol + rtol * |reference|``;
    ``ordered=False`` compares the sides as multisets of exact content
    fingerprints (dtype, shape, bytes). ``max_examples`` stops each side after
    that many examples (for endless pipelines; without it, a side whose graph or
    ``tf.data`` cardinality says it never ends is refused with a
    PipelineConfigError). Returns a :class:`ComparisonReport`.
    """
    _check_flags(ordered=ordered, legacy_batched=legacy_batched,
                 reference_batched=reference_batched)
    unordered_why = "ordered=False matches examples by exact content fingerprints"
    if reference is None:
        reference, deterministic, legacy_batched = _own_lowering(legacy, legacy_batched)
        if ordered is None and not deterministic:
            unordered_why = ("this pipeline's order depends on thread timing or shuffling, so "
                             "it is compared with its lowering as multisets of exact content "
                             "fingerprints")
        ordered = deterministic if ordered is None else ordered
        reference_batched = legacy_batched if reference_batched is None else reference_batched
    ordered = True if ordered is None else ordered
    _check_arguments(ordered, rtol, atol, max_examples, unordered_why)
    if max_examples is None:
        _refuse_endless(legacy, "legacy")
        _refuse_endless(reference, "reference")
    with opened(legacy, "legacy", legacy_batched) as (legacy_structures, legacy_batched), \
            opened(reference, "reference", reference_batched) as (
                reference_structures, reference_batched):
        legacy_examples = iter_examples(legacy_structures, "legacy", legacy_batched,
                                         max_examples)
        reference_examples = iter_examples(reference_structures, "reference",
                                            reference_batched, max_examples)
        if ordered:
            tallies, first_mismatch, mismatched = _compare_ordered(
                legacy_examples, reference_examples, rtol, atol)
        else:
            tallies, first_mismatch = _compare_unordered(legacy_examples, reference_examples)
            mismatched = 0
    diffs = _multiset_diffs(tallies[0].fingerprints, tallies[1].fingerprints)
    equal = first_mismatch is None and not diffs
    return ComparisonReport(equal, ordered, tallies[0].count, tallies[1].count,
                            _item_summaries(*tallies), first_mismatch, mismatched, diffs)


def _own_lowering(legacy: Any, legacy_batched: bool | None) -> tuple[Any, bool, bool]:
    """``(lowered dataset, deterministic, legacy_batched)`` for fetches or a SessionIterator."""
    from tf1compat.migrate.lowering import is_graph_fetches, lower
    from tf1compat.pipeline.session import SessionIterator

    fetches = legacy.fetches if isinstance(legacy, SessionIterator) else legacy
    if not is_graph_fetches(fetches):
        raise TypeError("compare: without a reference, legacy must be the fetches of a queue "
                        "pipeline or a SessionIterator over them (compared with their tf.data "
                        f"lowering); got {type(legacy).__name__}")
    lowering = lower(fetches)
    if legacy_batched is None:
        legacy_batched = lowering.batched
    return lowering.to_tf_data(), lowering.deterministic, legacy_batched


# ------------------------------------------------------------ slim splits

def resolve_function(spec: str | Callable[..., Any],
                     argument: str = "dataset") -> Callable[..., Any]:
    """``spec`` itself when callable, else the function a ``"MODULE:FUNCTION"`` names;
    ``argument`` names the option in the PipelineConfigError for a bad ``spec``."""
    if callable(spec):
        return spec
    module_name, _, function_name = str(spec).partition(":")
    if not module_name or not function_name:
        raise PipelineConfigError(
            f"{argument} {spec!r} is not MODULE:FUNCTION (e.g. 'my_module:my_function')",
            argument=argument, expected="MODULE:FUNCTION")
    try:
        module = importlib.import_module(module_name)
    except ImportError as e:
        raise PipelineConfigError(f"{argument} {spec!r}: cannot import {module_name!r}: {e}",
                                  argument=argument, expected="an importable module") from e
    function = getattr(module, function_name, None)
    if not callable(function):
        functions = sorted(name for name, value in vars(module).items()
                           if callable(value) and not name.startswith("_"))
        close = difflib.get_close_matches(function_name, functions, n=3)
        listed = (f"did you mean {', '.join(close)}?" if close
                  else f"its functions: {', '.join(functions[:8])}"
                  + (f" and {len(functions) - 8} more" if len(functions) > 8 else "")
                  if functions else "it has no public functions")
        raise PipelineConfigError(
            f"{argument} {spec!r}: module {module_name} has no function "
            f"{function_name!r}; {listed}", argument=argument, expected=functions)
    found: Callable[..., Any] = function
    return found


def _make_dataset(factory: Callable[..., Any], split_name: str, dataset_dir: str | None) -> Any:
    try:
        return factory(split_name, dataset_dir)
    except ValueError as e:
        raise PipelineConfigError(
            f"{getattr(factory, '__name__', factory)}({split_name!r}, {dataset_dir!r}) "
            f"failed: {e}", argument="split_name", path=dataset_dir) from e


def compare_split(get_split: str | Callable[..., Any], split_name: str = "train",
                  dataset_dir: str | None = None, items: Sequence[str] | None = None, *,
                  ordered: bool = True, num_readers: int = 1, seed: int = 0) -> ComparisonReport:
    """Compare a slim split's queue pipeline with its :func:`~tf1compat.to_tf_data`.

    ``get_split`` is a slim ``get_split``-style factory ``f(split_name,
    dataset_dir)`` or its ``"MODULE:FUNCTION"`` name; it is called once per side
    (inside the legacy graph for the queue side). The legacy side is a
    ``DatasetDataProvider`` with ``num_readers`` readers, the reference
    ``to_tf_data`` with as many parallel reads, both one epoch of ``items``
    (default: all the decoder's). ``ordered=False`` shuffles both (seeded with
    ``seed``) and compares them as multisets. Returns a :class:`ComparisonReport`.
    """
    from tf1compat.migrate.tfdata import to_tf_data
    from tf1compat.pipeline.queues import legacy_graph
    from tf1compat.slim import dataset_data_provider

    factory = resolve_function(get_split)
    reference = to_tf_data(_make_dataset(factory, split_name, dataset_dir), items,
                           shuffle=not ordered, seed=seed, num_parallel_reads=num_readers)
    with legacy_graph(seed=seed):
        dataset = _make_dataset(factory, split_name, dataset_dir)
        names = list(dataset.decoder.list_items()) if items is None else list(items)
        provider = dataset_data_provider.DatasetDataProvider(
            dataset, num_readers=num_readers, shuffle=not ordered, num_epochs=1, seed=seed)
        fetches = dict(zip(names, provider.get(names), strict=True))
    return compare(fetches, reference, ordered=ordered)
