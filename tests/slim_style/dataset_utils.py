"""slim's ``dataset_utils`` label-file helpers, in its style: ``labels.txt`` holds one
``id:name`` line per class."""

import os

LABELS_FILENAME = "labels.txt"


def has_labels(dataset_dir, filename=LABELS_FILENAME):
    return os.path.exists(os.path.join(dataset_dir, filename))


def read_label_file(dataset_dir, filename=LABELS_FILENAME):
    with open(os.path.join(dataset_dir, filename), "rb") as f:
        lines = f.read().decode().split("\n")
    labels_to_class_names = {}
    for line in filter(None, lines):
        index = line.index(":")
        labels_to_class_names[int(line[:index])] = line[index + 1:]
    return labels_to_class_names
