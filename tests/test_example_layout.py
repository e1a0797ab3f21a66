"""example_layout finds where an Example's values sit, or says why it cannot."""

import numpy as np
import pytest

from tf1compat import example
from tf1compat.records.example_layout import example_layout

WANTED = {"image": ("bytes", 1), "label": ("int64", 1), "box": ("float", 4),
          "ids": ("int64", 3), "names": ("bytes", 2)}


def _record(image, label=7, ids=(1, 300, 70000), box=(0.1, 0.2, 0.3, 0.4)):
    return example.make_example({
        "image": image, "label": label, "box": np.array(box, np.float32),
        "ids": list(ids), "names": [b"ab", b"cde"], "format": b"raw"})


def _field(number, payload):
    return bytes([number << 3 | 2, len(payload)]) + payload


def _entry(key, feature):
    return _field(1, _field(1, key) + _field(2, feature))


def test_payloads_hold_the_values_and_segments_the_rest(rng):
    image = rng.integers(0, 256, 48, dtype=np.uint8).tobytes()
    record = _record(image)
    layout = example_layout(record, WANTED)
    found = {}
    for key, _, offset, size, _ in layout.payloads:
        found.setdefault(key, []).append(record[offset:offset + size])
    assert found["image"] == [image]
    assert found["names"] == [b"ab", b"cde"]
    assert found["label"] == [b"\x07"]
    assert found["ids"] == [b"\x01\xac\x02\xf0\xa2\x04"]          # 1, 300, 70000
    assert np.frombuffer(found["box"][0], "<f4").tolist() == pytest.approx([0.1, 0.2, 0.3, 0.4])
    assert [p.varint_sizes for p in layout.payloads if p.key == "ids"] == [(1, 2, 3)]
    # Segments and payloads tile the record exactly, in order.
    pieces = sorted([*layout.fixed_segments(),
                     *[(p.offset, p.offset + p.size) for p in layout.payloads]])
    bounds = [bound for piece in pieces for bound in piece]
    assert bounds[0] == 0 and bounds[-1] == len(record)
    assert bounds[1:-1:2] == bounds[2:-1:2]      # each piece ends where the next starts
    assert b"format" in b"".join(record[s:e] for s, e in layout.fixed_segments())


def test_records_with_other_values_of_the_same_sizes_share_the_fixed_bytes(rng):
    first, second = (_record(rng.integers(0, 256, 48, dtype=np.uint8).tobytes(), label)
                     for label in (3, 9))
    layout = example_layout(first, WANTED)
    assert example_layout(second, WANTED).payloads == layout.payloads
    for start, end in layout.fixed_segments():
        assert first[start:end] == second[start:end]


@pytest.mark.parametrize("wanted, record, reason", [
    ({"missing": ("bytes", 1)}, _record(b"x"), "feature 'missing' is missing"),
    ({"label": ("float", 1)}, _record(b"x"), "feature 'label' is a int64 list, expected float"),
    ({"ids": ("int64", 2)}, _record(b"x"), "feature 'ids' has 3 values, expected 2"),
    ({"label": ("int64", 1)}, _record(b"x", label=-1), "negative"),
    ({"i": ("int64", 1)}, _field(1, _entry(b"i", _field(3, b"\x08\x05"))), "not packed"),
    ({"i": ("int64", 1)}, _field(1, _entry(b"i", _field(3, b"")) * 2), "'i' appears twice"),
    ({"i": ("int64", 1)}, _field(1, b"") + _field(1, b""), "not one length-delimited field"),
    ({"i": ("int64", 1)}, b"\x0a\x05\x0a", "runs past the end"),
    ({"i": ("int64", 1)}, _field(2, b""), "field is 2, not features"),
])
def test_records_that_cannot_serve_as_a_template_say_why(wanted, record, reason):
    with pytest.raises(ValueError, match=reason):
        example_layout(record, wanted)
