"""`tf1compat inspect` and `tf1compat verify`, run in-process with captured output."""

import pathlib
import subprocess
import sys

import numpy as np
import pytest

from tf1compat import cli, example, tfrecord


def _items():
    return [{"image/class/label": i % 10, "image/encoded": bytes([i]) * 20,
             "tags": np.array([b"t"] * (i % 3), bytes)} for i in range(6)]


@pytest.fixture
def shards(tmp_path):
    """Two shards of three Example records each."""
    return tfrecord.write_sharded(_items(), tmp_path / "train.tfrecord", 2, workers=0,
                                  encode=example.make_example)


def test_verify_good_files_exits_0(capsys, shards, tmp_path):
    assert cli.main(["verify", str(tmp_path / "train-*.tfrecord")]) == 0
    out = capsys.readouterr().out.splitlines()
    size = tfrecord.verify(shards[0]).size_bytes
    assert out == [f"{shards[0]}: 3 records, {size} bytes, ok",
                   f"{shards[1]}: 3 records, {size} bytes, ok",
                   "2 file(s) checked, 0 bad"]


def test_verify_names_each_bad_file_record_and_offset(capsys, shards):
    data = bytearray(pathlib.Path(shards[1]).read_bytes())
    data[-1] ^= 0xFF  # data CRC of the last record
    pathlib.Path(shards[1]).write_bytes(bytes(data))
    last = tfrecord.verify(shards[1]).errors[0].offset
    assert cli.main(["verify", *shards]) == 1
    out = capsys.readouterr().out
    assert f"{shards[1]}: 2 records, {len(data)} bytes, 1 corrupt\n" in out
    assert f"  {shards[1]}: record 2 at byte {last}: data CRC mismatch (stored 0x" in out
    assert out.endswith("2 file(s) checked, 1 bad\n")


def test_verify_and_inspect_exit_2_when_nothing_matches(capsys, tmp_path):
    for command in ("verify", "inspect"):
        assert cli.main([command, str(tmp_path / "nothing-*.tfrecord")]) == 2
        err = capsys.readouterr().err
        assert err == (f"tf1compat {command}: error: no file matches "
                       f"'{tmp_path}/nothing-*.tfrecord'\n")


def test_inspect_prints_count_size_table_and_code(capsys, shards):
    assert cli.main(["inspect", shards[0]]) == 0
    out = capsys.readouterr().out
    size = tfrecord.verify(shards[0]).size_bytes
    assert out == (
        f"{shards[0]}: 3 records, {size} bytes\n"
        "  key                kind   length  sample\n"
        "  image/class/label  int64  1       [0]\n"
        "  image/encoded      bytes  1       [b'\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00"
        "\\x00\\x00\\x00\\x00\\x00\\x00'... (20 bytes)]\n"
        "  tags               bytes  0-2     [b't', b't']\n"
        "\n"
        "# inferred from 3 sampled records\n"
        "keys_to_features = {\n"
        "    'image/class/label': tf.io.FixedLenFeature([], tf.int64),\n"
        "    'image/encoded': tf.io.FixedLenFeature([], tf.string),\n"
        "    'tags': tf.io.VarLenFeature(tf.string),\n"
        "}\n")


def test_inspect_detects_compression(capsys, tmp_path):
    path = tmp_path / "small.tfrecord.gz"
    tfrecord.write_records(path, [example.make_example({"x": 1.0})], "GZIP")
    assert cli.main(["inspect", str(path)]) == 0
    out = capsys.readouterr().out
    assert f"{path}: 1 records, {path.stat().st_size} bytes, GZIP-compressed\n" in out


def test_inspect_reports_a_corrupt_file_and_exits_1(capsys, shards):
    with open(shards[0], "ab") as f:
        f.write(b"\x01\x02")
    assert cli.main(["inspect", *shards]) == 1
    captured = capsys.readouterr()
    assert f"tf1compat inspect: {shards[0]}: record 3 at byte" in captured.err
    assert "truncated length (2 of 12 header bytes)" in captured.err
    assert f"{shards[1]}: 3 records" in captured.out


def test_commands_start_without_tensorflow(shards):
    code = ("import sys; from tf1compat import cli; "
            f"codes = [cli.main(['verify', {shards[0]!r}]), cli.main(['inspect', {shards[0]!r}])]; "
            "print(codes, 'tensorflow' in sys.modules)")
    result = subprocess.run([sys.executable, "-c", code],
                            capture_output=True, text=True, check=True)
    assert result.stdout.splitlines()[-1] == "[0, 0] False"


