"""The records wing and its CLI facing streams, odd paths, full disks and closed pipes:
they read to the end or fail saying where, leave nothing half-written, and name what
they refuse. Pure Python: no TensorFlow."""

import contextlib
import os
import pathlib
import re
import resource
import shutil
import signal
import subprocess
import sys
import threading
import time

import pytest

from tf1compat import cli, example, tfrecord
from tf1compat.errors import CorruptRecordError, NotATFRecordFileError
from tf1compat.records import tfrecord as record_layer


@pytest.fixture
def records(rng):
    return [example.make_example({"label": i, "data": rng.bytes(int(rng.integers(0, 300)))})
            for i in range(20)]


@contextlib.contextmanager
def fed_fifo(path, data):
    """A FIFO at ``path`` that a thread fills with ``data`` once a reader opens it."""
    os.mkfifo(path)

    def write():
        with open(path, "wb") as fifo:
            fifo.write(data)

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    try:
        yield path
    finally:
        writer.join(1)
        if writer.is_alive():  # nobody read it: read it ourselves to release the writer
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # never blocks
            os.set_blocking(fd, True)
            with open(fd, "rb") as fifo:
                fifo.read()
        writer.join(10)


# ------------------------------------------------------------ streams read to the end

@pytest.mark.timeout(60, method="thread")
@pytest.mark.parametrize("compression", [None, "GZIP"])
def test_iter_records_reads_a_fifo_to_its_end(tmp_path, records, compression):
    source = tmp_path / "source.tfrecord"
    tfrecord.write_records(source, records, compression=compression)
    with fed_fifo(tmp_path / "stream.tfrecord", source.read_bytes()) as fifo:
        with tfrecord.iter_records(fifo, compression="auto") as stream:
            assert list(stream) == records
    assert stream.compression == compression
    assert stream.bytes_read == source.stat().st_size


@pytest.mark.timeout(60, method="thread")
def test_verify_of_a_fifo_counts_what_it_read(tmp_path, records):
    source = tmp_path / "source.tfrecord"
    tfrecord.write_records(source, records)
    with fed_fifo(tmp_path / "stream.tfrecord", source.read_bytes()) as fifo:
        report = tfrecord.verify(fifo)
    assert (report.ok, report.records, report.size_bytes) == (True, 20, source.stat().st_size)


def test_a_proc_file_is_read_not_taken_for_an_empty_file():
    proc = pathlib.Path("/proc/self/status")
    if not proc.exists() or proc.stat().st_size != 0:
        pytest.skip("needs Linux /proc, whose files report size 0")
    report = tfrecord.verify(proc)
    assert not report.ok and report.size_bytes > 0
    assert report.errors[0].index == 0 and report.errors[0].offset == 0
    with pytest.raises(NotATFRecordFileError, match=r"status: not a TFRecord file: no record "
                                                   r"header at its start \(length CRC"):
        tfrecord.count_records(proc)


# ------------------------------------------------------------ full disks: nothing left

