"""simplify-ttnn: a slice of the whole tensor is dropped (real ttnn returns its input for it, so freeing the input
after it freed the slice: Silero VAD's one-step LSTM failed so on the mock, docs/ttnn-facts.md §40)."""
from __future__ import annotations

import numpy as np
from onnx import TensorProto, helper, numpy_helper

from onnx2ttnn.convert import convert
from onnx2ttnn.verify import verify
from tests.lowering._nodes import f32, model


def _whole_slices(conversion) -> list:
    return [n for n in conversion.module.graph.nodes if n.op == "slice"
            and tuple(n.attrs["slice_end"]) == tuple(int(d) for d in n.inputs[0].shape)
            and not any(n.attrs["slice_start"])]


def _one_step_lstm():
    hidden, size = 4, 8
    inits = [numpy_helper.from_array(f32(1, 4 * hidden, size), "W"), numpy_helper.from_array(f32(1, 4 * hidden, hidden), "R")]
    node = helper.make_node("LSTM", ["x", "W", "R"], ["", "h"], hidden_size=hidden)
    graph = helper.make_graph([node], "lstm", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, size])],
                              [helper.make_tensor_value_info("h", TensorProto.FLOAT, [1, 1, hidden])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def test_a_one_step_lstm_slices_nothing_whole_and_still_matches():
    m = _one_step_lstm()
    conversion = convert(m)
    assert not _whole_slices(conversion)
    assert conversion.module.notes["simplify-ttnn"]["whole_slices_dropped"] >= 1
    assert verify(m, dtype="fp32").passed


def test_a_whole_slice_is_dropped_and_a_part_slice_kept():
    whole = model("Slice", {"x": [2, 64]}, [np.array([0]), np.array([64]), np.array([1])], out_shape=[2, 64])
    part = model("Slice", {"x": [2, 64]}, [np.array([0]), np.array([32]), np.array([1])], out_shape=[2, 32])
    assert not [n for n in convert(whole).module.graph.nodes if n.op == "slice"]
    assert [n for n in convert(part).module.graph.nodes if n.op == "slice"]
    assert verify(whole).passed and verify(part).passed


def test_a_dropped_slice_leaves_no_reader_behind(monkeypatch):
    """Found by the fuzzer (seed 47 case 56): a 1 x 1 AveragePool is one whole slice (dropped) and a multiply; the
    dropped slice stayed among its input's readers, and with --verify-each the placement verifier rejected it
    reading the height-sharded tensor place-memory chose (an internal error)."""
    monkeypatch.setenv("ONNX2TTNN_VERIFY_EACH", "1")
    nodes = [helper.make_node("Neg", ["x"], ["t"]),
             helper.make_node("AveragePool", ["t"], ["y"], kernel_shape=[1, 1], count_include_pad=1)]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [5, 4, 3, 5])],
                              [helper.make_tensor_value_info(n, TensorProto.FLOAT, [5, 4, 3, 5]) for n in "yt"])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    conversion = convert(m, dtype="fp32")
    assert not [n for n in conversion.module.graph.nodes if n.op == "slice"]
    assert all(reader in conversion.module.graph.nodes for t in conversion.module.graph.tensors().values()
               for reader in t.outputs)
    assert verify(m, dtype="fp32").passed
