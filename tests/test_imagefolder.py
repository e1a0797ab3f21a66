"""Image folders -> slim TFRecords (tf1compat.imagefolder): every file once with its own
bytes, labels, header sizes, a seeded stable split, bad files named or skipped, and the
slim split reading it back. Pillow writes the images and is the reference for sizes;
TensorFlow's decoders for pixels."""

import io
import json
import os
import struct
import subprocess
import sys
import threading
import time

import numpy as np
import pytest
from PIL import Image

import tf1compat as tc
from tf1compat import cli
from tf1compat.convert.imagefolder import SPLITS, read_image_header
from tf1compat.convert.plan import plan_key
from tf1compat.convert.staging import STAGING_PREFIX, Staging
from tf1compat.errors import ImageFormatError, PipelineConfigError
from tf1compat.records.example import example_to_dict
from tf1compat.records.tfrecord import iter_records

CLASSES = ["daisy", "roses", "tulips"]
FORMATS = ["JPEG", "PNG", "BMP"]


def encode_image(array, image_format, **options):
    buffer = io.BytesIO()
    Image.fromarray(array).save(buffer, image_format, **options)
    return buffer.getvalue()


@pytest.fixture
def photos(tmp_path, rng):
    """``(folder, {relative path: (bytes, label, height, width)})``: 3 classes of 10
    seeded images of mixed formats and sizes, some in a subfolder, plus a hidden file."""
    folder = tmp_path / "photos"
    expected = {}
    for label, name in enumerate(CLASSES):
        for i in range(10):
            height, width = (int(n) for n in rng.integers(8, 40, 2))
            image_format = FORMATS[i % 3]
            relative = f"{name}/{'deep/' if i == 4 else ''}{i}.{image_format.lower()}"
            data = encode_image(rng.integers(0, 256, (height, width, 3), dtype=np.uint8),
                                image_format)
            (folder / relative).parent.mkdir(parents=True, exist_ok=True)
            (folder / relative).write_bytes(data)
            expected[relative] = (data, label, height, width)
    (folder / "daisy" / ".DS_Store").write_bytes(b"\0\0\0\1Bud1")
    (folder / ".git").mkdir()
    return folder, expected


def read_output(directory, split="*"):
    examples = [example_to_dict(r) for path in sorted(directory.glob(f"*_{split}_*-of-*.tfrecord"))
                for r in iter_records(path)]
    return {e["image/filename"][0].decode(): e for e in examples}


def files_of(directory):
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir())}


def test_every_file_once_with_its_bytes_label_and_size(photos, tmp_path, capsys):
    folder, expected = photos
    summary = tc.imagefolder.convert(folder, tmp_path / "out", name="flowers")
    assert capsys.readouterr() == ("", "")          # it returns its summary, never prints
    examples = read_output(tmp_path / "out")
    assert sorted(examples) == sorted(expected)                 # each once, hidden left out
    for relative, (data, label, height, width) in expected.items():
        example = examples[relative]
        assert example["image/encoded"][0] == data              # never re-encoded
        assert example["image/format"][0] == relative.rsplit(".", 1)[1].encode()
        assert (example["image/class/label"][0], example["image/height"][0],
                example["image/width"][0]) == (label, height, width)
    assert (tmp_path / "out" / "labels.txt").read_text() == "0:daisy\n1:roses\n2:tulips\n"
    assert summary.counts == {"train": 27, "validation": 3} and summary.skipped == ()
    assert sorted(os.listdir(tmp_path / "out")) == [
        "flowers_train_00000-of-00001.tfrecord", "flowers_validation_00000-of-00001.tfrecord",
        "labels.txt"]


