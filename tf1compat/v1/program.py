"""Running an unmodified TF1 program: :func:`install` and ``tf1compat run``.

:func:`run_path` / :func:`run_module` run a program as ``__main__`` the way
``python PROGRAM.py`` / ``python -m MODULE`` would (``sys.argv``, ``sys.path``,
exit status from ``SystemExit``, ``tf.app.run`` or absl's ``app.run``) inside a
:class:`~tf1compat.v1.run_mode.RunMode` for the program's folder, left when the
program ends. :func:`install` / :func:`uninstall` put the process's run mode in
place and take it away (a notebook).
"""

import contextlib
import importlib.util
import io
import os
import runpy
import signal
import sys
import threading
import traceback
import types
import zipfile
from collections.abc import Callable, Iterator, Sequence
from typing import Any, NoReturn, cast

from tf1compat._typing import PathArg
from tf1compat.errors import DataServiceError
from tf1compat.v1 import rewrite, scope
from tf1compat.v1.queue_runtime import QueueRuntime
from tf1compat.v1.run_mode import RunMode, installed_run_mode
from tf1compat.v1.settings import RunSettings, run_settings

__all__ = ["install", "uninstall", "run_path", "run_module", "ProgramNotFoundError",
           "ProgramTerminated"]


class ProgramNotFoundError(FileNotFoundError):
    """The program file or module to run does not exist."""


def install(paths: PathArg | bytes | Sequence[PathArg | bytes] | None = None,
            **options: Any) -> types.ModuleType:
    """Give the code in ``paths`` TensorFlow 1's world in this process; returns run
    mode's ``tensorflow`` module, e.g. ``tf = tf1compat.v1.install()``.

    ``paths``: folders or files whose Python code gets TF1's ``tensorflow`` when it
    imports it (default: the folder of ``__main__``'s file, else the current
    folder); code without a file running as ``__main__`` (notebook cells) always
    does. ``options``: the settings of :class:`~tf1compat.v1.settings.RunSettings`,
    e.g. ``grace_period`` (seconds a ``sess.run`` waits on queues whose runners were
    never started before raising ``QueueRunnersNotStartedError``; default 10,
    ``float("inf")``: wait forever, as TF1), ``tf_data`` (where batching calls build
    their pipelines: ``"auto"``, the default, on tf.data inside the graph where that
    gives the same run, else on queues; ``True`` on tf.data, or on queues with a
    warning; ``False`` on TF1's queues; :mod:`tf1compat.v1.tf_data_mode`),
    ``data_service`` (``grpc://HOST:PORT``: the pipelines on tf.data run on that
    tf.data service), ``data_service_timeout`` (seconds each wait for it may take,
    default 120), ``cache_budget`` (the bytes the pipelines' in-memory caches may hold).

    A second call adds its paths and changes the settings it is given in the run mode
    in place (for the batching calls made from then on). What it changes for the
    whole process (TensorFlow 2 behaviour off, queue runners that report explained
    errors, Ctrl-C answered during ``sess.run``, the import hook, tf-slim's repair,
    TensorFlow's log at TF1's level unless ``TF1COMPAT_VERBOSE=1``) is undone by
    :func:`uninstall`.
    """
    if paths is None:
        main_file = getattr(sys.modules.get("__main__"), "__file__", None)
        paths = [os.path.dirname(os.path.abspath(main_file)) if main_file else os.getcwd()]
    run_mode = installed_run_mode()
    if run_mode is None:
        return RunMode(paths, **options).install()
    run_mode.update(roots=paths, **options)
    return run_mode.tensorflow


def uninstall() -> None:
    """Leave run mode: every change :func:`install` made is undone (idempotent)."""
    run_mode = installed_run_mode()
    if run_mode is not None:
        run_mode.uninstall()


