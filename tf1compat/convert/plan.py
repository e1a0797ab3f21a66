"""The plan of a conversion: shard tasks, their results, and writing one task.

A plan is a deterministic list of :class:`ShardTask`: the output file, the references to
its inputs (file names, record indices, items) and how to turn them into records. Big
shards are cut into parts (uncompressed TFRecord framing concatenates into the same
bytes one writer would produce), so that every core has work even for one output file.
:func:`write_shard` writes one task to a temporary name and renames it (into an object
store: a local file uploaded as one object), so a retried task writes the same bytes.
Shard file names are built here, by :func:`shard_names`.
"""

import dataclasses
import hashlib
import json
import marshal
import os
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import cloudpickle

from tf1compat.convert.scratch import scratch_folder
from tf1compat.records import _fs
from tf1compat.records._files import atomic_output
from tf1compat.records.tfrecord import TFRecordWriter

_RESULT_SUFFIX = ".result.json"


def shard_names(prefix: str, num_shards: int, separator: str = "-") -> list[str]:
    """The file names of ``num_shards`` shards: ``PREFIX-00000-of-00004.tfrecord`` ...
    (``separator="_"``: slim's ``PREFIX_00000-of-00004.tfrecord``)."""
    return [f"{prefix}{separator}{i:05d}-of-{num_shards:05d}.tfrecord"
            for i in range(num_shards)]


@dataclasses.dataclass(frozen=True)
class SkippedInput:
    """An input a task left out (``on_error="skip"``): its reference and why."""

    reference: str
    reason: str

    def __str__(self) -> str:
        return f"{self.reference} ({self.reason})"


@dataclasses.dataclass(frozen=True)
class ShardTask:
    """One output shard, or one part of it: everything a worker needs, picklable.

    ``inputs`` is a sequence (tuple, list, range) of references, one per input;
    ``to_records(inputs)`` yields the records (``bytes``) of the task in order, or a
    :class:`SkippedInput` for an input it leaves out; it must give the same records
    every time it runs. Part ``p`` of ``num_parts`` of shard ``name`` is written as
    ``name.part-0000p-of-0000N`` and the parts are concatenated at the commit.
    """

    name: str
    inputs: Sequence[Any]
    to_records: Callable[[Sequence[Any]], Iterable[bytes | SkippedInput]]
    part: int = 0
    num_parts: int = 1
    compression: str | None = None

    @property
    def file_name(self) -> str:
        """The name this task writes in the staging folder."""
        if self.num_parts == 1:
            return self.name
        return f"{self.name}.part-{self.part:05d}-of-{self.num_parts:05d}"


@dataclasses.dataclass(frozen=True)
class Plan:
    """What a conversion writes: its shard ``tasks``, the ``extra_files`` committed with
    them (``{name: text}``, e.g. ``labels.txt``) and ``stale``, glob patterns of earlier
    outputs in the output folder that this one replaces (removed at the commit)."""

    tasks: list[ShardTask]
    extra_files: dict[str, str] = dataclasses.field(default_factory=dict)
    stale: tuple[str, ...] = ()


@dataclasses.dataclass(frozen=True)
class ShardResult:
    """What :func:`write_shard` wrote: ``records`` records, ``size_bytes`` bytes, and the
    inputs it ``skipped``."""

    file_name: str
    records: int
    size_bytes: int
    skipped: tuple[SkippedInput, ...] = ()


def build_tasks(name: str, inputs: Sequence[Any],
                to_records: Callable[[Sequence[Any]], Iterable[bytes | SkippedInput]], *,
                max_part_inputs: int, compression: str | None = None) -> list[ShardTask]:
    """The tasks writing ``inputs`` (a sequence that slices: tuple, list, range) into
    shard ``name``: parts of at most ``max_part_inputs`` inputs (one part for a
    compressed shard, whose stream cannot be concatenated into the same bytes)."""
    size = max(len(inputs), 1) if compression else max_part_inputs
    starts = range(0, len(inputs), size) or [0]     # an empty shard is one empty part
    return [ShardTask(name, inputs[start:start + size], to_records, part, len(starts),
                      compression) for part, start in enumerate(starts)]


