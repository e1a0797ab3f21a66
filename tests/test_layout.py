"""The public names do not depend on where the wings keep them."""

import subprocess
import sys

import pytest

import tf1compat


def test_user_modules_resolve_to_their_wings():
    from tf1compat import cifar10, example, slim, testing, tfrecord

    assert tfrecord.__name__ == "tf1compat.records.tfrecord"
    assert example.__name__ == "tf1compat.records.example"
    assert testing.__name__ == "tf1compat.migrate.testing"
    assert (slim.__name__, cifar10.__name__) == ("tf1compat.slim", "tf1compat.cifar10")


@pytest.mark.tf
def test_every_public_name_resolves():
    for name in tf1compat.__all__:
        assert getattr(tf1compat, name) is not None, name


def test_unknown_names_raise_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'queues'"):
        tf1compat.queues  # noqa: B018 - a flat module path of the old layout


def test_record_tools_import_without_tensorflow():
    code = ("import sys; from tf1compat import example, tfrecord; "
            "import tf1compat.records, tf1compat.convert; "
            "print('tensorflow' in sys.modules)")
    result = subprocess.run([sys.executable, "-c", code],
                            capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "False"
