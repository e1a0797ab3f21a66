"""What a user sees when an object store refuses, is missing or is not one fsspec
knows: wrong or missing credentials (a moto S3 server on 127.0.0.1 that checks them,
as AWS does), a missing bucket, a store that does not answer, an unknown protocol,
``hdfs://`` without Java. Each is one line naming the URL and saying what to do, exit
status 2, never a traceback; and slim's ``get_split`` reads a converted folder at a
URL through fsspec, not the local disk."""

import subprocess
import sys

import pytest
from servers import free_port, s3_filesystem, s3_with_credentials

from tf1compat import cifar10, imagefolder
from tf1compat.errors import UnknownProtocolError
from tf1compat.records import tfrecord

pytestmark = pytest.mark.timeout(240)
ACCESS_DENIED = "access denied"
WHERE_CREDENTIALS = "check the credentials (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"


def tf1compat(*arguments, env=None, timeout=120):
    return subprocess.run([sys.executable, "-m", "tf1compat", *arguments], env=env,
                          capture_output=True, text=True, timeout=timeout)


def one_line(run):
    """The command's one error line (and that it is one, with exit status 2)."""
    assert run.returncode == 2, (run.stdout, run.stderr)
    assert run.stderr.count("\n") == 1 and "Traceback" not in run.stderr, run.stderr
    return run.stderr.strip()


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """``(env, credentials, source)``: the S3 server that checks credentials, with a
    CIFAR conversion in ``s3://team-data/cifar`` and its binary source on disk."""
    with s3_with_credentials() as (env, credentials):
        source = cifar10.make_synthetic(tmp_path_factory.mktemp("cifar"), 20, 10, seed=3)
        converted = tf1compat("convert-cifar10", str(source), "s3://team-data/cifar", env=env)
        assert converted.returncode == 0, converted.stderr
        yield env, credentials, source


@pytest.mark.parametrize("wrong", [
    {"AWS_ACCESS_KEY_ID": "AKIANOSUCHKEY0000000"},      # a key the store does not know
    {"AWS_SECRET_ACCESS_KEY": "not-the-secret"},         # the right key, a wrong secret
    {"AWS_ACCESS_KEY_ID": None, "AWS_SECRET_ACCESS_KEY": None, "HOME": "/nonexistent"}])
def test_refused_credentials_are_named_with_the_url(store, tmp_path, wrong):
    """Writing, reading an object that exists, a glob and a source in the store: each
    says access was denied, where (the URL) and where credentials come from; none says
    the object is missing, and nothing is written."""
    env, _, source = store
    env = {name: value for name, value in {**env, **wrong}.items() if value is not None}
    commands = [
        ("convert-cifar10", str(source), "s3://team-data/flowers", "s3://team-data/flowers"),
        ("verify", "s3://team-data/cifar/cifar10_train.tfrecord",
         "s3://team-data/cifar/cifar10_train.tfrecord"),
        ("inspect", "s3://team-data/cifar/cifar10_test.tfrecord",
         "s3://team-data/cifar/cifar10_test.tfrecord"),
        ("verify", "s3://team-data/cifar/*.tfrecord", "s3://team-data/cifar/*.tfrecord"),
        ("convert-cifar10", "s3://team-data/cifar", str(tmp_path / "out"),
         "s3://team-data/cifar")]
    for *arguments, url in commands:
        line = one_line(tf1compat(*arguments, env=env))
        assert line.startswith(f"tf1compat {arguments[0]}: error: {url}"), line
        assert ACCESS_DENIED in line and WHERE_CREDENTIALS in line, line
        assert "no object matches" not in line and "[Errno" not in line
    assert not (tmp_path / "out").exists()


def test_a_missing_bucket_is_named_writing_and_reading(store):
    env, _, source = store
    line = one_line(tf1compat("convert-cifar10", str(source), "s3://no-such-bucket/flowers",
                              env=env))
    assert line == ("tf1compat convert-cifar10: error: s3://no-such-bucket/flowers: The "
                    "specified bucket does not exist")
    line = one_line(tf1compat("verify", "s3://no-such-bucket/t.tfrecord", env=env))
    assert line == "tf1compat verify: error: no object matches 's3://no-such-bucket/t.tfrecord'"


