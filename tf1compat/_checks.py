"""Argument checks for every wing, TensorFlow-free: one rule per kind of argument.

Each rule returns the value in its plain Python form (numpy integers and floats are
accepted wherever Python's are) or raises, naming the API (when given), the argument,
what came and what was expected:

- a value of the wrong kind (a string for a count, a float with a fraction for an
  integer, ``True`` for a number) raises :class:`~tf1compat.errors.ArgumentTypeError`,
  which is a ``TypeError``;
- a value of the right kind out of range or not among the choices raises
  :class:`~tf1compat.errors.PipelineConfigError`, a ``ValueError``.

Both carry ``argument`` and ``expected`` attributes (``ArgumentTypeError`` is also a
``PipelineConfigError``).
"""

import math
import numbers
import os
import urllib.parse
from collections.abc import Iterable
from typing import Literal, SupportsInt, TypeVar, cast, overload

from tf1compat.errors import ArgumentTypeError, PipelineConfigError

_Choice = TypeVar("_Choice")

__all__ = ["check_positive_int", "check_non_negative_int", "check_int_at_least", "check_index",
           "check_num_epochs", "check_queue_capacity", "check_fraction", "check_seed",
           "check_seconds", "check_tolerance", "check_choice", "check_flag", "check_callable",
           "check_path", "check_paths", "check_instance", "check_byte_size",
           "check_service_address", "check_requires", "check_scheduler", "MAX_BYTES"]

MAX_BYTES = 2 ** 63 - 1     # the largest size TensorFlow's int64 byte counters hold
_SIZE_UNITS = {"": 1, "k": 2 ** 10, "m": 2 ** 20, "g": 2 ** 30, "t": 2 ** 40}
_SIZE_OFF = ("off", "no", "false")
_SIZE_EXPECTED = f"a size in bytes up to {MAX_BYTES} (e.g. 500M, 2G, 1073741824), or off"
_SERVICE_EXPECTED = "grpc://HOST:PORT (a tf.data service dispatcher)"


def _message(api: str | None, argument: str, expected: object, value: object) -> str:
    prefix = f"{api}: " if api else ""
    return f"{prefix}{argument} must be {expected}, got {value!r}"


def _wrong_type(api: str | None, argument: str, expected: object,
                value: object) -> ArgumentTypeError:
    return ArgumentTypeError(_message(api, argument, expected, value),
                             argument=argument, expected=expected)


def _wrong_value(api: str | None, argument: str, expected: object,
                 value: object) -> PipelineConfigError:
    return PipelineConfigError(_message(api, argument, expected, value),
                               argument=argument, expected=expected)


def _integer(api: str | None, argument: str, value: object, expected: str,
             allow_float: bool) -> int:
    """``value`` as an int: integers (numpy too) and, with ``allow_float``, integral
    floats such as ``2.0`` (TF1 turns those into ints for op attributes); never bools."""
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return int(value)
    if allow_float and isinstance(value, numbers.Real) and not isinstance(value, bool) \
            and math.isfinite(value) and float(value).is_integer():
        return int(cast(SupportsInt, value))
    raise _wrong_type(api, argument, expected, value)


def _or_none(expected: str, allow_none: bool) -> str:
    return f"{expected} or None" if allow_none else expected


@overload
def check_positive_int(api: str | None, argument: str, value: object, *,
                       allow_none: Literal[False] = ..., allow_float: bool = ...) -> int: ...
@overload
def check_positive_int(api: str | None, argument: str, value: object, *, allow_none: bool,
                       allow_float: bool = ...) -> int | None: ...
def check_positive_int(api: str | None, argument: str, value: object, *,
                       allow_none: bool = False, allow_float: bool = False) -> int | None:
    """``value`` as an int >= 1 (None passes with ``allow_none``)."""
    if value is None and allow_none:
        return None
    expected = _or_none("a positive integer", allow_none)
    number = _integer(api, argument, value, expected, allow_float)
    if number < 1:
        raise _wrong_value(api, argument, expected, value)
    return number


@overload
def check_non_negative_int(api: str | None, argument: str, value: object, *,
                           allow_none: Literal[False] = ..., allow_float: bool = ...) -> int: ...
