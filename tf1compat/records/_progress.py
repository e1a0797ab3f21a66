"""Progress bars of long work: shown on a terminal, hidden in pipes and CI."""

import os
from typing import Any

from tqdm import tqdm

__all__ = ["progress_bar"]


def progress_bar(**options: Any) -> tqdm:
    """A tqdm bar that is hidden when its stream is not a terminal, unless tqdm's own
    ``TQDM_DISABLE`` environment variable decides (``--quiet`` sets it)."""
    if "TQDM_DISABLE" not in os.environ:  # passing disable would override the variable
        options.setdefault("disable", None)
    return tqdm(**options)
