"""The classic-pattern scripts in examples/ run and deliver every example."""

import pathlib
import runpy

import pytest

pytestmark = [pytest.mark.tf, pytest.mark.usefixtures("no_thread_leaks")]

EXAMPLES = pathlib.Path(__file__).resolve().parent.parent / "examples"


def run_example(name, *argv):
    return runpy.run_path(str(EXAMPLES / name))["main"](list(argv))


def test_tfrecord_queue_reads_every_example_each_epoch(capsys):
    assert run_example("tfrecord_queue.py", "--epochs", "2") == 2 * 3 * 40
    assert "in 15 batches" in capsys.readouterr().out


def test_fixed_length_cifar_style_reads_all_images(capsys):
    assert run_example("fixed_length_cifar_style.py") == 100
    assert "shape (32, 32, 3)" in capsys.readouterr().out


def test_whole_file_images_decodes_every_file_in_order():
    assert run_example("whole_file_images.py") == [f"img-{i:03d}.png" for i in range(12)]


def test_text_line_csv_skips_headers_and_parses_rows():
    assert run_example("text_line_csv.py") == 60
