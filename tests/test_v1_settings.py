"""Run mode's settings: one frozen RunSettings, checked once when made (one behaviour per
mistake: a wrong value a PipelineConfigError, a wrong kind an ArgumentTypeError), the
same from `tf1compat run`'s flags (one line, exit 2, naming the flag as typed, before
TensorFlow loads) and from the API, pickled whole; no environment variable carries one."""

import dataclasses
import os
import pickle
import subprocess
import sys

import numpy as np
import pytest
from legacy_programs import tf1compat_run, write_program

from tf1compat import cli
from tf1compat.errors import ArgumentTypeError, PipelineConfigError
from tf1compat.pipeline.cache_budget import BUDGET_VARIABLE, cache_budget
from tf1compat.v1.settings import RunSettings

SIZE = "a size in bytes up to 9223372036854775807 (e.g. 500M, 2G, 1073741824), or off"
# why the cache flags need the pipelines on tf.data, as `tf1compat run --queues` says it
ON_TF_DATA_ONLY = ("it sets the in-memory cache of the pipelines on tf.data, and --queues "
                   "keeps every pipeline on TF1's queues")


def test_defaults_and_plain_values(tmp_path, monkeypatch):
    monkeypatch.delenv(BUDGET_VARIABLE, raising=False)
    assert RunSettings() == RunSettings(roots=(), grace_period=10.0, tf_data="auto",
                                        data_service=None, data_service_timeout=None,
                                        cache_budget=cache_budget(None))
    assert RunSettings(tf_data=False).cache_budget is None     # on queues: no cache
    settings = RunSettings(roots=[tmp_path, str(tmp_path)], grace_period=np.int64(3),
                           tf_data=np.bool_(True), data_service="grpc://host:5050",
                           data_service_timeout=float("inf"), cache_budget="2M")
    assert settings.roots == (str(tmp_path),)
    assert (settings.grace_period, type(settings.grace_period)) == (3.0, float)
    assert settings.tf_data is True and settings.cache_budget == 2 * 2 ** 20
    with pytest.raises(dataclasses.FrozenInstanceError):
        settings.tf_data = False


def test_the_cache_budget_is_resolved_once_with_tf_data(monkeypatch):
    monkeypatch.setenv(BUDGET_VARIABLE, "3M")
    assert RunSettings(tf_data=True).cache_budget == 3 * 2 ** 20
    assert RunSettings(tf_data=True, cache_budget=False).cache_budget == 0
    assert RunSettings(tf_data=True, cache_budget=np.int64(10 ** 6)).cache_budget == 10 ** 6
    assert RunSettings().cache_budget == 3 * 2 ** 20       # the default: tf.data where it can
    assert RunSettings(tf_data=False).cache_budget is None     # no tf.data, no cache
    monkeypatch.setenv(BUDGET_VARIABLE, "99999999999T")
    with pytest.raises(PipelineConfigError) as e:
        RunSettings(tf_data=True)
    assert str(e.value) == f"{BUDGET_VARIABLE} must be {SIZE}, got '99999999999T'"
    assert RunSettings(tf_data=True, cache_budget="1M").cache_budget == 2 ** 20


