"""Shard plans (tf1compat.convert: plan, staging, local): parts, staging, commit, resume,
the local runner however Python was started, killed runs and full disks.

The reference for every output is the same records written by one TFRecordWriter."""

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from tf1compat import tfrecord
from tf1compat.convert import local, plan, sharded
from tf1compat.convert.plan import build_tasks, plan_key
from tf1compat.convert.staging import STAGING_PREFIX, Staging
from tf1compat.records.example import make_example


def encode(i):
    """The record of item ``i`` (module-level: the local runner's workers import it)."""
    return make_example({"i": i, "square": [i * i, -i], "name": f"item-{i}"})


def to_records(items):
    return map(encode, items)


def failing_records(items):
    for item in items:
        if item == 13:
            raise ValueError(f"item {item} is bad")
        yield encode(item)


def reference_bytes(path, items):
    tfrecord.write_records(path, map(encode, items))
    return open(path, "rb").read()


def listing(directory):
    return sorted(os.listdir(directory))


def run_plan(tasks, output_dir, key="plan", runner=None, **commit):
    with Staging(output_dir, plan_key(key)) as staging:
        results = staging.write(tasks, runner or local.LocalRunner(1))
        staging.commit(tasks, **commit)
    return results


def test_parts_concatenate_to_the_bytes_of_one_writer(tmp_path):
    tasks = build_tasks("a.tfrecord", range(10), to_records, max_part_inputs=3)
    assert [(t.part, t.num_parts, list(t.inputs)) for t in tasks] == [
        (0, 4, [0, 1, 2]), (1, 4, [3, 4, 5]), (2, 4, [6, 7, 8]), (3, 4, [9])]
    assert tasks[1].file_name == "a.tfrecord.part-00001-of-00004"
    (tmp_path / "out").mkdir()
    results = run_plan(tasks, tmp_path / "out")
    assert [r.records for r in results] == [3, 3, 3, 1]
    assert listing(tmp_path / "out") == ["a.tfrecord"]
    assert ((tmp_path / "out" / "a.tfrecord").read_bytes()
            == reference_bytes(tmp_path / "ref.tfrecord", range(10)))


def test_compressed_shards_are_one_part_and_empty_shards_one_empty_part():
    assert len(build_tasks("z", range(10), to_records, max_part_inputs=3,
                           compression="GZIP")) == 1
    (task,) = build_tasks("e", range(0), to_records, max_part_inputs=3)
    assert (task.file_name, len(task.inputs)) == ("e", 0)


def test_distinct_file_names_required(tmp_path):
    tasks = build_tasks("a", range(2), to_records, max_part_inputs=5) * 2
    with pytest.raises(ValueError, match=r"repeated: \['a'\]"), \
            Staging(tmp_path, plan_key("x")) as staging:
        staging.write(tasks)
    assert listing(tmp_path) == []


@pytest.mark.timeout(60)
@pytest.mark.parametrize("workers", [1, 2])
def test_a_failing_task_leaves_the_output_folder_as_it_was(tmp_path, workers):
    (tmp_path / "a.tfrecord").write_bytes(b"earlier output")
    tasks = build_tasks("a.tfrecord", range(20), failing_records, max_part_inputs=4)
    with pytest.raises(ValueError, match="item 13 is bad") as e:
        run_plan(tasks, tmp_path, runner=local.LocalRunner(workers))
    if workers > 1:     # raised here with its type; the worker's traceback is the cause
        assert "failing_records" in str(e.value.__cause__)
    assert listing(tmp_path) == ["a.tfrecord"]
    assert (tmp_path / "a.tfrecord").read_bytes() == b"earlier output"


def test_local_runner_rejects_bad_workers():
    with pytest.raises(ValueError, match="^LocalRunner: workers must be a non-negative "
                                         "integer or None, got -1$"):
        local.LocalRunner(-1)


@pytest.mark.timeout(60)
def test_unpicklable_task_named(tmp_path):
    import threading
    tasks = build_tasks("a", [threading.Lock()] * 4, to_records, max_part_inputs=1)
    with pytest.raises(TypeError, match="shard task 'a.part-00000-of-00004' cannot be sent"):
        run_plan(tasks, tmp_path, runner=local.LocalRunner(2))
    assert listing(tmp_path) == []


