"""One model of a TF1 input graph, used by every wing that reads one.

``op_types``: what tf1compat assumes about TensorFlow's graphs (op types, input
positions, attribute names, error message texts), TF-free; ``readers``: one spec
per TF1 reader op type (its settings, its records as tf.data, its key format, a
Python record iterator for locating damage); ``index``: the per-graph index of
queues, their runners and enqueue ops, and the walks over it; ``op_seeds``: ops
built without moving TF1's op-level seed counter. Each assumption is
checked by a contract test in ``tests/test_graph_model.py``.
"""
