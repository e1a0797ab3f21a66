"""NumPy 1.x for a TF1 program's own files: the names NumPy 1.20-2.4 removed,
meaning what they meant, on a view of today's NumPy.

:func:`numpy_view` is what run mode gives the program's ``import numpy``: a module
answering from :data:`REMOVED_NAMES` first, then from the installed NumPy (its
functions, types and submodules are NumPy's own objects). Libraries import NumPy
itself and see it as installed. ``np.bool`` and ``np.long`` are NumPy 2's (both
exist again; as dtypes they equal NumPy 1.x's ``bool`` and ``int``).

Methods NumPy removed from arrays (``tostring``, ``itemset``, ``ptp``,
``newbyteorder``) cannot be put back on a C type; :data:`REMOVED_METHODS` are
functions ``f(obj, *args)`` that do what the method did when ``obj`` is a NumPy
array or scalar, and call ``obj``'s own method otherwise. The program's modules
call them through a path-scoped rewrite (:mod:`tf1compat.v1.rewrite`).
"""

import math
import pickle
import warnings

import numpy as np

from tf1compat.v1.proxy import ProxyModule

__all__ = ["REMOVED_NAMES", "REMOVED_METHODS", "numpy_view", "resolver", "asscalar",
           "asfarray", "in1d", "msort", "fromstring"]


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


REMOVED_NAMES = {
    # the builtin aliases (removed in 1.24)
    "int": int, "float": float, "complex": complex, "object": object, "str": str,
    "unicode": str,
    # scalar type aliases (removed in 1.24 and 2.0)
    "float_": np.float64, "complex_": np.complex128, "string_": np.bytes_,
    "unicode_": np.str_, "int0": np.intp, "uint0": np.uintp, "bool8": np.bool_,
    "object0": np.object_, "str0": np.str_, "bytes0": np.bytes_, "void0": np.void,
    "longfloat": np.longdouble, "singlecomplex": np.complex64, "cfloat": np.complex128,
    "longcomplex": np.clongdouble, "clongfloat": np.clongdouble,
    # constants (removed in 2.0)
    "Inf": np.inf, "Infinity": np.inf, "infty": np.inf, "PINF": np.inf, "NINF": -np.inf,
    "NaN": np.nan, "NAN": np.nan, "PZERO": 0.0, "NZERO": -0.0,
    # functions (removed in 1.23-2.4)
    "alltrue": np.all, "sometrue": np.any, "product": np.prod, "cumproduct": np.cumprod,
    "round_": np.round, "asscalar": asscalar, "mat": np.asmatrix, "asfarray": asfarray,
    "in1d": in1d, "trapz": np.trapezoid, "msort": msort, "fromstring": fromstring,
    "rank": np.ndim, "loads": pickle.loads, "typeDict": np.sctypeDict,
    # modules NumPy re-exported (removed in 1.25 and 2.0)
    "math": math, "warnings": warnings,
}


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


REMOVED_METHODS = {"tostring": tostring, "itemset": itemset, "ptp": ptp,
                   "newbyteorder": newbyteorder}


def numpy_view():
    """A module that is NumPy plus :data:`REMOVED_NAMES` (a new one on each call)."""
    return ProxyModule("numpy", np, attributes=REMOVED_NAMES)


def resolver():
    """For the import hook: ``"numpy"`` -> a view (one per resolver), other
    ``numpy.*`` names -> None (NumPy's own submodules)."""
    view = numpy_view()
    return lambda dotted: view if dotted == "numpy" else None
