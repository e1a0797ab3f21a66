"""The tf.data code the rewrite writes, as text a person would write.

Each function returns source text (statements or an expression) built from the
program's own expressions (the producer's file list, the batching call's
``batch_size``, ...) where it has them and from the graph's values otherwise.
``tf`` is the name the file imports TensorFlow as.
"""

__all__ = ["statement_text", "NameChooser", "iterator_next",
           "file_list_statements", "reader_expression", "map_statement", "batching_statement",
           "choose_dataset_name", "prefix_of", "shuffle_code", "epochs_code", "blocks"]

_DATASET_NAMES = ("dataset", "records", "examples", "data")
_WIDTH = 95   # a generated line longer than this (with its indentation) is wrapped


def statement_text(text, column=0):
    """Generated statement ``text``, to be placed at ``column``, each line ending with
    a newline; a long ``x = a.b(...).c(...)`` is wrapped at its dots."""
    lines = text.rstrip("\n").split("\n")
    if len(lines) == 1:
        lines = wrapped(lines[0], column)
    return "".join(line + "\n" for line in lines)


def wrapped(line, column=0):
    """``line`` (``target = chain``) as lines of at most ``_WIDTH`` characters at
    ``column`` when it is longer: the chain in parentheses, a method call a line."""
    target, equals, chain = line.partition(" = ")
    if column + len(line) <= _WIDTH or not equals:
        return [line]
    parts, depth, start = [], 0, 0
    for index, character in enumerate(chain):
        if character in "([{":
            depth += 1
        elif character in ")]}":
            depth -= 1
        elif character == "." and depth == 0 and index > start and \
                chain[index - 1] in ")]" and chain[index + 1:index + 2].isidentifier():
            parts.append(chain[start:index])
            start = index
    parts.append(chain[start:])
    if len(parts) == 1:
        return [line]
    prefix = f"{target} = ("
    return ([prefix + parts[0]] + [" " * len(prefix) + part for part in parts[1:-1]]
            + [" " * len(prefix) + parts[-1] + ")"])


class NameChooser:
    """Names for new variables that no name of the function or file uses."""

    def __init__(self, taken):
        self.taken = set(taken)

    def choose(self, *candidates):
        for candidate in candidates:
            if candidate not in self.taken:
                self.taken.add(candidate)
                return candidate
        base, number = candidates[0], 2
        while f"{base}_{number}" in self.taken:
            number += 1
        self.taken.add(f"{base}_{number}")
        return f"{base}_{number}"


def _prefix(name):
    """``train`` for ``train_queue``; "" for ``filename_queue``, ``path_queue``, ``queue``."""
    if not name:
        return ""
    for suffix in ("_queue", "queue", "_producer"):
        if name.endswith(suffix):
            name = name[:-len(suffix)]
            break
    for word in ("filenames", "filename", "file_names", "file_name", "files", "file",
                 "paths", "path", "input", "tfrecord_file", "tfrecord", "string", "record"):
        if name == word or name.endswith("_" + word):
            name = name[:-len(word)].rstrip("_")
            break
    return name


def prefix_of(dataset):
    """``train_`` of ``train_dataset``; "" of ``dataset``."""
    return dataset[:-len("dataset")] if dataset.endswith("_dataset") else ""


def choose_dataset_name(chooser, producer_target):
    """The records dataset's name: ``train_dataset`` for a producer assigned to
    ``train_queue``, else ``dataset`` (or another free name)."""
    prefix = _prefix(producer_target)
    if prefix:
        return chooser.choose(f"{prefix}_dataset", *_DATASET_NAMES)
    return chooser.choose(*_DATASET_NAMES)


def iterator_next(tf, dataset):
    """The graph-mode iterator's next element of ``dataset``."""
    return f"{tf}.compat.v1.data.make_one_shot_iterator({dataset}).get_next()"


def _call(function, *arguments, **keywords):
    parts = [a for a in arguments if a is not None]
    parts += [f"{k}={v}" for k, v in keywords.items() if v is not None]
    return f"{function}({', '.join(parts)})"


def file_list_statements(tf, name, files, count, shuffle, seed, num_epochs, indent):
    """Statements making ``name``, a dataset of the file names ``files`` (an
    expression), shuffled as the producer shuffled them (``shuffle``: ``None`` for
    no shuffle, ``"True"`` always, else the expression deciding it; ``count``: the
    expression of how many there are) and repeated ``num_epochs`` times (``None``:
    once; ``""``: forever)."""
    lines = [f"{name} = {tf}.data.Dataset.from_tensor_slices({files})"]
    shuffled = f"{name}.shuffle({_call_arguments(count, seed=seed)})"
    if shuffle == "True":
        lines[0] = f"{lines[0]}.shuffle({_call_arguments(count, seed=seed)})"
    elif shuffle is not None:
        lines += [f"if {shuffle}:", f"{indent}{name} = {shuffled}"]
    if num_epochs is not None:
        repeat = f".repeat({num_epochs})"
        if len(lines) == 1:
            lines[0] += repeat
        else:
            lines.append(f"{name} = {name}{repeat}")
    return lines


