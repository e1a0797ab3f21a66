"""slim's ``labels.txt``: one ``id:name`` line per class, written by the converters and
read by the ``get_split`` functions."""

import io
from collections.abc import Iterable

from tf1compat.errors import DatasetFormatError
from tf1compat.records import _fs


def labels_file_text(names: Iterable[str]) -> str:
    """The text of a labels file: ``0:first``, ``1:second``, ... one per line."""
    return "".join(f"{i}:{name}\n" for i, name in enumerate(names))


def read_labels_file(dataset_dir: str, file_name: str = "labels.txt") -> dict[int, str] | None:
    """``{id: name}`` from ``dataset_dir/file_name`` (a folder or a URL), or None when
    there is none."""
    path = _fs.join(dataset_dir, file_name)
    if not _fs.isfile(path):
        return None
    labels_to_names: dict[int, str] = {}
    with _fs.open_file(path, "rb") as f:
        lines = io.TextIOWrapper(f, encoding="utf-8",    # names of folders: any bytes
                                 errors="surrogateescape").readlines()
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        index, sep, name = line.rstrip("\n").partition(":")
        if not sep or not index.isdigit():
            raise DatasetFormatError(f"{path}: line {number}: expected 'id:name', got {line!r}",
                                     path=path, index=number - 1, expected="id:name")
        labels_to_names[int(index)] = name
    return labels_to_names
