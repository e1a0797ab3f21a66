"""TextLineReader + decode_csv: CSV rows (with a header line) parsed and batched.

    python examples/text_line_csv.py [--data 'DIR/*.csv']
"""

import argparse
import os
import tempfile

import numpy as np
import tensorflow as tf

import tf1compat as tc


def write_sample_files(directory, num_files=2, rows=30, seed=0):
    rng = np.random.default_rng(seed)
    for f in range(num_files):
        with open(os.path.join(directory, f"table-{f}.csv"), "w") as out:
            out.write("x,y,label\n")
            for _ in range(rows):
                x, y = rng.standard_normal(2)
                out.write(f"{x:.4f},{y:.4f},{int(x + y > 0)}\n")
    return os.path.join(directory, "*.csv")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", help="glob of CSV files with a header line")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        pattern = args.data or write_sample_files(tmp)
        with tc.legacy_graph():
            filename_queue = tc.string_input_producer([pattern], num_epochs=1, shuffle=False)
            _, line = tc.TextLineReader(skip_header_lines=1).read(filename_queue)
            x, y, label = tf.io.decode_csv(line, record_defaults=[[0.0], [0.0], [0]])
            features = tf.stack([x, y])
            batch = tc.batch({"features": features, "label": label}, batch_size=8,
                             allow_smaller_final_batch=True)
            positives = total = 0
            with tc.SessionIterator(batch) as batches:
                for b in batches:
                    positives += int(b["label"].sum())
                    total += len(b["label"])
            print(f"parsed {total} CSV rows; {positives} with label 1")
    return total


if __name__ == "__main__":
    main()
