"""How verify compares an output that is not a tensor: a sequence or map as onnxruntime returns it (ZipMap's list
of {label: probability} dicts, a sequence's list of arrays; fallback/values.py).

The two values are walked together: a sequence must have the same length, a map the same keys (compared
exactly, as labels), and every leaf is an array or number.  Integer and boolean leaves must be equal; float
leaves are gathered, in walk order, into one array each, which verify judges as it judges a float output's
values: PCC >= its threshold, and closeness (|got - want| <= CLOSE_ATOL + CLOSE_RTOL |want|, reference.py)
when they are constant.  (A 1 % closeness bound on every value would fail a bf16 program's ZipMap of scores
that pass as a tensor output at PCC 0.99999: docs/design.md §6.41.)
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


def is_structured(value) -> bool:
    """Whether onnxruntime's `value` is a sequence or map rather than an array."""
    return isinstance(value, (list, tuple, dict))


@dataclass
class Walk:
    """Both values' float leaves in walk order, and whether their structure and integer leaves agree (the
    first difference, `mismatch`, names where)."""

    got: list = field(default_factory=list)
    want: list = field(default_factory=list)
    mismatch: str = ""

    def floats(self) -> tuple[np.ndarray, np.ndarray]:
        return np.asarray(self.got, dtype=np.float64), np.asarray(self.want, dtype=np.float64)


def walk(got, want) -> Walk:
    """Walk `got` (the program's) and `want` (onnxruntime's) together (see the module docstring)."""
    result = Walk()
    _walk(got, want, "", result)
    return result


def _walk(got, want, where: str, result: Walk) -> None:
    if result.mismatch:
        return
    if isinstance(want, dict):
        if not isinstance(got, dict) or set(got) != set(want):
            result.mismatch = f"{where or 'the map'}: keys {_keys(got)}, onnxruntime's {_keys(want)}"
            return
        for key in sorted(want, key=repr):
            _walk(got[key], want[key], f"{where}[{key!r}]", result)
        return
    if isinstance(want, (list, tuple)):
        if not isinstance(got, (list, tuple)) or len(got) != len(want):
            length = len(got) if isinstance(got, (list, tuple)) else type(got).__name__
            result.mismatch = f"{where or 'the sequence'}: {length} items, onnxruntime's {len(want)}"
            return
        for index, (a, b) in enumerate(zip(got, want)):
            _walk(a, b, f"{where}[{index}]", result)
        return
    a, b = np.asarray(got), np.asarray(want)
    if a.shape != b.shape:
        result.mismatch = f"{where}: shape {a.shape}, onnxruntime's {b.shape}"
    elif b.dtype.kind in "biu":
        if not np.array_equal(a.astype(object), b.astype(object)):
            result.mismatch = f"{where}: integers differ"
    else:
        result.got.extend(np.asarray(a, dtype=np.float64).ravel().tolist())
        result.want.extend(np.asarray(b, dtype=np.float64).ravel().tolist())


def _keys(value) -> str:
    return repr(sorted(value, key=repr)) if isinstance(value, dict) else type(value).__name__