@pytest.mark.parametrize("options, error, message", [
    ({"grace_period": 0}, PipelineConfigError,
     "grace_period must be a positive number of seconds (inf: no limit), got 0"),
    ({"grace_period": "10"}, ArgumentTypeError,
     "grace_period must be a positive number of seconds (inf: no limit), got '10'"),
    ({"tf_data": 1}, ArgumentTypeError, "tf_data must be True, False or 'auto', got 1"),
    ({"tf_data": "yes"}, ArgumentTypeError, "tf_data must be True, False or 'auto', got 'yes'"),
    ({"tf_data": True, "data_service": "127.0.0.1:5050"}, PipelineConfigError,
     "data_service must be grpc://HOST:PORT (a tf.data service dispatcher), got "
     "'127.0.0.1:5050'"),
    ({"tf_data": True, "data_service": 5050}, ArgumentTypeError,
     "data_service must be grpc://HOST:PORT (a tf.data service dispatcher), got 5050"),
    ({"tf_data": True, "data_service": "grpc://h:1", "data_service_timeout": -1},
     PipelineConfigError,
     "data_service_timeout must be a positive number of seconds (inf: no limit), got -1"),
    ({"tf_data": True, "cache_budget": 10 ** 20}, PipelineConfigError,
     f"cache_budget must be {SIZE}, got 100000000000000000000"),
    ({"tf_data": True, "cache_budget": 2.5}, ArgumentTypeError,
     f"cache_budget must be {SIZE}, got 2.5"),
    ({"tf_data": False, "data_service": "grpc://h:1"}, PipelineConfigError,
     "data_service cannot be used with tf_data=False: the service runs the pipelines on "
     "tf.data, and tf_data=False keeps every pipeline on TF1's queues"),
    ({"tf_data": True, "data_service_timeout": 5}, PipelineConfigError,
     "data_service_timeout needs data_service: it bounds the waits for the service"),
    ({"tf_data": False, "cache_budget": False}, PipelineConfigError,
     "cache_budget cannot be used with tf_data=False: it sets the in-memory cache of the "
     "pipelines on tf.data, and tf_data=False keeps every pipeline on TF1's queues"),
])
def test_one_behaviour_per_mistake(options, error, message):
    with pytest.raises(PipelineConfigError) as e:
        RunSettings(**options)
    assert type(e.value) is error and str(e.value) == message
    assert e.value.argument in options


def test_a_missing_root_is_refused(tmp_path):
    with pytest.raises(FileNotFoundError, match="does not exist; expected the folders"):
        RunSettings(roots=[tmp_path / "missing"])


def test_changes_are_checked_and_roots_added(tmp_path):
    settings = RunSettings(roots=[tmp_path], tf_data=True, cache_budget="1M")
    changed = settings.with_changes(roots=str(tmp_path.parent), grace_period=2)
    assert changed.roots == (str(tmp_path), str(tmp_path.parent))
    assert (changed.grace_period, changed.cache_budget) == (2.0, 2 ** 20)
    with pytest.raises(PipelineConfigError, match="grace_period must be"):
        settings.with_changes(grace_period=-1)


SETTINGS = "grace_period, tf_data, data_service, data_service_timeout, cache_budget"
PATHS = "a file path (str, bytes or os.PathLike) or a list of them"


@pytest.mark.tf
@pytest.mark.parametrize("call, message", [
    (lambda v1, path: v1.RunMode(grace=5),
     f"'grace' is not a run setting; the settings are {SETTINGS}"),
    (lambda v1, path: v1.install(bogus=1),
     f"'bogus' is not a run setting; the settings are {SETTINGS}"),
    (lambda v1, path: v1.RunMode(5), f"roots must be {PATHS}, got 5"),
    (lambda v1, path: v1.install([path, None]),
     "roots must be a file path (str, bytes or os.PathLike), got None"),
    (lambda v1, path: v1.RunMode(settings={"tf_data": True}),
     "settings must be a tf1compat.v1.RunSettings, got {'tf_data': True}"),
    (lambda v1, path: v1.run_path(path, settings=5),
     "settings must be a tf1compat.v1.RunSettings, got 5"),
    (lambda v1, path: v1.run_module("program", bogus=1),
     f"'bogus' is not a run setting; the settings are {SETTINGS}"),
])
def test_a_wrong_kind_of_setting_in_the_api_is_named(tmp_path, call, message):
    """What RunMode, install, run_path and run_module are given is checked as the
    settings are: a name that is no setting, roots that are not paths, settings that are
    not a RunSettings are each an ArgumentTypeError (a TypeError) saying so (they were
    RunSettings.__init__'s unexpected keyword, 'int' object is not iterable, 'int'
    object has no attribute 'with_changes'), and nothing is installed or run."""
    from tf1compat import v1
    from tf1compat.v1.run_mode import installed_run_mode
    program = write_program(tmp_path, "program.py", "raise SystemExit('it ran')\n")
    with pytest.raises(ArgumentTypeError) as e:
        call(v1, program)
    assert str(e.value) == message and isinstance(e.value, TypeError)
    assert installed_run_mode() is None


