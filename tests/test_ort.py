"""onnx2ttnn/ort.py: onnxruntime's refusals become one ConversionError with its reason; nothing on stderr."""
from __future__ import annotations

import numpy as np
import onnx
import pytest

from onnx2ttnn import ort
from onnx2ttnn.errors import ConversionError

GATHER = """
    <ir_version: 8, opset_import: ["" : 17]>
    g (int64[3] idx) => (float[3, 2] y) <float[4, 2] data = {0., 1., 2., 3., 4., 5., 6., 7.}> {
        y = Gather <axis = 0> (data, idx)
    }
"""


def test_a_model_onnxruntime_refuses(capfd):
    model = onnx.parser.parse_model("""
        <ir_version: 8, opset_import: ["" : 17]>
        g (float[2] x) => (int64[2] y) { y = Relu(x) }
    """)
    with pytest.raises(ConversionError) as info:
        ort.session(model.SerializeToString())
    assert str(info.value) == ("onnxruntime refuses the model: Type Error: Type (tensor(int64)) of output arg (y) of "
                               "node () does not match expected type (tensor(float)).")
    assert "onnxruntime" not in capfd.readouterr().err


def test_inputs_onnxruntime_cannot_run(capfd):
    session = ort.session(onnx.parser.parse_model(GATHER).SerializeToString())
    assert ort.run(session, ["y"], {"idx": np.array([0, 3, 1])})[0].tolist() == [[0, 1], [6, 7], [2, 3]]
    with pytest.raises(ConversionError) as info:
        ort.run(session, ["y"], {"idx": np.array([0, 50, 1])})
    assert str(info.value).startswith("onnxruntime cannot run the model on these inputs: Non-zero status code "
                                      "returned while running Gather node.")
    assert "idx=50 must be within the inclusive range [-4,3]" in str(info.value)
    assert capfd.readouterr().err == ""  # the [E:onnxruntime:...] record stayed in the quiet block


ENDLESS_LOOP = """
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[4] x) => (float[4] y) <int64 n = {1073741824}, bool c = {1}> {
        y = Loop (n, c, x) <body = b (int64 b_i, bool b_c, float[4] b_v) => (bool b_co, float[4] b_vo) {
            b_co = Identity (b_c)
            b_vo = Tanh (b_v)
        }>
    }
"""


def test_a_run_past_its_deadline_is_stopped():
    """Fuzz seed 163 case 1008: a Loop of 2^30 iterations runs for hours; `seconds` stops it inside the Loop."""
    import time

    session = ort.session(onnx.parser.parse_model(ENDLESS_LOOP).SerializeToString())
    start = time.perf_counter()
    with pytest.raises(ort.RunTimeout) as info:
        ort.run(session, ["y"], {"x": np.ones(4, np.float32)}, seconds=0.5)
    assert 0.5 <= time.perf_counter() - start < 5
    assert str(info.value) == "onnxruntime's run did not finish in 0.5 s"
    # a run within its deadline is unchanged
    quick = ort.session(onnx.parser.parse_model(GATHER).SerializeToString())
    assert ort.run(quick, ["y"], {"idx": np.array([1, 0, 3])}, seconds=60)[0].tolist() == [[2, 3], [0, 1], [6, 7]]
