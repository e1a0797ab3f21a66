"""CIFAR-10/100: binary format, synthetic data, converter, slim split, tutorial inputs.

The reference everywhere is the numpy transposition of the source bytes, computed
here independently of ``tf1compat.cifar10``.
"""

import os
import re
import tarfile

import numpy as np
import pytest

from tf1compat import cifar10, cli
from tf1compat.errors import CifarFormatError, PipelineConfigError
from tf1compat.records.example import example_to_dict
from tf1compat.records.tfrecord import iter_records

TRAIN_FILES = [f"data_batch_{i}.bin" for i in range(1, 6)]


def source_arrays(folder, names, label_bytes=1):
    """Images (HWC) and label columns straight from the bytes of the batch files."""
    raw = np.concatenate([np.fromfile(os.path.join(folder, n), np.uint8) for n in names])
    records = raw.reshape(-1, label_bytes + 3072)
    images = records[:, label_bytes:].reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1)
    return images, records[:, :label_bytes].astype(np.int64)


def read_examples(paths):
    return [example_to_dict(r) for path in paths for r in iter_records(path)]


def round_robin(array, num_shards):
    """The order in which sorted round-robin shards hold the items of ``array``."""
    return np.concatenate([array[k::num_shards] for k in range(num_shards)])


@pytest.fixture
def source(tmp_path):
    """A synthetic CIFAR-10 folder: 5 x 8 training images, 12 test images."""
    return cifar10.make_synthetic(tmp_path / "src", num_train=40, num_test=12, seed=3)


@pytest.fixture(scope="module")
def converted(tmp_path_factory):
    """``(source folder, output dir)`` for each (image_format, num_shards), made once."""
    root = tmp_path_factory.mktemp("cifar")
    folder = cifar10.make_synthetic(root / "src", num_train=40, num_test=12, seed=5)

    def make(image_format, num_shards):
        out = root / f"{image_format}-{num_shards}"
        if not out.exists():
            cifar10.convert(folder, out, image_format=image_format, num_shards=num_shards,
                            workers=1, quiet=True)
        return folder, out
    return make


# ----------------------------------------------------------------- binary format

def test_read_batch_file_is_the_transposed_source(source):
    images, labels = cifar10.read_batch_file(os.path.join(source, "data_batch_2.bin"))
    want_images, want_labels = source_arrays(source, ["data_batch_2.bin"])
    assert images.dtype == np.uint8 and images.shape == (8, 32, 32, 3)
    assert labels.dtype == np.int64 and labels.shape == (8,)
    np.testing.assert_array_equal(images, want_images)
    np.testing.assert_array_equal(labels, want_labels[:, 0])


def test_read_batch_file_cifar100_gives_coarse_and_fine(tmp_path):
    folder = cifar10.make_synthetic(tmp_path, num_train=30, num_test=5, dataset="cifar100")
    images, labels = cifar10.read_batch_file(os.path.join(folder, "train.bin"), label_bytes=2)
    want_images, want_labels = source_arrays(folder, ["train.bin"], label_bytes=2)
    np.testing.assert_array_equal(images, want_images)
    np.testing.assert_array_equal(labels, want_labels)
    assert labels[:, 0].max() < 20 and labels[:, 1].max() < 100


def test_iter_batch_file_chunks_equal_whole_file(source):
    path = os.path.join(source, "test_batch.bin")
    chunks = list(cifar10.iter_batch_file(path, chunk_records=5))
    assert [len(labels) for _, labels in chunks] == [5, 5, 2]
    images, labels = cifar10.read_batch_file(path)
    np.testing.assert_array_equal(np.concatenate([c[0] for c in chunks]), images)
    np.testing.assert_array_equal(np.concatenate([c[1] for c in chunks]), labels)


def test_make_synthetic_layout_is_seeded_and_has_the_real_names(tmp_path):
    folder = cifar10.make_synthetic(tmp_path / "a", num_train=12, num_test=3, seed=7)
    assert sorted(os.listdir(folder)) == sorted(
        TRAIN_FILES + ["test_batch.bin", "batches.meta.txt"])
    sizes = [os.path.getsize(os.path.join(folder, n)) for n in TRAIN_FILES]
    assert sizes == [3 * 3073, 3 * 3073, 2 * 3073, 2 * 3073, 2 * 3073]
    with open(os.path.join(folder, "batches.meta.txt")) as f:
        assert f.read().split() == list(cifar10.LABELS)
    archive = cifar10.make_synthetic(tmp_path / "b", num_train=12, num_test=3, seed=7,
                                     archive=True)
    assert os.path.basename(archive) == "cifar-10-binary.tar.gz"
    with tarfile.open(archive) as tar:
        member = tar.extractfile("cifar-10-batches-bin/data_batch_1.bin").read()
    with open(os.path.join(folder, "data_batch_1.bin"), "rb") as f:
        assert f.read() == member


