"""``RunMode``: TensorFlow 1's world for a program's own files, in this process,
until it is left.

A :class:`RunMode` owns everything run mode is: its settings (one frozen
:class:`~tf1compat.v1.settings.RunSettings`: the program's folders, grace period,
tf.data batching, tf.data service, cache budget), its import scope, its queue API
table, its ``tensorflow`` module and sessions' state, and every change it makes
outside tf1compat -- ``builtins.__import__`` (which also gives the program NumPy
1.x's names and SciPy's image functions), a ``sys.meta_path`` finder (the program's
modules compiled with NumPy's removed array methods rewritten,
:mod:`tf1compat.v1.rewrite`), ``multiprocessing``'s preparation data for spawned
children (:mod:`tf1compat.v1.children`: they install a run mode of the same settings),
``QueueRunner.create_threads`` and ``Session.run`` (explained runner errors, Ctrl-C
answered at once), the tf-slim repair, TensorFlow 2 behaviour switched off,
TensorFlow's logger level and filters, warning filters. :meth:`~RunMode.uninstall`
(or leaving its ``with`` block) undoes each of them, so ``builtins.__import__``,
``sys.meta_path``, ``sys.modules`` and TensorFlow are as they were. One run mode is
installed at a time.
"""

import builtins
import contextlib
import logging
import multiprocessing.spawn
import os
import sys
import threading
import warnings
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any, cast

from tf1compat._tf import VERBOSE, own_notices_dropped, tf, v1
from tf1compat._typing import PathArg
from tf1compat.migrate.service import check_reachable
from tf1compat.slim import tf_slim_patched
from tf1compat.slim._namespace import Patches
from tf1compat.v1 import (
    children,
    namespace,
    numpy1,
    queue_runtime,
    rewrite,
    scipy_misc,
    scope,
    tf_data_mode,
)
from tf1compat.v1.settings import RunSettings, run_settings

__all__ = ["RunMode", "installed_run_mode"]

_installed: "RunMode | None" = None  # the RunMode in place, if any
_installing = threading.Lock()


def installed_run_mode() -> "RunMode | None":
    """The :class:`RunMode` installed in this process, or None."""
    return _installed


def _drop_deprecation_notice(record: logging.LogRecord) -> bool:
    """Keep the program's own TensorFlow log lines, not TF2's deprecation notices."""
    return not record.pathname.endswith(os.path.join("util", "deprecation.py"))


