"""NumPy 1.x for a TF1 program's own files: the names NumPy 1.20-2.4 removed,
meaning what they meant, on a view of today's NumPy.

:func:`numpy_view` is what run mode gives the program's ``import numpy``: a module
answering from :data:`REMOVED_NAMES` first, then from the installed NumPy (its
functions, types and submodules are NumPy's own objects). Libraries import NumPy
itself and see it as installed. ``np.bool`` and ``np.long`` are NumPy 2's
(:data:`NUMPY2_NAMES`: both exist again there; as dtypes they equal NumPy 1.x's
``bool`` and ``int``), on NumPy 1.26 too, which has neither.

Methods NumPy removed from arrays (``tostring``, ``itemset``, ``ptp``,
``newbyteorder``) cannot be put back on a C type; :data:`REMOVED_METHODS` are
functions ``f(obj, *args)`` that do what the method did when ``obj`` is a NumPy
array or scalar, and call ``obj``'s own method otherwise. The program's modules
call them through a path-scoped rewrite (:mod:`tf1compat.v1.rewrite`).
"""

import dataclasses
import math
import pickle
import warnings

import numpy as np

from tf1compat.v1.proxy import ProxyModule

__all__ = ["Removed", "NAME_ROWS", "METHOD_ROWS", "REMOVED_NAMES", "NUMPY2_NAMES",
           "REMOVED_METHODS", "numpy_view", "resolver", "asscalar", "asfarray", "in1d", "msort",
           "fromstring"]


def asscalar(a):
    """NumPy 1.x's ``np.asscalar``: ``a.item()``."""
    return a.item()


def asfarray(a, dtype=np.double):
    """NumPy 1.x's ``np.asfarray``: ``a`` as an array of ``dtype``, float64 when
    ``dtype`` is not a float or complex type."""
    if not np.issubdtype(dtype, np.inexact):
        dtype = np.float64
    return np.asarray(a, dtype=dtype)


def in1d(ar1, ar2, assume_unique=False, invert=False, *, kind=None):
    """NumPy 1.x's ``np.in1d``: ``np.isin`` over the flattened ``ar1``."""
    return np.isin(ar1, ar2, assume_unique=assume_unique, invert=invert, kind=kind).ravel()


def msort(a):
    """NumPy 1.x's ``np.msort``: a copy of ``a`` sorted along its first axis."""
    b = np.array(a, subok=True, copy=True)
    b.sort(0)
    return b


def fromstring(string, dtype=float, count=-1, *, sep="", like=None):
    """``np.fromstring``; its binary mode (``sep=""``), which NumPy 2.3 removed, is
    a copy of ``np.frombuffer`` as in NumPy 1.x (text is read as UTF-8)."""
    if sep:
        return np.fromstring(string, dtype=dtype, count=count, sep=sep, like=like)
    if isinstance(string, str):
        string = string.encode("utf-8")
    return np.frombuffer(string, dtype=dtype, count=count).copy()


# np.trapz under its NumPy 2.0 name; NumPy 1.26 has only the old one (and keeps it)
_TRAPEZOID = getattr(np, "trapezoid", None) or np.trapz


@dataclasses.dataclass(frozen=True)
class Removed:
    """One name NumPy removed: ``value`` is what run mode gives a program for it (what
    it meant in NumPy 1.x); ``source`` is how ``tf1compat port`` writes it for NumPy 2,
    a Python expression where ``NP`` is the program's ``numpy``, ``SELF`` a method
    call's object, ``ARGS`` the call's arguments and ``ARG0`` its only argument (a form
    with ``ARGS`` or ``ARG0`` serves calls only). None, or a use the form does not fit:
    the port calls ``value``, run mode's own function, written beside the program."""

    value: object
    source: str | None = None


