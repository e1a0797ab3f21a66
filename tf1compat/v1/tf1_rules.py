"""TF 1.x's rules that TensorFlow 2 tightened, for run mode's namespace: integral
floats as dimensions, and the version TF1 programs check.

TF 1.x built shapes with ``Dimension(int(value))`` and refused only a value that
changed (``Ambiguous dimension: 3.5``), so ``tf.get_variable("w", [3, 3, c / 2, 8])``
ran; TensorFlow 2 takes only values with ``__index__``. Run mode wraps the TF1
entry points whose shapes went through ``TensorShape`` (:data:`TF_FLOAT_DIMENSIONS`,
:data:`SLIM_FLOAT_DIMENSIONS`): a list or tuple argument's integral floats become
ints before TensorFlow sees them. What TF 1.x refused stays refused: shapes it
converted to an int32 tensor (``tf.reshape``, ``tf.fill``, ``tf.random_normal``,
``tf.truncated_normal``: "DataType float32 not in list of allowed values") and
scalar strides or sizes. ``tf.zeros``, ``tf.ones`` and ``tf.constant`` already
take floats on TensorFlow 2. TensorFlow's own modules are not touched.

:data:`TF1_VERSION` is what run mode's ``tf.__version__``, ``tf.VERSION`` and
``tf.version.VERSION`` say (:data:`VERSION_NAMES`; ``tf1compat port`` judges a
program's version checks by it); :func:`build_version_module` keeps the installed
release as ``tf.version.TF2_VERSION``.
"""

import functools
import inspect
import numbers

from tf1compat._tf import tf, v1
from tf1compat.v1.proxy import ProxyModule, tf1_name

__all__ = ["TF1_VERSION", "VERSION_ATTRIBUTES", "VERSION_NAMES", "TF_FLOAT_DIMENSIONS",
           "SLIM_FLOAT_DIMENSIONS", "integral_dimensions", "accepting_float_dimensions",
           "tf_functions", "slim_functions", "build_version_module"]

TF1_VERSION = "1.15.5"  # the last TensorFlow 1 release
# tensorflow's attributes that say TF1_VERSION in run mode, and all its names that do
VERSION_ATTRIBUTES = ("__version__", "VERSION")
VERSION_NAMES = frozenset({*(f"tensorflow.{name}" for name in VERSION_ATTRIBUTES),
                           "tensorflow.version.VERSION"})

# tf.<name> -> its arguments that TF 1.x read as a TensorShape.
TF_FLOAT_DIMENSIONS = {
    "get_variable": ("shape",),
    "get_local_variable": ("shape",),
    "placeholder": ("shape",),
    "placeholder_with_default": ("shape",),
}
# tf-slim layers and variables (tf.contrib.slim, .layers, .framework) -> their
# arguments that TF 1.x's layers kept as given and built a weight's TensorShape or
# an op's int attribute from.
SLIM_FLOAT_DIMENSIONS = {
    **dict.fromkeys(("conv2d", "convolution2d", "convolution", "conv3d", "convolution3d",
                     "conv2d_transpose", "convolution2d_transpose", "conv3d_transpose",
                     "convolution3d_transpose", "separable_conv2d", "separable_convolution2d",
                     "max_pool2d", "avg_pool2d", "max_pool3d", "avg_pool3d"),
                    ("kernel_size", "stride")),
    "variable": ("shape",),
    "model_variable": ("shape",),
}


def _dimension(value, api, argument, shape):
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or \
            isinstance(value, numbers.Integral):
        return value
    if value != int(value):
        raise ValueError(f"{api}: {argument}={shape!r}: Ambiguous dimension: {value} (TF 1.x "
                         "took a float dimension only when it was a whole number)")
    return int(value)


def integral_dimensions(shape, api, argument):
    """``shape`` with its integral float entries as ints when it is a list or tuple;
    anything else (a TensorShape, a tensor, None, a scalar) unchanged. A float
    entry with a fraction raises ValueError naming ``api`` and ``argument``."""
    if not isinstance(shape, (list, tuple)):
        return shape
    dims = [_dimension(value, api, argument, shape) for value in shape]
    return type(shape)(dims) if isinstance(shape, tuple) else dims


def accepting_float_dimensions(function, api, arguments):
    """``function`` taking integral floats in the list arguments ``arguments``;
    ``api`` names it in errors (e.g. ``tf.get_variable``). The wrapper keeps the
    function's attributes (tf-slim's ``arg_scope`` key among them)."""
    parameters = list(inspect.signature(function).parameters)
    positions = {argument: parameters.index(argument) for argument in arguments}

    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        args = list(args)
        for argument, position in positions.items():
            if position < len(args):
                args[position] = integral_dimensions(args[position], api, argument)
            elif argument in kwargs:
                kwargs[argument] = integral_dimensions(kwargs[argument], api, argument)
        return function(*args, **kwargs)

    return wrapper


def tf_functions():
    """Run mode's ``tf.<name>`` for each entry of :data:`TF_FLOAT_DIMENSIONS`."""
    return {name: accepting_float_dimensions(getattr(v1, name), f"tf.{name}", arguments)
            for name, arguments in TF_FLOAT_DIMENSIONS.items()}


def slim_functions(module, module_name):
    """The functions of ``module`` (a tf-slim module shown as ``module_name``, e.g.
    ``tensorflow.contrib.slim``) named in :data:`SLIM_FLOAT_DIMENSIONS`, wrapped."""
    return {name: accepting_float_dimensions(getattr(module, name), tf1_name(module_name, name),
                                             arguments)
            for name, arguments in SLIM_FLOAT_DIMENSIONS.items() if hasattr(module, name)}


def build_version_module():
    """Run mode's ``tensorflow.version``: ``VERSION`` is :data:`TF1_VERSION`,
    ``TF2_VERSION`` the installed TensorFlow's; the rest is TensorFlow's."""
    return ProxyModule("tensorflow.version", v1.version,
                       attributes={"VERSION": TF1_VERSION, "TF2_VERSION": tf.__version__})
