"""``tf.train.Example`` without TensorFlow: encode a dict, decode to numpy, infer
the feature specs of existing records.

The record layer (:mod:`tf1compat.records.example`) keeps them; the files the
records live in are :mod:`tf1compat.tfrecord`.
"""

from tf1compat.records.example import (
    KINDS,
    FeatureSpec,
    FeatureStats,
    Schema,
    example_to_dict,
    infer_features,
    infer_schema,
    make_example,
)

__all__ = ["KINDS", "FeatureSpec", "FeatureStats", "Schema", "example_to_dict",
           "infer_features", "infer_schema", "make_example"]
