"""From queue pipelines to tf.data, with proof.

``tfdata``: ``to_tf_data`` (a slim dataset as ``tf.data``, or fetches lowered by
``lowering``, with ``lowering_graph``, ``lowering_plan``, ``lowering_vectorize``
and ``graph_function``); ``comparison`` (with ``comparison_report`` and
``example_stream``): two pipelines compared example by example; ``testing``: the
comparison as a pytest assertion (``tf1compat.testing``).
"""
