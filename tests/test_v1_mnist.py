"""The MNIST helpers TF 1.x shipped (tensorflow.examples.tutorials.mnist, contrib.learn)."""

import gzip

import numpy as np
import pytest
from legacy_programs import write_idx

pytestmark = pytest.mark.tf

mnist = pytest.importorskip("tf1compat.v1.mnist_tutorial")


@pytest.fixture
def mnist_dir(tmp_path, rng):
    """Four idx files: 30 training and 10 test images of 28x28, labels 0-9."""
    data = {"train_images": rng.integers(0, 256, (30, 28, 28), dtype=np.uint8),
            "train_labels": rng.integers(0, 10, 30, dtype=np.uint8),
            "test_images": rng.integers(0, 256, (10, 28, 28), dtype=np.uint8),
            "test_labels": rng.integers(0, 10, 10, dtype=np.uint8)}
    for key, array in data.items():
        write_idx(tmp_path / mnist.MNIST_FILES[key], 2051 if "images" in key else 2049, array)
    return tmp_path, data


def test_read_data_sets_splits_and_scales_as_tf1(mnist_dir):
    folder, data = mnist_dir
    sets = mnist.read_data_sets(str(folder), validation_size=5)
    assert (sets.train.num_examples, sets.validation.num_examples, sets.test.num_examples) == (
        25, 5, 10)
    expected = data["train_images"].reshape(30, 784).astype(np.float32) * np.float32(1 / 255)
    np.testing.assert_array_equal(sets.validation.images, expected[:5])
    np.testing.assert_array_equal(sets.train.images, expected[5:])
    np.testing.assert_array_equal(sets.train.labels, data["train_labels"][5:])
    assert sets.test.images.dtype == np.float32 and sets.test.labels.dtype == np.uint8


def test_one_hot_uint8_and_unreshaped(mnist_dir):
    folder, data = mnist_dir
    sets = mnist.read_data_sets(folder, one_hot=True, dtype="uint8", reshape=False,
                                validation_size=0)
    np.testing.assert_array_equal(sets.train.images[..., 0], data["train_images"])
    assert sets.train.labels.shape == (30, 10)
    np.testing.assert_array_equal(sets.train.labels.argmax(1), data["train_labels"])


def test_next_batch_walks_epochs_like_tf1(mnist_dir):
    folder, data = mnist_dir
    train = mnist.read_data_sets(folder, validation_size=0, dtype="uint8", seed=7).train
    seen = [train.next_batch(8)[1] for _ in range(4)]  # 32 = one epoch and 2 of the next
    first_epoch = np.concatenate(seen)[:30]
    assert sorted(first_epoch.tolist()) == sorted(data["train_labels"].tolist())
    assert train.epochs_completed == 1 and len(seen[3]) == 8
    again = mnist.read_data_sets(folder, validation_size=0, dtype="uint8", seed=7).train
    np.testing.assert_array_equal(np.concatenate([again.next_batch(8)[1] for _ in range(4)]),
                                  np.concatenate(seen))


def test_unshuffled_batches_keep_file_order(mnist_dir):
    folder, data = mnist_dir
    train = mnist.read_data_sets(folder, validation_size=0).train
    _, labels = train.next_batch(12, shuffle=False)
    np.testing.assert_array_equal(labels, data["train_labels"][:12])


def test_fake_data(tmp_path):
    sets = mnist.read_data_sets(tmp_path, fake_data=True, one_hot=True)
    images, labels = sets.train.next_batch(3, fake_data=True)
    assert sets.train.num_examples == 10000
    assert np.array(images).shape == (3, 784) and labels[0] == [1] + [0] * 9


def test_missing_files_name_the_folder_and_files(mnist_dir):
    folder, _ = mnist_dir
    (folder / mnist.MNIST_FILES["test_labels"]).unlink()
    with pytest.raises(FileNotFoundError) as e:
        mnist.read_data_sets(folder)
    assert str(folder) in str(e.value) and "t10k-labels-idx1-ubyte.gz" in str(e.value)
    assert "train-images-idx3-ubyte.gz" in str(e.value) and e.value.filename == str(folder)


