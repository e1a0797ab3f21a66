"""Module objects assembled from parts: the building block of run mode's ``tensorflow``.

A :class:`ProxyModule` answers an attribute from, in order: its own attributes,
``lazy`` factories (called on first use, result kept; a factory that raises is
tried again on the next access, and threads racing on first use all get the
first value built), the replaceable
:data:`~tf1compat.v1.queue_runtime.QUEUE_API` table (looked up on every access,
so a replaced entry takes effect at once), ``base`` and ``fallback(name)``.
Unsupported names are :func:`unsupported` placeholders: they import and resolve
like anything else and raise :class:`~tf1compat.errors.UnsupportedTF1Error`
only when called.
"""

import threading
import types

from tf1compat.errors import UnsupportedTF1Error

__all__ = ["ProxyModule", "unsupported", "unsupported_module", "unsupported_alternative",
           "tf1_name"]

_STATE = "_tf1compat_proxy"
_ALTERNATIVE = "_tf1compat_alternative"
_FALLBACK_NAMES = "_tf1compat_fallback_names"
_publishing = threading.Lock()


def tf1_name(module_name, name=None):
    """``tensorflow.contrib.slim`` -> ``tf.contrib.slim`` (how programs spell it)."""
    dotted = module_name if name is None else f"{module_name}.{name}"
    return "tf" + dotted[len("tensorflow"):] if dotted.startswith("tensorflow") else dotted


class ProxyModule(types.ModuleType):
    """A module made of ``attributes``, ``lazy`` factories, a ``table`` and a ``base``.

    ``fallback_names`` are the names ``fallback`` answers, listed by ``dir()``.
    ``table`` is a mapping from keys ``"<path below tensorflow>.<name>"`` (e.g.
    ``"train.batch"``) to values, consulted on every access. Values found in
    ``base`` are cached as attributes (``base`` is fixed); table values never are.
    """

    def __init__(self, name, base=None, *, attributes=None, lazy=None, table=None,
                 fallback=None, fallback_names=(), doc=None):
        super().__init__(name, doc if doc is not None else getattr(base, "__doc__", None))
        vars(self).update(attributes or {})
        prefix = name.partition(".")[2]
        vars(self)[_STATE] = (base, dict(lazy or {}), table, prefix + "." if prefix else "",
                              fallback)
        vars(self)[_FALLBACK_NAMES] = frozenset(fallback_names)

    def __getattr__(self, name):
        base, lazy, table, prefix, fallback = vars(self)[_STATE]
        factory = lazy.get(name)
        if factory is not None:
            value = factory()  # if it raises, the factory stays for the next access
            with _publishing:  # the first value built is the one every thread gets
                if name in lazy:
                    setattr(self, name, value)
                    del lazy[name]
            return vars(self)[name]
        if name in vars(self):  # another thread published it since this lookup began
            return vars(self)[name]
        if table is not None and prefix + name in table:
            return table[prefix + name]
        reason = ""
        if base is not None and name != "__getattr__":
            try:
                value = getattr(base, name)
            except AttributeError as e:
                reason = f" (tf1compat run mode: {e})"
            else:
                setattr(self, name, value)
                return value
        if fallback is not None and not name.startswith("__"):
            value = fallback(name)
            if value is not None:
                setattr(self, name, value)
                return value
        raise AttributeError(
            f"module {tf1_name(self.__name__)!r} has no attribute {name!r}{reason}")

    def __dir__(self):
        base, lazy, table, prefix, _ = vars(self)[_STATE]
        names = set(vars(self)) - {_STATE, _ALTERNATIVE, _FALLBACK_NAMES} | set(lazy)
        names |= vars(self)[_FALLBACK_NAMES]
        names.update(key[len(prefix):] for key in (table or ()) if key.startswith(prefix)
                     and "." not in key[len(prefix):])
        return sorted(names | set(dir(base) if base is not None else ()))

    def __repr__(self):
        return f"<module {self.__name__!r} (tf1compat run mode)>"


class _UnsupportedMeta(type):
    """Metaclass of placeholders: calling one raises; attributes are placeholders too."""

    def __call__(cls, *args, **kwargs):
        raise UnsupportedTF1Error(cls.tf1_name, cls.alternative)

    def __getattr__(cls, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return unsupported(f"{cls.tf1_name}.{name}", cls.alternative)

    def __repr__(cls):
        return f"<unsupported {cls.tf1_name} (tf1compat run mode)>"


def unsupported(name, alternative, constants=None):
    """A placeholder for the TF1 name ``name``: importable, subclassable, and raising
    :class:`~tf1compat.errors.UnsupportedTF1Error` naming ``alternative`` when called.
    ``constants`` are class attributes it keeps with their TF1 values
    (``ModeKeys.TRAIN == "train"``), so comparisons with them stay right."""
    short = name.rpartition(".")[2]
    return _UnsupportedMeta(short, (), {**(constants or {}), "tf1_name": name,
                                        "alternative": alternative,
                                        "__doc__": f"{name}: unsupported; use {alternative}"})


def unsupported_module(module_name, alternative, constants=None):
    """A module (e.g. ``tensorflow.contrib.quantize``) all of whose names are
    placeholders; ``constants`` maps a class name to its constants (see :func:`unsupported`)."""
    constants = constants or {}
    return ProxyModule(
        module_name, attributes={_ALTERNATIVE: alternative},
        fallback=lambda name: unsupported(tf1_name(module_name, name), alternative,
                                          constants.get(name)),
        doc=f"{tf1_name(module_name)}: unsupported in tf1compat run mode; use {alternative}")


def unsupported_alternative(value):
    """What to use instead of ``value`` when it is a placeholder or an unsupported
    module; None for anything that works."""
    if isinstance(value, _UnsupportedMeta):
        return value.alternative
    if isinstance(value, ProxyModule):
        return vars(value).get(_ALTERNATIVE)
    return None
