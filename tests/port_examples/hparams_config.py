"""NASNet-style configuration, TF1 style: tf.contrib.training.HParams built by config
functions, copied and overridden for evaluation (copy.deepcopy, set_hparam), overridden
from a flag's name=value string and a dict, and a small model built from its values."""
import copy

import numpy as np
import tensorflow as tf
from tensorflow.contrib.training import HParams

tf.app.flags.DEFINE_string("hparams", "num_cells=2,filter_sizes=[3,5],use_aux_head=false",
                           "name=value overrides of the configuration")
FLAGS = tf.app.flags.FLAGS
CONFIG_CLASS = tf.contrib.training.HParams


def cifar_config():
    return tf.contrib.training.HParams(
        stem_multiplier=3.0,
        drop_path_keep_prob=0.6,
        num_cells=18,
        use_aux_head=True,
        filter_sizes=[3, 3],
        data_format="NHWC",
        total_training_steps=937500,
    )


def _update_hparams(hparams, is_training):
    if not is_training:
        hparams.set_hparam("drop_path_keep_prob", 1)


def build(images, config, is_training):
    hparams = copy.deepcopy(config)
    _update_hparams(hparams, is_training)
    net = images * hparams.stem_multiplier
    for cell, size in enumerate(hparams.filter_sizes[:hparams.num_cells]):
        kernel = tf.get_variable("kernel_%d" % cell, [size, size, net.get_shape()[-1], 4],
                                 initializer=tf.truncated_normal_initializer(stddev=0.1))
        net = tf.nn.relu(tf.nn.conv2d(net, kernel, [1, 1, 1, 1], "SAME"))
        net = tf.nn.dropout(net, keep_prob=hparams.drop_path_keep_prob, seed=cell)
    return tf.reduce_mean(net, [1, 2]), hparams


def main(_):
    tf.set_random_seed(3)
    config = cifar_config().parse(FLAGS.hparams)
    config.override_from_dict({"total_training_steps": 10})
    assert isinstance(config, HParams) and isinstance(config, CONFIG_CLASS)
    print(config)
    images = tf.placeholder(tf.float32, [None, 8, 8, 3])
    features, evaluation = build(images, config, is_training=False)
    print(repr(evaluation))
    print("training keeps", config.drop_path_keep_prob, "evaluation", evaluation.values())
    print("json", evaluation.to_json(sort_keys=True))
    try:
        evaluation.parse("num_cells=2.5")
    except ValueError as e:
        print("refused:", e)
    x = np.random.RandomState(0).rand(2, 8, 8, 3).astype(np.float32)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        print("finite loss", bool(np.isfinite(sess.run(features, {images: x})).all()))


if __name__ == "__main__":
    tf.app.run()
