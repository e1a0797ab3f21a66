"""The graph model's assumptions about TensorFlow, each checked against TensorFlow itself:
op types, input positions, attributes, reader keys, frame sizes and message texts."""

import gc
import gzip
import os
import re
import subprocess
import sys
import weakref

import numpy as np
import pytest

from tf1compat.pipeline.graph_model import op_types

tf = pytest.importorskip("tensorflow")
import tf1compat as tc  # noqa: E402  (after the skip: needs TensorFlow)
from tf1compat.migrate.lowering import replace_with_tf_data  # noqa: E402
from tf1compat.migrate.lowering.graph_function import trace_function  # noqa: E402
from tf1compat.pipeline.graph_model.cond_branches import called_cond, passing_branch, with_branch  # noqa: E402
from tf1compat.pipeline.graph_model.index import graph_index, graph_notes  # noqa: E402
from tf1compat.pipeline.graph_model.notes import ProducerNote, UncheckedName  # noqa: E402
from tf1compat.pipeline.graph_model.op_seeds import op_seeds_kept  # noqa: E402
from tf1compat.pipeline.graph_model.readers import spec_of_reader_op  # noqa: E402
from tf1compat.pipeline.graph_model.structure import (  # noqa: E402
    InputName,
    add_constant_node,
    ancestors,
    consumed_tensors,
    data_inputs,
    fixpoint,
    keep_reachable,
    parse_input,
    rename_inputs,
    sub_graph_def,
    walk,
)
from tf1compat.pipeline.graph_model.varying import (  # noqa: E402
    has_stateful_branches,
    varying_ops,
)
from tf1compat.records import tfrecord  # noqa: E402

pytestmark = pytest.mark.tf
v1 = tf.compat.v1

_NOT_OP_TYPES = {"QUEUE_RUNNERS", "READER_INSTANCE_ATTRIBUTES", "STATEFUL_PREFIXES",
                 "NO_QUEUE_RUNNERS_NOTICE", "PARSE_KEY_KINDS", "PARSE_NUM_SPARSE",
                 "QUEUE_END_MESSAGE", "IF_OUTPUT_TYPES", "IF_INLINED", "PARSE_DENSE_TYPES",
                 "PARSE_DENSE_SHAPES", "TYPE_ATTRIBUTE", "DTYPE_ATTRIBUTE", "CONST_VALUE",
                 "COLOCATION", "ITERATOR_ELEMENT_ATTRIBUTES", "DECODE_RAW_ATTRIBUTES",
                 "TENSORFLOW_LOG_LINES", "END_OF_INPUT", "FIRST_SESSION_RUN",
                 "RANDOM_OP_MODULE", "EPOCH_LIMIT", "SESSION_RUN", "GRAPH_UNFINALIZE"}


def _op_type_names():
    names = set()
    for constant, value in vars(op_types).items():
        if not constant.isupper() or constant in _NOT_OP_TYPES:
            continue
        if isinstance(value, str):
            names.add(value)
        elif isinstance(value, (frozenset, tuple)):
            names.update(value)
    return sorted(names)


@pytest.mark.parametrize("op_type", _op_type_names())
def test_every_op_type_is_registered_in_tensorflow(op_type):
    assert hasattr(tf.raw_ops, op_type), f"TensorFlow has no op {op_type!r} any more"


