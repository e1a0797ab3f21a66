"""The programs ``scripts/bench --suite programs`` runs, as source text written to disk.

Two TF1-era input loops written in the era's style (``import tensorflow as tf``,
``tf.app.flags``, ``Session`` + ``Coordinator``) and their hand-written TF2 ports
(eager tf.data, ``for batch in dataset.take(N)``), plus a trivial ``tf.compat.v1``
program for run mode's start-up. Each input loop runs ``--warmup_steps`` then
``--max_steps`` steps fetching the batch and its mean, and ends by printing one line
``BENCH {...}``: the wall-clock time of its first batch and the time of every step
after the warm-up, and its peak resident memory (``VmHWM``).
"""

# The report every input loop prints last (plain Python, the same in TF1 and TF2).
_REPORT = '''

def report(step_times, warmup_steps):
  """Print the loop's timing (``step_times``: the wall-clock and CPU times after each
  step), CPU time and peak memory as one ``BENCH {json}`` line."""
  peak_mb = None
  with open("/proc/self/status") as status:
    for line in status:
      if line.startswith("VmHWM:"):
        peak_mb = int(line.split()[1]) / 1024.0
  print("BENCH " + json.dumps({
      "first_batch_time": step_times[0][0],
      "first_batch_cpu_s": step_times[0][1],
      "timed_steps": len(step_times) - warmup_steps,
      "timed_seconds": step_times[-1][0] - step_times[warmup_steps - 1][0],
      "timed_cpu_s": step_times[-1][1] - step_times[warmup_steps - 1][1],
      "peak_rss_mb": peak_mb}))
'''

_FLAGS = '''
tf.app.flags.DEFINE_string("data_dir", None, "{data}")
tf.app.flags.DEFINE_integer("batch_size", 128, "images per batch")
tf.app.flags.DEFINE_integer("warmup_steps", 20, "steps before the timed ones")
tf.app.flags.DEFINE_integer("max_steps", 200, "timed steps")
FLAGS = tf.app.flags.FLAGS
'''

_TF1_LOOP = '''
    with tf.Session() as sess:
      sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
      coord = tf.train.Coordinator()
      threads = tf.train.start_queue_runners(sess=sess, coord=coord)
      step_times = []
      for _ in range(FLAGS.warmup_steps + FLAGS.max_steps):
        sess.run([images, labels, mean])
        step_times.append((time.time(), time.process_time()))
      coord.request_stop()
      coord.join(threads)
  report(step_times, FLAGS.warmup_steps)


if __name__ == "__main__":
  tf.app.run()
'''

CIFAR10_TUTORIAL = '''\
"""The CIFAR-10 tutorial's training input (cifar10_input.distorted_inputs) driven
by a sess.run loop without the model: each step fetches the batch and its mean."""

from __future__ import absolute_import, division, print_function

import json
import os
import time

import tensorflow as tf
''' + _FLAGS.format(data="the cifar-10-batches-bin folder") + '''
IMAGE_SIZE = 24
NUM_EXAMPLES_PER_EPOCH_FOR_TRAIN = 50000


def read_cifar10(filename_queue):
  """One record of the binary batches: a label byte, then the R, G and B planes."""
  label_bytes = 1
  height, width, depth = 32, 32, 3
  image_bytes = height * width * depth
  reader = tf.FixedLengthRecordReader(record_bytes=label_bytes + image_bytes)
  _, value = reader.read(filename_queue)
  record = tf.decode_raw(value, tf.uint8)
  label = tf.cast(tf.strided_slice(record, [0], [label_bytes]), tf.int32)
  depth_major = tf.reshape(tf.strided_slice(record, [label_bytes], [label_bytes + image_bytes]),
                           [depth, height, width])
  return tf.transpose(depth_major, [1, 2, 0]), label


def distorted_inputs(data_dir, batch_size):
  """Randomly cropped, flipped, brightened and contrasted images, shuffled in batches."""
  filenames = [os.path.join(data_dir, "data_batch_%d.bin" % i) for i in range(1, 6)]
  for f in filenames:
    if not tf.gfile.Exists(f):
      raise ValueError("Failed to find file: " + f)
  filename_queue = tf.train.string_input_producer(filenames)
  uint8image, label = read_cifar10(filename_queue)
  reshaped_image = tf.cast(uint8image, tf.float32)
  distorted_image = tf.random_crop(reshaped_image, [IMAGE_SIZE, IMAGE_SIZE, 3])
  distorted_image = tf.image.random_flip_left_right(distorted_image)
  distorted_image = tf.image.random_brightness(distorted_image, max_delta=63)
  distorted_image = tf.image.random_contrast(distorted_image, lower=0.2, upper=1.8)
  float_image = tf.image.per_image_standardization(distorted_image)
  float_image.set_shape([IMAGE_SIZE, IMAGE_SIZE, 3])
  label.set_shape([1])
  min_queue_examples = int(NUM_EXAMPLES_PER_EPOCH_FOR_TRAIN * 0.4)
  print("Filling queue with %d CIFAR images before starting to train." % min_queue_examples)
  images, label_batch = tf.train.shuffle_batch(
      [float_image, label], batch_size=batch_size, num_threads=16,
      capacity=min_queue_examples + 3 * batch_size, min_after_dequeue=min_queue_examples)
  return images, tf.reshape(label_batch, [batch_size])
''' + _REPORT + '''

def main(_):
  with tf.Graph().as_default():
    images, labels = distorted_inputs(FLAGS.data_dir, FLAGS.batch_size)
    mean = tf.reduce_mean(images)
''' + _TF1_LOOP

