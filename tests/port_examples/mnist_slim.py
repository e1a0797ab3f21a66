"""Slim layers on MNIST-like data, TF1 style."""
import os

import numpy as np
import scipy.misc
import tensorflow as tf
from tensorflow.examples.tutorials.mnist import input_data

slim = tf.contrib.slim
flags = tf.app.flags
flags.DEFINE_string("data_dir", "mnist", "where the idx files are")
flags.DEFINE_integer("steps", 5, "training steps")
FLAGS = flags.FLAGS


def model(images):
    net = tf.reshape(images, [-1, 28, 28, 1])
    with slim.arg_scope([slim.conv2d, slim.fully_connected],
                        weights_initializer=tf.truncated_normal_initializer(stddev=0.1)):
        net = slim.conv2d(net, 4, [5, 5], scope="conv1")
        net = slim.max_pool2d(net, [2, 2], scope="pool1")
        net = slim.flatten(net)
        return slim.fully_connected(net, 10, activation_fn=None, scope="logits")


def main(_):
    tf.set_random_seed(7)
    data = input_data.read_data_sets(FLAGS.data_dir, one_hot=False, validation_size=10)
    images = tf.placeholder(tf.float32, [None, 784])
    labels = tf.placeholder(tf.int64, [None])
    logits = model(images)
    loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
    train_op = slim.learning.create_train_op(loss, tf.train.GradientDescentOptimizer(0.5))
    correct = tf.reduce_sum(tf.to_float(tf.equal(tf.argmax(logits, 1), labels)))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for step in range(FLAGS.steps):
            batch_x, batch_y = data.train.next_batch(8, shuffle=False)
            value = sess.run(train_op, {images: batch_x, labels: batch_y})
            print("step %d loss %.5f" % (step, value))
        hits = sess.run(correct, {images: data.test.images, labels: data.test.labels})
    first = data.test.images[0].reshape(28, 28).astype(np.float_)
    scipy.misc.imsave(os.path.join(FLAGS.data_dir, "first.png"), first)
    print("accuracy", np.asscalar(hits) / len(data.test.labels), np.int(hits))
    print("saved", scipy.misc.imread(os.path.join(FLAGS.data_dir, "first.png")).max())


if __name__ == "__main__":
    tf.app.run()
