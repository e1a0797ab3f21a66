"""The store both in-memory caches share (:class:`tf1compat.pipeline.kept_chunks.KeptChunks`):
each file's first reading keeps its chunks as they stream; later readings give the
kept chunks (the very values read then); a file whose chunk would pass the budget is
read again every time, no chunk lost or given twice."""

import collections

import pytest

from tf1compat.records.example import make_example
from tf1compat.records.tfrecord import write_records

tf = pytest.importorskip("tensorflow")
from tf1compat.pipeline import kept_chunks  # noqa: E402
from tf1compat.pipeline.kept_chunks import KeptChunks, KeptWhole, per_iteration  # noqa: E402

pytestmark = pytest.mark.tf

COUNTS = {"a": 600, "b": 300}   # records per file: chunks of 256, 256, 88 and 256, 44
ROW_BYTES = 16                   # an int64 id and a float64 time
CHUNK = 256
EPOCHS = [["a", "b"], ["b", "a"], ["a", "b"]]


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


def stored(paths, names, budget, parallel=1):
    """The dataset of the chunks the store gives for ``names`` (a dataset), read
    ``parallel`` names at once."""
    def iteration():
        store = KeptChunks(sorted(paths), read_with_time, budget)
        if parallel == 1:
            return names.flat_map(store.chunks)
        return names.interleave(store.chunks, cycle_length=parallel,
                                num_parallel_calls=parallel, deterministic=True)
    return per_iteration(iteration)


def rows_of(dataset):
    return [(int(i), float(t)) for chunk in dataset.as_numpy_iterator()
            for i, t in zip(chunk[-2], chunk[-1], strict=True)]


def served(paths, epochs, budget):
    """(id, time read) of every row the store gives for the names of ``epochs``
    (lists of file keys), as lists of rows per epoch."""
    names = [paths[key] for epoch in epochs for key in epoch]
    rows = rows_of(stored(paths.values(), tf.data.Dataset.from_tensor_slices(names), budget))
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


def test_later_readings_give_the_chunks_the_first_reading_kept(files):
    epochs = served(files, EPOCHS, budget=10 ** 9)
    for epoch, keys in zip(epochs, EPOCHS, strict=True):
        assert [i for i, _ in epoch] == ids_of(keys)
    assert dict(epochs[1]) == dict(epochs[0])
    assert dict(epochs[2]) == dict(epochs[0])


def test_kept_chunks_are_the_chunks_read(files):
    """The same chunks, read or kept (the empty chunk marking the end of a kept file
    is not given)."""
    names = tf.data.Dataset.from_tensor_slices([files["b"], files["b"]])
    sizes = [len(chunk[0]) for chunk in stored(files.values(), names,
                                               10 ** 9).as_numpy_iterator()]
    assert sizes == [256, 44] * 2


def test_a_file_that_passes_the_budget_is_read_every_time(files):
    """The budget holds 1.5 chunks: the first file's second chunk passes it, so the
    first file (its first chunk kept) and the second (nothing fits) are read every
    time, with every row once per reading."""
    epochs = served(files, EPOCHS, budget=int(1.5 * CHUNK * ROW_BYTES))
    for epoch, keys in zip(epochs, EPOCHS, strict=True):
        assert [i for i, _ in epoch] == ids_of(keys)   # none lost, none twice
    first = dict(epochs[0])
    for later in epochs[1:]:
        assert all(time > first[i] for i, time in later)


def test_the_files_kept_before_the_budget_is_passed_stay_kept(files):
    """The budget holds 650 rows: the first file (600) is kept, the second file's
    first chunk would pass the budget, so it is read every time."""
    epochs = served(files, EPOCHS, budget=650 * ROW_BYTES)
    for epoch, keys in zip(epochs, EPOCHS, strict=True):
        assert [i for i, _ in epoch] == ids_of(keys)
    first = dict(epochs[0])
    for later in epochs[1:]:
        assert all(time == first[i] for i, time in later if i < COUNTS["a"])
        assert all(time > first[i] for i, time in later if i >= COUNTS["a"])


def test_a_file_twice_in_an_epoch_keeps_its_first_reading(files):
    epochs = served(files, [["a", "a"], ["a", "a"]], budget=10 ** 9)
    first_reading = dict(epochs[0][:COUNTS["a"]])
    second_reading = dict(epochs[0][COUNTS["a"]:])
    assert [i for i, _ in epochs[1]] == ids_of(["a", "a"])
    assert second_reading == first_reading
    assert epochs[1] == epochs[0]