@pytest.mark.parametrize("counts, message", [
    ((4, 2), "num_train must be an integer >= 5 (one image for each of its 5 batch file(s)), "
             "got 4"),
    ((10, 0), "num_test must be an integer >= 1 (one image for each of its 1 batch file(s)), "
              "got 0"),
    ((10.0, 2), "num_train must be an integer >= 5"),
])
def test_make_synthetic_refuses_counts_that_leave_a_batch_file_empty(tmp_path, counts, message):
    with pytest.raises((PipelineConfigError, TypeError), match=re.escape(message)):
        cifar10.make_synthetic(tmp_path / "src", *counts)
    assert not (tmp_path / "src").exists()     # nothing half-written


def test_truncated_batch_file_names_file_and_size(source):
    path = os.path.join(source, "data_batch_1.bin")
    os.truncate(path, 8 * 3073 - 100)
    with pytest.raises(CifarFormatError, match=r"size 24484 bytes.*3073-byte record") as e:
        cifar10.read_batch_file(path)
    assert (e.value.path, e.value.index) == (path, None)
    assert "3073" in e.value.expected


def test_wrong_record_size_is_refused(source):
    path = os.path.join(source, "test_batch.bin")    # 12 CIFAR-10 records of 3073 bytes
    with pytest.raises(CifarFormatError, match="3074-byte record") as e:
        cifar10.read_batch_file(path, label_bytes=2)
    assert e.value.path == path and "3074" in e.value.expected


def test_label_10_in_cifar10_names_the_record(source):
    path = os.path.join(source, "data_batch_3.bin")
    with open(path, "r+b") as f:
        f.seek(5 * 3073)
        f.write(bytes([10]))
    expected = r"record 5: label byte 0 is 10, expected 0\.\.9"
    with pytest.raises(CifarFormatError, match=expected) as e:
        cifar10.read_batch_file(path)
    assert (e.value.path, e.value.index, e.value.expected) == (path, 5, "label in 0..9")
    for workers, shards in ((1, 1), (2, 3)):    # 3 shards: record 5 is row 1 of shard 2
        with pytest.raises(CifarFormatError, match=expected) as e:
            cifar10.convert(source, source + "-out", num_shards=shards, workers=workers,
                            quiet=True)
        assert (e.value.path, e.value.index) == (path, 5)   # from a worker, whole
        assert not os.path.exists(source + "-out")


def test_unknown_label_bytes_lists_the_choices(source):
    with pytest.raises(PipelineConfigError) as e:
        cifar10.read_batch_file(os.path.join(source, "test_batch.bin"), label_bytes=3)
    assert e.value.argument == "label_bytes" and e.value.expected == [1, 2]


# ---------------------------------------------------------------------- convert

@pytest.mark.parametrize("image_format", ["png", "raw"])
def test_convert_writes_slim_layout_in_source_order(converted, image_format):
    folder, out = converted(image_format, 1)
    assert sorted(os.listdir(out)) == [
        "cifar10_test.tfrecord", "cifar10_train.tfrecord", "labels.txt"]
    with open(out / "labels.txt") as f:
        assert f.read() == "".join(f"{i}:{n}\n" for i, n in enumerate(cifar10.LABELS))
    for split, names in (("train", TRAIN_FILES), ("test", ["test_batch.bin"])):
        examples = read_examples([out / f"cifar10_{split}.tfrecord"])
        images, labels = source_arrays(folder, names)
        assert len(examples) == len(images)
        assert set(examples[0]) == {"image/encoded", "image/format", "image/class/label",
                                    "image/height", "image/width"}
        assert [e["image/class/label"][0] for e in examples] == labels[:, 0].tolist()
        assert {e["image/format"][0] for e in examples} == {image_format.encode()}
        assert {(e["image/height"][0], e["image/width"][0]) for e in examples} == {(32, 32)}
        if image_format == "raw":
            decoded = [np.frombuffer(e["image/encoded"][0], np.uint8) for e in examples]
            np.testing.assert_array_equal(np.stack(decoded), images.reshape(len(images), -1))
        else:
            assert all(e["image/encoded"][0].startswith(b"\x89PNG\r\n\x1a\n") for e in examples)