CIFAR10_TUTORIAL_TF2 = '''\
"""The CIFAR-10 tutorial's training input ported by hand to TF2's tf.data (eager):
the same files, distortions, shuffle buffer and batch."""

import argparse
import json
import os
import time

import tensorflow as tf

IMAGE_SIZE = 24
RECORD_BYTES = 1 + 32 * 32 * 3
SHUFFLE_BUFFER = int(50000 * 0.4)


def parse_and_distort(record):
  values = tf.io.decode_raw(record, tf.uint8)
  label = tf.cast(values[0], tf.int32)
  image = tf.transpose(tf.reshape(values[1:], [3, 32, 32]), [1, 2, 0])
  image = tf.image.random_crop(tf.cast(image, tf.float32), [IMAGE_SIZE, IMAGE_SIZE, 3])
  image = tf.image.random_flip_left_right(image)
  image = tf.image.random_brightness(image, max_delta=63)
  image = tf.image.random_contrast(image, lower=0.2, upper=1.8)
  return tf.image.per_image_standardization(image), label


def distorted_inputs(data_dir, batch_size):
  filenames = [os.path.join(data_dir, "data_batch_%d.bin" % i) for i in range(1, 6)]
  return (tf.data.Dataset.from_tensor_slices(filenames).shuffle(len(filenames)).repeat()
          .interleave(lambda f: tf.data.FixedLengthRecordDataset(f, RECORD_BYTES),
                      num_parallel_calls=tf.data.AUTOTUNE)
          .shuffle(SHUFFLE_BUFFER)
          .map(parse_and_distort, num_parallel_calls=tf.data.AUTOTUNE)
          .batch(batch_size, drop_remainder=True)
          .prefetch(tf.data.AUTOTUNE))
''' + _REPORT + '''

def main():
  parser = argparse.ArgumentParser()
  parser.add_argument("--data_dir", required=True)
  parser.add_argument("--batch_size", type=int, default=128)
  parser.add_argument("--warmup_steps", type=int, default=20)
  parser.add_argument("--max_steps", type=int, default=200)
  args = parser.parse_args()
  dataset = distorted_inputs(args.data_dir, args.batch_size)
  step_times = []
  for images, labels in dataset.take(args.warmup_steps + args.max_steps):
    tf.reduce_mean(images).numpy(), images.numpy(), labels.numpy()
    step_times.append((time.time(), time.process_time()))
  report(step_times, args.warmup_steps)


if __name__ == "__main__":
  main()
'''