def test_the_op_types_table_imports_without_tensorflow():
    code = ("import sys; from tf1compat.pipeline.graph_model import op_types; "
            "from tf1compat.migrate.comparison import example_stream; "
            "print('tensorflow' in sys.modules)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True)
    assert result.stdout.strip() == "False"


def test_module_paths_port_verify_patches():
    import importlib
    import inspect

    random_ops = importlib.import_module(op_types.RANDOM_OP_MODULE)
    for name in op_types.RANDOM_OP_FUNCTIONS:
        parameters = list(inspect.signature(getattr(random_ops, name)).parameters)
        assert parameters[-3:] == ["seed", "seed2", "name"], name
    module, name = op_types.EPOCH_LIMIT
    training_input = importlib.import_module(module)
    assert list(inspect.signature(getattr(training_input, name)).parameters) == [
        "tensor", "num_epochs", "name"]
    assert f"{name}(" in inspect.getsource(training_input.input_producer)
    module, name = op_types.SESSION_RUN
    session_class = getattr(importlib.import_module(module), name)
    assert "run" in vars(session_class) and issubclass(tf.compat.v1.Session, session_class)
    graph = tf.Graph()
    graph.finalize()
    getattr(graph, op_types.GRAPH_UNFINALIZE)()
    with graph.as_default():
        tf.constant(1)


def test_queue_runners_collection_name():
    assert op_types.QUEUE_RUNNERS == v1.GraphKeys.QUEUE_RUNNERS


def test_runner_queue_name_is_the_queue_ops_name_in_a_name_scope():
    with tc.legacy_graph(), v1.name_scope("input"):
        queue = v1.train.string_input_producer(["a"], shuffle=False)
        runner, = v1.get_collection(v1.GraphKeys.QUEUE_RUNNERS)
    assert op_types.runner_queue_name(runner) == queue.queue_ref.op.name
    assert op_types.runner_queue_name(runner).startswith("input/")


def test_start_queue_runners_logs_the_no_runners_notice():
    import logging
    records = []
    handler = logging.Handler()
    handler.emit = records.append
    logger = tf.get_logger()
    logger.addHandler(handler)
    try:
        with tc.legacy_graph(), v1.Session() as session:
            v1.train.start_queue_runners(session)
    finally:
        logger.removeHandler(handler)
    assert any(op_types.NO_QUEUE_RUNNERS_NOTICE in r.getMessage() for r in records), [
        r.getMessage() for r in records]


def test_producer_ops_inputs_and_attributes():
    with tc.legacy_graph() as graph:
        queue = v1.train.string_input_producer(["a", "b"], num_epochs=3, seed=5, capacity=7)
    assert queue.queue_ref.op.type == op_types.FIFO_QUEUE
    assert op_types.queue_capacity(queue.queue_ref.op) == 7
    runner, = graph.get_collection(op_types.QUEUE_RUNNERS)
    enqueue, = runner.enqueue_ops
    assert enqueue.type == op_types.ENQUEUE_MANY
    assert op_types.queue_handle(enqueue) is queue.queue_ref
    values, = op_types.enqueued(enqueue)
    counter, = [c for c in values.op.control_inputs if c.type in op_types.COUNT_UP_TO]
    assert op_types.count_limit(counter) == 3
    shuffle = values.op.inputs[0].op
    assert shuffle.type == op_types.RANDOM_SHUFFLE
    assert op_types.op_seeds(shuffle)[1] == 5


@pytest.mark.parametrize("allow_smaller, dequeue_type", [
    (False, op_types.DEQUEUE_MANY), (True, op_types.DEQUEUE_UP_TO)])
def test_batching_ops_inputs_and_attributes(allow_smaller, dequeue_type):
    with tc.legacy_graph():
        value = tf.constant(1)
        batch = v1.train.batch([value], 4, allow_smaller_final_batch=allow_smaller)
        shuffled = v1.train.shuffle_batch([value], 4, capacity=9, min_after_dequeue=3, seed=2)
        padded = v1.train.batch([tf.zeros([value])], 4, dynamic_pad=True)
    assert batch.op.type == dequeue_type
    assert tf.get_static_value(op_types.batch_size_input(batch.op)) == 4
    queue = op_types.queue_handle(shuffled.op).op
    assert queue.type == op_types.SHUFFLE_QUEUE
    assert (op_types.queue_capacity(queue), op_types.min_after_dequeue(queue)) == (9, 3)
    assert op_types.op_seeds(queue)[1] == 2
    assert op_types.queue_handle(padded.op).op.type == op_types.PADDING_QUEUE
    enqueues = [c for c in op_types.queue_handle(batch.op).consumers()
                if c.type in op_types.ENQUEUES_ONE]
    assert [t.op for t in op_types.enqueued(enqueues[0])] == [value.op]


def _write(path, data):
    with open(path, "wb") as f:
        f.write(data)
    return str(path)


def _reader_files(tmp_path, reader_class):
    if reader_class is v1.TFRecordReader:
        path = str(tmp_path / "data.tfrecord")
        with tf.io.TFRecordWriter(path) as writer:
            for record in (b"a", b"bcd", b"", b"efgh" * 9):
                writer.write(record)
        return [path], {}
    if reader_class is v1.FixedLengthRecordReader:
        return ([_write(tmp_path / "fixed.bin", b"HH" + bytes(range(12)) + b"F")],
                {"record_bytes": 3, "header_bytes": 2, "footer_bytes": 1})
    if reader_class is v1.TextLineReader:
        return ([_write(tmp_path / "lines.txt", b"head\na\r\nbb\n\nccc")],
                {"skip_header_lines": 1})
    return [_write(tmp_path / "one.bin", b"whole"), _write(tmp_path / "two.bin", b"")], {}


def _tf1_keys_and_records(reader_class, files, settings):
    with tc.legacy_graph():
        queue = v1.train.string_input_producer(files, num_epochs=1, shuffle=False)
        reader = reader_class(**settings)
        key, value = reader.read(queue)
        with v1.Session() as session:
            session.run(v1.local_variables_initializer())
            coordinator = v1.train.Coordinator()
            threads = v1.train.start_queue_runners(session, coordinator)
            found = []
            try:
                while True:
                    found.append(tuple(session.run([key, value])))
            except tf.errors.OutOfRangeError:
                pass
            coordinator.request_stop()
            coordinator.join(threads)
    return found, reader.reader_ref.op, key.op


@pytest.mark.parametrize("reader_class", [v1.TFRecordReader, v1.FixedLengthRecordReader,
                                          v1.TextLineReader, v1.WholeFileReader])
def test_reader_spec_keys_and_records_are_tensorflows(tmp_path, reader_class):
    files, settings = _reader_files(tmp_path, reader_class)
    found, reader_op, read_op = _tf1_keys_and_records(reader_class, files, settings)
    assert read_op.type == op_types.READ and op_types.reader_op(read_op) is reader_op
    assert reader_op.type in op_types.READERS
    spec = spec_of_reader_op(reader_op)
    assert spec.op_type == reader_op.type
    assert {key: value for key, value in settings.items()} == spec.arguments()
    expected = [(key.encode(), data) for path in files
                for _, key, data in spec.iter_records(path)]
    assert found == expected and found
    records = [bytes(r) for path in files for r in spec.records(path).as_numpy_iterator()]
    assert records == [data for _, data in found]
    names = tf.data.Dataset.from_tensor_slices(files)
    chunks = list(names.flat_map(lambda name: spec.keyed_chunks(name, 2)).as_numpy_iterator())
    assert all(len(keys) <= 2 for keys, _ in chunks)
    assert [(key, bytes(data)) for keys, records in chunks
            for key, data in zip(keys, records, strict=True)] == found


def test_fixed_length_keys_and_records_of_a_compressed_file_are_tensorflows(tmp_path):
    path = _write(tmp_path / "fixed.bin.gz", gzip.compress(b"HH" + bytes(range(12)) + b"F"))
    settings = {"record_bytes": 3, "header_bytes": 2, "footer_bytes": 1, "encoding": "GZIP"}
    found, reader_op, _ = _tf1_keys_and_records(v1.FixedLengthRecordReader, [path], settings)
    spec = spec_of_reader_op(reader_op)
    assert spec.compression == "GZIP" and len(found) == 4
    chunks = spec.keyed_chunks(path, 3).as_numpy_iterator()
    assert [(key, bytes(data)) for keys, records in chunks
            for key, data in zip(keys, records, strict=True)] == found


_BATCHED_READS = """
import sys
from tf1compat._tf import tf
from tf1compat.pipeline.graph_model.readers import spec_of_reader_class
files = sys.argv[1:]
names = tf.data.Dataset.from_tensor_slices(files)
for reader, arguments in ((tf.compat.v1.TFRecordReader, {}),
                          (tf.compat.v1.FixedLengthRecordReader, {"record_bytes": 1}),
                          (tf.compat.v1.TextLineReader, {})):
    spec = spec_of_reader_class("test", reader, arguments)
    list(names.flat_map(lambda name: spec.records(name).batch(2)))
print("untyped reader op next", file=sys.stderr, flush=True)
list(names.flat_map(lambda name: tf.data.experimental.from_variant(
    tf.raw_ops.TFRecordDataset(filenames=name, compression_type="", buffer_size=1024),
    tf.TensorSpec([], tf.string)).batch(2)))
"""


def test_reader_ops_batched_in_a_function_pass_type_inference(tmp_path):
    """TensorFlow warns once per process when type inference fails: the specs' reader
    ops batched in a function do not make it warn; the bare op still does."""
    files, _ = _reader_files(tmp_path, v1.TFRecordReader)
    result = subprocess.run([sys.executable, "-c", _BATCHED_READS, *files], check=True,
                            capture_output=True, text=True, timeout=120,
                            env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "0"})
    ours, bare = result.stderr.split("untyped reader op next")
    assert "Type inference failed" not in ours, ours
    assert "Type inference failed" in bare, bare


