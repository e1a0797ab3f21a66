"""The argument rules of tf1compat._checks: what each takes, what it refuses and how
(the error's type, attributes and message), numpy values accepted as Python's."""

import math
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

from tf1compat import _checks
from tf1compat.errors import ArgumentTypeError, PipelineConfigError


def refused(rule, *args, **kwargs):
    with pytest.raises(PipelineConfigError) as excinfo:
        rule(*args, **kwargs)
    return excinfo.value


@pytest.mark.parametrize("value, expected", [
    (1, 1), (7, 7), (np.int64(4), 4), (np.uint8(3), 3), (np.int32(1), 1)])
def test_positive_int_takes_python_and_numpy_integers(value, expected):
    result = _checks.check_positive_int("api", "n", value)
    assert result == expected and type(result) is int


@pytest.mark.parametrize("value, error, shown", [
    (0, PipelineConfigError, "0"), (-3, PipelineConfigError, "-3"),
    (np.int64(0), PipelineConfigError, repr(np.int64(0))),  # np.int64(0) on NumPy 2
    (True, ArgumentTypeError, "True"), (2.0, ArgumentTypeError, "2.0"),
    ("3", ArgumentTypeError, "'3'"), (None, ArgumentTypeError, "None")])
def test_positive_int_refusals_name_api_argument_value_and_expectation(value, error, shown):
    e = refused(_checks.check_positive_int, "batch", "batch_size", value)
    assert type(e) is error
    assert str(e) == f"batch: batch_size must be a positive integer, got {shown}"
    assert e.argument == "batch_size" and e.expected == "a positive integer"


def test_wrong_kinds_are_type_errors_and_wrong_values_value_errors():
    kind = refused(_checks.check_positive_int, None, "n", "x")
    value = refused(_checks.check_positive_int, None, "n", 0)
    assert isinstance(kind, TypeError) and isinstance(kind, ValueError)
    assert isinstance(value, ValueError) and not isinstance(value, TypeError)
    assert str(value) == "n must be a positive integer, got 0"  # no API: no prefix


def test_integral_floats_only_where_allowed():
    assert _checks.check_positive_int(None, "n", 2.0, allow_float=True) == 2
    assert _checks.check_positive_int(None, "n", np.float32(3.0), allow_float=True) == 3
    for value in (2.5, math.inf, math.nan):
        assert type(refused(_checks.check_positive_int, None, "n", value,
                            allow_float=True)) is ArgumentTypeError


def test_none_only_where_allowed():
    assert _checks.check_positive_int(None, "n", None, allow_none=True) is None
    assert _checks.check_non_negative_int(None, "n", None, allow_none=True) is None
    e = refused(_checks.check_positive_int, None, "n", 0, allow_none=True)
    assert str(e) == "n must be a positive integer or None, got 0"


def test_non_negative_int():
    assert _checks.check_non_negative_int(None, "workers", np.int64(0)) == 0
    e = refused(_checks.check_non_negative_int, "LocalRunner", "workers", -1)
    assert str(e) == "LocalRunner: workers must be a non-negative integer, got -1"


def test_index():
    assert _checks.check_index(None, "i", np.int16(2), 3) == 2
    e = refused(_checks.check_index, "shard_files", "worker_index", 3, 3)
    assert str(e) == "shard_files: worker_index must be an integer in [0, 3), got 3"
    assert type(refused(_checks.check_index, None, "i", 1.0, 3)) is ArgumentTypeError


def test_num_epochs():
    assert _checks.check_num_epochs("p", None) is None
    assert _checks.check_num_epochs("p", 2.0) == 2
    assert str(refused(_checks.check_num_epochs, "p", 0)) == \
        "p: num_epochs must be a positive integer or None, got 0"


@pytest.mark.parametrize("value", [10, -1, 2.5, np.int64(3)])
def test_queue_capacity_takes_nonzero_numbers(value):
    assert _checks.check_queue_capacity("q", value) == value


@pytest.mark.parametrize("value, error", [
    (0, PipelineConfigError), (0.5, PipelineConfigError), (math.nan, PipelineConfigError),
    (math.inf, PipelineConfigError), ("8", ArgumentTypeError), (True, ArgumentTypeError)])
