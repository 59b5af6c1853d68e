"""verify_values.py and verify.compare on outputs that are sequences or maps (onnxruntime's lists and dicts)."""
from __future__ import annotations

import numpy as np

from onnx2ttnn.verify import compare
from onnx2ttnn.verify_values import is_structured, walk

WANT = [{0: np.float32(0.7), 1: np.float32(0.2), 2: np.float32(0.1)},
        {0: np.float32(0.1), 1: np.float32(0.3), 2: np.float32(0.6)}]


def _near(scale: float = 1.0) -> list:
    return [{k: np.float32(v * scale) for k, v in row.items()} for row in WANT]


def test_equal_lists_of_maps_pass_with_their_floats_gathered():
    found = walk(_near(), WANT)
    assert not found.mismatch and found.floats()[1].tolist() == [np.float32(v) for row in WANT for v in row.values()]
    check = compare("p", _near(), WANT, 0.99)
    assert check.passed and check.value and check.shape == (2,) and check.pcc == 1.0


def test_floats_are_judged_by_pcc_as_a_float_output_is():
    # 5 % off everywhere: beyond a 1 % closeness bound, but the PCC of a scaled copy is 1
    assert compare("p", _near(1.05), WANT, 0.99).passed
    swapped = [{0: row[2], 1: row[1], 2: row[0]} for row in WANT]
    assert not compare("p", swapped, WANT, 0.99).passed


def test_keys_lengths_and_integers_must_be_exact():
    wrong_keys = [{0: v[0], 1: v[1], 3: v[2]} for v in WANT]
    check = compare("p", wrong_keys, WANT, 0.99)
    assert not check.passed and "keys [0, 1, 3], onnxruntime's [0, 1, 2]" in check.mismatch
    check = compare("p", WANT[:1], WANT, 0.99)
    assert not check.passed and check.mismatch == "the sequence: 1 items, onnxruntime's 2"
    labels = [np.array([1, 2], np.int64), np.array([3], np.int64)]
    assert compare("s", [a.copy() for a in labels], labels, 0.99).passed
    check = compare("s", [labels[0], np.array([4], np.int64)], labels, 0.99)
    assert not check.passed and check.mismatch == "[1]: integers differ"


def test_arrays_are_not_structured():
    assert is_structured(WANT) and is_structured({1: 2.0}) and not is_structured(np.zeros(3))
