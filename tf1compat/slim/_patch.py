"""``patch_tf_slim()``: the installed tf-slim's data API, layers, nets and training
loops, working on current TensorFlow (the layers' part is in ``_layers``).

What breaks on TF >= 2.13: ``tf_slim.data.tfexample_decoder`` calls
``control_flow_ops.case`` / ``.cond`` (``Image``, ``BackupHandler``) and
``array_ops.stack`` (``Tensor`` with ``shape_keys``, ``SparseTensor``) on private
``tensorflow.python`` modules that no longer define them. Every
``DatasetDataProvider`` test fails for the same reason: its datasets decode
images with ``Image``.

The fix gives ``tfexample_decoder`` stand-in modules for its ``control_flow_ops``
and ``array_ops`` globals, with the three names bound to the public
``tf.compat.v1.case``, ``tf.compat.v1.cond`` and ``tf.stack`` -- the very function
objects TensorFlow moved -- and every other name TensorFlow's own (reached
through tf-slim's globals, so tf1compat imports nothing private). TensorFlow's
modules are never changed: other code in the process sees them as they are.
It repairs handler instances and user subclasses that already exist, and legacy
callbacks that call ``control_flow_ops.case`` through tf-slim's module (tf-slim's
own ``ItemHandlerCallback`` test does). Names are only added, never replaced, so on
an already-fixed or newer tf-slim / TensorFlow nothing changes. No file in
site-packages is edited.

Nothing is changed on import: :class:`TfSlimRepair` applies the changes when asked
and can undo each of them. The process has one repair with two kinds of holders:
:func:`patch_tf_slim` (idempotent; tf1compat's slim data modules, ``get_split`` and
``to_tf_data`` call it whenever they hand out tf-slim objects) and
:func:`unpatch_tf_slim` take and let go the process's hold; :func:`tf_slim_patched`
holds it for a block (run mode, while installed). tf-slim is put back when the last
holder lets go.

tf1compat's additions are applied once each, to tf-slim's modules only:

* ``Image(dtype=tf.uint16)`` decodes 16-bit PNGs at full depth (tf-slim <= 1.1.0
  reads them at 8 bits);
* clear errors: unknown items (provider and decoders) raise
  :class:`~tf1compat.errors.UnknownItemError`; data sources matching no file
  raise :class:`~tf1compat.errors.PipelineConfigError` when the provider is
  built; a missing ``keys_to_features`` key fails naming the key, file and
  byte offset of the record;
* ``parallel_read`` queues its files with :func:`tf1compat.string_input_producer`,
  so :class:`~tf1compat.SessionIterator` can name the file a reader failed on.
"""

import contextlib
import importlib.metadata
import re
import threading
from collections.abc import Iterator
from typing import Any

from tf1compat._tf import tf, v1
from tf1compat.pipeline import queues
from tf1compat.slim import _checks, _image, _layers, _records
from tf1compat.slim._layers import Rebinding
from tf1compat.slim._namespace import Patches

_LAST_RELEASE_WITH_8_BIT_PNG = (1, 1, 0)


def _reads_png16_at_8_bits() -> bool:
    """True for tf-slim releases whose ``Image`` handler truncates 16-bit PNGs."""
    numbers = re.findall(r"\d+", importlib.metadata.version("tf-slim"))[:3]
    return tuple(int(n) for n in numbers) <= _LAST_RELEASE_WITH_8_BIT_PNG


def _short_name(owner: Any) -> str:
    """``tfexample_decoder`` for a tf-slim module, ``Image`` for a class."""
    name: str = getattr(owner, "__qualname__", owner.__name__.rpartition(".")[2])
    return name