def test_convert_shards_round_robin_with_slim_names(converted):
    folder, out = converted("raw", 3)
    assert sorted(os.listdir(out)) == sorted(
        [f"cifar10_{s}-0000{i}-of-00003.tfrecord" for s in ("train", "test") for i in range(3)]
        + ["labels.txt"])
    examples = read_examples(sorted(out.glob("cifar10_train-*")))
    _, labels = source_arrays(folder, TRAIN_FILES)
    assert [e["image/class/label"][0] for e in examples] == round_robin(labels[:, 0], 3).tolist()


def test_convert_from_archive_equals_convert_from_folder(tmp_path, converted):
    folder, from_folder = converted("raw", 1)
    archive = tmp_path / "cifar-10-binary.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(folder, arcname="cifar-10-batches-bin")
    summary = cifar10.convert(archive, tmp_path / "out", image_format="raw", workers=1,
                              quiet=True)
    assert summary.counts == {"train": 40, "test": 12}
    for name in ("cifar10_train.tfrecord", "cifar10_test.tfrecord", "labels.txt"):
        assert (tmp_path / "out" / name).read_bytes() == (from_folder / name).read_bytes()
    assert sorted(os.listdir(tmp_path / "out")) == sorted(os.listdir(from_folder))


def test_convert_cifar100_adds_coarse_label(tmp_path):
    folder = cifar10.make_synthetic(tmp_path, num_train=20, num_test=6, dataset="cifar100")
    cifar10.convert(folder, tmp_path / "out", image_format="raw", workers=1, quiet=True)
    examples = read_examples([tmp_path / "out" / "cifar100_train.tfrecord"])
    _, labels = source_arrays(folder, ["train.bin"], label_bytes=2)
    assert [e["image/coarse_label"][0] for e in examples] == labels[:, 0].tolist()
    assert [e["image/class/label"][0] for e in examples] == labels[:, 1].tolist()
    assert (tmp_path / "out" / "labels.txt").read_text().splitlines()[:2] == [
        "0:apple", "1:aquarium_fish"]
    assert (tmp_path / "out" / "coarse_labels.txt").read_text().splitlines()[19] == "19:vehicles_2"


def test_convert_missing_test_batch(source, tmp_path):
    os.remove(os.path.join(source, "test_batch.bin"))
    with pytest.raises(CifarFormatError, match="missing test_batch.bin") as e:
        cifar10.convert(source, tmp_path / "out", workers=1, quiet=True)
    assert e.value.path == os.path.join(source, "test_batch.bin")
    assert "test_batch.bin" in e.value.expected
    assert not (tmp_path / "out").exists()


def test_convert_output_dir_that_is_a_file(source, tmp_path):
    target = tmp_path / "taken"
    target.write_text("not a directory")
    with pytest.raises(PipelineConfigError, match="is a file") as e:
        cifar10.convert(source, target, workers=1, quiet=True)
    assert e.value.argument == "output_dir" and e.value.path == str(target)


@pytest.mark.parametrize("argument, value", [
    ("image_format", "jpeg"), ("num_shards", 0), ("workers", -1), ("workers", True),
    ("num_shards", True)])
def test_convert_rejects_bad_arguments(source, tmp_path, argument, value):
    with pytest.raises(PipelineConfigError) as e:
        cifar10.convert(source, tmp_path / "out", **{argument: value})
    assert e.value.argument == argument


@pytest.mark.parametrize("error", [RuntimeError("disk on fire"), KeyboardInterrupt()])
def test_interrupted_convert_leaves_nothing_then_reruns_then_skips(
        source, tmp_path, monkeypatch, error):
    encode = cifar10._convert.make_example
    calls = []

    def failing(*args, **kwargs):
        calls.append(1)
        if len(calls) == 45:                        # in the test split, train is done
            raise error
        return encode(*args, **kwargs)

    out = tmp_path / "out"
    monkeypatch.setattr(cifar10._convert, "make_example", failing)
    with pytest.raises(type(error)):
        cifar10.convert(source, out, workers=1, quiet=True)
    assert not out.exists()                       # no output, no temporary left
    monkeypatch.setattr(cifar10._convert, "make_example", encode)
    first = cifar10.convert(source, out, workers=1, quiet=True)
    assert not first.skipped and first.counts == {"train": 40, "test": 12}
    stamps = {p.name: p.stat().st_mtime_ns for p in out.iterdir()}
    second = cifar10.convert(source, out, workers=1, quiet=True)
    assert second.skipped and second.num_bytes == first.num_bytes
    assert {p.name: p.stat().st_mtime_ns for p in out.iterdir()} == stamps
    assert "skipped" in str(second)


