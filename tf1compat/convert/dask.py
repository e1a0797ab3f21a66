"""A Dask cluster as a runner of shard plans: the ``tf1compat[dask]`` extra, imported only
when ``runner="dask"`` is asked for.

Each :class:`~tf1compat.convert.plan.ShardTask` is one Dask task calling
``write_shard`` on a worker (tasks travel pickled by cloudpickle, so their functions may
come from a script or a notebook). ``write_shard`` writes a temporary name or a whole
object, so when a worker dies, the scheduler's rerun of its tasks elsewhere writes the
same bytes. The output must be a location every worker reaches under the same name: an
object-store URL (``s3://...``) or a shared mount.
"""

import weakref

from tf1compat.convert.plan import write_shard
from tf1compat.errors import PipelineConfigError

try:
    import distributed
except ImportError as e:
    raise ModuleNotFoundError(
        f"the Dask runner needs Dask's distributed scheduler, which is the tf1compat[dask] "
        f"extra: pip install 'tf1compat[dask]' ({e})", name="distributed") from e

CONNECT_SECONDS = 5     # how long to try to reach a scheduler given by its address


def connect(scheduler, timeout=CONNECT_SECONDS):
    """A ``distributed.Client`` of ``scheduler`` (a Client, returned as it is, or an
    address such as ``tcp://host:8786``); ``(client, owned)``. An unreachable address is
    a ``ConnectionError`` naming it, after ``timeout`` seconds at most."""
    if isinstance(scheduler, distributed.Client):
        return scheduler, False
    if not isinstance(scheduler, str) or not scheduler:
        raise PipelineConfigError(
            f"scheduler must be a distributed.Client or a scheduler address such as "
            f"'tcp://host:8786', got {scheduler!r}", argument="scheduler",
            expected="a distributed.Client or 'tcp://host:port'")
    try:
        return distributed.Client(scheduler, timeout=timeout, set_as_default=False), True
    except (OSError, TimeoutError) as e:
        raise ConnectionError(f"cannot reach the Dask scheduler at {scheduler} within "
                              f"{timeout} s ({e})") from None
    except ValueError as e:     # an address Dask cannot parse
        raise PipelineConfigError(f"scheduler {scheduler!r}: {e}", argument="scheduler",
                                  expected="'tcp://host:port'") from e


class DaskRunner:
    """Runs shard tasks on a Dask cluster: ``scheduler`` is a ``distributed.Client`` or
    the scheduler's address (connected now, so an unreachable one is named before any
    work; a client made here is closed after the run). A task's error is raised here
    with its own type and attributes (Dask re-raises it); the first one cancels the
    rest. A worker that dies has its tasks rerun on the others by the scheduler."""

    def __init__(self, scheduler):
        self.client, owned = connect(scheduler)
        self._close = weakref.finalize(self, self.client.close) if owned else None

    def __call__(self, tasks, directory, progress=None):
        try:
            futures = {self.client.submit(write_shard, task, directory, pure=False): task
                       for task in tasks}
            try:
                for future in distributed.as_completed(futures, loop=self.client.loop):
                    future.result()         # a task's error, raised with its own type
                    if progress is not None:
                        progress(len(futures[future].inputs))
            finally:
                self.client.cancel(list(futures))
        finally:
            if self._close is not None:
                self._close()
