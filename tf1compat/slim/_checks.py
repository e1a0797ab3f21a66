"""Build-time checks for tf-slim: unknown items, data sources that match nothing,
provider arguments TF1 fails on opaquely.

Both raise :mod:`tf1compat.errors` classes that are ``ValueError`` subclasses,
so code written against tf-slim's ``ValueError`` keeps catching them.
"""

import inspect
from collections.abc import Iterable

from tf1compat._checks import check_non_negative_int, check_positive_int, check_queue_capacity
from tf1compat.errors import PipelineConfigError, UnknownItemError
from tf1compat.pipeline.queues import resolve_files


def check_items(items: Iterable[str], valid_items: Iterable[str]) -> None:
    """Raise :class:`UnknownItemError` for the first of ``items`` not in ``valid_items``."""
    valid_items = list(valid_items)
    for item in items:
        if item not in valid_items:
            raise UnknownItemError(item, valid_items)


def validate_provider_items(self, items):
    """``DataProvider._validate_items`` whose error names the valid items."""
    if not isinstance(items, (list, tuple)):
        raise PipelineConfigError(
            f"items must be a list or tuple of item names, got {type(items).__name__}",
            argument="items", expected="a list or tuple")
    check_items(items, self.list_items())


def decode_checking_items(original_decode):
    """Wrap a tf-slim decoder's ``decode`` to reject unknown items by name."""

    def decode(self, serialized_example, items=None):
        check_items(items or (), self.list_items())
        return original_decode(self, serialized_example, items)

    return decode


def _flatten(data_sources):
    if isinstance(data_sources, (list, tuple)):
        return [name for source in data_sources for name in _flatten(source)]
    return [data_sources]


def get_data_files(data_sources):
    """tf-slim's ``parallel_reader.get_data_files`` that checks its sources.

    ``data_sources`` is a file, a glob pattern, or a (nested) list of them.
    Patterns are expanded (sorted); a pattern matching no file, a missing file
    or an empty list raises :class:`PipelineConfigError` naming it.
    """
    return resolve_files("get_data_files", "data_sources", _flatten(data_sources))


def checking_provider_arguments(original_init):
    """Wrap ``DatasetDataProvider.__init__``: ``num_readers=0`` (TF1: "Must provide
    queue and enqueue_ops.") and ``common_queue_capacity=0`` (TF1: a
    ZeroDivisionError) are refused naming the argument."""
    signature = inspect.signature(original_init)

    def __init__(self, *args, **kwargs):
        values = signature.bind(self, *args, **kwargs)
        values.apply_defaults()
        api = "DatasetDataProvider"
        check_positive_int(api, "num_readers", values.arguments["num_readers"])
        check_queue_capacity(api, values.arguments["common_queue_capacity"],
                             argument="common_queue_capacity")
        check_non_negative_int(api, "common_queue_min", values.arguments["common_queue_min"])
        original_init(self, *args, **kwargs)

    return __init__