def _exit_status(code: object) -> int:
    """The process exit status for ``SystemExit(code)``, as Python computes it."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


_PACKAGE_FOLDER = os.path.dirname(os.path.dirname(__file__)) + os.sep


def _internal_frame(filename: str) -> bool:
    """A frame of tf1compat or runpy (not of a sibling folder such as ``tf1compat_x``)."""
    return filename.startswith(_PACKAGE_FOLDER) or \
        os.path.basename(filename) == "runpy.py" or filename.startswith("<frozen runpy")


def _import_system_frame(filename: str) -> bool:
    """A frame of Python's import system (``<frozen importlib._bootstrap>``), which
    Python's own tracebacks leave out; run mode's hook keeps it from doing that."""
    return filename.startswith("<frozen importlib.")


# Run mode's import machinery: the hook, the TF1 tree's lookup, the rewriting loader.
_IMPORT_MACHINERY = frozenset(os.path.join(os.path.dirname(__file__), name)
                              for name in ("scope.py", "namespace.py", "rewrite.py",
                                           "run_mode.py"))


def _program_traceback(tb: types.TracebackType | None) -> types.TracebackType | None:
    """``tb`` from the program's first frame on, without run mode's import
    machinery between the program's ``import`` and what it raised (Python shows
    no frames of its own import system either); None when no frame is left."""
    while tb is not None and _internal_frame(tb.tb_frame.f_code.co_filename):
        tb = tb.tb_next
    kept: list[types.TracebackType] = []
    while tb is not None:
        filename = tb.tb_frame.f_code.co_filename
        if filename not in _IMPORT_MACHINERY and not _import_system_frame(filename):
            kept.append(tb)
        tb = tb.tb_next
    if not kept:
        return None
    for frame, following in zip(kept, [*kept[1:], None], strict=True):
        frame.tb_next = following
    return kept[0]


class ProgramTerminated(SystemExit):
    """SIGTERM arrived while the program ran; ``code`` is 128 + SIGTERM (143)."""


@contextlib.contextmanager
def _signals_end_the_program(runtime: QueueRuntime) -> Iterator[None]:
    """While the program runs, Ctrl-C raises KeyboardInterrupt as usual and SIGTERM
    raises :class:`ProgramTerminated` (so ``finally`` blocks run and sessions are
    closed, instead of the process dying where it stands); either tells ``runtime``
    that sessions closed from then on need not wait for interrupted steps. Handlers
    the program (or its host) set are left alone."""
    def interrupt(signum: int, frame: types.FrameType | None) -> NoReturn:
        runtime.interrupted = True
        if signum == signal.SIGINT:
            raise KeyboardInterrupt
        raise ProgramTerminated(128 + signum)

    defaults: dict[signal.Signals, Callable[[int, types.FrameType | None], Any] | int] = {
        signal.SIGINT: signal.default_int_handler, signal.SIGTERM: signal.SIG_DFL}
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    replaced = [signum for signum, default in defaults.items()
                if signal.getsignal(signum) is default]
    for signum in replaced:
        signal.signal(signum, interrupt)
    try:
        yield
    finally:
        for signum in replaced:
            signal.signal(signum, defaults[signum])


def _run_in(run_mode: RunMode, run: Callable[[], object], *,
            find: Callable[[], None] | None = None) -> int:
    """Run ``run()`` as the program inside ``run_mode`` (after ``find()``, which may
    raise ProgramNotFoundError); returns its exit status. A session the program left
    running is closed when it ends, however it ends."""
    with run_mode, _signals_end_the_program(run_mode.runtime):
        if find is not None:
            find()
        try:
            return _run_as_main(run)
        finally:
            run_mode.stop_sessions()


def _run_as_main(run: Callable[[], object]) -> int:
    """Run ``run()`` as the program; returns its exit status. An uncaught exception
    prints its traceback from the program's first frame on, like Python, and gives 1;
    a read on the tf.data service that ran out of time (DataServiceError) is the
    caller's to report."""
    try:
        run()
    except (KeyboardInterrupt, ProgramTerminated, DataServiceError):
        raise
    except SystemExit as e:
        return _exit_status(e.code)
    except BaseException as e:  # noqa: BLE001 - the program's own failure, reported as Python does
        interruption = _broken_interruption(e)
        if interruption is not None:
            raise interruption from None
        tb = _program_traceback(e.__traceback__)
        if tb is None and not isinstance(e, SyntaxError):  # tf1compat's own failure: all of it
            tb = e.__traceback__
        traceback.print_exception(type(e), e, tb)  # a SyntaxError in the program: no frames
        return 1
    return 0


def _broken_interruption(error: BaseException) -> BaseException | None:
    """The KeyboardInterrupt (or :class:`ProgramTerminated`) that ``error`` replaced,
    when ``error`` came from :mod:`threading` while it was handled, else None: a signal
    arriving inside ``Condition.wait`` (``coord.join``) between its lock's release and
    its reacquiring leaves the ``with`` block releasing an unlocked lock, and Python
    then ends with ``RuntimeError: release unlocked lock`` instead of the interruption."""
    tb = error.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    if tb is None or tb.tb_frame.f_code.co_filename != threading.__file__:
        return None
    context = error.__context__
    while context is not None and not isinstance(context, (KeyboardInterrupt, ProgramTerminated)):
        context = context.__context__
    return context


def _run_file_as_main(program: str) -> None:
    """Run the file ``program`` as ``__main__``, as ``runpy.run_path`` does, compiled
    with NumPy's removed array methods rewritten (:mod:`tf1compat.v1.rewrite`)."""
    with io.open_code(program) as f:
        code = rewrite.compile_program(f.read(), program)
    main = types.ModuleType("__main__")
    vars(main).update(__file__=program, __cached__=None, __loader__=None, __package__="",
                      __spec__=None)
    saved = sys.modules.get("__main__")
    sys.modules["__main__"] = main
    try:
        exec(code, vars(main))  # noqa: S102 - running the program is the point
    finally:
        sys.modules["__main__"] = saved  # type: ignore[assignment]  # None if it was None


