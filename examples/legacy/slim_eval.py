"""Evaluate a checkpoint of slim_train.py with slim.evaluation.evaluate_once and
streaming metrics: the shape of slim's eval_image_classifier.py.

    tf1compat run examples/legacy/slim_eval.py --dataset_dir=OUT --checkpoint_path=TRAIN
"""

from __future__ import print_function

import math

import model
import shapes
import tensorflow as tf

slim = tf.contrib.slim

tf.app.flags.DEFINE_string("dataset_dir", None, "the output folder of build_image_records.py")
tf.app.flags.DEFINE_string("checkpoint_path", "/tmp/slim_train", "checkpoint or its folder")
tf.app.flags.DEFINE_string("eval_dir", "/tmp/slim_eval", "where summaries are written")
tf.app.flags.DEFINE_integer("batch_size", 4, "images per step")
FLAGS = tf.app.flags.FLAGS


def main(_):
  if not FLAGS.dataset_dir:
    raise ValueError("You must supply the dataset directory with --dataset_dir")
  with tf.Graph().as_default():
    tf_global_step = slim.get_or_create_global_step()
    dataset = shapes.get_split("validation", FLAGS.dataset_dir)
    provider = slim.dataset_data_provider.DatasetDataProvider(
        dataset, shuffle=False, common_queue_capacity=2 * FLAGS.batch_size,
        common_queue_min=FLAGS.batch_size)
    image, label = provider.get(["image", "label"])
    images, labels = tf.train.batch([model.preprocess(image), label],
                                    batch_size=FLAGS.batch_size, num_threads=1,
                                    capacity=5 * FLAGS.batch_size)
    logits = model.tiny_net(images, dataset.num_classes, is_training=False)
    predictions = tf.argmax(logits, 1)

    names_to_values, names_to_updates = slim.metrics.aggregate_metric_map({
        "Accuracy": slim.metrics.streaming_accuracy(predictions, labels),
        "Recall_2": slim.metrics.streaming_recall_at_k(logits, labels, 2),
    })
    for name, value in names_to_values.items():
      tf.summary.scalar("eval/%s" % name, value)

    checkpoint_path = FLAGS.checkpoint_path
    if tf.gfile.IsDirectory(checkpoint_path):
      checkpoint_path = tf.train.latest_checkpoint(checkpoint_path)
    num_batches = int(math.ceil(dataset.num_samples / float(FLAGS.batch_size)))
    values = slim.evaluation.evaluate_once(
        master="", checkpoint_path=checkpoint_path, logdir=FLAGS.eval_dir,
        num_evals=num_batches, eval_op=list(names_to_updates.values()),
        final_op=list(names_to_values.values()),
        variables_to_restore=slim.get_variables_to_restore())
    del tf_global_step
  for name, value in zip(names_to_values, values, strict=True):
    print("%s %.4f" % (name, value))


if __name__ == "__main__":
  tf.app.run()
