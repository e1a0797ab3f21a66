"""Slim's data API and training loop, TF1 style: a DatasetDataProvider over image
TFRecords, tf.train.batch, batch_norm, gradient clipping, slim.learning.train."""
import os

import tensorflow as tf
import tensorflow.contrib.slim as slim

flags = tf.app.flags
flags.DEFINE_string("dataset_dir", "records", "folder of slim TFRecords")
flags.DEFINE_string("train_dir", "train", "checkpoints")
FLAGS = flags.FLAGS


def get_split(dataset_dir):
    keys_to_features = {
        "image/encoded": tf.FixedLenFeature((), tf.string, default_value=""),
        "image/format": tf.FixedLenFeature((), tf.string, default_value="png"),
        "image/class/label": tf.FixedLenFeature([], tf.int64, default_value=0),
    }
    items_to_handlers = {
        "image": slim.tfexample_decoder.Image(shape=[8, 8, 3]),
        "label": slim.tfexample_decoder.Tensor("image/class/label"),
    }
    decoder = slim.tfexample_decoder.TFExampleDecoder(keys_to_features, items_to_handlers)
    return slim.dataset.Dataset(
        data_sources=os.path.join(dataset_dir, "*.tfrecord"), reader=tf.TFRecordReader,
        decoder=decoder, num_samples=24, items_to_descriptions={})


def main(_):
    tf.set_random_seed(5)
    provider = slim.dataset_data_provider.DatasetDataProvider(
        get_split(FLAGS.dataset_dir), shuffle=False, num_epochs=None)
    image, label = provider.get(["image", "label"])
    images, labels = tf.train.batch([tf.to_float(image) / 255.0, label], batch_size=4)
    net = slim.conv2d(images, 4, [3, 3], normalizer_fn=slim.batch_norm,
                      normalizer_params={"is_training": True})
    logits = slim.fully_connected(slim.flatten(net), 10, activation_fn=None)
    tf.losses.sparse_softmax_cross_entropy(labels, logits)
    total = tf.losses.get_total_loss()
    train_op = slim.learning.create_train_op(
        total, tf.train.GradientDescentOptimizer(0.1), clip_gradient_norm=5.0)
    final = slim.learning.train(train_op, FLAGS.train_dir, number_of_steps=3,
                                log_every_n_steps=1000)
    print("trained 3 steps, finite loss", final == final)
    print("checkpoint", os.path.exists(os.path.join(FLAGS.train_dir, "checkpoint")))


if __name__ == "__main__":
    tf.app.run()
