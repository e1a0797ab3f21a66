"""Conversion of datasets to TFRecords as plans of shard tasks, run locally or on
Apache Beam. Never imports TensorFlow in its planning and workers.

- the plan and its pieces (:mod:`tf1compat.records.sharding`, re-exported here):
  :class:`ShardTask`, :func:`build_tasks`, :func:`write_shard`, :class:`ShardResult`,
  :class:`SkippedInput`, :func:`plan_key`;
- the runners and the all-or-nothing writing of a plan (:mod:`.runners`):
  :class:`LocalRunner`, :class:`BeamRunner`, :func:`build_runner`, :func:`write_shards`;
- :class:`WriteShards`, the Beam ``PTransform`` for your own pipelines (:mod:`.beam`,
  which imports Beam: the ``tf1compat[beam]`` extra);
- the image-folder converter and its slim split: :mod:`.imagefolder`
  (``tf1compat.imagefolder``).
"""

from tf1compat.convert.runners import BeamRunner, build_runner, write_shards
from tf1compat.records.sharding import (
    LocalRunner,
    ShardResult,
    ShardTask,
    SkippedInput,
    build_tasks,
    plan_key,
    write_shard,
)

__all__ = ["ShardTask", "ShardResult", "SkippedInput", "build_tasks", "plan_key",
           "write_shard", "LocalRunner", "BeamRunner", "build_runner", "write_shards",
           "WriteShards"]


def __getattr__(name):
    if name == "WriteShards":       # importing Beam takes seconds: only when asked for
        from tf1compat.convert import beam
        return beam.WriteShards
    raise AttributeError(f"module 'tf1compat.convert' has no attribute {name!r}")
