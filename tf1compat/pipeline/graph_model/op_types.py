"""What tf1compat assumes about TensorFlow's graphs, in one place and TF-free.

Op types (V2 ops take resource handles; the TF1-era ones, refs), the inputs
they take by position and the attributes read (each behind an accessor the wings
call: ``value_input(op)``, ``parse_records(parse)``, ...), the texts of the error
messages parsed, and the lines TensorFlow logs by itself that differ between its
releases (:data:`TENSORFLOW_LOG_LINES`). ``tests/test_graph_model.py`` checks each
against TensorFlow.
"""

import re
from typing import Any, NamedTuple

from tf1compat._typing import NodeDef, Operation, Tensor

QUEUE_RUNNERS = "queue_runners"  # tf.compat.v1.GraphKeys.QUEUE_RUNNERS

# ------------------------------------------------------------------- queues
FIFO_QUEUE, PADDING_QUEUE = "FIFOQueueV2", "PaddingFIFOQueueV2"
SHUFFLE_QUEUE = "RandomShuffleQueueV2"
INPUT_QUEUES = frozenset({FIFO_QUEUE, PADDING_QUEUE, SHUFFLE_QUEUE})  # what TF1's input API builds
QUEUES = INPUT_QUEUES | {"PriorityQueueV2", "FIFOQueue", "PaddingFIFOQueue",
                         "RandomShuffleQueue", "PriorityQueue"}
ENQUEUE, ENQUEUE_MANY = "QueueEnqueueV2", "QueueEnqueueManyV2"
ENQUEUES_ONE = frozenset({ENQUEUE, "QueueEnqueue"})
ENQUEUES = ENQUEUES_ONE | {ENQUEUE_MANY, "QueueEnqueueMany"}
DEQUEUE, DEQUEUE_MANY, DEQUEUE_UP_TO = "QueueDequeueV2", "QueueDequeueManyV2", "QueueDequeueUpToV2"
DEQUEUES_ONE = frozenset({DEQUEUE, "QueueDequeue"})
DEQUEUES_UP_TO = frozenset({DEQUEUE_UP_TO, "QueueDequeueUpTo"})  # allow_smaller_final_batch
DEQUEUES_BATCH = DEQUEUES_UP_TO | {DEQUEUE_MANY, "QueueDequeueMany"}
DEQUEUES = DEQUEUES_ONE | DEQUEUES_BATCH

# ------------------------------------------------------------------- readers
READ, READ_UP_TO = "ReaderReadV2", "ReaderReadUpToV2"
READS_ONE = frozenset({READ, "ReaderRead"})
READS_UP_TO = frozenset({READ_UP_TO, "ReaderReadUpTo"})
READS = READS_ONE | READS_UP_TO
TFRECORD_READER, FIXED_LENGTH_READER = "TFRecordReaderV2", "FixedLengthRecordReaderV2"
TEXT_LINE_READER, WHOLE_FILE_READER = "TextLineReaderV2", "WholeFileReaderV2"
READERS = (TFRECORD_READER, FIXED_LENGTH_READER, TEXT_LINE_READER, WHOLE_FILE_READER)
# Attributes every reader op has that name the instance, not how it reads.
READER_INSTANCE_ATTRIBUTES = ("container", "shared_name")

# ------------------------------------------------------ producers and variables
IDENTITY = "Identity"
COUNT_UP_TO = frozenset({"CountUpTo", "ResourceCountUpTo"})  # num_epochs; attribute "limit"
RANDOM_SHUFFLE = "RandomShuffle"                              # string_input_producer(shuffle=True)
RESOURCE_VARIABLE, READ_VARIABLE = "VarHandleOp", "ReadVariableOp"
ASSIGN_VARIABLE = "AssignVariableOp"
REF_VARIABLES, REF_ASSIGN = frozenset({"VariableV2", "Variable"}), "Assign"
VARIABLES = REF_VARIABLES | {RESOURCE_VARIABLE, "TemporaryVariable"}
# Ops reading a variable without writing it.
VARIABLE_READS = frozenset({READ_VARIABLE, "VarIsInitializedOp", IDENTITY,
                            "IsVariableInitialized"})

