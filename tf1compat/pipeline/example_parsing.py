"""Parse batches of ``tf.train.Example`` records, by cutting when they follow a template.

:func:`build_example_parser` returns ``parse(records, names)``, which gives what
``tf.io.parse_example(records, features, example_names=names())`` gives. When the
records follow a template (see :mod:`tf1compat.records.example_layout`: same length,
same bytes outside the values), the values are cut out by offset (``substr`` and
``decode_raw``) after each record is checked against the template: its length, every
byte outside the values, and where its varints end. A record that differs in any of
these is parsed by ``parse_example``, and the two parts are stitched back in order,
so the result never depends on the template; ``names`` (the reader keys, which name
a bad record's file and offset in parse errors) is only built for such records.
"""

import numpy as np

from tf1compat._tf import tf
from tf1compat.errors import CorruptRecordError
from tf1compat.records import tfrecord
from tf1compat.records.example_layout import example_layout

__all__ = ["find_template", "build_example_parser"]

_KIND_OF_DTYPE = {tf.string: "bytes", tf.float32: "float", tf.int64: "int64"}


def _wanted(features):
    """``{key: (kind, count)}`` for :func:`example_layout`, or None unless every
    feature is a FixedLenFeature of a dtype an Example holds."""
    wanted = {}
    for key, feature in features.items():
        if not isinstance(feature, tf.io.FixedLenFeature) or feature.dtype not in _KIND_OF_DTYPE:
            return None
        count = tf.TensorShape(feature.shape).num_elements()
        if not count:
            return None
        wanted[key] = (_KIND_OF_DTYPE[feature.dtype], count)
    return wanted


def find_template(files, features, compression=None):
    """The layout of the first record of the first non-empty file of ``files`` for
    ``features``, or None when that record cannot serve as a template (the reason
    does not matter: every record is then parsed) or cannot be read here (the
    reading pipeline reports that error where it happens)."""
    wanted = _wanted(features)
    if wanted is None:
        return None
    for path in files:
        try:
            first = next(iter(tfrecord.iter_records(path, compression=compression)), None)
        except (CorruptRecordError, OSError):
            return None
        if first is not None:
            try:
                return example_layout(first, wanted)
            except ValueError:
                return None
    return None


def _varint_values(raw, sizes):
    """int64 values [n, len(sizes)] of packed varints whose byte sizes are ``sizes``,
    from their bytes ``raw`` [n, sum(sizes)] uint8."""
    if all(size == 1 for size in sizes):
        return tf.cast(raw, tf.int64)
    shifts = np.concatenate([7 * np.arange(size) for size in sizes]).astype(np.int64)
    bits = tf.bitwise.left_shift(tf.bitwise.bitwise_and(tf.cast(raw, tf.int64), 0x7F), shifts)
    segments = np.repeat(np.arange(len(sizes)), sizes)
    return tf.transpose(tf.math.segment_sum(tf.transpose(bits), segments))


def _checked_bytes(layout):
    """``(columns, masks, expected)``: a record follows the template when its bytes at
    ``columns``, masked, equal ``expected``: every byte outside the values, and the
    continuation bit (0x80) of every varint byte, which says where each varint ends."""
    template = np.frombuffer(layout.record, np.uint8)
    masks = np.full(len(template), 0xFF, np.uint8)
    for payload in layout.payloads:
        masks[payload.offset:payload.offset + payload.size] = 0x80 if payload.kind == "int64" else 0
    columns = np.flatnonzero(masks)
    return columns, masks[columns], template[columns] & masks[columns]


def _follows(records, raw, layout):
    """Per record: whether it has the template's length and bytes (see _checked_bytes);
    ``raw`` is ``records`` as uint8, cut or padded to the template's length."""
    columns, masks, expected = _checked_bytes(layout)
    checked = tf.bitwise.bitwise_and(tf.gather(raw, columns, axis=1), masks)
    return tf.logical_and(tf.equal(tf.strings.length(records), len(layout.record)),
                          tf.reduce_all(tf.equal(checked, expected), axis=1))


def _cut(records, raw, layout, features):
    """Each feature's values cut out of ``records`` that follow the template (and
    ``raw``, their bytes as uint8): ``substr`` for bytes, ``decode_raw`` for floats,
    the varints' bytes for int64s."""
    parts = {}
    for payload in layout.payloads:
        start, end = payload.offset, payload.offset + payload.size
        if payload.kind == "bytes":
            parts.setdefault(payload.key, []).append(
                tf.strings.substr(records, start, payload.size))
        elif payload.kind == "float":
            parts[payload.key] = [tf.io.decode_raw(
                tf.strings.substr(records, start, payload.size), tf.float32)]
        else:
            parts[payload.key] = [_varint_values(raw[:, start:end], payload.varint_sizes)]
    return {key: tf.reshape(tf.stack(pieces, 1) if len(pieces) > 1 else pieces[0],
                            [-1, *tf.TensorShape(features[key].shape).as_list()])
            for key, pieces in parts.items()}


def _stitched(records, raw, follows, layout, features, names):
    """Cut values for the records that follow the template, ``parse_example`` for the
    others, back in their order."""
    good = tf.cast(tf.where(follows)[:, 0], tf.int32)
    bad = tf.cast(tf.where(tf.logical_not(follows))[:, 0], tf.int32)
    cut = _cut(tf.gather(records, good), tf.gather(raw, good), layout, features)
    parsed = tf.io.parse_example(tf.gather(records, bad), features,
                                 example_names=tf.gather(names(), bad))
    return {key: tf.dynamic_stitch([good, bad], [cut[key], parsed[key]]) for key in features}


def build_example_parser(features, layout=None):
    """``parse(records, names)`` for a 1-D string tensor of serialized Examples:
    ``tf.io.parse_example(records, features, example_names=names())``, cut by
    ``layout`` (from :func:`find_template`) where the records follow it.
    ``names`` is a function giving the records' names (reader keys)."""
    if layout is None:
        return lambda records, names: tf.io.parse_example(records, features,
                                                          example_names=names())

    def parse(records, names):
        # One copy of the records' bytes, which never fails: shorter ones are padded.
        raw = tf.io.decode_raw(records, tf.uint8, fixed_length=len(layout.record))
        follows = _follows(records, raw, layout)
        return tf.cond(tf.reduce_all(follows), lambda: _cut(records, raw, layout, features),
                       lambda: _stitched(records, raw, follows, layout, features, names))

    return parse