def test_split_is_seeded_per_class_and_stable(photos, tmp_path, rng):
    folder, expected = photos

    def validation(seed, out):
        tc.imagefolder.convert(folder, tmp_path / out, name="f", validation_fraction=0.3,
                               seed=seed, num_shards=2, quiet=True)
        return set(read_output(tmp_path / out, "validation"))

    first = validation(0, "a")
    assert sorted(name.split("/")[0] for name in first) == sorted(CLASSES * 3)
    assert validation(0, "b") == first and validation(1, "c") != first
    train_order = list(read_output(tmp_path / "a", "train"))
    assert train_order == list(read_output(tmp_path / "b", "train"))
    assert [name.split("/")[0] for name in train_order] != sorted(
        name.split("/")[0] for name in train_order)            # classes are mixed
    for i in range(10, 13):                                    # a few more roses
        (folder / "roses" / f"{i}.png").write_bytes(
            encode_image(rng.integers(0, 256, (9, 9, 3), dtype=np.uint8), "PNG"))
    assert len(first - validation(0, "d")) <= 1


def test_not_an_image_is_named_and_nothing_written(photos, tmp_path):
    folder, _ = photos
    bad = folder / "roses" / "broken.jpg"
    bad.write_bytes(b"\xff\xd8\xff\xe0\x00\x10JFIF")             # a header cut off
    out = tmp_path / "out"
    out.mkdir()
    (out / "flowers_train_00000-of-00001.tfrecord").write_bytes(b"earlier run")
    with pytest.raises(ImageFormatError, match="broken.jpg: a JPEG image without a frame "
                                               "header") as e:
        tc.imagefolder.convert(folder, out, name="flowers", workers=2, quiet=True)
    assert e.value.path == str(bad) and "JPEG, PNG or BMP" in e.value.expected
    assert files_of(out) == {"flowers_train_00000-of-00001.tfrecord": b"earlier run"}


def cut(data, fraction=0.6):
    return data[:int(len(data) * fraction)]


