"""tf1compat's exception hierarchy: each error carries where and what as attributes.

Every class also derives from the builtin a caller would catch (``ValueError`` for
bad input, ``AssertionError`` for a failed pipeline comparison), so code written
against TensorFlow's or tf-slim's behaviour keeps working.
"""

import os
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from tf1compat._typing import AnyPath

_Error = TypeVar("_Error", bound="Tf1CompatError")


def display_path(path: AnyPath) -> str:
    """``path`` as shown in messages: as is when it prints cleanly, else its ``repr``:
    of its bytes when they are not UTF-8 (``b'caf\\xe9.tfrecord'``), of the text
    when it holds newlines or other control characters."""
    shown = os.fsdecode(path)
    try:
        shown.encode("utf-8")
    except UnicodeEncodeError:
        return repr(os.fsencode(path))
    return shown if shown.isprintable() else repr(shown)


def _rebuild_error(cls: type[_Error], args: tuple[Any, ...],
                   attributes: dict[str, Any]) -> _Error:
    error = cls.__new__(cls, *args)
    error.args = args
    error.__dict__.update(attributes)
    return error


class Tf1CompatError(Exception):
    """Base of all tf1compat errors. They pickle with their attributes, so an error
    raised in a conversion worker reaches the caller whole."""

    def __reduce__(self) -> tuple[Callable[..., "Tf1CompatError"], tuple[Any, ...]]:
        return _rebuild_error, (type(self), self.args, self.__dict__)


class PipelineConfigError(Tf1CompatError, ValueError):
    """An argument or input of a pipeline is invalid, caught at graph-build time.

    Attributes: ``argument`` (the parameter name), ``path`` (the file concerned or
    None), ``expected`` (what would have been valid, or None).
    """

    def __init__(self, message: str, *, argument: str | None, path: AnyPath | None = None,
                 expected: object = None) -> None:
        super().__init__(message)
        self.argument = argument
        self.path = path
        self.expected = expected


class ArgumentTypeError(PipelineConfigError, TypeError):
    """An argument is of the wrong kind (a string for a count, ``True`` for a number):
    a ``TypeError``, and a :class:`PipelineConfigError` with the same attributes."""


class CorruptRecordError(Tf1CompatError, ValueError):
    """A TFRecord file's framing is damaged.

    Attributes: ``path``, ``index`` (0-based record number), ``offset`` (byte
    offset of the record's start), ``reason`` (e.g. "data CRC mismatch ...").
    """

    def __init__(self, path: AnyPath, index: int, offset: int, reason: str) -> None:
        super().__init__(f"{display_path(path)}: record {index} at byte {offset}: {reason}")
        self.path = path
        self.index = index
        self.offset = offset
        self.reason = reason


class NotATFRecordFileError(CorruptRecordError):
    """A file read as TFRecords is not one: no record header at its start, nor in the
    stretch after it where a damaged first record's successor would be (a PNG, a text
    file, zeros). ``index`` and ``offset`` are 0; ``reason`` says what was found."""

    def __init__(self, path: AnyPath, reason: str) -> None:
        super().__init__(path, 0, 0, reason)
        self.args = (f"{display_path(path)}: not a TFRecord file: {reason}",)

    def __str__(self) -> str:
        return str(self.args[0])


class DatasetFormatError(Tf1CompatError, ValueError):
    """A dataset file (``labels.txt``, a batch file, an image) is not what it should be.

    Attributes: ``path``, ``index`` (record or line number, or None for file-level
    problems), ``expected`` (the rule that was broken).
    """

    def __init__(self, message: str, *, path: AnyPath | None, index: int | None = None,
                 expected: object = None) -> None:
        super().__init__(message)
        self.path = path
        self.index = index
        self.expected = expected


class CifarFormatError(DatasetFormatError):
    """A CIFAR binary batch file does not have the expected layout or labels."""


class ImageFormatError(DatasetFormatError):
    """A file of an image folder is not an image the converter can take (unreadable,
    not an image, or a format slim's ``Image`` handler cannot decode)."""


class IncompleteOutputError(DatasetFormatError):
    """Files read from a conversion's output folder are not its complete committed set:
    a conversion into the folder is under way or was cut short, or the files differ
    from the folder's manifest.

    Attributes: ``path`` (the folder), ``missing`` (names the commit has and the
    files read lack), ``extra`` (names read that the manifest does not list, or with
    another size).
    """

    def __init__(self, message: str, *, path: AnyPath, missing: Iterable[str] = (),
                 extra: Iterable[str] = ()) -> None:
        super().__init__(message, path=path,
                         expected="the files of the folder's last finished conversion")
        self.missing = list(missing)
        self.extra = list(extra)


class UnknownItemError(Tf1CompatError, ValueError):
    """An item name is not provided by a decoder, provider or dataset.

    Attributes: ``item`` (the name asked for), ``valid_items`` (sorted choices).
    """

    def __init__(self, item: str, valid_items: Iterable[str]) -> None:
        self.item = item
        self.valid_items = sorted(valid_items)
        super().__init__(f"unknown item {item!r}; valid items: {self.valid_items}")