def test_tfrecord_keys_count_framed_sizes(tmp_path):
    files, _ = _reader_files(tmp_path, v1.TFRecordReader)
    found, _, _ = _tf1_keys_and_records(v1.TFRecordReader, files, {})
    offsets = [int(key.rsplit(b":", 1)[1]) for key, _ in found]
    sizes = [tfrecord.framed_size(len(data)) for _, data in found]
    assert offsets == list(np.cumsum([0] + sizes[:-1]))
    assert tfrecord.framed_size(0) - tfrecord.HEADER_SIZE == 4


def test_a_damaged_record_message_names_its_offset(tmp_path):
    path = str(tmp_path / "damaged.tfrecord")
    with tf.io.TFRecordWriter(path) as writer:
        for record in (b"first", b"second"):
            writer.write(record)
    data = bytearray(open(path, "rb").read())
    second = tfrecord.framed_size(len(b"first"))
    data[second + tfrecord.HEADER_SIZE] ^= 0xFF             # the second record's data
    _write(path, bytes(data))
    with pytest.raises(tf.errors.DataLossError) as caught:
        _tf1_keys_and_records(v1.TFRecordReader, [path], {})
    match = op_types.RECORD_ERROR.search(caught.value.message)
    assert match is not None, caught.value.message
    assert int(match.group(2)) in (second, second + tfrecord.HEADER_SIZE)


def test_node_tags_name_the_failing_op():
    with tc.legacy_graph():
        size = v1.placeholder_with_default(5, [])
        bad = tf.reshape(tf.range(size), [2, 2], name="bad_reshape")
        with v1.Session() as session, pytest.raises(tf.errors.InvalidArgumentError) as caught:
            session.run(bad)
    assert op_types.NODE_TAG.findall(caught.value.message)[-1] == "bad_reshape"
    assert op_types.NODE_SUFFIX.search(caught.value.message) is not None


def test_the_index_follows_the_graph_and_holds_its_notes():
    with tc.legacy_graph() as graph:
        queue = tc.string_input_producer(["a"], shuffle=False)
        index = graph_index(graph)
        name = queue.queue_ref.op.name
        assert [op.type for op in index.enqueue_ops(name)] == [op_types.ENQUEUE_MANY]
        element = queue.dequeue()
        batch = v1.train.batch([element], 2)
        rebuilt = graph_index(graph)
    batch_queue = op_types.queue_handle(batch.op).op.name
    assert batch_queue not in index.runners and batch_queue in rebuilt.runners
    assert rebuilt.upstream([batch])[1] == {batch_queue, name}
    assert rebuilt.upstream([batch], fed=[element])[1] == {batch_queue}
    assert index.notes is rebuilt.notes is graph_notes(graph)
    assert graph_notes(graph).producers[name] == ProducerNote(("a",), (UncheckedName(
        0, b"a", b"a", True),), None)


