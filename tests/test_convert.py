"""The conversion wing: the engine choice, write_shards, Apache Beam as a runner (the
beam extra, installed in CI) and WriteShards in a user's own Beam pipeline.

Every runner must write the bytes the local runner writes."""

import logging
import os
import subprocess
import sys

import pytest

from tf1compat import cifar10, convert
from tf1compat.errors import CifarFormatError, PipelineConfigError
from tf1compat.records import tfrecord
from tf1compat.records.example import make_example

IN_MEMORY = []
TWO_PROCESSES = ["--direct_running_mode=multi_processing", "--direct_num_workers=2"]


def to_records(items):
    for item in items:
        if item == 13:
            raise CifarFormatError("item 13 is bad", path="thirteen.bin", index=13)
        yield make_example({"item": item})


def plan():
    return [t for shard in range(2) for t in convert.build_tasks(
        f"s-{shard}.tfrecord", range(shard, 12, 2), to_records, max_part_inputs=2)]


@pytest.fixture(scope="module")
def cifar_source(tmp_path_factory):
    return cifar10.make_synthetic(tmp_path_factory.mktemp("cifar"), 30, 10, seed=2)


def files_of(directory):
    return {name: (directory / name).read_bytes() for name in sorted(os.listdir(directory))}


def test_write_shards_local(tmp_path):
    results = convert.write_shards(convert.Plan(plan(), {"labels.txt": "0:a\n"}), tmp_path,
                                   key=convert.plan_key("t"), workers=1)
    assert [r.records for r in results] == [2, 2, 2, 2, 2, 2]
    assert sorted(os.listdir(tmp_path)) == ["labels.txt", "s-0.tfrecord", "s-1.tfrecord"]
    assert list(tfrecord.iter_records(tmp_path / "s-1.tfrecord")) == [
        make_example({"item": i}) for i in range(1, 12, 2)]


@pytest.mark.parametrize("arguments, argument", [
    ({"runner": "spark"}, "runner"),
    ({"runner": "local", "beam_options": ["--runner=FlinkRunner"]}, "beam_options"),
    ({"runner": "beam", "workers": 2}, "workers"),
    ({"runner": "beam", "beam_options": "--runner=FlinkRunner"}, "beam_options"),
    ({"runner": "local", "workers": -2}, "workers")])
def test_build_runner_refuses_what_does_not_fit(arguments, argument):
    with pytest.raises(PipelineConfigError) as e:
        convert.build_runner(**arguments)
    assert e.value.argument == argument


def test_unknown_runner_lists_the_choices(tmp_path, cifar_source):
    with pytest.raises(PipelineConfigError, match=r"unknown runner 'spark'; valid choices: "
                                                  r"\['local', 'beam', 'dask'\]"):
        cifar10.convert(cifar_source, tmp_path, runner="spark", quiet=True)
    assert os.listdir(tmp_path) == []


