"""``RunSettings``: everything a run mode takes, in one frozen object checked when made.

Made once -- from ``tf1compat run``'s flags, or from the keyword arguments of
:class:`~tf1compat.v1.run_mode.RunMode`, :func:`~tf1compat.v1.install`,
:func:`~tf1compat.v1.run_path` and :func:`~tf1compat.v1.run_module` -- and owned by
the run mode it configures, which pickles it whole to its spawned and forkserver
children (:mod:`tf1compat.v1.children`). TensorFlow-free: ``tf1compat run`` checks its
flags before TensorFlow loads.

Each setting is one field of :class:`RunSettings`: its default, its check (a rule of
:mod:`tf1compat._checks`) and the help of the ``tf1compat run`` flag that sets it
(``--grace-period`` for ``grace_period``: the command makes its flags from the
fields). A setting that needs another is one row of ``_REQUIRES``. Adding a setting is
adding its field here.
"""

import dataclasses
import os
from collections.abc import Callable, Sequence
from typing import Any, TypeVar, cast

from tf1compat._checks import (
    check_flag,
    check_instance,
    check_paths,
    check_requires,
    check_seconds,
    check_service_address,
)
from tf1compat._typing import PathArg
from tf1compat.errors import ArgumentTypeError
from tf1compat.pipeline.cache_budget import cache_budget

__all__ = ["RunSettings", "DEFAULT_GRACE_PERIOD", "AUTO", "run_settings"]

DEFAULT_GRACE_PERIOD = 10.0
_Value = TypeVar("_Value")
AUTO = "auto"   # tf_data's default: each pipeline on tf.data where that gives the same run


def _check_roots(roots: object) -> tuple[str, ...]:
    """The folders and files of the program as a tuple of absolute paths, each existing."""
    checked = []
    for root in check_paths(None, "roots", roots):
        path = os.path.abspath(os.fsdecode(root))
        if not os.path.exists(path):
            raise FileNotFoundError(f"roots: {os.fspath(root)!r} does not exist; expected the "
                                    "folders or files of the program")
        if path not in checked:
            checked.append(path)
    return tuple(checked)


def _seconds(value: object) -> float:
    return check_seconds(None, "grace_period", value, positive=True, allow_inf=True)


def _optional(check: Callable[[Any], _Value]) -> Callable[[Any], _Value | None]:
    return lambda value: None if value is None else check(value)


def _number_or_text(text: str) -> float | str:
    """A flag's text as the number it reads as, else as it is (which its check refuses)."""
    try:
        return float(text)
    except ValueError:
        return text


def _setting(default: Any, check: Callable[[Any], Any], help_text: str | None = None, *,
             metavar: str | None = None, from_text: Callable[[str], Any] | None = None,
             off_flag: tuple[str, str] | None = None) -> Any:
    """A field of :class:`RunSettings`: ``check(value)`` gives its plain value or
    raises. Its ``tf1compat run`` flag: ``help_text`` (None: it has none), ``metavar``
    (None: a switch), ``from_text`` (what the flag's text becomes; None: the text);
    ``off_flag``, a flag setting it to False (``--no-cache``) and that flag's help."""
    return dataclasses.field(default=default, metadata={
        "check": check, "help": help_text, "metavar": metavar, "from_text": from_text,
        "off_flag": off_flag})


