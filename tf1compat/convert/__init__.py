"""Conversion of datasets to TFRecords as plans of shard tasks, run locally, on a Dask
cluster or on Apache Beam, into folders or object stores. Never imports TensorFlow in
its planning and workers.

- the plan (:mod:`.plan`): :class:`Plan`, :class:`ShardTask`, :func:`build_tasks`,
  :func:`write_shard`, :class:`ShardResult`, :class:`SkippedInput`, :func:`plan_key`,
  :func:`shard_names`;
- staging and commit, one live conversion per output folder (:mod:`.staging`; into an
  object store, :mod:`.objstore`);
- the runners (:mod:`.local`, :mod:`.runners`) and :func:`write_shards`, which runs a
  plan into an output folder, all or nothing; :func:`write_sharded` (:mod:`.sharded`,
  also ``tf1compat.tfrecord.write_sharded``);
- the Dask runner (:mod:`.dask`, the ``tf1compat[dask]`` extra, imported only for
  ``runner="dask"``);
- :class:`WriteShards`, the Beam ``PTransform`` for your own pipelines (:mod:`.beam`,
  which imports Beam: the ``tf1compat[beam]`` extra);
- the image-folder converter and its slim split: :mod:`.imagefolder`
  (``tf1compat.imagefolder``).
"""

from typing import Any

from tf1compat.convert.local import LocalRunner
from tf1compat.convert.plan import (
    Plan,
    ShardResult,
    ShardTask,
    SkippedInput,
    build_tasks,
    plan_key,
    shard_names,
    write_shard,
)
from tf1compat.convert.runners import BeamRunner, build_runner, write_shards
from tf1compat.convert.sharded import shard_paths, write_sharded

__all__ = ["Plan", "ShardTask", "ShardResult", "SkippedInput", "build_tasks", "plan_key",
           "shard_names", "write_shard", "LocalRunner", "BeamRunner", "build_runner",
           "write_shards", "write_sharded", "shard_paths", "WriteShards"]


def __getattr__(name: str) -> Any:
    if name == "WriteShards":       # importing Beam takes seconds: only when asked for
        from tf1compat.convert import beam
        return beam.WriteShards
    raise AttributeError(f"module 'tf1compat.convert' has no attribute {name!r}")
