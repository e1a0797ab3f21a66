"""compare() and assert_pipelines_equal: each injected difference is caught and
described. The numpy tests run without TensorFlow; the pipeline tests are marked."""

import subprocess
import sys

import numpy as np
import pytest
from slim_data import get_split_factory, legacy_items, make_examples, write_slim_files

from tf1compat.errors import PipelineMismatchError
from tf1compat.migrate.comparison import compare
from tf1compat.migrate.testing import assert_pipelines_equal

NUM_EXAMPLES = 20


@pytest.fixture
def examples(rng):
    return make_examples(rng, NUM_EXAMPLES)


def copied(examples):
    return [{name: np.array(value) for name, value in e.items()} for e in examples]


def batched(examples, batch_size):
    return [{name: np.stack([e[name] for e in examples[i:i + batch_size]])
             for name in examples[0]}
            for i in range(0, len(examples), batch_size)]


# ------------------------------------------------------------ equal pipelines

@pytest.mark.parametrize("ordered", [True, False])
def test_equal_examples_pass(examples, ordered):
    report = compare(examples, copied(examples), ordered=ordered)
    assert report.equal and bool(report)
    assert (report.legacy_count, report.reference_count) == (NUM_EXAMPLES, NUM_EXAMPLES)
    assert [(i.name, i.legacy_dtypes, i.legacy_shapes, i.agrees) for i in report.items] == [
        ("image", ("uint8",), ((8, 8, 3),), True), ("label", ("int64",), ((),), True)]
    assert report.first_mismatch is None and report.diffs == ()
    assert str(report).splitlines() == [
        f"pipelines EQUAL ({'ordered' if ordered else 'unordered'} comparison): "
        f"{NUM_EXAMPLES} examples on each side",
        "items:", "  image: uint8 (8, 8, 3)", "  label: int64 ()"]


def test_batches_of_different_sizes_are_unbatched(examples):
    report = compare(batched(examples, 7), batched(examples, 6),
                     legacy_batched=True, reference_batched=True)
    assert report.equal, report
    assert report.legacy_count == report.reference_count == NUM_EXAMPLES


def test_unordered_ignores_order(examples):
    shuffled = [examples[i] for i in np.random.default_rng(5).permutation(NUM_EXAMPLES)]
    assert compare(examples, shuffled, ordered=False).equal


def test_strings_and_nested_structures_compare():
    legacy = [{"key": b"a:%d" % i, "pair": (np.int32(i), np.float32(i / 2))} for i in range(5)]
    report = compare(legacy, [dict(e) for e in legacy])
    assert report.equal
    assert [(i.name, i.legacy_dtypes) for i in report.items] == [
        ("key", ("string",)), ("pair/0", ("int32",)), ("pair/1", ("float32",))]
    changed = [dict(e) for e in legacy]
    changed[3] = dict(changed[3], key=b"a:x")
    mismatch = compare(legacy, changed).first_mismatch
    assert (mismatch.legacy_index, mismatch.item, mismatch.reason) == (3, "key", "value")
    assert mismatch.values == (((), b"a:3", b"a:x"),)


def test_single_arrays_are_the_item_value():
    report = compare([np.arange(3), np.arange(3) + 1], [np.arange(3), np.arange(3) + 1])
    assert report.equal and report.items[0].name == "value"


def test_tolerance_applies_to_ordered_comparison():
    legacy = [np.float32([1.0, 2.0])]
    reference = [np.float32([1.0, 2.001])]
    assert not compare(legacy, reference).equal
    assert compare(legacy, reference, atol=0.01).equal
    assert compare(legacy, reference, rtol=0.001).equal


def test_max_examples_stops_both_sides(examples):
    endless = (examples[i % NUM_EXAMPLES] for i in range(10 ** 9))
    report = compare(endless, examples, max_examples=5)
    assert report.equal and report.legacy_count == report.reference_count == 5


