"""TF 1.x's ``tf.app.flags`` / ``tf.flags``, where a program's flag may be named like
one of absl.logging's.

TensorFlow 1.5-1.13 kept its flags in absl's ``FLAGS`` but did not import
``absl.logging``, so a program's ``tf.app.flags.DEFINE_string('log_dir', ...)`` was
its own flag; TensorFlow 1.14 and later import ``absl.logging``, whose ``--log_dir``,
``--verbosity`` (``-v``), ``--logtostderr``, ... are defined first, and such a program
stops at its definition with ``DuplicateFlagError: The flag 'log_dir' is defined
twice. First from absl.logging``. Run mode's define functions take such a name from
absl.logging first (absl.logging then reads the program's flag of that name, as a
value); a name defined twice by the program, or by another module, stays an error.
"""

import functools
import types

from tf1compat._tf import v1

__all__ = ["ABSL_LOGGING", "absl_logging_flag_names", "define_over_absl_logging",
           "build_flags_module"]

ABSL_LOGGING = "absl.logging"  # the module absl's FLAGS names as defining its flags


def _from_absl_logging(flag_values, name):
    """Whether ``flag_values`` holds a flag ``name`` that absl.logging defined."""
    return name in flag_values and flag_values.find_module_defining_flag(name) == ABSL_LOGGING


def absl_logging_flag_names():
    """The flag names (short names too: ``v``) absl.logging holds in absl's ``FLAGS``."""
    flag_values = v1.flags.FLAGS
    return frozenset(name for name in flag_values if _from_absl_logging(flag_values, name))


def define_over_absl_logging(define):
    """``define`` (a ``DEFINE_*`` of ``tf.compat.v1.flags``) taking a flag name that
    absl.logging defined from absl.logging first."""

    @functools.wraps(define)
    def wrapper(*args, **kwargs):
        name = args[0] if args else kwargs.get("name")
        flag_values = kwargs.get("flag_values", v1.flags.FLAGS)
        if isinstance(name, str) and _from_absl_logging(flag_values, name):
            delattr(flag_values, name)
        return define(*args, **kwargs)

    return wrapper


def build_flags_module():
    """Run mode's ``tensorflow.flags`` (also ``tf.app.flags``): a module of TensorFlow's
    flags module's names (the same objects: absl's ``FLAGS``, parsers, ...), its
    ``DEFINE_*`` functions wrapped by :func:`define_over_absl_logging`. It keeps
    TensorFlow's module name, so ``tf1compat check``'s record still takes it for absl's
    flags, whose names it does not judge."""
    base = v1.flags
    module = types.ModuleType(base.__name__, base.__doc__)
    vars(module).update({name: value for name, value in vars(base).items()
                         if not name.startswith("__")})
    vars(module).update({name: define_over_absl_logging(value)
                         for name, value in vars(base).items() if name.startswith("DEFINE_")})
    return module
