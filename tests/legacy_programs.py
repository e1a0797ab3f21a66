"""Helpers of the run-mode tests: TF1-era programs written to disk and run by
``tf1compat run`` in a subprocess, and MNIST's idx files."""

import gzip
import os
import struct
import subprocess
import sys
import textwrap

import numpy as np


def write_program(folder, name, source):
    """``source`` (dedented) as ``folder/name``; returns its path."""
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(source))
    return path


def tf1compat_run(*args, cwd, timeout=180):
    """``python -m tf1compat run ARGS`` in ``cwd``; returns the CompletedProcess."""
    return subprocess.run([sys.executable, "-m", "tf1compat", "run", *map(str, args)],
                          cwd=cwd, capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})


def write_idx(path, magic, array):
    """``array`` (as uint8) as a gzipped idx file: the magic, then big-endian sizes."""
    header = struct.pack(f">{1 + array.ndim}I", magic, *array.shape)
    with gzip.open(path, "wb") as f:
        f.write(header + np.asarray(array).astype(np.uint8).tobytes())