@overload
def check_non_negative_int(api: str | None, argument: str, value: object, *, allow_none: bool,
                           allow_float: bool = ...) -> int | None: ...
def check_non_negative_int(api: str | None, argument: str, value: object, *,
                           allow_none: bool = False, allow_float: bool = False) -> int | None:
    """``value`` as an int >= 0 (None passes with ``allow_none``)."""
    if value is None and allow_none:
        return None
    expected = _or_none("a non-negative integer", allow_none)
    number = _integer(api, argument, value, expected, allow_float)
    if number < 0:
        raise _wrong_value(api, argument, expected, value)
    return number


def check_int_at_least(api: str | None, argument: str, value: object, minimum: int,
                       why: str) -> int:
    """``value`` as an int >= ``minimum``; ``why`` says what the minimum is for."""
    expected = f"an integer >= {minimum} ({why})"
    number = _integer(api, argument, value, expected, False)
    if number < minimum:
        raise _wrong_value(api, argument, expected, value)
    return number


def check_index(api: str | None, argument: str, value: object, size: int) -> int:
    """``value`` as an int in ``[0, size)``."""
    expected = f"an integer in [0, {size})"
    index = _integer(api, argument, value, expected, False)
    if not 0 <= index < size:
        raise _wrong_value(api, argument, expected, value)
    return index


def check_num_epochs(api: str | None, num_epochs: object) -> int | None:
    """``None`` (repeat forever) or the number of epochs as an int >= 1."""
    return check_positive_int(api, "num_epochs", num_epochs, allow_none=True, allow_float=True)


def check_queue_capacity(api: str | None, capacity: object,
                         argument: str = "capacity") -> numbers.Real:
    """A TF1 queue capacity: a number whose integer part is not 0 (negative means
    no limit, as TensorFlow's queue ops document). Capacity 0 would block every
    enqueue forever; TF1 fails on it with a ZeroDivisionError or not at all."""
    expected = "a positive integer (or negative for no limit)"
    if isinstance(capacity, bool) or not isinstance(capacity, numbers.Real):
        raise _wrong_type(api, argument, expected, capacity)
    if not math.isfinite(capacity) or int(cast(SupportsInt, capacity)) == 0:
        raise _wrong_value(api, argument, expected, capacity)
    return capacity