class RunMode:
    """TF1's ``tensorflow`` for the code in ``paths``, while installed.

    ``paths``: folders or files whose Python code gets TF1's ``tensorflow`` when it
    imports it; code without a file running as ``__main__`` (notebook cells) always
    does. The other keyword arguments are :class:`~tf1compat.v1.settings.RunSettings`'
    fields: ``grace_period`` (seconds a ``sess.run`` waits on queues whose runners were
    never started before raising ``QueueRunnersNotStartedError``; ``float("inf")``:
    wait forever, as TF1), ``tf_data`` (where batching calls build their pipelines:
    ``"auto"``, the default, as tf.data inside the graph where that gives the same
    run, else on queues; ``True`` as tf.data, or on queues with a warning; ``False``
    on TF1's queues; :mod:`tf1compat.v1.tf_data_mode`), ``data_service``
    (``grpc://HOST:PORT``: the pipelines on tf.data run on that tf.data service
    cluster, :mod:`tf1compat.migrate.service`, whose dispatcher must answer now),
    ``data_service_timeout`` (seconds a read waits for the service's next element
    before raising ``DataServiceError``; default 120, ``inf``: no bound),
    ``cache_budget`` (the bytes the tf.data pipelines' in-memory caches may hold, as
    ``to_tf_data``'s ``cache``; 0 or False: none). Or ``settings``: a
    ``RunSettings`` made already (``paths`` are added to its roots).

    Use it as a context manager (``with RunMode([folder]) as run_mode:``; blocks
    nest: the one that installed it uninstalls it) or call :meth:`install` and
    :meth:`uninstall`.
    """

    def __init__(self, paths: PathArg | bytes | Sequence[PathArg | bytes] = (), *,
                 settings: RunSettings | None = None, **options: Any) -> None:
        self._settings = settings = run_settings(settings, paths, **options)
        self.scope = scope.ImportScope()
        self.scope.add_roots(settings.roots)
        self.runtime = queue_runtime.QueueRuntime(lambda: self._settings)
        self.queue_api = dict(queue_runtime.QUEUE_API)
        if settings.data_service is not None:
            check_reachable(settings.data_service, api="run --data-service")
        # each batching call reads the settings it is made under (queues, tf.data, auto)
        tf_data_mode.batch_on_tf_data(self.queue_api, lambda: self._settings)
        self.tensorflow: ModuleType = namespace.build_tensorflow_module(self.queue_api,
                                                                        self.runtime)
        self._patches = Patches()
        # what uninstall() does besides the patches, newest last
        self._undo: list[Callable[[], object]] = []
        # per `with` block entered and not left: whether it installed
        self._blocks: list[bool] = []

    @property
    def settings(self) -> RunSettings:
        """This run mode's :class:`~tf1compat.v1.settings.RunSettings`."""
        return self._settings

    @property
    def installed(self) -> bool:
        return _installed is self

    def update(self, *, roots: PathArg | bytes | Sequence[PathArg | bytes] = (),
               **changes: Any) -> None:
        """Add ``roots`` and change the settings in ``changes`` (the batching calls made
        from then on follow them); the new settings are checked before anything
        changes."""
        settings = self._settings.with_changes(roots=roots, **changes)
        if settings.data_service not in (None, self._settings.data_service):
            check_reachable(settings.data_service, api="run --data-service")
        self._settings = settings
        self.scope.add_roots(settings.roots)

    def install(self) -> ModuleType:
        """Put run mode in place for this process; returns its ``tensorflow`` module.
        Installing it again does nothing; installing a second one raises RuntimeError."""
        self._install()
        return self.tensorflow

    def _install(self) -> bool:
        """:meth:`install`; True when this call put it in place."""
        global _installed
        with _installing:
            if _installed is self:
                return False
            if _installed is not None:
                raise RuntimeError("a run mode is already installed; uninstall it first "
                                   "(tf1compat.v1.uninstall())")
            _installed = self
        try:
            self._apply()
        except BaseException:
            self.uninstall()
            raise
        return True

    @own_notices_dropped()  # TensorFlow's notices for run mode's own calls, made before its filters
    def _apply(self) -> None:
        if tf.executing_eagerly():  # TensorFlow 2 behaviour on: TF1 programs need graph mode
            v1.disable_v2_behavior()
            self._undo.append(_enable_v2_behavior)
        self.runtime.apply(self._patches)
        repair = contextlib.ExitStack()
        repair.enter_context(tf_slim_patched())
        self._undo.append(repair.close)
        hook = scope.make_import_hook(
            builtins.__import__, self.scope,
            lambda dotted: namespace.resolve(dotted, self.tensorflow),
            views={"numpy": numpy1.resolver(), "scipy": scipy_misc.resolver()})
        self._patches.set(builtins, "__import__", hook)
        self._patches.set(multiprocessing.spawn, "get_preparation_data",
                          children.preparation_with(multiprocessing.spawn.get_preparation_data,
                                                    _InstalledInChild(self)))
        finder = rewrite.ProgramFinder(self.scope.is_program_file)
        sys.meta_path.insert(0, finder)
        self._undo.append(lambda: sys.meta_path.remove(finder))
        self._add_logger_filter(tf_data_mode.drop_no_runners_notice)
        if not VERBOSE:
            logger = tf.get_logger()
            level = logger.level
            logger.setLevel(logging.WARNING)  # TF1's default; tf1compat mutes it
            self._undo.append(lambda: logger.setLevel(level))
            self._add_logger_filter(_drop_deprecation_notice)
            added: list[Any] = []
            for category in (UserWarning, DeprecationWarning):  # "`tf.layers.x` is deprecated"
                warnings.filterwarnings("ignore", category=category,
                                        module=r"(tensorflow|tf_slim|keras)(\.|$)")
                added.append(warnings.filters[0])
            self._undo.append(lambda: _remove_warning_filters(added))

    def _add_logger_filter(self, function: Callable[[logging.LogRecord], bool]) -> None:
        logger = tf.get_logger()
        logger.addFilter(function)
        self._undo.append(lambda: logger.removeFilter(function))

    def uninstall(self) -> None:
        """Undo every change :meth:`install` made (idempotent)."""
        global _installed
        with _installing:
            if _installed is not self:
                return
            failures: list[Exception] = []
            for undo in [*reversed(self._undo), self._patches.undo]:
                try:
                    undo()
                except Exception as e:  # noqa: BLE001 - undo the rest, then raise it
                    failures.append(e)
            self._undo.clear()
            _installed = None
        if failures:
            raise failures[0]

    def stop_sessions(self) -> None:
        """Stop the runner threads and close the sessions of a program that ended
        (or was interrupted) without closing them."""
        self.runtime.stop_sessions()

    def __enter__(self) -> "RunMode":
        """Install it unless it is in place; the block's end uninstalls what the block
        installed: ``with run_mode:`` inside ``with run_mode:`` (or after
        :meth:`install`) leaves it installed."""
        self._blocks.append(self._install())
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self._blocks.pop():
            self.uninstall()

    def __repr__(self) -> str:
        state = "installed" if self.installed else "not installed"
        return f"<RunMode {self._settings} ({state})>"


class _InstalledInChild:
    """In a spawned child's preparation data: unpickled, installs a run mode of the
    settings ``run_mode`` has when the child starts (:mod:`tf1compat.v1.children`)."""

    def __init__(self, run_mode: RunMode) -> None:
        self._run_mode = run_mode

    def __reduce__(self) -> tuple[Callable[[RunSettings], RunSettings], tuple[RunSettings]]:
        return _install_in_child, (self._run_mode.settings,)


def _install_in_child(settings: RunSettings) -> RunSettings:
    """Install a run mode of ``settings`` in this (child) process unless one is in place."""
    if installed_run_mode() is None:
        RunMode(settings=settings).install()
    return settings


@own_notices_dropped()
def _enable_v2_behavior() -> None:
    """TensorFlow 2 behaviour back on. TensorFlow refuses eager mode once the global
    default graph exists, so the graph the program built by default is dropped
    first (its sessions and tensors keep their graph)."""
    v1.reset_default_graph()
    v1.enable_v2_behavior()


def _remove_warning_filters(entries: Sequence[Any]) -> None:
    """Take ``entries`` out of ``warnings.filters`` (filters added since are kept)."""
    # a list at run time; typeshed calls it a Sequence (read-only) to discourage this
    cast("list[Any]", warnings.filters)[:] = [f for f in warnings.filters if f not in entries]