# ------------------------------------------------------------- everything else
PLACEHOLDERS = frozenset({"Placeholder", "PlaceholderV2"})
ITERATOR_GET_NEXT = "IteratorGetNext"
ITERATOR_OUTPUTS = frozenset({ITERATOR_GET_NEXT, "IteratorGetNextSync",
                              "IteratorGetNextAsOptional"})
# How tf.train.batch & co. carry a SparseTensor through a queue: handles into a map.
SPARSE_MAPS = frozenset({"AddSparseToTensorsMap", "AddManySparseToTensorsMap",
                         "TakeManySparseFromTensorsMap"})
PY_FUNCS = frozenset({"PyFunc", "PyFuncStateless", "EagerPyFunc"})
# Ops that write a summary (what tf.summary.image & co. make) and merge them.
SUMMARIES = frozenset({"ImageSummary", "ScalarSummary", "HistogramSummary", "AudioSummaryV2",
                       "TensorSummaryV2", "MergeSummary"})
# Ops that only pass values on or hold constants.
PLUMBING = frozenset({"Const", IDENTITY, "IdentityN", "NoOp", "StopGradient"})
# A TF1 (v1 control flow) cond: values enter a branch through a Switch and leave it
# through a Merge; between them a tensor has no value when its branch is not taken.
COND_SWITCHES = frozenset({"Switch", "RefSwitch"})
COND_MERGES = frozenset({"Merge", "RefMerge"})
# Batch-then-parse: ops that pfor vectorizes into ops computing the same values
# element by element, bit for bit: they move, select or compare values, or round once.
BATCH_EXACT = PLUMBING | {
    "Reshape", "Cast", "Bitcast", "ExpandDims", "Squeeze", "Transpose", "StridedSlice",
    "Slice", "Pack", "Unpack", "ConcatV2", "Tile", "Pad", "PadV2", "MirrorPad", "ReverseV2",
    "GatherV2", "OneHot", "Shape", "Size", "Rank", "Fill", "ZerosLike", "OnesLike", "Range",
    "Neg", "Abs", "Sign", "Floor", "Ceil", "Round", "Maximum", "Minimum", "ClipByValue",
    "Equal", "NotEqual", "Less", "LessEqual", "Greater", "GreaterEqual", "LogicalAnd",
    "LogicalOr", "LogicalNot", "Select", "SelectV2",
}
# Ops whose output holds their first input's values moved, cast or padded with
# constants: the lowering's cache keeps the narrowest tensor of a chain of them
# (uint8 pixels rather than their float32 cast) and runs the rest after it.
RECOMPUTED_AFTER_CACHE = frozenset({
    IDENTITY, "Cast", "Reshape", "Transpose", "ExpandDims", "Squeeze", "StridedSlice",
    "Pad", "PadV2", "MirrorPad",
})
# Arithmetic and reductions, exact on integers only (on the batch and example by
# example alike). On floats TensorFlow's graph optimizer rewrites them by the graph's
# shape (x / c becomes x * (1 / c), constants are regrouped), so the batched graph can
# round differently from the per-example one (measured).
INTEGER_BATCH_EXACT = frozenset({"Add", "AddV2", "Sub", "Mul", "Square", "FloorDiv", "FloorMod",
                                 "Sum", "Prod", "Max", "Min", "ArgMax", "ArgMin"})
