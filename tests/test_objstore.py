"""Conversion into object stores, against a real S3-compatible server (moto in server
mode, a process on 127.0.0.1 started here): the bytes written on disk, all or nothing
(staging under a hidden prefix, a journal, a manifest written last), resumed after a
kill, and the reading tools on URLs, which take only what the manifest lists."""

import itertools
import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest
from servers import s3_filesystem

from tf1compat import cifar10, cli, convert, imagefolder
from tf1compat.cifar10._convert import encode_png
from tf1compat.errors import IncompleteOutputError
from tf1compat.records import tfrecord
from tf1compat.records.committed import committed_files
from tf1compat.records.example import make_example

pytestmark = pytest.mark.timeout(180)
MANIFEST = ".tf1compat-manifest.json"
_buckets = itertools.count()


@pytest.fixture(scope="module")
def s3():
    """The S3 filesystem of a moto server on 127.0.0.1."""
    with s3_filesystem() as fs:
        yield fs


@pytest.fixture
def bucket(s3):
    name = f"test-{os.getpid()}-{next(_buckets)}"
    s3.mkdir(name)
    return name


def objects(s3, prefix):
    """``{relative name: bytes}`` of every object under ``prefix`` (hidden ones too)."""
    s3.invalidate_cache()
    return {path[len(prefix) + 1:]: s3.cat_file(path) for path in s3.find(prefix)}


def files_of(directory):
    return {name: (directory / name).read_bytes() for name in sorted(os.listdir(directory))}


def encode(i):
    return make_example({"i": i, "text": f"item {i}".encode() * (i % 7)})


def test_write_sharded_into_s3_writes_the_bytes_written_on_disk(s3, bucket, tmp_path):
    local = convert.write_sharded(range(3000), tmp_path / "train.tfrecord", 3, workers=0,
                                  encode=encode)
    urls = convert.write_sharded(range(3000), f"s3://{bucket}/d/train.tfrecord", 3,
                                 workers=2, encode=encode)
    assert [u.rsplit("/", 1)[1] for u in urls] == [os.path.basename(p) for p in local]
    stored = objects(s3, f"{bucket}/d")
    manifest = json.loads(stored.pop(MANIFEST))
    assert stored == files_of(tmp_path)     # no staging object, no part left
    assert manifest["files"] == {name: len(data) for name, data in stored.items()}
    # the reading tools take the URLs
    assert list(tfrecord.iter_records(urls[1])) == list(tfrecord.iter_records(local[1]))
    report = tfrecord.verify(urls[2])
    assert report.ok and report.records == 1000 and report.size_bytes == len(
        stored[os.path.basename(local[2])])


def test_cifar10_and_image_folders_into_s3_match_disk(s3, bucket, tmp_path):
    source = cifar10.make_synthetic(tmp_path / "cifar", 40, 10, seed=3)
    cifar10.convert(source, tmp_path / "disk", num_shards=2, workers=0, quiet=True)
    summary = cifar10.convert(source, f"s3://{bucket}/cifar/", num_shards=2, workers=2,
                              quiet=True)
    stored = objects(s3, f"{bucket}/cifar")
    assert json.loads(stored.pop(MANIFEST))["files"].keys() == stored.keys()
    assert stored == files_of(tmp_path / "disk")
    assert summary.files["train"][0] == f"s3://{bucket}/cifar/cifar10_train-00000-of-00002.tfrecord"
    again = cifar10.convert(source, f"s3://{bucket}/cifar", num_shards=2, quiet=True)
    assert again.skipped                   # valid outputs in the store are recognized

    rng = np.random.default_rng(5)
    for kind in ("cats", "dogs"):
        os.makedirs(tmp_path / "photos" / kind)
        images = rng.integers(0, 256, (6, 8, 10, 3), dtype=np.uint8)
        for i, data in enumerate(encode_png(images)):
            (tmp_path / "photos" / kind / f"{i}.png").write_bytes(data)
    imagefolder.convert(tmp_path / "photos", tmp_path / "flowers", name="f", num_shards=2,
                        workers=0, quiet=True)
    imagefolder.convert(tmp_path / "photos", f"s3://{bucket}/flowers", name="f", num_shards=2,
                        workers=2, quiet=True)
    stored = objects(s3, f"{bucket}/flowers")
    stored.pop(MANIFEST)
    assert stored == files_of(tmp_path / "flowers")


