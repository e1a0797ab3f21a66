"""The names run mode's ``tensorflow`` holds, recorded so ``tf1compat check`` needs
no TensorFlow.

:func:`record_names` walks run mode's ``tensorflow`` module (it imports TensorFlow)
and returns, for each module of the tree, its public names and what each is. The
record stored with tf1compat is ``tf1_names.json.gz`` next to this file: one per
TensorFlow minor version of the supported range (:func:`recorded_minors`), each
written by ``python -m tf1compat.v1.tf1_names`` in an environment of that TensorFlow
(it adds or replaces the installed minor's). :func:`recorded_names` gives the
installed TensorFlow's (read from its distribution's metadata, TF-free), the newest
minor's when none or an unrecorded one is installed. A test records the installed
TensorFlow's and compares, so a TensorFlow that changes the names fails by name.

The file holds the newest minor's record whole and, under ``"older"``, each older
minor's differences from it (a module or name set to null: not in that minor): the
minors differ by a few dozen names TensorFlow added (``tf.image.decode_webp`` since
2.20, ...), so a second whole record per minor would repeat thousands of names.

A module's entry maps each name to ``"m:<dotted name>"`` (a module of the tree,
listed under that name), ``"o"`` (a module of another package, tf-slim's
included, whose names are not judged), ``"u"`` (a placeholder of run mode: an
unsupported ``tf.contrib`` name), ``"u:<dotted name>"`` (an unsupported module;
its entry lists only the names it has that are not placeholders), ``""``
(anything else), or ``"!<message>"`` (getting it raises AttributeError with that
message). A module whose names cannot be listed
(TensorFlow's ``tf.layers`` under Keras 3) maps ``"*"`` to the message every name
gets, with ``{name}`` in place of the name. Left out: ``tensorflow.python`` /
``tensorflow.core`` (TensorFlow's private modules, not judged); not walked:
``tensorflow.compat.v2`` (TensorFlow 2 itself).

The stored record is run mode's as ``tf1compat run`` sets it up, with Keras 2
(:func:`record_run_mode_names`): its ``"without_keras2"`` maps a module to the
names in it that Keras 2 gives and TensorFlow's Keras 3 does not (``tf.layers.dense``,
``tf.contrib.rnn.BasicLSTMCell``), each to the message a program gets without tf-keras
(``""``: the name is missing).
"""

import functools
import gzip
import json
import os
import subprocess
import sys
import types

from tf1compat._versions import keras2_install_command, minor_version, tensorflow_version
from tf1compat.v1.keras2 import KERAS2_VARIABLE, keras2_installed

__all__ = ["record_names", "record_run_mode_names", "recorded_names", "recorded_minors",
           "RECORD_PATH"]

RECORD_PATH = os.path.join(os.path.dirname(__file__), "tf1_names.json.gz")
_NOT_WALKED = frozenset({"tensorflow.compat.v2"})
_PRIVATE_MODULES = frozenset({"tensorflow.python", "tensorflow.core"})  # listed once loaded
_PROBE = "__tf1compat_probe__"
_WALKED_PACKAGES = ("tensorflow", "keras", "tf_keras")  # API modules; tf-slim's are not
_PRIVATE_PACKAGES = ("tensorflow.python", "tensorflow.core")


def _kind(value, canonical, pending, dotted):
    from tf1compat.v1.proxy import ProxyModule, unsupported_alternative

    unsupported = unsupported_alternative(value) is not None
    if unsupported and not isinstance(value, types.ModuleType):
        return "u"
    if not isinstance(value, types.ModuleType):
        return ""
    name = vars(value).get("__name__")  # None: a lazy loader of TensorFlow's API
    if not isinstance(value, ProxyModule) and name is not None and (
            not name.startswith(_WALKED_PACKAGES) or name.startswith(_PRIVATE_PACKAGES)):
        return "o"
    if id(value) not in canonical:
        canonical[id(value)] = dotted
        pending.append((dotted, value))
    return ("u:" if unsupported else "m:") + canonical[id(value)]


def _entry(module, canonical, pending, path):
    from tf1compat.v1.proxy import unsupported_alternative

    try:
        names = sorted(n for n in dir(module) if not n.startswith("_")
                       and f"{path}.{n}" not in _PRIVATE_MODULES)
        if unsupported_alternative(module) is not None:  # its real names only
            names = [n for n in names if unsupported_alternative(getattr(module, n)) is None]
    except Exception:  # noqa: BLE001 - a lazy module that cannot list its names
        try:
            getattr(module, _PROBE)
        except Exception as e:  # noqa: BLE001 - what every name gets, recorded
            return {"*": "!" + str(e).replace(_PROBE, "{name}")}
        return {}
    entry = {}
    for name in names:
        dotted = f"{path}.{name}"
        try:
            value = getattr(module, name)
        except Exception as e:  # noqa: BLE001 - what the program would get, recorded
            entry[name] = "!" + str(e)
            continue
        entry[name] = ("m:" + dotted) if dotted in _NOT_WALKED else \
            _kind(value, canonical, pending, dotted)
    return entry


def record_names():
    """``{"tensorflow": version, "modules": {dotted module name: entry}}`` for run
    mode's ``tensorflow`` as the installed TensorFlow and tf-slim give it."""
    from tf1compat._tf import tf
    from tf1compat.v1.namespace import tensorflow_module

    top = tensorflow_module()
    canonical = {id(top): "tensorflow"}
    pending = [("tensorflow", top)]
    modules = {}
    while pending:
        path, module = pending.pop()
        modules[path] = _entry(module, canonical, pending, path)
    return {"tensorflow": tf.__version__, "modules": modules}