# Ops computing one example's values from its own inputs alone, with no float
# arithmetic for the optimizer to rewrite: run example by example inside a batch's
# call (tf.map_fn) they give the per-example map's values. With BATCH_EXACT and the
# integer arithmetic: decoding, parsing, string work, conds and their checks.
PER_EXAMPLE_EXACT = frozenset({
    "DecodePng", "DecodeJpeg", "DecodeAndCropJpeg", "DecodeImage", "DecodeBmp", "DecodeGif",
    "DecodeRaw", "DecodeCSV", "DecodeBase64", "DecodeCompressed", "ParseExampleV2",
    "ParseSingleExample", "ParseExample", "StringLength", "Substr", "StringJoin",
    "StringStrip", "StringToNumber", "StaticRegexFullMatch", "RegexFullMatch", "Assert",
    "All", "Any", "Switch", "Merge", "If", "StatelessIf", "Case", "StatelessCase",
    "PartitionedCall", "StatefulPartitionedCall",
})
PARSE_EXAMPLE, DECODE_RAW = "ParseExampleV2", "DecodeRaw"
# A v2 tf.cond: inputs the predicate, then the branches' arguments; the branches are
# functions named by these attributes (taken when the predicate is true, false).
IFS = frozenset({"If", "StatelessIf"})
IF_BRANCHES = {True: "then_branch", False: "else_branch"}
IF_OUTPUT_TYPES = "Tout"
# Whether TensorFlow inlines an If op's branches (switch/merge) into the function
# holding it when it instantiates that function (else the op calls the taken branch).
IF_INLINED = "_lower_using_switch_merge"
ASSERT = "Assert"
# Ops making a record a vector of one (slim's decoder parses ``expand_dims(record, 0)``
# with parse_example, its reader key ``reshape(key, [1])`` the example's name).
EXPAND_DIMS, RESHAPE = "ExpandDims", "Reshape"
# ParseExampleV2 (parse_example and parse_single_example): inputs serialized, names,
# sparse_keys, dense_keys, ragged_keys, then one dense default per dense key; the
# list attributes holding one entry per key, by kind of key; "num_sparse" counts
# the sparse keys. Outputs: sparse indices, values and shapes (one each per sparse
# key), dense values, ragged values, ragged row splits.
PARSE_KEY_KINDS = ("sparse", "dense", "ragged")
PARSE_RECORDS_INPUT, PARSE_NAMES_INPUT = 0, 1
PARSE_KEYS_INPUT = {"sparse": 2, "dense": 3, "ragged": 4}
PARSE_FIRST_DEFAULT = 5
# (tf.raw_ops.ParseExampleV2 infers the dense keys' types from their defaults)
PARSE_DENSE_TYPES, PARSE_DENSE_SHAPES = "Tdense", "dense_shapes"
PARSE_KEY_ATTRIBUTES = {"sparse": ("sparse_types",),
                        "dense": (PARSE_DENSE_TYPES, PARSE_DENSE_SHAPES),
                        "ragged": ("ragged_value_types", "ragged_split_types")}
PARSE_NUM_SPARSE = "num_sparse"
# The element type most ops compute on (Identity, Add, ...); a Const's or a
# Placeholder's type; a Const's value (a TensorProto).
TYPE_ATTRIBUTE, DTYPE_ATTRIBUTE, CONST_VALUE = "T", "dtype", "value"
CONST = "Const"
# A node's colocation constraints (``loc:@op`` entries: tf.compat.v1.colocate_with).
COLOCATION = "_class"
# The element types and shapes an IteratorGetNext op gives.
ITERATOR_ELEMENT_ATTRIBUTES = ("output_types", "output_shapes")
# DecodeRaw's settings: its output type and byte order.
DECODE_RAW_ATTRIBUTES = ("out_type", "little_endian")
# Ops that can end a pipeline with OutOfRangeError besides a closed queue: the epoch
# counter of producers with num_epochs, py_func generators, tf.data iterators.
ENDING = COUNT_UP_TO | PY_FUNCS | ITERATOR_OUTPUTS
# Op type prefixes of ops whose results depend on state outside one record.
STATEFUL_PREFIXES = ("Queue", "Reader", "Iterator", "MultiDeviceIterator", "Stage",
                     "Unstage", "Barrier", "Accumulator", "TensorArray")


