"""Apache Beam as a runner of shard plans: the ``tf1compat[beam]`` extra, imported only
when ``runner="beam"`` (or :class:`WriteShards`) is asked for.

Each :class:`~tf1compat.convert.plan.ShardTask` is one element; ``write_shard`` is
idempotent (temporary name, then rename), so Beam's retries of a bundle are safe. The
tasks travel pickled by cloudpickle, so their functions may come from a script or a
notebook. The output must be a location every Beam worker reaches under the same name:
an object-store URL (``s3://``, ``gs://``: the shards are written through fsspec, not
Beam's file systems) or a folder (local runs, or a shared mount on a cluster).
"""

import contextlib
import io
import os
import pickle
from collections.abc import Sequence
from typing import Any, NoReturn

import cloudpickle

from tf1compat._typing import PathArg
from tf1compat.convert.plan import ShardResult, ShardTask, write_shard
from tf1compat.errors import PipelineConfigError
from tf1compat.records import _fs

try:
    import apache_beam as beam
    from apache_beam.options.pipeline_options import PipelineOptions, StandardOptions
    from apache_beam.runners.runner import create_runner
except ImportError as e:
    raise ModuleNotFoundError(
        f"the Beam runner needs Apache Beam, which is the tf1compat[beam] extra: "
        f"pip install 'tf1compat[beam]' ({e})", name="apache_beam") from e

# Beam's own default runner first tries to download another runner (Prism); the
# portable in-process runner behind it needs nothing.
DEFAULT_RUNNER = "--runner=FnApiRunner"
_ERROR_SUFFIX = ".error"


class _ShardTaskCoder(beam.coders.Coder):
    """ShardTasks between Beam workers, by cloudpickle (their functions may live in
    ``__main__``, which plain pickle sends by a name other processes cannot resolve)."""

    def encode(self, value: ShardTask) -> bytes:
        encoded: bytes = cloudpickle.dumps(value)
        return encoded

    def decode(self, encoded: bytes) -> ShardTask:
        task: ShardTask = pickle.loads(encoded)
        return task

    def is_deterministic(self) -> bool:
        return False


beam.coders.registry.register_coder(ShardTask, _ShardTaskCoder)  # type: ignore[attr-defined]


def _record_failure(error: BaseException, task: ShardTask, directory: str) -> bool:
    """Leave ``error`` beside ``task``'s shard (``<file>.error``, the pickled exception)
    for the driver to raise with its own type; False when it cannot be left."""
    try:
        with _fs.open_file(_fs.join(directory, task.file_name + _ERROR_SUFFIX), "wb") as f:
            f.write(cloudpickle.dumps(error))
    except Exception:   # noqa: BLE001 - unpicklable, or the store refused: raise it instead
        return False
    return True


# Beam checks the annotations of what beam.Map calls when the pipeline is built: the
# directory stays Any there (a str or an os.PathLike, as write_shard takes it).
def _write_shard_keeping_error(task: ShardTask, directory: Any) -> ShardResult:
    """write_shard; a failure is also left beside the shard, then raised."""
    try:
        return write_shard(task, directory)
    except Exception as e:
        _record_failure(e, task, directory)
        raise


def _write_shard_or_record_failure(task: ShardTask, directory: Any) -> ShardResult | None:
    """write_shard for :func:`run_tasks`: a failure is left beside the shard and not
    raised (Beam would log it with its traceback, in every worker process), and once
    a task has failed the others are skipped. None for a task failed or skipped."""
    if _fs.files_in(directory, "*" + _ERROR_SUFFIX):
        return None
    try:
        return write_shard(task, directory)
    except Exception as e:
        if not _record_failure(e, task, directory):
            raise
        return None


class WriteShards(beam.PTransform[Any, Any]):
    """``PCollection[ShardTask] -> PCollection[ShardResult]``: writes each task into
    ``directory`` with :func:`~tf1compat.convert.plan.write_shard`.

    For your own Beam pipelines: the shards land under ``ShardTask.file_name``
    (parts of one shard are concatenated by
    :meth:`~tf1compat.convert.staging.Staging.commit`, or by you).
    """

    def __init__(self, directory: PathArg) -> None:
        super().__init__()
        self.directory = os.fspath(directory)

    def expand(self, tasks: Any) -> Any:
        return tasks | "write_shard" >> beam.Map(_write_shard_keeping_error, self.directory)


def pipeline_options(beam_options: Sequence[str] | None) -> Any:
    """Beam's PipelineOptions from command-line style flags, with our default runner.

    What Beam would refuse later or not at all is a PipelineConfigError naming it now:
    a bad value (Beam's parser would print its usage and exit), a flag no Beam option
    has (Beam would drop it with a warning), an unknown runner."""
    flags = list(beam_options or ())
    if not any(flag == "--runner" or flag.startswith("--runner=") for flag in flags):
        flags.insert(0, DEFAULT_RUNNER)
    options = PipelineOptions(flags)
    usage = io.StringIO()
    try:
        with contextlib.redirect_stderr(usage):
            parsed = options.get_all_options(retain_unknown_options=True)
    except SystemExit:
        _refuse(usage.getvalue().strip().splitlines()[-1].partition("error: ")[2])
    known = PipelineOptions([]).get_all_options(retain_unknown_options=True)
    unknown = sorted(f"--{name}" for name in set(parsed) - set(known))
    if unknown:
        _refuse(f"no Beam option is called {', '.join(unknown)}")
    try:
        create_runner(options.view_as(StandardOptions).runner)
    except ValueError as e:
        _refuse(str(e))
    return options


def _refuse(reason: str) -> NoReturn:
    raise PipelineConfigError(f"beam_options: {reason}", argument="beam_options",
                              expected="Beam's own flags, e.g. --runner=FlinkRunner")


def run_tasks(tasks: Sequence[ShardTask], directory: str, beam_options: Sequence[str]) -> None:
    """Run ``tasks`` in a Beam pipeline writing into ``directory``. The first task that
    fails stops the others (they are skipped) and is raised here with its own type;
    Beam sees no failure, so it logs none."""
    for task in tasks:       # a killed run's failures: not this run's to raise
        path = _fs.join(directory, task.file_name + _ERROR_SUFFIX)
        if _fs.exists(path):
            if _fs.is_url(path):
                fs, inner = _fs.filesystem(path)
                fs.rm(inner)
            else:
                os.remove(path)
    options = pipeline_options(beam_options)
    with beam.Pipeline(options=options) as pipeline:
        _ = (pipeline | "tasks" >> beam.Create(list(tasks))
             | "write_shard" >> beam.Map(_write_shard_or_record_failure, directory))
    for task in tasks:
        path = _fs.join(directory, task.file_name + _ERROR_SUFFIX)
        if _fs.exists(path):
            with _fs.open_file(path, "rb") as f:
                raise pickle.loads(f.read())
