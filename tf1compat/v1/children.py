"""Child processes in the program's TF1 world: ``multiprocessing``'s spawn and
forkserver start methods.

A forked child inherits run mode with the process. A spawned one (and one of the
forkserver) is a new interpreter that imports the program's ``__main__`` again
from the preparation data its parent pickles for it. :func:`preparation_with` adds
to that data an object whose unpickling installs run mode in the child, before the
child imports the program: the run mode's
:class:`~tf1compat.v1.settings.RunSettings`, pickled whole, so the child runs with
the parent's roots and every setting. Run mode makes the change around
``multiprocessing.spawn.get_preparation_data`` and undoes it when left.
"""

__all__ = ["preparation_with"]

_KEY = "tf1compat_run_mode"


def preparation_with(get_preparation_data, installer):
    """``get_preparation_data`` whose data also holds ``installer``, an object whose
    unpickling (before the child imports the program) installs run mode there."""

    def with_installer(name):
        data = get_preparation_data(name)
        data[_KEY] = installer
        return data

    with_installer.__wrapped__ = get_preparation_data
    return with_installer
