"""TF1's op-level seeds: in a graph with a seed, a random op built without a seed of its
own takes the next value of a per-graph counter (``tf.compat.v1.set_random_seed``'s
rule; TensorFlow keeps the counter in its private ``random_seed`` module).

:func:`op_seeds_kept` builds ops without moving that counter, so ops tf1compat adds to a
program's graph leave the seeds of the program's later ops as they would be without
them. ``tests/test_graph_model.py`` checks the rule against TensorFlow.
"""

import contextlib
import importlib
from collections.abc import Iterator

import tf1compat._tf  # noqa: F401  (TensorFlow loads quietly before its private module)
from tf1compat._typing import Graph

__all__ = ["op_seeds_kept"]

_RANDOM_SEED = importlib.import_module("tensorflow.python.framework.random_seed")


@contextlib.contextmanager
def op_seeds_kept(graph: Graph) -> Iterator[None]:
    """Ops built in the block take op-level seeds without moving the counter ``graph``'s
    later ops take theirs from."""
    counters = _RANDOM_SEED._graph_to_seed_dict
    saved = counters.get(graph)
    try:
        yield
    finally:
        if saved is None:
            counters.pop(graph, None)
        else:
            counters[graph] = saved
