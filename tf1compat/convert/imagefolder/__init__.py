"""Image folders (one subfolder per class) -> slim's TFRecords, and back as a slim
split: ``tf1compat.imagefolder``.

- :func:`convert` (``tf1compat convert-images``): the converter, a plan of shard tasks
  on the local or Beam runner (``_convert``; never imports TensorFlow);
- :func:`get_split`: slim's ``Dataset`` of a converted split (``_split``; imports
  TensorFlow when called);
- :func:`read_image_header`: format and size of an encoded image (``_headers``).
"""

from tf1compat.convert.imagefolder._convert import SPLITS, ImageFolderSummary, convert
from tf1compat.convert.imagefolder._headers import read_image_header
from tf1compat.convert.imagefolder._split import get_split

__all__ = ["convert", "get_split", "ImageFolderSummary", "read_image_header", "SPLITS"]