def queue_handle(op: Operation) -> Tensor | None:
    """The queue handle a dequeue, enqueue or read op takes, or None for other ops."""
    if op.type in READS:
        return op.inputs[1]
    if op.type in DEQUEUES or op.type in ENQUEUES:
        return op.inputs[0]
    return None


def reader_op(read: Operation) -> Operation:
    """The reader op behind a read op."""
    return read.inputs[0].op


def enqueued(enqueue: Operation) -> list[Tensor]:
    """The tensors an enqueue op puts in its queue."""
    return list(enqueue.inputs[1:])


def batch_size_input(dequeue: Operation) -> Tensor:
    """The tensor holding a batching dequeue's batch size."""
    return dequeue.inputs[1]


def value_input(op: Operation) -> Tensor:
    """The tensor whose values an op that passes, moves or casts them takes (Identity,
    ExpandDims, Reshape, the RECOMPUTED_AFTER_CACHE ops): its first input."""
    return op.inputs[0]


def shaping_inputs(op: Operation) -> list[Tensor]:
    """The inputs of such an op besides its values: a shape, an axis, a permutation,
    paddings, slice bounds."""
    return list(op.inputs[1:])


def expand_dims_axis(expand_dims: Operation) -> Tensor:
    """The tensor holding the axis an ExpandDims op adds."""
    return expand_dims.inputs[1]


def read_variable(read: Operation) -> Operation | None:
    """The op a variable read takes its value from (a ReadVariableOp: the resource
    variable; the Identity of a ref variable: the variable), or None for an op without
    inputs."""
    return read.inputs[0].op if read.inputs else None


def assigned_value(assign: Operation) -> Tensor:
    """The tensor an Assign or AssignVariableOp op writes into its variable."""
    return assign.inputs[1]


def iterator_of(get_next: Operation) -> Tensor:
    """The iterator (a resource tensor) an IteratorGetNext op takes an element from."""
    return get_next.inputs[0]


def next_element_arguments(get_next: Operation) -> dict[str, Any]:
    """The arguments of ``tf.raw_ops.IteratorGetNext`` that take another element from
    the iterator of ``get_next`` (an IteratorGetNext op), of the same types and shapes."""
    return {"iterator": iterator_of(get_next),
            **{name: get_next.get_attr(name) for name in ITERATOR_ELEMENT_ATTRIBUTES}}


def cond_predicate(cond: Operation) -> Tensor:
    """The predicate of an ``If`` / ``StatelessIf`` op (its first input)."""
    return cond.inputs[0]


def decode_raw_bytes(decode: Operation) -> Tensor:
    """The strings a DecodeRaw op decodes."""
    return decode.inputs[0]


def decode_raw_settings(decode: Operation) -> dict[str, Any]:
    """``{"out_type", "little_endian"}`` of a DecodeRaw op, as ``tf.io.decode_raw``
    takes them."""
    return {name: decode.get_attr(name) for name in DECODE_RAW_ATTRIBUTES}


def node_type(node: NodeDef) -> int | None:
    """The element type (a DataType number) a NodeDef's op computes on (its ``T``
    attribute), or None for an op without one."""
    return node.attr[TYPE_ATTRIBUTE].type if TYPE_ATTRIBUTE in node.attr else None


def op_seeds(op: Operation) -> tuple[int, int]:
    """``(seed, seed2)`` of a random op or a RandomShuffleQueue."""
    return op.get_attr("seed"), op.get_attr("seed2")


def queue_kind(queue: Operation) -> str:
    """How TensorFlow's messages call a queue op's kind: ``FIFOQueue``, ``RandomShuffleQueue``."""
    kind: str = queue.type.removesuffix("V2")
    return kind


def runner_queue_name(runner: Any) -> str:
    """The op name of the queue a ``QueueRunner`` feeds (``runner.queue.name`` is the
    short name when eager execution is on)."""
    name: str = runner.queue.queue_ref.op.name
    return name


def count_limit(counter: Operation) -> int:
    """The limit of a CountUpTo op (a producer's num_epochs)."""
    limit: int = counter.get_attr("limit")
    return limit


