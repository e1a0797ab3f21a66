"""Readers that honour a conversion's commit on local disk: a commit cut between its
renames (the real commit, its process SIGKILLed after the first rename) is refused by
get_split, iter_records, verify, `tf1compat verify` and committed_files until the next
run finishes it; a folder tf1compat never wrote reads as before. (Object stores, with
their manifest: tests/test_objstore.py.)"""

import os
import signal
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from tf1compat import cifar10, cli, imagefolder
from tf1compat.cifar10._convert import encode_png
from tf1compat.errors import IncompleteOutputError
from tf1compat.records import tfrecord
from tf1compat.records.committed import committed_files
from tf1compat.records.example import make_example

pytestmark = pytest.mark.timeout(180)

CUT_COMMIT = """
import os, signal, sys
from tf1compat import cifar10, imagefolder
from tf1compat.convert import staging

roll_forward, replace = staging._roll_forward, os.replace

def replace_then_die(*args, **kwargs):
    replace(*args, **kwargs)
    os.kill(os.getpid(), signal.SIGKILL)

def committing(*args):              # the real commit, killed after its first rename
    os.replace = replace_then_die
    roll_forward(*args)

staging._roll_forward = committing
if sys.argv[1] == "cifar10":
    cifar10.convert(sys.argv[2], sys.argv[3], num_shards=2, workers=0, quiet=True)
else:
    imagefolder.convert(sys.argv[2], sys.argv[3], name="f", num_shards=3, workers=0,
                        quiet=True)
"""


def cut_commit(tmp_path, *arguments):
    script = tmp_path / "cut.py"
    script.write_text(textwrap.dedent(CUT_COMMIT))
    run = subprocess.run([sys.executable, str(script), *map(str, arguments)], timeout=120,
                         capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert run.returncode == -signal.SIGKILL, run.stderr


def files_of(directory):
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir()) if p.is_file()}


@pytest.mark.tf
@pytest.mark.slow
def test_a_cifar10_commit_cut_between_renames_is_refused_until_the_next_run(tmp_path,
                                                                            capsys):
    source = cifar10.make_synthetic(tmp_path / "src", num_train=40, num_test=12, seed=4)
    out = tmp_path / "out"
    cut_commit(tmp_path, "cifar10", source, out)
    train = ["cifar10_train-00000-of-00002.tfrecord", "cifar10_train-00001-of-00002.tfrecord"]
    present = sorted(p.name for p in out.glob("*.tfrecord"))
    assert present == train[:1]             # what slim's own glob would take for the split

    with pytest.raises(IncompleteOutputError) as e:
        cifar10.get_split("train", out)
    message = str(e.value)
    assert message.startswith(f"{out}: a tf1compat conversion into this folder is under way "
                              "or was cut short (its commit journal is in ")
    assert message.endswith(f"; not in place yet: {train[1]}: run the conversion again to "
                            "finish it")
    assert e.value.path == str(out) and e.value.missing == train[1:]
    for read in (lambda: list(tfrecord.iter_records(out / train[0])),
                 lambda: tfrecord.verify(out / train[0]),
                 lambda: committed_files(out),
                 lambda: committed_files(out / "cifar10_train-*")):
        with pytest.raises(IncompleteOutputError, match="under way or was cut short"):
            read()
    assert cli.main(["verify", str(out / "cifar10_train-*.tfrecord")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"tf1compat verify: error: {out}: a tf1compat conversion") \
        and err.count("\n") == 1 and train[1] in err

    cifar10.convert(source, out, num_shards=2, workers=0, quiet=True)    # finishes it
    cifar10.convert(source, tmp_path / "clean", num_shards=2, workers=0, quiet=True)
    assert files_of(out) == files_of(tmp_path / "clean")
    assert cifar10.get_split("train", out).data_sources == [str(out / n) for n in train]
    assert committed_files(out / "cifar10_train-*") == [str(out / n) for n in train]
    assert cli.main(["verify", str(out / "*.tfrecord")]) == 0


@pytest.mark.tf
@pytest.mark.slow
def test_an_image_folder_commit_cut_between_renames_is_refused_by_its_get_split(tmp_path):
    rng = np.random.default_rng(2)
    for kind in ("cats", "dogs"):
        os.makedirs(tmp_path / "photos" / kind)
        for i, data in enumerate(encode_png(rng.integers(0, 256, (4, 6, 5, 3), np.uint8))):
            (tmp_path / "photos" / kind / f"{i}.png").write_bytes(data)
    out = tmp_path / "flowers"
    cut_commit(tmp_path, "imagefolder", tmp_path / "photos", out)
    with pytest.raises(IncompleteOutputError, match=r"not in place yet: f_train_00001-of-"
                                                    r"00003.tfrecord, f_train_00002-of-00003"):
        imagefolder.get_split("train", out)
    imagefolder.convert(tmp_path / "photos", out, name="f", num_shards=3, workers=0,
                        quiet=True)
    assert imagefolder.get_split("train", out).num_samples == 8


def test_a_folder_tf1compat_never_wrote_reads_as_before(tmp_path):
    paths = [tmp_path / f"part-{i}.tfrecord" for i in range(2)]
    for i, path in enumerate(paths):
        tfrecord.write_records(path, [make_example({"i": i})])
    (tmp_path / ".notes").write_text("hidden files are not data")
    assert committed_files(tmp_path) == [str(p) for p in paths]
    assert committed_files(tmp_path / "part-*.tfrecord") == [str(p) for p in paths]
    assert committed_files(paths[1]) == [str(paths[1])]
    assert [len(list(tfrecord.iter_records(p))) for p in paths] == [1, 1]
    # a staging folder without a journal: a conversion still writing, the final names
    # untouched, so they read as they are
    os.makedirs(tmp_path / ".tf1compat-staging-0123456789abcdef")
    assert committed_files(tmp_path / "part-*.tfrecord") == [str(p) for p in paths]
    with pytest.raises(FileNotFoundError, match="No file matches the pattern"):
        committed_files(tmp_path / "other-*")
    with pytest.raises(FileNotFoundError, match="No such file, folder or object"):
        committed_files(tmp_path / "gone")


def test_a_conversion_on_disk_removes_a_copied_manifest_it_would_contradict(tmp_path):
    """A folder copied from an object store keeps its manifest; a conversion on disk
    writes none, so it removes that one rather than leave a list its files contradict."""
    from tf1compat import convert
    (tmp_path / ".tf1compat-manifest.json").write_text('{"files": {"old.tfrecord": 3}}')
    (tmp_path / "old.tfrecord").write_bytes(b"old")
    tfrecord.write_records(tmp_path / "t-00000-of-00002.tfrecord", [b"x"])
    with pytest.raises(IncompleteOutputError, match=r"\(not listed t-00000-of-00002"):
        committed_files(tmp_path / "t-*")
    paths = convert.write_sharded([make_example({"i": i}) for i in range(4)],
                                  tmp_path / "t.tfrecord", 2, workers=0)
    assert not (tmp_path / ".tf1compat-manifest.json").exists()
    assert committed_files(tmp_path / "t-*") == [str(p) for p in paths]