def _start_recording(keras2):
    """:func:`record_names` in a new interpreter, with Keras 2 or without: the process."""
    code = ("import json; from tf1compat.v1.tf1_names import record_names; "
            "print(json.dumps(record_names()))")
    return subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True,
                            env={**os.environ, KERAS2_VARIABLE: str(int(keras2))})


def _recorded(process):
    out, err = process.communicate()
    if process.returncode != 0:
        raise RuntimeError(f"recording run mode's names failed:\n{err}")
    return json.loads(out.splitlines()[-1])


_PLACEHOLDER_WITHOUT_KERAS2 = "tf1compat run mode gives `{name}` only with Keras 2"


def _needing_keras2(with_keras2, without):
    """``{module: {name: message}}``: the names ``with_keras2`` gives that ``without``
    does not (missing, raising, or a placeholder of run mode's: ``tf.contrib.rnn``'s
    cells), with the message ``without`` records for them (``""``: missing)."""
    needing = {}
    for module, entry in with_keras2.items():
        other = without.get(module)
        if other is None:  # a module reached only through a name listed here
            continue
        for name, kind in entry.items():
            missing = other.get(name, other.get("*"))
            if name == "*" or kind.startswith(("!", "u")):
                continue
            if missing == "u":
                needing.setdefault(module, {})[name] = _PLACEHOLDER_WITHOUT_KERAS2
            elif missing is None or missing.startswith("!"):
                needing.setdefault(module, {})[name] = (missing or "")[1:]
    return needing


def record_run_mode_names():
    """The record as ``tf1compat run`` gives the names: with Keras 2 (tf-keras must be
    installed), and ``"without_keras2"`` (see the module docstring). Each half is
    recorded in a fresh process (Keras is chosen when TensorFlow loads), both at once."""
    if not keras2_installed():
        raise RuntimeError(
            f"recording run mode's names needs tf-keras: {keras2_install_command()}")
    recordings = [_start_recording(keras2) for keras2 in (True, False)]  # side by side
    record, without = (_recorded(process) for process in recordings)
    record["without_keras2"] = _needing_keras2(record["modules"], without["modules"])
    return record


_PARTS = ("modules", "without_keras2")


def _minor_key(minor):
    return tuple(int(part) for part in minor.split("."))


def _difference(newest, older):
    """``older``'s part (``{module: {name: kind}}``) as changes to ``newest``'s: a
    module or name mapped to None is not in ``older``."""
    changes = {}
    for module in newest.keys() | older.keys():
        if module not in older:
            changes[module] = None
        elif module not in newest:
            changes[module] = older[module]
        elif newest[module] != older[module]:
            new, old = newest[module], older[module]
            changes[module] = {name: old.get(name) for name in new.keys() | old.keys()
                               if new.get(name) != old.get(name)}
    return changes


def _with_changes(newest, changes):
    """``newest``'s part with :func:`_difference`'s ``changes`` made."""
    part = {module: dict(entry) for module, entry in newest.items()}
    for module, entry in changes.items():
        if entry is None:
            part.pop(module, None)
            continue
        target = part.setdefault(module, {})
        for name, kind in entry.items():
            if kind is None:
                target.pop(name, None)
            else:
                target[name] = kind
    return part


def _minor_record(stored, minor):
    """The record of TensorFlow ``minor`` in the ``stored`` file's data (the newest's
    when that minor is not recorded)."""
    changes = stored.get("older", {}).get(minor)
    if changes is None:
        return {key: stored[key] for key in ("tensorflow", *_PARTS)}
    return {"tensorflow": changes["tensorflow"],
            **{part: _with_changes(stored[part], changes[part]) for part in _PARTS}}


def _stored_with(stored, record):
    """The file's data with ``record`` (of one TensorFlow) added, or replacing the
    record of its minor version."""
    records = {minor_version(record["tensorflow"]): record}
    if stored is not None:
        for minor in [minor_version(stored["tensorflow"]), *stored.get("older", {})]:
            records.setdefault(minor, _minor_record(stored, minor))
    newest_minor = max(records, key=_minor_key)
    newest = records.pop(newest_minor)
    older = {minor: {"tensorflow": other["tensorflow"],
                     **{part: _difference(newest[part], other[part]) for part in _PARTS}}
             for minor, other in records.items()}
    return {**newest, "older": older}


@functools.cache
def _stored():
    with gzip.open(RECORD_PATH, "rt", encoding="utf-8") as f:
        return json.load(f)


def recorded_minors():
    """The TensorFlow minor versions the stored record holds, oldest first."""
    stored = _stored()
    return sorted([minor_version(stored["tensorflow"]), *stored.get("older", {})],
                  key=_minor_key)


@functools.cache
def recorded_names():
    """The stored record of the installed TensorFlow's minor version (see the module
    docstring): ``{"tensorflow": version, "modules": ..., "without_keras2": ...}``."""
    installed = tensorflow_version()
    return _minor_record(_stored(), minor_version(installed) if installed else "")


def _write_record(path=RECORD_PATH):
    stored = None
    if os.path.exists(path):
        with gzip.open(path, "rt", encoding="utf-8") as f:
            stored = json.load(f)
    data = json.dumps(_stored_with(stored, record_run_mode_names()), sort_keys=True,
                      separators=(",", ":"))
    with gzip.GzipFile(path, "wb", mtime=0) as f:  # the same bytes for the same names
        f.write(data.encode("utf-8"))


if __name__ == "__main__":
    _write_record(sys.argv[1] if len(sys.argv) > 1 else RECORD_PATH)