def _noted_graph(tmp_path):
    """A weak reference to a graph that every wing noted something about: a producer, a
    fast path, a lowered pipeline (and the index of it all)."""
    path = str(tmp_path / "data.tfrecord")
    with tf.io.TFRecordWriter(path) as writer:
        for value in range(6):
            writer.write(tf.train.Example(features=tf.train.Features(feature={
                "x": tf.train.Feature(int64_list=tf.train.Int64List(value=[value]))}))
                .SerializeToString())
    features = {"x": tf.io.FixedLenFeature([], tf.int64)}
    with tc.legacy_graph() as graph:
        fast = tc.build_example_batches(tc.string_input_producer([path]), features, 2)
        _, record = tc.TFRecordReader().read(tc.string_input_producer([path], num_epochs=1))
        batch = tc.batch(tf.io.parse_single_example(record, features), 2)
        replace_with_tf_data(batch)
        notes = graph_index(graph).notes
        assert notes.fast_path_files(fast["x"].op.name) == ((path,), None)
        assert len(notes.producers) == 2 and len(notes.queues_lowered) == 2
        assert list(notes.dequeues_replaced.values()) == [batch["x"].op.name]
    return weakref.ref(graph)


def test_notes_and_index_keep_no_graph_alive(tmp_path):
    graph = _noted_graph(tmp_path)
    gc.collect()
    assert graph() is None


def test_stateful_ops_are_tensorflows_with_outputs_only():
    with tc.legacy_graph() as graph:
        value = tf.constant(1.0)
        checked = tf.raw_ops.Assert(condition=value > 0, data=[value])
        with tf.control_dependencies([checked]):
            noisy = value + v1.random_uniform([], seed=1)
        shifted = v1.py_func(lambda x: x + 1, [noisy], tf.float32)
        plain = tf.sqrt(value)
    function = trace_function(graph.as_graph_def(), [shifted])
    assert function.stateful_op_types() == ["RandomUniform", "PyFunc"]
    assert trace_function(graph.as_graph_def(), [plain]).stateful_op_types() == []


def test_parse_example_inputs_outputs_and_attributes():
    features = {"s1": tf.io.VarLenFeature(tf.string), "s2": tf.io.VarLenFeature(tf.float32),
                "required": tf.io.FixedLenFeature([2], tf.int64),
                "defaulted": tf.io.FixedLenFeature([], tf.float32, default_value=1.5),
                "padded": tf.io.FixedLenSequenceFeature([], tf.int64, allow_missing=True),
                "ragged": tf.io.RaggedFeature(tf.string)}
    with tc.legacy_graph():
        parsed = tf.io.parse_single_example(tf.constant(b""), features)
        parse = parsed["s1"].values.op
        assert parse.type == op_types.PARSE_EXAMPLE
        counts = op_types.parse_key_counts(parse)
        assert counts == {"sparse": 2, "dense": 3, "ragged": 1}
        keys = {kind: [k.decode() for k in tf.get_static_value(
            parse.inputs[op_types.PARSE_KEYS_INPUT[kind]]).tolist()]
            for kind in op_types.PARSE_KEY_KINDS}
        assert keys == {"sparse": ["s1", "s2"], "dense": ["defaulted", "padded", "required"],
                        "ragged": ["ragged"]}
        assert len(parse.inputs) == op_types.PARSE_FIRST_DEFAULT + counts["dense"]
        assert [op_types.parse_key_is_required(parse, i) for i in range(3)] == \
            [False, False, True]
        assert parse.get_attr(op_types.PARSE_NUM_SPARSE) == 2
        assert op_types.parse_records(parse).op.type == "Const"
        assert tf.get_static_value(op_types.parse_names(parse)).tolist() == []
        assert op_types.parse_keys_and_defaults(parse) == list(parse.inputs[2:])
        assert [tf.TensorShape(s).as_list() for s in op_types.parse_dense_shapes(parse)] == \
            [[], [None], [2]]
        kept = {"sparse": [1], "dense": [2], "ragged": []}
        arguments = op_types.parse_key_attributes(parse, kept)
        assert arguments["sparse_types"] == [tf.float32] and arguments["ragged_value_types"] == []
        rebuilt = tf.raw_ops.ParseExampleV2(
            serialized=[tf.train.Example(features=tf.train.Features(feature={
                "required": tf.train.Feature(int64_list=tf.train.Int64List(value=[4, 5]))}))
                .SerializeToString()],
            names=[], sparse_keys=["s2"], dense_keys=["required"], ragged_keys=[],
            dense_defaults=[op_types.parse_keys_and_defaults(parse)[3 + 2]],
            **{op_types.PARSE_NUM_SPARSE: 1}, **arguments)
        for kind, names in op_types.PARSE_KEY_ATTRIBUTES.items():
            assert all(len(parse.get_attr(name)) == counts[kind] for name in names)
        positions = op_types.parse_output_positions(counts)
        assert sorted(p for kind in positions.values() for key in kind for p in key) == \
            list(range(len(parse.outputs)))
        outputs = [[parse.outputs[p] for p in key] for key in positions["sparse"]]
        assert [(i.name, v.name, s.name) for i, v, s in outputs] == [
            (parsed[k].indices.name, parsed[k].values.name, parsed[k].dense_shape.name)
            for k in ("s1", "s2")]
        assert [parse.outputs[p].name for p, in positions["dense"]] == [
            parsed[k].name for k in keys["dense"]]
        (values, splits), = positions["ragged"]
        assert parse.outputs[values].dtype == tf.string
        assert parse.outputs[splits].dtype in (tf.int32, tf.int64)
        with v1.Session() as session:
            assert session.run(rebuilt.dense_values[0]).tolist() == [[4, 5]]
            with pytest.raises(tf.errors.InvalidArgumentError, match=r"Feature: required "
                               r"\(data type: int64\) is required but could not be found"):
                session.run(parsed["defaulted"])


