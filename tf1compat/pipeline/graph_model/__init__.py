"""One model of a TF1 input graph, used by every wing that reads one.

``op_types``: what tf1compat assumes about TensorFlow's graphs (op types, input
positions and attribute names with an accessor each, error message texts), TF-free;
``structure``: how ops connect (GraphDef input names, the one walk, the one
fixpoint), TF-free; ``readers``: one spec per TF1 reader op type (its settings, its
records as tf.data, its key format, a Python record iterator for locating damage);
``index``: the per-graph index of queues, their runners and enqueue ops, the walk
upstream through them, and ``notes``, the record of what tf1compat did to the graph;
``varying`` and ``cond_branches``: which ops vary, a cond as one of its branches;
``op_seeds``: ops built without moving TF1's op-level seed counter; ``service_rpc``:
the tf.data service dispatcher's gRPC methods tf1compat asks itself (TF-free). Each
assumption is checked by a contract test in ``tests/test_graph_model.py``
(``service_rpc``'s in ``tests/test_data_service.py``, against TensorFlow's own servers).
"""
