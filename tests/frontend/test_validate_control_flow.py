"""validate_control_flow: a Loop whose body does not take or return what the node passes (the iteration
number, the condition, the loop-carried values) is refused before lowering, naming the node."""
from __future__ import annotations

import onnx
import pytest

import onnx2ttnn
from onnx2ttnn.errors import ConversionError
from tests.frontend._loops import LOOP, parse_model


@pytest.mark.parametrize("damage,words", [
    ("lose-input", "Graph has 2 inputs but 3 were provided"),  # (shape inference's words)
    ("cond-float", "its body's condition output 'c2' is float, not bool"),
    ("extra-input", "Graph has 4 inputs but 3 were provided"),
])
def test_a_malformed_loop_body_is_refused_naming_the_node(damage, words):
    model = parse_model(LOOP)
    model.graph.node[-1].name = "the_loop"
    body = model.graph.node[-1].attribute[0].g
    if damage == "lose-input":
        body.input.pop()
    elif damage == "cond-float":
        body.output[0].type.tensor_type.elem_type = onnx.TensorProto.FLOAT
    else:
        body.input.append(onnx.helper.make_tensor_value_info("extra", onnx.TensorProto.FLOAT, [2, 3]))
    with pytest.raises(ConversionError, match=r"node 'the_loop' \(Loop\): ") as info:
        onnx2ttnn.convert(model)
    assert words in str(info.value)


@pytest.mark.parametrize("old,new,words", [
    ("scan_input_directions = [1]", "scan_input_directions = [1, 0]",
     "scan_input_directions has 2 entries; it needs one per scan input (1)"),
    ("scan_output_directions = [1]", "scan_output_directions = [2]",
     "scan_output_directions [2]: each direction must be 0 (forward) or 1 (reverse)"),
])
def test_a_scan_whose_direction_or_axis_lists_do_not_fit_is_refused(old, new, words):
    """Found by the fuzzer (seed 59 case 1246): a Scan with two scan_input_directions for one scan input converted;
    onnxruntime refuses it ("Number of entries in 'scan_input_directions' was 2 but expected 1")."""
    from tests.frontend.test_control_flow import SCAN

    model = parse_model(SCAN.replace(old, new))
    model.graph.node[-1].name = "the_scan"
    with pytest.raises(ConversionError, match=r"node 'the_scan' \(Scan\): ") as info:
        onnx2ttnn.convert(model)
    assert words in str(info.value)


def test_a_loop_passing_a_value_of_another_shape_than_its_body_takes_is_refused():
    """Fuzz seed 79 case 1008: a Loop passed a [2, 3] value to a body declaring [2, 4] (ONNX inference does not
    compare them); onnxruntime fails in the body, the converter removed the unused Loop and converted the rest."""
    model = parse_model("""
    g (float[2,3] x) => (float[2,3] z) {
        m = Constant <value = int64 {2}> ()
        t = Constant <value = bool {1}> ()
        k = Constant <value = float[2,4] {1, 2, 3, 4, 5, 6, 7, 8}> ()
        y = Loop (m, t, x) <body = body (int64 i, bool c, float[2,4] v) => (bool c2, float[2,4] w) {
            c2 = Identity (c)
            s = Add (v, k)
            w = Tanh (s)
        }>
        z = Relu (x)
    }
    """)
    model.graph.node[3].name = "the_loop"
    with pytest.raises(ConversionError, match=r"node 'the_loop' \(Loop\): its body, given 'x' of shape \[2, 3\] "
                                              r"\(it declares \[2, 4\]\), fails shape inference: .*Incompatible"):
        onnx2ttnn.convert(model)


@pytest.mark.parametrize("declared, given", [([], [1]), ([1], []), ([2], [1])])
def test_a_loop_body_declaring_other_shapes_that_still_infers_converts(declared, given):
    """Found in review: onnxruntime runs a body declaring [] given [1] (and the reverse, and [2] given [1] where
    the body's ops broadcast), only warning; the check refused them on the declarations alone."""
    import numpy as np
    from onnx import TensorProto as T, helper as h, numpy_helper as nh

    from onnx2ttnn.verify import verify

    body = h.make_graph([h.make_node("Identity", ["c"], ["co"]), h.make_node("Add", ["v", "one"], ["vo"])], "body",
                        [h.make_tensor_value_info("i", T.INT64, []), h.make_tensor_value_info("c", T.BOOL, []),
                         h.make_tensor_value_info("v", T.FLOAT, declared)],
                        [h.make_tensor_value_info("co", T.BOOL, []), h.make_tensor_value_info("vo", T.FLOAT, None)],
                        [nh.from_array(np.float32(1), "one")])
    graph = h.make_graph([h.make_node("Loop", ["M", "", "v0"], ["vf"], body=body),
                          h.make_node("Mul", ["vf", "x"], ["y"])], "g",
                         [h.make_tensor_value_info("x", T.FLOAT, [1])], [h.make_tensor_value_info("y", T.FLOAT, None)],
                         [nh.from_array(np.array(3, np.int64), "M"),
                          nh.from_array(np.full(given, 2.0, np.float32), "v0")])
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])
    model.ir_version = 8
    report = verify(model, inputs={"x": np.array([1.0], np.float32)}, dtype="fp32")
    assert report.passed, report.text()


DEAD_LOOP = """
g (float[2,3] x) => (float[2,3] y) {
    m = Constant <value = M> ()
    t = Constant <value = bool {1}> ()
    z = Loop (m, t, x) <body = body (int64 i, bool c, float[2,3] v) => (bool c2, float[2,3] w) {
        c2 = Identity (c)
        w = Tanh (v)
    }>
    y = Relu (x)
}
"""


@pytest.mark.parametrize("m, words", [
    ("int64[2] {2, 2}", "its trip count M 'm' has 2 elements; it must be a scalar (one element)"),
    ("int64[1] {2}", None),
    ("int64[1, 1] {2}", None),
])
def test_a_loop_trip_count_of_several_elements_is_refused(m, words):
    """Found by the fuzzer (seed 61 case 1908): a Loop whose M has shape [2] and whose result no output reads
    converted (the Loop was dropped before the unroll plan could refuse its M); onnxruntime refuses it ("'Loop'
    input 'M' should be a scalar tensor. Got shape of {2}") and runs an M of one element, [1] or [1, 1]."""
    model = parse_model(DEAD_LOOP.replace("M>", m + ">"))
    model.graph.node[2].name = "the_loop"
    if words is None:
        onnx2ttnn.convert(model)
        return
    with pytest.raises(ConversionError, match=r"node 'the_loop' \(Loop\): ") as info:
        onnx2ttnn.convert(model)
    assert words in str(info.value)
