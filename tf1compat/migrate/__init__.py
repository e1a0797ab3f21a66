"""From queue pipelines to tf.data, with proof.

``tfdata``: a slim dataset as ``tf.data``; ``comparison`` (with
``comparison_report`` and ``example_stream``): two pipelines compared example by
example; ``testing``: the comparison as a pytest assertion (``tf1compat.testing``).
"""