def test_a_second_live_run_into_the_folder_is_refused_naming_the_first(tmp_path):
    with Staging(tmp_path, plan_key("first"), what="imagefolder.convert flowers"):
        for key in ("first", "second"):     # the same plan or another one
            with pytest.raises(BlockingIOError) as e:
                Staging(tmp_path, plan_key(key)).__enter__()
            assert str(e.value).startswith(
                f"{tmp_path}: another tf1compat conversion is writing into this folder "
                f"(imagefolder.convert flowers, pid {os.getpid()} on ")
            assert len(listing(tmp_path)) == 1          # the second left nothing
    assert listing(tmp_path) == []


def test_dead_staging_of_another_plan_is_cleared(tmp_path):
    dead = tmp_path / f"{STAGING_PREFIX}0123456789abcdef"
    dead.mkdir()
    (dead / "x.tfrecord.part-00000-of-00002").write_bytes(b"half")
    (dead / ".lock").write_text("")
    run_plan(build_tasks("a", range(3), to_records, max_part_inputs=2), tmp_path)
    assert listing(tmp_path) == ["a"]


def test_commit_failing_midway_is_finished_by_the_next_run(tmp_path, monkeypatch):
    for name in ("a", "b", "old"):
        (tmp_path / name).write_bytes(b"old")
    tasks = [t for name in ("a", "b") for t in build_tasks(name, range(5), to_records,
                                                            max_part_inputs=2)]
    moves = []
    real_replace = os.replace

    def replace_then_fail(source, target):
        if os.path.dirname(target) == str(tmp_path):
            moves.append(target)
            if len(moves) == 2:
                raise OSError(5, "Input/output error")
        real_replace(source, target)

    monkeypatch.setattr(os, "replace", replace_then_fail)
    with pytest.raises(OSError, match="Input/output error"):
        run_plan(tasks, tmp_path, stale=["old"])
    monkeypatch.undo()
    assert (tmp_path / "b").read_bytes() == b"old"      # half committed, journal kept
    run_plan(build_tasks("c", range(1), to_records, max_part_inputs=2), tmp_path, key="next")
    assert listing(tmp_path) == ["a", "b", "c"]
    expected = reference_bytes(tmp_path.parent / "ref", range(5))
    assert (tmp_path / "a").read_bytes() == (tmp_path / "b").read_bytes() == expected


def test_extra_files_and_stale_names_are_committed_together(tmp_path):
    (tmp_path / "old-shard").write_bytes(b"x")
    (tmp_path / "mine").write_bytes(b"keep")
    run_plan(build_tasks("a", range(3), to_records, max_part_inputs=2), tmp_path,
             extra_files={"labels.txt": "0:cat\n"}, stale=["old-shard", "missing"])
    assert listing(tmp_path) == ["a", "labels.txt", "mine"]
    assert (tmp_path / "labels.txt").read_text() == "0:cat\n"


def test_plan_key_changes_with_the_function_code():
    def make(body):
        namespace = {}
        exec(f"def encode(item):\n    return {body}\n", namespace)    # same name, new code
        return namespace["encode"]

    assert plan_key("k", make("item")) == plan_key("k", make("item"))
    assert plan_key("k", make("item")) != plan_key("k", make("item + 1"))


# --------------------------------------------------- however Python was started

SCRIPT = """\
{first_line}
import sys
from tf1compat import tfrecord
from tf1compat.records.example import make_example

def encode(i):      # defined in __main__: reaches the workers by cloudpickle
    return make_example({{"i": i, "tf": int("tensorflow" in sys.modules)}})

tfrecord.write_sharded(range(300), {out!r} + "/s.tfrecord", num_shards=2, workers=2,
                       encode=encode)
print("converted")
"""


