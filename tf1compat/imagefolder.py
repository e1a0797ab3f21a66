"""Image folders (one subfolder per class) to slim's TFRecords, and back as a slim
split; kept by the conversion wing (:mod:`tf1compat.convert.imagefolder`).

``import tf1compat.imagefolder`` imports no TensorFlow; :func:`get_split` does
when called.
"""

from tf1compat.convert.imagefolder import ImageFolderSummary, convert, get_split, read_image_header

__all__ = ["ImageFolderSummary", "convert", "get_split", "read_image_header"]
