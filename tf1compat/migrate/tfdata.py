"""A legacy pipeline's spec as a ``tf.data.Dataset``: the migration path off queues.

``to_tf_data(fetches)`` lowers any queue pipeline read from its graph
(:mod:`tf1compat.migrate.lowering`). ``to_tf_data(get_split("train",
dataset_dir))`` reads the files of a slim ``Dataset`` with the tf.data
equivalent of its TF1 reader and decodes each record with the dataset's own
decoder, so it yields the same dicts that
``DatasetDataProvider(dataset).get(items)`` does. :mod:`tf1compat.migrate.comparison`
checks that claim example by example.

How the legacy knobs map to tf.data:

==============================  ==================================================
``DatasetDataProvider`` / TF1   ``to_tf_data``
==============================  ==================================================
data_sources (names, globs)     the same files in the same order (slim's rules)
string_input_producer shuffle   files reshuffled every epoch (``shuffle=True``)
num_readers                     ``num_parallel_reads`` files interleaved
RandomShuffleQueue common queue shuffle buffer of ``common_queue_capacity`` records
reader_kwargs                   the same keyword arguments, mapped per reader
decoder.decode(record, items)   the same call inside ``Dataset.map``
==============================  ==================================================
"""

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from tf1compat._checks import check_positive_int, check_requires
from tf1compat._tf import tf
from tf1compat._typing import Dataset, FileName, Tensor
from tf1compat.migrate import lowering
from tf1compat.pipeline.graph_model.readers import spec_of_reader_class

__all__ = ["to_tf_data", "slim_dataset_to_tf_data", "files_to_tf_data"]


def _data_files(data_sources: FileName | Sequence[FileName]) -> list[str]:
    """The files of ``data_sources`` exactly as slim's readers see them (same order);
    a pattern matching nothing raises PipelineConfigError."""
    from tf1compat.slim import parallel_reader
    files: list[str] = parallel_reader.get_data_files(data_sources)
    return files


def _decode_function(decoder: Any,
                     items: Sequence[str] | None) -> Callable[[Tensor], dict[str, Tensor]]:
    """``record -> {item: tensor}`` with the slim decoder, items checked first."""
    from tf1compat.slim._checks import check_items
    valid_items = list(decoder.list_items())
    if isinstance(items, str):
        raise TypeError(f"to_tf_data: items must be a list of item names, got the "
                        f"string {items!r}; did you mean [{items!r}]?")
    items = valid_items if items is None else list(items)
    check_items(items, valid_items)

    # Slim decoders are TF1 graph code: traced as is, like the queue side builds
    # them (autograph's conversion adds seconds and nothing else).
    @tf.autograph.experimental.do_not_convert
    def decode(record: Tensor) -> dict[str, Tensor]:
        return dict(zip(items, decoder.decode(record, items), strict=True))
    decoding: Callable[[Tensor], dict[str, Tensor]] = decode    # (an untyped decorator)
    return decoding


def _check_epochs_and_reads(num_epochs: int | None, num_parallel_reads: int | None) -> None:
    """Both are None (forever / no parallel reads) or a positive integer."""
    for argument, value in (("num_epochs", num_epochs),
                            ("num_parallel_reads", num_parallel_reads)):
        check_positive_int("to_tf_data", argument, value, allow_none=True)


def _is_slim_dataset(value: object) -> bool:
    return all(hasattr(value, name) for name in ("data_sources", "reader", "decoder"))


def _read_records(files: Sequence[str], reader: type, *,
                  reader_kwargs: Mapping[str, Any] | None = None, shuffle: bool = False,
                  num_epochs: int | None = 1, seed: int | None = None,
                  num_parallel_reads: int | None = None) -> Dataset:
    """The raw records of ``files`` read as ``reader`` (a TF1 reader class) would.

    Files are shuffled per epoch when ``shuffle``; ``num_parallel_reads`` files
    are read round-robin (deterministically), like that many TF1 readers.
    """
    spec = spec_of_reader_class("to_tf_data", reader, reader_kwargs)
    records = tf.autograph.experimental.do_not_convert(spec.records)
    filenames = tf.data.Dataset.from_tensor_slices(files)
    if shuffle:
        filenames = filenames.shuffle(len(files), seed=seed, reshuffle_each_iteration=True)
    filenames = filenames.repeat(num_epochs)
    if not num_parallel_reads or num_parallel_reads == 1:
        return filenames.flat_map(records)
    return filenames.interleave(records, cycle_length=num_parallel_reads, block_length=1,
                                num_parallel_calls=num_parallel_reads, deterministic=True)


def _read_and_parse(files: Sequence[str], reader: type, parse: Callable[[Tensor], Any] | None,
                    *, shuffle: bool, num_epochs: int | None, seed: int | None,
                    num_parallel_reads: int | None, reader_kwargs: Mapping[str, Any] | None,
                    common_queue_capacity: int) -> Dataset:
    _check_epochs_and_reads(num_epochs, num_parallel_reads)
    records = _read_records(files, reader, reader_kwargs=reader_kwargs, shuffle=shuffle,
                            num_epochs=num_epochs, seed=seed,
                            num_parallel_reads=num_parallel_reads)
    if shuffle:
        records = records.shuffle(common_queue_capacity, seed=seed)
    if parse is None:
        return records
    return records.map(parse, num_parallel_calls=tf.data.AUTOTUNE, deterministic=True)


