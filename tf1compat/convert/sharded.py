"""``write_sharded``: any items into sharded TFRecord files, as a plan of shard tasks
(``tf1compat.tfrecord.write_sharded``)."""

import collections.abc
import contextlib
import functools
import os
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import replace
from typing import Any

from tf1compat import __version__
from tf1compat._checks import check_callable, check_path, check_positive_int
from tf1compat._typing import PathArg
from tf1compat.convert.plan import (
    Plan,
    ShardResult,
    ShardTask,
    build_tasks,
    plan_key,
    save_result,
    shard_names,
)
from tf1compat.convert.runners import Runner, build_runner, write_shards
from tf1compat.convert.scratch import scratch_folder
from tf1compat.errors import PipelineConfigError, display_path
from tf1compat.records import _fs
from tf1compat.records.tfrecord import TFRecordWriter, _check_bytes, _compression_type

_PART_ITEMS = 1024  # items per task (part of a shard)


def shard_paths(output_pattern: PathArg, num_shards: int) -> list[str]:
    """File names of a sharded output: ``out/train.tfrecord`` (or ``out/train``) with 8
    shards gives ``out/train-00000-of-00008.tfrecord`` ... ``out/train-00007-of-00008.tfrecord``."""
    num_shards = check_positive_int("shard_paths", "num_shards", num_shards)
    base = _fs.local_path(os.fsdecode(check_path("shard_paths", "output_pattern",
                                                 output_pattern)))
    return shard_names(base.removesuffix(".tfrecord"), num_shards)


def _encode_items(encode: Callable[[Any], bytes], path: str, first: int, step: int,
                  items: Iterable[Any]) -> Iterator[bytes]:
    """A write_sharded task's records: ``encode`` of its items, which are items ``first``,
    ``first + step``, ... of the call, bound for shard ``path`` (named in errors)."""
    for i, item in enumerate(items):
        record = encode(item)
        _check_bytes(record, f"{display_path(path)}: item {first + i * step}: encode returned")
        yield record


def write_sharded(items: Iterable[Any], output_pattern: PathArg, num_shards: int,
                  workers: int | None = None, encode: Callable[[Any], bytes] | None = None,
                  compression: str | None = None, *, runner: str | Runner = "local",
                  scheduler: Any = None) -> list[str]:
    """Write items into ``num_shards`` TFRecord files; returns their paths (see shard_paths).

    Item ``i`` goes to shard ``i % num_shards``. ``encode`` turns an item into record
    bytes (e.g. :func:`tf1compat.example.make_example`); it runs in ``workers``
    processes (default: one per core; 0 or 1: in this process). Any function works,
    also one defined in a script without a main guard or in a notebook: the workers
    are fresh interpreters that receive it pickled by cloudpickle, never re-running
    the caller. With ``encode``, items that are not a sequence (a generator) are
    gathered into a list first: pass light references (indices, file names) and let
    ``encode`` load them. Without ``encode`` items must already be bytes; they are
    streamed into the shards in this process. ``output_pattern`` may be an fsspec URL
    (``s3://bucket/data/train.tfrecord``; see :mod:`tf1compat.convert.objstore`).
    ``runner="dask"`` runs ``encode`` on a Dask cluster's workers (``scheduler``: a
    ``distributed.Client`` or an address, ``tcp://host:8786``), ``runner="beam"`` in a
    Beam pipeline on its default local runner, instead of ``workers`` processes.

    It is a plan of shard tasks (:mod:`tf1compat.convert`): the shards are staged in
    a hidden folder beside them and moved into place together at the end, so if
    anything fails or the run is interrupted no shard changes; a run killed outright
    is resumed by the next identical call (with ``encode``, of the same tf1compat
    version; items that cannot be pickled, which only ``workers`` 0 or 1 can take,
    are not resumed). Shows a progress bar on a terminal.
    """
    paths = shard_paths(output_pattern, num_shards)
    check_callable("write_sharded", "encode", encode, allow_none=True)
    if runner != "local" and encode is None:
        raise PipelineConfigError(
            f"write_sharded: runner={runner!r} runs encode on its workers; without encode "
            "the items are written in this process (runner='local')", argument="runner",
            expected="'local' without encode")
    runner = build_runner(runner, workers, None, scheduler)
    compression = _compression_type(compression)
    if _fs.is_url(paths[0]):
        directory, _ = paths[0].rsplit("/", 1)
        names = [path.rsplit("/", 1)[1] for path in paths]
    else:
        names = [os.path.basename(path) for path in paths]
        directory = os.path.dirname(os.path.abspath(paths[0]))
    what = f"write_sharded {names[0].replace('-00000-', '-*-')}"
    if encode is None:      # written here, from the one iterator; not resumed
        # the runner below writes the tasks itself: they have no to_records
        tasks = [ShardTask(name, (), None) for name in names]  # type: ignore[arg-type]
        write_shards(Plan(tasks), directory,
                     runner=_write_round_robin(items, paths, compression),
                     what=what, key=uuid.uuid4().hex)
        return paths
    if not isinstance(items, collections.abc.Sequence):
        items = list(items)
    tasks = []
    unbound: Any = _encode_items    # each task gets its own partial of it below
    for shard, (name, path) in enumerate(zip(names, paths, strict=True)):
        done = 0    # items of the shard in its earlier parts
        for task in build_tasks(name, items[shard::num_shards], unbound,
                                max_part_inputs=_PART_ITEMS, compression=compression):
            tasks.append(replace(task, to_records=functools.partial(
                _encode_items, encode, path, shard + done * num_shards, num_shards)))
            done += len(task.inputs)
    write_shards(Plan(tasks), directory, runner=runner, what=what,
                 key=_resume_key(names, items, encode, compression, runner))
    return paths


def _resume_key(names: Sequence[str], items: Sequence[Any], encode: Callable[[Any], bytes],
                compression: str, runner: Runner) -> str:
    """The plan key of a write_sharded call; for items that cannot be pickled (so can
    only be written in this process) a key of this run alone: it is not resumed."""
    try:
        return plan_key("write_sharded", __version__, names, items, encode, compression)
    except TypeError:
        if getattr(runner, "workers", 2) > 1:     # sent to other processes
            raise
        return uuid.uuid4().hex


def _write_round_robin(records: Iterable[Any], paths: Sequence[str],
                       compression: str) -> Runner:
    """A runner writing ``records`` round-robin into the shards ``paths`` (one task each),
    in this process: the records come from one iterator. Into an object store they are
    written to local files first, each uploaded as one object."""
    def run(tasks: list[ShardTask], directory: str,
            progress: Callable[[int], object] | None = None) -> None:
        with contextlib.ExitStack() as stack:
            local = directory
            if _fs.is_url(directory):
                local = stack.enter_context(scratch_folder("shards"))
            with contextlib.ExitStack() as files:
                writers = [files.enter_context(TFRecordWriter(os.path.join(local, t.file_name),
                                                              compression)) for t in tasks]
                for i, record in enumerate(records):
                    _check_bytes(record, f"{display_path(paths[i % len(paths)])}: item {i} is")
                    writers[i % len(writers)].write(record)
            for writer, task in zip(writers, tasks, strict=True):
                if local != directory:
                    fs, base = _fs.filesystem(directory)
                    fs.put_file(writer.path, f"{base}/{task.file_name}")
                save_result(directory, ShardResult(task.file_name, writer.count,
                                                   os.path.getsize(writer.path)))
    return run