def test_convert_redoes_damaged_or_different_outputs(source, tmp_path):
    out = tmp_path / "out"
    cifar10.convert(source, out, workers=1, quiet=True)
    os.truncate(out / "cifar10_test.tfrecord", 0)
    assert not cifar10.convert(source, out, workers=1, quiet=True).skipped
    assert not cifar10.convert(source, out, image_format="raw", workers=1, quiet=True).skipped
    assert cifar10.convert(source, out, image_format="raw", workers=1, quiet=True).skipped
    assert not cifar10.convert(source, out, image_format="raw", workers=1, overwrite=True,
                               quiet=True).skipped
    cifar10.convert(source, out, num_shards=2, workers=1, quiet=True)
    assert sorted(os.listdir(out)) == sorted(
        [f"cifar10_{s}-0000{i}-of-00002.tfrecord" for s in ("train", "test") for i in range(2)]
        + ["labels.txt"])


def test_convert_returns_the_summary_the_cli_prints(source, tmp_path, capsys):
    summary = cifar10.convert(source, tmp_path / "out", workers=1)
    assert capsys.readouterr() == ("", "")          # the library prints nothing
    assert "train 40, test 12 images (png)" in str(summary)
    assert cli.main(["convert-cifar10", source, str(tmp_path / "out")]) == 0
    assert capsys.readouterr().out.strip() == str(summary).replace(
        f"wrote {summary.num_bytes / 1e6:.1f} MB in {summary.seconds:.1f} s",
        "up to date, skipped (--overwrite / overwrite=True redoes it)")
    assert summary.num_bytes == sum(os.path.getsize(p) for ps in summary.files.values()
                                    for p in ps)


@pytest.mark.slow
def test_one_and_two_workers_write_identical_records(converted, tmp_path):
    folder, one_worker = converted("png", 3)
    cifar10.convert(folder, tmp_path, num_shards=3, workers=2, quiet=True)
    names = sorted(os.listdir(one_worker))
    assert sorted(os.listdir(tmp_path)) == names
    for name in names:
        assert (tmp_path / name).read_bytes() == (one_worker / name).read_bytes(), name


def test_zero_workers_convert_in_this_process_like_the_other_converters(converted, tmp_path):
    folder, one_worker = converted("png", 1)
    cifar10.convert(folder, tmp_path, workers=0, quiet=True)
    names = sorted(os.listdir(one_worker))
    assert sorted(os.listdir(tmp_path)) == names
    assert all((tmp_path / n).read_bytes() == (one_worker / n).read_bytes() for n in names)


def test_convert_memory_does_not_grow_with_dataset_size(tmp_path, monkeypatch):
    import tracemalloc
    monkeypatch.setattr(cifar10._convert, "_CHUNK_RECORDS", 20)   # 60 and 240 records per file

    def peak_bytes(num_train):
        folder = cifar10.make_synthetic(tmp_path / str(num_train), num_train, 10)
        tracemalloc.start()
        cifar10.convert(folder, tmp_path / f"out{num_train}", image_format="raw",
                        workers=1, quiet=True)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        return peak

    small, large = peak_bytes(5 * 60), peak_bytes(5 * 240)
    assert large < 1.3 * small, (small, large)


# ------------------------------------------------------------------------ PNG

@pytest.mark.tf
def test_encode_png_decodes_to_the_exact_pixels(rng):
    from tf1compat._tf import tf
    images = rng.integers(0, 256, (6, 5, 7, 3), dtype=np.uint8)
    images[0] = 0
    images[1] = 255
    for png, image in zip(cifar10.encode_png(images), images, strict=True):
        np.testing.assert_array_equal(tf.io.decode_png(png).numpy(), image)