def _seeds_of_an_op_after(build_between):
    """``(seed, seed2)`` of a random op built, in a graph with a seed, after one random
    op and ``build_between(graph)``."""
    with tc.legacy_graph() as graph:
        v1.set_random_seed(3)
        tf.random.uniform([2])
        build_between(graph)
        return op_types.op_seeds(v1.random_shuffle(tf.range(4)).op)


def test_op_level_seeds_follow_the_ops_built_before_unless_kept():
    alone = _seeds_of_an_op_after(lambda graph: None)

    def two_more_random_ops(graph):
        tf.random.uniform([1])
        tf.data.Dataset.range(3).shuffle(3)

    def kept(graph):
        with op_seeds_kept(graph):
            two_more_random_ops(graph)

    assert alone[0] == 3
    assert _seeds_of_an_op_after(two_more_random_ops) != alone  # TF1's rule: they shift it
    assert _seeds_of_an_op_after(kept) == alone


def test_a_closed_batching_queue_ends_with_the_queue_end_message():
    with tc.legacy_graph():
        queue = v1.FIFOQueue(5, tf.int32, shapes=[], name="short")
        batch = queue.dequeue_many(4, name="take")
        with v1.Session() as session:
            session.run(queue.enqueue_many([[1, 2]]))
            session.run(queue.close())
            with pytest.raises(tf.errors.OutOfRangeError) as caught:
                session.run(batch)
    expected = re.escape(op_types.QUEUE_END_MESSAGE.format(
        kind=op_types.queue_kind(queue.queue_ref.op), name="NAME", requested=4, size=2))
    assert re.search(expected.replace("NAME", r"(_\d+_)?short"), caught.value.message), \
        caught.value.message


# ------------------------------------------------------------ TensorFlow's own log lines

LOGGING_PIPELINE = """
import tensorflow as tf
import tf1compat as tc
with tc.legacy_graph():
    row = tc.input_producer(tf.range(4), num_epochs=1, shuffle=False).dequeue()
    print(sum(len(b) for b in tc.SessionIterator(tc.batch(row, 2))))
"""


@pytest.mark.slow
def test_the_installed_tensorflow_writes_the_log_lines_of_its_release():
    """Each row of TENSORFLOW_LOG_LINES is written by the installed TensorFlow exactly
    when the row names its minor version: a pipeline read to its end in a new process
    (its first session run, steps ending at the end of input), everything shown
    (TF1COMPAT_VERBOSE=1) at the quiet start-up's TF_CPP_MIN_LOG_LEVEL=1."""
    from tf1compat._versions import minor_version

    result = subprocess.run([sys.executable, "-c", LOGGING_PIPELINE], capture_output=True,
                            text=True, timeout=120,
                            env={**os.environ, "TF1COMPAT_VERBOSE": "1",
                                 "TF_CPP_MIN_LOG_LEVEL": "1"})
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["4"]
    minor, lines = minor_version(tf.__version__), result.stderr.splitlines()
    for row in op_types.TENSORFLOW_LOG_LINES:
        written = [line for line in lines if re.fullmatch(row.pattern, line)]
        assert bool(written) == (minor in row.minors), (minor, row, result.stderr)
    assert bool(op_types.log_lines(minor)) == any(
        minor in row.minors for row in op_types.TENSORFLOW_LOG_LINES)


def test_log_lines_of_a_release_and_a_time():
    end = ("2026-11-28 20:44:29.118253: W tensorflow/core/framework/local_rendezvous.cc:404] "
           "Local rendezvous is aborting with status: OUT_OF_RANGE: Reached limit of 1")
    mlir = ("I0000 00:00:1795899448.787223   18260 mlir_graph_optimization_pass.cc:437] "
            "MLIR V1 optimization pass is not enabled")
    assert re.fullmatch(op_types.log_lines("2.16"), end)
    assert op_types.log_lines("2.16", (op_types.FIRST_SESSION_RUN,)) is None
    assert re.fullmatch(op_types.log_lines("2.20"), mlir)
    assert not re.fullmatch(op_types.log_lines("2.20"), end)
    assert not re.fullmatch(op_types.log_lines("2.16"), end.replace(": W ", ": I "))
    assert op_types.log_lines("2.17") is None and op_types.log_lines("2.21") is None


