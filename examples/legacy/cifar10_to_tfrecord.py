"""Convert CIFAR-10 binary batches to a TFRecord file, the TF1 way: a
FixedLengthRecordReader queue pipeline reads the records, one Session step per
record, and tf.python_io.TFRecordWriter writes them.

    tf1compat run examples/legacy/cifar10_to_tfrecord.py --data_dir=DIR --output=FILE

Without --data_dir it first writes two small synthetic batch files.
"""

from __future__ import print_function

import os
import tempfile

import numpy as np
import tensorflow as tf

tf.app.flags.DEFINE_string("data_dir", "", "folder with data_batch_*.bin (default: synthetic)")
tf.app.flags.DEFINE_string("output", "cifar10_train.tfrecord", "the TFRecord file to write")
FLAGS = tf.app.flags.FLAGS

LABEL_BYTES = 1
HEIGHT, WIDTH, DEPTH = 32, 32, 3
RECORD_BYTES = LABEL_BYTES + HEIGHT * WIDTH * DEPTH


def write_synthetic_batches(folder, records_per_file=40):
  rng = np.random.RandomState(0)
  for index in (1, 2):
    data = rng.randint(0, 256, size=(records_per_file, RECORD_BYTES)).astype(np.uint8)
    data[:, 0] %= 10
    with open(os.path.join(folder, "data_batch_%d.bin" % index), "wb") as f:
      f.write(data.tobytes())


def read_cifar10(filename_queue):
  """One (key, image [32, 32, 3] uint8, label int32) per step, as the tutorial reads it."""
  reader = tf.FixedLengthRecordReader(record_bytes=RECORD_BYTES)
  key, value = reader.read(filename_queue)
  record = tf.decode_raw(value, tf.uint8)
  label = tf.cast(tf.strided_slice(record, [0], [LABEL_BYTES]), tf.int32)
  depth_major = tf.reshape(tf.strided_slice(record, [LABEL_BYTES], [RECORD_BYTES]),
                           [DEPTH, HEIGHT, WIDTH])
  return key, tf.transpose(depth_major, [1, 2, 0]), label


def int64_feature(value):
  return tf.train.Feature(int64_list=tf.train.Int64List(value=[value]))


def bytes_feature(value):
  return tf.train.Feature(bytes_list=tf.train.BytesList(value=[value]))


def main(_):
  data_dir = FLAGS.data_dir
  if not data_dir:
    data_dir = tempfile.mkdtemp()
    write_synthetic_batches(data_dir)
  filenames = [os.path.join(data_dir, "data_batch_%d.bin" % i) for i in range(1, 6)]
  filenames = [f for f in filenames if tf.gfile.Exists(f)]
  filename_queue = tf.train.string_input_producer(filenames, num_epochs=1, shuffle=False)
  key, image, label = read_cifar10(filename_queue)

  count = 0
  with tf.Session() as sess, tf.python_io.TFRecordWriter(FLAGS.output) as writer:
    sess.run(tf.local_variables_initializer())
    coord = tf.train.Coordinator()
    threads = tf.train.start_queue_runners(sess=sess, coord=coord)
    try:
      while not coord.should_stop():
        record_key, pixels, record_label = sess.run([key, image, label])
        example = tf.train.Example(features=tf.train.Features(feature={
            "image/raw": bytes_feature(pixels.tobytes()),
            "image/height": int64_feature(HEIGHT),
            "image/width": int64_feature(WIDTH),
            "image/class/label": int64_feature(int(record_label[0])),
            "key": bytes_feature(record_key)}))
        writer.write(example.SerializeToString())
        count += 1
    except tf.errors.OutOfRangeError:
      print("done: one epoch read")
    finally:
      coord.request_stop()
    coord.join(threads)
  print("wrote %d records to %s" % (count, FLAGS.output))


if __name__ == "__main__":
  tf.app.run()