def test_pickled_whole(tmp_path):
    settings = RunSettings(roots=[tmp_path], grace_period=4, tf_data=True,
                           data_service="grpc://h:1", data_service_timeout=7,
                           cache_budget="5M")
    assert pickle.loads(pickle.dumps(settings)) == settings


def test_every_flagged_setting_is_a_run_flag():
    """The command's flags are made from the settings' fields: adding a setting adds its
    flag."""
    options = {}
    for action in _run_parser()._actions:
        options.setdefault(action.dest, []).extend(action.option_strings)
    for field in dataclasses.fields(RunSettings):
        if field.name == "roots":
            assert field.name not in options
        else:
            assert "--" + field.name.replace("_", "-") in options[field.name]
    assert options["cache_budget"] == ["--cache-budget", "--no-cache"]
    assert options["tf_data"] == ["--tf-data", "--queues"]


def _run_parser():
    return cli.build_parser()._subparsers._group_actions[0].choices["run"]


@pytest.mark.parametrize("flags, line", [
    (["--cache-budget", "1e30", "--tf-data"], f"--cache-budget must be {SIZE}, got '1e30'"),
    (["--tf-data", "--cache-budget", "99999999999T"],
     f"--cache-budget must be {SIZE}, got '99999999999T'"),
    (["--queues", "--no-cache"],
     f"--no-cache cannot be used with --queues: {ON_TF_DATA_ONLY}"),
    (["--cache-budget", "1M", "--queues"],
     f"--cache-budget cannot be used with --queues: {ON_TF_DATA_ONLY}"),
    (["--queues", "--data-service", "grpc://h:1"],
     "--data-service cannot be used with --queues: the service runs the pipelines on "
     "tf.data, and --queues keeps every pipeline on TF1's queues"),
    (["--queues", "--data-service-timeout", "5"],
     "--data-service-timeout needs --data-service: it bounds the waits for the service"),
    (["--grace-period", "soon"],
     "--grace-period must be a positive number of seconds (inf: no limit), got 'soon'"),
    (["--grace-period", "-1"],
     "--grace-period must be a positive number of seconds (inf: no limit), got -1.0"),
    (["--tf-data", "--data-service", "localhost:5050"],
     "--data-service must be grpc://HOST:PORT (a tf.data service dispatcher), got "
     "'localhost:5050'"),
])
def test_the_command_says_one_line_naming_the_flag(flags, line, tmp_path, capsys):
    program = write_program(tmp_path, "never.py", "raise SystemExit('it ran')\n")
    assert cli.main(["run", *flags, str(program)]) == 2
    captured = capsys.readouterr()
    assert (captured.out, captured.err) == ("", f"tf1compat run: error: {line}\n")


def test_the_variable_is_checked_by_the_command_before_tensorflow_loads(tmp_path):
    code = ("import sys; from tf1compat import cli; status = cli.main(['run', '--tf-data', "
            f"{str(tmp_path / 'x.py')!r}]); print(status, 'tensorflow' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={**os.environ, BUDGET_VARIABLE: "99999999999T"}, timeout=60)
    assert done.stdout.split() == ["2", "False"]
    assert done.stderr.splitlines() == [
        f"tf1compat run: error: {BUDGET_VARIABLE} must be {SIZE}, got '99999999999T'"]


@pytest.mark.tf
def test_the_run_gets_its_settings_without_the_environment(tmp_path):
    """`--cache-budget` reaches the lowering through the run mode's settings: the
    program's environment is as the user left it."""
    program = write_program(tmp_path, "show.py", """
        import os
        from tf1compat.v1.run_mode import installed_run_mode
        print(os.environ.get("TF1COMPAT_CACHE_BUDGET"), installed_run_mode().settings)
    """)
    done = tf1compat_run("--tf-data", "--cache-budget", "1M", "--grace-period", "inf",
                         program, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.splitlines() == [
        f"None RunSettings(roots=({str(tmp_path)!r},), grace_period=inf, tf_data=True, "
        "data_service=None, data_service_timeout=None, cache_budget=1048576)"]