def test_varying_ops_are_random_and_py_func_not_decoding_nor_an_if_holding_an_assert():
    graph = tf.Graph()
    with graph.as_default():
        data = v1.placeholder_with_default(b"", [])
        decoded = tf.io.decode_raw(data, tf.uint8)
        checked = tf.cond(tf.size(decoded) > 0, lambda: decoded,
                          lambda: _asserted(decoded))
        flipped = tf.cond(tf.size(decoded) > 0,
                          lambda: decoded + tf.cast(tf.random.uniform([]) > 0.5, tf.uint8),
                          lambda: decoded)
        called = v1.py_func(lambda x: x, [decoded], tf.uint8)
        noise = tf.random.uniform([3])
    check, flip = checked.op.inputs[0].op, flipped.op.inputs[0].op   # the If ops
    assert check.type == flip.type == "If"
    assert check.op_def.is_stateful   # TensorFlow marks it stateful (its Assert) ...
    ops = [decoded.op, check, flip, called.op, noise.op]
    varying = {op.name for op in varying_ops(ops, graph.as_graph_def())}
    assert varying == {flip.name, called.op.name, noise.op.name}   # ... yet it does not vary


def test_exclusive_case_checks_its_predicates_in_an_if_holding_only_an_assert():
    # slim's Image handler decodes with tf.case(exclusive=True); the lowering runs
    # its map with parallel calls because this check does not vary.
    graph = tf.Graph()
    with graph.as_default():
        data = v1.placeholder_with_default(b"ab", [])
        raw = tf.equal(tf.strings.substr(data, 0, 1), b"a")
        decoded = tf.case([(raw, lambda: tf.io.decode_raw(data, tf.uint8)),
                           (tf.logical_not(raw), lambda: tf.io.decode_raw(data, tf.uint8))],
                          exclusive=True)
    check = graph.get_operation_by_name("case/Assert/AssertGuard")
    assert check.type == "If" and check.op_def.is_stateful
    functions = {f.signature.name: f for f in graph.as_graph_def().library.function}
    branches = [check.get_attr(name).name for name in ("then_branch", "else_branch")]
    held = {node.op for name in branches for node in functions[name].node_def}
    assert held == {"Assert", "NoOp", "Identity", "Const"}, held
    assert varying_ops(graph.get_operations(), graph.as_graph_def()) == []
    traced = trace_function(graph.as_graph_def(), [decoded], lambda op: op.type == "Placeholder")
    assert traced.stateful_op_types() == []


def _asserted(tensor):
    with tf.control_dependencies([tf.debugging.Assert(False, ["empty"])]):
        return tf.identity(tensor)


def test_a_cond_is_an_if_op_naming_its_branches_and_output_types():
    with tc.legacy_graph() as graph:
        x = v1.placeholder(tf.int64, [])
        y = tf.cond(x > 0, lambda: x * 2, lambda: x - 1)
    op = op_types.value_input(y.op).op if y.op.type == op_types.IDENTITY else y.op
    assert op.type in op_types.IFS
    assert op_types.cond_predicate(op).op.type == "Greater"
    functions = {f.signature.name for f in graph.as_graph_def().library.function}
    assert {op.node_def.attr[a].func.name for a in op_types.IF_BRANCHES.values()} <= functions
    assert list(op.node_def.attr[op_types.IF_OUTPUT_TYPES].list.type) == [tf.int64.as_datatype_enum]


@pytest.mark.parametrize("taken, expected", [(True, -10), (False, -6)])
def test_with_branch_runs_one_branch_whatever_the_predicate(taken, expected):
    with tc.legacy_graph() as graph:
        x = v1.placeholder(tf.int64, [], name="x")
        y = tf.identity(tf.cond(x > 0, lambda: x * 2, lambda: x - 1), name="y")
    cond = next(op for op in graph.get_operations() if op.type in op_types.IFS)
    rewritten = with_branch(graph.as_graph_def(), cond.name, taken)
    with tf.Graph().as_default() as copy:
        v1.import_graph_def(rewritten, name="")
        assert not [op for op in copy.get_operations() if op.type in op_types.IFS]
        with v1.Session(graph=copy) as session:
            assert session.run("y:0", {"x:0": -5}) == expected
    assert y.op.name == "y"


def test_a_called_cond_is_an_if_op_tensorflow_does_not_inline():
    """TensorFlow marks the If ops it inlines with the attribute called_cond sets False."""
    def if_op(function):
        graph = function.get_concrete_function(tf.TensorSpec([], tf.int64)).graph
        return next(op for op in graph.get_operations() if op.type in op_types.IFS)

    def choice(cond):
        return tf.function(lambda x: cond(x > 0, lambda: x * 2, lambda: x - 1))
    inlined, called = choice(tf.cond), choice(called_cond)
    assert if_op(inlined).get_attr(op_types.IF_INLINED) is True
    assert if_op(called).get_attr(op_types.IF_INLINED) is False
    assert [int(called(tf.constant(v, tf.int64))) for v in (5, -5)] == [10, -6]


def test_the_passing_branch_of_an_asserts_cond_and_of_other_conds():
    with tc.legacy_graph() as graph:
        x = v1.placeholder(tf.int64, [])
        tf.debugging.Assert(x > 0, [x], name="check")
        tf.cond(x > 0, lambda: x * 2, lambda: x - 1, name="choice")
    graph_def = graph.as_graph_def()
    conds = {op.name.split("/")[0]: op for op in graph.get_operations()
             if op.type in op_types.IFS}
    assert passing_branch(graph_def, conds["check"].node_def) is True
    assert passing_branch(graph_def, conds["choice"].node_def) is None