class PipelineMismatchError(Tf1CompatError, AssertionError):
    """Two pipelines did not deliver the same examples; ``report`` says how."""

    def __init__(self, report: object) -> None:
        super().__init__(str(report))
        self.report = report


class LoweringError(Tf1CompatError, ValueError):
    """A queue pipeline cannot be lowered to ``tf.data`` without changing what it delivers.

    Attributes: ``op`` (name of the graph op that stops the lowering), ``op_type``
    (its type, e.g. ``"Placeholder"``), ``reason`` (why it cannot be lowered) and
    ``plan`` (the ``tf.data`` steps lowered downstream of that op, or None).
    """

    def __init__(self, op: str, op_type: str, reason: str, plan: str | None = None) -> None:
        super().__init__(op, op_type, reason)
        self.op = op
        self.op_type = op_type
        self.reason = reason
        self.plan = plan

    def __str__(self) -> str:
        message = f"cannot lower op '{self.op}' ({self.op_type}) to tf.data: {self.reason}"
        if self.plan:
            message += f"\nlowered downstream of it: {self.plan}"
        return message


class UnsupportedTF1Error(Tf1CompatError, NotImplementedError):
    """A TF1 name that run mode cannot provide (a ``tf.contrib`` part with no
    counterpart on TensorFlow 2) was called.

    Attributes: ``name`` (as the program wrote it, e.g.
    ``tf.contrib.quantize.create_training_graph``), ``alternative`` (what to use
    on TensorFlow 2).
    """

    def __init__(self, name: str, alternative: str) -> None:
        super().__init__(f"{name} is not available in tf1compat run mode: TensorFlow 2 has "
                         f"no counterpart for it. Use instead: {alternative}")
        self.name = name
        self.alternative = alternative


class QueueRunnersNotStartedError(Tf1CompatError, RuntimeError):
    """``sess.run`` waited on queues whose queue runners were never started.

    Attributes: ``queues`` (names of the queues waited on), ``grace_period``
    (seconds waited).
    """

    def __init__(self, queues: Iterable[str], grace_period: float) -> None:
        queues = tuple(queues)
        names = ", ".join(repr(q) for q in queues)
        super().__init__(
            f"sess.run waited {grace_period:g} s on queue {names}, whose queue runners were "
            "never started for this session, so nothing will ever fill it. Start them after "
            "creating the session: `coord = tf.train.Coordinator(); threads = "
            "tf.train.start_queue_runners(sess=sess, coord=coord)` "
            "(tf.train.MonitoredTrainingSession, Supervisor and slim.learning.train start "
            "them for you)")
        self.queues = queues
        self.grace_period = grace_period


def _one_edit_apart(a: str, b: str) -> bool:
    """Whether ``b`` is ``a`` with one character changed, added or left out."""
    if abs(len(a) - len(b)) > 1 or a == b:
        return False
    head = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y),
                min(len(a), len(b)))
    return a[head + (len(a) >= len(b)):] == b[head + (len(b) >= len(a)):]


class UnknownProtocolError(Tf1CompatError, ValueError):
    """A URL's protocol (``s4://``) is none that fsspec knows.

    Attributes: ``url`` (as given), ``protocol``, ``known`` (fsspec's protocols).
    """

    def __init__(self, url: str, protocol: str, known: Iterable[str]) -> None:
        known = list(known)
        close = [name for name in known if _one_edit_apart(protocol, name)]
        guess = f"did you mean {', '.join(f'{p}://' for p in close)}? " if close else ""
        super().__init__(f"{url}: unknown protocol {protocol}://; {guess}expected a local "
                         "path or a URL of a protocol fsspec knows (s3://, gs://, az://, "
                         "memory://, ...: fsspec.available_protocols())")
        self.url = url
        self.protocol = protocol
        self.known = known


class DataServiceError(Tf1CompatError, ConnectionError):
    """A tf.data service dispatcher cannot be reached.

    Attributes: ``address`` (``grpc://HOST:PORT`` as given), ``timeout`` (seconds
    waited for it).
    """

    def __init__(self, message: str, *, address: str, timeout: float) -> None:
        super().__init__(message)
        self.address = address
        self.timeout = timeout


class DaskClusterError(Tf1CompatError, ConnectionError):
    """A Dask cluster cannot run a conversion's tasks: its scheduler stopped answering
    or was lost, its workers cannot import what the tasks need, or it has had no
    worker for too long (workers that die on their first task leave none).

    Attributes: ``scheduler`` (its address), ``workers_lost`` (the addresses of the
    workers that left during the run).
    """

    def __init__(self, message: str, *, scheduler: str,
                 workers_lost: Iterable[str] = ()) -> None:
        super().__init__(message)
        self.scheduler = scheduler
        self.workers_lost = list(workers_lost)
