"""WholeFileReader + image decoding: one PNG file per example, resized and batched.

    python examples/whole_file_images.py [--data 'DIR/*.png']
"""

import argparse
import os
import tempfile

import numpy as np
import tensorflow as tf

import tf1compat as tc


def write_sample_files(directory, count=12, seed=0):
    rng = np.random.default_rng(seed)
    for i in range(count):
        size = int(rng.integers(20, 40))
        image = rng.integers(0, 256, size=(size, size, 3), dtype=np.uint8)
        tf.io.write_file(os.path.join(directory, f"img-{i:03d}.png"), tf.io.encode_png(image))
    return os.path.join(directory, "*.png")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", help="glob of PNG or JPEG files")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        pattern = args.data or write_sample_files(tmp)
        with tc.legacy_graph():
            filename_queue = tc.string_input_producer([pattern], num_epochs=1, shuffle=False)
            filename, contents = tc.WholeFileReader().read(filename_queue)
            image = tf.io.decode_image(contents, channels=3, expand_animations=False)
            image = tf.image.resize(image, [24, 24])
            images, names = tc.batch([image, filename], batch_size=4,
                                     allow_smaller_final_batch=True)
            seen = []
            with tc.SessionIterator({"images": images, "names": names}) as batches:
                for batch in batches:
                    seen.extend(os.path.basename(n.decode()) for n in batch["names"])
            print(f"decoded {len(seen)} images to {batch['images'].shape[1:]}: "
                  f"{seen[0]} .. {seen[-1]}")
    return seen


if __name__ == "__main__":
    main()
