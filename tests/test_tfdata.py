"""to_tf_data yields what the legacy queue pipeline yields, checked with compare();
plus its readers, arguments and the `tf1compat compare` command."""

import gzip
import os
import re

import pytest
from slim_data import get_split_factory, legacy_items, make_examples, write_slim_files

from tf1compat import cli
from tf1compat.errors import PipelineConfigError, UnknownItemError

tf = pytest.importorskip("tensorflow")
import tf1compat as tc  # noqa: E402  (after the skip: needs TensorFlow)

pytestmark = [pytest.mark.tf, pytest.mark.usefixtures("no_thread_leaks")]
v1 = tf.compat.v1

NUM_EXAMPLES = 30


@pytest.fixture
def examples(rng):
    return make_examples(rng, NUM_EXAMPLES)


@pytest.fixture
def slim_split(tmp_path, examples):
    return get_split_factory(write_slim_files(str(tmp_path), examples), NUM_EXAMPLES)


def read_legacy(fetches):
    with tc.SessionIterator(fetches) as iterator:
        return list(iterator)


# ------------------------------------------------------------ equal pipelines

def test_one_reader_no_shuffle_equals_in_order(slim_split):
    reference = tc.to_tf_data(slim_split())
    assert reference.element_spec == {
        "image": tf.TensorSpec((8, 8, 3), tf.uint8), "label": tf.TensorSpec((), tf.int64)}
    with tc.legacy_graph():
        items = legacy_items(slim_split, shuffle=False)
        report = tc.compare(items, reference)
    assert report.equal, report
    assert report.legacy_count == report.reference_count == NUM_EXAMPLES


def test_shuffled_four_readers_equal_as_multisets(slim_split):
    reference = tc.to_tf_data(slim_split(), shuffle=True, seed=7, num_parallel_reads=4)
    with tc.legacy_graph(seed=7):
        items = legacy_items(slim_split, shuffle=True, num_readers=4, seed=7,
                             common_queue_capacity=16, common_queue_min=8)
        report = tc.compare(tc.shuffle_batch(items, 4, capacity=20, min_after_dequeue=8,
                                             seed=7, allow_smaller_final_batch=True),
                            reference, ordered=False)
    assert report.equal, report
    assert report.legacy_count == NUM_EXAMPLES


@pytest.mark.parametrize("legacy_batch, reference_batch", [(7, 4), (5, 30)])
def test_different_batch_sizes_equal(slim_split, legacy_batch, reference_batch):
    reference = tc.to_tf_data(slim_split()).batch(reference_batch)
    with tc.legacy_graph():
        batch = tc.batch(legacy_items(slim_split, shuffle=False), legacy_batch,
                         allow_smaller_final_batch=True)
        report = tc.compare(batch, reference, reference_batched=True)
    assert report.equal, report


def test_a_session_iterator_is_a_legacy_side(slim_split):
    reference = tc.to_tf_data(slim_split())
    with tc.legacy_graph():
        batch = tc.batch(legacy_items(slim_split, shuffle=False), 8,
                         allow_smaller_final_batch=True)
    with tc.SessionIterator(batch) as iterator:
        report = tc.compare(iterator, reference, legacy_batched=True)
    assert report.equal, report


def test_remainder_is_kept_only_with_allow_smaller_final_batch(slim_split, examples):
    reference = tc.to_tf_data(slim_split()).batch(8)        # keeps the last 6
    with tc.legacy_graph():
        items = legacy_items(slim_split, shuffle=False)
        kept = tc.compare(tc.batch(items, 8, allow_smaller_final_batch=True), reference,
                          reference_batched=True)
    assert kept.equal, kept
    with tc.legacy_graph():
        dropped = tc.compare(tc.batch(legacy_items(slim_split, shuffle=False), 8),
                             reference, reference_batched=True)
    assert (dropped.legacy_count, dropped.reference_count) == (24, NUM_EXAMPLES)
    assert [d.reference_index for d in dropped.missing_from_legacy] == list(range(24, 30))


def test_items_subset_and_epochs(slim_split, examples):
    labels = [int(e["label"]) for e in tc.to_tf_data(slim_split(), ["label"], num_epochs=2)]
    # write_slim_files deals examples round-robin over 4 files, read file by file
    file_order = [i for f in range(4) for i in range(f, NUM_EXAMPLES, 4)]
    assert labels == [int(examples[i]["label"]) for i in file_order] * 2


def test_same_seed_same_shuffled_order(slim_split):
    def labels():
        dataset = tc.to_tf_data(slim_split(), ["label"], shuffle=True, seed=3,
                                num_parallel_reads=2)
        return [int(e["label"]) for e in dataset]
    assert labels() == labels()


