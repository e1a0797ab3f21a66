"""CIFAR-style binary records with FixedLengthRecordReader: 1 label byte + a
32x32x3 image stored as R, G, B planes, decoded and batched the TF1 way.

    python examples/fixed_length_cifar_style.py [--data 'DIR/data_batch_*.bin']
"""

import argparse
import os
import tempfile

import numpy as np
import tensorflow as tf

import tf1compat as tc

LABEL_BYTES, HEIGHT, WIDTH, DEPTH = 1, 32, 32, 3
RECORD_BYTES = LABEL_BYTES + HEIGHT * WIDTH * DEPTH


def write_sample_files(directory, num_files=2, per_file=50, seed=0):
    rng = np.random.default_rng(seed)
    for f in range(num_files):
        labels = rng.integers(0, 10, size=(per_file, 1), dtype=np.uint8)
        planes = rng.integers(0, 256, size=(per_file, DEPTH * HEIGHT * WIDTH), dtype=np.uint8)
        path = os.path.join(directory, f"data_batch_{f + 1}.bin")
        with open(path, "wb") as out:
            out.write(np.concatenate([labels, planes], axis=1).tobytes())
    return os.path.join(directory, "data_batch_*.bin")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", help="glob of CIFAR-10 binary batch files")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        pattern = args.data or write_sample_files(tmp)
        with tc.legacy_graph():
            filename_queue = tc.string_input_producer([pattern], num_epochs=1, shuffle=False)
            reader = tc.FixedLengthRecordReader(record_bytes=RECORD_BYTES)
            _, value = reader.read(filename_queue)
            record = tf.io.decode_raw(value, tf.uint8)
            label = tf.cast(record[0], tf.int64)
            planes = tf.reshape(record[LABEL_BYTES:], [DEPTH, HEIGHT, WIDTH])
            image = tf.transpose(planes, [1, 2, 0])  # CHW -> HWC
            images, labels = tc.batch([image, label], batch_size=25, num_threads=1)
            count = 0
            with tc.SessionIterator((images, labels)) as batches:
                for image_batch, label_batch in batches:  # noqa: B007 - shape printed below
                    count += len(label_batch)
            print(f"read {count} images of shape {image_batch.shape[1:]}; "
                  f"first labels of the last batch: {label_batch[:8].tolist()}")
    return count


if __name__ == "__main__":
    main()