def test_numpy_comparison_does_not_import_tensorflow():
    code = ("import sys, numpy as np, tf1compat as tc; "
            "r = tc.compare([np.arange(3)], [np.arange(3)]); "
            "tc.testing.assert_pipelines_equal([np.arange(3)], [np.arange(3)]); "
            "assert r.equal and 'tensorflow' not in sys.modules, sorted(sys.modules)")
    subprocess.run([sys.executable, "-c", code], check=True)


# ------------------------------------------------------------ injected differences

def test_one_changed_pixel(examples):
    changed = copied(examples)
    changed[5]["image"][1, 2, 0] ^= 8
    left, right = int(examples[5]["image"][1, 2, 0]), int(changed[5]["image"][1, 2, 0])
    for ordered in (True, False):
        report = compare(examples, changed, ordered=ordered)
        mismatch = report.first_mismatch
        assert not report.equal
        assert (mismatch.legacy_index, mismatch.reference_index) == (5, 5)
        assert (mismatch.item, mismatch.reason, mismatch.max_abs_diff) == ("image", "value", 8)
        assert mismatch.values == (((1, 2, 0), left, right),)
        assert [d.legacy_index for d in report.missing_from_reference] == [5]
        assert [d.reference_index for d in report.missing_from_legacy] == [5]
    assert (f"first mismatch: legacy #5 vs reference #5, item 'image': 1 of 192 values "
            f"differ, max abs diff 8\n  at [1, 2, 0]: legacy {left}, reference {right}"
            ) in str(report)


def test_label_off_by_one(examples):
    changed = copied(examples)
    changed[9]["label"] += 1
    report = compare(examples, changed)
    mismatch = report.first_mismatch
    assert (mismatch.legacy_index, mismatch.item, mismatch.max_abs_diff) == (9, "label", 1)
    assert mismatch.values == (((), int(examples[9]["label"]), int(examples[9]["label"]) + 1),)
    assert report.mismatched_pairs == 1


def test_dropped_example(examples):
    dropped = copied(examples)
    del dropped[7]
    for ordered in (True, False):
        report = compare(examples, dropped, ordered=ordered)
        assert (report.legacy_count, report.reference_count) == (NUM_EXAMPLES, NUM_EXAMPLES - 1)
        assert [(d.legacy_index, d.legacy_copies, d.reference_copies)
                for d in report.diffs] == [(7, 1, 0)]
        assert "missing from reference: 1 example(s): legacy #7" in str(report)
    assert report.first_mismatch.reason == "unmatched"
    assert "legacy #7: legacy example has no counterpart in reference" in str(report)


def test_duplicated_example(examples):
    duplicated = copied(examples)
    duplicated.insert(4, duplicated[3])
    for ordered in (True, False):
        report = compare(examples, duplicated, ordered=ordered)
        assert [(d.legacy_index, d.reference_index, d.legacy_copies, d.reference_copies)
                for d in report.duplicated_in_reference] == [(3, 3, 1, 2)]
        assert report.missing_from_legacy == report.missing_from_reference == ()
        assert ("duplicated in reference: 1 example(s): reference #3 "
                "(copies: legacy 1, reference 2)") in str(report)


def test_dtype_change(examples):
    as_float = [dict(e, image=e["image"].astype(np.float32)) for e in examples]
    report = compare(examples, as_float)
    mismatch = report.first_mismatch
    assert (mismatch.legacy_index, mismatch.item, mismatch.reason) == (0, "image", "dtype")
    assert mismatch.detail == "dtype uint8 vs float32 (values equal)"
    image = report.items[0]
    assert (image.legacy_dtypes, image.reference_dtypes, image.agrees) == (
        ("uint8",), ("float32",), False)
    assert "image: legacy uint8 (8, 8, 3) | reference float32 (8, 8, 3)  <- differs" \
        in str(report)


def test_shape_change(examples):
    cropped = [dict(e, image=e["image"][:, :, :1]) for e in examples]
    mismatch = compare(examples, cropped).first_mismatch
    assert (mismatch.item, mismatch.reason, mismatch.detail) == (
        "image", "shape", "shape (8, 8, 3) vs (8, 8, 1)")


def test_unbatched_legacy_batches_hint_at_legacy_batched(examples):
    mismatch = compare(batched(examples, 4), examples).first_mismatch
    assert mismatch.reason == "shape"
    assert "the legacy side looks batched: pass legacy_batched=True" in mismatch.detail