def parse_key_counts(parse: Operation) -> dict[str, int]:
    """``{kind: number of keys}`` of a ParseExampleV2 op."""
    return {"sparse": parse.get_attr(PARSE_NUM_SPARSE),
            "dense": len(parse.get_attr(PARSE_DENSE_TYPES)),
            "ragged": len(parse.get_attr("ragged_value_types"))}


def parse_records(parse: Operation) -> Tensor:
    """The serialized records a ParseExampleV2 op parses."""
    return parse.inputs[PARSE_RECORDS_INPUT]


def parse_names(parse: Operation) -> Tensor:
    """The tensor of the example names a ParseExampleV2 op takes (empty: no names)."""
    return parse.inputs[PARSE_NAMES_INPUT]


def parse_keys(parse: Operation, kind: str) -> Tensor:
    """The tensor of a ParseExampleV2 op's keys of ``kind`` (PARSE_KEY_KINDS)."""
    return parse.inputs[PARSE_KEYS_INPUT[kind]]


def parse_keys_and_defaults(parse: Operation) -> list[Tensor]:
    """A ParseExampleV2 op's inputs after the names: its three key lists, then one
    default per dense key."""
    return list(parse.inputs[PARSE_KEYS_INPUT["sparse"]:])


def parse_dense_shapes(parse: Operation) -> list[Any]:
    """The shapes of a ParseExampleV2 op's dense keys."""
    shapes: list[Any] = parse.get_attr(PARSE_DENSE_SHAPES)
    return shapes


def parse_key_attributes(parse: Operation,
                         kept: dict[str, list[int]]) -> dict[str, list[Any]]:
    """``{attribute: values}``: a ParseExampleV2 op's per-key attributes
    (PARSE_KEY_ATTRIBUTES) for the keys at ``kept`` (``{kind: positions}``), named as
    ``tf.raw_ops.ParseExampleV2`` takes them (without the inferred PARSE_DENSE_TYPES)."""
    return {name: [parse.get_attr(name)[i] for i in kept[kind]]
            for kind, names in PARSE_KEY_ATTRIBUTES.items() for name in names
            if name != PARSE_DENSE_TYPES}


def parse_output_positions(counts: dict[str, int]) -> dict[str, list[tuple[int, ...]]]:
    """``{kind: [output positions of each key]}`` of a ParseExampleV2 op with ``counts``
    keys of each kind: ``(indices, values, shape)`` per sparse key, ``(values,)`` per
    dense key, ``(values, row splits)`` per ragged key."""
    sparse, dense, ragged = counts["sparse"], counts["dense"], counts["ragged"]
    first_ragged = 3 * sparse + dense
    return {"sparse": [(i, sparse + i, 2 * sparse + i) for i in range(sparse)],
            "dense": [(3 * sparse + i,) for i in range(dense)],
            "ragged": [(first_ragged + i, first_ragged + ragged + i) for i in range(ragged)]}


def parse_key_is_required(parse: Operation, index: int) -> bool:
    """Whether a ParseExampleV2 op's dense key ``index`` has no default (a record without
    it fails the parse): its default has no elements; True when that is unknown."""
    elements = parse.inputs[PARSE_FIRST_DEFAULT + index].shape.num_elements()
    return elements is None or elements == 0


def queue_capacity(queue: Operation) -> int:
    capacity: int = queue.get_attr("capacity")
    return capacity


def min_after_dequeue(queue: Operation) -> int:
    kept: int = queue.get_attr("min_after_dequeue")
    return kept


# ------------------------------------------------------------ message texts
NODE_TAG = re.compile(r"\{\{node ([^}]+)\}\}")
CALLER_TAG = re.compile(r"\[\[([^\]{}\s]+)\]\]")  # a graph op that ran a function
FUNCTION_TAG = re.compile(r"\{\{function_node ([^}]+)\}\}")
NODE_SUFFIX = re.compile(r"\s*\[\[((?:\{\{[a-z_]+ [^}]+\}\})+)\]\]")
# What tf.compat.v1.train.start_queue_runners logs when a graph has no queue runners.
NO_QUEUE_RUNNERS_NOTICE = "was called when no queue runners were defined"
# What a batching dequeue raises (OutOfRangeError) when its queue is closed and short:
# the queue's kind (its op type without V2) and resource name ("_1_batch/fifo_queue").
QUEUE_END_MESSAGE = ("{kind} '{name}' is closed and has insufficient elements "
                     "(requested {requested}, current size {size})")