def test_encode_png_refuses_non_rgb_uint8():
    with pytest.raises(ValueError, match=r"expected uint8 \[N, H, W, 3\], got float64"):
        cifar10.encode_png(np.zeros((1, 4, 4, 3)))


# ------------------------------------------------------------------- get_split

def read_provider(dataset, items):
    """Every item tuple of a dataset, in order, through slim's DatasetDataProvider."""
    import tf1compat as tc
    from tf1compat import slim
    provider = slim.dataset_data_provider.DatasetDataProvider(
        dataset, num_readers=1, shuffle=False, num_epochs=1)
    with tc.SessionIterator(dict(zip(items, provider.get(items), strict=True))) as it:
        return list(it)


@pytest.mark.tf
@pytest.mark.parametrize("image_format, num_shards", [("png", 1), ("raw", 1), ("png", 3)])
def test_get_split_round_trip_through_data_provider(converted, image_format, num_shards,
                                                    no_thread_leaks):
    import tf1compat as tc
    folder, out = converted(image_format, num_shards)
    for split, names in (("train", TRAIN_FILES), ("test", ["test_batch.bin"])):
        images, labels = source_arrays(folder, names)
        with tc.legacy_graph():
            dataset = cifar10.get_split(split, out)
            assert dataset.num_samples == len(images)
            assert dataset.num_classes == 10
            assert dataset.labels_to_names == dict(enumerate(cifar10.LABELS))
            got = read_provider(dataset, ["image", "label"])
        np.testing.assert_array_equal(np.stack([g["image"] for g in got]),
                                      round_robin(images, num_shards))
        np.testing.assert_array_equal([g["label"] for g in got],
                                      round_robin(labels[:, 0], num_shards))


@pytest.mark.tf
def test_a_slim_style_dataset_module_reads_the_output(converted, no_thread_leaks):
    from slim_style import cifar10 as slim_cifar10

    import tf1compat as tc
    folder, out = converted("png", 1)
    assert (out / "labels.txt").read_text() == "".join(
        f"{i}:{name}\n" for i, name in enumerate(cifar10.LABELS))
    for split, names in (("train", TRAIN_FILES), ("test", ["test_batch.bin"])):
        images, labels = source_arrays(folder, names)
        with tc.legacy_graph():
            dataset = slim_cifar10.get_split(split, str(out))
            assert dataset.labels_to_names == dict(enumerate(cifar10.LABELS))
            got = read_provider(dataset, ["image", "label"])
        assert len(got) == slim_cifar10.SPLITS_TO_SIZES[split]
        np.testing.assert_array_equal(np.stack([g["image"] for g in got]), images)
        np.testing.assert_array_equal([g["label"] for g in got], labels[:, 0])


@pytest.mark.tf
def test_get_split_round_trip_through_tf_data(converted):
    from tf1compat._tf import tf
    folder, out = converted("png", 1)
    images, labels = source_arrays(folder, ["test_batch.bin"])
    features = {"image/encoded": tf.io.FixedLenFeature((), tf.string),
                "image/class/label": tf.io.FixedLenFeature((), tf.int64)}
    records = tf.data.TFRecordDataset(str(out / "cifar10_test.tfrecord")).map(
        lambda r: tf.io.parse_single_example(r, features))
    got = [(tf.io.decode_png(r["image/encoded"]).numpy(), r["image/class/label"].numpy())
           for r in records]
    np.testing.assert_array_equal(np.stack([g[0] for g in got]), images)
    np.testing.assert_array_equal([g[1] for g in got], labels[:, 0])


@pytest.mark.tf
def test_get_split_cifar100_coarse_and_fine(tmp_path, no_thread_leaks):
    import tf1compat as tc
    folder = cifar10.make_synthetic(tmp_path, num_train=10, num_test=7, dataset="cifar100")
    cifar10.convert(folder, tmp_path / "out", workers=1, quiet=True)
    images, labels = source_arrays(folder, ["test.bin"], label_bytes=2)
    with tc.legacy_graph():
        dataset = cifar10.get_split("test", tmp_path / "out")
        assert dataset.num_classes == 100 and dataset.labels_to_names[99] == "worm"
        got = read_provider(dataset, ["image", "label", "coarse_label"])
    np.testing.assert_array_equal(np.stack([g["image"] for g in got]), images)
    np.testing.assert_array_equal([[g["coarse_label"], g["label"]] for g in got], labels)


