"""Say where a TF1 pipeline step failed: the op, and the file, record and byte offset.

An error raised in a queue-runner thread names only its node (``corrupted record
at 38``, ``Unknown image file format``), and the consumer sees ``FIFOQueue ... is
closed and has insufficient elements``. :func:`explain_runner_error` returns an
``OpError`` of the same type whose message also says where, using what the graph
knows about the reader's files (:mod:`tf1compat.pipeline.graph_model`):

* a reader's ``corrupted record at N`` / ``truncated record at N`` is located in
  the reader's files: ``train.tfrecord: record 3 at byte 78: data CRC mismatch``;
* a per-example op downstream of a reader (``decode_png`` on garbage, a bad
  reshape) is run again on the reader's records one by one, fed in place of the
  reader's outputs, until one fails the same way (within a time budget): the
  message names that record and its reader key;
* otherwise it lists the files the reader (or a fast path's tf.data reading, as the
  graph's notes say) was reading.

Used by :class:`~tf1compat.SessionIterator` and by run mode (``tf1compat.v1``).
"""

import os
import time

from tf1compat._tf import tf
from tf1compat.errors import CorruptRecordError
from tf1compat.pipeline.graph_model import op_types
from tf1compat.pipeline.graph_model.index import files_read, graph_index, graph_notes
from tf1compat.pipeline.graph_model.readers import spec_of_reader_op
from tf1compat.pipeline.graph_model.structure import ancestors
from tf1compat.records import tfrecord

__all__ = ["explain_runner_error", "failing_op", "EXPLAINED_MARK"]

# Appended to every explained message; an error carrying it is not explained twice.
EXPLAINED_MARK = "\n[tf1compat] "
_FILES_SHOWN = 5


def failing_op(error, graph):
    """The graph op that raised ``error`` (errors from runner threads carry only its
    name); for an op inside a function, the fast path's ``get_next`` that ran it
    (tf.data names it ``[[NAME]]`` after the function's nodes), else None (for
    instance a branch of a v2 ``cond``)."""
    if error.op is not None:
        return error.op
    tags = _node_tags(error.message)
    match = (op_types.NODE_TAG.search(error.message) if tags is None
             else op_types.NODE_TAG.match(tags))
    names = [match.group(1)] if match is not None else []
    for name in names + op_types.CALLER_TAG.findall(error.message):
        try:
            op = graph.get_operation_by_name(name)
        except (KeyError, ValueError):
            continue
        if name in names or _fast_path_files(op) is not None:
            return op
    return None


def _describe_failing_node(error, op):
    if op is not None:
        return f"op '{op.name}' ({op.type})"
    functions = op_types.FUNCTION_TAG.findall(error.message)
    nodes = op_types.NODE_TAG.findall(error.message)
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
    elif session is not None and (op is None or op.type not in op_types.READS):
        details.append(_replay_failing_record(error, op, graph, session, deadline))
    message = error.message + EXPLAINED_MARK + "; ".join(d for d in details if d)
    return type(error)(error.node_def, error.op, message)


def _list_files(files):
    shown = ", ".join(repr(f) for f in files[:_FILES_SHOWN])
    more = f" and {len(files) - _FILES_SHOWN} more" if len(files) > _FILES_SHOWN else ""
    return f"reading from {shown}{more}"


# ------------------------------------------------------------------ reader errors

def _fast_path_files(op):
    """``(files, compression)`` a fast path's ``get_next`` op reads, or None."""
    return graph_notes(op.graph).fast_path_files(op.name)


def _files_and_compression(op):
    """``(files, compression)`` a reader op or a fast path's ``get_next`` reads, when
    known; compression is "GZIP", "ZLIB" or None for TFRecords, else None."""
    if op is None:
        return None, None
    if op.type not in op_types.READS:
        return _fast_path_files(op) or (None, None)
    spec = spec_of_reader_op(op_types.reader_op(op))
    return files_read(op), spec and spec.compression