SLIM_PROVIDER = '''\
"""The input half of slim's train_image_classifier.py on CIFAR-10 in slim's layout:
a slim Dataset (TFExampleDecoder over PNG TFRecords), DatasetDataProvider with 4
readers, cifarnet-style preprocessing, tf.train.batch and prefetch_queue, driven by a
sess.run loop without the model."""

from __future__ import absolute_import, division, print_function

import json
import os
import time

import tensorflow as tf

slim = tf.contrib.slim
''' + _FLAGS.format(data="the folder of cifar10_train.tfrecord and labels.txt") + '''

def get_split(dataset_dir):
  """The train split of CIFAR-10 converted to slim's TFRecords."""
  keys_to_features = {
      "image/encoded": tf.FixedLenFeature((), tf.string, default_value=""),
      "image/format": tf.FixedLenFeature((), tf.string, default_value="png"),
      "image/class/label": tf.FixedLenFeature(
          [], tf.int64, default_value=tf.zeros([], dtype=tf.int64)),
  }
  items_to_handlers = {
      "image": slim.tfexample_decoder.Image(shape=[32, 32, 3]),
      "label": slim.tfexample_decoder.Tensor("image/class/label"),
  }
  decoder = slim.tfexample_decoder.TFExampleDecoder(keys_to_features, items_to_handlers)
  return slim.dataset.Dataset(
      data_sources=os.path.join(dataset_dir, "cifar10_train.tfrecord"),
      reader=tf.TFRecordReader, decoder=decoder, num_samples=50000, num_classes=10,
      items_to_descriptions={"image": "A [32 x 32 x 3] color image.",
                             "label": "A single integer between 0 and 9"})


def preprocess_for_train(image, height=32, width=32, padding=4):
  """Pad, randomly crop and flip, change brightness and contrast, standardize."""
  image = tf.to_float(image)
  image = tf.pad(image, [[padding, padding], [padding, padding], [0, 0]])
  distorted_image = tf.random_crop(image, [height, width, 3])
  distorted_image = tf.image.random_flip_left_right(distorted_image)
  distorted_image = tf.image.random_brightness(distorted_image, max_delta=63)
  distorted_image = tf.image.random_contrast(distorted_image, lower=0.2, upper=1.8)
  return tf.image.per_image_standardization(distorted_image)
''' + _REPORT + '''

def main(_):
  with tf.Graph().as_default():
    dataset = get_split(FLAGS.data_dir)
    provider = slim.dataset_data_provider.DatasetDataProvider(
        dataset, num_readers=4, common_queue_capacity=20 * FLAGS.batch_size,
        common_queue_min=10 * FLAGS.batch_size)
    image, label = provider.get(["image", "label"])
    image = preprocess_for_train(image)
    images, labels = tf.train.batch([image, label], batch_size=FLAGS.batch_size,
                                    num_threads=4, capacity=5 * FLAGS.batch_size)
    labels = slim.one_hot_encoding(labels, dataset.num_classes)
    batch_queue = slim.prefetch_queue.prefetch_queue([images, labels], capacity=2)
    images, labels = batch_queue.dequeue()
    mean = tf.reduce_mean(images)
''' + _TF1_LOOP

SLIM_PROVIDER_TF2 = '''\
"""slim's train_image_classifier.py input on CIFAR-10 ported by hand to TF2's tf.data
(eager): the same records, decoding, preprocessing, shuffle buffer and batch."""

import argparse
import json
import os
import time

import tensorflow as tf

FEATURES = {
    "image/encoded": tf.io.FixedLenFeature((), tf.string, default_value=""),
    "image/class/label": tf.io.FixedLenFeature([], tf.int64, default_value=0),
}


def parse_and_preprocess(record, padding=4):
  parsed = tf.io.parse_single_example(record, FEATURES)
  image = tf.cast(tf.io.decode_png(parsed["image/encoded"], channels=3), tf.float32)
  image = tf.pad(image, [[padding, padding], [padding, padding], [0, 0]])
  image = tf.image.random_crop(image, [32, 32, 3])
  image = tf.image.random_flip_left_right(image)
  image = tf.image.random_brightness(image, max_delta=63)
  image = tf.image.random_contrast(image, lower=0.2, upper=1.8)
  image = tf.image.per_image_standardization(image)
  return image, tf.one_hot(parsed["image/class/label"], 10)


def train_inputs(dataset_dir, batch_size):
  return (tf.data.TFRecordDataset(os.path.join(dataset_dir, "cifar10_train.tfrecord"))
          .repeat()
          .shuffle(10 * batch_size)
          .map(parse_and_preprocess, num_parallel_calls=tf.data.AUTOTUNE)
          .batch(batch_size, drop_remainder=True)
          .prefetch(tf.data.AUTOTUNE))
''' + _REPORT + '''

def main():
  parser = argparse.ArgumentParser()
  parser.add_argument("--data_dir", required=True)
  parser.add_argument("--batch_size", type=int, default=128)
  parser.add_argument("--warmup_steps", type=int, default=20)
  parser.add_argument("--max_steps", type=int, default=200)
  args = parser.parse_args()
  step_times = []
  for images, labels in train_inputs(args.data_dir, args.batch_size).take(
      args.warmup_steps + args.max_steps):
    tf.reduce_mean(images).numpy(), images.numpy(), labels.numpy()
    step_times.append((time.time(), time.process_time()))
  report(step_times, args.warmup_steps)


if __name__ == "__main__":
  main()
'''

# run mode's start-up: the same file under `python` and under `tf1compat run`
TRIVIAL_COMPAT_V1 = '''\
import tensorflow.compat.v1 as tf

tf.disable_v2_behavior()
with tf.Session() as sess:
  print(sess.run(tf.constant(1) + 1))
'''

