"""The engine choice: ``runner="local"`` (processes on this machine), ``runner="dask"``
(a Dask cluster) or ``runner="beam"`` (Apache Beam, any of its runners), and
:func:`write_shards`, which runs a plan of shard tasks into an output folder, all or
nothing. No TensorFlow here or in the workers.
"""

import os
from collections.abc import Callable, Sequence
from typing import Any, overload

from tf1compat._checks import check_scheduler
from tf1compat._typing import PathArg
from tf1compat.convert.local import LocalRunner
from tf1compat.convert.plan import Plan, ShardResult, ShardTask
from tf1compat.convert.staging import Staging
from tf1compat.errors import PipelineConfigError
from tf1compat.records import _fs

RUNNERS = ("local", "beam", "dask")
# a runner: runs shard tasks into a staging folder, calling progress(n) as inputs are done
Runner = Callable[[list[ShardTask], str, Callable[[int], object] | None], object]


class BeamRunner:
    """Runs shard tasks as an Apache Beam pipeline (the ``tf1compat[beam]`` extra).

    ``beam_options`` are Beam's command-line flags, passed through
    (``["--runner=FlinkRunner", "--flink_master=..."]``); without ``--runner`` the
    pipeline runs in this process on Beam's FnApiRunner, with
    ``--direct_running_mode=multi_processing --direct_num_workers=N`` in N processes.
    Beam is imported when the runner is made (and the flags checked then), not before.
    """

    def __init__(self, beam_options: Sequence[str] | None = None) -> None:
        if isinstance(beam_options, str) or not all(
                isinstance(flag, str) for flag in beam_options or ()):
            raise PipelineConfigError(
                f"beam_options must be a list of flags such as ['--runner=FlinkRunner'], "
                f"got {beam_options!r}", argument="beam_options",
                expected="a list of str")
        self.beam_options = list(beam_options or ())
        from tf1compat.convert import beam  # the optional extra, only when asked for
        beam.pipeline_options(self.beam_options)    # refused now, before any work

    def __call__(self, tasks: list[ShardTask], directory: str,
                 progress: Callable[[int], object] | None = None) -> None:
        from tf1compat.convert import beam
        beam.run_tasks(tasks, directory, self.beam_options)


def build_runner(runner: str | Runner = "local", workers: int | None = None,
                 beam_options: Sequence[str] | None = None, scheduler: Any = None) -> Runner:
    """The runner for ``runner="local"`` (``workers`` processes, default all cores),
    ``"beam"`` (``beam_options``) or ``"dask"`` (``scheduler``: a ``distributed.Client``
    or an address, ``tcp://host:8786``); a runner object (any ``runner(tasks,
    directory, progress)``) is returned as it is."""
    if callable(runner):
        return runner
    if scheduler is not None and runner != "dask":
        raise PipelineConfigError(
            f"scheduler applies to runner='dask', not runner={runner!r}",
            argument="scheduler", expected=f"None with runner={runner!r}")
    if runner == "dask":
        for argument, value in (("workers", workers), ("beam_options", beam_options)):
            if value is not None:
                raise PipelineConfigError(
                    f"{argument} does not apply to runner='dask': the cluster's workers "
                    "run the tasks", argument=argument, expected="None with runner='dask'")
        if scheduler is None:
            raise PipelineConfigError(
                "runner='dask' needs scheduler: a distributed.Client or the scheduler's "
                "address, e.g. 'tcp://host:8786'", argument="scheduler",
                expected="a distributed.Client or 'tcp://host:port'")
        check_scheduler(None, "scheduler", scheduler)
        from tf1compat.convert.dask import DaskRunner  # the optional extra, only now
        return DaskRunner(scheduler)
    if runner == "local":
        if beam_options is not None:
            raise PipelineConfigError(
                "beam_options apply to runner='beam'; runner='local' takes workers",
                argument="beam_options", expected="None with runner='local'")
        return LocalRunner(workers)
    if runner == "beam":
        if workers is not None:
            raise PipelineConfigError(
                "workers applies to runner='local'; with runner='beam' set Beam's own "
                "flags, e.g. beam_options=['--direct_running_mode=multi_processing', "
                "'--direct_num_workers=4']", argument="workers",
                expected="None with runner='beam'")
        return BeamRunner(beam_options)
    raise PipelineConfigError(f"unknown runner {runner!r}; valid choices: {list(RUNNERS)}",
                              argument="runner", expected=list(RUNNERS))


@overload
def write_shards(plan: Plan | list[ShardTask], output_dir: PathArg, *, key: str,
                 runner: str | Runner = ..., workers: int | None = ...,
                 beam_options: Sequence[str] | None = ..., scheduler: Any = ...,
                 wait: bool = ..., quiet: bool = ..., what: str = ...,
                 unit: str = ...) -> list[ShardResult]: ...
@overload
def write_shards(plan: Callable[[str], Plan | list[ShardTask] | None], output_dir: PathArg, *,
                 key: str, runner: str | Runner = ..., workers: int | None = ...,
                 beam_options: Sequence[str] | None = ..., scheduler: Any = ...,
                 wait: bool = ..., quiet: bool = ..., what: str = ...,
                 unit: str = ...) -> list[ShardResult] | None: ...
def write_shards(plan: Plan | list[ShardTask] | Callable[[str], Plan | list[ShardTask] | None],
                 output_dir: PathArg, *, key: str, runner: str | Runner = "local",
                 workers: int | None = None, beam_options: Sequence[str] | None = None,
                 scheduler: Any = None, wait: bool = False, quiet: bool = False,
                 what: str = "a conversion", unit: str = "rec") -> list[ShardResult] | None:
    """Run a plan of shard tasks into ``output_dir``, all or nothing; returns the
    ShardResults in task order (None when the plan said there was nothing to do).

    ``plan`` is a :class:`~tf1compat.convert.plan.Plan` (or a list of tasks), or a
    function of the staging folder returning one (or None: nothing to do), for plans
    whose inputs are prepared there (an extracted archive) or that look at the output
    folder under its lock. ``output_dir`` may be an fsspec URL (``s3://bucket/prefix``):
    see :mod:`tf1compat.convert.objstore` for its commit. ``key`` identifies the plan
    (:func:`~tf1compat.convert.plan.plan_key`): a run killed outright is resumed by the
    next run with the same key. Another live conversion into ``output_dir`` raises
    ``BlockingIOError`` naming it, or with ``wait`` is waited for. ``what`` names this
    run (progress bar, a second run's refusal); ``quiet`` hides the progress bar.
    """
    runner = build_runner(runner, workers, beam_options, scheduler)
    output_dir = _fs.local_path(os.fspath(output_dir))
    staging_class: type[Any] = Staging
    if _fs.is_url(output_dir):
        from tf1compat.convert.objstore import ObjectStaging
        staging_class = ObjectStaging
    with staging_class(output_dir, key, wait=wait, what=what) as staging:
        if callable(plan):
            made = plan(staging.work_dir)
            if made is None:
                return None
        else:
            made = plan
        whole = made if isinstance(made, Plan) else Plan(list(made))
        results: list[ShardResult] = staging.write(whole.tasks, runner, desc=what, unit=unit,
                                                   quiet=quiet)
        staging.commit(whole.tasks, whole.extra_files, whole.stale)
    return results
