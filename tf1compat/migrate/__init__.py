"""From queue pipelines to tf.data, with proof.

``tfdata``: ``to_tf_data`` (a slim dataset or files as ``tf.data``, or fetches
lowered by ``lowering``: ``lowering.graph_reader`` reads the graph into the steps
of ``lowering.plan``, ``lowering.graph_function`` copies per-example ops, and
``lowering.batch_then_parse`` moves them behind the batch); ``comparison`` (with
``comparison.report`` and ``comparison.example_stream``): two pipelines compared
example by example; ``testing``: the comparison as a pytest assertion
(``tf1compat.testing``); ``service``: a lowered pipeline run on a tf.data service
cluster, whose servers ``service_servers`` starts.
"""
