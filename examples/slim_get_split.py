"""Classic tf-slim input: get_split -> DatasetDataProvider -> tf.train.batch ->
prefetch_queue -> dequeue, run in a tf.Session with queue-runner threads.

The program is the TF1 slim one (``datasets/flowers.py``'s ``get_split`` and the
input section of ``train_image_classifier.py``), changed only in its imports:

    import tensorflow as tf      ->  import tensorflow.compat.v1 as tf
    slim = tf.contrib.slim       ->  from tf1compat import slim

    python examples/slim_get_split.py [--dataset_dir DIR] [--steps 6]

Without --dataset_dir it writes a small seeded split (PNG images of varying
size) to a temporary directory first, since there is nothing to download.
"""

import argparse
import os
import tempfile

import numpy as np
import tensorflow.compat.v1 as tf

from tf1compat import slim  # first, so TensorFlow's C++ log lines stay quiet

_FILE_PATTERN = 'flowers_%s_*.tfrecord'

SPLITS_TO_SIZES = {'train': 24, 'validation': 8}

_NUM_CLASSES = 5

_ITEMS_TO_DESCRIPTIONS = {
    'image': 'A color image of varying size.',
    'label': 'A single integer between 0 and 4',
}


def write_sample_split(dataset_dir, split_name='train', num_shards=2, seed=0):
    """Write ``split_name`` as PNG Examples in slim's flowers layout."""
    rng = np.random.default_rng(seed)
    size = SPLITS_TO_SIZES[split_name]
    for shard in range(num_shards):
        path = os.path.join(dataset_dir, _FILE_PATTERN % split_name).replace(
            '*', '%05d-of-%05d' % (shard, num_shards))
        with tf.io.TFRecordWriter(path) as writer:
            for index in range(shard, size, num_shards):
                height, width = rng.integers(6, 12, size=2)
                image = rng.integers(0, 256, size=(height, width, 3), dtype=np.uint8)
                writer.write(tf.train.Example(features=tf.train.Features(feature={
                    'image/encoded': tf.train.Feature(bytes_list=tf.train.BytesList(
                        value=[tf.image.encode_png(image).numpy()])),
                    'image/format': tf.train.Feature(bytes_list=tf.train.BytesList(
                        value=[b'png'])),
                    'image/class/label': tf.train.Feature(int64_list=tf.train.Int64List(
                        value=[index % _NUM_CLASSES])),
                })).SerializeToString())


def get_split(split_name, dataset_dir, file_pattern=None, reader=None):
  """Gets a dataset tuple with instructions for reading flowers.

  Args:
    split_name: A train/validation split name.
    dataset_dir: The base directory of the dataset sources.
    file_pattern: The file pattern to use when matching the dataset sources.
    reader: The TensorFlow reader type.

  Returns:
    A `Dataset` namedtuple.

  Raises:
    ValueError: if `split_name` is not a valid train/validation split.
  """
  if split_name not in SPLITS_TO_SIZES:
    raise ValueError('split name %s was not recognized.' % split_name)

  if not file_pattern:
    file_pattern = _FILE_PATTERN
  file_pattern = os.path.join(dataset_dir, file_pattern % split_name)

  if reader is None:
    reader = tf.TFRecordReader

  keys_to_features = {
      'image/encoded': tf.FixedLenFeature((), tf.string, default_value=''),
      'image/format': tf.FixedLenFeature((), tf.string, default_value='png'),
      'image/class/label': tf.FixedLenFeature(
          [], tf.int64, default_value=tf.zeros([], dtype=tf.int64)),
  }

  items_to_handlers = {
      'image': slim.tfexample_decoder.Image(),
      'label': slim.tfexample_decoder.Tensor('image/class/label'),
  }

  decoder = slim.tfexample_decoder.TFExampleDecoder(
      keys_to_features, items_to_handlers)

  return slim.dataset.Dataset(
      data_sources=file_pattern,
      reader=reader,
      decoder=decoder,
      num_samples=SPLITS_TO_SIZES[split_name],
      items_to_descriptions=_ITEMS_TO_DESCRIPTIONS,
      num_classes=_NUM_CLASSES)


def run(dataset_dir, steps, batch_size=4, image_size=8):
  """Read ``steps`` batches the TF1 way; returns the label batches."""
  with tf.Graph().as_default():
    tf.set_random_seed(1)
    dataset = get_split('train', dataset_dir)
    provider = slim.dataset_data_provider.DatasetDataProvider(
        dataset,
        num_readers=2,
        common_queue_capacity=20 * batch_size,
        common_queue_min=10 * batch_size)
    [image, label] = provider.get(['image', 'label'])

    image = tf.image.convert_image_dtype(image, tf.float32)
    image = tf.image.resize_images(image, [image_size, image_size])
    image = tf.image.random_flip_left_right(image)

    images, labels = tf.train.batch(
        [image, label],
        batch_size=batch_size,
        num_threads=2,
        capacity=5 * batch_size)
    labels = tf.one_hot(labels, dataset.num_classes)
    batch_queue = slim.prefetch_queue.prefetch_queue(
        [images, labels], capacity=2)
    images, labels = batch_queue.dequeue()

    label_batches = []
    with tf.Session() as sess:
      coord = tf.train.Coordinator()
      threads = tf.train.start_queue_runners(sess=sess, coord=coord)
      for step in range(steps):
        np_images, np_labels = sess.run([images, labels])
        label_batches.append(np_labels.argmax(axis=1))
        print('step %d: images %s %s, labels %s' % (
            step, np_images.shape, np_images.dtype, label_batches[-1].tolist()))
      coord.request_stop()
      coord.join(threads)
  return label_batches


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument('--dataset_dir', help='directory of flowers_train_*.tfrecord')
  parser.add_argument('--steps', type=int, default=6)
  args = parser.parse_args(argv)
  if args.dataset_dir:
    return run(args.dataset_dir, args.steps)
  with tempfile.TemporaryDirectory() as dataset_dir:
    write_sample_split(dataset_dir)
    return run(dataset_dir, args.steps)


if __name__ == '__main__':
  main()
