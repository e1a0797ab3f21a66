"""Running an unmodified TF1 program: :func:`install` and ``tf1compat run``.

:func:`run_path` / :func:`run_module` run a program as ``__main__`` the way
``python PROGRAM.py`` / ``python -m MODULE`` would (``sys.argv``, ``sys.path``,
exit status from ``SystemExit``, ``tf.app.run`` or absl's ``app.run``), after
:func:`install` has set up TF1's world for the program's folder.
"""

import importlib.util
import logging
import os
import runpy
import sys
import traceback
import warnings
import zipfile

from tf1compat._checks import check_seconds
from tf1compat._tf import VERBOSE, tf, v1

__all__ = ["install", "run_path", "run_module", "ProgramNotFoundError"]

_installed = False


class ProgramNotFoundError(FileNotFoundError):
    """The program file or module to run does not exist."""


def _drop_deprecation_notice(record):
    """Keep the program's own TensorFlow log lines, not TF2's deprecation notices."""
    return not record.pathname.endswith(os.path.join("util", "deprecation.py"))


def _patch_tf_slim():
    """tf-slim's data API fixed for current TensorFlow, for `import tf_slim as slim`."""
    import tf1compat.slim  # noqa: F401 - importing it applies patch_tf_slim()


def install(paths=None, *, grace_period=None, tf_data=False):
    """Give the code in ``paths`` TensorFlow 1's world, in this process; idempotent.

    ``paths``: folders or files whose Python code gets TF1's ``tensorflow`` when it
    imports it (default: the folder of ``__main__``'s file, else the current
    folder); code without a file running as ``__main__`` (notebook cells) always
    does. ``grace_period``: seconds a ``sess.run`` waits on queues whose runners
    were never started before raising ``QueueRunnersNotStartedError`` (default 10;
    ``float("inf")``: wait forever, as TF1).
    ``tf_data``: batching calls build their pipelines as tf.data inside the graph
    instead of queues (:mod:`tf1compat.v1.tf_data_mode`; for the whole process).

    The first call also, for the whole process: disables TensorFlow 2 behaviour
    (graph mode, v1 shapes, control flow and summaries), makes queue runners
    report their errors explained, installs the import hook (which also fixes
    tf-slim before the program imports ``tf_slim`` itself), and (unless
    ``TF1COMPAT_VERBOSE=1``) keeps TensorFlow's log at TF1's default level without
    its deprecation notices. Returns run mode's ``tensorflow`` module, e.g.
    ``tf = tf1compat.v1.install()``.
    """
    global _installed
    from tf1compat.v1 import namespace, queue_runtime, scope

    if grace_period is not None:
        queue_runtime.settings["grace_period"] = check_seconds(
            "install", "grace_period", grace_period, positive=True, allow_inf=True)
    if paths is None:
        main_file = getattr(sys.modules.get("__main__"), "__file__", None)
        paths = [os.path.dirname(os.path.abspath(main_file)) if main_file else os.getcwd()]
    elif isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    for path in paths:
        if not os.path.exists(path):
            raise FileNotFoundError(f"install: {os.fspath(path)!r} does not exist; expected "
                                    "the folders or files of the program")
    scope.add_roots(paths)
    if tf_data:
        from tf1compat.v1 import tf_data_mode
        tf_data_mode.install()
    if not _installed:
        v1.disable_v2_behavior()
        queue_runtime.report_runner_errors()
        scope.install_import_hook(namespace.resolve, {"tf_slim": _patch_tf_slim})
        if not VERBOSE:
            tf.get_logger().setLevel(logging.WARNING)  # TF1's default; tf1compat mutes it
            tf.get_logger().addFilter(_drop_deprecation_notice)
            for category in (UserWarning, DeprecationWarning):  # "`tf.layers.x` is deprecated"
                warnings.filterwarnings("ignore", category=category,
                                        module=r"(tensorflow|tf_slim|keras)(\.|$)")
        _installed = True
    return namespace.tensorflow_module()


