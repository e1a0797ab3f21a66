"""The in-memory caches' budget: how many bytes the lowering's cache
(:mod:`tf1compat.migrate.lowering.caching`) and the fast paths' cache
(:mod:`tf1compat.pipeline.epoch_cache`) may hold, from the ``cache`` argument, else the
``TF1COMPAT_CACHE_BUDGET`` variable (read here and nowhere else), else a default.
TensorFlow-free, so run mode's settings resolve it before TensorFlow loads; how the
bytes kept are counted is :mod:`tf1compat.pipeline.kept_chunks`'."""

import os

from tf1compat._checks import check_byte_size

__all__ = ["BUDGET_VARIABLE", "cache_budget", "default_budget", "size_text"]

BUDGET_VARIABLE = "TF1COMPAT_CACHE_BUDGET"
_DEFAULT_CAP = 4 * 2 ** 30       # the default budget: a quarter of available memory, at most this


def default_budget() -> int:
    """A quarter of the memory available now (Linux's MemAvailable; a quarter of the
    physical memory elsewhere), at most 4 GiB."""
    available = None
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    available = int(line.split()[1]) * 1024
    except OSError:
        pass
    if available is None:
        available = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    return min(available // 4, _DEFAULT_CAP)


def cache_budget(cache: bool | int | str | None = None, api: str | None = None,
                 argument: str = "cache") -> int:
    """The budget in bytes (0: no caching) for ``cache``: None or True -> the
    ``TF1COMPAT_CACHE_BUDGET`` variable when set, else :func:`default_budget`;
    False -> 0; a number of bytes or a size text (``"500M"``, ``"off"``), as
    :func:`~tf1compat._checks.check_byte_size` takes them. A bad value (also of the
    variable) raises :class:`~tf1compat.errors.PipelineConfigError` naming ``api``'s
    ``argument`` (or the variable)."""
    if cache is None or cache is True:
        setting = os.environ.get(BUDGET_VARIABLE, "").strip()
        return check_byte_size(None, BUDGET_VARIABLE, setting) if setting else default_budget()
    if cache is False:
        return 0
    return check_byte_size(api, argument, cache)


def size_text(size: float) -> str:
    """``size`` bytes for people: ``150 MB``, ``12 kB``, ``100 bytes``."""
    if size >= 2 ** 20:
        return f"{size / 2 ** 20:,.0f} MB"
    return f"{size / 2 ** 10:,.0f} kB" if size >= 2 ** 10 else f"{size} bytes"
