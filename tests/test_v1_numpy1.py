"""NumPy 1.x's removed names and array methods, as run mode gives the program's files."""

import sys
import warnings

import numpy as np
import pytest

from tf1compat.v1 import numpy1, rewrite

pytestmark = pytest.mark.tf  # tf1compat.v1 loads TensorFlow


@pytest.mark.skipif(np.lib.NumpyVersion(np.__version__) < "2.4.0",
                    reason="names NumPy 2.4 removed: an older NumPy (the lowest tested) has some")
def test_each_removed_name_is_gone_from_installed_numpy():
    for name in set(numpy1.REMOVED_NAMES) - {"fromstring"}:  # text mode remains
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert not hasattr(np, name), name
    with pytest.raises(ValueError, match="binary mode of fromstring is removed"):
        np.fromstring(b"\x01", dtype=np.uint8)


def test_view_means_what_numpy_1_meant():
    view = numpy1.numpy_view()
    assert (view.int, view.float, view.object, view.str, view.unicode, view.complex) == (
        int, float, object, str, str, complex)
    assert view.linspace(0, 9, 4).astype(view.int).dtype == np.dtype(int)
    assert (view.float_, view.complex_, view.string_, view.unicode_) == (
        np.float64, np.complex128, np.bytes_, np.str_)
    assert (view.int0, view.bool8, view.object0) == (np.intp, np.bool_, np.object_)
    assert view.asscalar(np.array([3.5])) == 3.5 and type(view.asscalar(np.int32(2))) is int
    assert (view.Inf, view.NINF, view.PINF, view.infty) == (np.inf, -np.inf, np.inf, np.inf)
    assert np.isnan(view.NaN) and np.signbit(view.NZERO)
    table = np.array([[1, 2], [3, 4]])
    assert view.product(table) == 24 and list(view.cumproduct([1, 2, 3])) == [1, 2, 6]
    assert view.alltrue([1, 1]) and view.sometrue([0, 1]) and not view.sometrue([0, 0])
    assert view.round_(2.567, 2) == 2.57
    assert isinstance(view.mat(table), np.matrix)
    assert view.asfarray([1, 2]).dtype == np.float64
    assert view.asfarray([1], dtype=np.int32).dtype == np.float64
    assert view.asfarray([1], dtype=np.float32).dtype == np.float32
    assert view.in1d(table, [2, 3]).tolist() == [False, True, True, False]
    assert view.in1d(table, [2, 3], invert=True).tolist() == [True, False, False, True]
    assert view.trapz([1, 2, 3]) == 4.0
    assert view.msort(np.array([[3, 1], [1, 2]])).tolist() == [[1, 1], [3, 2]]
    assert view.rank(table) == 2 and view.math.pi == np.pi and view.warnings is warnings


def test_fromstring_binary_mode_copies_and_text_mode_is_numpys():
    view = numpy1.numpy_view()
    data = view.fromstring(b"\x01\x00\x02\x00", dtype="<u2")
    assert data.tolist() == [1, 2] and data.flags.writeable
    assert view.fromstring("\x05", dtype=np.uint8).tolist() == [5]
    assert view.fromstring("1, 2, 3", dtype=int, sep=",").tolist() == [1, 2, 3]
    assert view.fromstring(b"\x01\x02\x03", dtype=np.uint8, count=2).tolist() == [1, 2]


def test_view_keeps_numpy_itself_and_numpy_is_unchanged():
    random = np.random                  # NumPy 2 loads it (into vars(np)) when first asked
    names = set(vars(np))
    view = numpy1.numpy_view()
    assert view.ndarray is np.ndarray and view.random is random
    # NumPy 2's np.bool and np.long, also on NumPy 1.26, which has neither
    assert view.bool is np.bool_ and view.long is np.dtype("long").type
    assert view.long(3).dtype == np.dtype("long") and view.bool(1) is np.True_
    assert view.__version__ == np.__version__ and view.__name__ == "numpy"
    assert (view.int, view.float_) == (int, np.float64)
    assert sys.modules["numpy"] is np and set(vars(np)) == names   # nothing added to NumPy
    with pytest.raises(AttributeError, match="has no attribute 'in_1d'"):
        view.in_1d  # noqa: B018


