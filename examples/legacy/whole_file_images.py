"""Read a folder of PNG images with WholeFileReader, decode, resize and batch them
with tf.train.batch, and print each image's file name and mean pixel value.

    tf1compat run examples/legacy/whole_file_images.py --image_dir=DIR
"""

from __future__ import print_function

import os
import tempfile

import numpy as np
import tensorflow as tf

tf.app.flags.DEFINE_string("image_dir", "", "folder of .png files (default: synthetic)")
tf.app.flags.DEFINE_integer("size", 8, "images are resized to size x size")
FLAGS = tf.app.flags.FLAGS


def write_synthetic_images(folder, count=6):
  rng = np.random.RandomState(1)
  with tf.Graph().as_default(), tf.Session() as sess:
    pixels = tf.placeholder(tf.uint8, [None, None, 3])
    encode = tf.image.encode_png(pixels)
    for index in range(count):
      png = sess.run(encode, {pixels: rng.randint(0, 256, (8 + index, 10, 3)).astype(np.uint8)})
      with open(os.path.join(folder, "img-%02d.png" % index), "wb") as f:
        f.write(png)


def main(_):
  image_dir = FLAGS.image_dir
  if not image_dir:
    image_dir = tempfile.mkdtemp()
    write_synthetic_images(image_dir)
  filenames = sorted(tf.gfile.Glob(os.path.join(image_dir, "*.png")))
  filename_queue = tf.train.string_input_producer(filenames, num_epochs=1, shuffle=False)
  reader = tf.WholeFileReader()
  key, contents = reader.read(filename_queue)
  image = tf.image.decode_png(contents, channels=3)
  mean = tf.reduce_mean(tf.cast(image, tf.float64))
  resized = tf.image.resize_images(image, [FLAGS.size, FLAGS.size])
  keys, means, images = tf.train.batch([key, mean, resized], batch_size=4,
                                       allow_smaller_final_batch=True)

  with tf.Session() as sess:
    sess.run(tf.local_variables_initializer())
    coord = tf.train.Coordinator()
    threads = tf.train.start_queue_runners(sess=sess, coord=coord)
    try:
      while True:
        batch_keys, batch_means, batch_images = sess.run([keys, means, images])
        for name, value in zip(batch_keys, batch_means, strict=True):
          print("%s %.6f %s" % (os.path.basename(name.decode()), value,
                                batch_images.shape[1:]))
    except tf.errors.OutOfRangeError:
      pass
    finally:
      coord.request_stop()
      coord.join(threads)


if __name__ == "__main__":
  tf.app.run()
