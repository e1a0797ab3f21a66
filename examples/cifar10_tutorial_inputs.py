"""The TF1 CIFAR-10 tutorial's input pipeline: distorted_inputs over the binary files.

Reads data_batch_1..5.bin with FixedLengthRecordReader, randomly crops, flips and
changes brightness and contrast, standardizes, and shuffle-batches, exactly like
the tutorial's cifar10_input.distorted_inputs; tf1compat.SessionIterator turns the
queues into numpy batches. Prints what a few batches look like and how fast they
come. Synthetic data by default, real CIFAR-10 with --data.

    python examples/cifar10_tutorial_inputs.py
    python examples/cifar10_tutorial_inputs.py --data path/to/cifar-10-batches-bin
"""

import argparse
import tempfile
import time

import numpy as np

import tf1compat as tc
from tf1compat import cifar10


def show_batches(data_dir, steps, batch_size, min_after_dequeue):
    """Read ``steps`` distorted batches and print their statistics."""
    with tc.legacy_graph(seed=0):
        images, labels = cifar10.distorted_inputs(data_dir, batch_size,
                                                  min_after_dequeue=min_after_dequeue)
        with tc.SessionIterator((images, labels)) as batches:
            start = time.perf_counter()
            for step, (image_batch, label_batch) in zip(range(1, steps + 1), batches, strict=False):
                print(f"batch {step}: images {image_batch.dtype} {list(image_batch.shape)} "
                      f"mean {image_batch.mean():+.3f} std {image_batch.std():.3f}, "
                      f"classes {np.bincount(label_batch, minlength=10).tolist()}")
            seconds = time.perf_counter() - start
    buffer = min_after_dequeue or "40% of the training images"
    print(f"{steps * batch_size / seconds:,.0f} images/s once the shuffle buffer "
          f"({buffer}) had filled")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=None,
                        help="real CIFAR-10: the extracted cifar-10-batches-bin folder or its "
                             "parent (default: synthetic data)")
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--min-after-dequeue", type=int, default=None,
                        help="shuffle buffer (default: 40%% of the training images, "
                             "as in the tutorial)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as workdir:
        data_dir = args.data or cifar10.make_synthetic(workdir, num_train=1000, num_test=100)
        show_batches(data_dir, args.steps, args.batch_size, args.min_after_dequeue)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