@pytest.mark.tf
def test_get_split_file_pattern_and_errors(converted):
    import tf1compat as tc
    _, out = converted("png", 3)
    with tc.legacy_graph():
        dataset = cifar10.get_split("train", out, file_pattern="cifar10_%s-0000[01]-*")
        assert dataset.num_samples == 14 + 13
        with pytest.raises(PipelineConfigError, match=r"valid splits: \['test', 'train'\]") as e:
            cifar10.get_split("validation", out)
        assert e.value.argument == "split_name"
        with pytest.raises(PipelineConfigError, match="matches no file") as e:
            cifar10.get_split("train", out, file_pattern="nope_%s.tfrecord")
        assert e.value.argument == "file_pattern"
        with pytest.raises(PipelineConfigError, match="convert-cifar10") as e:
            cifar10.get_split("train", out / "missing")
        assert e.value.argument == "dataset_dir"


# --------------------------------------------------------------- tutorial inputs

def standardized_center_crops(images):
    crops = images[:, 4:28, 4:28, :].astype(np.float64)
    mean = crops.mean(axis=(1, 2, 3), keepdims=True)
    std = np.maximum(crops.std(axis=(1, 2, 3), keepdims=True), 1 / np.sqrt(24 * 24 * 3))
    return (crops - mean) / std


@pytest.mark.tf
def test_inputs_eval_gives_standardized_center_crops_in_order(source, no_thread_leaks):
    import tf1compat as tc
    with tc.legacy_graph():
        images, labels = cifar10.inputs(eval_data=True, data_dir=os.path.dirname(source),
                                        batch_size=5, num_epochs=1)
        with tc.SessionIterator((images, labels)) as it:
            batches = list(it)
    assert [len(b[1]) for b in batches] == [5, 5, 2]
    want_images, want_labels = source_arrays(source, ["test_batch.bin"])
    got = np.concatenate([b[0] for b in batches])
    assert got.dtype == np.float32 and got.shape == (12, 24, 24, 3)
    np.testing.assert_allclose(got, standardized_center_crops(want_images), atol=1e-4)
    np.testing.assert_array_equal(np.concatenate([b[1] for b in batches]), want_labels[:, 0])


@pytest.mark.tf
def test_distorted_inputs_shapes_and_ranges(source, no_thread_leaks):
    # Not compared across runs: shuffle_batch's order depends on how many examples the
    # reader thread has enqueued before each dequeue, even with a seed (as in TF1).
    import tf1compat as tc

    with tc.legacy_graph():
        images, labels = cifar10.distorted_inputs(source, batch_size=8, min_after_dequeue=16,
                                                  num_threads=1, seed=11)
        assert images.shape.as_list() == [8, 24, 24, 3] and labels.shape.as_list() == [8]
        with tc.SessionIterator((images, labels)) as it:
            batches = [next(it) for _ in range(3)]
    for images, labels in batches:
        assert images.dtype == np.float32 and images.shape == (8, 24, 24, 3)
        assert labels.dtype == np.int32 and set(labels) <= set(range(10))
        np.testing.assert_allclose(images.mean(axis=(1, 2, 3)), 0, atol=1e-3)


@pytest.mark.tf
def test_tutorial_inputs_missing_file(source):
    import tf1compat as tc
    os.remove(os.path.join(source, "data_batch_4.bin"))
    with tc.legacy_graph(), pytest.raises(CifarFormatError, match="missing data_batch_4") as e:
        cifar10.distorted_inputs(source, batch_size=4)
    assert e.value.path == os.path.join(source, "data_batch_4.bin")


# ------------------------------------------------------- CLI, examples, benchmark

def test_cli_convert_cifar10(source, tmp_path, capsys):
    from tf1compat import cli
    out = tmp_path / "out"
    assert cli.main(["convert-cifar10", source, str(out), "--format", "raw",
                     "--shards", "2", "--workers", "1"]) == 0
    assert "train 40, test 12 images (raw)" in capsys.readouterr().out
    assert len(list(out.glob("cifar10_train-0000?-of-00002.tfrecord"))) == 2
    assert cli.main(["convert-cifar10", source, str(out), "--format", "raw", "--shards", "2",
                     "--workers", "1"]) == 0
    assert "skipped" in capsys.readouterr().out
    assert cli.main(["convert-cifar10", str(tmp_path / "nothing"), str(out)]) == 2
    assert "SOURCE" in capsys.readouterr().err  # the operand, as the usage names it