# A TFRecord reader's damage: the offset of the record, or of its data for a data CRC.
RECORD_ERROR = re.compile(r"(corrupted|truncated) record at (\d+)")


# ------------------------------------------------------ TensorFlow's own log lines
# Lines some TensorFlow releases write to standard error by themselves while sessions
# run, changing no result: tf1compat's sessions leave out the installed release's
# (tf1compat.pipeline.tf_log), with TensorFlow's start-up notices (tf1compat._tf), which
# the releases writing the first-run line write just before it instead of at load.
END_OF_INPUT = "end of input"            # each step that ends with OUT_OF_RANGE
FIRST_SESSION_RUN = "first session run"  # once per process


class LogLine(NamedTuple):
    """A line TensorFlow writes by itself: the regular expression it matches whole,
    the minor versions that write it, and when (:data:`END_OF_INPUT`,
    :data:`FIRST_SESSION_RUN`). The lines after it indented with a tab (the ops of a
    status) belong to it."""

    pattern: str
    minors: frozenset[str]
    when: str


TENSORFLOW_LOG_LINES = (
    # A step's aborted rendezvous: a WARNING on 2.16 (which TF_CPP_MIN_LOG_LEVEL=1,
    # the quiet start-up's, shows), an INFO line from 2.17 on.
    LogLine(r"[\d-]+ [\d:.]+: W tensorflow/core/framework/local_rendezvous\.cc:\d+\] "
            r"Local rendezvous is aborting with status: .*", frozenset({"2.16"}), END_OF_INPUT),
    # Logged through absl, before absl's logging is set up, so no TF_CPP_MIN_LOG_LEVEL
    # hides it; 2.17 logs it through TensorFlow's own logging (an INFO line), 2.21
    # not at all at that level.
    LogLine(r"I\d{4} [\d:.]+ +\d+ mlir_graph_optimization_pass\.cc:\d+\] "
            r"MLIR V1 optimization pass is not enabled",
            frozenset({"2.18", "2.19", "2.20"}), FIRST_SESSION_RUN),
)


def log_lines(minor: str,
              whens: tuple[str, ...] = (END_OF_INPUT, FIRST_SESSION_RUN)) -> str | None:
    """The regular expression of the lines TensorFlow ``minor`` (``"2.16"``) writes by
    itself at ``whens``, or None when it writes none."""
    return "|".join(line.pattern for line in TENSORFLOW_LOG_LINES
                    if minor in line.minors and line.when in whens) or None


# ------------------------------------- module paths (tf1compat port --verify)
# The functions making TF1's stateful random ops, by the kind of draw: --verify makes
# them fixed stateless draws on both sides.
RANDOM_OP_MODULE = "tensorflow.python.ops.gen_random_ops"
RANDOM_OP_FUNCTIONS = {"random_uniform": "uniform", "random_uniform_int": "uniform_int",
                       "random_standard_normal": "normal",
                       "truncated_normal": "truncated_normal", "random_shuffle": "shuffle"}
# Where TF1's producers apply num_epochs (input_producer calls it as a module global).
EPOCH_LIMIT = ("tensorflow.python.training.input", "limit_epochs")
# The class whose run() every session run goes through (Session, MonitoredSession).
SESSION_RUN = ("tensorflow.python.client.session", "BaseSession")
# The Graph method that lets a graph Supervisor or MonitoredSession finalized take new
# ops again (--verify reads the pipelines in sessions of its own).
GRAPH_UNFINALIZE = "_unsafe_unfinalize"