def expected_launch_output(tmp_path):
    paths = tfrecord.shard_paths(tmp_path / "ref" / "s.tfrecord", 2)
    os.makedirs(tmp_path / "ref")
    for shard, path in enumerate(paths):
        tfrecord.write_records(path, (make_example({"i": i, "tf": 0})
                                      for i in range(shard, 300, 2)))
    return [open(p, "rb").read() for p in paths]


def run_launch(tmp_path, mode, first_line=""):
    out = tmp_path / "out"
    out.mkdir()
    script = SCRIPT.format(first_line=first_line, out=str(out))
    (tmp_path / "script.py").write_text(script)
    argv, stdin = {"script": (["script.py"], None), "-c": (["-c", script], None),
                   "stdin": (["-"], script)}[mode]
    result = subprocess.run([sys.executable, *argv], input=stdin, cwd=tmp_path,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-1] == "converted"
    return [p.read_bytes() for p in sorted(out.iterdir())]


@pytest.mark.timeout(120)
@pytest.mark.parametrize("mode", ["script", "-c", "stdin"])
def test_local_runner_works_without_a_main_guard(tmp_path, mode):
    assert run_launch(tmp_path, mode) == expected_launch_output(tmp_path)


@pytest.mark.tf
@pytest.mark.slow
@pytest.mark.timeout(180)
def test_local_runner_with_tensorflow_imported_first_keeps_workers_free_of_it(tmp_path):
    assert (run_launch(tmp_path, "script", "import tensorflow")
            == expected_launch_output(tmp_path))       # "tf": 0 in every record


# ------------------------------------------------------------ killed outright

KILL_SCRIPT = """\
import os, sys, time
from tf1compat.convert import build_tasks, plan_key, write_shards
from tf1compat.records.example import make_example

out, log = sys.argv[1], sys.argv[2]

def to_records(items):
    open(os.path.join(log, f"{os.getpid()}-{items[0]}"), "w").close()
    for i in items:
        if os.environ.get("SLOW") and items[0] not in (0, 8):
            time.sleep(60)
        yield make_example({"i": i})

tasks = [t for shard in range(2) for t in build_tasks(
    f"s-{shard}.tfrecord", range(shard * 40, shard * 40 + 40, 1), to_records,
    max_part_inputs=8)]
print("started", flush=True)
write_shards(tasks, out, key=plan_key("kill test"), workers=2)
print("done", flush=True)
"""


def alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def staged_results(out):
    return [name for staging in out.glob(STAGING_PREFIX + "*")
            for name in os.listdir(staging) if name.endswith(".result.json")]


def encode_leaving_a_child(item):
    """``encode``, also starting a process that outlives the task (its pid in a file
    named by the item, in the folder given by the item's path)."""
    folder, i = item
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    (folder / f"{i}.pid").write_text(str(child.pid))
    return encode(i)


