"""SciPy's image functions (``scipy.misc.imread``, ``imsave``, ``imresize``,
removed in SciPy 1.2) for a TF1 program's own files, through Pillow.

They behave as SciPy 1.1's: ``imread`` gives palette images as RGB(A) and 1-bit
images as 8-bit; ``imsave`` and ``imresize`` go through :func:`toimage`, which
scales any array that is not uint8 to 0-255 by its own minimum and maximum
(:func:`bytescale`) -- the behaviour TF1-era programs were written against.

:func:`scipy_view` is what run mode gives the program's ``import scipy`` /
``from scipy import misc``: SciPy itself when installed, with a ``misc`` that adds
these functions to SciPy's own ``scipy.misc`` (or stands alone where SciPy no
longer has one); when SciPy is not installed, a ``scipy`` holding only that
``misc``. Libraries import SciPy (or fail to) as installed. Pillow is needed to
call the functions, not to import them.
"""

import importlib

import numpy as np

from tf1compat.v1.proxy import ProxyModule

__all__ = ["bytescale", "toimage", "fromimage", "imread", "imsave", "imresize",
           "IMAGE_FUNCTIONS", "scipy_view", "resolver"]

_RESAMPLING = {"nearest": "NEAREST", "lanczos": "LANCZOS", "bilinear": "BILINEAR",
               "bicubic": "BICUBIC", "cubic": "BICUBIC"}


def _pillow():
    try:
        from PIL import Image
    except ImportError as e:
        raise ImportError("scipy.misc's image functions need Pillow in run mode: "
                          "pip install pillow") from e
    return Image


def bytescale(data, cmin=None, cmax=None, high=255, low=0):
    """``data`` as uint8, ``cmin``..``cmax`` (default: its minimum and maximum)
    scaled to ``low``..``high``; uint8 data is returned as it is."""
    data = np.asarray(data)
    if data.dtype == np.uint8:
        return data
    if high > 255 or low < 0 or high < low:
        raise ValueError(f"bytescale: need 0 <= low <= high <= 255, got low={low}, "
                         f"high={high}")
    cmin = data.min() if cmin is None else cmin
    cmax = data.max() if cmax is None else cmax
    cscale = cmax - cmin
    if cscale < 0:
        raise ValueError(f"bytescale: cmax ({cmax}) should be larger than cmin ({cmin})")
    scale = float(high - low) / (cscale or 1)
    return (((data - cmin) * scale + low).clip(low, high) + 0.5).astype(np.uint8)


def _channel_axis(shape, channel_axis):
    if channel_axis is not None:
        axis = channel_axis
    elif 3 in shape:
        axis = shape.index(3)
    elif 4 in shape:
        axis = shape.index(4)
    else:
        raise ValueError(f"toimage: could not find the channel axis (3 or 4) in shape "
                         f"{tuple(shape)}")
    if shape[axis] not in (3, 4):
        raise ValueError(f"toimage: channel axis {axis} has {shape[axis]} entries, "
                         "expected 3 or 4")
    return axis


def _gray_image(data, high, low, cmin, cmax, pal, mode):
    Image = _pillow()
    size = (data.shape[1], data.shape[0])
    if mode == "F":
        return Image.frombytes("F", size, data.astype(np.float32).tobytes())
    if mode in (None, "L", "P"):
        image = Image.frombytes("L", size, bytescale(data, cmin, cmax, high, low).tobytes())
        if pal is None and mode == "P":
            pal = np.arange(256, dtype=np.uint8)[:, None] * np.ones(3, dtype=np.uint8)
        if pal is not None:
            image.putpalette(np.asarray(pal, dtype=np.uint8).tobytes())
        return image
    if mode == "1":
        return Image.frombytes("1", size, np.packbits(data > high, axis=1).tobytes())
    if mode == "I":
        cmin = data.min() if cmin is None else cmin
        cmax = data.max() if cmax is None else cmax
        scaled = (data * 1.0 - cmin) * (high - low) / (cmax - cmin) + low
        return Image.frombytes("I", size, scaled.astype(np.int32).tobytes())
    raise ValueError(f"toimage: mode {mode!r} does not fit a 2-D array; expected one of "
                     "None, 'L', 'P', 'F', 'I', '1'")


