"""What ``tf1compat port --verify`` does inside the two programs it runs.

Both sides (the original under run mode, the port under plain TensorFlow) get the
same changes before the program starts, so that what their input pipelines
deliver can be compared value by value:

* **randomness frozen**: each stateful random op TF1's ops make (uniform, integer,
  normal draws, shuffles of a tensor) is made as a stateless draw with one fixed
  seed, so an augmentation gives an example the same values whatever order and
  thread it runs in (the random values themselves are not compared: neither side
  can reproduce them run to run);
* **endless epochs bounded**: a producer without ``num_epochs`` (TF1's default) and
  a ``Dataset.repeat()`` without a count read the request's ``epochs`` (``EPOCHS``,
  or more when that gives no whole batch);
* **stopped before training**: the program stops at its first ``sess.run`` that
  reads its input, and each pipeline is read to its end in a session of its own,
  its batches written to a pipe (:class:`Stream`).

This file is also the port side's whole harness, run as a script
(``python _harness.py REQUEST.json``): it imports TensorFlow and the standard
library only, never tf1compat (which it makes unimportable first), and learns
TensorFlow's module paths from the request (the graph model owns them).
"""

import importlib
import json
import os
import pickle
import runpy
import sys
import traceback

EPOCHS = 2   # epochs an endless pipeline is read for


class Stream:
    """Pickled messages on a file descriptor, for each pipeline: ``("seed", pipeline,
    graph seed or None)`` first (the graph-level seed its graph was built with, which
    seeds its shuffles), ``("batch", pipeline, (structure, [arrays]))`` per batch (its
    :func:`structure` and :func:`leaves`), ``("end", pipeline, error or None)`` last
    (alone when the pipeline was not found)."""

    def __init__(self, fd):
        self.file = os.fdopen(fd, "wb")

    def seed(self, index, graph):
        """Send the graph-level seed of ``graph``, where pipeline ``index`` was built."""
        pickle.dump(("seed", index, graph.seed), self.file, protocol=pickle.HIGHEST_PROTOCOL)

    def batch(self, index, value):
        """Send one fetched batch ``value`` (a nest of arrays) of pipeline ``index``."""
        pickle.dump(("batch", index, (structure(value), leaves(value))), self.file,
                    protocol=pickle.HIGHEST_PROTOCOL)

    def end(self, index, error=None):
        pickle.dump(("end", index, error), self.file, protocol=pickle.HIGHEST_PROTOCOL)
        self.file.flush()

    def close(self):
        self.file.close()


def leaves(value):
    """The arrays of a fetched structure, in order (a dict's by sorted key)."""
    if isinstance(value, dict):
        return [leaf for key in sorted(value) for leaf in leaves(value[key])]
    if isinstance(value, (list, tuple)):
        return [leaf for item in value for leaf in leaves(item)]
    return [value]


def structure(value):
    """The nesting of a fetched structure, its arrays left out: a dict's keys, a list's
    or tuple's length (TF1's batching calls give lists where tf.data gives tuples: the
    same to the program, which indexes or unpacks them), ``"array"`` for a leaf."""
    if isinstance(value, dict):
        return {key: structure(value[key]) for key in sorted(value)}
    if isinstance(value, (list, tuple)):
        return tuple(structure(item) for item in value)
    return "array"


def session_config():
    """A session configuration that runs the ops as the graph has them: Grappler's
    rewrites (``x / 255.0`` as ``x * (1 / 255.0)``, ...) would round floats another way
    on each side (a tf.data function is not rewritten as a session's graph is)."""
    import tensorflow as tf

    config = tf.compat.v1.ConfigProto()
    config.graph_options.rewrite_options.disable_meta_optimizer = True
    return config


def _fixed_seed(tf):
    return tf.constant([1729, 87539319], tf.int64)


def freeze_randomness(module_name, functions):
    """Make the stateful random ops of ``module_name`` (``{function: kind}``) fixed
    stateless draws (see the module docstring)."""
    import tensorflow as tf

    module = importlib.import_module(module_name)

    def uniform(shape, dtype, *args, **kwargs):
        return tf.random.stateless_uniform(shape, _fixed_seed(tf), dtype=dtype)

    def uniform_int(shape, minval, maxval, *args, **kwargs):
        minval = tf.convert_to_tensor(minval)
        return tf.random.stateless_uniform(shape, _fixed_seed(tf), minval=minval,
                                           maxval=maxval, dtype=minval.dtype)

    def normal(shape, dtype, *args, **kwargs):
        return tf.random.stateless_normal(shape, _fixed_seed(tf), dtype=dtype)

    def truncated_normal(shape, dtype, *args, **kwargs):
        return tf.random.stateless_truncated_normal(shape, _fixed_seed(tf), dtype=dtype)

    def shuffle(value, *args, **kwargs):
        return tf.identity(value)

    kinds = {"uniform": uniform, "uniform_int": uniform_int, "normal": normal,
             "truncated_normal": truncated_normal, "shuffle": shuffle}
    for name, kind in functions.items():
        setattr(module, name, kinds[kind])


def bound_repeats(epochs=EPOCHS):
    """``Dataset.repeat()`` (no count, or -1) repeats ``epochs`` times."""
    import tensorflow as tf

    original = tf.data.Dataset.repeat

    def repeat(self, count=None, name=None):
        if count is None or (isinstance(count, int) and count < 0):
            count = epochs
        return original(self, count, name=name) if name else original(self, count)
    tf.data.Dataset.repeat = repeat