class TfSlimRepair:
    """The changes that make ``tf_slim.data`` work on current TensorFlow, applied to
    tf-slim's modules and classes only, and undone when the last of the callers
    of :meth:`apply` calls :meth:`release`."""

    def __init__(self) -> None:
        self._patches = Patches()
        self._holders = 0
        self._lock = threading.RLock()

    @property
    def applied(self) -> bool:
        """True while changes this object made are in place."""
        return bool(self._patches)

    def apply(self) -> list[str]:
        """Fix ``tf_slim.data`` in place; returns the names changed (``[]`` when
        tf-slim is already fixed, by this object or another)."""
        with self._lock:
            self._holders += 1
            return self._apply()

    def release(self) -> None:
        """One caller of :meth:`apply` is done: after the last, tf-slim's modules and
        classes are put back as they were."""
        with self._lock:
            self._holders = max(self._holders - 1, 0)
            if not self._holders:
                self._patches.undo()

    def _apply(self) -> list[str]:
        from tf_slim.data import (
            data_provider,
            dataset_data_provider,
            parallel_reader,
            tfexample_decoder,
        )

        namespaces = [
            *moved_names(),
            (tfexample_decoder, "parsing_ops",
             {"parse_single_example": _records.parse_single_example}, False),
            (parallel_reader, "tf_input",
             {"string_input_producer": queues.string_input_producer}, False),
        ]
        attributes = [
            (parallel_reader, "get_data_files", _checks.get_data_files),
            (data_provider.DataProvider, "_validate_items", _checks.validate_provider_items),
        ]
        methods = [
            (dataset_data_provider.DatasetDataProvider, "__init__",
             _checks.checking_provider_arguments),
            (tfexample_decoder.TFExampleDecoder, "decode", _checks.decode_checking_items),
            (tfexample_decoder.TFSequenceExampleDecoder, "decode",
             _checks.decode_checking_items),
        ]
        if _reads_png16_at_8_bits():
            methods.append((tfexample_decoder.Image, "_decode", _image.decode_with_png16))

        changed = []
        for module, attribute, replacements, only_missing in namespaces:
            changed += [f"{_short_name(module)}.{attribute}.{name}" for name in
                        self._patches.rebind_namespace(module, attribute, replacements,
                                                       only_missing=only_missing)]
        for owner, name, value in attributes:
            if self._patches.replace_attribute(owner, name, value):
                changed.append(f"{_short_name(owner)}.{name}")
        for cls, name, make_wrapper in methods:
            if self._patches.wrap_method(cls, name, make_wrapper):
                changed.append(f"{_short_name(cls)}.{name}")
        return changed


def moved_names() -> list[Rebinding]:
    """``(tf-slim module, global name, replacements, only_missing)`` for what tf-slim
    needs to run on current TensorFlow (the private TensorFlow names it uses that
    TensorFlow moved, and ``batch_norm``'s Keras 2 layer), without tf1compat's
    additions; ``tf1compat port`` writes the same repair beside a ported program."""
    from tf_slim.data import tfexample_decoder

    return [
        (tfexample_decoder, "control_flow_ops", {"case": v1.case, "cond": v1.cond}, True),
        (tfexample_decoder, "array_ops", {"stack": tf.stack}, True),
        *_layers.layer_namespaces(),
    ]


_PROCESS_REPAIR = TfSlimRepair()     # the process's one repair; its holders below
_process_hold = False   # whether patch_tf_slim() holds it (run modes hold it their own way)
_holding = threading.Lock()


def patch_tf_slim() -> list[str]:
    """Fix ``tf_slim.data`` for this process; returns the names changed.

    After it, an unmodified ``import tf_slim as slim`` script runs on current
    TensorFlow. Idempotent: a second call changes nothing and returns ``[]``, and one
    :func:`unpatch_tf_slim` undoes it however many calls there were (tf1compat's slim
    modules, ``get_split`` and ``to_tf_data`` of a slim ``Dataset`` call it when they
    are used).
    """
    global _process_hold
    with _holding:
        if _process_hold:
            return []
        _process_hold = True
        return _PROCESS_REPAIR.apply()


def unpatch_tf_slim() -> None:
    """Undo :func:`patch_tf_slim`: tf-slim's modules and classes are as they were,
    unless a run mode or a :func:`tf_slim_patched` block still holds the repair (then
    when the last of them ends). Does nothing when tf-slim is not patched."""
    global _process_hold
    with _holding:
        if _process_hold:
            _process_hold = False
            _PROCESS_REPAIR.release()


@contextlib.contextmanager
def tf_slim_patched() -> Iterator[list[str]]:
    """tf-slim repaired inside the block (as :func:`patch_tf_slim` repairs it; yields
    the names changed, ``[]`` when it was repaired already). Blocks count, with
    ``patch_tf_slim``'s hold: tf-slim is put back when the last of them lets go. Run
    mode holds the repair this way while it is installed."""
    changed = _PROCESS_REPAIR.apply()
    try:
        yield changed
    finally:
        _PROCESS_REPAIR.release()