def test_cut_off_images_are_named_with_their_shard_and_nothing_written(photos, tmp_path,
                                                                        capsys):
    folder, expected = photos
    jpeg, png = (expected[f"roses/{i}.{kind}"][0] for i, kind in ((0, "jpeg"), (1, "png")))
    (folder / "roses" / "cut.jpg").write_bytes(cut(jpeg))
    out = tmp_path / "out"
    assert cli.main(["convert-images", str(folder), str(out), "--name", "f",
                     "--validation-fraction", "0", "--workers", "2"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"tf1compat convert-images: error: {folder}/roses/cut.jpg: a JPEG "
                          f"image cut off at byte {len(cut(jpeg))} (no end-of-image marker "
                          "after its scan); expected a JPEG, PNG or BMP image (while writing "
                          "shard task f_train_00000-of-00001.tfrecord, input ")
    assert err.endswith("('roses/cut.jpg', 1)))\n") and err.count("\n") == 1
    assert not out.exists()        # created for the run, removed with it
    (folder / "roses" / "cut.png").write_bytes(cut(png))
    assert cli.main(["convert-images", str(folder), str(out), "--name", "f",
                     "--on-error", "skip", "--workers", "2"]) == 0
    printed = capsys.readouterr().out
    assert "skipped 2 file(s):\n" in printed
    assert (f"\n  roses/cut.jpg (a JPEG image cut off at byte {len(cut(jpeg))} (no "
            "end-of-image marker after its scan))") in printed
    assert (f"\n  roses/cut.png (a PNG image cut off at byte {len(cut(png))} (no IEND "
            "chunk))") in printed
    assert sorted(read_output(out)) == sorted(expected)


def test_empty_class_folders_are_refused_naming_them(photos, tmp_path):
    folder, _ = photos
    (folder / "zinnias" / "deep").mkdir(parents=True)
    (folder / "asters").mkdir()
    (folder / "asters" / ".DS_Store").write_bytes(b"\0")
    with pytest.raises(PipelineConfigError, match=r"class folder\(s\) \['asters', 'zinnias'\] "
                                                  "hold no files") as e:
        tc.imagefolder.convert(folder, tmp_path / "out", name="f")
    assert (e.value.argument, e.value.path) == ("source_dir", str(folder / "asters"))
    assert not (tmp_path / "out").exists()


def test_an_output_inside_the_source_through_a_link_is_refused(photos, tmp_path):
    folder, _ = photos
    (tmp_path / "link").symlink_to(folder / "roses")
    with pytest.raises(PipelineConfigError, match=f"resolves to '{folder}/roses/out', which "
                                                  "is inside source_dir") as e:
        tc.imagefolder.convert(folder, tmp_path / "link" / "out", name="f")
    assert e.value.argument == "output_dir"
    assert sorted(os.listdir(folder / "roses")) == sorted(
        p.name for p in (folder / "roses").iterdir())      # nothing created
    assert not (folder / "roses" / "out").exists()


def test_a_dangling_link_is_named_or_skipped(photos, tmp_path):
    folder, expected = photos
    (folder / "daisy" / "gone.jpg").symlink_to(tmp_path / "nowhere.jpg")
    with pytest.raises(ImageFormatError, match=f"daisy/gone.jpg: dangling symbolic link to "
                                               f"'{tmp_path}/nowhere.jpg'") as e:
        tc.imagefolder.convert(folder, tmp_path / "out", name="f", workers=1)
    assert e.value.task in ("f_train_00000-of-00001.tfrecord",
                            "f_validation_00000-of-00001.tfrecord")
    assert e.value.input == ("daisy/gone.jpg", 0)
    summary = tc.imagefolder.convert(folder, tmp_path / "out", name="f", on_error="skip")
    assert [s.reference for s in summary.skipped] == ["daisy/gone.jpg"]
    assert sorted(read_output(tmp_path / "out")) == sorted(expected)


DISK_FULL = """\
import resource, signal, sys
from tf1compat import cli
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)      # over the limit: EFBIG, as a full disk
resource.setrlimit(resource.RLIMIT_FSIZE, (2000, 2000))
sys.exit(cli.main(sys.argv[1:]))
"""


@pytest.mark.timeout(120)
@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_full_disk_is_one_line_naming_the_file_and_leaves_nothing(photos, tmp_path,
                                                                      workers):
    folder, _ = photos
    out = tmp_path / "out"
    result = subprocess.run(
        [sys.executable, "-c", DISK_FULL, "convert-images", str(folder), str(out), "--name",
         "f", "--workers", workers], capture_output=True, text=True, timeout=100)
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith(f"tf1compat convert-images: error: [Errno 27] File too "
                                     f"large: '{out}/{STAGING_PREFIX}"), result.stderr
    assert "(while writing shard task f_" in result.stderr
    assert result.stderr.count("\n") == 1
    assert not out.exists()


def test_on_error_skip_lists_the_files_left_out(photos, tmp_path, capsys):
    folder, expected = photos
    (folder / "tulips" / "notes.txt").write_text("not a picture")
    (folder / "tulips" / "anim.gif").write_bytes(
        encode_image(np.zeros((4, 4, 3), np.uint8), "GIF"))
    assert cli.main(["convert-images", str(folder), str(tmp_path / "out"), "--name", "f",
                     "--on-error", "skip", "--workers", "1"]) == 0
    printed = capsys.readouterr().out
    assert "train 27, validation 3 images in 3 classes" in printed
    assert "skipped 2 file(s):\n  tulips/anim.gif (a GIF image" in printed
    assert "  tulips/notes.txt (not an image (starts with 6e 6f 74 20" in printed
    assert sorted(read_output(tmp_path / "out")) == sorted(expected)


def test_cli_names_the_bad_file_and_exits_2(photos, tmp_path, capsys):
    folder, _ = photos
    (folder / "daisy" / "empty.png").write_bytes(b"")
    assert cli.main(["convert-images", str(folder), str(tmp_path / "out"), "--name", "f",
                     "--workers", "1"]) == 2
    assert f"{folder}/daisy/empty.png: empty file; expected a JPEG" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


@pytest.mark.timeout(120)
def test_same_bytes_for_one_and_two_workers_and_beam(photos, tmp_path):
    folder, _ = photos
    outputs = []
    for out, options in (("one", {"workers": 1}), ("two", {"workers": 2}),
                         ("beam", {"runner": "beam"})):
        tc.imagefolder.convert(folder, tmp_path / out, name="f", num_shards=3, quiet=True,
                               **options)
        outputs.append(files_of(tmp_path / out))
    assert len(outputs[0]) == 7 and outputs[1] == outputs[0] and outputs[2] == outputs[0]


def test_file_names_that_are_not_utf8_are_kept_as_bytes(tmp_path):
    folder = os.fsencode(tmp_path / "photos")
    os.makedirs(os.path.join(folder, b"caf\xe9"))
    data = encode_image(np.full((3, 5, 3), 7, np.uint8), "PNG")
    with open(os.path.join(folder, b"caf\xe9", b"cr\xe8me.png"), "wb") as f:
        f.write(data)
    tc.imagefolder.convert(tmp_path / "photos", tmp_path / "out", name="f",
                           validation_fraction=0, quiet=True)
    (record,) = iter_records(tmp_path / "out" / "f_train_00000-of-00001.tfrecord")
    assert example_to_dict(record)["image/filename"][0] == b"caf\xe9/cr\xe8me.png"
    assert (tmp_path / "out" / "labels.txt").read_bytes() == b"0:caf\xe9\n"


def test_other_shard_counts_are_replaced(photos, tmp_path):
    folder, _ = photos
    out = tmp_path / "out"
    tc.imagefolder.convert(folder, out, name="f", num_shards=3, quiet=True)
    (out / "mine.txt").write_text("kept")
    tc.imagefolder.convert(folder, out, name="f", num_shards=2, validation_fraction=0,
                           quiet=True)
    assert sorted(os.listdir(out)) == [
        "f_train_00000-of-00002.tfrecord", "f_train_00001-of-00002.tfrecord", "labels.txt",
        "mine.txt"]


def test_shards_a_dead_run_was_committing_are_replaced_too(photos, tmp_path):
    folder, _ = photos
    out = tmp_path / "out"
    tc.imagefolder.convert(folder, out, name="f", num_shards=3, quiet=True)
    # a run killed while committing 3 shards: its journal moves them in on the next run
    dead = out / f"{STAGING_PREFIX}0123456789abcdef"
    dead.mkdir()
    moved = sorted(p.name for p in out.glob("f_train-*"))
    for shard in moved:
        os.replace(out / shard, dead / shard)
    (dead / ".lock").write_text("")
    (dead / ".commit.json").write_text(json.dumps({"move": moved, "remove": []}))
    tc.imagefolder.convert(folder, out, name="f", num_shards=2, validation_fraction=0,
                           quiet=True)
    assert sorted(os.listdir(out)) == [
        "f_train_00000-of-00002.tfrecord", "f_train_00001-of-00002.tfrecord", "labels.txt"]


def test_a_second_conversion_into_the_folder_is_refused_naming_the_first_or_waits(
        photos, tmp_path, capsys):
    folder, _ = photos
    out = tmp_path / "out"
    out.mkdir()
    with Staging(out, plan_key("first"), what="imagefolder.convert cats") as first:
        assert cli.main(["convert-images", str(folder), str(out), "--name", "f"]) == 2
        err = capsys.readouterr().err
        assert err.startswith(
            f"tf1compat convert-images: error: {out}: another tf1compat conversion is "
            f"writing into this folder (imagefolder.convert cats, pid {os.getpid()} on ")
        assert err.count("\n") == 1 and "--wait" in err
        assert os.listdir(out) == [os.path.basename(first.path)]
        waiting = threading.Thread(target=tc.imagefolder.convert, args=(folder, out),
                                   kwargs={"name": "f", "wait": True, "workers": 1})
        waiting.start()
        time.sleep(1.5)
        assert waiting.is_alive() and os.listdir(out) == [os.path.basename(first.path)]
    waiting.join(60)
    assert sorted(os.listdir(out)) == ["f_train_00000-of-00001.tfrecord",
                                       "f_validation_00000-of-00001.tfrecord", "labels.txt"]


@pytest.mark.timeout(120)
def test_two_conversions_at_once_never_mix_their_shards(photos, tmp_path):
    folder, expected = photos
    out = tmp_path / "out"
    runs = [subprocess.Popen([sys.executable, "-m", "tf1compat", "convert-images", str(folder),
                              str(out), "--name", "f", "--shards", shards, "--wait",
                              "--workers", "1"], stderr=subprocess.PIPE, text=True)
            for shards in ("2", "3")]
    for run in runs:
        assert run.wait(timeout=100) == 0, run.stderr.read()
        run.stderr.close()
    shards = sorted(p.name for p in out.glob("*.tfrecord"))
    assert shards in ([f"f_{split}_{i:05d}-of-0000{n}.tfrecord" for split in SPLITS
                       for i in range(n)] for n in (2, 3))
    assert sorted(read_output(out)) == sorted(expected)        # each image once


@pytest.mark.parametrize("arguments, argument", [
    ({"name": ""}, "name"), ({"name": "a/b"}, "name"),
    ({"validation_fraction": 1.0}, "validation_fraction"),
    ({"validation_fraction": "0.1"}, "validation_fraction"),
    ({"num_shards": 0}, "num_shards"), ({"seed": None}, "seed"),
    ({"on_error": "ignore"}, "on_error"), ({"runner": "spark"}, "runner"),
    ({"workers": 2, "runner": "beam"}, "workers")])
def test_bad_arguments_are_named(photos, tmp_path, arguments, argument):
    folder, _ = photos
    with pytest.raises(PipelineConfigError) as e:
        tc.imagefolder.convert(folder, tmp_path / "out", **{"name": "f", **arguments})
    assert e.value.argument == argument
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("layout, argument, message", [
    ("missing", "source_dir", "is not a directory"),
    ("no classes", "source_dir", "has no class subfolders"),
    ("output inside", "output_dir", "is inside source_dir"),
    ("output is a file", "output_dir", "is a file")])
def test_bad_folders_are_named(tmp_path, layout, argument, message):
    source, out = tmp_path / "photos", tmp_path / "out"
    if layout != "missing":
        source.mkdir()
        (source / "loose.png").write_bytes(b"")
    if layout == "output inside":
        out = source / "out"
    if layout == "output is a file":
        out.write_text("")
    with pytest.raises(PipelineConfigError, match=message) as e:
        tc.imagefolder.convert(source, out, name="f")
    assert e.value.argument == argument


# ------------------------------------------------------------------- headers

def grey_bmp_with_palette(palette):
    buffer = io.BytesIO()
    image = Image.fromarray(np.arange(12, dtype=np.uint8).reshape(3, 4), "L").convert("P")
    image.putpalette(palette)
    image.save(buffer, "BMP")
    return buffer.getvalue()


def os2_bmp(height, width):
    """A 24-bit OS/2 BMP (12-byte BITMAPCOREHEADER), which Pillow reads but never writes."""
    pixels = bytes((width * 3 + 3) // 4 * 4 * height)
    offset = 14 + 12
    return (b"BM" + struct.pack("<IHHI", offset + len(pixels), 0, 0, offset)
            + struct.pack("<IHHHH", 12, width, height, 1, 24) + pixels)


HEADER_KINDS = [
    ("JPEG", "RGB", {}), ("JPEG", "L", {}), ("JPEG", "RGB", {"progressive": True}),
    ("JPEG", "CMYK", {}), ("PNG", "RGB", {}), ("PNG", "RGBA", {}), ("PNG", "P", {}),
    ("PNG", "I;16", {}), ("PNG", "RGB", {"optimize": True}), ("BMP", "RGB", {}),
    ("BMP", "RGBA", {}), ("BMP", "L", {})]


def encode_kind(rng, image_format, mode, options):
    """A seeded 23x41 image in ``mode``, encoded (a JPEG with a large EXIF segment)."""
    image = Image.fromarray(rng.integers(0, 256, (23, 41, 3), dtype=np.uint8)).convert(mode)
    if image_format == "JPEG":
        options = {"exif": b"Exif\0\0" + bytes(3000), **options}
    buffer = io.BytesIO()
    image.save(buffer, image_format, **options)
    return buffer.getvalue()


@pytest.mark.parametrize("image_format, mode, options", HEADER_KINDS)
def test_header_size_equals_pillows(rng, image_format, mode, options):
    data = encode_kind(rng, image_format, mode, options)
    assert read_image_header(data) == (image_format.lower(), 23, 41)


@pytest.mark.tf
def test_what_the_header_takes_tensorflow_decodes_to_its_size(rng):
    from tf1compat._tf import tf
    images = [encode_kind(rng, *kind) for kind in HEADER_KINDS]
    images.append(grey_bmp_with_palette([v for i in range(256) for v in (i, i, i)]))
    for data in images:
        _, height, width = read_image_header(data)
        assert tf.io.decode_image(data, channels=3).shape == (height, width, 3)
    assert Image.open(io.BytesIO(os2_bmp(3, 5))).size == (5, 3)    # a real image...
    with pytest.raises(tf.errors.InvalidArgumentError):             # ...TensorFlow refuses
        tf.io.decode_image(os2_bmp(3, 5), channels=3)


def test_an_os2_bmp_is_refused_naming_the_file(photos, tmp_path):
    folder, _ = photos
    (folder / "roses" / "old.bmp").write_bytes(os2_bmp(3, 5))
    with pytest.raises(ImageFormatError, match=r"roses/old\.bmp: an OS/2 BMP, which "
                       "TensorFlow does not decode") as e:
        tc.imagefolder.convert(folder, tmp_path / "out", name="f", quiet=True)
    assert e.value.path == str(folder / "roses" / "old.bmp")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("make, reason", [
    (lambda: b"", "empty file"),
    (lambda: b"hello world", r"not an image \(starts with 68 65 6c 6c 6f 20 77 6f\)"),
    (lambda: encode_image(np.zeros((2, 2, 3), np.uint8), "GIF"), "a GIF image"),
    (lambda: encode_image(np.zeros((2, 2, 3), np.uint8), "WEBP"), "a WebP image"),
    (lambda: encode_image(np.zeros((2, 2, 3), np.uint8), "TIFF"), "a TIFF image"),
    (lambda: encode_image(np.zeros((2, 2, 3), np.uint8), "PNG")[:20], "IHDR header is missing"),
    (lambda: encode_image(np.zeros((2, 2), bool), "BMP"), "a 1-bit BMP"),
    (lambda: grey_bmp_with_palette([255, 0, 0] * 256), "colour palette"),
    (lambda: b"BM" + bytes(12) + (40).to_bytes(4, "little") + bytes(12)
     + (1).to_bytes(4, "little") + bytes(40), "compressed BMP"),
    (lambda: b"\xff\xd8\xff\xc3\x00\x11\x08\x00\x02\x00\x02", "lossless JPEG")])
def test_header_refusals_say_what_the_file_is(make, reason):
    with pytest.raises(ValueError, match=reason):
        read_image_header(make())


@pytest.mark.tf
def test_what_is_refused_as_cut_off_or_damaged_tensorflow_cannot_decode(rng):
    from tf1compat._tf import tf
    kinds = [("JPEG", "RGB", {}), ("JPEG", "RGB", {"progressive": True}), ("PNG", "RGB", {}),
             ("BMP", "RGB", {})]
    damaged = []
    for kind in kinds:
        data = encode_kind(rng, *kind)
        damaged += [(cut(data, fraction), "cut off") for fraction in (0.6, 0.95, 0.999)]
    png = bytearray(encode_kind(rng, "PNG", "RGB", {}))
    png[len(png) // 2] ^= 0xFF
    damaged.append((bytes(png), "CRC mismatch"))
    for data, reason in damaged:
        with pytest.raises(ValueError, match=reason):
            read_image_header(data)
        with pytest.raises(tf.errors.InvalidArgumentError):
            tf.io.decode_image(data, channels=3)


def test_grey_palette_bmp_is_taken():
    assert read_image_header(grey_bmp_with_palette(
        [v for i in range(256) for v in (i, i, i)])) == ("bmp", 3, 4)


# ------------------------------------------------------------------ get_split

@pytest.mark.tf
def test_get_split_reads_images_labels_and_names(photos, tmp_path):
    from tf1compat import slim
    from tf1compat._tf import tf
    folder, expected = photos
    tc.imagefolder.convert(folder, tmp_path, name="flowers", num_shards=2, quiet=True)
    with tc.legacy_graph():
        dataset = tc.imagefolder.get_split("validation", tmp_path)
        assert (dataset.num_samples, dataset.num_classes) == (3, 3)
        assert dataset.labels_to_names == dict(enumerate(CLASSES))
        provider = slim.dataset_data_provider.DatasetDataProvider(
            dataset, num_readers=1, shuffle=False, num_epochs=1)
        items = provider.get(["image", "label", "filename"])
        with tc.SessionIterator(items) as it:
            found = list(it)
    assert len(found) == 3
    for image, label, filename in found:
        data, expected_label, height, width = expected[filename.decode()]
        assert label == expected_label and image.shape == (height, width, 3)
        np.testing.assert_array_equal(image, tf.io.decode_image(data, channels=3).numpy())


@pytest.mark.tf
def test_get_split_errors_name_the_split_and_folder(tmp_path):
    with tc.legacy_graph():
        with pytest.raises(PipelineConfigError, match="valid splits") as e:
            tc.imagefolder.get_split("test", tmp_path)
        assert e.value.argument == "split_name"
        with pytest.raises(PipelineConfigError, match="convert-images") as e:
            tc.imagefolder.get_split("train", tmp_path)
        assert e.value.argument == "dataset_dir"


def decoded_split(dataset):
    """``[(label, shape, pixels)]`` of a slim dataset read once in file order, sorted."""
    from tf1compat import slim
    provider = slim.dataset_data_provider.DatasetDataProvider(
        dataset, num_readers=1, shuffle=False, num_epochs=1)
    with tc.SessionIterator(provider.get(["label", "image"])) as it:
        return sorted((int(label), image.shape, image.tobytes()) for label, image in it)


@pytest.mark.tf
@pytest.mark.parametrize("num_shards", [1, 3])
def test_a_slim_style_dataset_module_reads_the_output(photos, tmp_path, num_shards,
                                                      no_thread_leaks):
    from slim_style import flowers

    from tf1compat._tf import tf
    folder, expected = photos
    out = tmp_path / "flowers"
    tc.imagefolder.convert(folder, out, name="flowers", num_shards=num_shards)
    for split, size in flowers.SPLITS_TO_SIZES.items():
        with tc.legacy_graph():
            dataset = flowers.get_split(split, str(out))
            assert dataset.labels_to_names == dict(enumerate(CLASSES))
            found = decoded_split(dataset)
        members = [expected[name] for name in read_output(out, split)]
        reference = sorted((label, (height, width, 3),
                            tf.io.decode_image(data, channels=3).numpy().tobytes())
                           for data, label, height, width in members)
        assert len(found) == size and found == reference