def _real(api: str | None, argument: str, value: object, expected: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise _wrong_type(api, argument, expected, value)
    return float(value)


def check_fraction(api: str | None, argument: str, value: object) -> float:
    """``value`` as a float in ``[0, 1)``."""
    expected = "a number in [0, 1)"
    fraction = _real(api, argument, value, expected)
    if not 0 <= fraction < 1:
        raise _wrong_value(api, argument, expected, value)
    return fraction


def check_seed(api: str | None, argument: str, value: object, *,
               allow_none: bool = False) -> int | None:
    """``value`` as an int (any integer seeds; None passes with ``allow_none``)."""
    if value is None and allow_none:
        return None
    return _integer(api, argument, value, _or_none("an integer", allow_none), False)


@overload
def check_seconds(api: str | None, argument: str, value: object, *, minimum: float = ...,
                  positive: bool = ..., allow_inf: bool = ...,
                  allow_none: Literal[False] = ...) -> float: ...
@overload
def check_seconds(api: str | None, argument: str, value: object, *, minimum: float = ...,
                  positive: bool = ..., allow_inf: bool = ...,
                  allow_none: bool) -> float | None: ...
def check_seconds(api: str | None, argument: str, value: object, *, minimum: float = 0.0,
                  positive: bool = False, allow_inf: bool = False,
                  allow_none: bool = False) -> float | None:
    """A duration in seconds as a float: >= ``minimum``, or > 0 when ``positive``;
    finite unless ``allow_inf``; None passes with ``allow_none``."""
    if value is None and allow_none:
        return None
    least = "a positive number of seconds" if positive else f"a number of seconds >= {minimum:g}"
    expected = _or_none(least + (" (inf: no limit)" if allow_inf else ""), allow_none)
    seconds = _real(api, argument, value, expected)
    in_range = seconds > 0 if positive else seconds >= minimum
    if not in_range or math.isnan(seconds) or (seconds == math.inf and not allow_inf):
        raise _wrong_value(api, argument, expected, value)
    return seconds


def check_tolerance(api: str | None, argument: str, value: object) -> float:
    """A finite number >= 0, as a float."""
    expected = "a number >= 0"
    tolerance = _real(api, argument, value, expected)
    if not 0 <= tolerance < math.inf:
        raise _wrong_value(api, argument, expected, value)
    return tolerance


def check_choice(api: str | None, argument: str, value: object,
                 choices: Iterable[_Choice]) -> _Choice:
    """``value`` if it is one of ``choices`` (the error's ``expected``)."""
    choices = list(choices)
    try:
        if value in choices:
            return value
    except (TypeError, ValueError):  # a value that does not compare to one (an array)
        pass
    raise PipelineConfigError(_message(api, argument, f"one of {choices}", value),
                              argument=argument, expected=choices)


def check_flag(api: str | None, argument: str, value: object, *,
               allow_none: bool = False, also: str | None = None) -> bool | str | None:
    """``value`` as a bool: True or False (numpy's too), or None with ``allow_none``,
    or the word ``also`` (e.g. ``"auto"``)."""
    if value is None and allow_none:
        return None
    if also is not None and isinstance(value, str) and value == also:
        return also
    if type(value).__name__ in ("bool", "bool_"):  # Python's and numpy's, without numpy
        return bool(value)
    choices = ["True", "False", *(["None"] if allow_none else []),
               *([repr(also)] if also is not None else [])]
    raise _wrong_type(api, argument, f"{', '.join(choices[:-1])} or {choices[-1]}", value)


def check_callable(api: str | None, argument: str, value: _Choice, *,
                   allow_none: bool = False) -> _Choice:
    """``value`` if it can be called (or is None with ``allow_none``)."""
    if (value is None and allow_none) or callable(value):
        return value
    raise _wrong_type(api, argument, _or_none("a function", allow_none), value)


def check_path(api: str | None, argument: str, value: object) -> str | bytes:
    """``os.fspath(value)`` (str or bytes) after checking it can name a file."""
    expected = "a file path (str, bytes or os.PathLike)"
    if not isinstance(value, (str, bytes, os.PathLike)):
        raise _wrong_type(api, argument, expected, value)
    path = os.fspath(value)
    if not path or (b"\0" if isinstance(path, bytes) else "\0") in path:
        raise _wrong_value(api, argument, "a non-empty file path without NUL characters", path)
    return path


def check_paths(api: str | None, argument: str, value: object) -> tuple[str | bytes, ...]:
    """A file path or an iterable of them (``[folder, "train.py"]``) as a tuple of
    ``os.fspath`` values, each checked as :func:`check_path` checks one."""
    if isinstance(value, (str, bytes, os.PathLike)):
        return (check_path(api, argument, value),)
    try:
        paths = list(cast(Iterable[object], value))     # TypeError when it is not one
    except TypeError:
        raise _wrong_type(api, argument, "a file path (str, bytes or os.PathLike) or a list "
                          "of them", value) from None
    return tuple(check_path(api, argument, path) for path in paths)


def check_instance(api: str | None, argument: str, value: object, kind: type[_Choice],
                   expected: str) -> _Choice:
    """``value`` if it is a ``kind`` (a class); ``expected`` names it for people."""
    if isinstance(value, kind):
        return value
    raise _wrong_type(api, argument, expected, value)


def _size_of_text(text: str) -> int | None:
    """The bytes a size text means (``"500M"``, ``"1.5GiB"``, ``"off"``), or None."""
    value = text.strip().lower().removesuffix("ib").removesuffix("b")
    if value in _SIZE_OFF:
        return 0
    unit = value[-1:] if value[-1:] in _SIZE_UNITS else ""
    number = value[:len(value) - len(unit)]
    size: float
    try:
        size = int(number) * _SIZE_UNITS[unit]      # exact: a float is not past 2**53
    except ValueError:
        try:
            size = float(number) * _SIZE_UNITS[unit]
        except ValueError:
            return None
        if not unit and not size.is_integer():     # a fraction of a byte
            return None
    return int(size) if 0 <= size <= MAX_BYTES else None     # NaN and inf fail too


def check_byte_size(api: str | None, argument: str, value: object) -> int:
    """A number of bytes as an int in ``[0, MAX_BYTES]``: an integer (numpy's too) or a
    size text (``"500M"``, ``"2G"``, ``"1.5GiB"``, ``"1073741824"``, read exactly, never
    a fraction of a byte; ``"off"``, ``"no"`` and ``"false"`` are 0)."""
    if isinstance(value, str):
        size = _size_of_text(value)
    else:
        size = _integer(api, argument, value, _SIZE_EXPECTED, False)
    if size is None or not 0 <= size <= MAX_BYTES:
        raise _wrong_value(api, argument, _SIZE_EXPECTED, value)
    return size


def check_service_address(api: str | None, argument: str, value: object) -> str:
    """``value`` if it is a tf.data service dispatcher's address, ``grpc://HOST:PORT``."""
    if not isinstance(value, str):
        raise _wrong_type(api, argument, _SERVICE_EXPECTED, value)
    parts = urllib.parse.urlsplit(value)
    try:
        port = parts.port
    except ValueError:
        port = None
    if parts.scheme != "grpc" or not parts.hostname or port is None \
            or parts.path not in ("", "/") or parts.query or parts.fragment:
        raise _wrong_value(api, argument, _SERVICE_EXPECTED, value)
    return value


def check_requires(api: str | None, argument: str, given: object, required: str,
                   present: object, purpose: str) -> None:
    """A :class:`~tf1compat.errors.PipelineConfigError` when ``argument`` is ``given``
    (anything but None and False) and ``required`` is not ``present``: e.g.
    ``data_service_timeout needs data_service: it bounds the waits for the service``,
    or, when ``required`` was turned off (False), ``cache_budget cannot be used with
    tf_data=False: ...``. ``purpose`` says what ``argument`` does with ``required``; the
    error's ``expected`` is ``required``'s name."""
    if given is None or given is False or (present is not None and present is not False):
        return
    prefix = f"{api}: " if api else ""
    conflict = f"cannot be used with {required}=False" if present is False \
        else f"needs {required}"
    raise PipelineConfigError(f"{prefix}{argument} {conflict}: {purpose}",
                              argument=argument, expected=required)


_DASK_SCHEMES = ("tcp", "tls", "ws", "wss", "ucx")   # Dask's network protocols (inproc aside)


def _is_dask_client(value: object) -> bool:
    return any(cls.__name__ == "Client" and cls.__module__.startswith("distributed")
               for cls in type(value).__mro__)


def check_scheduler(api: str | None, argument: str, value: object) -> object:
    """A Dask scheduler: a ``distributed.Client`` (returned as it is, without importing
    Dask) or the scheduler's address ``[SCHEME://]HOST:PORT`` (tcp, tls, ws, wss or
    ucx; tcp when none is given, as Dask reads it; ``inproc://`` for a cluster in this
    process) with a port in 1..65535, returned as given. Checked before Dask sees it:
    a malformed address makes ``distributed.Client`` fail in a way that stalls its
    clean-up for 10 s."""
    expected = (f"a distributed.Client or a scheduler address such as 'tcp://host:8786' "
                f"(protocol {', '.join(_DASK_SCHEMES)} or inproc)")
    if _is_dask_client(value):
        return value
    if not isinstance(value, str):
        raise _wrong_type(api, argument, expected, value)
    scheme, separator, rest = value.partition("://")
    if not separator:
        scheme, rest = "tcp", value
    if scheme == "inproc" and rest:
        return value
    host, _, port = rest.rpartition(":")
    if host.startswith("[") and host.endswith("]"):     # an IPv6 address, as Dask needs it
        host = host[1:-1].replace(":", "")
    if scheme not in _DASK_SCHEMES or not host or any(c in host for c in "/[]: ") \
            or not port.isdigit() or not 0 < int(port) < 65536:
        raise _wrong_value(api, argument, expected, value)
    return value