def block(package):
    """Make ``import package`` fail, as when it is not installed."""
    sys.modules[package] = None


class _Stopped(SystemExit):
    """Ends the ported program at its first read of an iterator."""


class PortWatcher:
    """The port side: records each dataset the program makes an iterator of (with
    the line that made it), and stops the program at its first ``sess.run`` that
    reads one."""

    def __init__(self, files, session, unfinalize, iterator_outputs):
        self.files = {os.path.realpath(f) for f in files}
        self.unfinalize = unfinalize
        self.iterator_outputs = frozenset(iterator_outputs)
        self.datasets = []           # (file, line, dataset)
        self.session_module, self.session_class = session
        self.stopped = False

    def install(self):
        import tensorflow as tf

        original_iterator = tf.compat.v1.data.make_one_shot_iterator
        watcher = self

        def make_one_shot_iterator(dataset):
            frame = next((f for f in reversed(traceback.extract_stack()[:-1])
                          if os.path.realpath(f.filename) in watcher.files), None)
            if frame is not None:
                watcher.datasets.append((os.path.realpath(frame.filename), frame.lineno,
                                         dataset))
            return original_iterator(dataset)
        tf.compat.v1.data.make_one_shot_iterator = make_one_shot_iterator
        self.original_iterator = original_iterator
        module = importlib.import_module(self.session_module)
        session_class = getattr(module, self.session_class)
        original_run = session_class.run

        def run(session, fetches, *args, **kwargs):
            if not watcher.stopped and _reads_an_iterator(session.graph, fetches,
                                                          watcher.iterator_outputs):
                watcher.stopped = True
                raise _Stopped()
            return original_run(session, fetches, *args, **kwargs)
        session_class.run = run

    def stream(self, sites, stream):
        """Read the dataset made at each ``(file, line, occurrence)`` of ``sites`` (the
        ``occurrence``-th made there, from 0: a batching helper's line makes one for each
        caller) to its end."""
        import tensorflow as tf

        self.stopped = True      # the runs here read iterators: the program ended
        for index, (file, line, occurrence) in enumerate(sites):
            found = [d for f, n, d in self.datasets if (f, n) == (os.path.realpath(file), line)]
            if len(found) <= occurrence:
                stream.end(index, f"no dataset was made into an iterator at {file}:{line}"
                           + (f" (call {occurrence + 1} there)" if occurrence else ""))
                continue
            dataset = found[occurrence]
            graph = dataset._variant_tensor.graph   # the graph the program built it in
            if graph.finalized:   # by the program's Supervisor or MonitoredSession
                getattr(graph, self.unfinalize)()
            stream.seed(index, graph)
            try:
                with graph.as_default():
                    element = self.original_iterator(dataset).get_next()
                with tf.compat.v1.Session(graph=graph, config=session_config()) as session:
                    while True:
                        try:
                            value = session.run(element)
                        except tf.errors.OutOfRangeError:
                            break
                        stream.batch(index, value)
                stream.end(index)
            except Exception as e:  # noqa: BLE001 - reported by the parent
                stream.end(index, f"{type(e).__name__}: {e}")


def _fetch_leaves(value):
    """The leaves of a ``sess.run`` fetch or feed structure (dicts keyed by anything,
    e.g. MonitoredSession's hooks)."""
    if isinstance(value, dict):
        return [leaf for item in value.items() for part in item for leaf in _fetch_leaves(part)]
    if isinstance(value, (list, tuple)):
        return [leaf for item in value for leaf in _fetch_leaves(item)]
    return [value]


def _reads_an_iterator(graph, fetches, iterator_outputs):
    """Whether running ``fetches`` reads a tf.data iterator (an op of
    ``iterator_outputs``, the types of the ops reading one)."""
    pending, seen = [], set()
    for value in _fetch_leaves(fetches):
        try:
            element = graph.as_graph_element(value)
        except (TypeError, ValueError, KeyError):
            continue
        pending.append(getattr(element, "op", element))
    while pending:
        op = pending.pop()
        if op.name in seen:
            continue
        seen.add(op.name)
        if op.type in iterator_outputs:
            return True
        pending += [t.op for t in op.inputs] + list(op.control_inputs)
    return False


def run_program(path, argv):
    """Run ``path`` as ``__main__`` with ``argv``, as ``python PATH ARGS`` would;
    returns its exit status (its error, printed, is 1)."""
    sys.argv = [path, *argv]
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    try:
        runpy.run_path(path, run_name="__main__")
    except SystemExit as e:
        if isinstance(e, _Stopped) or e.code is None:
            return 0
        return e.code if isinstance(e.code, int) else 1
    except BaseException:  # noqa: BLE001 - the program's own failure
        traceback.print_exc()
        return 1
    return 0


def main(argv=None):
    """The port side: ``python _harness.py REQUEST.json`` (see the module docstring)."""
    argv = sys.argv[1:] if argv is None else argv
    with open(argv[0], encoding="utf-8") as f:
        request = json.load(f)
    block("tf1compat")
    freeze_randomness(request["random_module"], request["random_functions"])
    bound_repeats(request["epochs"])
    watcher = PortWatcher(request["files"], request["session"], request["unfinalize"],
                          request["iterator_outputs"])
    watcher.install()
    status = run_program(request["entry"], request["argv"])
    stopped = watcher.stopped
    stream = Stream(request["fd"])
    watcher.stream([tuple(site) for site in request["sites"]], stream)
    stream.close()
    return 0 if stopped or status == 0 else status


if __name__ == "__main__":
    raise SystemExit(main())