def test_files_with_parse_fn_equal_legacy_reader(slim_split, tmp_path):
    files = sorted(str(p) for p in tmp_path.glob("train-*.tfrecord"))
    features = {"image/class/label": tf.io.FixedLenFeature([], tf.int64)}

    def parse(record):
        return tf.io.parse_single_example(record, features)["image/class/label"]

    reference = tc.to_tf_data(files, parse_fn=parse)
    with tc.legacy_graph():
        _, record = tc.TFRecordReader().read(
            tc.string_input_producer(files, num_epochs=1, shuffle=False))
        report = tc.compare(parse(record), reference)
    assert report.equal, report


# ------------------------------------------------------------ readers

def legacy_records(reader, files, **reader_kwargs):
    with tc.legacy_graph():
        queue = tc.string_input_producer(files, num_epochs=1, shuffle=False)
        return [bytes(v) for v in read_legacy(reader(**reader_kwargs).read(queue)[1])]


def tf_data_records(files, reader, **reader_kwargs):
    return [bytes(r) for r in tc.to_tf_data(files, reader=reader, reader_kwargs=reader_kwargs)
            .as_numpy_iterator()]


def write_files(directory, contents):
    paths = []
    for index, data in enumerate(contents):
        paths.append(os.path.join(directory, f"file-{index}.bin"))
        with open(paths[-1], "wb") as f:
            f.write(data)
    return paths


@pytest.mark.parametrize("reader, contents, reader_kwargs", [
    (tc.TextLineReader, [b"head\na\nbb\n", b"head\nccc\r\nd"], {"skip_header_lines": 1}),
    (tc.FixedLengthRecordReader, [b"HH" + bytes(range(12)) + b"F", b"HH" + b"xyz" * 2 + b"F"],
     {"record_bytes": 3, "header_bytes": 2, "footer_bytes": 1}),
    (tc.WholeFileReader, [b"one file", b"", b"another"], {}),
])
def test_readers_deliver_what_tf1_readers_deliver(tmp_path, reader, contents, reader_kwargs):
    files = write_files(str(tmp_path), contents)
    expected = legacy_records(reader, files, **reader_kwargs)
    assert tf_data_records(files, reader, **reader_kwargs) == expected
    assert expected                                  # the case is not vacuous


def test_gzip_tfrecords_through_reader_options(tmp_path):
    path = str(tmp_path / "data.tfrecord.gz")
    options = tf.io.TFRecordOptions(compression_type="GZIP")
    with tf.io.TFRecordWriter(path, options) as writer:
        for record in (b"a", b"bc", b"def"):
            writer.write(record)
    with gzip.open(path) as f:                       # really compressed
        assert f.read()
    reader_options = v1.io.TFRecordOptions(v1.io.TFRecordCompressionType.GZIP)
    expected = legacy_records(tc.TFRecordReader, [path], options=reader_options)
    assert tf_data_records([path], tc.TFRecordReader, options=reader_options) == expected
    assert expected == [b"a", b"bc", b"def"]


# ------------------------------------------------------------ errors

def test_unknown_item(slim_split):
    with pytest.raises(UnknownItemError) as caught:
        tc.to_tf_data(slim_split(), ["image", "lable"])
    assert (caught.value.item, caught.value.valid_items) == ("lable", ["image", "label"])
    assert str(caught.value) == "unknown item 'lable'; valid items: ['image', 'label']"


def test_items_must_be_a_list(slim_split):
    with pytest.raises(TypeError, match=r"did you mean \['image'\]"):
        tc.to_tf_data(slim_split(), "image")


def test_unknown_reader(tmp_path, slim_split):
    class CsvReader:
        pass
    with pytest.raises(PipelineConfigError, match="reader CsvReader has no tf.data "
                                                  "equivalent; supported readers") as caught:
        tc.to_tf_data(slim_split(), reader=CsvReader)
    assert caught.value.argument == "reader"
    assert "TFRecordReader" in caught.value.expected


@pytest.mark.parametrize("reader, reader_kwargs, message", [
    (tc.TextLineReader, {"skip_header_line": 1}, "valid arguments: .*skip_header_lines"),
    (tc.FixedLengthRecordReader, {"record_bytes": 4, "hop_bytes": 2},
     "hop_bytes=2 .* has no tf.data equivalent"),
])
def test_bad_reader_kwargs(tmp_path, reader, reader_kwargs, message):
    files = write_files(str(tmp_path), [b"12345678"])
    with pytest.raises(PipelineConfigError, match=message) as caught:
        tc.to_tf_data(files, reader=reader, reader_kwargs=reader_kwargs)
    assert caught.value.argument == "reader_kwargs"


def test_no_matching_files(tmp_path):
    with pytest.raises(PipelineConfigError,
                       match=r"missing-\*.tfrecord.* matches no file") as caught:
        tc.to_tf_data(str(tmp_path / "missing-*.tfrecord"))
    assert caught.value.argument == "data_sources"