@pytest.mark.timeout(120)
def test_what_a_tasks_function_leaves_running_ends_with_the_conversion(tmp_path):
    """A worker is the leader of a process group of its own: what a task's function
    started and left running ends when the worker is stopped."""
    pids = tmp_path / "pids"
    pids.mkdir()
    sharded.write_sharded([(pids, i) for i in range(4)], tmp_path / "out" / "t.tfrecord", 2,
                          workers=2, encode=encode_leaving_a_child)
    started = [int(path.read_text()) for path in pids.iterdir()]
    assert len(started) == 4
    deadline = time.monotonic() + 10
    while any(_alive(pid) for pid in started):
        assert time.monotonic() < deadline, "a process a task started still runs"
        time.sleep(0.05)


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.mark.timeout(90)
def test_sigkilled_run_leaves_no_process_and_is_resumed(tmp_path):
    out, log = tmp_path / "out", tmp_path / "log"
    out.mkdir()
    log.mkdir()
    (tmp_path / "kill.py").write_text(KILL_SCRIPT)
    command = [sys.executable, "kill.py", str(out), str(log)]
    run = subprocess.Popen(command, cwd=tmp_path, env={**os.environ, "SLOW": "1"},
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while len(staged_results(out)) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(staged_results(out)) == 2        # tasks 0 and 8 done, two slow ones running
    killed_workers = {int(name.split("-")[0]) for name in os.listdir(log)}
    run.send_signal(signal.SIGKILL)
    stdout, _ = run.communicate(timeout=10)     # EOF: nothing holds the dead run's pipes
    assert stdout == b"started\n"
    deadline = time.monotonic() + 10
    while any(map(alive, killed_workers)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(map(alive, killed_workers)), "orphan workers"
    first_run = set(os.listdir(log))

    rerun = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert rerun.returncode == 0, rerun.stderr
    rerun_tasks = sorted(int(n.split("-")[1]) for n in set(os.listdir(log)) - first_run)
    assert rerun_tasks == [16, 24, 32, 40, 48, 56, 64, 72]      # 0 and 8 were reused
    assert listing(out) == ["s-0.tfrecord", "s-1.tfrecord"]     # no staging, no temporary
    for shard in range(2):
        expected = [make_example({"i": i}) for i in range(shard * 40, shard * 40 + 40)]
        assert list(tfrecord.iter_records(out / f"s-{shard}.tfrecord")) == expected


# -------------------------------------------------------------------- disk full

DISK_FULL = """\
import os, resource, signal, sys
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)      # over the limit: EFBIG, as a full disk
resource.setrlimit(resource.RLIMIT_FSIZE, (100_000, 100_000))
from tf1compat import tfrecord
out = sys.argv[1]
try:
    if sys.argv[2] == "writer":
        with tfrecord.TFRecordWriter(os.path.join(out, "big.tfrecord")) as writer:
            for i in range(300):
                writer.write(os.urandom(1000))
    else:
        tfrecord.write_sharded([os.urandom(1000) for _ in range(300)],
                               os.path.join(out, "big.tfrecord"), num_shards=2)
except OSError as e:
    print(e.errno)
"""


@pytest.mark.timeout(60)
@pytest.mark.parametrize("api", ["writer", "write_sharded"])
def test_full_disk_leaves_no_temporary_file(tmp_path, api):
    import errno
    (tmp_path / "disk_full.py").write_text(DISK_FULL)
    (tmp_path / "out").mkdir()
    result = subprocess.run([sys.executable, "disk_full.py", str(tmp_path / "out"), api],
                            cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert result.stdout.strip() == str(errno.EFBIG), result.stderr
    assert listing(tmp_path / "out") == []


def test_result_records_what_was_written_and_skipped(tmp_path):
    def some_skipped(items):
        for item in items:
            yield plan.SkippedInput(f"item-{item}", "odd") if item % 2 else encode(item)

    (task,) = build_tasks("a", range(5), some_skipped, max_part_inputs=10)
    result = plan.write_shard(task, tmp_path)
    assert (result.records, [str(s) for s in result.skipped]) == (3, ["item-1 (odd)",
                                                                     "item-3 (odd)"])
    assert result.size_bytes == os.path.getsize(tmp_path / "a")
    assert json.loads((tmp_path / "a.result.json").read_text())["skipped"] == [
        ["item-1", "odd"], ["item-3", "odd"]]
    assert plan.read_result(tmp_path, task) == result


def test_records_without_encode_stream_in_bounded_memory(tmp_path):
    import tracemalloc
    records = (bytes([i % 256]) * 10_000 for i in range(2000))     # 20 MB in all
    tracemalloc.start()
    tfrecord.write_sharded(records, tmp_path / "r.tfrecord", num_shards=2)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 8e6, peak
    assert [r[:1] for r in tfrecord.iter_records(tmp_path / "r-00001-of-00002.tfrecord")][:2] \
        == [b"\x01", b"\x03"]

    def failing():
        yield b"one"
        raise OSError(28, "No space left on device")

    with pytest.raises(OSError, match="No space left"):
        tfrecord.write_sharded(failing(), tmp_path / "s.tfrecord", num_shards=2)
    assert listing(tmp_path) == ["r-00000-of-00002.tfrecord", "r-00001-of-00002.tfrecord"]


def test_write_sharded_resumes_only_a_run_of_the_same_version(tmp_path, monkeypatch):
    keys = []
    real_write_shards = sharded.write_shards
    monkeypatch.setattr(sharded, "write_shards", lambda *args, key, **kwargs: keys.append(
        key) or real_write_shards(*args, key=key, **kwargs))
    for version in ("0.1.0", "0.2.0", "0.2.0"):
        monkeypatch.setattr(sharded, "__version__", version)
        tfrecord.write_sharded(range(3), tmp_path / "t", 2, workers=0, encode=encode)
    assert keys[0] != keys[1] == keys[2]


# ------------------------------------------------------------------ without fcntl

NO_FCNTL = """\
import sys


class NoFcntl:
    \"\"\"As on Windows: there is no fcntl module.\"\"\"

    def find_spec(self, name, path=None, target=None):
        if name == "fcntl":
            raise ModuleNotFoundError("No module named 'fcntl'", name="fcntl")


sys.meta_path.insert(0, NoFcntl())
"""

WITHOUT_FCNTL = """\
import os, sys
from tf1compat import cli, tfrecord
from tf1compat.convert import write_shards, build_tasks, plan_key
from tf1compat.convert.staging import Staging
from tf1compat.records.example import make_example

out = sys.argv[1]
def encode(i):
    return make_example({"i": i, "fcntl": int("fcntl" in sys.modules)})

paths = tfrecord.write_sharded(range(100), os.path.join(out, "s.tfrecord"), 2, workers=2,
                               encode=encode)
assert [tfrecord.count_records(p) for p in paths] == [50, 50]
assert cli.main(["verify", *paths]) == 0
with Staging(out, plan_key("first")):
    try:
        Staging(out, plan_key("second")).__enter__()
    except BlockingIOError:
        print("refused")
print("fcntl" in sys.modules)
"""


@pytest.mark.timeout(120)
def test_the_tf_free_tools_work_without_fcntl(tmp_path):
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "sitecustomize.py").write_text(NO_FCNTL)    # workers get it too
    (tmp_path / "out").mkdir()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(tmp_path / "site"), os.environ.get("PYTHONPATH", "")])}
    result = subprocess.run([sys.executable, "-c", WITHOUT_FCNTL, str(tmp_path / "out")],
                            env=env, capture_output=True, text=True, timeout=100)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-2:] == ["refused", "False"]
    assert result.stderr == ""
    paths = sorted((tmp_path / "out").glob("*.tfrecord"))
    expected = [[encode_without_fcntl(i) for i in range(shard, 100, 2)] for shard in range(2)]
    assert [list(tfrecord.iter_records(p)) for p in paths] == expected   # none saw fcntl