def test_what_needs_a_function_of_its_own_against_automatic_control_dependencies():
    def graph_def_of(build):
        with tc.legacy_graph() as graph:
            x = v1.placeholder(tf.int64, [])
            build(x)
        return graph.as_graph_def()
    """A stateful op inside control flow (an If's branch, a v1 cond's Switch to Merge)
    needs it; stateful ops outside any (an Assert, a random draw: tf.random_crop) and
    stateless branches (tf.random_flip_left_right's cond) do not."""
    assert not has_stateful_branches(graph_def_of(lambda x: tf.reshape(x * 2 + 1, [1])))
    # an Assert of strings and int32s is one op (tf.random_crop's); of other data, a cond
    # holding one (tf.case(exclusive=True)'s)
    assert not has_stateful_branches(graph_def_of(
        lambda x: tf.debugging.Assert(x > 0, ["x", tf.cast(x, tf.int32)])))
    assert has_stateful_branches(graph_def_of(lambda x: tf.debugging.Assert(x > 0, [x])))
    assert not has_stateful_branches(graph_def_of(lambda x: tf.random.uniform([2])))
    assert not has_stateful_branches(graph_def_of(
        lambda x: tf.cond(x > 0, lambda: x, lambda: -x)))

    def checked(x):
        with tf.control_dependencies([tf.debugging.Assert(x < 0, [x])]):
            return tf.identity(x)
    assert has_stateful_branches(graph_def_of(lambda x: tf.cond(x > 0, lambda: x,
                                                                lambda: checked(x))))

    def plain_checked(x):     # one Assert op
        with tf.control_dependencies([tf.debugging.Assert(x > 0, ["x", tf.cast(x, tf.int32)])]):
            return tf.identity(x)

    def v1_cond(x, branch):   # TF1's control flow, as run mode builds it
        negative, positive = tf.raw_ops.Switch(data=x, pred=x > 0)
        return tf.raw_ops.Merge(inputs=[-negative, branch(positive)]).output
    assert not has_stateful_branches(graph_def_of(lambda x: v1_cond(x, tf.identity)))
    assert has_stateful_branches(graph_def_of(lambda x: v1_cond(x, plain_checked)))
    assert not has_stateful_branches(graph_def_of(
        lambda x: plain_checked(v1_cond(x, tf.identity))))
    from tensorflow.python.framework import function  # TF1's Defun: a node of its name

    @function.Defun(tf.int64)
    def doubled(x):
        return x * 2

    @function.Defun(tf.int64)
    def doubled_checked(x):
        return plain_checked(x) * 2
    assert not has_stateful_branches(graph_def_of(lambda x: v1_cond(x, doubled)))
    assert has_stateful_branches(graph_def_of(lambda x: v1_cond(x, doubled_checked)))


# ------------------------------------------------------------ inputs and attributes

_MOVES = {
    "Identity": lambda x: tf.identity(x), "Cast": lambda x: tf.cast(x, tf.float32),
    "Reshape": lambda x: tf.reshape(x, [3, 2]), "Transpose": lambda x: tf.transpose(x, [1, 0]),
    "ExpandDims": lambda x: tf.expand_dims(x, 1), "Squeeze": lambda x: tf.squeeze(x[None], [0]),
    "StridedSlice": lambda x: x[1:], "Pad": lambda x: tf.pad(x, [[1, 0], [0, 1]]),
    "PadV2": lambda x: tf.pad(x, [[1, 0], [0, 1]], constant_values=7),
    "MirrorPad": lambda x: tf.pad(x, [[1, 0], [0, 1]], mode="REFLECT"),
}


@pytest.mark.parametrize("op_type", sorted(op_types.RECOMPUTED_AFTER_CACHE
                                           | {op_types.EXPAND_DIMS, op_types.RESHAPE}))
def test_value_input_is_the_tensor_a_moving_op_moves(op_type):
    with tc.legacy_graph():
        x = tf.constant([[1, 2], [3, 4], [5, 6]], name="x")
        moved = _MOVES[op_type](x)
    assert moved.op.type == op_type
    source = op_types.value_input(moved.op)
    assert source is x or op_type == "Squeeze" and op_types.value_input(source.op) is x
    assert [t.op.type for t in op_types.shaping_inputs(moved.op)] == \
        ["Const"] * (len(moved.op.inputs) - 1)
    if op_type == op_types.EXPAND_DIMS:
        assert tf.get_static_value(op_types.expand_dims_axis(moved.op)) == 1


def test_node_type_is_the_type_an_op_computes_on():
    with tc.legacy_graph():
        total = tf.constant([1, 2], tf.int16) + 1
        constant = tf.constant(1.5)
    assert op_types.node_type(total.op.node_def) == tf.int16.as_datatype_enum
    assert op_types.node_type(constant.op.node_def) is None
    assert constant.op.node_def.attr[op_types.DTYPE_ATTRIBUTE].type == tf.float32.as_datatype_enum
    assert tf.make_ndarray(constant.op.node_def.attr[op_types.CONST_VALUE].tensor) == 1.5
    assert constant.op.type == op_types.CONST


def test_decode_raw_bytes_and_settings_decode_again():
    with tc.legacy_graph():
        data = tf.constant([b"\x01\x02\x03\x04"])
        decoded = tf.io.decode_raw(data, tf.uint16, little_endian=False)
        again = tf.io.decode_raw(op_types.decode_raw_bytes(decoded.op),
                                 **op_types.decode_raw_settings(decoded.op))
        with v1.Session() as session:
            assert session.run(again).tolist() == session.run(decoded).tolist() == [[258, 772]]
    assert op_types.decode_raw_bytes(decoded.op) is data