class Legacy:
    """An object with methods of its own under the removed names."""

    def tostring(self, encoding="ascii"):
        return f"legacy:{encoding}"

    def ptp(self):
        return "own ptp"


def test_removed_methods_dispatch_on_the_type():
    a = np.arange(6, dtype="<i2").reshape(2, 3)
    assert numpy1.tostring(a) == a.tobytes() and numpy1.tostring(a, "F") == a.tobytes("F")
    assert numpy1.tostring(np.float32(1.5)) == np.float32(1.5).tobytes()
    assert numpy1.tostring(Legacy(), encoding="utf-8") == "legacy:utf-8"
    assert numpy1.ptp(a) == 5 and numpy1.ptp(a, axis=1).tolist() == [2, 2]
    assert numpy1.ptp(Legacy()) == "own ptp"
    swapped = numpy1.newbyteorder(a)
    assert swapped.dtype == np.dtype(">i2") and swapped[0, 1] == 256
    numpy1.itemset(a, 4, 40)
    numpy1.itemset(a, (0, 0), 7)
    assert a.tolist() == [[7, 1, 2], [3, 40, 5]]
    single = np.zeros(1)
    numpy1.itemset(single, 2.5)
    assert single[0] == 2.5
    with pytest.raises(ValueError, match="size 1"):
        numpy1.itemset(a, 3)


PROGRAM = '''"""A TF1-era converter's habits."""
from __future__ import annotations
import numpy as np


class Image:
    def tostring(self):
        return "own"


def encode(array):
    return array.tostring()


values = np.arange(4, dtype=np.uint8)
raw = encode(values)
own = Image().tostring()
try:
    attribute_untouched = values.ptp.__self__ is values  # NumPy 1.x: its own method
except AttributeError:
    attribute_untouched = True                           # NumPy 2: gone, as written
fail_line = 23  # the next line
values.itemset(9, 1)
'''


def test_rewrite_only_calls_of_removed_methods_keeping_lines():
    code = rewrite.compile_program(PROGRAM, "program.py")
    namespace = {"__name__": "program"}
    with pytest.raises(IndexError) as e:
        exec(code, namespace)
    assert namespace["raw"] == bytes([0, 1, 2, 3]) and namespace["own"] == "own"
    assert namespace["__doc__"] == "A TF1-era converter's habits."
    assert namespace["attribute_untouched"]  # not a call: not rewritten
    frame = next(entry for entry in e.traceback if entry.path == "program.py")
    assert frame.lineno + 1 == namespace["fail_line"]  # the line as written (0-based here)


def test_files_without_those_methods_compile_as_they_are():
    source = "x = 1\n"
    assert rewrite.compile_program(source, "p.py").co_consts == compile(
        source, "p.py", "exec").co_consts


@pytest.mark.skipif(np.lib.NumpyVersion(np.__version__) < "2.3.0",
                    reason="ndarray.tostring, whose calls it rewrites, is gone from NumPy 2.3")
def test_program_finder_rewrites_the_programs_modules_only(tmp_path, monkeypatch):
    program, library = tmp_path / "prog", tmp_path / "lib"
    for folder, name in ((program, "prog_helper"), (library, "lib_helper")):
        folder.mkdir()
        (folder / f"{name}.py").write_text(
            "import numpy as np\n\ndef raw():\n    return np.arange(3, dtype=np.uint8)"
            ".tostring()\n")
        monkeypatch.syspath_prepend(str(folder))
    finder = rewrite.ProgramFinder(lambda path: path.startswith(str(program)))
    monkeypatch.setattr(sys, "meta_path", [finder, *sys.meta_path])
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    import lib_helper
    import prog_helper

    assert prog_helper.raw() == b"\x00\x01\x02"
    with pytest.raises(AttributeError, match="tostring"):
        lib_helper.raw()
    assert not (program / "__pycache__").exists()
    assert (library / "__pycache__").exists()
    for name in ("lib_helper", "prog_helper"):
        sys.modules.pop(name)