@dataclasses.dataclass(frozen=True)
class RunSettings:
    """What a :class:`~tf1compat.v1.run_mode.RunMode` does, checked when made: a
    wrong kind of value raises :class:`~tf1compat.errors.ArgumentTypeError` (a
    ``TypeError``), a wrong value or a setting without the one it needs
    :class:`~tf1compat.errors.PipelineConfigError` (a ``ValueError``), a root that
    does not exist ``FileNotFoundError``.

    ``tf_data``: ``"auto"`` (the default) puts each pipeline on tf.data where that
    gives the program the same run, on TF1's queues otherwise
    (:mod:`tf1compat.v1.tf_data_mode`); ``True`` every pipeline on tf.data, or on
    queues with a warning when it cannot be; ``False`` every pipeline on TF1's queues.

    ``cache_budget`` given as None with ``tf_data`` (True or ``"auto"``) becomes the budget of
    :func:`~tf1compat.pipeline.cache_budget.cache_budget` (the
    ``TF1COMPAT_CACHE_BUDGET`` variable, else a quarter of the available memory, at
    most 4 GiB), so a run mode and its children use the same number.
    """

    roots: tuple[str, ...] = _setting((), _check_roots)     # the command's: the program's folder
    grace_period: float = _setting(
        DEFAULT_GRACE_PERIOD, _seconds,
        "how long sess.run waits on queues whose runners were never started before "
        "failing (default 10; inf: wait forever, as TF1)", metavar="SECONDS",
        from_text=_number_or_text)
    tf_data: bool | str = _setting(
        AUTO, lambda value: check_flag(None, "tf_data", value, also=AUTO),
        "every batching call (tf.train.batch & co.) builds its pipeline as tf.data inside "
        "the graph; one that cannot be lowered stays on queues with a warning naming why "
        "(default: each pipeline on tf.data where that gives the same run, else on "
        "TF1's queues, said once per pipeline on stderr)",
        off_flag=("--queues", "every pipeline on TF1's queues and their threads, as TF1 "
                              "ran them"))
    data_service: str | None = _setting(
        None, _optional(lambda value: check_service_address(None, "data_service", value)),
        "run the pipelines on tf.data on the tf.data service whose dispatcher listens "
        "there (`tf1compat data-service`)", metavar="grpc://HOST:PORT")
    data_service_timeout: float | None = _setting(
        None, _optional(lambda value: check_seconds(None, "data_service_timeout", value,
                                                    positive=True, allow_inf=True)),
        "with --data-service: how long a read waits for the service's next element "
        "before the run fails naming the server to restart (default 120; inf: wait as "
        "TensorFlow does)", metavar="SECONDS", from_text=_number_or_text)
    cache_budget: int | None = _setting(
        None, _optional(lambda value: cache_budget(value, argument="cache_budget")),
        "the memory a tf.data pipeline's in-memory cache may use (e.g. 500M, 2G; "
        "off: none; default: TF1COMPAT_CACHE_BUDGET, else a quarter of the available "
        "memory, at most 4G)", metavar="SIZE",
        off_flag=("--no-cache", "never keep a tf.data pipeline's parsed and decoded "
                                "examples in memory between epochs (--cache-budget off)"))

    def __post_init__(self) -> None:
        for field in dataclasses.fields(self):
            object.__setattr__(self, field.name,
                               field.metadata["check"](getattr(self, field.name)))
        for argument, required, purpose in _REQUIRES:
            check_requires(None, argument, getattr(self, argument), required,
                           getattr(self, required), purpose)
        if self.tf_data and self.cache_budget is None:
            object.__setattr__(self, "cache_budget", cache_budget(None))

    def with_changes(self, *, roots: PathArg | bytes | Sequence[PathArg | bytes] = (),
                     **changes: Any) -> "RunSettings":
        """These settings with ``roots`` added and the fields in ``changes`` replaced,
        checked as new ones are; a name that is not a setting is an
        :class:`~tf1compat.errors.ArgumentTypeError` listing the settings. Turning
        ``tf_data`` off (``False``) drops the cache budget, unless ``changes`` gives one:
        it sets the caches of the tf.data pipelines."""
        names = [field.name for field in dataclasses.fields(self) if field.name != "roots"]
        for name in changes:
            if name not in names:
                raise ArgumentTypeError(f"{name!r} is not a run setting; the settings are "
                                        f"{', '.join(names)}", argument=name, expected=names)
        if changes.get("tf_data", True) is False and "cache_budget" not in changes:
            changes["cache_budget"] = None
        added = cast(tuple[str, ...], check_paths(None, "roots", roots))  # __post_init__ makes str
        return dataclasses.replace(self, roots=(*self.roots, *added), **changes)


def run_settings(settings: RunSettings | None = None,
                 roots: PathArg | bytes | Sequence[PathArg | bytes] = (),
                 **options: Any) -> RunSettings:
    """``settings`` (a :class:`RunSettings`; None: the defaults) with ``roots`` added and
    ``options`` changed: the settings of ``RunMode(...)``, ``install(...)``,
    ``run_path(...)`` and ``run_module(...)``, checked as :meth:`RunSettings.with_changes`
    checks them."""
    if settings is None:
        settings = RunSettings()
    check_instance(None, "settings", settings, RunSettings, "a tf1compat.v1.RunSettings")
    return settings.with_changes(roots=roots, **options)


# (setting, the setting it needs, what it does with it)
_REQUIRES = (
    ("data_service", "tf_data",
     "the service runs the pipelines on tf.data, and tf_data=False keeps every pipeline "
     "on TF1's queues"),
    ("data_service_timeout", "data_service", "it bounds the waits for the service"),
    ("cache_budget", "tf_data", "it sets the in-memory cache of the pipelines on tf.data, "
     "and tf_data=False keeps every pipeline on TF1's queues"),
)