def test_next_element_arguments_take_the_next_element_of_the_same_iterator():
    with tc.legacy_graph():
        element = v1.data.make_one_shot_iterator(
            tf.data.Dataset.range(4).map(lambda x: (x, [x, x]))).get_next()
        first = element[0].op
        assert first.type == op_types.ITERATOR_GET_NEXT
        assert op_types.iterator_of(first).dtype == tf.resource
        following = getattr(tf.raw_ops, op_types.ITERATOR_GET_NEXT)(
            **op_types.next_element_arguments(first))
        with v1.Session() as session:
            assert session.run(element[0]) == 0
            value, pair = session.run(following)
            assert (value, pair.tolist()) == (1, [1, 1])


@pytest.mark.parametrize("use_resource", [True, False])
def test_a_variable_is_read_and_assigned_at_these_inputs(use_resource):
    with tc.legacy_graph():
        variable = v1.Variable(["a"], use_resource=use_resource)
        read = variable.value().op
        assign = variable.assign(["b"], read_value=False)
        constant = tf.constant(1).op
    assert read.type == (op_types.READ_VARIABLE if use_resource else op_types.IDENTITY)
    assert op_types.read_variable(read).type == (
        op_types.RESOURCE_VARIABLE if use_resource else "VariableV2")
    assert assign.type == (op_types.ASSIGN_VARIABLE if use_resource else op_types.REF_ASSIGN)
    assert tf.get_static_value(op_types.assigned_value(assign)).tolist() == [b"b"]
    assert op_types.read_variable(constant) is None


# ------------------------------------------------------------ GraphDef input names

def test_graph_def_input_names_are_tensorflows():
    with tc.legacy_graph() as graph:
        pair = tf.raw_ops.Unique(x=tf.constant([3, 3, 4], name="values"), name="unique")
        with tf.control_dependencies([tf.constant(0, name="first")]):
            tf.add(pair.y, pair.idx, name="total")
    node = next(node for node in graph.as_graph_def().node if node.name == "total")
    names = [parse_input(text) for text in node.input]
    assert names == [InputName("unique"), InputName("unique", 1), InputName("first", control=True)]
    assert [str(name) for name in names] == list(node.input)
    assert graph.get_tensor_by_name(InputName("unique", 1).tensor) is pair.idx
    assert parse_input(pair.idx.name) == InputName("unique", 1)
    assert data_inputs(node) == names[:2]
    assert {"unique:0", "unique:1", "values:0"} <= consumed_tensors(graph.as_graph_def())
    assert "first:0" not in consumed_tensors(graph.as_graph_def())


def test_graph_def_edits_import_and_compute():
    with tc.legacy_graph() as graph:
        x = tf.constant(5, name="x")
        y = tf.constant(7, name="y")
        with v1.colocate_with(x.op), tf.control_dependencies([y]):
            tf.multiply(x, 2, name="double")
        unused = tf.add(x, 1, name="unused")
    graph_def = graph.as_graph_def()
    assert op_types.COLOCATION in next(n for n in graph_def.node if n.name == "double").attr
    sub = sub_graph_def(graph_def, {"x", "double", "unused", "double/y"})
    assert all(op_types.COLOCATION not in node.attr and not any(
        parse_input(text).control for text in node.input) for node in sub.node)
    name = add_constant_node(sub, "x", tf.make_tensor_proto(11))
    assert name == "x_1"
    rename_inputs(sub, {"x:0": f"{name}:0"})
    keep_reachable(sub, ["double:0"])
    assert sorted(node.name for node in sub.node) == sorted(["x_1", "double", "double/y"])
    with tf.Graph().as_default():
        result, = v1.import_graph_def(sub, return_elements=["double:0"], name="")
        with v1.Session() as session:
            assert session.run(result) == 22
    assert unused.op.name == "unused"


# ------------------------------------------------------------ walks

def test_walk_goes_breadth_first_once_each_and_stops_where_told():
    edges = {"a": ["b", "c"], "b": ["d"], "c": ["d", "e"], "d": ["a"], "e": []}
    assert walk(["a"], edges.__getitem__) == ["a", "b", "c", "d", "e"]
    expanded = []
    assert walk(["a", "a"], lambda n: expanded.append(n) or edges[n], stop={"c"}.__contains__) \
        == ["a", "b", "c", "d"]
    assert expanded == ["a", "b", "d"]


def test_fixpoint_repeats_until_a_pass_changes_nothing():
    depth = {"a": 0, "b": 0, "c": 1}
    after = {"a": "b", "b": "c", "c": None}

    def deepen(name):   # a takes b's depth + 1, b takes c's: needs passes in this order
        below = after[name]
        if below is not None and depth[below] + 1 > depth[name]:
            depth[name] = depth[below] + 1
            return True
        return False
    fixpoint(["a", "b", "c"], deepen)
    assert depth == {"a": 3, "b": 2, "c": 1}


def test_ancestors_follow_data_and_control_inputs_and_stop():
    with tc.legacy_graph():
        x = tf.constant(1, name="x")
        y = tf.constant(2, name="y")
        with tf.control_dependencies([y]):
            z = tf.add(x, 1, name="z")
        w = tf.identity(z, name="w")
    assert {op.name for op in ancestors([w])} == {"w", "z", "x", "y", "z/y"}
    assert {op.name for op in ancestors([w], lambda op: op.name == "z")} == {"w", "z"}
