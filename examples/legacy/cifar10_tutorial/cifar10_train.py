"""Train a small CNN on CIFAR-10 binary batches with MonitoredTrainingSession, in
the style of the TensorFlow tutorial's cifar10_train.py.

    tf1compat run examples/legacy/cifar10_tutorial/cifar10_train.py \
        --data_dir=cifar-10-batches-bin --train_dir=/tmp/cifar10_train --max_steps=20
"""

from __future__ import absolute_import, division, print_function

import time

import cifar10_input
import tensorflow as tf

FLAGS = tf.app.flags.FLAGS
tf.app.flags.DEFINE_string("train_dir", "/tmp/cifar10_train", "checkpoints and event logs")
tf.app.flags.DEFINE_string("data_dir", "/tmp/cifar10_data/cifar-10-batches-bin",
                           "the CIFAR-10 binary batches")
tf.app.flags.DEFINE_integer("max_steps", 20, "number of batches to run")
tf.app.flags.DEFINE_integer("batch_size", 16, "images per batch")
tf.app.flags.DEFINE_integer("log_frequency", 5, "how often to log results to the console")


def _variable_with_weight_decay(name, shape, stddev, wd):
  var = tf.get_variable(name, shape, initializer=tf.truncated_normal_initializer(stddev=stddev))
  if wd is not None:
    tf.add_to_collection("losses", tf.multiply(tf.nn.l2_loss(var), wd, name="weight_loss"))
  return var


def inference(images):
  with tf.variable_scope("conv1") as scope:
    kernel = _variable_with_weight_decay("weights", [5, 5, 3, 16], stddev=5e-2, wd=None)
    conv = tf.nn.conv2d(images, kernel, [1, 1, 1, 1], padding="SAME")
    biases = tf.get_variable("biases", [16], initializer=tf.constant_initializer(0.0))
    conv1 = tf.nn.relu(tf.nn.bias_add(conv, biases), name=scope.name)
  pool1 = tf.nn.max_pool(conv1, ksize=[1, 3, 3, 1], strides=[1, 2, 2, 1], padding="SAME")
  with tf.variable_scope("softmax_linear") as scope:
    reshape = tf.reshape(pool1, [FLAGS.batch_size, -1])
    dim = reshape.get_shape()[1].value
    weights = _variable_with_weight_decay("weights", [dim, cifar10_input.NUM_CLASSES],
                                          stddev=1 / 192.0, wd=0.004)
    biases = tf.get_variable("biases", [cifar10_input.NUM_CLASSES],
                             initializer=tf.constant_initializer(0.0))
    return tf.add(tf.matmul(reshape, weights), biases, name=scope.name)


def loss(logits, labels):
  cross_entropy = tf.nn.sparse_softmax_cross_entropy_with_logits(
      labels=tf.cast(labels, tf.int64), logits=logits, name="cross_entropy_per_example")
  tf.add_to_collection("losses", tf.reduce_mean(cross_entropy, name="cross_entropy"))
  return tf.add_n(tf.get_collection("losses"), name="total_loss")


def train():
  with tf.Graph().as_default():
    global_step = tf.contrib.framework.get_or_create_global_step()
    with tf.device("/cpu:0"):
      images, labels = cifar10_input.distorted_inputs(FLAGS.data_dir, FLAGS.batch_size)
    logits = inference(images)
    total_loss = loss(logits, labels)
    tf.summary.scalar("total_loss", total_loss)
    train_op = tf.train.GradientDescentOptimizer(0.05).minimize(total_loss,
                                                                global_step=global_step)

    class _LoggerHook(tf.train.SessionRunHook):
      """Logs loss and runtime."""

      def begin(self):
        self._step = -1
        self._start_time = time.time()

      def before_run(self, run_context):
        self._step += 1
        return tf.train.SessionRunArgs(total_loss)

      def after_run(self, run_context, run_values):
        if self._step % FLAGS.log_frequency == 0:
          duration = time.time() - self._start_time
          self._start_time = time.time()
          print("step %d, loss = %.4f (%.3f sec/batch)" % (
              self._step, run_values.results, duration / FLAGS.log_frequency))

    with tf.train.MonitoredTrainingSession(
        checkpoint_dir=FLAGS.train_dir,
        hooks=[tf.train.StopAtStepHook(last_step=FLAGS.max_steps),
               tf.train.NanTensorHook(total_loss), _LoggerHook()],
        config=tf.ConfigProto(log_device_placement=False)) as mon_sess:
      while not mon_sess.should_stop():
        mon_sess.run(train_op)


def main(argv=None):
  if tf.gfile.Exists(FLAGS.train_dir):
    tf.gfile.DeleteRecursively(FLAGS.train_dir)
  tf.gfile.MakeDirs(FLAGS.train_dir)
  train()


if __name__ == "__main__":
  tf.app.run()
