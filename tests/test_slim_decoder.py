"""tf-slim's TFExampleDecoder and item handlers, patched, against expected arrays.

The handlers are used through an unmodified ``import tf_slim`` after
``patch_tf_slim()``; images are compared with ``tf.io.decode_*`` and numpy.
"""

import types

import numpy as np
import pytest

import tf1compat
from tf1compat.errors import UnknownItemError

tf = pytest.importorskip("tensorflow")
tf_slim = pytest.importorskip("tf_slim")
pytestmark = pytest.mark.tf

v1 = tf.compat.v1
tfexample_decoder = tf_slim.tfexample_decoder


@pytest.fixture(autouse=True, scope="module")
def patched():
    tf1compat.patch_tf_slim()


def feature(values):
    """A tf.train.Feature from a list of bytes, ints or floats."""
    values = list(values)
    if isinstance(values[0], bytes):
        return tf.train.Feature(bytes_list=tf.train.BytesList(value=values))
    if isinstance(values[0], (int, np.integer)):
        return tf.train.Feature(int64_list=tf.train.Int64List(value=values))
    return tf.train.Feature(float_list=tf.train.FloatList(value=values))


def serialize(**features):
    """Serialized tf.train.Example; keyword ``a__b`` stands for feature key ``a/b``."""
    return tf.train.Example(features=tf.train.Features(feature={
        key.replace("__", "/"): feature(values) for key, values in features.items()
    })).SerializeToString()


def decode(serialized, keys_to_features, handler, graph=None):
    """Decode item 'item' of one serialized Example in ``graph`` (default: a fresh one)."""
    with tf1compat.legacy_graph(graph) as graph:
        decoder = tfexample_decoder.TFExampleDecoder(keys_to_features, {"item": handler})
        [item] = decoder.decode(tf.constant(serialized), ["item"])
        with v1.Session(graph=graph) as session:
            session.run(v1.tables_initializer())
            return session.run(item)


IMAGE_FEATURES = {
    "image/encoded": tf.io.FixedLenFeature((), tf.string),
    "image/format": tf.io.FixedLenFeature((), tf.string),
}


def decode_image(encoded, image_format, **handler_args):
    return decode(serialize(image__encoded=[encoded], image__format=[image_format]),
                  IMAGE_FEATURES, tfexample_decoder.Image(**handler_args))


@pytest.mark.parametrize("channels", [1, 3, 4])
def test_png_equals_decode_png_and_source(rng, channels):
    image = rng.integers(0, 256, size=(5, 7, channels), dtype=np.uint8)
    encoded = tf.io.encode_png(image).numpy()
    decoded = decode_image(encoded, b"png", channels=channels)
    np.testing.assert_array_equal(decoded, tf.io.decode_png(encoded, channels=channels).numpy())
    np.testing.assert_array_equal(decoded, image)


def test_jpeg_equals_decode_jpeg(rng):
    image = rng.integers(0, 256, size=(8, 6, 3), dtype=np.uint8)
    encoded = tf.io.encode_jpeg(image).numpy()
    decoded = decode_image(encoded, b"jpeg")
    np.testing.assert_array_equal(decoded, tf.io.decode_jpeg(encoded, channels=3).numpy())
    assert decoded.dtype == np.uint8 and decoded.shape == (8, 6, 3)


@pytest.mark.parametrize("dtype", [np.uint8, np.float32])
@pytest.mark.parametrize("image_format", [b"raw", b"RAW"])
def test_raw_equals_source_bytes(rng, dtype, image_format):
    image = rng.integers(0, 256, size=(3, 4, 3)).astype(dtype)
    decoded = decode_image(image.tobytes(), image_format, shape=image.shape,
                           dtype=tf.as_dtype(dtype))
    np.testing.assert_array_equal(decoded, image)


def test_png16_decodes_at_full_depth(rng):
    image = rng.integers(0, 65536, size=(4, 5, 3), dtype=np.uint16)
    decoded = decode_image(tf.io.encode_png(image).numpy(), b"png", dtype=tf.uint16)
    assert decoded.dtype == np.uint16
    np.testing.assert_array_equal(decoded, image)


def test_png8_at_uint16_keeps_tf_slim_cast(rng):
    image = rng.integers(0, 256, size=(4, 5, 3), dtype=np.uint8)
    decoded = decode_image(tf.io.encode_png(image).numpy(), b"png", dtype=tf.uint16)
    np.testing.assert_array_equal(decoded, image.astype(np.uint16))


def test_repeated_png16_images(rng):
    images = rng.integers(0, 65536, size=(2, 3, 3, 1), dtype=np.uint16)
    encoded = [tf.io.encode_png(image).numpy() for image in images]
    decoded = decode(
        serialize(image__encoded=encoded, image__format=[b"png"]),
        {"image/encoded": tf.io.FixedLenFeature((2,), tf.string),
         "image/format": tf.io.FixedLenFeature((), tf.string)},
        tfexample_decoder.Image(channels=1, dtype=tf.uint16, repeated=True))
    np.testing.assert_array_equal(decoded, images)


