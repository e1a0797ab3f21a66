"""TFRecord files without TensorFlow: read (verifying CRCs), verify, write (bytes
identical to ``tf.io.TFRecordWriter``), detect compression, write sharded outputs and
choose the complete files of a conversion's output (:func:`committed_files`).

The record layer (:mod:`tf1compat.records.tfrecord`) keeps them, the conversion wing
the sharded writing (:mod:`tf1compat.convert.sharded`); Examples inside the records
are :mod:`tf1compat.example`.
"""

from tf1compat.convert.sharded import shard_paths, write_sharded
from tf1compat.records.committed import committed_files
from tf1compat.records.tfrecord import (
    COMPRESSION_TYPES,
    RecordIterator,
    TFRecordWriter,
    VerifyReport,
    count_records,
    crc32c,
    detect_compression,
    iter_records,
    masked_crc32c,
    verify,
    write_records,
)

__all__ = ["COMPRESSION_TYPES", "RecordIterator", "TFRecordWriter", "VerifyReport",
           "committed_files", "count_records", "crc32c", "detect_compression", "iter_records",
           "masked_crc32c", "shard_paths", "verify", "write_records", "write_sharded"]