KILLED_RUN = """
import os, signal, sys
from tf1compat import convert
from tf1compat.records.example import make_example

def encode(i):
    if i == int(sys.argv[2]):
        os.kill(os.getpid(), signal.SIGKILL)
    return make_example({"i": i, "text": f"item {i}".encode() * (i % 7)})

if sys.argv[3] == "commit":        # killed after the first object is copied into place
    import s3fs
    copy = s3fs.S3FileSystem.copy
    def copy_then_die(self, *args, **kwargs):
        copy(self, *args, **kwargs)
        os.kill(os.getpid(), signal.SIGKILL)
    s3fs.S3FileSystem.copy = copy_then_die
convert.write_sharded(range(3000), sys.argv[1], 3, workers=0, encode=encode)
"""


@pytest.mark.slow
@pytest.mark.parametrize("when", ["writing", "commit"])
def test_a_killed_run_leaves_no_complete_looking_set_and_is_resumed(s3, bucket, tmp_path,
                                                                    when, capsys):
    url = f"s3://{bucket}/k/train.tfrecord"
    script = tmp_path / "run.py"
    script.write_text(textwrap.dedent(KILLED_RUN))
    kill_at = "2500" if when == "writing" else "-1"
    run = subprocess.run([sys.executable, str(script), url, kill_at, when], timeout=120,
                         env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert run.returncode == -signal.SIGKILL
    s3.invalidate_cache()
    final = s3.glob(f"{bucket}/k/train-*")          # what a tf.data glob would read
    assert not s3.exists(f"{bucket}/k/{MANIFEST}")
    if when == "writing":
        assert final == []                  # only staged objects, under the hidden prefix
        staged = s3.find(f"{bucket}/k")
        assert staged and all("/.tf1compat-staging-" in path for path in staged)
    else:
        assert len(final) == 1              # one of three: no manifest says it is complete
        names = [f"train-0000{i}-of-00003.tfrecord" for i in range(3)]
        with pytest.raises(IncompleteOutputError) as e:
            committed_files(f"s3://{bucket}/k/train-*")
        assert str(e.value).startswith(f"s3://{bucket}/k: a tf1compat conversion into this "
                                       "folder is under way or was cut short")
        assert e.value.missing == names[1:] and str(e.value).endswith(
            f"not in place yet: {names[1]}, {names[2]}: run the conversion again to finish it")
        with pytest.raises(IncompleteOutputError, match="under way or was cut short"):
            list(tfrecord.iter_records(f"s3://{final[0]}"))
        assert cli.main(["verify", f"s3://{bucket}/k/train-*"]) == 2
        assert "run the conversion again" in capsys.readouterr().err

    convert.write_sharded(range(3000), tmp_path / "train.tfrecord", 3, workers=0,
                          encode=encode)
    convert.write_sharded(range(3000), url, 3, workers=0, encode=encode)
    stored = objects(s3, f"{bucket}/k")
    assert sorted(json.loads(stored.pop(MANIFEST))["files"]) == sorted(stored)
    assert stored == {name: data for name, data in files_of(tmp_path).items()
                      if name.endswith(".tfrecord")}
    urls = committed_files(f"s3://{bucket}/k/train-*")
    assert [b"".join(tfrecord.iter_records(u)) for u in urls] == [
        b"".join(tfrecord.iter_records(tmp_path / u.rsplit("/", 1)[1])) for u in urls]


def test_a_killed_conversion_into_the_store_leaves_no_scratch_for_good(s3, bucket, tmp_path,
                                                                      monkeypatch):
    """A .tar.gz converted into S3 is extracted into a local scratch folder; a run
    SIGKILLed mid-conversion left it in the temp folder for good (180 MB for CIFAR-10).
    The next conversion on the machine removes it; a live run's folder is kept."""
    import tempfile

    from tf1compat.convert.scratch import scratch_folder
    temp = tmp_path / "temp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    archive = cifar10.make_synthetic(tmp_path / "cifar", 3000, 10, seed=8, archive=True)
    run = subprocess.Popen(
        [sys.executable, "-m", "tf1compat", "convert-cifar10", str(archive),
         f"s3://{bucket}/killed", "--shards", "4", "--workers", "1", "--quiet"],
        env={**os.environ, "TMPDIR": str(temp)}, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while not list(temp.glob("tf1compat-scratch-work-*/source/*")):
        assert run.poll() is None, run.stderr.read()
        assert time.monotonic() < deadline, "the archive was never extracted"
        time.sleep(0.01)
    run.kill()
    run.wait()
    (dead,) = temp.glob("tf1compat-scratch-work-*")
    assert any((dead / "source").rglob("*.bin"))
    with scratch_folder("live") as live:        # another run, alive: kept
        convert.write_sharded(range(20), f"s3://{bucket}/next/t.tfrecord", 2, workers=0,
                              encode=encode)
        assert not dead.exists() and os.path.isdir(live)
    assert list(temp.iterdir()) == []


def _scratch_folders_kept(count):
    """How many of ``count`` scratch folders made here one after another lived through
    their block (another process's start removes dead runs' folders meanwhile)."""
    from tf1compat.convert.scratch import scratch_folder

    kept = 0
    for _ in range(count):
        with scratch_folder("race") as folder:
            with open(os.path.join(folder, "part"), "wb") as part:
                part.write(b"shard")
            kept += os.path.isfile(os.path.join(folder, "part"))
    return kept


def test_scratch_folders_made_at_once_by_several_processes_all_live(tmp_path, monkeypatch):
    """Four processes making scratch folders at once (Dask workers on one machine): a
    folder seen by another process between its making and its locking was taken for a
    dead run's and removed under its maker (FileNotFoundError within the first few
    hundred folders, and once test_dask's killed-worker test lost a shard's folder).
    Made hidden and renamed once locked, every folder lives through its block; none
    is left."""
    import multiprocessing
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))   # the children's too (fork)
    with multiprocessing.get_context("fork").Pool(4) as pool:
        assert pool.map(_scratch_folders_kept, [300] * 4) == [300] * 4
    assert list(tmp_path.iterdir()) == []


