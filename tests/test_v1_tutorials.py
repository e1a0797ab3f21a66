"""Run mode's tensorflow.examples and tf.contrib.learn datasets modules."""

import numpy as np
import pytest

pytestmark = pytest.mark.tf

tutorials = pytest.importorskip("tf1compat.v1.tutorials")

from tf1compat.errors import DatasetFormatError, UnsupportedTF1Error  # noqa: E402
from tf1compat.v1 import mnist_tutorial  # noqa: E402


def test_examples_tree_holds_the_tutorial_functions():
    examples = tutorials.build_examples()
    package = examples.tutorials.mnist
    assert package.input_data.read_data_sets is mnist_tutorial.read_data_sets
    assert package.input_data.DataSet is mnist_tutorial.DataSet
    assert package.mnist.inference is mnist_tutorial.inference
    assert (package.mnist.IMAGE_PIXELS, package.mnist.NUM_CLASSES) == (784, 10)
    assert package.input_data.__name__ == "tensorflow.examples.tutorials.mnist.input_data"
    with pytest.raises(AttributeError, match="tf.examples.tutorials.mnist.*'fully_connected_feed'"):
        package.fully_connected_feed  # noqa: B018 - a program, never a module of TF's
    with pytest.raises(UnsupportedTF1Error, match="does not download"):
        package.input_data.maybe_download("x", ".")


def test_learn_datasets_in_both_places_and_placeholders_elsewhere():
    learn = tutorials.build_learn("tf.keras", {"ModeKeys": {"TRAIN": "train"}})
    datasets = learn.datasets
    assert learn.python.learn.datasets is datasets
    assert datasets.mnist.read_data_sets is mnist_tutorial.read_data_sets
    assert datasets.mnist.load_mnist is mnist_tutorial.load_mnist
    assert datasets.load_dataset is mnist_tutorial.load_dataset
    assert datasets.base.Datasets is mnist_tutorial.Datasets
    assert learn.ModeKeys.TRAIN == "train"
    with pytest.raises(UnsupportedTF1Error, match=r"tf\.contrib\.learn\.DNNClassifier.*tf\.keras"):
        learn.DNNClassifier([10])
    with pytest.raises(UnsupportedTF1Error, match="load_iris.*sklearn.datasets"):
        datasets.base.load_iris()
    with pytest.raises(AttributeError, match="'tf.contrib.learn.python.learn'.*'estimators'"):
        learn.python.learn.estimators  # noqa: B018


def write_csv(path, text):
    path.write_text(text)
    return str(path)


def test_csv_with_header_as_tf1(tmp_path):
    path = write_csv(tmp_path / "iris.csv",
                     "3,2,setosa,versicolor\n5.1,3.5,0\n4.9,3.0,1\n6.2,2.9,2\n")
    dataset = tutorials.load_csv_with_header(path, target_dtype=np.int64,
                                             features_dtype=np.float32)
    np.testing.assert_array_equal(dataset.data, np.float32([[5.1, 3.5], [4.9, 3.0], [6.2, 2.9]]))
    np.testing.assert_array_equal(dataset.target, [0, 1, 2])
    assert dataset.data.dtype == np.float32 and dataset.target.dtype == np.int64
    first = tutorials.load_csv_with_header(path, np.float64, np.float32, target_column=0)
    np.testing.assert_array_equal(first.target, [5.1, 4.9, 6.2])


def test_csv_without_header(tmp_path):
    path = write_csv(tmp_path / "rows.csv", "1,2,7\n3,4,8\n")
    dataset = tutorials.load_csv_without_header(path, np.int32, np.float32)
    np.testing.assert_array_equal(dataset.data, [[1, 2], [3, 4]])
    np.testing.assert_array_equal(dataset.target, [7, 8])


@pytest.mark.parametrize("text, match, index", [
    ("x,2\n1,2,0\n", r"line 1: header \['x', '2'\] is not n_samples,n_features", 1),
    ("2,2\n1,2,0\n1,b,1\n", "line 3: could not convert string to float: 'b'", 3),
    ("1,2\n1,2,0\n1,2,1\n", "line 3: more rows than the header's 1", 3),
    ("2,2\n1,0\n", "line 2: 1 features, the header says 2", 2),
    ("3,2\n1,2,0\n", "1 rows, the header says 3", None),
    ("", r"line 1: header \[\] is not", 1),
])
def test_bad_csv_files_are_named(tmp_path, text, match, index):
    path = write_csv(tmp_path / "bad.csv", text)
    with pytest.raises(DatasetFormatError, match=match) as e:
        tutorials.load_csv_with_header(path, np.int64, np.float32)
    assert e.value.path == path and e.value.index == index
    assert str(e.value).startswith(path)
