"""The public names do not depend on where the wings keep them."""

import importlib
import pathlib
import re
import subprocess
import sys

import numpy as np
import pytest

import tf1compat

PUBLIC_MODULES = ("tfrecord", "example", "imagefolder", "testing")
DOCS = [pathlib.Path(__file__).parents[1] / "README.md",
        *sorted((pathlib.Path(__file__).parents[1] / "docs").rglob("*.md"))]


@pytest.mark.parametrize("name", PUBLIC_MODULES)
def test_public_modules_are_real_modules(name):
    code = (f"import sys, tf1compat.{name} as m; from tf1compat import {name} as n; "
            f"assert m is n is sys.modules['tf1compat.{name}']; "
            "assert all(hasattr(m, x) for x in m.__all__), m.__all__; "
            "print('tensorflow' in sys.modules)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False"  # testing and get_split import it when called


def _documented_names():
    """Every ``tf1compat.a.b`` / ``tc.a.b`` the docs name, every ``from tf1compat[.x]
    import y``, and ``m.y`` after ``from tf1compat import m``."""
    names = set()
    for text in (path.read_text() for path in DOCS):
        names.update(m.group(0).replace("tc.", "tf1compat.", 1) for m in re.finditer(
            r"\b(?:tf1compat|tc)(?:\.[A-Za-z_]\w*)+", text))
        for m in re.finditer(r"^\s*from (tf1compat[\w.]*) import ([\w, ]+)", text, re.M):
            for imported in filter(None, (n.strip() for n in m.group(2).split(","))):
                names.add(f"{m.group(1)}.{imported}")
                if m.group(1) == "tf1compat" and imported in PUBLIC_MODULES:
                    names.update(f"tf1compat.{imported}.{attribute}" for attribute in re.findall(
                        rf"(?<![\w/.]){imported}\.([A-Za-z_]\w*)\b(?!\.py)", text))
    return sorted(names)


def _resolve(dotted):
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            value = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for attribute in parts[cut:]:
            value = getattr(value, attribute)
        return value
    raise ModuleNotFoundError(dotted)


@pytest.mark.tf
def test_every_name_the_docs_use_imports_as_they_show_it():
    names = _documented_names()
    assert "tf1compat.tfrecord.write_sharded" in names and "tf1compat.testing" in names
    for name in names:
        assert _resolve(name) is not None, name


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


@pytest.mark.tf
@pytest.mark.slow
def test_compare_takes_the_public_imagefolder_get_split(tmp_path, capsys):
    from PIL import Image

    from tf1compat import cli, imagefolder

    rng = np.random.default_rng(5)
    for label in ("cats", "dogs"):
        (tmp_path / "photos" / label).mkdir(parents=True)
        for i in range(3):
            pixels = rng.integers(0, 256, (4 + i, 5, 3), dtype=np.uint8)
            Image.fromarray(pixels).save(tmp_path / "photos" / label / f"{i}.png")
    imagefolder.convert(tmp_path / "photos", tmp_path / "out", name="pets",
                        validation_fraction=0, workers=0)
    assert cli.main(["compare", "--dataset", "tf1compat.imagefolder:get_split",
                     "--dataset-dir", str(tmp_path / "out")]) == 0
    assert "EQUAL" in capsys.readouterr().out
