"""A tiny slim network shared by slim_train.py and slim_eval.py."""

import tensorflow as tf

slim = tf.contrib.slim

IMAGE_SIZE = 16


def preprocess(image):
  image = tf.image.resize_images(image, [IMAGE_SIZE, IMAGE_SIZE])
  image.set_shape([IMAGE_SIZE, IMAGE_SIZE, 3])
  return tf.to_float(image) / 255.0


def tiny_net(images, num_classes, is_training=True, scope="TinyNet"):
  with tf.variable_scope(scope, "TinyNet", [images]):
    with slim.arg_scope([slim.conv2d, slim.fully_connected],
                        weights_regularizer=slim.l2_regularizer(1e-4),
                        weights_initializer=tf.contrib.layers.xavier_initializer()):
      net = slim.conv2d(images, 8, [3, 3], scope="conv1")
      net = slim.max_pool2d(net, [2, 2], scope="pool1")
      net = slim.flatten(net)
      net = slim.dropout(net, 0.9, is_training=is_training, scope="dropout")
      return slim.fully_connected(net, num_classes, activation_fn=None, scope="logits")