def write_shard(task: ShardTask, directory: str,
                progress: Callable[[int], object] | None = None) -> ShardResult:
    """Write ``task``'s records to ``directory/task.file_name`` (a temporary name first,
    renamed when complete; for a URL ``directory``, a local temporary file uploaded as
    one object) and record the result beside it; returns the ShardResult.
    ``progress(n)`` is called after each input.

    An error keeps its type and gains where it happened: attributes ``task`` (the
    shard's file name), ``input_index`` and ``input`` (the input's reference; None
    after the last input, e.g. a full disk at the end), and a note saying so."""
    if not _fs.is_url(directory):
        result = _write_records(task, _fs.local_path(directory), progress)
    else:
        with scratch_folder("shard") as local:
            result = _write_records(task, local, progress)
            try:
                fs, base = _fs.filesystem(directory)
                fs.put_file(os.path.join(local, task.file_name), f"{base}/{task.file_name}")
            except Exception as e:
                _add_task_context(e, task, len(task.inputs))
                raise
    save_result(directory, result)
    return result


def _write_records(task: ShardTask, directory: str,
                   progress: Callable[[int], object] | None) -> ShardResult:
    """Write ``task``'s records to the local ``directory``; its ShardResult."""
    path = os.path.join(directory, task.file_name)
    skipped = []
    done = 0        # inputs of the task handled
    try:
        with TFRecordWriter(path, task.compression) as writer:
            for record in task.to_records(task.inputs):
                if isinstance(record, SkippedInput):
                    skipped.append(record)
                else:
                    writer.write(record)
                done += 1
                if progress is not None:
                    progress(1)
    except Exception as e:
        _add_task_context(e, task, done)
        raise
    return ShardResult(task.file_name, writer.count, os.path.getsize(path), tuple(skipped))


def _add_task_context(error: Exception, task: ShardTask, done: int) -> None:
    """Give ``error`` the task and the input it was on (see :func:`write_shard`)."""
    if getattr(error, "task", None) is not None:
        return                                  # a nested write_shard said it first
    reference = task.inputs[done] if done < len(task.inputs) else None
    error.task, error.input_index, error.input = (  # type: ignore[attr-defined]  # any error
        task.file_name, done, reference)
    where = (f"input {done} of {len(task.inputs)} ({_short_repr(reference)})"
             if reference is not None else f"after its {len(task.inputs)} inputs")
    if hasattr(error, "add_note"):              # Python 3.11+: shown in tracebacks
        error.add_note(f"while writing shard task {task.file_name}, {where}")


def save_result(directory: str, result: ShardResult) -> None:
    """Record ``result`` beside its file in ``directory``: the task is complete."""
    write_json(_fs.join(directory, result.file_name + _RESULT_SUFFIX), {
        "records": result.records, "size_bytes": result.size_bytes,
        "skipped": [[s.reference, s.reason] for s in result.skipped]})


def read_result(directory: str, task: ShardTask) -> ShardResult | None:
    """The task's ShardResult if it completed in ``directory`` (its file, or the shard
    its parts were concatenated into, is still there), else None."""
    path = _fs.join(directory, task.file_name)
    if not (_fs.exists(path) or _fs.exists(_fs.join(directory, task.name))):
        return None
    try:
        with _fs.open_file(path + _RESULT_SUFFIX, "rb") as f:
            data = json.loads(f.read())
    except FileNotFoundError:
        return None
    return ShardResult(task.file_name, data["records"], data["size_bytes"],
                       tuple(SkippedInput(*s) for s in data["skipped"]))


def write_json(path: str, data: object) -> None:
    """Write ``data`` as JSON to ``path`` atomically (a URL: as one object)."""
    if _fs.is_url(path):
        fs, inner = _fs.filesystem(path)
        fs.pipe_file(inner, json.dumps(data).encode())
        return
    with atomic_output(_fs.local_path(path)) as temporary, open(temporary, "w") as f:
        json.dump(data, f)


def plan_key(*parts: object) -> str:
    """A hex digest identifying a plan: of ``parts`` (names, settings, the identity of
    the inputs) and, for functions among them, their code, so that an edited encode
    function is not mistaken for the one whose shards a killed run left. Parts that
    cannot be pickled raise ``TypeError`` naming them."""
    digest = hashlib.sha256()
    for part in parts:
        try:
            digest.update(cloudpickle.dumps(part, protocol=5))
        except Exception as e:      # pickling raises any type (TypeError, PicklingError)
            raise TypeError(f"cannot identify the plan: {type(part).__name__} "
                            f"{_short_repr(part)} cannot be pickled ({e})") from e
        code = getattr(part, "__code__", None)
        if code is not None:
            digest.update(marshal.dumps(code))
    return digest.hexdigest()


def _short_repr(value: object, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."
