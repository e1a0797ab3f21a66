"""The result of :func:`tf1compat.compare`: what differs between two pipelines.

:class:`ComparisonReport` is truthy when the pipelines are equal; ``str(report)``
is a readable summary. Built by :mod:`tf1compat.migrate.comparison`.
"""

import dataclasses

__all__ = ["ComparisonReport", "ItemSummary", "Mismatch", "ExampleDiff"]

SHOWN_VALUES = 3                   # differing values quoted for the first mismatch
_SHOWN_EXAMPLES = 5                # missing / duplicated examples listed by index
MAX_SHAPES = 4                     # distinct shapes remembered per item and side
SIDES = ("legacy", "reference")


# --------------------------------------------------------------- report types

@dataclasses.dataclass(frozen=True)
class ItemSummary:
    """The dtypes and shapes one item had on each side (shapes: at most a few)."""

    name: str
    legacy_dtypes: tuple[str, ...]
    reference_dtypes: tuple[str, ...]
    legacy_shapes: tuple[tuple[int | None, ...], ...]
    reference_shapes: tuple[tuple[int | None, ...], ...]

    @property
    def agrees(self) -> bool:
        return (self.legacy_dtypes == self.reference_dtypes
                and self.legacy_shapes == self.reference_shapes)

    def __str__(self) -> str:
        legacy = _describe_kinds(self.legacy_dtypes, self.legacy_shapes)
        reference = _describe_kinds(self.reference_dtypes, self.reference_shapes)
        if self.agrees:
            return f"{self.name}: {legacy}"
        return f"{self.name}: legacy {legacy} | reference {reference}  <- differs"


@dataclasses.dataclass(frozen=True)
class Mismatch:
    """How the first differing example differs.

    ``reason`` is one of ``"items"`` (different item names), ``"dtype"``,
    ``"shape"``, ``"value"`` or ``"unmatched"`` (no counterpart on the other
    side). ``values`` quotes up to three differing elements as
    ``(position, legacy value, reference value)``.
    """

    legacy_index: int | None
    reference_index: int | None
    item: str | None
    reason: str
    detail: str
    max_abs_diff: float | None = None
    values: tuple[tuple[tuple[int, ...], object, object], ...] = ()

    def __str__(self) -> str:
        where = " vs ".join(f"{side} #{index}" for side, index in
                            zip(SIDES, (self.legacy_index, self.reference_index), strict=True)
                            if index is not None)
        item = f", item {self.item!r}" if self.item is not None else ""
        lines = [f"first mismatch: {where}{item}: {self.detail}"]
        lines += [f"  at {list(position)}: legacy {left!r}, reference {right!r}"
                  for position, left, right in self.values]
        return "\n".join(lines)


@dataclasses.dataclass(frozen=True)
class ExampleDiff:
    """An example (one content fingerprint) delivered a different number of times.

    Indices are each side's first occurrence (None when it never occurs there).
    """

    fingerprint: int
    legacy_copies: int
    reference_copies: int
    legacy_index: int | None
    reference_index: int | None


@dataclasses.dataclass(frozen=True)
class ComparisonReport:
    """What :func:`compare` found. ``bool(report)`` is ``report.equal``.

    ``mismatched_pairs`` counts the index positions whose examples differ
    (ordered mode; 0 in unordered mode). ``diffs`` lists every example whose
    number of copies differs between the sides; the ``missing_from_*`` and
    ``duplicated_in_*`` properties sort them.
    """

    equal: bool
    ordered: bool
    legacy_count: int
    reference_count: int
    items: tuple[ItemSummary, ...]
    first_mismatch: Mismatch | None
    mismatched_pairs: int
    diffs: tuple[ExampleDiff, ...]

    def __bool__(self) -> bool:
        return self.equal

    @property
    def missing_from_legacy(self) -> tuple[ExampleDiff, ...]:
        return tuple(d for d in self.diffs if d.legacy_copies == 0)

    @property
    def missing_from_reference(self) -> tuple[ExampleDiff, ...]:
        return tuple(d for d in self.diffs if d.reference_copies == 0)

    @property
    def duplicated_in_legacy(self) -> tuple[ExampleDiff, ...]:
        return tuple(d for d in self.diffs if d.legacy_copies > d.reference_copies > 0)

    @property
    def duplicated_in_reference(self) -> tuple[ExampleDiff, ...]:
        return tuple(d for d in self.diffs if d.reference_copies > d.legacy_copies > 0)

    def __str__(self) -> str:
        mode = "ordered" if self.ordered else "unordered"
        verdict = "EQUAL" if self.equal else "DIFFER"
        if self.legacy_count == self.reference_count:
            counts = f"{self.legacy_count} examples on each side"
        else:
            counts = f"legacy {self.legacy_count} examples, reference {self.reference_count}"
        lines = [f"pipelines {verdict} ({mode} comparison): {counts}", "items:"]
        lines += [f"  {item}" for item in self.items]
        if self.first_mismatch is not None:
            lines.append(str(self.first_mismatch))
        if self.mismatched_pairs:
            lines.append(f"positions whose examples differ: {self.mismatched_pairs}")
        if self.diffs:
            lines += self._diff_lines()
        elif not self.equal and self.ordered:
            lines.append("same examples on both sides, in a different order")
        return "\n".join(lines)

    def _diff_lines(self) -> list[str]:
        groups = (
            ("missing from legacy", self.missing_from_legacy, "reference", "reference_index"),
            ("missing from reference", self.missing_from_reference, "legacy", "legacy_index"),
            ("duplicated in legacy", self.duplicated_in_legacy, "legacy", "legacy_index"),
            ("duplicated in reference", self.duplicated_in_reference,
             "reference", "reference_index"),
        )
        lines = []
        for title, diffs, side, index_field in groups:
            if not diffs:
                continue
            shown = ", ".join(_describe_diff(d, side, index_field)
                              for d in diffs[:_SHOWN_EXAMPLES])
            more = f", and {len(diffs) - _SHOWN_EXAMPLES} more" \
                if len(diffs) > _SHOWN_EXAMPLES else ""
            lines.append(f"{title}: {len(diffs)} example(s): {shown}{more}")
        return lines


def _describe_diff(diff: ExampleDiff, side: str, index_field: str) -> str:
    described = f"{side} #{getattr(diff, index_field)}"
    if diff.legacy_copies and diff.reference_copies:
        described += f" (copies: legacy {diff.legacy_copies}, reference {diff.reference_copies})"
    return described


def _describe_kinds(dtypes: tuple[str, ...], shapes: tuple[tuple[int | None, ...], ...]) -> str:
    shape_text = " or ".join(str(shape) for shape in shapes)
    if len(shapes) >= MAX_SHAPES:
        shape_text += " or more"
    return f"{'/'.join(dtypes)} {shape_text}"