@contextlib.contextmanager
def file_size_limit(limit):
    """Lower this process's RLIMIT_FSIZE: writes past ``limit`` fail with EFBIG, as on
    a full disk (Python ignores SIGXFSZ)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))


@pytest.mark.parametrize("size, where", [(3 << 20, "in write"), (100_000, "in close")])
@pytest.mark.parametrize("compression", [None, "ZLIB"])
def test_full_disk_leaves_no_temporary_file(tmp_path, rng, size, where, compression):
    # A record larger than the 1 MiB buffer fails while written, a smaller one only
    # when close() flushes the buffer.
    record = rng.bytes(size)
    target = tmp_path / "out.tfrecord"
    with file_size_limit(64 << 10), pytest.raises(OSError) as excinfo:
        tfrecord.write_records(target, [record], compression=compression)
    assert excinfo.value.errno == 27  # EFBIG
    assert list(tmp_path.iterdir()) == []


def test_full_disk_in_a_sharded_write_leaves_nothing(tmp_path, rng):
    items = [rng.bytes(30_000) for _ in range(10)]
    with file_size_limit(64 << 10), pytest.raises(OSError):
        tfrecord.write_sharded(items, tmp_path / "train", num_shards=2, workers=0)
    assert list(tmp_path.iterdir()) == []


# ------------------------------------------------------------ odd paths and values

def non_utf8_path(tmp_path, name=b"caf\xe9.tfrecord"):
    try:
        os.close(os.open(os.fsencode(tmp_path) + b"/" + name, os.O_CREAT | os.O_WRONLY))
    except (OSError, UnicodeError):
        pytest.skip("the file system refuses non-UTF-8 names")
    os.remove(os.fsencode(tmp_path) + b"/" + name)
    return os.fsencode(tmp_path) + b"/" + name


def test_bytes_paths_that_are_not_utf8_work_everywhere(tmp_path, records):
    path = non_utf8_path(tmp_path)
    assert tfrecord.write_records(path, records) == 20
    assert os.listdir(os.fsencode(tmp_path)) == [os.path.basename(path)]
    assert list(tfrecord.iter_records(path)) == records
    assert tfrecord.count_records(path) == 20
    assert tfrecord.verify(path).ok
    shards = tfrecord.write_sharded(records, path, 2, workers=0)
    assert [tfrecord.count_records(s) for s in shards] == [10, 10]
    assert os.fsencode(shards[0]).endswith(b"caf\xe9-00000-of-00002.tfrecord")


def test_messages_show_an_undecodable_file_name_escaped(tmp_path, records):
    path = non_utf8_path(tmp_path)
    tfrecord.write_records(path, records[:2])
    with open(path, "r+b") as f:
        f.seek(20)
        f.write(b"\xff")
    with pytest.raises(CorruptRecordError) as excinfo:
        list(tfrecord.iter_records(path))
    message = str(excinfo.value)
    message.encode("utf-8")  # printable: the undecodable byte is escaped, not a surrogate
    assert message.startswith(f"{path!r}: record 0 at byte 0: data CRC")
    assert excinfo.value.path == path
    assert str(tfrecord.verify(path)).startswith(f"{path!r}: 1 records")
    assert str(tfrecord.verify(os.fsdecode(path))).startswith(f"{path!r}: 1 records")


@pytest.mark.parametrize("bad, error, message", [
    (None, TypeError, "path must be a file path (str, bytes or os.PathLike), got None"),
    (3, TypeError, "path must be a file path (str, bytes or os.PathLike), got 3"),
    ("", ValueError, "path must be a non-empty file path without NUL characters, got ''"),
    ("a\0b", ValueError, "path must be a non-empty file path without NUL characters, "
                         "got 'a\\x00b'"),
])
def test_what_is_not_a_path_is_refused_naming_the_argument(bad, error, message):
    for call in (tfrecord.iter_records, tfrecord.TFRecordWriter, tfrecord.verify):
        with pytest.raises(error) as excinfo:
            call(bad)
        assert str(excinfo.value) == f"{call.__name__}: {message}"
        assert excinfo.value.argument == "path"
    with pytest.raises(error, match="^shard_paths: output_pattern must be "):
        tfrecord.shard_paths(bad, 2)


def test_unknown_compression_lists_the_choices(tmp_path):
    with pytest.raises(ValueError, match=r"unknown compression 'bz2'; valid choices: None, "
                                         r"'', 'GZIP', 'ZLIB', 'auto'"):
        tfrecord.iter_records(tmp_path / "x", compression="bz2")
    with pytest.raises(ValueError, match=r"valid choices: None, '', 'GZIP', 'ZLIB'$"):
        tfrecord.TFRecordWriter(tmp_path / "x", compression="auto")
    assert list(tmp_path.iterdir()) == []


def test_strings_that_are_not_unicode_are_refused_naming_key_and_element():
    name = os.fsdecode(b"caf\xe9.png")  # what os.listdir gives for a non-UTF-8 name
    with pytest.raises(ValueError) as excinfo:
        example.make_example({"image/filename": ["ok", name]})
    assert str(excinfo.value).startswith(
        "feature 'image/filename': element 1: 'caf\\udce9.png' is not valid Unicode "
        "(surrogates not allowed at position 3")
    assert "os.fsencode(name)" in str(excinfo.value)
    with pytest.raises(ValueError, match=r"^feature key: 'k\\udce9' is not valid Unicode"):
        example.make_example({os.fsdecode(b"k\xe9"): 1})
    encoded = example.make_example({"image/filename": os.fsencode(name), "m": memoryview(b"x")})
    assert example.example_to_dict(encoded)["image/filename"].tolist() == [b"caf\xe9.png"]


def test_infer_schema_explains_a_bytes_path(tmp_path, records):
    path = tmp_path / "train.tfrecord"
    tfrecord.write_records(path, records)
    assert example.infer_schema(str(path)).records == 20
    with pytest.raises(ValueError, match="it names a file: pass paths as str or pathlib.Path"):
        example.infer_schema(os.fsencode(path))


# ------------------------------------------------------------ the CLI

@pytest.fixture
def tfrecords(tmp_path, records):
    for name in ("a", "b"):
        tfrecord.write_records(tmp_path / f"{name}.tfrecord", records)
    return tmp_path


@pytest.mark.parametrize("command", ["verify", "inspect"])
def test_a_glob_matching_a_dangling_symlink_reports_it(capsys, tfrecords, command):
    (tfrecords / "c.tfrecord").symlink_to(tfrecords / "gone.tfrecord")
    assert cli.main([command, str(tfrecords / "*.tfrecord")]) == 1
    captured = capsys.readouterr()
    output = captured.out + captured.err
    assert (f"{tfrecords}/c.tfrecord: cannot read (dangling symbolic link to "
            f"'{tfrecords}/gone.tfrecord')") in output
    assert f"{tfrecords}/b.tfrecord: 20 records" in output


@pytest.mark.timeout(60, method="thread")
def test_a_glob_skips_fifos_and_folders_a_fifo_named_alone_is_read(capsys, tfrecords):
    (tfrecords / "folder.tfrecord").mkdir()
    data = (tfrecords / "a.tfrecord").read_bytes()
    with fed_fifo(tfrecords / "stream.tfrecord", data) as fifo:
        assert cli.main(["verify", str(tfrecords / "*.tfrecord")]) == 0
        captured = capsys.readouterr()
        assert captured.out.endswith("2 file(s) checked, 0 bad\n")
        assert f"tf1compat verify: skipping {fifo}: not a regular file (a FIFO?)" in captured.err
        assert f"tf1compat verify: skipping directory {tfrecords}/folder.tfrecord" \
            in captured.err
        assert cli.main(["inspect", str(fifo)]) == 0  # one pass: counts and schema
    out = capsys.readouterr().out
    assert out.startswith(f"{fifo}: 20 records, {len(data):,} bytes\n")
    assert "# inferred from 20 sampled records" in out


def test_inspect_refuses_a_negative_sample(capsys, tfrecords):
    with pytest.raises(SystemExit) as excinfo:
        cli.main(["inspect", "--sample", "-1", str(tfrecords / "a.tfrecord")])
    assert excinfo.value.code == 2
    assert "--sample: expected an integer >= 0, got '-1'" in capsys.readouterr().err


@pytest.mark.timeout(60)
@pytest.mark.parametrize("command", ["verify", "inspect"])
def test_a_closed_pipe_ends_the_command_quietly(tfrecords, command):
    process = subprocess.Popen(
        [sys.executable, "-m", "tf1compat", command, str(tfrecords / "*.tfrecord")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    process.stdout.close()  # the reader is gone before the first line: `| head -0`
    stderr = process.stderr.read().decode()
    assert process.wait(30) == 141  # 128 + SIGPIPE, as a Unix tool killed by it
    assert stderr == ""


# ------------------------------------------------------------ resynchronisation

def python_first_header(window):
    """The reference: a CRC at every position (what the reader did before)."""
    for start in range(len(window) - 11):
        length, stored = window[start:start + 8], window[start + 8:start + 12]
        if int.from_bytes(length, "little") < 1 << 48 and \
                tfrecord.masked_crc32c(length) == int.from_bytes(stored, "little"):
            return start
    return None


def header(length):
    encoded = length.to_bytes(8, "little")
    return encoded + tfrecord.masked_crc32c(encoded).to_bytes(4, "little")


@pytest.mark.parametrize("kind", ["random", "zeros", "small int64s"])
def test_header_search_finds_what_a_crc_at_every_byte_finds(rng, kind):
    for trial in range(20):
        if kind == "random":
            window = bytearray(rng.bytes(4000))
        elif kind == "zeros":
            window = bytearray(4000)
        else:  # int64 values below 256: most positions look like a small length
            window = bytearray(rng.integers(0, 256, 500).astype("<i8").tobytes())
        if trial % 2:  # plant headers (a zero length among them) at random places
            for length in (0, int(rng.integers(1, 1 << 40)), 7):
                at = int(rng.integers(0, len(window) - 12))
                window[at:at + 12] = header(length)
        assert record_layer._first_header(bytes(window)) == python_first_header(bytes(window))


def test_reading_resumes_at_the_next_record_after_a_damaged_length(tmp_path, records):
    path = tmp_path / "damaged.tfrecord"
    tfrecord.write_records(path, records)
    data = bytearray(path.read_bytes())
    data[3] ^= 0xFF  # record 0's length: its CRC no longer checks
    data[200:600] = bytes(400)  # and a zeroed stretch
    path.write_bytes(bytes(data))
    report = tfrecord.verify(path)
    kept = list(tfrecord.iter_records(path, on_error="skip"))
    assert report.records == len(kept) > 0 and kept == records[-len(kept):]
    assert [e.index for e in report.errors][:1] == [0] and not report.ok


# ------------------------------------------------------------ writer targets

def test_a_missing_directory_is_named_not_the_temporary_file(tmp_path):
    with pytest.raises(FileNotFoundError) as excinfo:
        tfrecord.TFRecordWriter(tmp_path / "missing" / "train.tfrecord")
    assert excinfo.value.filename == str(tmp_path / "missing" / "train.tfrecord")
    assert f"directory {tmp_path}/missing does not exist" in str(excinfo.value)


def test_a_directory_fifo_or_device_target_is_refused_before_writing(tmp_path):
    (tmp_path / "folder").mkdir()
    with pytest.raises(IsADirectoryError, match="a directory, where TFRecordWriter would"):
        tfrecord.TFRecordWriter(tmp_path / "folder")
    os.mkfifo(tmp_path / "stream")
    with pytest.raises(ValueError, match=r"stream is not a regular file \(a FIFO"):
        tfrecord.write_records(tmp_path / "stream", [b"x"])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["folder", "stream"]
    assert (tmp_path / "stream").is_fifo()  # not replaced by a regular file


def test_a_symlink_is_written_through_as_tensorflow_does(tmp_path, records):
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "target.tfrecord").write_bytes(b"old contents")
    (tmp_path / "links").mkdir()
    (tmp_path / "links" / "link.tfrecord").symlink_to("../data/target.tfrecord")
    (tmp_path / "links" / "dangling.tfrecord").symlink_to("../data/new.tfrecord")
    tfrecord.write_records(tmp_path / "reference.tfrecord", records)
    for link in ("link.tfrecord", "dangling.tfrecord"):
        tfrecord.write_records(tmp_path / "links" / link, records)
        assert (tmp_path / "links" / link).is_symlink()
    assert sorted(p.name for p in (tmp_path / "links").iterdir()) == [
        "dangling.tfrecord", "link.tfrecord"]
    assert sorted(p.name for p in (tmp_path / "data").iterdir()) == [
        "new.tfrecord", "target.tfrecord"]
    for target in ("target.tfrecord", "new.tfrecord"):
        assert ((tmp_path / "data" / target).read_bytes()
                == (tmp_path / "reference.tfrecord").read_bytes())


def test_an_unclosed_writer_leaves_nothing_when_collected_or_at_exit(tmp_path):
    import gc

    writer = tfrecord.TFRecordWriter(tmp_path / "forgotten.tfrecord")
    writer.write(b"x")
    assert len(list(tmp_path.iterdir())) == 1  # its temporary file
    del writer
    gc.collect()
    assert list(tmp_path.iterdir()) == []
    script = ("import sys; from tf1compat import tfrecord\n"
              "w = tfrecord.TFRecordWriter(sys.argv[1]); w.write(b'x')\n")  # exits unclosed
    subprocess.run([sys.executable, "-c", script, str(tmp_path / "exit.tfrecord")],
                   check=True, timeout=60)
    assert list(tmp_path.iterdir()) == []


def test_a_compressed_file_read_as_plain_gets_a_hint(tmp_path, records):
    path = tmp_path / "packed.tfrecord"
    tfrecord.write_records(path, records, compression="GZIP")
    with pytest.raises(NotATFRecordFileError, match=(
            r"packed.tfrecord: not a TFRecord file: no record header at its start \(length CRC "
            r"mismatch .*\) nor in the 1 MiB after it; the file looks GZIP-compressed: pass "
            r"compression='GZIP' \(or 'auto'\)$")):
        tfrecord.count_records(path)
    assert tfrecord.count_records(path, compression="auto") == 20


@pytest.mark.timeout(60)
def test_the_next_writer_removes_what_a_killed_writer_left(tmp_path):
    target = tmp_path / "train.tfrecord"
    script = ("import sys, time; from tf1compat import tfrecord\n"
              "w = tfrecord.TFRecordWriter(sys.argv[1]); w.write(b'x' * 100)\n"
              "print('writing', flush=True); time.sleep(60)\n")
    process = subprocess.Popen([sys.executable, "-c", script, str(target)],
                               stdout=subprocess.PIPE, text=True)
    assert process.stdout.readline() == "writing\n"
    process.kill()  # SIGKILL: no cleanup runs
    process.wait(30)
    left = list(tmp_path.iterdir())
    assert len(left) == 1 and left[0].name.startswith(".train.tfrecord.")
    live = tfrecord.TFRecordWriter(target)  # a live writer's file is kept
    with tfrecord.TFRecordWriter(target) as writer:
        names = {p.name for p in tmp_path.iterdir()}  # the two live writers' files only
        assert left[0].name not in names and len(names) == 2
        writer.write(b"y")
    live.abort()
    assert [p.name for p in tmp_path.iterdir()] == ["train.tfrecord"]
    assert list(tfrecord.iter_records(target)) == [b"y"]


def test_progress_hears_of_every_byte_read_also_while_searching(tmp_path, rng):
    path = tmp_path / "stray.bin"
    tfrecord.write_records(path, [b"first"])
    with open(path, "ab") as file:
        file.write(rng.bytes(3 << 20))  # no record after the first: one long search
    heard = []
    with tfrecord.RecordIterator(path, on_error="skip", on_read=heard.append) as records:
        assert list(records) == [b"first"]
    assert sum(heard) == path.stat().st_size and len(heard) >= 3  # chunk by chunk
    assert len(records.skipped) == 1


# ------------------------------------------------------------ files that are not TFRecords

PNG_START = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x20\x00\x00\x00\x20\x08\x02"


@pytest.mark.parametrize("name, content", [
    ("image.png", PNG_START + bytes(range(256)) * 4),
    ("notes.txt", b"a text file\nwith two lines\n"),
    ("zeros.bin", bytes(3 << 20)),
])
def test_a_file_that_is_not_a_tfrecord_file_is_named_so(tmp_path, name, content):
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(NotATFRecordFileError) as excinfo:
        tfrecord.count_records(path)
    error = excinfo.value
    assert isinstance(error, CorruptRecordError)
    assert (error.path, error.index, error.offset) == (str(path), 0, 0)
    assert re.fullmatch(
        rf"{re.escape(str(path))}: not a TFRecord file: no record header at its start "
        r"\(length CRC mismatch \(stored 0x[0-9a-f]{8}, computed 0x[0-9a-f]{8}\)\) nor in "
        r"the 1 MiB after it", str(error))
    report = tfrecord.verify(path)
    assert str(report) == f"{path}: 0 records, {len(content):,} bytes, not a TFRecord file"
    assert [str(e) for e in report.errors] == [str(error)]


def test_a_file_shorter_than_a_header_is_not_a_tfrecord_file(tmp_path):
    path = tmp_path / "short"
    path.write_bytes(b"abc")
    with pytest.raises(NotATFRecordFileError, match=r": not a TFRecord file: 3 bytes, shorter "
                                                    r"than a record header \(12 bytes\)$"):
        tfrecord.count_records(path)


@pytest.mark.timeout(30)
def test_a_huge_file_that_is_not_a_tfrecord_file_is_not_searched_to_its_end(tmp_path, capsys):
    path = tmp_path / "huge"
    with open(path, "wb") as file:
        file.truncate(64 << 30)  # 64 GiB, sparse: searching it all would take minutes
    assert cli.main(["verify", str(path)]) == 1
    assert f"{path}: 0 records, {64 << 30:,} bytes, not a TFRecord file" \
        in capsys.readouterr().out


def test_a_damaged_first_record_is_still_damage_and_reading_resumes(tmp_path, records):
    path = tmp_path / "r.tfrecord"
    tfrecord.write_records(path, records)
    data = bytearray(path.read_bytes())
    data[0] ^= 0xFF  # the first record's length
    path.write_bytes(bytes(data))
    with pytest.raises(CorruptRecordError) as excinfo:
        tfrecord.count_records(path)
    assert not isinstance(excinfo.value, NotATFRecordFileError)
    assert excinfo.value.reason.startswith("length CRC mismatch")
    skipping = tfrecord.iter_records(path, on_error="skip")
    assert list(skipping) == records[1:]


@pytest.mark.parametrize("magic", [b"\x78\x9c", b"\x78\x01", b"\x1f\x8b\x08"],
                         ids=["zlib-default", "zlib-fastest", "gzip"])
def test_a_damaged_plain_file_that_starts_like_a_stream_is_read_as_plain(tmp_path, capsys,
                                                                          records, magic):
    """The damaged first length happens to begin like a zlib (or gzip) header: the
    bytes do not inflate, so the file is plain (auto read it as ZLIB: 0 records, where
    compression none finds the others and one damaged record). Real streams still are
    detected (test_tfrecord's auto-detection tests)."""
    path = tmp_path / "r.tfrecord"
    tfrecord.write_records(path, records)
    data = bytearray(path.read_bytes())
    data[:len(magic)] = magic
    path.write_bytes(bytes(data))
    assert tfrecord.detect_compression(path) is None
    auto, plain = tfrecord.verify(path, "auto"), tfrecord.verify(path, None)
    assert auto.records == plain.records == len(records) - 1
    assert [str(e) for e in auto.errors] == [str(e) for e in plain.errors]
    assert auto.errors[0].reason.startswith("length CRC mismatch")
    assert cli.main(["verify", str(path)]) == 1
    assert f"{len(records) - 1} records" in capsys.readouterr().out


# ------------------------------------------------------------ the CLI over many files

@pytest.mark.parametrize("command", ["verify", "inspect"])
def test_a_directory_is_a_usage_error(capsys, tfrecords, command):
    assert cli.main([command, str(tfrecords / "a.tfrecord"), str(tfrecords)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (f"tf1compat {command}: error: {tfrecords} is a directory; name "
                            f"the files in it, e.g. '{tfrecords}/*.tfrecord'\n")


def test_inspect_names_a_record_that_is_not_an_example_as_verify_names_damage(
        tmp_path, capsys):
    path = tmp_path / "mixed.tfrecord"
    first = example.make_example({"x": 1})
    tfrecord.write_records(path, [first, b"\x0a\xff\xff"])
    assert cli.main(["verify", str(path)]) == 0  # framing is sound
    capsys.readouterr()
    assert cli.main(["inspect", str(path)]) == 1
    err = capsys.readouterr().err
    second = 12 + len(first) + 4  # header, data, data CRC
    assert re.fullmatch(rf"tf1compat inspect: {re.escape(str(path))}: record 1 at byte "
                        rf"{second}: not a serialized tf.train.Example: .+\n", err)


def run_unprivileged(argv):
    """Run the CLI where mode 000 files cannot be read, also as root (whose override of
    file permissions, CAP_DAC_OVERRIDE, is dropped)."""
    prefix = []
    if os.geteuid() == 0:
        if shutil.which("setpriv") is None:
            pytest.skip("needs setpriv to drop root's file-permission override")
        prefix = ["setpriv", "--bounding-set", "-dac_override,-dac_read_search"]
    return subprocess.run([*prefix, sys.executable, "-m", "tf1compat", *argv],
                          capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("command", ["verify", "inspect"])
def test_an_unreadable_file_is_reported_and_the_others_read(tfrecords, command):
    (tfrecords / "a.tfrecord").chmod(0)
    (tfrecords / "c.tfrecord").write_bytes(b"not records, but readable")
    result = run_unprivileged([command, str(tfrecords / "*.tfrecord")])
    assert result.returncode == 1
    assert f"tf1compat {command}: {tfrecords}/a.tfrecord: cannot read (Permission denied)\n" \
        in result.stderr
    assert f"{tfrecords}/b.tfrecord: 20 records" in result.stdout
    assert "Traceback" not in result.stderr
    if command == "verify":
        assert result.stdout.endswith("3 file(s) checked, 1 bad, 1 unreadable\n")
        assert f"{tfrecords}/c.tfrecord: 0 records, 25 bytes, not a TFRecord file" \
            in result.stdout


@pytest.mark.timeout(90)
@pytest.mark.parametrize("command", ["verify", "inspect"])
def test_ctrl_c_while_waiting_for_a_fifo_ends_with_130(tmp_path, command):
    os.mkfifo(tmp_path / "stream")  # no writer: opening it waits
    process = subprocess.Popen([sys.executable, "-m", "tf1compat", command,
                                str(tmp_path / "stream")],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_until_blocked_opening_a_fifo(process.pid)
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=30)
    finally:
        process.kill()
    assert process.returncode == 130
    assert err == f"tf1compat {command}: interrupted\n"


def wait_until_blocked_opening_a_fifo(pid, timeout=40.0):
    """Return once the process sleeps in the kernel's FIFO open (its wchan), so a signal
    sent then finds it there, not still importing (a fixed sleep did not, under load)."""
    wchan = f"/proc/{pid}/wchan"
    if not os.path.exists(wchan):  # no /proc: give it the time it takes on a quiet machine
        time.sleep(3)
        return
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with open(wchan) as f:
            waiting_in = f.read()
        if "partner" in waiting_in or "fifo" in waiting_in:
            return
        time.sleep(0.1)
    raise AssertionError(f"process {pid} never blocked opening the FIFO in {timeout} s")


@pytest.mark.parametrize("compression", ["GZIP", "ZLIB"])
def test_a_file_that_is_not_compressed_as_told_is_named(tmp_path, capsys, compression):
    path = tmp_path / "notes.txt"
    path.write_bytes(b"plain text, not compressed\n")
    with pytest.raises(CorruptRecordError, match=rf"notes.txt: record 0 at byte 0: corrupt "
                                                 rf"{compression} stream \(Error -3 "):
        tfrecord.count_records(path, compression=compression)
    for command in ("verify", "inspect"):
        assert cli.main([command, "--compression", compression.lower(), str(path)]) == 1
        captured = capsys.readouterr()
        assert f"corrupt {compression} stream" in captured.out + captured.err
