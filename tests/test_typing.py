"""The public API is typed, and the typed part only grows: every module that defines a
name of a public module's ``__all__`` is checked by mypy (setup.cfg's ``[mypy] files``,
strict), but those listed in NOT_TYPED_YET, a list that may only shrink."""

import configparser
import importlib
import importlib.util
import inspect
import pathlib
import subprocess
import sys

import pytest

import tf1compat

ROOT = pathlib.Path(__file__).resolve().parents[1]
# modules defining public names that mypy does not check yet; remove each one the day
# it joins [mypy] files (the test fails on a stale entry, and on a public name defined
# in a module in neither list)
NOT_TYPED_YET: set[str] = set()


def _checked_modules():
    """The dotted names of the modules in setup.cfg's ``[mypy] files``."""
    config = configparser.ConfigParser()
    config.read(ROOT / "setup.cfg", encoding="utf-8")
    files = [f.strip() for f in config["mypy"]["files"].split(",") if f.strip()]
    return {f.removesuffix(".py").removesuffix("/__init__").replace("/", ".") for f in files}


def _public_modules():
    return [tf1compat, *(importlib.import_module(f"tf1compat.{name}")
                         for name in tf1compat._MODULES)]


def _defining_modules():
    """``{module: public names it defines}`` for the functions and classes (and the
    modules) in the ``__all__`` (or, without one, the functions and classes not starting
    with ``_``) of tf1compat and of its public modules; constants are
    typed where they are assigned, wherever that is."""
    defining = {}
    for module in _public_modules():
        # a module without __all__ (errors): its public functions and classes
        names = getattr(module, "__all__", [n for n, value in vars(module).items()
                                            if not n.startswith("_")
                                            and not inspect.ismodule(value)])
        for name in names:
            value = getattr(module, name)
            if inspect.ismodule(value):
                owner = value.__name__
            elif inspect.isclass(value) or inspect.isroutine(value):
                owner = value.__module__
            else:
                continue
            if owner.startswith("tf1compat"):
                defining.setdefault(owner, set()).add(f"{module.__name__}.{name}")
    return defining


def test_the_typed_modules_exist_and_ship_their_marker():
    for module in _checked_modules():
        assert importlib.util.find_spec(module) is not None, module
    assert (ROOT / "tf1compat" / "py.typed").is_file()
    config = configparser.ConfigParser()
    config.read(ROOT / "setup.cfg", encoding="utf-8")
    assert "py.typed" in config["options.package_data"]["tf1compat"]


@pytest.mark.tf
def test_every_public_name_is_defined_in_a_typed_module():
    defining, checked = _defining_modules(), _checked_modules()
    untyped = {module: sorted(names) for module, names in defining.items()
               if module not in checked and module not in NOT_TYPED_YET}
    assert not untyped, f"public names in modules mypy does not check: {untyped}"
    stale = sorted(module for module in NOT_TYPED_YET
                   if module in checked or module not in defining)
    assert not stale, f"remove from NOT_TYPED_YET (typed now, or no longer public): {stale}"


def test_untyped_calls_are_allowed_only_into_modules_not_typed_yet():
    """A module leaves setup.cfg's ``untyped_calls_exclude`` when it joins the checked
    ones (the exclusion would hide nothing then, and is one more place to look)."""
    config = configparser.ConfigParser()
    config.read(ROOT / "setup.cfg", encoding="utf-8")
    excluded = [m.strip() for m in config["mypy"]["untyped_calls_exclude"].split(",")
                if m.strip()]
    checked = _checked_modules()
    assert excluded and len(set(excluded)) == len(excluded)
    typed = sorted(m for m in excluded if m in checked)
    assert not typed, f"typed now, remove from untyped_calls_exclude: {typed}"
    for module in excluded:
        assert importlib.util.find_spec(module) is not None, module


def test_mypy_refuses_an_unannotated_function(tmp_path):
    """The configuration is strict: a missing annotation fails the run, naming it."""
    source = tmp_path / "untyped.py"
    source.write_text("def double(x):\n    return 2 * x\n")
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", str(ROOT / "setup.cfg"),
         "--cache-dir", str(tmp_path / "cache"), str(source)],
        capture_output=True, text=True, cwd=tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "untyped.py:1: error: Function is missing a type annotation" in result.stdout
