"""File names of every kind through the queue API: bytes that are not UTF-8, spaces,
newlines and glob characters, ``pathlib.Path``, numpy arrays and tensors.

The reference is TensorFlow reading the same bytes names (``tf.data``); TF1's
``string_input_producer`` reads a non-UTF-8 name given as bytes too.
"""

import os
import pathlib

import numpy as np
import pytest

import tf1compat as tc
from tf1compat.errors import PipelineConfigError
from tf1compat.pipeline.queues import queue_files, resolve_files

tf = pytest.importorskip("tensorflow")
pytestmark = [pytest.mark.tf, pytest.mark.usefixtures("no_thread_leaks")]

v1 = tf.compat.v1

NOT_UTF8 = b"caf\xe9.tfrecord"  # Latin-1 file name, as old archives have them
ODD_NAMES = [NOT_UTF8, "with space.tfrecord".encode(), b"new\nline.tfrecord",
             b"glob[1]*?.tfrecord", "\u00fcn\u00efcode.tfrecord".encode()]


def write_tfrecords(directory, names, rng):
    """A TFRecord file per name (bytes) in ``directory``; returns {full bytes name: records}."""
    files = {}
    for i, name in enumerate(names):
        plain = os.path.join(directory, f"plain-{i}")
        records = [rng.bytes(int(n)) for n in rng.integers(1, 30, size=3)]
        with tf.io.TFRecordWriter(plain) as writer:
            for record in records:
                writer.write(record)
        full = os.path.join(os.fsencode(directory), name)
        os.rename(plain, full)
        files[full] = records
    return files


@pytest.fixture
def odd_files(tmp_path, rng):
    return write_tfrecords(str(tmp_path), ODD_NAMES, rng)


def read_keys_and_values(string_tensor, reader=tc.TFRecordReader):
    with tc.legacy_graph():
        if callable(string_tensor):
            string_tensor = string_tensor()
        queue = tc.string_input_producer(string_tensor, num_epochs=1, shuffle=False)
        key, value = reader().read(queue)
        with tc.SessionIterator((key, value)) as it:
            return [(bytes(k), bytes(v)) for k, v in it]


def tf_data_values(names):
    return [bytes(v.numpy()) for v in tf.data.TFRecordDataset(list(names))]


@pytest.mark.parametrize("form", ["bytes", "fsdecoded str", "Path", "numpy", "tensor"])
def test_odd_file_names_are_read_like_tf_data(odd_files, form):
    names = list(odd_files)
    given = {"bytes": names,
             "fsdecoded str": [os.fsdecode(n) for n in names],  # what os.listdir(str) gives
             "Path": [pathlib.Path(os.fsdecode(n)) for n in names],
             "numpy": np.array(names),
             "tensor": lambda: tf.constant(names)}[form]
    got = read_keys_and_values(given)
    assert [v for _, v in got] == tf_data_values(names) == sum(odd_files.values(), [])
    assert [k.rpartition(b":")[0] for k, _ in got[::3]] == names  # reader keys name the files


def test_tf1_reads_a_non_utf8_name_given_as_bytes_and_so_do_we(odd_files):
    name = next(n for n in odd_files if n.endswith(NOT_UTF8))
    with tc.legacy_graph():
        queue = v1.train.string_input_producer([name], num_epochs=1)
        _, value = v1.TFRecordReader().read(queue)
        with tc.SessionIterator(value) as it:
            tf1 = [bytes(v) for v in it]
    assert [v for _, v in read_keys_and_values([name])] == tf1 == odd_files[name]


def test_queue_files_keep_names_tensorflow_and_python_can_open(odd_files):
    with tc.legacy_graph():
        queue = tc.string_input_producer(list(odd_files), shuffle=False)
        names = queue_files(queue)
    assert [isinstance(n, bytes) for n in names] == [True, False, False, False, False]
    assert [os.fsencode(n) for n in names] == list(odd_files)
    assert all(os.path.isfile(n) for n in names)


def test_glob_over_odd_names_expands_to_every_file(odd_files, tmp_path):
    pattern = os.path.join(os.fsencode(tmp_path), b"*.tfrecord")
    expected = sorted(odd_files)
    assert [os.fsencode(n) for n in resolve_files("api", "files", pattern)] == expected
    got = read_keys_and_values(os.fsdecode(pattern))
    assert [v for _, v in got] == tf_data_values(expected)


