"""`tf1compat demo` passes on its synthetic CIFAR-10 and fails on a difference."""

import pytest

from tf1compat import cifar10, cli, demo

pytestmark = [pytest.mark.tf, pytest.mark.slow, pytest.mark.usefixtures("no_thread_leaks")]


@pytest.fixture
def small_demo(monkeypatch):
    """The demo with fewer images, so the test stays fast."""
    monkeypatch.setattr(demo, "NUM_TRAIN", 300)
    monkeypatch.setattr(demo, "NUM_TEST", 40)


@pytest.mark.usefixtures("small_demo")
def test_demo_passes(tmp_path, capsys):
    assert cli.main(["demo", "--workdir", str(tmp_path), "--seed", "3"]) == 0
    out = capsys.readouterr().out
    assert "each of the 1000 records arrived exactly once" in out
    assert "synthetic CIFAR-10 (train 300, test 40 images)" in out
    assert "EQUAL: legacy 300, tf.data 300 examples" in out
    assert out.count("EQUAL") == 3 and "examples/s" in out
    assert "plan: 5 files, 1 epoch, in order -> FixedLengthRecordDataset(record_bytes=3073)" in out
    assert "compared in order: EQUAL: queues 300, tf.data 300 examples" in out
    assert out.rstrip().endswith("feed the same examples")
    assert out.splitlines()[-1].startswith("PASS")


@pytest.mark.usefixtures("small_demo")
def test_demo_fails_when_tf_data_differs(tmp_path, capsys, monkeypatch):
    build = demo.build_tf_data_batches

    def off_by_one(*args, **kwargs):
        return build(*args, **kwargs).map(lambda b: dict(b, label=b["label"] + 1))
    monkeypatch.setattr(demo, "build_tf_data_batches", off_by_one)
    source = cifar10.make_synthetic(str(tmp_path / "real"), 100, 20, seed=1)
    assert cli.main(["demo", "--workdir", str(tmp_path / "work"), "--cifar", source]) == 1
    out = capsys.readouterr().out
    assert "real CIFAR-10 (train 100, test 20 images)" in out
    assert "item 'label': 1 of 1 values differ, max abs diff 1" in out
    assert out.splitlines()[-1] == "FAIL: see above"
