"""Real servers for the object-store and cluster tests (the processes themselves are
started by benchmarks._servers, which the engine benchmark uses too)."""

import contextlib
import os

from benchmarks._servers import (  # noqa: F401 - the tests' names
    S3_ENV,
    dask_cluster,
    free_port,
    moto_server,
    start_dask_worker,
    stop,
)


@contextlib.contextmanager
def s3_filesystem():
    """Yield an s3fs filesystem of a moto server started on a free port; this process
    (and the processes it starts, with its environment) reach it through the AWS_*
    variables, as through a user's own credentials. The environment is restored after."""
    import s3fs
    saved = dict(os.environ)
    with moto_server() as endpoint:
        os.environ.update(S3_ENV, AWS_ENDPOINT_URL=endpoint, TQDM_DISABLE="1")
        s3fs.S3FileSystem.clear_instance_cache()
        try:
            yield s3fs.S3FileSystem()
        finally:
            s3fs.S3FileSystem.clear_instance_cache()
            os.environ.clear()
            os.environ.update(saved)
