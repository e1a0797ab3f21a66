"""Classic TF1 TFRecord input: string_input_producer -> TFRecordReader ->
parse_single_example -> shuffle_batch, run on TF2 through SessionIterator.

    python examples/tfrecord_queue.py [--data 'DIR/*.tfrecord'] [--epochs 2]

Without --data it writes a few seeded files to a temporary directory first.
"""

import argparse
import os
import tempfile

import numpy as np
import tensorflow as tf

import tf1compat as tc


def write_sample_files(directory, num_files=3, per_file=40, seed=0):
    rng = np.random.default_rng(seed)
    for f in range(num_files):
        with tf.io.TFRecordWriter(os.path.join(directory, f"train-{f}.tfrecord")) as writer:
            for r in range(per_file):
                writer.write(tf.train.Example(features=tf.train.Features(feature={
                    "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[r % 10])),
                    "vector": tf.train.Feature(float_list=tf.train.FloatList(
                        value=rng.standard_normal(4))),
                })).SerializeToString())
    return os.path.join(directory, "train-*.tfrecord")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", help="glob of TFRecord files")
    parser.add_argument("--epochs", type=int, default=2)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        pattern = args.data or write_sample_files(tmp)
        with tc.legacy_graph():
            filename_queue = tc.string_input_producer(
                [pattern], num_epochs=args.epochs, shuffle=True, seed=1)
            _, serialized = tc.TFRecordReader().read(filename_queue)
            features = tf.io.parse_single_example(serialized, {
                "label": tf.io.FixedLenFeature([], tf.int64),
                "vector": tf.io.FixedLenFeature([4], tf.float32),
            })
            vectors, labels = tc.shuffle_batch(
                [features["vector"], features["label"]], batch_size=16,
                capacity=200, min_after_dequeue=100, seed=1, allow_smaller_final_batch=True)
            total = 0
            with tc.SessionIterator({"vectors": vectors, "labels": labels}) as batches:
                for batch in batches:
                    total += len(batch["labels"])
            print(f"read {total} examples in {batches.steps} batches "
                  f"({args.epochs} epochs); last labels: {batch['labels'][:8].tolist()}")
    return total


if __name__ == "__main__":
    main()
