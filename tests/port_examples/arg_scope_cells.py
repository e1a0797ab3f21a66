"""NASNet-style cells, TF1 style: tf.contrib.framework's arg_scope and add_arg_scope
bound to module names, slim layers inside the scope with tf.contrib.layers' initializer
and regularizer, a few training steps."""
import numpy as np
import tensorflow as tf

arg_scope = tf.contrib.framework.arg_scope
slim = tf.contrib.slim


@tf.contrib.framework.add_arg_scope
def cell(net, filters, stride=1, scope=None):
    """Two convolutions and a shortcut; its stride set by the enclosing arg_scope."""
    with tf.variable_scope(scope, "cell"):
        branch = slim.conv2d(net, filters, [3, 3], stride=stride, scope="conv_a")
        branch = slim.conv2d(branch, filters, [3, 3], activation_fn=None, scope="conv_b")
        shortcut = slim.conv2d(net, filters, [1, 1], stride=stride, activation_fn=None,
                               scope="shortcut")
        return tf.nn.relu(branch + shortcut)


def main(_):
    tf.set_random_seed(5)
    rng = np.random.RandomState(0)
    images = tf.placeholder(tf.float32, [None, 8, 8, 3])
    labels = tf.placeholder(tf.int64, [None])
    # NASNet's arg_scope takes its regularizer and initializer from tf.contrib.layers
    initializer = tf.contrib.layers.variance_scaling_initializer(mode="FAN_OUT")
    with arg_scope([slim.conv2d], weights_initializer=initializer,
                   weights_regularizer=tf.contrib.layers.l2_regularizer(1e-3), padding="SAME"):
        with arg_scope([cell], stride=2):
            net = cell(images, 4, scope="cell_0")
            net = cell(net, 8, scope="cell_1")
    logits = slim.fully_connected(slim.flatten(net), 3, activation_fn=None, scope="logits")
    loss = tf.losses.sparse_softmax_cross_entropy(labels, logits) + tf.add_n(
        tf.losses.get_regularization_losses())
    train = tf.train.GradientDescentOptimizer(0.05).minimize(loss)
    x = rng.rand(6, 8, 8, 3).astype(np.float32)
    y = rng.randint(0, 3, 6)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for step in range(3):
            value, _ = sess.run([loss, train], {images: x, labels: y})
            print("step %d loss %.4f" % (step, value))
    print("cell_1 output", net.get_shape().as_list())


if __name__ == "__main__":
    tf.app.run()
