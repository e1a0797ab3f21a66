"""Say where a TF1 pipeline step failed: the op, and the file, record and byte offset.

An error raised in a queue-runner thread names only its node (``corrupted record
at 38``, ``Unknown image file format``), and the consumer sees ``FIFOQueue ... is
closed and has insufficient elements``. :func:`explain_runner_error` returns an
``OpError`` of the same type whose message also says where, using what the graph
knows about the reader's files (:func:`~tf1compat.pipeline.queues.queue_files`):

* a reader's ``corrupted record at N`` / ``truncated record at N`` is located in
  the reader's files: ``train.tfrecord: record 3 at byte 78: data CRC mismatch``;
* a per-example op downstream of a reader (``decode_png`` on garbage, a bad
  reshape) is run again on the reader's records one by one, fed in place of the
  reader's outputs, until one fails the same way (within a time budget): the
  message names that record and its reader key;
* otherwise it lists the files the reader (or a fast path's tf.data reading,
  :func:`~tf1compat.pipeline.fastpath.files_read_by`) was reading.

Used by :class:`~tf1compat.SessionIterator` and by run mode (``tf1compat.v1``).
"""

import os
import re
import time

from tf1compat._tf import tf, v1
from tf1compat.errors import CorruptRecordError
from tf1compat.pipeline.fastpath import files_read_by
from tf1compat.pipeline.queues import READER_OPS, queue_files
from tf1compat.records import tfrecord

__all__ = ["explain_runner_error", "failing_op", "ancestors", "EXPLAINED_MARK"]

# Appended to every explained message; an error carrying it is not explained twice.
EXPLAINED_MARK = "\n[tf1compat] "

_READ_OPS = frozenset(READER_OPS)
_BATCHED_READ_OPS = frozenset({"ReaderReadUpToV2", "ReaderReadUpTo"})
_DEQUEUE_OPS = frozenset({"QueueDequeueV2", "QueueDequeue"})
# Ops whose results depend on state outside one record: a replay cannot isolate them.
_STATEFUL_PREFIXES = ("Queue", "Reader", "Iterator", "MultiDeviceIterator", "Stage",
                      "Unstage", "Barrier", "Accumulator", "TensorArray")
_NODE_TAG = re.compile(r"\{\{node ([^}]+)\}\}")
_CALLER_TAG = re.compile(r"\[\[([^\]{}\s]+)\]\]")  # a graph op that ran a function
_FUNCTION_TAG = re.compile(r"\{\{function_node ([^}]+)\}\}")
_NODE_SUFFIX = re.compile(r"\s*\[\[((?:\{\{[a-z_]+ [^}]+\}\})+)\]\]")
_RECORD_ERROR = re.compile(r"(corrupted|truncated) record at (\d+)")
_HEADER_BYTES = 12  # uint64 length + uint32 CRC; TensorFlow reports data errors past it
_FILES_SHOWN = 5


def failing_op(error, graph):
    """The graph op that raised ``error`` (errors from runner threads carry only its
    name); for an op inside a function, the fast path's ``get_next`` that ran it
    (tf.data names it ``[[NAME]]`` after the function's nodes), else None (for
    instance a branch of a v2 ``cond``)."""
    if error.op is not None:
        return error.op
    tags = _node_tags(error.message)
    match = _NODE_TAG.search(error.message) if tags is None else _NODE_TAG.match(tags)
    names = [match.group(1)] if match is not None else []
    for name in names + _CALLER_TAG.findall(error.message):
        try:
            op = graph.get_operation_by_name(name)
        except (KeyError, ValueError):
            continue
        if name in names or files_read_by(op) is not None:
            return op
    return None


def _describe_failing_node(error, op):
    if op is not None:
        return f"op '{op.name}' ({op.type})"
    functions = _FUNCTION_TAG.findall(error.message)
    nodes = _NODE_TAG.findall(error.message)
    if functions and nodes:
        return f"op '{nodes[-1]}' of function '{functions[-1]}'"
    return "an unnamed op"


def explain_runner_error(error, graph, session=None, *,
                         failed="a queue-runner thread failed", budget=10.0):
    """A copy of ``error`` (same ``OpError`` type) whose message says where it happened.

    ``failed`` says what failed (a runner thread, or reading on a fast path).
    ``session`` (still open) lets a per-example error be replayed on single
    records; ``budget`` bounds the seconds spent locating the record. An error
    already explained is returned unchanged.
    """
    if EXPLAINED_MARK in error.message:
        return error
    deadline = time.monotonic() + budget
    op = failing_op(error, graph)
    details = [f"{failed} in {_describe_failing_node(error, op)}"]
    files, compression = _files_and_compression(op)
    if files is not None:
        details.append(_locate_reader_error(error, files, compression, deadline))
    elif session is not None and (op is None or op.type not in _READ_OPS):
        details.append(_replay_failing_record(error, op, graph, session, deadline))
    message = error.message + EXPLAINED_MARK + "; ".join(d for d in details if d)
    return type(error)(error.node_def, error.op, message)