NAME_ROWS = {
    # the builtin aliases (removed in 1.24)
    "int": Removed(int, "int"), "float": Removed(float, "float"),
    "complex": Removed(complex, "complex"), "object": Removed(object, "object"),
    "str": Removed(str, "str"), "unicode": Removed(str, "str"),
    # scalar type aliases (removed in 1.24 and 2.0)
    "float_": Removed(np.float64, "NP.float64"),
    "complex_": Removed(np.complex128, "NP.complex128"),
    "string_": Removed(np.bytes_, "NP.bytes_"), "unicode_": Removed(np.str_, "NP.str_"),
    "int0": Removed(np.intp, "NP.intp"), "uint0": Removed(np.uintp, "NP.uintp"),
    "bool8": Removed(np.bool_, "NP.bool_"), "object0": Removed(np.object_, "NP.object_"),
    "str0": Removed(np.str_, "NP.str_"), "bytes0": Removed(np.bytes_, "NP.bytes_"),
    "void0": Removed(np.void, "NP.void"), "longfloat": Removed(np.longdouble, "NP.longdouble"),
    "singlecomplex": Removed(np.complex64, "NP.complex64"),
    "cfloat": Removed(np.complex128, "NP.complex128"),
    "longcomplex": Removed(np.clongdouble, "NP.clongdouble"),
    "clongfloat": Removed(np.clongdouble, "NP.clongdouble"),
    # constants (removed in 2.0)
    "Inf": Removed(np.inf, "NP.inf"), "Infinity": Removed(np.inf, "NP.inf"),
    "infty": Removed(np.inf, "NP.inf"), "PINF": Removed(np.inf, "NP.inf"),
    "NINF": Removed(-np.inf, "-NP.inf"), "NaN": Removed(np.nan, "NP.nan"),
    "NAN": Removed(np.nan, "NP.nan"), "PZERO": Removed(0.0, "0.0"), "NZERO": Removed(-0.0, "-0.0"),
    # functions (removed in 1.23-2.4)
    "alltrue": Removed(np.all, "NP.all"), "sometrue": Removed(np.any, "NP.any"),
    "product": Removed(np.prod, "NP.prod"), "cumproduct": Removed(np.cumprod, "NP.cumprod"),
    "round_": Removed(np.round, "NP.round"), "asscalar": Removed(asscalar, "ARG0.item()"),
    "mat": Removed(np.asmatrix, "NP.asmatrix"), "asfarray": Removed(asfarray),
    "in1d": Removed(in1d, "NP.isin(ARGS).ravel()"), "trapz": Removed(_TRAPEZOID, "NP.trapezoid"),
    "msort": Removed(msort, "NP.sort(ARG0, axis=0)"), "fromstring": Removed(fromstring),
    "rank": Removed(np.ndim, "NP.ndim"), "loads": Removed(pickle.loads, "pickle.loads"),
    "typeDict": Removed(np.sctypeDict, "NP.sctypeDict"),
    # modules NumPy re-exported (removed in 1.25 and 2.0)
    "math": Removed(math, "math"), "warnings": Removed(warnings, "warnings"),
}
REMOVED_NAMES = {name: row.value for name, row in NAME_ROWS.items()}


# the names NumPy 1.24 removed and 2.0 brought back as NumPy types: NumPy 2's meaning
NUMPY2_NAMES = {"bool": np.bool_, "long": np.dtype("long").type}


def _is_numpy(obj):
    return isinstance(obj, (np.ndarray, np.generic))


def tostring(obj, *args, **kwargs):
    """``obj.tostring(...)``: ``tobytes`` for NumPy arrays and scalars (removed in 2.3)."""
    return obj.tobytes(*args, **kwargs) if _is_numpy(obj) else obj.tostring(*args, **kwargs)


def itemset(obj, *args):
    """``obj.itemset(...)`` (removed from arrays in 2.0): set one element to a scalar."""
    if not isinstance(obj, np.ndarray):
        return obj.itemset(*args)
    if len(args) == 1:
        if obj.size != 1:
            raise ValueError("itemset: can only convert an array of size 1 to a Python scalar")
        obj.flat[0] = args[0]
    elif len(args) == 2:
        index, value = args
        if isinstance(index, tuple):
            obj[index] = value
        else:
            obj.flat[index] = value
    else:
        raise TypeError(f"itemset expects an index and a value, or a value; got {len(args)} "
                        "arguments")
    return None


def ptp(obj, *args, **kwargs):
    """``obj.ptp(...)`` (removed from arrays in 2.0): ``np.ptp(obj, ...)``."""
    return np.ptp(obj, *args, **kwargs) if _is_numpy(obj) else obj.ptp(*args, **kwargs)


def newbyteorder(obj, new_order="S"):
    """``obj.newbyteorder(...)`` (removed from arrays in 2.0): the same data viewed
    with the byte order changed."""
    if not _is_numpy(obj):
        return obj.newbyteorder(new_order)
    return obj.view(obj.dtype.newbyteorder(new_order))


# NumPy 1.x's array methods (rows as NAME_ROWS')
METHOD_ROWS = {"tostring": Removed(tostring, "SELF.tobytes(ARGS)"), "itemset": Removed(itemset),
               "ptp": Removed(ptp, "NP.ptp(SELF, ARGS)"), "newbyteorder": Removed(newbyteorder)}
REMOVED_METHODS = {name: row.value for name, row in METHOD_ROWS.items()}


def numpy_view():
    """A module that is NumPy plus :data:`REMOVED_NAMES` and :data:`NUMPY2_NAMES` (a new
    one on each call)."""
    return ProxyModule("numpy", np, attributes={**NUMPY2_NAMES, **REMOVED_NAMES})


def resolver():
    """For the import hook: ``"numpy"`` -> a view (one per resolver), other
    ``numpy.*`` names -> None (NumPy's own submodules)."""
    view = numpy_view()
    return lambda dotted: view if dotted == "numpy" else None
