"""Conversion of datasets to TFRecords as plans of shard tasks, run locally or on a
distributed engine. Never imports TensorFlow in its planning and workers.
"""