def slim_dataset_to_tf_data(dataset: Any, items: Sequence[str] | None = None,
                            shuffle: bool = False, num_epochs: int | None = 1,
                            seed: int | None = None, num_parallel_reads: int | None = None, *,
                            reader: type | None = None,
                            reader_kwargs: Mapping[str, Any] | None = None,
                            common_queue_capacity: int = 256) -> Dataset:
    """``{item: tensor}`` dicts for ``items`` of a slim ``Dataset``, as
    ``DatasetDataProvider(dataset).get(items)`` gives them (see :func:`to_tf_data`)."""
    return _read_and_parse(
        _data_files(dataset.data_sources), reader or dataset.reader,
        _decode_function(dataset.decoder, items), shuffle=shuffle, num_epochs=num_epochs,
        seed=seed, num_parallel_reads=num_parallel_reads, reader_kwargs=reader_kwargs,
        common_queue_capacity=common_queue_capacity)


def files_to_tf_data(files: FileName | Sequence[FileName], *,
                     parse_fn: Callable[[Tensor], Any] | None = None, shuffle: bool = False,
                     num_epochs: int | None = 1, seed: int | None = None,
                     num_parallel_reads: int | None = None, reader: type | None = None,
                     reader_kwargs: Mapping[str, Any] | None = None,
                     common_queue_capacity: int = 256) -> Dataset:
    """The records of ``files`` (names or glob patterns) read as ``reader`` reads them,
    mapped through ``parse_fn`` when given (see :func:`to_tf_data`)."""
    return _read_and_parse(
        _data_files(files), reader or tf.compat.v1.TFRecordReader, parse_fn, shuffle=shuffle,
        num_epochs=num_epochs, seed=seed, num_parallel_reads=num_parallel_reads,
        reader_kwargs=reader_kwargs, common_queue_capacity=common_queue_capacity)


def to_tf_data(source: Any, *args: Any, service: str | None = None,
               service_timeout: float | None = None, cache: bool | int | str | None = None,
               **kwargs: Any) -> Dataset:
    """A ``tf.data.Dataset`` of single examples read like the legacy pipeline.

    ``source`` is the fetches of a queue pipeline (a tensor, or a tuple, list or
    dict of tensors built in a :func:`legacy_graph`, e.g. what ``tf.train.batch``
    returned): the result is the same pipeline in tf.data, built eagerly, with
    the fetches' structure, dtypes and batch shapes (see
    :func:`~tf1compat.describe_lowering`); what cannot be lowered raises
    :class:`~tf1compat.errors.LoweringError`. No other argument applies then.

    Or ``source`` is a slim ``Dataset`` (``data_sources``, ``reader``, ``decoder``):
    ``to_tf_data(dataset, items=None, shuffle=False, num_epochs=1, seed=None,
    num_parallel_reads=None, *, reader=None, reader_kwargs=None,
    common_queue_capacity=256)`` yields ``{item: tensor}`` dicts for ``items``
    (default: all the decoder's items; an unknown one raises
    :class:`UnknownItemError`), decoded by ``dataset.decoder``. ``record_key`` is
    not an item here: tf.data has no reader keys.

    Or ``source`` is file names / glob patterns: ``to_tf_data(files, *,
    parse_fn=None, ...)`` with the same keyword arguments reads them with
    ``reader`` (a TF1 reader class, default ``TFRecordReader``) and maps the
    records through ``parse_fn(record)`` when given (raw records otherwise).

    ``shuffle`` reshuffles the files every epoch and then shuffles records in a
    buffer of ``common_queue_capacity`` (DatasetDataProvider's RandomShuffleQueue);
    ``seed`` seeds both. ``num_epochs=None`` repeats forever. ``num_parallel_reads``
    is the counterpart of ``num_readers``. ``reader`` overrides
    ``dataset.reader``; ``reader_kwargs`` are the reader's constructor
    arguments (e.g. ``{"record_bytes": 3073}``). Batch, prefetch and map further
    as usual.

    ``service="grpc://HOST:PORT"`` (fetches only): the lowered pipeline's work runs
    on that tf.data service cluster, every example once per epoch
    (:mod:`tf1compat.migrate.service`); a dispatcher that does not answer within
    seconds raises :class:`~tf1compat.errors.DataServiceError`. ``service_timeout``
    (seconds, default 120; ``inf``: as TensorFlow, no bound) bounds each wait for the
    workers' next element: past it (a worker or the dispatcher gone) the iteration
    raises ``tf.errors.UnknownError`` carrying the DataServiceError's message.

    ``cache`` (fetches only): a pipeline reading its files for several epochs keeps
    its deterministic per-example work (parse, decode, fixed reshapes) in memory
    after reading each file once, when that fits the budget: None or True -> the
    ``TF1COMPAT_CACHE_BUDGET`` variable (a size such as ``500M``, or ``off``) or
    else a quarter of the available memory, at most 4 GiB; False -> no caching; a
    number of bytes (numpy integers too, at most 2**63-1) or a size text. The elements
    are the same, epoch by epoch
    (:func:`~tf1compat.describe_lowering` says whether it is cached, and why not).
    """
    check_requires("to_tf_data", "service_timeout", service_timeout, "service", service,
                   "it bounds the waits for the service")
    if lowering.is_graph_fetches(source):
        if args or kwargs:
            given = sorted(kwargs) + [f"{len(args)} positional"] * bool(args)
            raise TypeError(f"to_tf_data: fetches are lowered as their graph says; "
                            f"{given} apply to a slim Dataset or file names only")
        return lowering.lower_to_tf_data(source, service, service_timeout, cache)
    if cache is not None:
        raise TypeError("to_tf_data: cache applies to the fetches of a queue pipeline; for a "
                        "slim Dataset or file names, apply .cache() to the result")
    if service is not None:
        raise TypeError("to_tf_data: service applies to the fetches of a queue pipeline; "
                        "for a slim Dataset or file names, apply "
                        "tf.data.experimental.service.distribute to the result")
    if _is_slim_dataset(source):
        return slim_dataset_to_tf_data(source, *args, **kwargs)
    return files_to_tf_data(source, *args, **kwargs)