def test_readers_take_only_the_files_the_manifest_lists(s3, bucket, capsys):
    folder = f"s3://{bucket}/m"
    train = convert.write_sharded(range(30), f"{folder}/train.tfrecord", 3, workers=0,
                                  encode=encode)
    valid = convert.write_sharded(range(10), f"{folder}/valid.tfrecord", 2, workers=0,
                                  encode=encode)
    # the second conversion's manifest keeps the first one's files
    assert committed_files(f"{folder}/train-*") == train
    assert committed_files(folder) == train + valid
    data = s3.cat_file(train[1])

    s3.rm(train[1])                              # a shard gone (as while a commit copies)
    with pytest.raises(IncompleteOutputError) as e:
        committed_files(f"{folder}/train-*")
    assert str(e.value) == (
        f"{folder}: the files do not match the manifest {MANIFEST} of the last tf1compat "
        "conversion into this folder (missing train-00001-of-00003.tfrecord): a conversion "
        "may be under way, or the folder was changed since; run the conversion again")
    assert e.value.missing == ["train-00001-of-00003.tfrecord"] and e.value.extra == []
    with pytest.raises(IncompleteOutputError, match=r"\(missing train-00001-of-00003"):
        committed_files(folder)
    assert cli.main(["verify", f"{folder}/train-*"]) == 2
    assert "(missing train-00001-of-00003.tfrecord)" in capsys.readouterr().err
    assert tfrecord.count_records(train[0]) == 10    # a listed file alone still reads

    s3.pipe_file(train[1], data[:-1])            # back, but not the size listed
    s3.pipe_file(f"{bucket}/m/train-extra.tfrecord", data)   # one no commit wrote
    with pytest.raises(IncompleteOutputError) as e:
        committed_files(f"{folder}/train-*")
    assert e.value.extra == ["train-00001-of-00003.tfrecord", "train-extra.tfrecord"]
    assert (f"(not listed train-extra.tfrecord; another size than listed: "
            f"train-00001-of-00003.tfrecord ({len(data) - 1:,} bytes, listed {len(data):,}))"
            in str(e.value))
    with pytest.raises(IncompleteOutputError, match="another size than listed"):
        tfrecord.verify(train[1])
    assert committed_files(f"{folder}/valid-*") == valid     # the other set is whole


def test_a_live_conversion_into_the_prefix_is_named(s3, bucket):
    from tf1compat.convert.objstore import ObjectStaging
    url = f"s3://{bucket}/busy"
    with ObjectStaging(url, "f" * 64, what="another conversion"):
        with pytest.raises(BlockingIOError, match=r"s3://.*/busy: another tf1compat "
                                                  r"conversion is writing here \(another "
                                                  r"conversion, pid \d+"):
            convert.write_sharded(range(10), f"{url}/t.tfrecord", 2, workers=0, encode=encode)
    convert.write_sharded(range(10), f"{url}/t.tfrecord", 2, workers=0, encode=encode)
    assert s3.exists(f"{bucket}/busy/{MANIFEST}")