def test_the_library_raises_the_kind_a_caller_catches(store, monkeypatch):
    """PermissionError for refused credentials, FileNotFoundError for what is not
    there (an object, a bucket), ConnectionError for a store nobody answers at."""
    import s3fs
    env, _, _ = store
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_ENDPOINT_URL"):
        monkeypatch.setenv(name, env[name])
    s3fs.S3FileSystem.clear_instance_cache()
    assert tfrecord.count_records("s3://team-data/cifar/cifar10_test.tfrecord") == 10
    with pytest.raises(FileNotFoundError):
        tfrecord.count_records("s3://team-data/elsewhere/none.tfrecord")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "not-the-secret")
    s3fs.S3FileSystem.clear_instance_cache()
    with pytest.raises(PermissionError, match="^s3://team-data/cifar: access denied"):
        tfrecord.count_records("s3://team-data/cifar/cifar10_test.tfrecord")
    monkeypatch.setenv("AWS_ENDPOINT_URL", f"http://127.0.0.1:{free_port()}")
    s3fs.S3FileSystem.clear_instance_cache()
    try:
        with pytest.raises(ConnectionError, match="^s3://team-data: cannot reach the store"):
            tfrecord.count_records("s3://team-data/x.tfrecord")
    finally:
        s3fs.S3FileSystem.clear_instance_cache()


def test_unknown_protocols_and_filesystems_that_cannot_start_are_one_line(tmp_path):
    """``s4://`` (a typo), ``hdfs://`` (pyarrow's HadoopFileSystem needs Java: its
    error lists every library path it tried), a URL whose store nobody answers at, a
    filesystem that needs settings a URL cannot give: one line naming the URL."""
    source = cifar10.make_synthetic(tmp_path, 10, 10, seed=1)
    closed = f"http://127.0.0.1:{free_port()}/data/t.tfrecord"
    cases = [
        (("verify", "s4://team-data/flowers/*.tfrecord"), "s4://team-data/flowers/*.tfrecord",
         "unknown protocol s4://; did you mean s3://"),
        (("convert-cifar10", str(source), "s4://team-data/c"), "s4://team-data/c",
         "unknown protocol s4://"),
        (("convert-cifar10", str(source), "hdfs://namenode:8020/c"), "hdfs://namenode:8020/c",
         "hdfs://"),
        (("inspect", "hdfs://namenode:8020/t.tfrecord"), "hdfs://namenode:8020/t.tfrecord",
         "hdfs://"),
        (("verify", closed), closed, "cannot reach the store"),
        (("verify", "cached://t.tfrecord"), "cached://t.tfrecord", "cannot open the cached://")]
    for arguments, url, what in cases:
        line = one_line(tf1compat(*arguments))
        assert line.startswith(f"tf1compat {arguments[0]}: error: {url}: ") and what in line
        assert len(line) < 500, line
    with pytest.raises(UnknownProtocolError) as e:
        tfrecord.count_records("s4://b/t.tfrecord")
    assert isinstance(e.value, ValueError) and e.value.protocol == "s4"
    assert e.value.url.startswith("s4://b") and "s3" in e.value.known


@pytest.mark.tf
def test_get_split_reads_a_converted_folder_at_a_url(tmp_path):
    """cifar10.get_split and imagefolder.get_split on s3:// find the files, labels and
    counts in the store (they used to search the local disk); TensorFlow's readers
    have no s3:// file system (tensorflow-io's plugin brings it), which the queue API
    says by name when a reader is connected."""
    import numpy as np
    import tensorflow as tf

    import tf1compat as tc
    from tf1compat import slim
    rng = np.random.default_rng(2)
    photos = tmp_path / "photos"
    for kind in ("daisy", "roses"):
        (photos / kind).mkdir(parents=True)
        for i in range(6):
            pixels = rng.integers(0, 256, (8, 10, 3), dtype=np.uint8)
            (photos / kind / f"{i}.png").write_bytes(tf.io.encode_png(pixels).numpy())
    source = cifar10.make_synthetic(tmp_path / "cifar", 12, 6, seed=2)
    with s3_filesystem() as s3:
        s3.mkdir("splits")
        imagefolder.convert(photos, "s3://splits/flowers", name="flowers", num_shards=2,
                            validation_fraction=0.5, workers=0, quiet=True)
        cifar10.convert(source, "s3://splits/cifar", num_shards=2, workers=0, quiet=True)
        with tc.legacy_graph():
            flowers = imagefolder.get_split("train", "s3://splits/flowers")
            cifar = cifar10.get_split("test", "s3://splits/cifar")
            assert flowers.num_samples == 6 and flowers.labels_to_names == {0: "daisy",
                                                                            1: "roses"}
            assert flowers.data_sources == [
                f"s3://splits/flowers/flowers_train_0000{i}-of-00002.tfrecord" for i in (0, 1)]
            assert cifar.num_samples == 6 and cifar.labels_to_names[0] == "airplane"
            assert cifar.data_sources[0] == "s3://splits/cifar/cifar10_test-00000-of-00002.tfrecord"
            with pytest.raises(tc.PipelineConfigError, match=(
                    "data_sources\\[0\\] 's3://splits/flowers/flowers_train_00000-of-00002."
                    "tfrecord': TensorFlow has no file system for s3:// here")):
                slim.dataset_data_provider.DatasetDataProvider(flowers)
            with pytest.raises(tc.PipelineConfigError,
                               match="no file matches 's3://splits/none/\\*_train_"):
                imagefolder.get_split("train", "s3://splits/none")
