"""Small, idempotent patching tools for tf-slim's module globals and methods.

tf-slim reaches TensorFlow through module globals such as ``control_flow_ops``
(a private ``tensorflow.python`` module object). :func:`restore_missing` adds
names such a module lost; :func:`rebind_namespace` changes behaviour for one
tf-slim module only, by pointing its global at a stand-in namespace.
"""

import functools
import types

_MARK = "__tf1compat_patched__"


def _stand_in(base, replacements):
    """A module object with ``replacements`` first and ``base``'s names behind them."""
    namespace = types.ModuleType(base.__name__, base.__doc__)
    namespace.__getattr__ = functools.partial(getattr, base)  # PEP 562 fallback
    for name, value in replacements.items():
        setattr(namespace, name, value)
    return namespace


def rebind_namespace(module, attribute, replacements):
    """Make ``module.attribute.<name>`` resolve to ``replacements[name]``.

    Names already bound to the replacement are skipped; nothing happens when all
    are (a second call) or when ``module`` has no such attribute (a newer tf-slim
    that no longer uses it). Returns the names that were rebound.
    """
    base = getattr(module, attribute, None)
    if base is None:
        return []
    pending = {name: value for name, value in replacements.items()
               if getattr(base, name, None) is not value}
    if pending:
        setattr(module, attribute, _stand_in(base, pending))
    return sorted(pending)


def restore_missing(module, attribute, replacements):
    """Add to the module object ``module.attribute`` the ``replacements`` it lacks.

    Never replaces an existing name. Returns the names that were added.
    """
    base = getattr(module, attribute, None)
    missing = sorted(name for name in replacements
                     if base is not None and not hasattr(base, name))
    for name in missing:
        setattr(base, name, replacements[name])
    return missing


def replace_attribute(owner, name, value):
    """Set an existing ``owner.name`` to ``value`` unless it already is; True if changed."""
    current = getattr(owner, name, None)
    if current is None or current is value:
        return False
    setattr(owner, name, value)
    return True


def wrap_method(cls, name, make_wrapper):
    """Replace ``cls.name`` by ``make_wrapper(original)`` once; False if skipped."""
    original = cls.__dict__.get(name)
    if original is None or getattr(original, _MARK, False):
        return False
    wrapper = functools.wraps(original)(make_wrapper(original))
    setattr(wrapper, _MARK, True)
    setattr(cls, name, wrapper)
    return True
