"""convert() makes full garbage collections rare while it runs (the IR's object count made them super-linear)
and gives the collector its thresholds back afterwards, on success and on failure alike."""
from __future__ import annotations

import gc
import sys

import pytest

import onnx2ttnn
from onnx2ttnn.errors import ConversionError


def test_full_collections_are_rare_during_a_conversion_and_the_thresholds_come_back(mlp_path, monkeypatch):
    before = gc.get_threshold()
    seen = []
    convert_module = sys.modules["onnx2ttnn.convert"]  # (onnx2ttnn.convert is also the function)
    real = convert_module._convert
    monkeypatch.setattr(convert_module, "_convert", lambda *a: (seen.append(gc.get_threshold()), real(*a))[1])
    onnx2ttnn.convert(mlp_path)
    assert seen and seen[0][2] >= 1_000_000 and seen[0][:2] == before[:2]
    assert gc.get_threshold() == before
    with pytest.raises(ConversionError):
        onnx2ttnn.convert(mlp_path, memory="nowhere")
    assert gc.get_threshold() == before
