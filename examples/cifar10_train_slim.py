"""Train a small conv net on CIFAR-10 fed by slim's data pipeline, TF1 style.

The data (synthetic by default, real CIFAR-10 with --data) is converted to slim's
TFRecords by tf1compat.cifar10.convert, read back through slim's
DatasetDataProvider and tf.train.shuffle_batch, and one tf1compat.SessionIterator
runs the whole graph: queue runners, initializers and the training op. The
synthetic images carry a class-dependent colour, so the loss really goes down.

    python examples/cifar10_train_slim.py                          # synthetic data
    python examples/cifar10_train_slim.py --data cifar-10-binary.tar.gz --steps 2000
"""

import argparse
import os
import tempfile

import tf1compat as tc
from tf1compat import cifar10


def small_convnet(images, num_classes):
    """Two 3x3 conv + max-pool blocks and a linear layer; returns the logits."""
    # TensorFlow is imported inside functions: convert()'s worker processes
    # re-import this script, and they must stay free of TensorFlow.
    import tensorflow as tf
    v1 = tf.compat.v1
    net = images
    for index, channels in enumerate((16, 32)):
        kernel = v1.get_variable(f"conv{index}", [3, 3, net.shape[-1], channels],
                                 initializer=v1.initializers.he_normal())
        net = tf.nn.relu(tf.nn.conv2d(net, kernel, strides=1, padding="SAME"))
        net = tf.nn.max_pool2d(net, ksize=2, strides=2, padding="SAME")
    net = tf.reshape(net, [-1, 8 * 8 * 32])
    weights = v1.get_variable("logits", [8 * 8 * 32, num_classes],
                              initializer=v1.initializers.glorot_uniform())
    return tf.matmul(net, weights) + v1.get_variable(
        "bias", [num_classes], initializer=v1.initializers.zeros())


def train(dataset_dir, steps, batch_size, seed=0, log_every=50):
    """Train for ``steps`` steps on the converted train split; returns the losses."""
    import tensorflow as tf

    from tf1compat import slim  # before TensorFlow, so that its start-up log stays quiet
    with tc.legacy_graph(seed=seed):
        dataset = cifar10.get_split("train", dataset_dir)
        provider = slim.dataset_data_provider.DatasetDataProvider(
            dataset, num_readers=2, common_queue_capacity=8 * batch_size,
            common_queue_min=2 * batch_size, seed=seed)
        image, label = provider.get(["image", "label"])
        image = tf.cast(image, tf.float32) / 255.0 - 0.5
        images, labels = tc.shuffle_batch([image, label], batch_size,
                                          capacity=20 * batch_size,
                                          min_after_dequeue=10 * batch_size, seed=seed)
        logits = small_convnet(images, dataset.num_classes)
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
            labels=labels, logits=logits))
        train_op = tf.compat.v1.train.AdamOptimizer(1e-3).minimize(loss)
        losses = []
        with tc.SessionIterator({"loss": loss, "train": train_op}) as steps_run:
            for step, values in zip(range(1, steps + 1), steps_run, strict=False):
                losses.append(float(values["loss"]))
                if step == 1 or step % log_every == 0 or step == steps:
                    print(f"step {step:4d}  loss {values['loss']:.3f}")
    return losses


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=None,
                        help="real CIFAR-10: cifar-10-binary.tar.gz or its extracted folder "
                             "(default: synthetic data)")
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--workers", type=int, default=None,
                        help="conversion processes (default: all cores)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as workdir:
        source = args.data or cifar10.make_synthetic(workdir, num_train=2000, num_test=200)
        records = os.path.join(workdir, "records")
        cifar10.convert(source, records, workers=args.workers)
        train(records, args.steps, args.batch_size)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
