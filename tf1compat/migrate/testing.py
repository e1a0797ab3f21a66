"""Pytest helpers for migrating input pipelines.

``assert_pipelines_equal`` is :func:`tf1compat.compare` as an
assertion: a failing comparison raises :class:`~tf1compat.errors.PipelineMismatchError`
(an ``AssertionError``), whose message is the full report, so pytest shows which
example and item differ.
"""

from typing import Any

from tf1compat.errors import PipelineMismatchError
from tf1compat.migrate.comparison import ComparisonReport, compare

__all__ = ["assert_pipelines_equal"]


def assert_pipelines_equal(legacy: Any, reference: Any, **options: Any) -> ComparisonReport:
    """Raise PipelineMismatchError unless ``compare(legacy, reference, **options)``
    finds the pipelines equal; returns the (equal) report otherwise.

    ``options`` are :func:`~tf1compat.compare`'s: ``ordered``, ``rtol``,
    ``atol``, ``max_examples``, ``legacy_batched``, ``reference_batched``.
    """
    report = compare(legacy, reference, **options)
    if not report.equal:
        raise PipelineMismatchError(report)
    return report