def test_importing_the_wing_imports_neither_beam_nor_tensorflow():
    code = ("import sys, tf1compat as tc; tc.convert; tc.cifar10; "
            "print('apache_beam' in sys.modules, 'tensorflow' in sys.modules)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True, timeout=60)
    assert result.stdout.split() == ["False", "False"]


def test_missing_beam_extra_is_named(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "apache_beam", None)     # as if not installed
    monkeypatch.delitem(sys.modules, "tf1compat.convert.beam", raising=False)
    monkeypatch.delattr(convert, "beam", raising=False)
    with pytest.raises(ModuleNotFoundError, match=r"tf1compat\[beam\] extra") as e:
        convert.write_shards(plan(), tmp_path, key="k", runner="beam")
    assert e.value.name == "apache_beam"
    assert os.listdir(tmp_path) == []


# ------------------------------------------------------------------------- Beam

@pytest.mark.timeout(240)
@pytest.mark.parametrize("beam_options", [
    pytest.param(IN_MEMORY, id="in-memory"),
    pytest.param(TWO_PROCESSES, id="two-processes", marks=pytest.mark.slow)])
def test_beam_writes_the_bytes_of_the_local_runner(tmp_path, cifar_source, beam_options):
    cifar10.convert(cifar_source, tmp_path / "local", num_shards=2, workers=2, quiet=True)
    cifar10.convert(cifar_source, tmp_path / "beam", num_shards=2, runner="beam",
                    beam_options=beam_options, quiet=True)
    local = files_of(tmp_path / "local")
    assert len(local) == 5 and files_of(tmp_path / "beam") == local


@pytest.mark.timeout(120)
@pytest.mark.parametrize("runner", [{"workers": 0}, {"workers": 2}, {"runner": "beam"}],
                         ids=["in-process", "two-workers", "beam"])
def test_a_failing_task_names_its_shard_and_input_on_every_runner(tmp_path, runner, caplog):
    (tmp_path / "s-0.tfrecord").write_bytes(b"earlier")
    with pytest.raises(CifarFormatError, match="item 13 is bad") as e:
        convert.write_shards([*plan(), *convert.build_tasks(
            "bad.tfrecord", range(11, 15), to_records, max_part_inputs=2)],
            tmp_path, key="k", **runner)
    assert (e.value.path, e.value.index) == ("thirteen.bin", 13)    # its own attributes
    assert (e.value.task, e.value.input_index, e.value.input) == (
        "bad.tfrecord.part-00001-of-00002", 0, 13)
    assert e.value.__notes__ == ["while writing shard task bad.tfrecord.part-00001-of-00002, "
                                 "input 0 of 2 (13)"]
    if runner.get("runner") == "beam":      # the failure is not Beam's: it logs nothing
        assert not [r for r in caplog.records if r.levelno >= logging.WARNING
                    and r.name.startswith("apache_beam")], caplog.text
    assert files_of(tmp_path) == {"s-0.tfrecord": b"earlier"}


@pytest.mark.timeout(240)
@pytest.mark.parametrize("flags", [[], ["--beam-options", "--direct_running_mode=multi_processing",
                                        "--direct_num_workers=2"]],
                         ids=["in-process", "two-processes"])
def test_a_beam_conversion_refused_for_bad_input_says_it_in_one_line(tmp_path, flags):
    """A label byte out of range under --runner beam: the line naming the record and
    exit 2, and no traceback from Beam (it logged the task's failure with its
    traceback, in each worker process)."""
    source = cifar10.make_synthetic(tmp_path / "cifar", 30, 10, seed=2)
    batch = tmp_path / "cifar" / "cifar-10-batches-bin" / "data_batch_2.bin"
    data = bytearray(batch.read_bytes())
    data[3 * 3073] = 12
    batch.write_bytes(bytes(data))
    run = subprocess.run([sys.executable, "-m", "tf1compat", "convert-cifar10", str(source),
                          str(tmp_path / "out"), "--runner", "beam", *flags],
                         capture_output=True, text=True, timeout=200)
    assert run.returncode == 2, run.stderr
    assert run.stderr.splitlines()[-1] == (
        f"tf1compat convert-cifar10: error: {batch}: record 3: label byte 0 is 12, expected "
        "0..9 (while writing shard task cifar10_train.tfrecord, input 6 of 30 (6))")
    assert "Traceback" not in run.stderr and "ERROR" not in run.stderr, run.stderr
    if not flags:
        assert run.stderr.count("\n") == 1, run.stderr
    assert not (tmp_path / "out").exists()


@pytest.mark.timeout(120)
def test_cli_passes_beams_flags_as_beam_users_write_them(tmp_path, cifar_source, capsys):
    from tf1compat import cli
    cifar10.convert(cifar_source, tmp_path / "local", workers=1)
    for out, flags in (("beam", ["--beam-options", "--direct_running_mode=in_memory",
                                 "--direct_num_workers=1"]),
                       ("quoted", ["--beam-options=--direct_running_mode=in_memory "
                                   "--direct_num_workers=1"])):
        assert cli.main(["convert-cifar10", cifar_source, str(tmp_path / out),
                         "--runner", "beam", *flags]) == 0
        assert files_of(tmp_path / out) == files_of(tmp_path / "local")
    assert "cifar10 -> " in capsys.readouterr().out


@pytest.mark.timeout(120)
@pytest.mark.parametrize("flag, message", [
    ("--direct_num_workers=abc", "argument --direct_num_workers: invalid int value: 'abc'"),
    ("--direct_num_worker=2", "no Beam option is called --direct_num_worker"),
    ("--runner=NoSuchRunner", "Unexpected pipeline runner: NoSuchRunner. Valid values are ")])
def test_beams_own_option_errors_are_one_line_and_exit_2(tmp_path, cifar_source, capsys,
                                                         flag, message):
    from tf1compat import cli
    assert cli.main(["convert-cifar10", cifar_source, str(tmp_path / "out"), "--runner",
                     "beam", "--beam-options", flag]) == 2
    out, err = capsys.readouterr()
    assert err.startswith(f"tf1compat convert-cifar10: error: --beam-options: {message}")
    assert err.count("\n") == 1 and out == ""
    assert not (tmp_path / "out").exists()


@pytest.mark.timeout(120)
def test_beam_raises_this_runs_failure_not_one_a_killed_run_left(tmp_path):
    import pickle

    from tf1compat.convert.beam import run_tasks
    tasks = [*plan(), *convert.build_tasks("bad.tfrecord", range(12, 15), to_records,
                                           max_part_inputs=5)]
    (tmp_path / f"{tasks[0].file_name}.error").write_bytes(
        pickle.dumps(RuntimeError("an earlier run's failure")))    # that task passes now
    with pytest.raises(CifarFormatError, match="item 13 is bad"):
        run_tasks(tasks, tmp_path, [])


@pytest.mark.timeout(120)
def test_write_shards_transform_in_a_users_pipeline(tmp_path):
    import apache_beam as beam

    from tf1compat.convert.beam import pipeline_options
    tasks = convert.build_tasks("all.tfrecord", range(7), to_records, max_part_inputs=7)
    with beam.Pipeline(options=pipeline_options([])) as pipeline:
        results = (pipeline | beam.Create(tasks) | convert.WriteShards(tmp_path)
                   | beam.Map(lambda result: (result.file_name, result.records)))
        counts = results | beam.combiners.ToList()
        counts | beam.Map(lambda found: (tmp_path / "counts").write_text(repr(found)))
    assert (tmp_path / "counts").read_text() == "[('all.tfrecord', 7)]"
    assert list(tfrecord.iter_records(tmp_path / "all.tfrecord")) == [
        make_example({"item": i}) for i in range(7)]
