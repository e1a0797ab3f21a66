"""Undoable changes to third-party objects: :class:`Patches` records each one.

tf-slim reaches TensorFlow through module globals such as ``control_flow_ops``
(a private ``tensorflow.python`` module object). :meth:`Patches.rebind_namespace`
changes what one tf-slim module sees by pointing its global at a stand-in module
(the TensorFlow module itself is never touched); :meth:`Patches.wrap_method`
wraps a method once. :meth:`Patches.undo` puts every recorded attribute back.
"""

import functools
import threading
import types
from collections.abc import Callable, Mapping
from typing import Any

_MARK = "__tf1compat_patched__"
_MISSING = object()


def _stand_in(base: types.ModuleType, replacements: Mapping[str, object]) -> types.ModuleType:
    """A module object with ``replacements`` first and ``base``'s names behind them."""
    namespace = types.ModuleType(base.__name__, base.__doc__)
    namespace.__getattr__ = functools.partial(getattr, base)  # type: ignore[method-assign]  # PEP 562
    for name, value in replacements.items():
        setattr(namespace, name, value)
    return namespace


def _lookup(namespace: object, name: str) -> object:
    """``namespace.name``, or _MISSING when it has no such name or cannot load it
    (TensorFlow's lazily loaded modules raise ImportError)."""
    try:
        return getattr(namespace, name)
    except (AttributeError, ImportError):
        return _MISSING


class Patches:
    """Attributes set on third-party modules and classes, and what they were."""

    def __init__(self) -> None:
        # (owner, name, value before or _MISSING), oldest first
        self._previous: list[tuple[object, str, object]] = []
        self._lock = threading.Lock()

    def __bool__(self) -> bool:
        return bool(self._previous)

    def set(self, owner: object, name: str, value: object) -> None:
        """``setattr(owner, name, value)``, remembering the value it replaces."""
        with self._lock:
            self._previous.append((owner, name, vars(owner).get(name, _MISSING)))
            setattr(owner, name, value)

    def undo(self) -> None:
        """Put back every attribute this object set, newest first."""
        with self._lock:
            while self._previous:
                owner, name, value = self._previous.pop()
                if value is _MISSING:
                    delattr(owner, name)
                else:
                    setattr(owner, name, value)

    def rebind_namespace(self, module: types.ModuleType, attribute: str,
                         replacements: Mapping[str, object], *,
                         only_missing: bool = False) -> list[str]:
        """Make ``module.attribute.<name>`` resolve to ``replacements[name]`` for
        ``module`` alone, through a stand-in module; with ``only_missing``, only the
        names the namespace lacks (a newer TensorFlow's own are kept).

        Names already resolving to the replacement are skipped (without
        ``only_missing``, looked up in the namespace's own attributes: a lazily
        loaded module is not loaded); nothing happens when
        all are (a second call) or when ``module`` has no such attribute (a newer
        tf-slim that no longer uses it). Returns the names rebound.
        """
        base = getattr(module, attribute, None)
        if base is None:
            return []
        pending = {name: value for name, value in replacements.items()
                   if (_lookup(base, name) is _MISSING if only_missing
                       else vars(base).get(name, _MISSING) is not value)}
        if pending:
            self.set(module, attribute, _stand_in(base, pending))
        return sorted(pending)

    def replace_attribute(self, owner: object, name: str, value: object) -> bool:
        """Set an existing ``owner.name`` to ``value`` unless it already is; True if changed."""
        current = getattr(owner, name, None)
        if current is None or current is value:
            return False
        self.set(owner, name, value)
        return True

    def wrap_method(self, cls: type, name: str,
                    make_wrapper: Callable[[Callable[..., Any]], Callable[..., Any]]) -> bool:
        """Replace ``cls.name`` by ``make_wrapper(original)`` once; False if skipped."""
        original = cls.__dict__.get(name)
        if original is None or getattr(original, _MARK, False):
            return False
        wrapper = functools.wraps(original)(make_wrapper(original))
        setattr(wrapper, _MARK, True)
        self.set(cls, name, wrapper)
        return True