def test_reordering_fails_ordered_only(examples):
    swapped = copied(examples)
    swapped[2], swapped[3] = swapped[3], swapped[2]
    report = compare(examples, swapped)
    assert not report.equal and report.mismatched_pairs == 2 and report.diffs == ()
    assert report.first_mismatch.legacy_index == 2
    assert "same examples on both sides, in a different order" in str(report)
    assert compare(examples, swapped, ordered=False).equal


def test_different_item_names(examples):
    renamed = [{"img": e["image"], "label": e["label"]} for e in examples]
    mismatch = compare(examples, renamed).first_mismatch
    assert (mismatch.reason, mismatch.detail) == (
        "items", "items only in legacy: ['image']; only in reference: ['img']")


# ------------------------------------------------------------ assertion and arguments

def test_assert_pipelines_equal_raises_with_report(examples):
    changed = copied(examples)
    changed[0]["label"] += 1
    assert assert_pipelines_equal(examples, copied(examples)).equal
    with pytest.raises(PipelineMismatchError) as caught:
        assert_pipelines_equal(examples, changed, ordered=False)
    assert isinstance(caught.value, AssertionError)
    assert caught.value.report.first_mismatch.item == "label"
    assert str(caught.value) == str(caught.value.report)


@pytest.mark.parametrize("options, message", [
    ({"rtol": -1}, "rtol must be a number >= 0"),
    ({"ordered": False, "atol": 0.1}, "rtol and atol must be 0"),
    ({"max_examples": 0}, "max_examples must be a positive integer or None"),
])
def test_bad_arguments(options, message):
    with pytest.raises(ValueError, match=message):
        compare([], [], **options)


def test_batches_without_a_shared_leading_dimension_are_refused():
    with pytest.raises(ValueError, match=r"legacy batch 0: cannot unbatch.*"
                                         r"pass legacy_batched=False"):
        compare([{"a": np.zeros(3), "b": np.zeros(4)}], [], legacy_batched=True)


def test_package_compare_is_the_function_once_its_modules_are_imported():
    import tf1compat
    import tf1compat.migrate.comparison  # noqa: F401
    import tf1compat.migrate.comparison.example_stream  # noqa: F401
    import tf1compat.migrate.comparison.report  # noqa: F401

    assert tf1compat.compare.__module__ == "tf1compat.migrate.comparison"
    assert tf1compat.compare([np.arange(2)], [np.arange(2)]).equal


# ------------------------------------------------------------ real pipelines

@pytest.fixture
def slim_split(tmp_path, examples):
    return get_split_factory(write_slim_files(str(tmp_path), examples), NUM_EXAMPLES)


@pytest.mark.tf
@pytest.mark.usefixtures("no_thread_leaks")
def test_injected_pipeline_difference_is_described(slim_split, examples):
    import tf1compat as tc
    from tf1compat._tf import tf

    reference = tc.to_tf_data(slim_split())
    with tc.legacy_graph():
        items = legacy_items(slim_split, shuffle=False)
        items["label"] = tf.where(tf.equal(items["label"], examples[4]["label"]),
                                  items["label"] + 1, items["label"])
        batch = tc.batch(items, 6, allow_smaller_final_batch=True)
        report = compare(batch, reference)
    first = next(i for i, e in enumerate(examples) if e["label"] == examples[4]["label"])
    assert (report.first_mismatch.legacy_index, report.first_mismatch.item) == (first, "label")
    assert report.legacy_count == NUM_EXAMPLES


@pytest.mark.tf
@pytest.mark.usefixtures("no_thread_leaks")
def test_legacy_batching_is_inferred_through_prefetch_queue(slim_split):
    import tf1compat as tc

    reference = tc.to_tf_data(slim_split())
    with tc.legacy_graph():
        batch = tc.batch(legacy_items(slim_split, shuffle=False), 5)
        prefetched = tc.prefetch_queue(batch, capacity=2).dequeue()
    assert compare(prefetched, reference).equal