def test_queue_capacity_refusals(value, error):
    e = refused(_checks.check_queue_capacity, "q", value, argument="common_queue_capacity")
    assert type(e) is error and e.argument == "common_queue_capacity"
    assert "(or negative for no limit)" in str(e)


def test_fraction():
    assert _checks.check_fraction(None, "f", 0) == 0.0
    assert _checks.check_fraction(None, "f", np.float64(0.25)) == 0.25
    for value in (1, -0.1, math.nan):
        assert str(refused(_checks.check_fraction, None, "f", value)) == \
            f"f must be a number in [0, 1), got {value!r}"
    assert type(refused(_checks.check_fraction, None, "f", "0.1")) is ArgumentTypeError


def test_seed():
    assert _checks.check_seed(None, "seed", np.int64(-5)) == -5
    assert _checks.check_seed(None, "seed", None, allow_none=True) is None
    assert type(refused(_checks.check_seed, None, "seed", 1.5)) is ArgumentTypeError
    assert type(refused(_checks.check_seed, None, "seed", None)) is ArgumentTypeError


def test_seconds():
    assert _checks.check_seconds("it", "timeout", np.float32(0.5), minimum=0.001) == 0.5
    assert _checks.check_seconds("it", "t", None, allow_none=True) is None
    assert _checks.check_seconds("i", "g", math.inf, positive=True, allow_inf=True) == math.inf
    assert str(refused(_checks.check_seconds, "it", "timeout", 0, minimum=0.001,
                       allow_none=True)) == \
        "it: timeout must be a number of seconds >= 0.001 or None, got 0"
    assert str(refused(_checks.check_seconds, "i", "g", 0, positive=True)) == \
        "i: g must be a positive number of seconds, got 0"
    for value in (math.inf, math.nan, -1):
        refused(_checks.check_seconds, "i", "t", value)


def test_tolerance():
    assert _checks.check_tolerance("c", "rtol", np.float16(0)) == 0.0
    for value in (-1e-9, math.nan, math.inf):
        assert type(refused(_checks.check_tolerance, "c", "rtol", value)) is PipelineConfigError
    assert type(refused(_checks.check_tolerance, "c", "atol", True)) is ArgumentTypeError


def test_choice():
    assert _checks.check_choice(None, "on_error", "skip", ("raise", "skip")) == "skip"
    e = refused(_checks.check_choice, "iter_records", "on_error", "ignore", ("raise", "skip"))
    assert str(e) == "iter_records: on_error must be one of ['raise', 'skip'], got 'ignore'"
    assert e.expected == ["raise", "skip"]
    refused(_checks.check_choice, None, "label_bytes", [1], {1: "a", 2: "b"})  # unhashable
    refused(_checks.check_choice, None, "label_bytes", np.array([1, 2]), [1, 2])  # no bool()


def test_flag():
    assert _checks.check_flag("c", "ordered", np.bool_(False)) is False
    assert _checks.check_flag("c", "ordered", None, allow_none=True) is None
    e = refused(_checks.check_flag, "c", "ordered", 1, allow_none=True)
    assert type(e) is ArgumentTypeError
    assert str(e) == "c: ordered must be True, False or None, got 1"


def test_callable():
    assert _checks.check_callable(None, "encode", len) is len
    assert _checks.check_callable(None, "encode", None, allow_none=True) is None
    e = refused(_checks.check_callable, "write_sharded", "encode", "len", allow_none=True)
    assert str(e) == "write_sharded: encode must be a function or None, got 'len'"


def test_path():
    assert _checks.check_path(None, "path", pathlib.Path("a/b")) == os.path.join("a", "b")
    assert _checks.check_path(None, "path", b"x") == b"x"
    assert type(refused(_checks.check_path, "verify", "path", 3)) is ArgumentTypeError
    for value in ("", "a\0b", b"a\0"):
        e = refused(_checks.check_path, "verify", "path", value)
        assert str(e) == ("verify: path must be a non-empty file path without NUL "
                          f"characters, got {value!r}")


SIZE = "a size in bytes up to 9223372036854775807 (e.g. 500M, 2G, 1073741824), or off"


