"""16-bit PNG support for tf-slim's ``Image`` handler.

tf-slim decodes every PNG with ``decode_image`` at 8 bits and then casts to the
handler's ``dtype``, so ``Image(dtype=tf.uint16)`` turns a 16-bit PNG into
values 0..255. The wrapper below decodes PNGs whose header says bit depth 16 at
full depth when ``dtype`` is uint16; everything else (8-bit PNG, JPEG, raw)
takes tf-slim's own path and keeps its cast semantics.
"""

from tf1compat._tf import tf, v1

# The image/format values tf-slim's Image handler treats as raw pixel bytes.
RAW_FORMATS = ("raw", "RAW")
_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
# Offset of the IHDR bit depth: signature (8) + chunk length (4) + b"IHDR" (4)
# + width (4) + height (4).
_BIT_DEPTH_OFFSET = 24


def is_png16(image_buffer, image_format):
    """Scalar bool tensor: ``image_buffer`` is a 16-bit PNG and not declared raw."""
    header_size = _BIT_DEPTH_OFFSET + 1
    padded = tf.strings.join([image_buffer, b"\0" * header_size])
    header = tf.strings.substr(padded, 0, header_size)
    is_png = tf.equal(tf.strings.substr(header, 0, len(_PNG_SIGNATURE)), _PNG_SIGNATURE)
    is_16_bit = tf.equal(tf.strings.substr(header, _BIT_DEPTH_OFFSET, 1), b"\x10")
    is_raw = tf.reduce_any(tf.equal(image_format, RAW_FORMATS))
    return tf.logical_and(tf.logical_and(is_png, is_16_bit), tf.logical_not(is_raw))


def decode_with_png16(original_decode):
    """Wrap ``Image._decode`` so uint16 handlers read 16-bit PNGs at full depth."""

    def _decode(self, image_buffer, image_format):
        if tf.as_dtype(self._dtype) != tf.uint16:
            return original_decode(self, image_buffer, image_format)

        def decode_png16():
            image = tf.io.decode_png(image_buffer, channels=self._channels, dtype=tf.uint16)
            image.set_shape([None, None, self._channels])
            return image if self._shape is None else tf.reshape(image, self._shape)

        return v1.cond(is_png16(image_buffer, image_format), decode_png16,
                       lambda: original_decode(self, image_buffer, image_format),
                       name="cond_png16")

    return _decode
