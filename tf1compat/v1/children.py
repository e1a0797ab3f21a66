"""Child processes in the program's TF1 world: ``multiprocessing``'s spawn and
forkserver start methods.

A forked child inherits run mode with the process. A spawned one (and one of the
forkserver) is a new interpreter that imports the program's ``__main__`` again
from the preparation data its parent pickles for it. Run mode adds to that data an
object whose unpickling installs a run mode with the parent's roots and settings
(:func:`install_in_child`), and the child unpickles it before it imports the
program. The change is :func:`preparation_with_run_mode` around
``multiprocessing.spawn.get_preparation_data``, made and undone by run mode.
"""

__all__ = ["preparation_with_run_mode", "install_in_child"]

_KEY = "tf1compat_run_mode"


def install_in_child(roots, grace_period, tf_data):
    """Install run mode for ``roots`` in this (child) process unless one is in place."""
    from tf1compat.v1.run_mode import RunMode, installed_run_mode

    if installed_run_mode() is None:
        RunMode(roots, grace_period=grace_period, tf_data=tf_data).install()
    return roots


class _RunModeInChild:
    """Pickles as a call of :func:`install_in_child` with run mode's settings."""

    def __init__(self, run_mode):
        self.settings = (run_mode.scope.roots, run_mode.grace_period, run_mode.tf_data)

    def __reduce__(self):
        return install_in_child, self.settings


def preparation_with_run_mode(get_preparation_data, run_mode):
    """``get_preparation_data`` whose data also installs ``run_mode``'s settings in
    the child (unpickled before the child imports the program)."""

    def with_run_mode(name):
        data = get_preparation_data(name)
        data[_KEY] = _RunModeInChild(run_mode)
        return data

    with_run_mode.__wrapped__ = get_preparation_data
    return with_run_mode