def test_tensor_with_shape_keys():
    values = np.arange(12)
    decoded = decode(
        serialize(values=values.tolist(), height=[3], width=[4]),
        {"values": tf.io.VarLenFeature(tf.int64), "height": tf.io.VarLenFeature(tf.int64),
         "width": tf.io.FixedLenFeature([1], tf.int64)},
        tfexample_decoder.Tensor("values", shape_keys=["height", "width"]))
    np.testing.assert_array_equal(decoded, values.reshape(3, 4))


def test_sparse_tensor_densified():
    decoded = decode(
        serialize(indices=[0, 3], values=[1.5, -2.0]),
        {"indices": tf.io.VarLenFeature(tf.int64), "values": tf.io.VarLenFeature(tf.float32)},
        tfexample_decoder.SparseTensor(shape=[5], densify=True, default_value=-1.0))
    np.testing.assert_array_equal(decoded, [1.5, -1.0, -1.0, -2.0, -1.0])


@pytest.mark.parametrize("features, expected", [
    ({"primary": [7, 8]}, [7, 8]),
    ({"backup": [5]}, [5]),
])
def test_backup_handler(features, expected):
    decoded = decode(
        serialize(**features),
        {"primary": tf.io.VarLenFeature(tf.int64), "backup": tf.io.VarLenFeature(tf.int64)},
        tfexample_decoder.BackupHandler(tfexample_decoder.Tensor("primary"),
                                        tfexample_decoder.Tensor("backup")))
    np.testing.assert_array_equal(decoded, expected)


def test_lookup_tensor():
    graph = tf.Graph()
    with graph.as_default():
        table = tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(
            [b"cat", b"dog", b"emu"], tf.constant([0, 1, 2], tf.int64)), -1)
    decoded = decode(serialize(names=[b"emu", b"cat", b"yak"]),
                     {"names": tf.io.VarLenFeature(tf.string)},
                     tfexample_decoder.LookupTensor("names", table), graph=graph)
    np.testing.assert_array_equal(decoded, [2, 0, -1])


def test_bounding_box(rng):
    boxes = rng.random((3, 4)).astype(np.float32)
    keys = ["ymin", "xmin", "ymax", "xmax"]
    decoded = decode(
        serialize(**{f"bbox__{key}": boxes[:, i].tolist() for i, key in enumerate(keys)}),
        {f"bbox/{key}": tf.io.VarLenFeature(tf.float32) for key in keys},
        tfexample_decoder.BoundingBox(keys, prefix="bbox/"))
    np.testing.assert_array_equal(decoded, boxes)


def test_item_handler_callback():
    decoded = decode(
        serialize(a=[1, 2, 3], b=[10, 20, 30]),
        {"a": tf.io.FixedLenFeature([3], tf.int64), "b": tf.io.FixedLenFeature([3], tf.int64)},
        tfexample_decoder.ItemHandlerCallback(["a", "b"], lambda t: t["a"] * t["b"]))
    np.testing.assert_array_equal(decoded, [10, 40, 90])


def test_unknown_item_names_valid_items():
    decoder = tfexample_decoder.TFExampleDecoder(
        {"label": tf.io.FixedLenFeature((), tf.int64)},
        {"label": tfexample_decoder.Tensor("label"), "image": tfexample_decoder.Image()})
    with tf1compat.legacy_graph(), pytest.raises(UnknownItemError) as caught:
        decoder.decode(tf.constant(serialize(label=[1])), ["lable"])
    assert isinstance(caught.value, ValueError)
    assert caught.value.item == "lable"
    assert caught.value.valid_items == ["image", "label"]
    assert str(caught.value) == "unknown item 'lable'; valid items: ['image', 'label']"


def test_patch_is_idempotent():
    assert tf1compat.patch_tf_slim() == []
    assert tfexample_decoder.control_flow_ops.case is v1.case
    assert tfexample_decoder.array_ops.stack is tf.stack


def test_restore_missing_leaves_existing_names_and_the_namespace_itself_alone():
    from tf1compat.slim._namespace import Patches

    def own_case():
        """A newer TensorFlow's own function."""

    base = types.SimpleNamespace(case=own_case, __name__="ops", __doc__=None)
    fixed = types.SimpleNamespace(ops=base)
    patches = Patches()
    assert patches.rebind_namespace(fixed, "ops", {"case": v1.case, "cond": v1.cond},
                                    only_missing=True) == ["cond"]
    assert fixed.ops.case is own_case and fixed.ops.cond is v1.cond
    assert not hasattr(base, "cond")  # a stand-in got it, not the namespace
    assert patches.rebind_namespace(fixed, "ops", {"case": v1.case, "cond": v1.cond},
                                    only_missing=True) == []
    assert patches.rebind_namespace(types.SimpleNamespace(), "ops", {"case": v1.case}) == []
    patches.undo()
    assert fixed.ops is base


def test_the_repair_gives_tf_slim_stand_ins_and_leaves_tensorflow_alone():
    import sys

    private = [sys.modules["tensorflow.python.ops.control_flow_ops"],
               sys.modules["tensorflow.python.ops.array_ops"]]
    assert not any(name in vars(module) for module in private for name in ("case", "stack"))
    assert tfexample_decoder.control_flow_ops is not private[0]
    assert tfexample_decoder.control_flow_ops.group is private[0].group