def toimage(arr, high=255, low=0, cmin=None, cmax=None, pal=None, mode=None,
            channel_axis=None):
    """A Pillow image of a 2-D array (gray) or a 3-D one with 3 or 4 channels (RGB,
    RGBA, YCbCr, CMYK), as SciPy 1.1's ``scipy.misc.toimage``."""
    data = np.asarray(arr)
    if np.iscomplexobj(data):
        raise ValueError("toimage: cannot convert a complex-valued array")
    shape = list(data.shape)
    if len(shape) == 2:
        return _gray_image(data, high, low, cmin, cmax, pal, mode)
    if len(shape) != 3 or not (3 in shape or 4 in shape):
        raise ValueError(f"toimage: an array of shape {tuple(shape)} fits no image mode; "
                         "expected 2-D, or 3-D with a channel axis of 3 or 4")
    axis = _channel_axis(shape, channel_axis)
    channels = shape[axis]
    mode = mode or ("RGB" if channels == 3 else "RGBA")
    wanted = {"RGB": 3, "YCbCr": 3, "RGBA": 4, "CMYK": 4}.get(mode)
    if wanted != channels:
        raise ValueError(f"toimage: mode {mode!r} does not fit {channels} channels; expected "
                         "'RGB' or 'YCbCr' for 3, 'RGBA' or 'CMYK' for 4")
    pixels = np.moveaxis(bytescale(data, cmin, cmax, high, low), axis, 2)
    return _pillow().frombytes(mode, (pixels.shape[1], pixels.shape[0]),
                               np.ascontiguousarray(pixels).tobytes())


def fromimage(im, flatten=False, mode=None):
    """An array of a Pillow image: converted to ``mode`` if given, palette images to
    RGB(A), 1-bit to 8-bit; ``flatten`` gives a float32 gray array."""
    Image = _pillow()
    if not isinstance(im, Image.Image):
        raise TypeError(f"fromimage: expected a PIL image, got {type(im).__name__}")
    if mode is not None and mode != im.mode:
        im = im.convert(mode)
    elif mode is None and im.mode == "P":
        im = im.convert("RGBA" if "transparency" in im.info else "RGB")
    if flatten:
        im = im.convert("F")
    elif im.mode == "1":
        im = im.convert("L")
    return np.array(im)


def imread(name, flatten=False, mode=None):
    """The image file ``name`` (a path or file object) as an array (:func:`fromimage`)."""
    with _pillow().open(name) as im:
        return fromimage(im, flatten=flatten, mode=mode)


def imsave(name, arr, format=None):  # noqa: A002 - SciPy's argument name
    """Write ``arr`` as an image file; arrays not of uint8 are scaled by their
    minimum and maximum first (:func:`toimage`)."""
    image = toimage(arr, channel_axis=2)
    if format is None:
        image.save(name)
    else:
        image.save(name, format)


def imresize(arr, size, interp="bilinear", mode=None):
    """``arr`` resized as a uint8 image: ``size`` an int (percent), a float
    (fraction) or ``(rows, cols)``; ``interp`` nearest, lanczos, bilinear, bicubic
    or cubic."""
    if interp not in _RESAMPLING:
        raise ValueError(f"imresize: interp={interp!r}; expected one of {sorted(_RESAMPLING)}")
    image = toimage(arr, mode=mode)
    if np.issubdtype(type(size), np.signedinteger):
        size = tuple((np.array(image.size) * (size / 100.0)).astype(int))
    elif np.issubdtype(type(size), np.floating):
        size = tuple((np.array(image.size) * size).astype(int))
    else:
        size = (size[1], size[0])
    resample = getattr(_pillow().Resampling, _RESAMPLING[interp])
    return fromimage(image.resize(size, resample=resample))


IMAGE_FUNCTIONS = {"imread": imread, "imsave": imsave, "imresize": imresize,
                   "toimage": toimage, "fromimage": fromimage, "bytescale": bytescale}


def _installed(name):
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


def scipy_view():
    """``(scipy, scipy.misc)`` for the program: SciPy (if installed) with ``misc``
    holding :data:`IMAGE_FUNCTIONS` over SciPy's own ``scipy.misc`` (if any)."""
    scipy = _installed("scipy")
    misc = ProxyModule("scipy.misc", scipy and _installed("scipy.misc"),
                       attributes=IMAGE_FUNCTIONS,
                       doc="scipy.misc in tf1compat run mode: SciPy 1.1's image functions "
                           "through Pillow")
    top = ProxyModule("scipy", scipy, attributes={"misc": misc},
                      doc=None if scipy else "SciPy is not installed: tf1compat run mode "
                                             "gives only scipy.misc's image functions")
    return top, misc


def resolver():
    """For the import hook: ``"scipy"`` and ``"scipy.misc"`` -> :func:`scipy_view`'s
    modules (built on the first such import), other ``scipy.*`` names -> None."""
    views = {}

    def resolve(dotted):
        if dotted not in ("scipy", "scipy.misc"):
            return None
        if not views:
            views["scipy"], views["scipy.misc"] = scipy_view()
        return views[dotted]

    return resolve
