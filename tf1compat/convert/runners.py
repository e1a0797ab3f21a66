"""The engine choice: ``runner="local"`` (processes on this machine), ``runner="dask"``
(a Dask cluster) or ``runner="beam"`` (Apache Beam, any of its runners), and
:func:`write_shards`, which runs a plan of shard tasks into an output folder, all or
nothing. No TensorFlow here or in the workers.
"""

import os

from tf1compat.convert.local import LocalRunner
from tf1compat.convert.plan import Plan
from tf1compat.convert.staging import Staging
from tf1compat.errors import PipelineConfigError
from tf1compat.records import _fs

RUNNERS = ("local", "beam", "dask")


class BeamRunner:
    """Runs shard tasks as an Apache Beam pipeline (the ``tf1compat[beam]`` extra).

    ``beam_options`` are Beam's command-line flags, passed through
    (``["--runner=FlinkRunner", "--flink_master=..."]``); without ``--runner`` the
    pipeline runs in this process on Beam's FnApiRunner, with
    ``--direct_running_mode=multi_processing --direct_num_workers=N`` in N processes.
    Beam is imported when the runner is made (and the flags checked then), not before.
    """

    def __init__(self, beam_options=None):
        if isinstance(beam_options, str) or not all(
                isinstance(flag, str) for flag in beam_options or ()):
            raise PipelineConfigError(
                f"beam_options must be a list of flags such as ['--runner=FlinkRunner'], "
                f"got {beam_options!r}", argument="beam_options",
                expected="a list of str")
        self.beam_options = list(beam_options or ())
        from tf1compat.convert import beam  # the optional extra, only when asked for
        beam.pipeline_options(self.beam_options)    # refused now, before any work

    def __call__(self, tasks, directory, progress=None):
        from tf1compat.convert import beam
        beam.run_tasks(tasks, directory, self.beam_options)


def build_runner(runner="local", workers=None, beam_options=None, scheduler=None):
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
        from tf1compat.convert.dask import DaskRunner  # the optional extra, only now
        return DaskRunner(scheduler)
    if runner == "local":
        if beam_options is not None:
            raise PipelineConfigError(
                "beam_options apply to runner='beam'; runner='local' takes workers",
                argument="beam_options", expected="None with runner='local'")
        try:
            return LocalRunner(workers)
        except ValueError as e:
            raise PipelineConfigError(str(e), argument="workers",
                                      expected="an integer >= 0, or None") from e
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


def write_shards(plan, output_dir, *, key, runner="local", workers=None, beam_options=None,
                 scheduler=None, wait=False, quiet=False, what="a conversion", unit="rec"):
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
    if _fs.is_url(output_dir):
        from tf1compat.convert.objstore import ObjectStaging as staging_class
    else:
        staging_class = Staging
    with staging_class(output_dir, key, wait=wait, what=what) as staging:
        if callable(plan):
            plan = plan(staging.work_dir)
            if plan is None:
                return None
        if not isinstance(plan, Plan):
            plan = Plan(list(plan))
        results = staging.write(plan.tasks, runner, desc=what, unit=unit, quiet=quiet)
        staging.commit(plan.tasks, plan.extra_files, plan.stale)
    return results