def test_glob_expansion_matches_tensorflows_glob(tmp_path):
    for name in [".hidden.tfrecord", "a[1].tfrecord", "a1.tfrecord", "b c.tfrecord",
                 "b.txt", "\u00e9t\u00e9.tfrecord"]:
        (tmp_path / name).write_bytes(b"")
    for pattern in ["*", "*.tfrecord", "a[1]*", "?[ .]*", "\u00e9*"]:
        full = str(tmp_path / pattern)
        assert resolve_files("api", "files", full) == sorted(tf.io.gfile.glob(full)), pattern


@pytest.mark.parametrize("problem", ["missing", "nul", "dangling symlink",
                                     "pattern matching a directory"])
def test_errors_name_odd_files_exactly(tmp_path, problem):
    directory = os.fsencode(tmp_path)
    if problem == "missing":
        name, fragment = os.path.join(directory, NOT_UTF8), "does not exist"
    elif problem == "nul":
        name, fragment = os.path.join(directory, b"a\0b"), "contains a NUL byte"
    elif problem == "dangling symlink":
        name, fragment = os.path.join(directory, b"link \xff"), "symbolic link to a missing file"
        os.symlink(os.path.join(directory, b"gone"), name)
    else:
        os.mkdir(os.path.join(directory, b"d\xe9"))
        name, fragment = os.path.join(directory, b"d*"), "which is a directory"
    with tc.legacy_graph():
        queue = tc.string_input_producer([__file__, name] if problem == "nul" else [name])
        with pytest.raises(PipelineConfigError) as excinfo:
            tc.WholeFileReader().read(queue)
    error = excinfo.value
    assert fragment in str(error) and "WholeFileReader" in str(error)
    assert error.argument == "string_tensor"
    shown = os.path.join(directory, b"d\xe9") if problem.startswith("pattern") else name
    assert os.fsencode(error.path) == shown and repr(error.path) in str(error)
    index = 1 if problem == "nul" else 0
    assert f"string_tensor[{index}]" in str(error)


def test_file_names_that_cannot_be_names_are_refused_naming_the_index():
    with tc.legacy_graph():
        with pytest.raises(PipelineConfigError, match=r"string_tensor\[1\] .* cannot be a "
                                                      r"file name") as excinfo:
            tc.string_input_producer(["ok", "\ud800"])   # a lone surrogate: no bytes for it
        assert excinfo.value.argument == "string_tensor"
        with pytest.raises(TypeError, match=r"string_tensor\[1\] is int 3; expected a file"):
            tc.string_input_producer(["ok", 3])         # TF1: TypeError too, naming no index
        with pytest.raises(TypeError):
            v1.train.string_input_producer(["ok", 3])


def test_runner_errors_and_size_checks_name_non_utf8_files(tmp_path, rng):
    directory = os.fsencode(tmp_path)
    files = write_tfrecords(str(tmp_path), [NOT_UTF8], rng)
    (name, records), = files.items()
    data = bytearray(open(name, "rb").read())
    data[-5] ^= 0xFF  # damage the last record's data
    open(name, "wb").write(bytes(data))
    with tc.legacy_graph():
        queue = tc.string_input_producer([name], num_epochs=1)
        _, value = tc.TFRecordReader().read(queue)
        with pytest.raises(tf.errors.DataLossError) as excinfo:
            list(tc.SessionIterator(tc.batch(value, 1)))  # the reader runs in a runner thread
    assert repr(name) in str(excinfo.value) and "record 2" in str(excinfo.value)

    fixed = os.path.join(directory, b"fixed \xe9.bin")
    open(fixed, "wb").write(bytes(10))
    with tc.legacy_graph():
        queue = tc.string_input_producer([fixed])
        with pytest.raises(PipelineConfigError, match="has 10 bytes") as excinfo:
            tc.FixedLengthRecordReader(4).read(queue)
    assert excinfo.value.path == fixed and repr(fixed) in str(excinfo.value)


def test_shard_files_and_fast_path_over_odd_names(odd_files):
    names = sorted(odd_files)
    shares = [tc.shard_files(names, 2, w) for w in range(2)]
    assert sorted(os.fsencode(n) for s in shares for n in s) == names
    with tc.legacy_graph():
        queue = tc.string_input_producer(shares[0], num_epochs=1, shuffle=False)
        batches = tc.build_record_batches(queue, 2, lambda keys, values: {"v": values},
                                          allow_smaller_final_batch=True)
        with tc.SessionIterator(batches) as it:
            got = [bytes(v) for b in it for v in b["v"]]
    assert got == tf_data_values(shares[0])


def test_resolve_files_needs_names():
    with pytest.raises(TypeError, match="shard_files: files must be a file name or a list "
                                        "of file names, got int"):
        tc.shard_files(42, 1, 0)