def test_of_two_conversions_started_at_once_at_most_one_goes_ahead(s3, bucket):
    """An object store has no create-if-absent: run A lists the prefix (nobody there),
    run B then lists it too, writes its owner and goes ahead, and A writes its owner.
    Both went ahead, and each commit's stale-shard sweep could delete the other's
    fresh shards (two --shards counts into one folder). A now sees B and withdraws."""
    from tf1compat.convert.objstore import ObjectStaging
    url = f"s3://{bucket}/race"
    first = ObjectStaging(url, "a" * 64, what="conversion A")
    second = ObjectStaging(url, "b" * 64, what="conversion B")
    listing, listed = first._stagings, []

    def list_then_let_the_other_in():
        found = listing()
        if not listed:
            listed.append(found)
            second.__enter__()          # B goes ahead while A is between list and write
        return found
    first._stagings = list_then_let_the_other_in
    with pytest.raises(BlockingIOError, match=r"another tf1compat conversion is writing "
                                              r"here \(conversion B, pid \d+"):
        first.__enter__()
    assert listed == [[]]
    s3.invalidate_cache()
    assert not s3.exists(f"{bucket}/race/.tf1compat-staging-{'a' * 16}/.owner.json")
    second.__exit__(None, None, None)
    with ObjectStaging(url, "a" * 64, what="conversion A"):    # alone now: it goes ahead
        pass


