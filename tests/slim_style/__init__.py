"""Dataset modules written the way tf-slim's ``datasets/`` modules are (``flowers.py``,
``cifar10.py``, ``dataset_utils.py``): fixed file patterns, ``SPLITS_TO_SIZES``, the
labels file read by its own helper. The tests run them on the converters' output to
check that tf1compat writes what slim's own readers find."""