@pytest.mark.parametrize("options", [{"num_epochs": 0}, {"num_parallel_reads": 1.5}])
def test_bad_counts(slim_split, options):
    (argument, value), = options.items()
    with pytest.raises(PipelineConfigError, match=f"{argument} must be a positive") as caught:
        tc.to_tf_data(slim_split(), **options)
    assert caught.value.argument == argument


def test_mixing_slim_and_file_arguments(slim_split, tmp_path):
    with pytest.raises(TypeError, match="slim_dataset_to_tf_data.* unexpected keyword "
                                        "argument 'parse_fn'"):
        tc.to_tf_data(slim_split(), parse_fn=lambda r: r)
    with pytest.raises(TypeError, match=r"files_to_tf_data\(\) takes 1 positional argument"):
        tc.to_tf_data([str(tmp_path / "x")], ["image"])
    with pytest.raises(TypeError, match="unexpected keyword argument 'items'"):
        tc.to_tf_data([str(tmp_path / "x")], items=["image"])


def test_reference_built_inside_a_legacy_graph_is_refused(slim_split):
    with tc.legacy_graph():
        reference = tc.to_tf_data(slim_split())
    with pytest.raises(ValueError, match="build it in eager mode"):
        tc.compare([], reference)


# ------------------------------------------------------------ the command

@pytest.fixture
def split_module(tmp_path, slim_split, monkeypatch):
    """An importable module `demo_split` whose get_split reads the test files
    (``get_split_changed`` adds 1 to every label of the tf.data side only)."""
    pattern = str(tmp_path / "train-*.tfrecord")
    (tmp_path / "demo_split.py").write_text(
        "import slim_data\n"
        "from tf1compat._tf import tf\n"
        f"get_split = slim_data.get_split_factory({pattern!r}, {NUM_EXAMPLES})\n"
        "def get_split_changed(split_name, dataset_dir):\n"
        "    dataset = get_split(split_name, dataset_dir)\n"
        "    if not tf.executing_eagerly():\n"
        "        return dataset\n"
        "    handler = dataset.decoder._items_to_handlers['label']\n"
        "    original = handler.tensors_to_item\n"
        "    handler.tensors_to_item = lambda keys_to_tensors: original(keys_to_tensors) + 1\n"
        "    return dataset\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    return "demo_split"


def test_cli_compare_equal(split_module, capsys):
    assert cli.main(["compare", "--dataset", f"{split_module}:get_split"]) == 0
    assert capsys.readouterr().out.startswith(
        f"pipelines EQUAL (ordered comparison): {NUM_EXAMPLES} examples on each side")
    assert cli.main(["compare", "--dataset", f"{split_module}:get_split", "--unordered",
                     "--num-readers", "4", "--items", "label"]) == 0
    out = capsys.readouterr().out
    assert "EQUAL (unordered comparison)" in out and "image" not in out


def test_cli_compare_different(split_module, capsys):
    assert cli.main(["compare", "--dataset", f"{split_module}:get_split_changed",
                     "--items", "label"]) == 1
    out = capsys.readouterr().out
    assert out.startswith("pipelines DIFFER (ordered comparison)")
    assert "first mismatch: legacy #0 vs reference #0, item 'label': 1 of 1 values " \
           "differ, max abs diff 1" in out


@pytest.mark.parametrize("arguments, message", [
    (["--dataset", "no_colon"], "is not MODULE:FUNCTION"),
    (["--dataset", "no_such_module_xyz:get_split"], "cannot import 'no_such_module_xyz'"),
    (["--dataset", "tf1compat.cifar10:no_such_function"], "has no function 'no_such_function'"),
    (["--dataset", "tf1compat.cifar10:get_splt"], "has no function 'get_splt'; did you mean "
                                                   "get_split?"),
    (["--items", "image,lable"], "unknown item 'lable'; valid items: ['image', 'label']"),
])
def test_cli_compare_usage_errors(split_module, capsys, arguments, message):
    arguments = ["--dataset", f"{split_module}:get_split", *arguments]
    assert cli.main(["compare", *arguments]) == 2
    assert message in capsys.readouterr().err


def test_an_unknown_function_of_a_big_module_is_said_in_one_short_line(capsys):
    assert cli.main(["compare", "--pipeline", "os:zzz"]) == 2
    err = capsys.readouterr().err
    assert re.fullmatch(r"tf1compat compare: error: pipeline 'os:zzz': module os has no function "
                        r"'zzz'; its functions: \w+(, \w+){7} and \d+ more\n", err), err


def test_cli_compare_requires_dataset(capsys):
    with pytest.raises(SystemExit) as caught:
        cli.main(["compare"])
    assert caught.value.code == 2
    assert "--dataset" in capsys.readouterr().err
