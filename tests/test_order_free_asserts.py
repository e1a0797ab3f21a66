"""A per-example map whose only stateful ops are asserts (slim's ``Image`` handler:
``tf.case(exclusive=True)`` checks its predicates in an ``If`` holding an ``Assert``)
runs with parallel calls and delivers what the queue pipeline delivers, in its order;
a random op in the same map still runs it in order."""

import pytest

tf = pytest.importorskip("tensorflow")
import tf1compat as tc  # noqa: E402  (after the skip: needs TensorFlow)
from benchmarks import pruning  # noqa: E402
from tf1compat.records.example import make_example  # noqa: E402
from tf1compat.records.tfrecord import write_records  # noqa: E402
from tf1compat.slim import dataset_data_provider  # noqa: E402

pytestmark = [pytest.mark.tf, pytest.mark.usefixtures("no_thread_leaks")]


def assert_like_queues(fetches, count):
    report = tc.compare(fetches)
    assert report.equal and report.ordered, report
    assert report.legacy_count == count


@pytest.fixture
def records(tmp_path):
    path = str(tmp_path / "eight.tfrecord")
    pruning.write_records(path, 10)
    return path


@pytest.mark.parametrize("control_flow", ["v2", "v1"])
def test_slim_image_decoding_is_not_run_in_order(records, control_flow, request):
    if control_flow == "v1":
        request.getfixturevalue("control_flow_v1")
    with tc.legacy_graph() as graph:
        fetches = pruning.slim_batches([records], 4)
        types = {op.type for op in graph.get_operations()}
        assert ("If" in types) == (control_flow == "v2"), types   # the assert's guard
        plan = tc.describe_lowering(fetches)
        assert "in order" not in plan.partition("TFRecordDataset")[2], plan
        assert_like_queues(fetches, 10)


def test_a_random_op_beside_the_asserts_still_runs_the_map_in_order(records):
    with tc.legacy_graph(seed=3):
        provider = dataset_data_provider.DatasetDataProvider(
            pruning.slim_dataset([records]), num_readers=1, shuffle=False, num_epochs=1)
        image, label = provider.get(["image", "label"])
        image = tf.image.random_flip_left_right(image, seed=5)
        fetches = tc.batch([image, label], 4, allow_smaller_final_batch=True)
        plan = tc.describe_lowering(fetches)
        assert "in order: stateful RandomUniform" in plan, plan
        assert_like_queues(fetches, 10)


def test_a_failing_assert_in_the_parallel_map_still_fails_the_pipeline(tmp_path):
    path = str(tmp_path / "values.tfrecord")
    write_records(path, [make_example({"x": x}) for x in [1, 2, 3, -4, 5, 6]])
    with tc.legacy_graph():
        queue = tc.string_input_producer([path], num_epochs=1, shuffle=False)
        x = tf.io.parse_single_example(tc.TFRecordReader().read(queue)[1],
                                       {"x": tf.io.FixedLenFeature([], tf.int64)})["x"]
        checked = tf.cond(x >= 0, lambda: x, lambda: _failing_check(x))
        batch = tc.batch([checked], 2)
        plan = tc.describe_lowering(batch)
        assert "If" in plan and "in order" not in plan.partition("TFRecordDataset")[2], plan
    batches = iter(tc.to_tf_data(batch).as_numpy_iterator())
    assert next(batches).tolist() == [1, 2]
    with pytest.raises(tf.errors.InvalidArgumentError, match="negative value"):
        next(batches)


def _failing_check(x):
    with tf.control_dependencies([tf.debugging.Assert(False, ["negative value", x])]):
        return tf.identity(x)