def test_a_missing_bucket_is_named(s3, capsys, tmp_path):
    source = cifar10.make_synthetic(tmp_path, 10, 10, seed=1)
    assert cli.main(["convert-cifar10", str(source), "s3://no-such-bucket/c", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("tf1compat convert-cifar10: error: ") and err.count("\n") == 1
    assert "no-such-bucket" in err


def test_cli_inspect_and_verify_read_urls(s3, bucket, capsys):
    convert.write_sharded(range(20), f"s3://{bucket}/v/t.tfrecord", 2, workers=0,
                          encode=encode)
    assert cli.main(["verify", f"s3://{bucket}/v/t-*.tfrecord"]) == 0
    out = capsys.readouterr().out
    assert f"s3://{bucket}/v/t-00001-of-00002.tfrecord: 10 records" in out
    assert "2 file(s) checked, 0 bad" in out
    assert cli.main(["inspect", f"s3://{bucket}/v/t-00000-of-00002.tfrecord"]) == 0
    assert "10 records" in capsys.readouterr().out
    assert cli.main(["verify", f"s3://{bucket}/v/x-*.tfrecord"]) == 2
    assert "no object matches" in capsys.readouterr().err


def test_without_the_extra_the_error_names_it(tmp_path):
    code = ("import sys; sys.modules['s3fs'] = None\n"
            "from tf1compat import cli\n"
            "raise SystemExit(cli.main(['convert-cifar10', sys.argv[1], 's3://b/c']))")
    source = cifar10.make_synthetic(tmp_path, 10, 10, seed=1)
    run = subprocess.run([sys.executable, "-c", code, str(source)], capture_output=True,
                         text=True, timeout=60)
    assert run.returncode == 2, run.stderr
    assert run.stderr.count("\n") == 1 and "pip install 'tf1compat[s3]'" in run.stderr


def test_gs_urls_without_gcsfs_name_the_gcs_extra(tmp_path):
    """gs:// cannot be reached here (no network): what is tested is the extra and the
    error naming it when gcsfs is missing (blocked in the child, installed or not)."""
    import configparser
    extras = configparser.ConfigParser()
    extras.read(os.path.join(os.path.dirname(__file__), "..", "setup.cfg"))
    assert "gcsfs" in extras["options.extras_require"]["gcs"]
    code = ("import sys; sys.modules['gcsfs'] = None\n"
            "from tf1compat import cli, tfrecord\n"
            "try:\n"
            "    tfrecord.committed_files('gs://b/flowers/flowers_train_*.tfrecord')\n"
            "except ModuleNotFoundError as e:\n"
            "    print(e)\n"
            "for arguments in (['verify', 'gs://b/flowers/*.tfrecord'],\n"
            "                  ['convert-cifar10', sys.argv[1], 'gs://b/c', '--quiet']):\n"
            "    print(cli.main(arguments))")
    source = cifar10.make_synthetic(tmp_path, 10, 10, seed=1)
    run = subprocess.run([sys.executable, "-c", code, str(source)], capture_output=True,
                         text=True, timeout=60)
    hint = "gs:// needs its filesystem: pip install 'tf1compat[gcs]'"
    assert run.stdout.splitlines() == [
        f"gs://b/flowers/flowers_train_*.tfrecord: {hint} (Please install gcsfs to access "
        "Google Storage)", "2", "2"], run.stderr
    assert run.stderr.splitlines() == [
        f"tf1compat verify: error: gs://b/flowers/*.tfrecord: {hint} (Please install gcsfs "
        "to access Google Storage)",
        f"tf1compat convert-cifar10: error: gs://b/c: {hint} (Please install gcsfs to access "
        "Google Storage)"]


def test_local_paths_import_no_fsspec(tmp_path):
    code = ("import sys\n"
            "from tf1compat import convert, tfrecord\n"
            "from tf1compat.records.example import make_example\n"
            "paths = convert.write_sharded([make_example({'i': i}) for i in range(4)],\n"
            "                              sys.argv[1] + '/t.tfrecord', 2)\n"
            "assert [tfrecord.count_records(p) for p in paths] == [2, 2]\n"
            "assert tfrecord.count_records('file://' + paths[0]) == 2\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('fsspec', 's3fs')))")
    run = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True,
                         text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert run.stdout == "[]\n"


@pytest.mark.slow
def test_beam_writes_into_s3_the_bytes_written_on_disk(s3, bucket, tmp_path):
    pytest.importorskip("apache_beam")
    source = cifar10.make_synthetic(tmp_path / "cifar", 40, 10, seed=6)
    cifar10.convert(source, tmp_path / "disk", num_shards=2, workers=0, quiet=True)
    cifar10.convert(source, f"s3://{bucket}/beam", num_shards=2, runner="beam", quiet=True)
    stored = objects(s3, f"{bucket}/beam")
    stored.pop(MANIFEST)
    assert stored == files_of(tmp_path / "disk")
    # a task's failure comes back through the store with its own type and place
    items = [{"i": i} for i in range(6)]
    items[3] = {"i": 3j}
    with pytest.raises(TypeError, match="feature 'i': got a complex") as e:
        convert.write_sharded(items, f"s3://{bucket}/bad/t.tfrecord", 2, encode=make_example,
                              runner="beam")
    assert e.value.task == "t-00001-of-00002.tfrecord" and e.value.input_index == 1
    s3.invalidate_cache()
    assert not s3.exists(f"{bucket}/bad")


def test_sources_in_the_store_convert_to_the_bytes_of_local_sources(s3, bucket, tmp_path):
    source = cifar10.make_synthetic(tmp_path / "cifar", 30, 10, seed=7, archive=True)
    archive = tmp_path / "cifar" / "cifar-10-binary.tar.gz"
    folder = tmp_path / "cifar" / "cifar-10-batches-bin"
    assert archive.exists() and folder.is_dir(), source
    s3.put(str(folder), f"{bucket}/in/cifar-10-batches-bin", recursive=True)
    s3.put_file(str(archive), f"{bucket}/in/cifar-10-binary.tar.gz")
    cifar10.convert(folder, tmp_path / "disk", num_shards=3, workers=0, quiet=True)
    cifar10.convert(f"s3://{bucket}/in/cifar-10-batches-bin", f"s3://{bucket}/c1",
                    num_shards=3, workers=2, quiet=True)
    cifar10.convert(f"s3://{bucket}/in/cifar-10-binary.tar.gz", f"s3://{bucket}/c2",
                    num_shards=3, workers=0, quiet=True)
    for prefix in ("c1", "c2"):
        stored = objects(s3, f"{bucket}/{prefix}")
        stored.pop(MANIFEST)
        assert stored == files_of(tmp_path / "disk"), prefix

    rng = np.random.default_rng(8)
    for kind in ("cats", "dogs"):
        os.makedirs(tmp_path / "photos" / kind / "more")
        images = rng.integers(0, 256, (5, 8, 10, 3), dtype=np.uint8)
        for i, data in enumerate(encode_png(images)):
            where = "more/" if i % 2 else ""
            (tmp_path / "photos" / kind / f"{where}{i}.png").write_bytes(data)
    (tmp_path / "photos" / "dogs" / ".hidden.png").write_bytes(b"left out")
    s3.put(str(tmp_path / "photos"), f"{bucket}/photos", recursive=True)
    imagefolder.convert(tmp_path / "photos", tmp_path / "flowers", name="f", num_shards=2,
                        workers=0, quiet=True)
    summary = imagefolder.convert(f"s3://{bucket}/photos", f"s3://{bucket}/flowers", name="f",
                                  num_shards=2, workers=2, quiet=True)
    assert summary.classes == ("cats", "dogs")
    stored = objects(s3, f"{bucket}/flowers")
    stored.pop(MANIFEST)
    assert stored == files_of(tmp_path / "flowers")


def test_a_damaged_source_object_is_named(s3, bucket, tmp_path):
    folder = f"{bucket}/bad/cifar-10-batches-bin"
    s3.pipe_file(f"{folder}/data_batch_1.bin", b"\0" * 3073)
    with pytest.raises(ValueError, match=rf"s3://{folder}: missing data_batch_2.bin; a "
                                         r"cifar10 binary folder has \['data_batch_1.bin'"):
        cifar10.convert(f"s3://{bucket}/bad", f"s3://{bucket}/out", quiet=True)
    for name in ("data_batch_2", "data_batch_3", "data_batch_4", "data_batch_5", "test_batch"):
        s3.pipe_file(f"{folder}/{name}.bin", b"\0" * 3074)
    with pytest.raises(ValueError, match=rf"s3://{folder}/data_batch_2.bin: size 3074 bytes "
                                         r"is not a positive multiple of the 3073-byte record"):
        cifar10.convert(f"s3://{bucket}/bad", f"s3://{bucket}/out", quiet=True)
    s3.pipe_file(f"{bucket}/photos2/cats/a.png", b"not an image")
    with pytest.raises(ValueError, match=rf"s3://{bucket}/photos2/cats/a.png: not an image"):
        imagefolder.convert(f"s3://{bucket}/photos2", f"s3://{bucket}/out2", name="f",
                            workers=0, quiet=True)
    s3.invalidate_cache()
    assert not s3.exists(f"{bucket}/out") and not s3.exists(f"{bucket}/out2")


def test_a_lease_tells_live_runs_of_other_machines_from_dead_ones(s3, bucket):
    from tf1compat.convert import objstore
    staging = f"{bucket}/leases/.tf1compat-staging-0123456789abcdef"

    def owner(expires):
        s3.pipe_file(f"{staging}/.owner.json", json.dumps({
            "what": "a run elsewhere", "pid": 1, "host": "another-machine",
            "started": 0, "expires": expires}).encode())

    owner(time.time() + 60)                     # renewed a moment ago: alive
    s3.pipe_file(f"{staging}/t-00000-of-00002.tfrecord", b"staged")
    with pytest.raises(BlockingIOError, match="a run elsewhere, pid 1 on another-machine"):
        convert.write_sharded(range(4), f"s3://{bucket}/leases/t.tfrecord", 2, workers=0,
                              encode=encode)
    owner(time.time() - 1)                      # its lease ran out: a dead run, cleared
    convert.write_sharded(range(4), f"s3://{bucket}/leases/t.tfrecord", 2, workers=0,
                          encode=encode)
    stored = objects(s3, f"{bucket}/leases")
    assert sorted(stored) == [MANIFEST, "t-00000-of-00002.tfrecord", "t-00001-of-00002.tfrecord"]
    assert objstore.read_manifest(f"s3://{bucket}/leases")["files"] == {
        name: len(data) for name, data in stored.items() if name != MANIFEST}


def test_wait_waits_for_the_live_conversion_in_the_prefix(s3, bucket, tmp_path):
    import threading

    from tf1compat.convert.objstore import ObjectStaging
    source = cifar10.make_synthetic(tmp_path / "cifar", 10, 10, seed=9)
    url = f"s3://{bucket}/waited"
    busy = ObjectStaging(url, "e" * 64, what="the first conversion")
    busy.__enter__()
    release = threading.Timer(2.0, busy.__exit__, (None, None, None))
    started = time.monotonic()
    release.start()
    try:
        summary = cifar10.convert(source, url, workers=0, wait=True, quiet=True)
        assert time.monotonic() - started >= 1.9 and summary.counts == {"train": 10,
                                                                         "test": 10}
    finally:
        release.join()
    assert s3.exists(f"{bucket}/waited/{MANIFEST}")
