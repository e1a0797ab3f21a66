"""Read a slim dataset through DatasetDataProvider, batch it with tf.train.batch
and slim's prefetch_queue, and count what arrives: the input half of slim's
train_image_classifier.py.

    tf1compat run examples/legacy/slim_batches.py --dataset_dir=OUT
"""

from __future__ import print_function

import collections

import model
import shapes
import tensorflow as tf

slim = tf.contrib.slim

tf.app.flags.DEFINE_string("dataset_dir", None, "the output folder of build_image_records.py")
tf.app.flags.DEFINE_string("split", "train", "train or validation")
tf.app.flags.DEFINE_integer("batch_size", 4, "images per batch")
FLAGS = tf.app.flags.FLAGS


def main(_):
  if not FLAGS.dataset_dir:
    raise ValueError("You must supply the dataset directory with --dataset_dir")
  with tf.Graph().as_default():
    dataset = shapes.get_split(FLAGS.split, FLAGS.dataset_dir)
    provider = slim.dataset_data_provider.DatasetDataProvider(
        dataset, num_readers=2, shuffle=False, num_epochs=1,
        common_queue_capacity=20 * FLAGS.batch_size, common_queue_min=10 * FLAGS.batch_size)
    image, label = provider.get(["image", "label"])
    images, labels = tf.train.batch([model.preprocess(image), label],
                                    batch_size=FLAGS.batch_size, num_threads=2,
                                    capacity=5 * FLAGS.batch_size)
    batch_queue = slim.prefetch_queue.prefetch_queue([images, labels], capacity=2)
    images, labels = batch_queue.dequeue()

    counts = collections.Counter()
    with tf.Session() as sess:
      sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
      coord = tf.train.Coordinator()
      threads = tf.train.start_queue_runners(sess=sess, coord=coord)
      try:
        while not coord.should_stop():
          batch_images, batch_labels = sess.run([images, labels])
          counts.update(batch_labels.tolist())
      except tf.errors.OutOfRangeError:
        pass
      finally:
        coord.request_stop()
      coord.join(threads)
  print("read %d of %d images, shape %s" % (sum(counts.values()), dataset.num_samples,
                                            batch_images.shape[1:]))
  for label in sorted(counts):
    print("%s %d" % (dataset.labels_to_names[label], counts[label]))


if __name__ == "__main__":
  tf.app.run()
