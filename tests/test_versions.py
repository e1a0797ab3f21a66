"""What ``tf1compat --version`` says is installed, and the tf-keras that matches the
installed TensorFlow, checked against the packages themselves."""

import pathlib
import re
import subprocess
import sys

import pytest

from tf1compat import __version__, _versions, cli


def test_version_names_tensorflow_tf_slim_and_their_companions(capsys):
    with pytest.raises(SystemExit) as exit_:
        cli.main(["--version"])
    assert exit_.value.code == 0
    line = capsys.readouterr().out.strip()
    assert line.startswith(f"tf1compat {__version__} (TensorFlow ")
    found = dict(re.findall(r"(TensorFlow|tf-slim|tf-keras|numpy|protobuf) ([^,)]+)", line))
    assert set(found) == {"TensorFlow", "tf-slim", "tf-keras", "numpy", "protobuf"}
    import google.protobuf
    import numpy
    assert found["numpy"] == numpy.__version__
    assert found["protobuf"] == google.protobuf.__version__


@pytest.mark.tf
def test_the_versions_are_the_imported_packages_and_tf_keras_matches_tensorflow():
    code = ("import tensorflow as tf, tf_slim, tf_keras; "
            "print(tf.__version__, tf_keras.__version__)")
    tensorflow, tf_keras = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True,
        timeout=120).stdout.split()
    assert _versions.tensorflow_version() == tensorflow
    assert _versions.installed_version("tf-keras") == tf_keras
    major, minor = tensorflow.split(".")[:2]
    assert _versions.keras2_requirement() == f"tf-keras~={major}.{minor}.0"
    assert tf_keras.split(".")[:2] == [major, minor]    # what _venv.sh installed by it
    assert _versions.keras2_install_command() == (
        f'pip install --no-deps "tf-keras~={major}.{minor}.0"')


def test_without_tensorflow_it_says_so_and_asks_for_any_tf_keras(monkeypatch):
    monkeypatch.setattr(_versions, "TENSORFLOW_DISTRIBUTIONS", ("no-such-distribution-x",))
    assert _versions.tensorflow_version() is None
    assert _versions.describe_installed().startswith("TensorFlow not installed, tf-slim ")
    assert _versions.keras2_requirement() == "tf-keras"


def test_the_changelogs_newest_release_is_the_package_version():
    text = (pathlib.Path(__file__).parents[1] / "CHANGELOG.md").read_text()
    headings = re.findall(r"^## \[([^\]]+)\](?: - (\d{4}-\d\d-\d\d))?$", text, re.M)
    assert headings[0] == ("Unreleased", "")
    assert headings[1][0] == __version__ and headings[1][1]      # a version, a date
    releases = [tuple(map(int, version.split("."))) for version, _ in headings[1:]]
    assert releases == sorted(releases, reverse=True)