@pytest.mark.parametrize("value, size", [
    (0, 0), (123, 123), (np.int64(10 ** 6), 10 ** 6), (np.uint64(2 ** 63 - 1), 2 ** 63 - 1),
    ("500M", 500 * 2 ** 20), ("1.5GiB", int(1.5 * 2 ** 30)), ("64kB", 2 ** 16),
    (" 2g ", 2 * 2 ** 30), ("off", 0), ("No", 0), ("0", 0), ("8388607T", 8388607 * 2 ** 40),
    ("9223372036854775807", 2 ** 63 - 1), ("9007199254740993", 2 ** 53 + 1), ("1e3", 1000),
    ("0.5k", 512)])
def test_byte_size_takes_integers_and_size_texts(value, size):
    result = _checks.check_byte_size("api", "cache", value)
    assert result == size and type(result) is int


@pytest.mark.parametrize("value, error", [
    (-1, PipelineConfigError), (2 ** 63, PipelineConfigError), (10 ** 20, PipelineConfigError),
    ("1e30", PipelineConfigError), ("99999999999T", PipelineConfigError),
    ("8388608T", PipelineConfigError), ("lots", PipelineConfigError), ("-5M", PipelineConfigError),
    ("nan", PipelineConfigError), ("inf", PipelineConfigError), ("", PipelineConfigError),
    ("9223372036854775808", PipelineConfigError), ("1.5", PipelineConfigError),
    (2.5, ArgumentTypeError), (True, ArgumentTypeError), (None, ArgumentTypeError)])
def test_byte_size_refusals_name_the_largest_size(value, error):
    e = refused(_checks.check_byte_size, "to_tf_data", "cache", value)
    assert type(e) is error
    assert str(e) == f"to_tf_data: cache must be {SIZE}, got {value!r}"
    assert (e.argument, e.expected) == ("cache", SIZE)


def test_service_address():
    assert _checks.check_service_address(None, "s", "grpc://host:5050") == "grpc://host:5050"
    assert _checks.check_service_address(None, "s", "grpc://[::1]:1/") == "grpc://[::1]:1/"
    for value in ("host:5050", "http://host:5050", "grpc://host", "grpc://:5050",
                  "grpc://host:99999", "grpc://host:1/x", "grpc://host:1?q=1"):
        e = refused(_checks.check_service_address, "run", "service", value)
        assert type(e) is PipelineConfigError
        assert str(e) == ("run: service must be grpc://HOST:PORT (a tf.data service "
                          f"dispatcher), got {value!r}")
    assert type(refused(_checks.check_service_address, None, "s", 5050)) is ArgumentTypeError


def test_requires_names_both_arguments():
    for given, present in ((None, None), (False, None), (5, True), (0, "x")):
        _checks.check_requires("api", "a", given, "b", present, "it needs b")
    for given in (0, 5, "x", True):
        e = refused(_checks.check_requires, "api", "timeout", given, "service", None,
                    "it bounds the waits for the service")
        assert type(e) is PipelineConfigError
        assert str(e) == "api: timeout needs service: it bounds the waits for the service"
        assert (e.argument, e.expected) == ("timeout", "service")
    # the setting it needs turned off (tf_data=False, run's --queues), not left out
    assert str(refused(_checks.check_requires, None, "a", 1, "b", False, "p")) == (
        "a cannot be used with b=False: p")


def test_the_module_imports_no_tensorflow_nor_numpy():
    code = ("import sys, tf1compat._checks; "
            "print(sorted(m for m in ('tensorflow', 'numpy') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]"


def test_the_tf_free_wings_take_numpy_integers(tmp_path):
    from tf1compat.convert.local import LocalRunner
    from tf1compat.convert.sharded import shard_paths
    from tf1compat.records.example import infer_schema, make_example

    runner = LocalRunner(np.int64(2))
    assert runner.workers == 2 and type(runner.workers) is int
    assert shard_paths(tmp_path / "t", np.int64(4)) == [
        f"{tmp_path}/t-{i:05d}-of-00004.tfrecord" for i in range(4)]
    records = [make_example({"x": [i]}) for i in range(3)]
    assert infer_schema(records, sample=np.int32(2)).records == 2