def _exit_status(code):
    """The process exit status for ``SystemExit(code)``, as Python computes it."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


_PACKAGE_FOLDER = os.path.dirname(os.path.dirname(__file__)) + os.sep


def _internal_frame(filename):
    """A frame of tf1compat or runpy (not of a sibling folder such as ``tf1compat_x``)."""
    return filename.startswith(_PACKAGE_FOLDER) or \
        os.path.basename(filename) == "runpy.py" or filename.startswith("<frozen runpy")


def _run_as_main(run):
    """Run ``run()`` as the program; returns its exit status. An uncaught exception
    prints its traceback from the program's first frame on, like Python, and gives 1."""
    try:
        run()
    except SystemExit as e:
        return _exit_status(e.code)
    except KeyboardInterrupt:
        raise
    except BaseException as e:  # noqa: BLE001 - the program's own failure, reported as Python does
        tb = e.__traceback__
        while tb is not None and _internal_frame(tb.tb_frame.f_code.co_filename):
            tb = tb.tb_next
        traceback.print_exception(type(e), e, tb or e.__traceback__)
        return 1
    return 0


def _has_main(program):
    """True when a folder or zip application ``program`` holds ``__main__.py``."""
    if os.path.isdir(program):
        return os.path.isfile(os.path.join(program, "__main__.py"))
    with zipfile.ZipFile(program) as archive:
        return "__main__.py" in archive.namelist()


def run_path(path, args=(), *, grace_period=None, tf_data=False):
    """Run the program ``path`` with ``args`` in run mode; returns its exit status.

    Like ``python PROGRAM ARGS``: ``sys.argv = [PROGRAM, *ARGS]``, the program's
    folder first on ``sys.path``, its folder (and everything below it, but not
    site-packages) importing TF1's ``tensorflow``. ``PROGRAM`` may also be a folder
    or a zip application with a ``__main__.py``, which is then what runs (the folder
    or zip file is first on ``sys.path`` and is the program's code).
    """
    program = os.path.abspath(path)
    package = os.path.isdir(program) or zipfile.is_zipfile(program)
    if not os.path.exists(program):
        raise ProgramNotFoundError(f"cannot open {os.fspath(path)!r}: no such file or folder")
    if package and not _has_main(program):
        raise ProgramNotFoundError(f"cannot find '__main__' module in {os.fspath(path)!r}")
    folder = program if package else os.path.dirname(program)
    install([folder], grace_period=grace_period, tf_data=tf_data)
    sys.argv = [program, *args]
    if not package:  # runpy puts a folder or zip application first itself
        sys.path.insert(0, folder)
    return _run_as_main(lambda: runpy.run_path(program, run_name="__main__"))


def _module_root(top_spec):
    """The folder that holds a top-level module or package: the program's own code.
    A package installed in site-packages is its own root."""
    from tf1compat.v1 import scope

    location = (top_spec.submodule_search_locations[0] if top_spec.submodule_search_locations
                else top_spec.origin)
    parent = os.path.dirname(location)
    return location if scope.is_library_folder(parent) else parent


def run_module(module, args=(), *, grace_period=None, tf_data=False):
    """Run ``module`` as ``__main__`` like ``python -m MODULE ARGS``; returns the exit status.

    The folder holding its top-level package is the program's own code (the
    package itself when it is installed in site-packages).
    """
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
    install([_module_root(top_spec)], grace_period=grace_period, tf_data=tf_data)
    try:
        found = importlib.util.find_spec(module) is not None
    except ModuleNotFoundError as e:  # a parent package is missing, not broken
        found = not (e.name and (module + ".").startswith(e.name + "."))
    if not found:
        raise ProgramNotFoundError(f"no module named {module!r}")
    sys.argv = [module, *args]
    return _run_as_main(lambda: runpy.run_module(module, run_name="__main__", alter_sys=True))