def test_each_iteration_reads_the_files_again(files):
    dataset = stored(files.values(), tf.data.Dataset.from_tensor_slices([files["b"]] * 2),
                     10 ** 9)
    first, second = rows_of(dataset), rows_of(dataset)
    assert [i for i, _ in first] == [i for i, _ in second] == ids_of(["b", "b"])
    assert all(later > earlier for (_, earlier), (_, later) in zip(first, second,
                                                                    strict=True))


@pytest.mark.parametrize("budget_rows", [10 ** 6, 1.5 * CHUNK, 650])
def test_readings_at_once_give_every_row_once_each(files, budget_rows):
    """Two readings at a time (an interleave) of names that repeat files, kept, cut
    or read again: each reading gives its file's rows in order, once."""
    keys = ["a", "a", "b", "a", "b", "b", "a", "b"]
    names = tf.data.Dataset.from_tensor_slices(
        ([files[key] for key in keys], list(range(len(keys)))))
    dataset = stored(files.values(), names, int(budget_rows * ROW_BYTES), parallel=2)
    per_name = collections.defaultdict(list)
    for tag, ids, _ in dataset.as_numpy_iterator():
        per_name[int(tag)].extend(ids.tolist())
    assert {tag: ids for tag, ids in per_name.items()} == {
        tag: ids_of([key]) for tag, key in enumerate(keys)}


def test_a_name_outside_the_files_fails_naming_what_to_do(files):
    names = tf.data.Dataset.from_tensor_slices([files["a"], files["b"]])
    dataset = stored([files["a"]], names, 10 ** 9)
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"a file the in-memory cache does not hold \(the file names "
                       r"changed since the cache was planned.*\); turn the cache off "
                       r"\(cache=False, or --no-cache\)"):
        list(dataset.as_numpy_iterator())


@pytest.mark.parametrize("budget", [10 ** 9, int(1.5 * CHUNK * ROW_BYTES)],
                         ids=["kept", "above the budget in the first file"])
def test_extra_values_of_a_name_come_with_each_of_its_chunks(files, budget):
    """Names given as (file name, tag): every chunk comes with its name's tag, read,
    kept or read again."""
    keys = ["a", "b", "b", "a", "a", "b"]
    names = tf.data.Dataset.from_tensor_slices(
        ([files[key] for key in keys], [10 * p for p in range(len(keys))]))
    rows = [(int(tag), int(i)) for tag, ids, _ in stored(
        files.values(), names, budget).as_numpy_iterator() for i in ids]
    assert rows == [(10 * p, i) for p, key in enumerate(keys) for i in ids_of([key])]


def test_in_a_graph_session_later_readings_give_the_kept_chunks(files):
    """As the fast paths and run mode use it: built in a TF1 graph, run by a session."""
    names = [files["b"], files["a"], files["b"]]
    with tf.Graph().as_default():
        dataset = stored(files.values(), tf.data.Dataset.from_tensor_slices(names), 10 ** 9)
        chunk = tf.compat.v1.data.make_one_shot_iterator(dataset).get_next()
        rows = []
        with tf.compat.v1.Session() as session:
            try:
                while True:
                    ids, times = session.run(chunk)
                    rows.extend(zip(ids.tolist(), times.tolist(), strict=True))
            except tf.errors.OutOfRangeError:
                pass
    assert [i for i, _ in rows] == ids_of(["b", "a", "b"])
    assert rows[-COUNTS["b"]:] == rows[:COUNTS["b"]]     # the second reading: kept


@pytest.mark.parametrize("store", [KeptChunks, KeptWhole])
@pytest.mark.parametrize("count", [3, kept_chunks._FILES_MADE_ONE_BY_ONE + 2],
                         ids=["a few files, made one by one", "many, made in a tf.map_fn"])
def test_a_few_files_and_many_are_kept_alike(tmp_path, store, count):
    """Every file read once, in the order named, its rows kept: the second epoch gives
    the very rows of the first (their read times), however the files' datasets are
    made."""
    paths = []
    for f in range(count):
        paths.append(str(tmp_path / f"{f}.tfrecord"))
        write_records(paths[-1], [make_example({"id": 1000 * f + i}) for i in range(3 + f)])
    order = paths[::-1]

    def iteration():
        kept = (KeptChunks(paths, read_with_time, 10 ** 9) if store is KeptChunks
                else KeptWhole(paths, read_with_time))
        return tf.data.Dataset.from_tensor_slices(order * 2).flat_map(kept.chunks)
    rows = rows_of(per_iteration(iteration))
    expected = [1000 * f + i for f in range(count)[::-1] for i in range(3 + f)]
    assert [i for i, _ in rows] == expected * 2
    assert rows[len(expected):] == rows[:len(expected)]
