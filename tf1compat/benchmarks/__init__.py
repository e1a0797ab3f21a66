"""Benchmarks behind ``tf1compat bench`` / ``scripts/bench``: ``reading`` (queue
pipelines vs tf.data) and ``conversion`` (CIFAR-10 converters). Each module has
``run(quick, out_dir) -> int`` that prints its table and writes it under ``out_dir``."""