def _list_files(files):
    shown = ", ".join(repr(f) for f in files[:_FILES_SHOWN])
    more = f" and {len(files) - _FILES_SHOWN} more" if len(files) > _FILES_SHOWN else ""
    return f"reading from {shown}{more}"


# ------------------------------------------------------------------ reader errors

def _compression_of(reader_op):
    """"GZIP", "ZLIB" or None for the TFRecordReader behind a read op."""
    reader = reader_op.inputs[0].op
    if reader.type not in ("TFRecordReaderV2", "TFRecordReader"):
        return None
    return reader.get_attr("compression_type").decode() or None


def _files_and_compression(op):
    """``(files, compression)`` a reader op or a fast path's ``get_next`` reads, when
    known; compression is "GZIP", "ZLIB" or None for TFRecords, else None."""
    if op is None:
        return None, None
    if op.type not in _READ_OPS:
        return files_read_by(op) or (None, None)
    return queue_files(op.inputs[1]), _compression_of(op)


def _locate_reader_error(error, files, compression, deadline):
    match = _RECORD_ERROR.search(error.message)
    if match and isinstance(error, tf.errors.DataLossError):
        located = _locate_damaged_record(files, int(match.group(2)), compression, deadline)
        if located is not None:
            return str(located)
    return _list_files(files)


def _locate_damaged_record(files, offset, compression, deadline):
    """The CorruptRecordError of the file whose record at ``offset`` is damaged.

    TensorFlow reports the start of the record, or for a data CRC mismatch the
    start of its data, 12 bytes later. Only records up to that offset are read.
    """
    for path in files:
        if time.monotonic() > deadline:
            return None
        if compression is None and _size_or_zero(path) <= offset:
            continue  # no record of this file starts or ends past the offset
        try:
            start = 0
            for data in tfrecord.iter_records(path, compression=compression):
                start += _HEADER_BYTES + len(data) + 4
                if start > offset:
                    break
        except CorruptRecordError as e:
            if offset in (e.offset, e.offset + _HEADER_BYTES):
                return e
        except OSError:
            continue
    return None


def _size_or_zero(path):
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


# ------------------------------------------------------------ per-example errors

def ancestors(tensors_or_ops, stop):
    """Ops reachable backwards from ``tensors_or_ops``; ``stop(op)`` True ends a path."""
    pending = [getattr(t, "op", t) for t in tensors_or_ops]
    seen = set()
    while pending:
        op = pending.pop()
        if op in seen:
            continue
        seen.add(op)
        if stop(op):
            continue
        pending.extend(t.op for t in op.inputs)
        pending.extend(op.control_inputs)
    return seen


def _enqueued_components(graph, op=None):
    """Per enqueue op of the graph's queue runners, the tensors it enqueues (only
    those computed from ``op``, when given)."""
    groups = []
    for runner in graph.get_collection(v1.GraphKeys.QUEUE_RUNNERS):
        for enqueue in runner.enqueue_ops:
            components = list(enqueue.inputs[1:])
            if components and (op is None or op in ancestors(
                    components, lambda o: o.type in _READ_OPS)):
                groups.append(components)
    return groups


def _reader_feeding(dequeue, graph):
    """For a dequeue from a queue filled straight from readers (tf-slim's common
    queue): the read ops, when every enqueue puts exactly a reader's outputs."""
    queue_name = dequeue.inputs[0].op.name
    readers = []
    for runner in graph.get_collection(v1.GraphKeys.QUEUE_RUNNERS):
        if runner.queue.name != queue_name:
            continue
        for enqueue in runner.enqueue_ops:
            components = list(enqueue.inputs[1:])
            read = components[0].op if components else None
            if read is None or read.type not in _READ_OPS or components != list(read.outputs):
                return None
            readers.append(read)
    return readers or None


def _record_sources(targets, graph):
    """Map each source tensor (fed during a replay) to the read op whose outputs
    it stands for; None when something else stateful feeds the targets."""
    sources, isolated = {}, True

    def stop(op):
        nonlocal isolated
        if op.type in _READ_OPS:
            sources.update({t: (op, t.value_index) for t in op.outputs})
            return True
        if op.type in _DEQUEUE_OPS:
            readers = _reader_feeding(op, graph)
            if readers is None:
                isolated = False
            else:
                sources.update({t: (readers[0], t.value_index) for t in op.outputs})
            return True
        if op.type.startswith(_STATEFUL_PREFIXES):
            isolated = False
            return True
        return False

    ancestors(targets, stop)
    if not isolated or not sources:
        return None
    readers = [read for read, _ in sources.values()]
    first = readers[0]
    same_input = all(r.inputs[1].op is first.inputs[1].op and r.type == first.type
                     for r in readers)
    return sources if same_input else None


