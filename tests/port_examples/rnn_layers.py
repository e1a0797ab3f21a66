"""An LSTM over random sequences, TF1 style: tf.contrib.rnn, tf.layers, NumPy 1.x."""
import numpy as np
import tensorflow as tf

tf.app.flags.DEFINE_integer("steps", 3, "training steps")
FLAGS = tf.app.flags.FLAGS


def main(_):
    tf.set_random_seed(3)
    rng = np.random.RandomState(0)
    inputs = tf.placeholder(tf.float32, [None, 5, 2])
    targets = tf.placeholder(tf.float32, [None, 1])
    cell = tf.contrib.rnn.MultiRNNCell([tf.contrib.rnn.BasicLSTMCell(4) for _ in range(2)])
    outputs, _ = tf.nn.dynamic_rnn(cell, inputs, dtype=tf.float32)
    prediction = tf.layers.dense(outputs[:, -1], 1, name="head")
    loss = tf.losses.mean_squared_error(targets, prediction)
    train = tf.train.AdamOptimizer(0.01).minimize(loss)
    x = rng.rand(6, 5, 2).astype(np.float32)
    y = x.sum(axis=(1, 2)).reshape(-1, 1).astype(np.float_)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for step in range(FLAGS.steps):
            value, _ = sess.run([loss, train], {inputs: x, targets: y})
            print("step", step, "loss %.5f" % value)
    names = sorted(v.name for v in tf.trainable_variables())[:2]
    print("bytes", len(x.tostring()), "spread %.4f" % x.ptp(), names)


if __name__ == "__main__":
    tf.app.run()