@pytest.mark.tf
def test_printed_keys_to_features_parses_the_records(capsys, shards):
    from tf1compat._tf import tf
    assert cli.main(["inspect", *shards]) == 0
    code = capsys.readouterr().out.split("# inferred from 6 sampled records\n")[1]
    namespace = {"tf": tf}
    exec(code, namespace)
    for record, item in zip(tfrecord.iter_records(shards[0]), _items()[::2], strict=True):
        parsed = tf.io.parse_single_example(record, namespace["keys_to_features"])
        assert parsed["image/class/label"].numpy() == item["image/class/label"]
        assert parsed["tags"].values.numpy().tolist() == item["tags"].tolist()


@pytest.mark.tf
def test_a_system_error_is_one_line_and_exit_2(capsys, tmp_path):
    occupied = tmp_path / "a-file"
    occupied.write_text("")
    assert cli.main(["demo", "--workdir", str(occupied)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("tf1compat demo: error: [Errno 17] File exists") and err.count("\n") == 1


BLOCK_TENSORFLOW = """
import sys
class NoTensorFlow:
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in ("tensorflow", "tf_slim"):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
sys.meta_path.insert(0, NoTensorFlow())
from tf1compat import cli
sys.exit(cli.main(sys.argv[1:]))
"""


@pytest.mark.parametrize("argv", [
    ["demo"], ["run", "program.py"], ["compare", "--pipeline", "pipelines:build"]])
def test_without_tensorflow_commands_say_so_in_one_line_and_exit_2(tmp_path, argv):
    (tmp_path / "program.py").write_text("import tensorflow as tf\nprint(tf.__version__)\n")
    (tmp_path / "pipelines.py").write_text("def build():\n    return None\n")
    result = subprocess.run([sys.executable, "-c", BLOCK_TENSORFLOW, *argv], cwd=tmp_path,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith(f"tf1compat {argv[0]}: error: ")
    assert "needs TensorFlow (No module named 'tensorflow'): pip install \".[cpu]\"" \
        in result.stderr
    assert result.stderr.count("\n") == 1


@pytest.mark.parametrize("argv", [["verify", "--bogus", "x"], ["inspect", "x", "--sampel", "3"]])
def test_a_mistyped_option_shows_the_commands_usage(capsys, argv):
    with pytest.raises(SystemExit) as excinfo:
        cli.main(argv)
    assert excinfo.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith(f"usage: tf1compat {argv[0]} [-h]")
    assert err.endswith(f"tf1compat {argv[0]}: error: unrecognized arguments: "
                        f"{' '.join(a for a in argv[1:] if a.startswith('--'))}"
                        f"{' 3' if argv[0] == 'inspect' else ''}\n")


def test_errors_name_flags_as_typed(capsys, tmp_path):
    (tmp_path / "photos" / "cats").mkdir(parents=True)
    assert cli.main(["convert-images", str(tmp_path / "photos"), str(tmp_path / "out"),
                     "--name", "pets", "--shards", "0"]) == 2
    assert capsys.readouterr().err == (
        "tf1compat convert-images: error: --shards must be a positive integer or None, got 0\n")
    assert cli.main(["convert-images", str(tmp_path / "none"), str(tmp_path / "out"),
                     "--name", "pets"]) == 2
    assert capsys.readouterr().err == (
        f"tf1compat convert-images: error: SOURCE '{tmp_path}/none' is not a directory\n")


@pytest.mark.parametrize("message, argument, shown", [
    ("compare: the legacy pipeline never ends: x; pass max_examples=N to compare its first N",
     "max_examples", "compare: the legacy pipeline never ends: x; pass --max-examples N to "
                     "compare its first N"),
    ("up to date (overwrite=True redoes it)", None, "up to date (--overwrite redoes it)"),
    ("num_shards must be a positive integer, got 0; num_shards again", "num_shards",
     "--shards must be a positive integer, got 0; num_shards again"),
    ("file 'a/num_shards' is bad", "num_shards", "file 'a/num_shards' is bad"),
])
def test_error_lines_use_flag_names(message, argument, shown):
    from tf1compat.errors import PipelineConfigError
    command = "compare" if "max_examples" in message else "convert-cifar10"
    error = PipelineConfigError(message, argument=argument)
    assert cli.error_line(f"tf1compat {command}", error) == shown


def test_a_message_of_several_lines_is_one_line():
    error = OSError("file could not be opened successfully:\n- method gz: ReadError('x')\n"
                    "- method bz2: ReadError('y')\n")
    assert cli.error_line("tf1compat convert-cifar10", error) == (
        "file could not be opened successfully:; - method gz: ReadError('x'); "
        "- method bz2: ReadError('y')")
