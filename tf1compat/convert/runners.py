"""The engine choice: ``runner="local"`` (processes on this machine) or ``runner="beam"``
(Apache Beam, any of its runners), and :func:`write_shards`, which runs a plan of shard
tasks into an output folder, all or nothing. No TensorFlow here or in the workers.
"""

import os

from tf1compat.errors import PipelineConfigError
from tf1compat.records.sharding import LocalRunner, Staging

RUNNERS = ("local", "beam")


class BeamRunner:
    """Runs shard tasks as an Apache Beam pipeline (the ``tf1compat[beam]`` extra).

    ``beam_options`` are Beam's command-line flags, passed through
    (``["--runner=FlinkRunner", "--flink_master=..."]``); without ``--runner`` the
    pipeline runs in this process on Beam's FnApiRunner, with
    ``--direct_running_mode=multi_processing --direct_num_workers=N`` in N processes.
    Beam is imported when the runner runs, not before.
    """

    def __init__(self, beam_options=None):
        if isinstance(beam_options, str) or not all(
                isinstance(flag, str) for flag in beam_options or ()):
            raise PipelineConfigError(
                f"beam_options must be a list of flags such as ['--runner=FlinkRunner'], "
                f"got {beam_options!r}", argument="beam_options",
                expected="a list of str")
        self.beam_options = list(beam_options or ())

    def __call__(self, tasks, directory, progress=None):
        from tf1compat.convert import beam  # the optional extra, only when asked for
        beam.run_tasks(tasks, directory, self.beam_options)


def build_runner(runner="local", workers=None, beam_options=None):
    """The runner for ``runner="local"`` (``workers`` processes, default all cores) or
    ``"beam"`` (``beam_options``); a runner object (any ``runner(tasks, directory,
    progress)``) is returned as it is."""
    if callable(runner):
        return runner
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


def write_shards(tasks, output_dir, *, key, runner="local", workers=None, beam_options=None,
                 extra_files=None, stale=(), desc=None, unit="img"):
    """Run a plan of shard tasks into ``output_dir``, all or nothing; returns the
    ShardResults in task order.

    ``key`` identifies the plan (:func:`~tf1compat.records.sharding.plan_key`): a run
    killed outright is resumed by the next run with the same key. ``extra_files``
    (``{name: text}``) are committed with the shards, ``stale`` file names removed.
    """
    runner = build_runner(runner, workers, beam_options)
    with Staging(os.fspath(output_dir), key) as staging:
        results = staging.write(tasks, runner, desc=desc, unit=unit)
        staging.commit(tasks, extra_files, stale)
    return results
