"""``BatchedDatasetDataProvider``: tf-slim's ``DatasetDataProvider``, a batch per step.

The classic slim input, ``tf.train.batch(DatasetDataProvider(dataset).get(items),
batch_size)``, reads, parses and decodes one example per queue-runner step. This
provider reads with tf.data inside the graph
(:func:`tf1compat.pipeline.fastpath.build_batches`), parses many records at a time
with one vectorized ``parse_example`` using the dataset decoder's
``keys_to_features``, and turns the parsed records into items with the decoder's
own handlers:

* ``Tensor`` of one dense feature: a reshape of the whole batch;
* ``Image`` of raw bytes (every record's format ``raw``): one ``decode_raw`` of
  the batch; of PNGs (no record raw nor a JPEG, uint8 items): the handler's
  ``decode_image`` of each record inside one ``tf.map_fn``; others (JPEG, mixed
  formats) are decoded per example by the handler itself inside one ``tf.map_fn``;
* any other handler: the handler per example inside ``tf.map_fn``.

So ``get(items)`` returns the batched tensors of the classic pipeline, with the
same ``shuffle`` / ``num_epochs`` / ``common_queue_*`` / ``seed`` meaning as
``DatasetDataProvider`` (see :mod:`tf1compat.pipeline.fastpath` for ordering); the
``record_key`` item (``file:offset``) is made only when fetched.
"""

from collections.abc import Callable, Mapping
from typing import Any

from tf_slim.data import data_provider, parallel_reader, tfexample_decoder

from tf1compat._tf import tf, v1
from tf1compat._typing import Tensor
from tf1compat.errors import PipelineConfigError
from tf1compat.pipeline import fastpath, queues
from tf1compat.slim._image import RAW_FORMATS

__all__ = ["BatchedDatasetDataProvider"]