def test_cli_convert_cifar10_names_a_file_that_is_not_an_archive_in_one_line(tmp_path, capsys,
                                                                            rng):
    from tf1compat import cli
    (tmp_path / "cifar.tar.gz").write_bytes(rng.bytes(5000))
    assert cli.main(["convert-cifar10", str(tmp_path / "cifar.tar.gz"),
                     str(tmp_path / "out")]) == 2
    assert capsys.readouterr().err == (
        f"tf1compat convert-cifar10: error: {tmp_path}/cifar.tar.gz: cannot extract: not a tar "
        "archive (plain or gzip, bz2, xz compressed)\n")
    assert not (tmp_path / "out").exists()


def test_cli_convert_cifar10_truncated_archive(tmp_path, capsys):
    from tf1compat import cli
    archive = cifar10.make_synthetic(tmp_path, num_train=20, num_test=5, archive=True)
    os.truncate(archive, os.path.getsize(archive) // 2)
    assert cli.main(["convert-cifar10", archive, str(tmp_path / "out"), "--workers", "1"]) == 2
    err = capsys.readouterr().err
    assert f"{archive}: cannot extract" in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()


@pytest.mark.timeout(30)
@pytest.mark.parametrize("content", [b"a text file, not an archive\n", None])
def test_cli_convert_cifar10_refuses_what_is_no_archive_at_once(tmp_path, capsys, content):
    from tf1compat import cli
    source = tmp_path / "cifar-10-binary.tar.gz"
    if content is None:
        with open(source, "wb") as file:
            file.truncate(16 << 30)  # 16 GiB of zeros, sparse: tarfile's "r:*" read it all
    else:
        source.write_bytes(content)
    assert cli.main(["convert-cifar10", str(source), str(tmp_path / "out")]) == 2
    assert capsys.readouterr().err == (
        f"tf1compat convert-cifar10: error: {source}: cannot extract: not a tar archive "
        "(plain or gzip, bz2, xz compressed)\n")


def test_cli_convert_cifar10_names_file_that_is_not_utf8(source, tmp_path, capsys):
    from tf1compat import cli
    meta = os.path.join(source, "batches.meta.txt")
    with open(meta, "wb") as f:
        f.write("avión\n".encode("latin-1") * 10)
    with pytest.raises(CifarFormatError, match="not UTF-8 text") as e:
        cifar10.convert(source, tmp_path / "out", workers=1, quiet=True)
    assert e.value.path == meta
    assert cli.main(["convert-cifar10", source, str(tmp_path / "out"), "--workers", "1"]) == 2
    assert f"{meta}: not UTF-8 text" in capsys.readouterr().err


def test_rerun_over_corrupt_outputs_redoes_them(source, tmp_path, capsys):
    from tf1compat import cli
    out = tmp_path / "out"
    cifar10.convert(source, out, workers=1, quiet=True)
    good = (out / "cifar10_train.tfrecord").read_bytes()
    with open(out / "cifar10_train.tfrecord", "r+b") as f:
        f.seek(len(good) // 2)
        f.write(b"\xff" * 8)                   # a CRC mismatch in the middle
    assert cli.main(["convert-cifar10", source, str(out), "--workers", "1"]) == 0
    assert "wrote" in capsys.readouterr().out
    assert (out / "cifar10_train.tfrecord").read_bytes() == good


def load_example(name):
    import importlib.util
    path = os.path.join(os.path.dirname(__file__), os.pardir, "examples", name)
    spec = importlib.util.spec_from_file_location(name[:-3], path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.tf
@pytest.mark.slow
def test_example_train_slim_loss_goes_down(capsys, no_thread_leaks):
    assert load_example("cifar10_train_slim.py").main(
        ["--steps", "80", "--workers", "1"]) == 0
    losses = [float(line.split()[-1]) for line in capsys.readouterr().out.splitlines()
              if line.startswith("step")]
    assert len(losses) == 3 and losses[-1] < 0.5 * losses[0], losses


@pytest.mark.tf
def test_example_tutorial_inputs_runs(capsys, no_thread_leaks):
    assert load_example("cifar10_tutorial_inputs.py").main(
        ["--steps", "2", "--batch-size", "16", "--min-after-dequeue", "50"]) == 0
    out = capsys.readouterr().out
    assert "batch 2: images float32 [16, 24, 24, 3]" in out and "images/s" in out
