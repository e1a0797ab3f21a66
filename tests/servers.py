"""Real servers for the object-store and cluster tests (the processes themselves are
started by benchmarks._servers, which the engine benchmark uses too)."""

import contextlib
import json
import os
import sys

from benchmarks._servers import (  # noqa: F401 - the tests' names
    S3_ENV,
    dask_cluster,
    free_port,
    moto_server,
    start,
    start_dask_worker,
    stop,
    wait_for_port,
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


@contextlib.contextmanager
def s3_with_credentials():
    """Yield ``(env, credentials)`` of a moto S3 server on a free port that checks
    credentials, as AWS does (moto's IAM: a user allowed everything, and its access
    key, made with the server's first three requests, which it lets through): ``env``
    is this process's environment with that key and the endpoint, ``credentials`` the
    key's ``AWS_*`` variables. Bucket ``team-data`` exists."""
    import boto3
    port = free_port()
    process = start([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
                    env={**os.environ, "INITIAL_NO_AUTH_ACTION_COUNT": "3"})
    try:
        wait_for_port(port, process)
        endpoint = f"http://127.0.0.1:{port}"
        iam = boto3.client("iam", endpoint_url=endpoint, region_name="us-east-1",
                           aws_access_key_id="setup", aws_secret_access_key="setup")
        iam.create_user(UserName="converter")
        key = iam.create_access_key(UserName="converter")["AccessKey"]
        iam.put_user_policy(UserName="converter", PolicyName="everything",
                            PolicyDocument=json.dumps({"Version": "2012-10-17", "Statement": [
                                {"Effect": "Allow", "Action": "*", "Resource": "*"}]}))
        credentials = {"AWS_ACCESS_KEY_ID": key["AccessKeyId"],
                       "AWS_SECRET_ACCESS_KEY": key["SecretAccessKey"],
                       "AWS_DEFAULT_REGION": "us-east-1"}
        boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1",
                     aws_access_key_id=credentials["AWS_ACCESS_KEY_ID"],
                     aws_secret_access_key=credentials["AWS_SECRET_ACCESS_KEY"],
                     ).create_bucket(Bucket="team-data")
        yield ({**os.environ, **credentials, "AWS_ENDPOINT_URL": endpoint, "TQDM_DISABLE": "1"},
               credentials)
    finally:
        stop(process)
