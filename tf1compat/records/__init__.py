"""TFRecord framing and tf.train.Example, in pure Python: this wing never imports TensorFlow.

``tfrecord`` reads, verifies, writes and shards TFRecord files; ``example``
encodes and decodes ``tf.train.Example`` and infers feature specs. Users reach
them as ``tf1compat.tfrecord`` and ``tf1compat.example``.
"""
