"""The TF1 queue API inside eager TF2, and its runtime.

``queues``: producers, readers and batching with TF1's names, validated while
the graph is built; ``session``: ``SessionIterator``, which owns the session,
coordinator and threads; ``fastpath``: batched readers; ``runner_errors``: where
a step failed; ``graph_model``: what every wing knows about a TF1 input graph;
``_validate``: the argument checks they share. The public names are on
``tf1compat`` itself.
"""