def encode_without_fcntl(i):
    return make_example({"i": i, "fcntl": 0})


def test_write_sharded_creates_a_missing_folder_and_a_failure_removes_it(tmp_path):
    paths = tfrecord.write_sharded([b"a", b"b", b"c"], tmp_path / "new" / "deep" / "t", 2)
    assert [list(tfrecord.iter_records(p)) for p in paths] == [[b"a", b"c"], [b"b"]]
    with pytest.raises(TypeError, match="item 1 is int"):
        tfrecord.write_sharded([b"a", 1], tmp_path / "other" / "t", 2)
    assert listing(tmp_path) == ["new"]


def test_one_conversion_per_folder_also_through_a_link(tmp_path):
    (tmp_path / "out").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "out")
    with Staging(tmp_path / "link", plan_key("first"), what="cifar10.convert"):
        with pytest.raises(BlockingIOError, match=r"\(cifar10.convert, pid "):
            Staging(tmp_path / "out", plan_key("second")).__enter__()


@pytest.mark.timeout(30)
def test_an_output_folder_that_is_a_dangling_link_is_written_through(tmp_path):
    (tmp_path / "link").symlink_to(tmp_path / "target")
    with pytest.raises(TypeError, match="item 0 is int"):
        tfrecord.write_sharded([1], tmp_path / "link" / "t", 1)
    assert listing(tmp_path) == ["link"]                # the target made for it, removed
    tfrecord.write_sharded([b"a"], tmp_path / "link" / "t", 1)
    assert listing(tmp_path / "target") == ["t-00000-of-00001.tfrecord"]
