"""The ``tf.train.Example`` message classes on the protobuf package, without TensorFlow.

The descriptor is built here, in a private pool, from the messages of TensorFlow's
``tensorflow/core/example/feature.proto`` and ``example.proto`` (proto3; field
numbers and packing as there)::

    BytesList { repeated bytes value = 1; }
    FloatList { repeated float value = 1 [packed = true]; }
    Int64List { repeated int64 value = 1 [packed = true]; }
    Feature   { oneof kind { BytesList bytes_list = 1; FloatList float_list = 2;
                             Int64List int64_list = 3; } }
    Features  { map<string, Feature> feature = 1; }
    Example   { Features features = 1; }

A test compares it field by field with TensorFlow's own descriptor.
"""

from typing import Any

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

_PACKAGE = "tensorflow"
_Field = descriptor_pb2.FieldDescriptorProto


def _field(message: Any, name: str, number: int, kind: int, *, repeated: bool = False,
           type_name: str | None = None, oneof: int | None = None) -> None:
    field = message.field.add(name=name, number=number, type=kind,
                              label=_Field.LABEL_REPEATED if repeated else _Field.LABEL_OPTIONAL)
    if type_name:
        field.type_name = f".{_PACKAGE}.{type_name}"
    if oneof is not None:
        field.oneof_index = oneof
    if repeated and kind in (_Field.TYPE_FLOAT, _Field.TYPE_INT64):
        field.options.packed = True


def _file_descriptor() -> descriptor_pb2.FileDescriptorProto:
    proto = descriptor_pb2.FileDescriptorProto(
        name="tf1compat/records/example.proto", package=_PACKAGE, syntax="proto3")
    for name, kind in (("BytesList", _Field.TYPE_BYTES), ("FloatList", _Field.TYPE_FLOAT),
                       ("Int64List", _Field.TYPE_INT64)):
        _field(proto.message_type.add(name=name), "value", 1, kind, repeated=True)
    feature = proto.message_type.add(name="Feature")
    feature.oneof_decl.add(name="kind")
    for number, name in enumerate(("bytes_list", "float_list", "int64_list"), 1):
        type_name = "".join(part.title() for part in name.split("_"))
        _field(feature, name, number, _Field.TYPE_MESSAGE, type_name=type_name, oneof=0)
    features = proto.message_type.add(name="Features")
    entry = features.nested_type.add(name="FeatureEntry")
    entry.options.map_entry = True
    _field(entry, "key", 1, _Field.TYPE_STRING)
    _field(entry, "value", 2, _Field.TYPE_MESSAGE, type_name="Feature")
    _field(features, "feature", 1, _Field.TYPE_MESSAGE, repeated=True,
           type_name="Features.FeatureEntry")
    _field(proto.message_type.add(name="Example"), "features", 1, _Field.TYPE_MESSAGE,
           type_name="Features")
    return proto


_POOL = descriptor_pool.DescriptorPool()  # private: TensorFlow's own pool stays untouched
_POOL.AddSerializedFile(_file_descriptor().SerializeToString())
Example = message_factory.GetMessageClass(_POOL.FindMessageTypeByName(f"{_PACKAGE}.Example"))

__all__ = ["Example"]