# ------------------------------------------------ a TF1-era project for `tf1compat check`

_PROJECT_MODULE = '''\
"""Part {index} of a TF1-era project: flags, an input pipeline, a slim model, training."""

from __future__ import absolute_import, division, print_function

import os

import tensorflow as tf
{extra_import}
slim = tf.contrib.slim

tf.app.flags.DEFINE_string("data_dir_{index}", "/tmp/data", "where the records are")
tf.app.flags.DEFINE_integer("batch_size_{index}", 32, "images per batch")
FLAGS = tf.app.flags.FLAGS


def read_records_{index}(filenames):
  filename_queue = tf.train.string_input_producer(filenames, num_epochs=None, shuffle=True)
  reader = tf.TFRecordReader()
  _, serialized = reader.read(filename_queue)
  features = tf.parse_single_example(serialized, {{
      "image/encoded": tf.FixedLenFeature((), tf.string),
      "image/class/label": tf.FixedLenFeature((), tf.int64),
  }})
  image = tf.image.decode_png(features["image/encoded"], channels=3)
  image = tf.image.resize_images(tf.to_float(image), [32, 32])
  return image, tf.cast(features["image/class/label"], tf.int32)


def inputs_{index}(data_dir, batch_size):
  filenames = tf.gfile.Glob(os.path.join(data_dir, "*.tfrecord"))
  image, label = read_records_{index}(filenames)
  image = tf.image.random_flip_left_right(image)
  return tf.train.shuffle_batch([image, label], batch_size=batch_size, num_threads=4,
                                capacity=1000 + 3 * batch_size, min_after_dequeue=1000)


def model_{index}(images, num_classes=10, is_training=True):
  with slim.arg_scope([slim.conv2d, slim.fully_connected],
                      weights_regularizer=slim.l2_regularizer(0.0004)):
    net = slim.conv2d(images, 32, [3, 3], scope="conv1")
    net = slim.max_pool2d(net, [2, 2], scope="pool1")
    net = slim.conv2d(net, 64, [3, 3], scope="conv2")
    net = slim.max_pool2d(net, [2, 2], scope="pool2")
    net = slim.flatten(net)
    net = slim.fully_connected(net, 128, scope="fc3")
    net = slim.dropout(net, 0.5, is_training=is_training, scope="dropout3")
    return slim.fully_connected(net, num_classes, activation_fn=None, scope="logits")


def train_{index}(train_dir):
  with tf.Graph().as_default():
    images, labels = inputs_{index}(FLAGS.data_dir_{index}, FLAGS.batch_size_{index})
    logits = model_{index}(images)
    tf.losses.sparse_softmax_cross_entropy(labels, logits)
    total_loss = tf.losses.get_total_loss()
    tf.summary.scalar("total_loss", total_loss)
    global_step = tf.train.get_or_create_global_step()
    learning_rate = tf.train.exponential_decay(0.1, global_step, 1000, 0.9, staircase=True)
    optimizer = tf.train.MomentumOptimizer(learning_rate, 0.9)
    train_op = slim.learning.create_train_op(total_loss, optimizer)
{extra_use}    slim.learning.train(train_op, train_dir, number_of_steps=100, save_summaries_secs=60)


def evaluate_{index}(checkpoint_dir):
  with tf.Graph().as_default():
    images, labels = inputs_{index}(FLAGS.data_dir_{index}, FLAGS.batch_size_{index})
    predictions = tf.argmax(model_{index}(images, is_training=False), 1)
    names_to_values, names_to_updates = slim.metrics.aggregate_metric_map({{
        "accuracy": tf.metrics.accuracy(labels, predictions),
    }})
    checkpoint = tf.train.latest_checkpoint(checkpoint_dir)
    return slim.evaluation.evaluate_once("", checkpoint, checkpoint_dir, num_evals=10,
                                         eval_op=list(names_to_updates.values()))


def main(_):
  train_{index}(os.path.join("/tmp/train", str({index})))


if __name__ == "__main__":
  tf.app.run()
'''


def write_check_project(folder, files=50):
    """``files`` TF1-era modules (about 100 lines each) in ``folder``; every tenth uses
    a ``tf.contrib`` part run mode cannot give, so ``check`` reports findings."""
    import os

    os.makedirs(folder, exist_ok=True)
    for index in range(files):
        unsupported = index % 10 == 0
        source = _PROJECT_MODULE.format(
            index=index,
            extra_import="from tensorflow.contrib import quantize\n" if unsupported else "",
            extra_use="    quantize.create_training_graph()\n" if unsupported else "")
        with open(os.path.join(folder, f"module_{index:02d}.py"), "w") as f:
            f.write(source)