def _iter_reader_records(read_op):
    """(description, key, value) of every record the reader behind ``read_op`` would
    read from its queue's files, with TensorFlow's key format per reader type."""
    files = queue_files(read_op.inputs[1]) or ()
    reader = read_op.inputs[0].op
    kind = reader.type.removesuffix("V2")
    for path in files:
        if kind == "TFRecordReader":
            offset = 0
            records = tfrecord.iter_records(path, compression=_compression_of(read_op))
            for index, data in enumerate(records):
                yield f"{path}: record {index} at byte {offset}", f"{path}:{offset}", data
                offset += _HEADER_BYTES + len(data) + 4
        elif kind == "WholeFileReader":
            with open(path, "rb") as f:
                yield path, path, f.read()
        elif kind == "TextLineReader":
            skip = reader.get_attr("skip_header_lines")
            with open(path, "rb") as f:
                for number, line in enumerate(f, start=1):
                    if number > skip:
                        line = line.removesuffix(b"\n").removesuffix(b"\r")
                        yield f"{path}: line {number}", f"{path}:{number}", line
        elif kind == "FixedLengthRecordReader":
            yield from _iter_fixed_length(reader, path)


def _iter_fixed_length(reader, path):
    header, size, footer, hop = (reader.get_attr(a) for a in (
        "header_bytes", "record_bytes", "footer_bytes", "hop_bytes"))
    if hop or reader.get_attr("encoding"):
        return
    with open(path, "rb") as f:
        body = f.read()[header:]
    body = body[:len(body) - footer]
    for index in range(len(body) // size):
        yield (f"{path}: record {index} at byte {header + index * size}", f"{path}:{index}",
               body[index * size:(index + 1) * size])


def _strip_node(message):
    return _NODE_SUFFIX.sub("", message).strip()


def _node_tags(message):
    """The ``{{function_node ...}}{{node ...}}`` path of the op that failed."""
    tags = _NODE_SUFFIX.findall(message)
    return tags[-1].strip() if tags else None


def _last_node(message):
    """The innermost node named in ``message`` (the one inside a function, if any:
    errors raised by ``Session.run`` drop the ``function_node`` part)."""
    nodes = _NODE_TAG.findall(message)
    return nodes[-1] if nodes else None


def _replay_failing_record(error, op, graph, session, deadline):
    """Feed the reader's records, one at a time, to the ops that failed; describe the
    first record that fails with the same error (None when it cannot be isolated).

    ``op`` is None when the error comes from inside a function (a v2 ``cond``):
    then every queue runner's enqueued tensors computed from records are tried.
    """
    groups = _enqueued_components(graph, op) or ([list(op.outputs)] if op is not None else [])
    wanted = (type(error), _last_node(error.message), _strip_node(error.message))
    searched = None
    for targets in groups:
        sources = _record_sources(targets, graph)
        if sources is None or all(t in sources for t in targets):
            continue
        source_ops = frozenset(t.op for t in sources)
        if op is not None and op not in ancestors(targets, source_ops.__contains__):
            continue
        found, searched = _replay(session, targets, sources, wanted, deadline)
        if found is not None:
            return found
    return searched


def _replay(session, targets, sources, wanted, deadline):
    """(description of the first record failing as ``wanted``, None) or (None, a
    summary of what was searched)."""
    feeds = list(sources)
    read_op = next(iter(sources.values()))[0]
    batched = read_op.type in _BATCHED_READ_OPS
    try:
        step = session.make_callable(targets, feed_list=feeds)
    except (ValueError, TypeError, tf.errors.OpError):
        return None, None  # e.g. an op inside a v1 cond context is not fetchable
    error_type, node, core = wanted
    tried = 0
    try:
        for description, key, value in _iter_reader_records(read_op):
            if time.monotonic() > deadline:
                break
            tried += 1
            values = {0: key, 1: value}
            args = [[values[sources[t][1]]] if batched else values[sources[t][1]]
                    for t in feeds]
            try:
                step(*args)
            except tf.errors.OpError as e:
                # Errors raised here carry TensorFlow's "Graph execution error" preamble.
                if type(e) is error_type and _last_node(e.message) == node and core in e.message:
                    return f"the same error comes from {description} (reader key {key!r})", None
    except (OSError, CorruptRecordError):
        pass
    files = queue_files(read_op.inputs[1]) or ()
    return None, f"{_list_files(files)} (none of the {tried} records replayed fails the same way)"