def _has_main(program: str) -> bool:
    """True when a folder or zip application ``program`` holds ``__main__.py``."""
    if os.path.isdir(program):
        return os.path.isfile(os.path.join(program, "__main__.py"))
    with zipfile.ZipFile(program) as archive:
        return "__main__.py" in archive.namelist()


def run_path(path: PathArg, args: Sequence[str] = (), *, settings: RunSettings | None = None,
             run_mode: RunMode | None = None, **options: Any) -> int:
    """Run the program ``path`` with ``args`` in run mode; returns its exit status.

    The run mode's settings are ``settings`` (a
    :class:`~tf1compat.v1.settings.RunSettings`) or ``options`` (its fields as keyword
    arguments, as for :class:`~tf1compat.v1.run_mode.RunMode`), checked before the
    program is looked for; the program's folder is added to their roots.
    Like ``python PROGRAM ARGS``: ``sys.argv = [PROGRAM, *ARGS]``, the program's
    folder first on ``sys.path``, its folder (and everything below it, but not
    site-packages) importing TF1's ``tensorflow``. ``PROGRAM`` may also be a folder
    or a zip application with a ``__main__.py``, which is then what runs (the folder
    or zip file is first on ``sys.path`` and is the program's code).
    ``run_mode``: the :class:`RunMode` to run it in (made from the settings when
    None; the program's folder is added to its roots), e.g. one whose queue API a
    caller changed (``tf1compat port`` watches the program's batching calls).
    """
    settings = _settings(settings, options)
    program = os.path.abspath(path)
    package = os.path.isdir(program) or zipfile.is_zipfile(program)
    if not os.path.exists(program):
        raise ProgramNotFoundError(f"cannot open {os.fspath(path)!r}: no such file or folder")
    if package and not _has_main(program):
        raise ProgramNotFoundError(f"cannot find '__main__' module in {os.fspath(path)!r}")
    folder = program if package else os.path.dirname(program)
    if run_mode is None:
        run_mode = RunMode([folder], settings=settings)
    else:
        run_mode.update(roots=[folder])
    sys.argv = [program, *args]
    if not package:  # runpy puts a folder or zip application first itself
        sys.path.insert(0, folder)
    if package:
        return _run_in(run_mode, lambda: runpy.run_path(program, run_name="__main__"))
    return _run_in(run_mode, lambda: _run_file_as_main(program))


def _settings(settings: RunSettings | None, options: dict[str, Any]) -> RunSettings:
    """``settings``, or the :class:`~tf1compat.v1.settings.RunSettings` of ``options``."""
    if settings is not None and options:
        raise TypeError(f"run: pass settings or {sorted(options)}, not both")
    return run_settings(settings, **options)


def _module_root(top_spec: importlib.machinery.ModuleSpec) -> str:
    """The folder that holds a top-level module or package: the program's own code.
    A package installed in site-packages is its own root."""
    # a str: run_module refused a spec with neither
    location = cast(str, top_spec.submodule_search_locations[0]
                    if top_spec.submodule_search_locations else top_spec.origin)
    parent = os.path.dirname(location)
    return location if scope.is_library_folder(parent) else parent


def run_module(module: str, args: Sequence[str] = (), *,
               settings: RunSettings | None = None, **options: Any) -> int:
    """Run ``module`` as ``__main__`` like ``python -m MODULE ARGS``; returns the exit status.

    ``settings`` or ``options``: as for :func:`run_path`. The folder holding its
    top-level package is the program's own code (the package itself when it is
    installed in site-packages).
    """
    settings = _settings(settings, options)
    sys.path.insert(0, os.getcwd())
    top = module.partition(".")[0]
    try:
        top_spec = importlib.util.find_spec(top)
    except (ImportError, ValueError):
        top_spec = None
    if top_spec is None or (top_spec.origin is None and not top_spec.submodule_search_locations):
        folder = sys.path.pop(0)  # nothing runs: leave sys.path as it was
        raise ProgramNotFoundError(f"no module named {top!r} (searched {folder!r} and "
                                   "the installed packages)")
    run_mode = RunMode([_module_root(top_spec)], settings=settings)

    def find() -> None:  # in run mode: the parent packages may import tensorflow
        try:
            found = importlib.util.find_spec(module) is not None
        except ModuleNotFoundError as e:  # a parent package is missing, not broken
            found = not (e.name and (module + ".").startswith(e.name + "."))
        if not found:
            raise ProgramNotFoundError(f"no module named {module!r}")
        sys.argv = [module, *args]

    return _run_in(run_mode, lambda: runpy.run_module(module, run_name="__main__",
                                                      alter_sys=True), find=find)
