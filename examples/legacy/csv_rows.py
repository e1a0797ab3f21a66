"""Parse CSV files with TextLineReader + tf.decode_csv and batch the rows: the
classic TF1 recipe for tabular data. Prints the row count and column sums.

    tf1compat run examples/legacy/csv_rows.py --csv 'DIR/*.csv'
"""

from __future__ import print_function

import os
import tempfile

import tensorflow as tf

flags = tf.app.flags
flags.DEFINE_string("csv", "", "glob of CSV files with a header line (default: synthetic)")
flags.DEFINE_integer("batch_size", 16, "rows per batch")
FLAGS = flags.FLAGS


def write_synthetic_csv(folder):
  for part in range(2):
    with open(os.path.join(folder, "rows-%d.csv" % part), "w") as f:
      f.write("id,weight,label\n")
      for row in range(25):
        f.write("%d,%.2f,%d\n" % (part * 100 + row, row * 0.5, row % 3))
  return os.path.join(folder, "*.csv")


def main(_):
  pattern = FLAGS.csv or write_synthetic_csv(tempfile.mkdtemp())
  filename_queue = tf.train.string_input_producer(tf.gfile.Glob(pattern), num_epochs=1,
                                                  shuffle=False)
  reader = tf.TextLineReader(skip_header_lines=1)
  _, line = reader.read(filename_queue)
  row_id, weight, label = tf.decode_csv(line, record_defaults=[[0], [0.0], [0]])
  ids, weights, labels = tf.train.batch([row_id, weight, label], FLAGS.batch_size,
                                        num_threads=2, allow_smaller_final_batch=True)

  rows, id_sum, weight_sum, label_sum = 0, 0, 0.0, 0
  sess = tf.Session()
  sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
  coord = tf.train.Coordinator()
  threads = tf.train.start_queue_runners(sess=sess, coord=coord)
  try:
    while not coord.should_stop():
      batch_ids, batch_weights, batch_labels = sess.run([ids, weights, labels])
      rows += len(batch_ids)
      id_sum += int(batch_ids.sum())
      weight_sum += float(batch_weights.sum())
      label_sum += int(batch_labels.sum())
  except tf.errors.OutOfRangeError:
    pass
  finally:
    coord.request_stop()
  coord.join(threads)
  sess.close()
  print("rows %d id_sum %d weight_sum %.2f label_sum %d" % (rows, id_sum, weight_sum, label_sum))


if __name__ == "__main__":
  tf.app.run()
