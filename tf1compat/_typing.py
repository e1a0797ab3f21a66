"""Type aliases the annotations of several wings share (no imports beyond the standard
library; a module at the bottom of the layers, beside :mod:`tf1compat.errors`)."""

import os
from typing import Union

__all__ = ["PathArg", "AnyPath"]

# a file or folder as callers give it: a local path or an fsspec URL (``s3://...``)
PathArg = Union[str, "os.PathLike[str]"]
# a path as error messages show it: also bytes, when the file system gave bytes
AnyPath = Union[str, bytes, "os.PathLike[str]", "os.PathLike[bytes]"]
