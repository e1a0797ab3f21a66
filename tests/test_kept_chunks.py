"""The store both in-memory caches share, as the first epoch streams
(:func:`tf1compat.pipeline.kept_chunks.streamed`): every epoch gives each file's
chunks in the order the names come; later epochs give the chunks the first epoch
kept (the very values read then), unless the bytes passed the budget, from where
every file is read again, no chunk lost or given twice."""

import pytest

from tf1compat.records.example import make_example
from tf1compat.records.tfrecord import write_records

tf = pytest.importorskip("tensorflow")
from tf1compat.pipeline.kept_chunks import streamed  # noqa: E402  (needs TensorFlow)

pytestmark = pytest.mark.tf

COUNTS = {"a": 600, "b": 300}   # records per file: chunks of 256, 256, 88 and 256, 44
ROW_BYTES = 16                   # an int64 id and a float64 time
CHUNK = 256


@pytest.fixture
def files(tmp_path):
    paths, first = {}, 0
    for name, count in COUNTS.items():
        paths[name] = str(tmp_path / f"{name}.tfrecord")
        write_records(paths[name], [make_example({"id": first + i}) for i in range(count)])
        first += count
    return paths


@tf.autograph.experimental.do_not_convert
def read_with_time(filename):
    """A file's ids in chunks of 256, each chunk with the time it was read."""
    @tf.autograph.experimental.do_not_convert
    def parsed(records):
        ids = tf.io.parse_example(records, {"id": tf.io.FixedLenFeature([], tf.int64)})["id"]
        return ids, tf.fill(tf.shape(ids), tf.timestamp())
    return tf.data.TFRecordDataset(filename).batch(CHUNK).map(parsed)


def served(paths, epochs, budget):
    """(ids, time read) of every chunk ``streamed`` gives for the names of
    ``epochs`` (lists of file keys), as lists of rows per epoch."""
    names = [paths[key] for epoch in epochs for key in epoch]
    specs = [tf.TensorSpec([None], tf.int64), tf.TensorSpec([None], tf.float64)]
    dataset = streamed(tf.data.Dataset.from_tensor_slices(names), sorted(set(names)),
                       len(epochs[0]), read_with_time, specs, budget, "test")
    rows = [(int(i), float(t)) for ids, times in dataset.as_numpy_iterator()
            for i, t in zip(ids, times, strict=True)]
    per_epoch, start = [], 0
    for epoch in epochs:
        size = sum(COUNTS[key] for key in epoch)
        per_epoch.append(rows[start:start + size])
        start += size
    assert start == len(rows)
    return per_epoch


def ids_of(keys):
    first = {"a": 0, "b": COUNTS["a"]}
    return [first[key] + i for key in keys for i in range(COUNTS[key])]


def times_by_id(rows):
    return dict(rows)


EPOCHS = [["a", "b"], ["b", "a"], ["a", "b"]]


def test_later_epochs_give_the_chunks_the_first_epoch_kept(files):
    epochs = served(files, EPOCHS, budget=10 ** 9)
    for epoch, keys in zip(epochs, EPOCHS, strict=True):
        assert [i for i, _ in epoch] == ids_of(keys)
    assert times_by_id(epochs[1]) == times_by_id(epochs[0])
    assert times_by_id(epochs[2]) == times_by_id(epochs[0])


@pytest.mark.parametrize("budget_rows", [1.5 * CHUNK, 650],
                         ids=["in the first file's second chunk", "in the second file"])
def test_above_the_budget_mid_epoch_every_later_file_is_read_again(files, budget_rows):
    """The chunk that passes the budget drops what was kept: the first epoch goes on
    with the chunks as read, later epochs read every file again (other times)."""
    epochs = served(files, EPOCHS, budget=int(budget_rows * ROW_BYTES))
    for epoch, keys in zip(epochs, EPOCHS, strict=True):
        assert [i for i, _ in epoch] == ids_of(keys)   # none lost, none twice
    first = times_by_id(epochs[0])
    for later in epochs[1:]:
        assert all(time > first[i] for i, time in later)


def test_a_file_twice_in_an_epoch_keeps_its_first_reading(files):
    epochs = served(files, [["a", "a"], ["a", "a"]], budget=10 ** 9)
    first_reading = times_by_id(epochs[0][:COUNTS["a"]])
    second_reading = times_by_id(epochs[0][COUNTS["a"]:])
    assert [i for i, _ in epochs[1]] == ids_of(["a", "a"])
    assert all(second_reading[i] > first_reading[i] for i in first_reading)
    assert epochs[1] == epochs[0][:COUNTS["a"]] * 2


def test_a_name_outside_the_files_fails_naming_what_to_do(files):
    specs = [tf.TensorSpec([None], tf.int64), tf.TensorSpec([None], tf.float64)]
    names = tf.data.Dataset.from_tensor_slices([files["a"], files["b"]])
    dataset = streamed(names, [files["a"]], 1, read_with_time, specs, 10 ** 9,
                       "the file list changed")
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"a file the in-memory cache does not hold \(the file list changed\)"):
        list(dataset.as_numpy_iterator())


@pytest.mark.parametrize("budget", [10 ** 9, int(1.5 * CHUNK * ROW_BYTES)],
                         ids=["kept", "above the budget in the first file"])
def test_extra_values_of_a_name_come_with_each_of_its_chunks(files, budget):
    """Names given as (file name, tag): every chunk comes with its name's tag, read,
    kept or read again."""
    keys = ["a", "b", "b", "a", "a", "b"]
    names = tf.data.Dataset.from_tensor_slices(
        ([files[key] for key in keys], [10 * p for p in range(len(keys))]))
    specs = [tf.TensorSpec([None], tf.int64), tf.TensorSpec([None], tf.float64)]
    dataset = streamed(names, sorted(files.values()), 2, read_with_time, specs, budget,
                       "test")
    rows = [(int(tag), int(i)) for tag, ids, _ in dataset.as_numpy_iterator() for i in ids]
    assert rows == [(10 * p, i) for p, key in enumerate(keys) for i in ids_of([key])]
