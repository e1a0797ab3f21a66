"""The in-memory caches' budget: how many bytes the lowering's cache
(:mod:`tf1compat.migrate.lowering.caching`) and the fast paths' cache
(:mod:`tf1compat.pipeline.epoch_cache`) may hold, from the ``cache`` argument or the
``TF1COMPAT_CACHE_BUDGET`` variable, and how the bytes they hold are counted."""

import os

from tf1compat._tf import tf
from tf1compat.errors import PipelineConfigError

__all__ = ["BUDGET_VARIABLE", "STRING_BYTES", "cache_budget", "default_budget",
           "estimated_bytes", "row_bytes", "size_text"]

STRING_BYTES = 24                # what TensorFlow holds per string besides its characters

BUDGET_VARIABLE = "TF1COMPAT_CACHE_BUDGET"
_DEFAULT_CAP = 4 * 2 ** 30       # the default budget: a quarter of available memory, at most this
_UNITS = {"": 1, "k": 2 ** 10, "m": 2 ** 20, "g": 2 ** 30, "t": 2 ** 40}
_OFF = ("off", "no", "false", "0")
_EXPECTED = "a size in bytes (e.g. 500M, 2G, 1073741824), or off"


def default_budget():
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


def _parse_size(text, argument):
    value = text.strip().lower().removesuffix("ib").removesuffix("b")
    if value in _OFF[:3]:
        return 0
    unit = value[-1:] if value[-1:] in _UNITS else ""
    try:
        size = float(value[:len(value) - len(unit)]) * _UNITS[unit]
    except ValueError:
        size = -1
    if size < 0 or size != size or size == float("inf"):
        raise PipelineConfigError(f"{argument}: {text!r} is not a cache budget; expected "
                                  f"{_EXPECTED}", argument=argument, expected=_EXPECTED)
    return int(size)


def cache_budget(cache=None):
    """The budget in bytes (0: no caching) for ``cache``: None or True -> the
    ``TF1COMPAT_CACHE_BUDGET`` variable when set, else :func:`default_budget`;
    False -> 0; a number of bytes or a size text (``"500M"``, ``"off"``)."""
    if cache is None or cache is True:
        setting = os.environ.get(BUDGET_VARIABLE, "").strip()
        return _parse_size(setting, BUDGET_VARIABLE) if setting else default_budget()
    if cache is False:
        return 0
    if isinstance(cache, str):
        return _parse_size(cache, "cache")
    if isinstance(cache, int) and cache >= 0:
        return cache
    raise PipelineConfigError(f"cache: expected True, False, None or {_EXPECTED}; got "
                              f"{cache!r}", argument="cache", expected=_EXPECTED)


def size_text(size):
    """``size`` bytes for people: ``150 MB``, ``12 kB``, ``100 bytes``."""
    if size >= 2 ** 20:
        return f"{size / 2 ** 20:,.0f} MB"
    return f"{size / 2 ** 10:,.0f} kB" if size >= 2 ** 10 else f"{size} bytes"


def row_bytes(columns):
    """Bytes held by a batch of rows (a list of tensors, one per column)."""
    total = tf.constant(0, tf.int64)
    for column in columns:
        if column.dtype == tf.string:
            total += tf.reduce_sum(tf.cast(tf.strings.length(column), tf.int64) + STRING_BYTES)
        else:
            total += tf.size(column, tf.int64) * column.dtype.size
    return total


def estimated_bytes(files, sample_records, sample_bytes, row_specs):
    """Bytes the rows of ``files`` will hold, before reading them: the files' sizes
    over the mean size of a sample of their records (``sample_records`` records of
    ``sample_bytes`` bytes in all) give the number of rows; a row holds its fixed-size
    values (``row_specs``) and, per string, a record. 0 for an empty sample."""
    if not sample_records:
        return 0
    mean = max(sample_bytes / sample_records, 1)
    row = sum(spec.shape.num_elements() * (
        mean + STRING_BYTES if spec.dtype == tf.string else spec.dtype.size)
        for spec in row_specs)
    total = sum(tf.io.gfile.stat(os.fsdecode(name)).length for name in files)
    return int(total / mean * row)
