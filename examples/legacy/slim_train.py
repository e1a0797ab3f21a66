"""Train the tiny slim network on a slim dataset with slim.learning.train: the
shape of slim's train_image_classifier.py, small enough to finish in seconds.

    tf1compat run examples/legacy/slim_train.py --dataset_dir=OUT --train_dir=TRAIN
"""

from __future__ import print_function

import model
import shapes
import tensorflow as tf

slim = tf.contrib.slim

tf.app.flags.DEFINE_string("dataset_dir", None, "the output folder of build_image_records.py")
tf.app.flags.DEFINE_string("train_dir", "/tmp/slim_train", "where checkpoints are written")
tf.app.flags.DEFINE_integer("batch_size", 8, "images per step")
tf.app.flags.DEFINE_integer("max_number_of_steps", 20, "training steps")
tf.app.flags.DEFINE_float("learning_rate", 0.1, "learning rate")
FLAGS = tf.app.flags.FLAGS


def main(_):
  if not FLAGS.dataset_dir:
    raise ValueError("You must supply the dataset directory with --dataset_dir")
  tf.logging.set_verbosity(tf.logging.INFO)
  with tf.Graph().as_default():
    global_step = slim.create_global_step()
    dataset = shapes.get_split("train", FLAGS.dataset_dir)
    provider = slim.dataset_data_provider.DatasetDataProvider(
        dataset, num_readers=2, common_queue_capacity=20 * FLAGS.batch_size,
        common_queue_min=10 * FLAGS.batch_size)
    image, label = provider.get(["image", "label"])
    images, labels = tf.train.batch([model.preprocess(image), label],
                                    batch_size=FLAGS.batch_size, num_threads=2,
                                    capacity=5 * FLAGS.batch_size)
    labels = slim.one_hot_encoding(labels, dataset.num_classes)
    batch_queue = slim.prefetch_queue.prefetch_queue([images, labels], capacity=2)
    images, labels = batch_queue.dequeue()

    logits = model.tiny_net(images, dataset.num_classes, is_training=True)
    slim.losses.softmax_cross_entropy(logits, labels)
    total_loss = slim.losses.get_total_loss()
    tf.contrib.deprecated.scalar_summary("losses/total_loss", total_loss)
    learning_rate = tf.train.exponential_decay(FLAGS.learning_rate, global_step, 100, 0.9,
                                               staircase=True)
    optimizer = tf.train.GradientDescentOptimizer(learning_rate)
    train_op = slim.learning.create_train_op(total_loss, optimizer)
    final_loss = slim.learning.train(
        train_op, logdir=FLAGS.train_dir, number_of_steps=FLAGS.max_number_of_steps,
        log_every_n_steps=5, save_summaries_secs=600, save_interval_secs=600)
  print("final loss %.6f after %d steps" % (final_loss, FLAGS.max_number_of_steps))


if __name__ == "__main__":
  tf.app.run()