def _decoder_specs(decoder: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(keys_to_features, items_to_handlers)`` of a ``TFExampleDecoder`` of dense features.

    tf-slim keeps both in attributes without public accessors (unchanged since
    ``tf.contrib.slim``); they are read here and nowhere else.
    """
    if not isinstance(decoder, tfexample_decoder.TFExampleDecoder):
        raise PipelineConfigError(
            f"BatchedDatasetDataProvider needs a TFExampleDecoder, got "
            f"{type(decoder).__name__}; use DatasetDataProvider for other decoders",
            argument="dataset", expected="a Dataset whose decoder is a TFExampleDecoder")
    keys_to_features = decoder._keys_to_features  # noqa: SLF001 - see docstring
    for key, feature in keys_to_features.items():
        if not isinstance(feature, tf.io.FixedLenFeature):
            raise PipelineConfigError(
                f"BatchedDatasetDataProvider: feature {key!r} is a {type(feature).__name__}; "
                "whole-batch parsing needs FixedLenFeature features (use "
                "DatasetDataProvider for variable-length ones)",
                argument="dataset", expected="FixedLenFeature features")
    return keys_to_features, decoder._items_to_handlers  # noqa: SLF001


def _example_spec(handler: Any, keys_to_tensors: Mapping[str, Tensor]) -> Any:
    """dtype and shape of the handler's item for one example, traced in a scratch graph."""
    with tf.Graph().as_default():
        one = {key: v1.placeholder(t.dtype, t.shape[1:]) for key, t in keys_to_tensors.items()}
        item = handler.tensors_to_item(one)
    if not isinstance(item, tf.Tensor) or not item.shape.is_fully_defined():
        raise PipelineConfigError(
            f"BatchedDatasetDataProvider: handler {type(handler).__name__} for keys "
            f"{handler.keys} gives {item!r} per example; batching needs a dense tensor of "
            "a fully defined shape (give the handler a shape)",
            argument="dataset", expected="items of a fully defined shape")
    return tf.TensorSpec(item.shape, item.dtype)


def _per_example(handler: Any, keys_to_tensors: Mapping[str, Tensor], spec: Any) -> Tensor:
    """The handler applied to each example of the batch, inside one ``tf.map_fn``."""
    return tf.map_fn(handler.tensors_to_item, keys_to_tensors, fn_output_signature=spec)


def _image_settings(handler: Any) -> tuple[int, bool]:
    """``(channels, repeated)`` of an ``Image`` handler, kept by tf-slim in attributes
    without public accessors (unchanged since ``tf.contrib.slim``), read here only."""
    return handler._channels, handler._repeated  # noqa: SLF001 - see docstring


def _batched_image(handler: Any, keys_to_tensors: Mapping[str, Tensor], spec: Any) -> Tensor:
    """Decode an ``Image`` item for a batch as the handler decodes each example: one
    ``decode_raw`` when every record's format is raw; ``decode_image`` of each record
    inside one ``tf.map_fn`` when none is raw nor a JPEG and the item is uint8 (the
    handler's own branch for those, without its two conds per example); else the
    handler per example."""
    image_key, format_key = handler.keys
    images = keys_to_tensors[image_key]
    raw = tf.reduce_any(tf.equal(keys_to_tensors[format_key][:, None], RAW_FORMATS), axis=1)
    channels, repeated = _image_settings(handler)

    def decode_raw() -> Tensor:
        pixels = tf.io.decode_raw(images, spec.dtype)
        return tf.reshape(pixels, [-1, *spec.shape])

    def per_example() -> Tensor:
        return _per_example(handler, keys_to_tensors, spec)

    def decode_images() -> Tensor:
        return tf.map_fn(
            lambda image: tf.reshape(tf.io.decode_image(image, channels=channels), spec.shape),
            images, fn_output_signature=spec)

    if spec.dtype != tf.uint8 or repeated:
        return tf.cond(tf.reduce_all(raw), decode_raw, per_example)
    encoded = tf.logical_not(tf.reduce_any(raw) | tf.reduce_any(tf.io.is_jpeg(images)))
    return tf.cond(tf.reduce_all(raw), decode_raw,
                   lambda: tf.cond(encoded, decode_images, per_example))


def _batched_item(handler: Any, keys_to_tensors: Mapping[str, Tensor]) -> Tensor:
    """One item for a whole parsed batch, computed as the handler computes it per example."""
    spec = _example_spec(handler, keys_to_tensors)
    if type(handler) is tfexample_decoder.Tensor and len(handler.keys) == 1:
        return tf.reshape(keys_to_tensors[handler.keys[0]], [-1, *spec.shape])
    if type(handler) is tfexample_decoder.Image:
        return _batched_image(handler, keys_to_tensors, spec)
    return _per_example(handler, keys_to_tensors, spec)


def _items_parser(keys_to_features: Mapping[str, Any],
                  items_to_handlers: Mapping[str, Any]) -> fastpath.Parse:
    """``parse`` for :func:`~tf1compat.pipeline.fastpath.build_batches`: Examples parsed
    with one ``parse_example``, then each item for the whole batch."""
    parse = fastpath.parse_examples(keys_to_features)

    def parse_items(records: Tensor, names: Callable[[], Tensor]) -> dict[str, Tensor]:
        parsed = parse(records, names)
        return {item: _batched_item(handler, {key: parsed[key] for key in handler.keys})
                for item, handler in items_to_handlers.items()}

    return parse_items


class BatchedDatasetDataProvider(data_provider.DataProvider):  # type: ignore[misc]
    """``DatasetDataProvider`` whose ``get(items)`` returns batches of ``batch_size``.

    Arguments as ``DatasetDataProvider`` (``num_readers`` files read at once; with
    ``shuffle`` the files are shuffled and examples pass through a shuffle buffer
    of ``common_queue_min`` + ``batch_size`` examples; ``common_queue_capacity``
    examples are prefetched), plus those of ``tf.train.batch``: ``batch_size``,
    ``num_threads`` (parsing threads, default ``num_readers``),
    ``allow_smaller_final_batch``; ``records_per_read`` and ``cache`` (the parsed
    items kept in memory between epochs) as in
    :func:`~tf1compat.pipeline.fastpath.build_record_batches`. The decoder must be a
    ``TFExampleDecoder`` of ``FixedLenFeature`` s whose items have fixed shapes.
    """

    def __init__(self, dataset: Any, batch_size: int, num_readers: int = 1,
                 reader_kwargs: Mapping[str, Any] | None = None, shuffle: bool = True,
                 num_epochs: int | None = None, common_queue_capacity: int = 256,
                 common_queue_min: int = 128, record_key: str = "record_key",
                 seed: int | None = None, scope: str | None = None, num_threads: int | None = None,
                 allow_smaller_final_batch: bool = False, records_per_read: int | None = None,
                 cache: bool | int | str | None = None) -> None:
        keys_to_features, items_to_handlers = _decoder_specs(dataset.decoder)
        if record_key in items_to_handlers:
            raise PipelineConfigError(
                f"record_key {record_key!r} is also an item of the dataset; choose another "
                f"name (items: {sorted(items_to_handlers)})",
                argument="record_key", expected=f"a name not in {sorted(items_to_handlers)}")
        files = parallel_reader.get_data_files(dataset.data_sources)
        with tf.name_scope(scope or "batched_dataset_data_provider"):
            filename_queue = queues.string_input_producer(
                files, num_epochs=num_epochs, shuffle=shuffle, seed=seed, name="filenames")
            readers = [dataset.reader(**(reader_kwargs or {})) for _ in range(num_readers)]
            items_to_tensors, keys = fastpath.build_batches(
                "BatchedDatasetDataProvider", filename_queue, batch_size,
                _items_parser(keys_to_features, items_to_handlers),
                with_keys=True, reader=readers, num_threads=num_threads or num_readers,
                capacity=common_queue_capacity, shuffle=shuffle,
                min_after_dequeue=common_queue_min if shuffle else None, seed=seed,
                allow_smaller_final_batch=allow_smaller_final_batch,
                records_per_read=records_per_read, cache=cache)
        items_to_tensors[record_key] = keys
        super().__init__(items_to_tensors=items_to_tensors, num_samples=dataset.num_samples)
