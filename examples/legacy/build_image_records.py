"""Convert a folder of images, one subfolder per class, to sharded TFRecords in
tf-slim's layout (NAME_train-00000-of-00002.tfrecord, ..., labels.txt), driven
by tf.app.flags the way slim's download_and_convert_flowers.py is.

    tf1compat run examples/legacy/build_image_records.py --image_dir=DIR --output_dir=OUT

Without --image_dir it first draws a small synthetic dataset of coloured squares.
"""

from __future__ import print_function

import math
import os
import random
import sys
import tempfile

import numpy as np
import tensorflow as tf

flags = tf.app.flags
flags.DEFINE_string("image_dir", "", "folder of class folders of JPEG/PNG images")
flags.DEFINE_string("output_dir", "", "where to write the TFRecords and labels.txt")
flags.DEFINE_string("dataset_name", "shapes", "prefix of the output files")
flags.DEFINE_integer("num_shards", 2, "files per split")
flags.DEFINE_integer("validation_count", 6, "images kept for the validation split")
flags.DEFINE_integer("seed", 0, "seed of the shuffle before the split")
FLAGS = flags.FLAGS


class ImageReader(object):
  """Decodes JPEG or PNG bytes in one long-lived session to learn the image size."""

  def __init__(self):
    self._data = tf.placeholder(dtype=tf.string)
    self._decoded = tf.image.decode_image(self._data, channels=3)

  def read_image_dims(self, sess, image_data):
    image = sess.run(self._decoded, feed_dict={self._data: image_data})
    return image.shape[0], image.shape[1]


def draw_synthetic_dataset(folder, per_class=10):
  rng = np.random.RandomState(FLAGS.seed)
  with tf.Graph().as_default(), tf.Session() as sess:
    pixels = tf.placeholder(tf.uint8, [16, 16, 3])
    encode = tf.image.encode_png(pixels)
    for channel, name in enumerate(["blue", "green", "red"][::-1]):
      tf.gfile.MakeDirs(os.path.join(folder, name))
      for index in range(per_class):
        image = rng.randint(0, 60, (16, 16, 3)).astype(np.uint8)
        image[:, :, channel] += 180
        with open(os.path.join(folder, name, "%s-%02d.png" % (name, index)), "wb") as f:
          f.write(sess.run(encode, {pixels: image}))


def get_filenames_and_classes(image_dir):
  class_names = sorted(d for d in os.listdir(image_dir)
                       if os.path.isdir(os.path.join(image_dir, d)))
  filenames = []
  for name in class_names:
    folder = os.path.join(image_dir, name)
    filenames.extend(os.path.join(folder, f) for f in sorted(os.listdir(folder)))
  return filenames, class_names


def int64_feature(value):
  return tf.train.Feature(int64_list=tf.train.Int64List(value=[value]))


def bytes_feature(value):
  return tf.train.Feature(bytes_list=tf.train.BytesList(value=[value]))


def image_to_tfexample(image_data, image_format, height, width, class_id):
  return tf.train.Example(features=tf.train.Features(feature={
      "image/encoded": bytes_feature(image_data),
      "image/format": bytes_feature(image_format),
      "image/class/label": int64_feature(class_id),
      "image/height": int64_feature(height),
      "image/width": int64_feature(width)}))


def convert_dataset(split_name, filenames, class_ids, output_dir):
  per_shard = int(math.ceil(len(filenames) / float(FLAGS.num_shards)))
  with tf.Graph().as_default():
    image_reader = ImageReader()
    with tf.Session() as sess:
      for shard in range(FLAGS.num_shards):
        output = os.path.join(output_dir, "%s_%s-%05d-of-%05d.tfrecord" % (
            FLAGS.dataset_name, split_name, shard, FLAGS.num_shards))
        with tf.python_io.TFRecordWriter(output) as writer:
          for i in range(shard * per_shard, min((shard + 1) * per_shard, len(filenames))):
            sys.stdout.write("\r>> Converting image %d/%d shard %d" % (
                i + 1, len(filenames), shard))
            sys.stdout.flush()
            image_data = tf.gfile.GFile(filenames[i], "rb").read()
            height, width = image_reader.read_image_dims(sess, image_data)
            class_name = os.path.basename(os.path.dirname(filenames[i]))
            image_format = b"png" if filenames[i].endswith(".png") else b"jpg"
            example = image_to_tfexample(image_data, image_format, height, width,
                                         class_ids[class_name])
            writer.write(example.SerializeToString())
  sys.stdout.write("\n")


def main(_):
  if not FLAGS.output_dir:
    raise ValueError("You must supply the output folder with --output_dir")
  image_dir = FLAGS.image_dir
  if not image_dir:
    image_dir = tempfile.mkdtemp()
    draw_synthetic_dataset(image_dir)
  if not tf.gfile.Exists(FLAGS.output_dir):
    tf.gfile.MakeDirs(FLAGS.output_dir)
  filenames, class_names = get_filenames_and_classes(image_dir)
  class_ids = {name: index for index, name in enumerate(class_names)}
  random.seed(FLAGS.seed)
  random.shuffle(filenames)
  validation = filenames[:FLAGS.validation_count]
  training = filenames[FLAGS.validation_count:]
  convert_dataset("train", training, class_ids, FLAGS.output_dir)
  convert_dataset("validation", validation, class_ids, FLAGS.output_dir)
  with tf.gfile.Open(os.path.join(FLAGS.output_dir, "labels.txt"), "w") as f:
    for class_id, name in enumerate(class_names):
      f.write("%d:%s\n" % (class_id, name))
  print("Finished converting %d training and %d validation images of %d classes" % (
      len(training), len(validation), len(class_names)))


if __name__ == "__main__":
  tf.app.run()