def _locate_reader_error(error, files, compression, deadline):
    match = op_types.RECORD_ERROR.search(error.message)
    if match and isinstance(error, tf.errors.DataLossError):
        located = _locate_damaged_record(files, int(match.group(2)), compression, deadline)
        if located is not None:
            return str(located)
    return _list_files(files)


def _locate_damaged_record(files, offset, compression, deadline):
    """The CorruptRecordError of the file whose record at ``offset`` is damaged.

    TensorFlow reports the start of the record, or for a data CRC mismatch the
    start of its data, after its header. Only records up to that offset are read.
    """
    for path in files:
        if time.monotonic() > deadline:
            return None
        if compression is None and _size_or_zero(path) <= offset:
            continue  # no record of this file starts or ends past the offset
        try:
            start = 0
            for data in tfrecord.iter_records(path, compression=compression):
                start += tfrecord.framed_size(len(data))
                if start > offset:
                    break
        except CorruptRecordError as e:
            if offset in (e.offset, e.offset + tfrecord.HEADER_SIZE):
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

def _enqueued_components(graph, op=None):
    """Per enqueue op of the graph's queue runners, the tensors it enqueues (only
    those computed from ``op``, when given)."""
    groups = []
    for enqueue in graph_index(graph).enqueue_ops():
        components = op_types.enqueued(enqueue)
        if components and (op is None or op in ancestors(
                components, lambda o: o.type in op_types.READS)):
            groups.append(components)
    return groups


def _reader_feeding(dequeue, graph):
    """For a dequeue from a queue filled straight from readers (tf-slim's common
    queue): the read ops, when every enqueue puts exactly a reader's outputs."""
    readers = []
    for enqueue in graph_index(graph).enqueue_ops(op_types.queue_handle(dequeue).op.name):
        components = op_types.enqueued(enqueue)
        read = components[0].op if components else None
        if read is None or read.type not in op_types.READS or components != list(read.outputs):
            return None
        readers.append(read)
    return readers or None


def _record_sources(targets, graph):
    """Map each source tensor (fed during a replay) to the read op whose outputs
    it stands for; None when something else stateful feeds the targets."""
    sources, isolated = {}, True

    def stop(op):
        nonlocal isolated
        if op.type in op_types.READS:
            sources.update({t: (op, t.value_index) for t in op.outputs})
            return True
        if op.type in op_types.DEQUEUES_ONE:
            readers = _reader_feeding(op, graph)
            if readers is None:
                isolated = False
            else:
                sources.update({t: (readers[0], t.value_index) for t in op.outputs})
            return True
        if op.type.startswith(op_types.STATEFUL_PREFIXES):
            isolated = False
            return True
        return False

    ancestors(targets, stop)
    if not isolated or not sources:
        return None
    readers = [read for read, _ in sources.values()]
    first = readers[0]
    same_input = all(op_types.queue_handle(r).op is op_types.queue_handle(first).op
                     and r.type == first.type for r in readers)
    return sources if same_input else None


def _iter_reader_records(read_op):
    """(description, key, value) of every record the reader behind ``read_op`` would
    read from its queue's files."""
    spec = spec_of_reader_op(op_types.reader_op(read_op))
    for path in (files_read(read_op) or ()) if spec else ():
        yield from spec.iter_records(path)


def _strip_node(message):
    return op_types.NODE_SUFFIX.sub("", message).strip()


def _node_tags(message):
    """The ``{{function_node ...}}{{node ...}}`` path of the op that failed."""
    tags = op_types.NODE_SUFFIX.findall(message)
    return tags[-1].strip() if tags else None


def _last_node(message):
    """The innermost node named in ``message`` (the one inside a function, if any:
    errors raised by ``Session.run`` drop the ``function_node`` part)."""
    nodes = op_types.NODE_TAG.findall(message)
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
    batched = read_op.type in op_types.READS_UP_TO
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
    files = files_read(read_op) or ()
    return None, f"{_list_files(files)} (none of the {tried} records replayed fails the same way)"