def _call_arguments(*arguments, **keywords):
    return _call("", *arguments, **keywords)[1:-1]


def reader_expression(tf, reader, arguments, files, files_is_dataset, readers, key_used):
    """The dataset of the records the TF1 reader ``reader`` (``TFRecordReader``, ...)
    reads from ``files`` (a list expression, or a dataset of names when
    ``files_is_dataset``), with its ``arguments`` (expressions by TF1 name); ``readers``:
    the number of readers reading in turn (an expression, or None for one);
    ``key_used``: whole files come with their names."""
    def dataset_of_names():
        return files if files_is_dataset else f"{tf}.data.Dataset.from_tensor_slices({files})"

    if reader == "TFRecordReader":
        one = _call(f"{tf}.data.TFRecordDataset", "filename",
                    compression_type=arguments.get("compression_type"))
        whole = _call(f"{tf}.data.TFRecordDataset", files,
                      compression_type=arguments.get("compression_type"))
    elif reader == "FixedLengthRecordReader":
        options = {name: arguments.get(name) for name in ("header_bytes", "footer_bytes")}
        options["compression_type"] = arguments.get("encoding")
        options = {"record_bytes": arguments["record_bytes"], **options}
        one = _call(f"{tf}.data.FixedLengthRecordDataset", "filename", **options)
        whole = _call(f"{tf}.data.FixedLengthRecordDataset", files, **options)
    elif reader == "TextLineReader":
        skip = arguments.get("skip_header_lines")
        one = _call(f"{tf}.data.TextLineDataset", "filename")
        if skip is not None:
            one = f"{one}.skip({skip})"
            whole = None
        else:
            whole = _call(f"{tf}.data.TextLineDataset", files)
    else:   # WholeFileReader
        read = (f"lambda filename: (filename, {tf}.io.read_file(filename))" if key_used
                else f"{tf}.io.read_file")
        if readers is not None:
            return f"{dataset_of_names()}.map({read}, num_parallel_calls={readers})"
        return f"{dataset_of_names()}.map({read})"
    if readers is not None:
        return (f"{dataset_of_names()}.interleave(lambda filename: {one}, "
                f"cycle_length={readers})")
    if whole is not None:
        return whole
    return f"{dataset_of_names()}.flat_map(lambda filename: {one})"


def map_statement(tf, dataset, function, sequential=False):
    """``dataset = dataset.map(function, ...)``: in parallel, or one example after the
    other (``sequential``)."""
    if sequential:
        return f"{dataset} = {dataset}.map({function})"
    return f"{dataset} = {dataset}.map({function}, num_parallel_calls={tf}.data.AUTOTUNE)"


def batching_statement(tf, dataset, batch_size, drop_remainder, padded, shuffle_buffer=None,
                       seed=None, prefetch=True, mapped=None):
    """``dataset = dataset.shuffle(...).batch(...).prefetch(...)``; ``drop_remainder``:
    an expression, or None to keep the remainder; ``mapped``: a function mapped in
    parallel after the shuffle (``.shuffle(...).map(parse, ...).batch(...)``)."""
    chain = dataset
    if shuffle_buffer is not None:
        chain += f".shuffle({_call_arguments(shuffle_buffer, seed=seed)})"
    if mapped is not None:
        chain += f".map({mapped}, num_parallel_calls={tf}.data.AUTOTUNE)"
    method = "padded_batch" if padded else "batch"
    chain += f".{method}({_call_arguments(batch_size, drop_remainder=drop_remainder)})"
    if prefetch:
        chain += f".prefetch({tf}.data.AUTOTUNE)"
    return f"{dataset} = {chain}"


def shuffle_code(code):
    """The producer's ``shuffle``: None (off), ``"True"`` (on) or the deciding expression."""
    if code is None or code == "True":
        return "True"
    if code == "False":
        return None
    return code


def epochs_code(code):
    """``repeat(...)``'s argument for the producer's ``num_epochs``: None for one epoch,
    "" for forever."""
    if code is None or code == "None":
        return ""
    if code == "1":
        return None
    return code


def blocks(lines, indent):
    """Join generated lines into statements: an ``if ...:`` line with its indented body."""
    statements, index = [], 0
    while index < len(lines):
        line = lines[index]
        index += 1
        while index < len(lines) and lines[index].startswith(indent):
            line += "\n" + lines[index]
            index += 1
        statements.append(line)
    return statements