def test_wrong_magic_and_truncated_files_are_named(mnist_dir):
    from tf1compat.errors import DatasetFormatError
    folder, data = mnist_dir
    labels = folder / mnist.MNIST_FILES["train_labels"]
    write_idx(labels, 2051, data["train_labels"])
    with pytest.raises(DatasetFormatError, match="Invalid magic number 2051 in MNIST label file"):
        mnist.read_data_sets(folder)
    images = folder / mnist.MNIST_FILES["train_images"]
    raw = gzip.decompress(images.read_bytes())
    images.write_bytes(gzip.compress(raw[:-100]))
    with pytest.raises(DatasetFormatError, match="cut short: 23420 of 23520 bytes") as e:
        mnist.read_data_sets(folder)
    assert e.value.path == str(images)


def test_a_cut_or_damaged_download_is_named(mnist_dir):
    """A download that stopped early ends the gzip stream before its end marker (it was
    gzip's EOFError, naming no file); a file that is not gzip at all (an error page
    saved under the name), or one whose stream is damaged, is named too."""
    from tf1compat.errors import DatasetFormatError
    folder, _ = mnist_dir
    images = folder / mnist.MNIST_FILES["test_images"]
    whole = images.read_bytes()
    images.write_bytes(whole[:len(whole) // 2])
    with pytest.raises(DatasetFormatError, match="MNIST data cut short: the gzip stream "
                                                 "ends before its end-of-stream marker") as e:
        mnist.read_data_sets(folder, validation_size=5)
    assert e.value.path == str(images) and str(e.value).startswith(str(images))
    images.write_bytes(b"<html>503 Service Unavailable</html>")
    with pytest.raises(DatasetFormatError, match="not a readable gzip file .*expected "
                                                 "MNIST's images as downloaded"):
        mnist.read_data_sets(folder, validation_size=5)
    damaged = bytearray(whole)
    damaged[len(whole) // 2] ^= 0xFF
    images.write_bytes(bytes(damaged))
    with pytest.raises(DatasetFormatError, match=f"^{images}: not a readable gzip file"):
        mnist.read_data_sets(folder, validation_size=5)


def test_validation_size_is_checked(mnist_dir):
    with pytest.raises(ValueError, match="between 0 and 30. Received: 31"):
        mnist.read_data_sets(mnist_dir[0], validation_size=31)


def test_load_dataset_refuses_what_was_downloaded():
    with pytest.raises(ValueError, match="only 'mnist'"):
        mnist.load_dataset("iris")


def test_tutorial_model_trains(mnist_dir):
    from tf1compat._tf import tf, v1
    folder, _ = mnist_dir
    sets = mnist.read_data_sets(folder, validation_size=0, seed=3)
    graph = tf.Graph()
    with graph.as_default():
        v1.set_random_seed(1)
        images = v1.placeholder(tf.float32, [None, mnist.IMAGE_PIXELS])
        labels = v1.placeholder(tf.int32, [None])
        logits = mnist.inference(images, 16, 8)
        loss = mnist.loss(logits, labels)
        train_op = mnist.training(loss, 0.5)
        correct = mnist.evaluation(logits, labels)
        names = sorted(v.op.name for v in v1.global_variables())
        with v1.Session() as sess:
            sess.run(v1.global_variables_initializer())
            feed = dict(zip((images, labels), sets.train.next_batch(30), strict=True))
            losses = [sess.run([train_op, loss], feed)[1] for _ in range(30)]
            assert 0 <= sess.run(correct, feed) <= 30
    assert names == ["global_step", "hidden1/biases", "hidden1/weights", "hidden2/biases",
                     "hidden2/weights", "softmax_linear/biases", "softmax_linear/weights"]
    assert losses[-1] < losses[0]
