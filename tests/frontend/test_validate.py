"""validate: validate_model runs each op family's checks on the nodes of the main graph and refuses the first
node one refuses, naming it (by its name, else by op type and index)."""
from __future__ import annotations

import numpy as np

from onnx2ttnn.frontend import (validate_indices, validate_operands, validate_quantize, validate_recurrent,
                                validate_windows)
from onnx2ttnn.frontend.importer import import_model
from tests.frontend._validate_models import parsed, rejected

GATHERS = """
<ir_version: 8, opset_import: ["" : 18]>
g (float[4, 3] x) => (float y) {
    a = Gather<axis = 0>(x, i)
    y = Gather<axis = 0>(a, j)
}
"""


def test_the_first_refused_node_is_named_by_its_name_or_by_op_type_and_index():
    model = parsed(GATHERS, i=np.array([1, 2], np.int64), j=np.array([9], np.int64))
    assert rejected(model) == ("invalid model: node 'Gather_1' (Gather): index 9 is out of range for axis 0 of "
                               "size 2 (valid: -2 to 1)")
    model.graph.node[1].name = "second"
    assert rejected(model).startswith("invalid model: node 'second' (Gather): index 9")
    model = parsed(GATHERS, i=np.array([7], np.int64), j=np.array([9], np.int64))
    assert rejected(model).startswith("invalid model: node 'Gather_0' (Gather): index 7")


def test_no_op_type_is_checked_by_two_families():
    families = [validate_operands.CHECKS, validate_indices.CHECKS, validate_quantize.CHECKS, validate_windows.CHECKS,
                validate_recurrent.CHECKS]
    assert all(not a.keys() & b.keys() for i, a in enumerate(families) for b in families[i + 1:])


def test_a_nan_float_attribute_is_refused_but_a_nan_constant_is_not():
    """Found by the fuzzer (seed 47 cases 160 and 820: HardSigmoid beta NaN feeding an ArgMin, Shrink lambd NaN:
    onnxruntime gives 0 where every comparison with NaN fails, the program passed x through)."""
    text = """
    <ir_version: 8, opset_import: ["" : 18]>
    g (float[2, 3] x) => (float y) {{
        y = {node}
    }}
    """
    assert rejected(parsed(text.format(node="Shrink<lambd = nan>(x)"))) == (
        "invalid model: node 'Shrink_0' (Shrink): attribute 'lambd' is NaN (a NaN parameter is not supported)")
    assert rejected(parsed(text.format(node="HardSigmoid<alpha = 0.5, beta = nan>(x)"))).endswith(
        "(HardSigmoid): attribute 'beta' is NaN (a NaN parameter is not supported)")
    import_model(parsed(text.format(node="Shrink<lambd = 0.5>(x)")), {})
    norm = "BatchNormalization<{}>(x, g, b, m, v)"
    consts = {k: np.ones(3, np.float32) for k in "gbmv"}
    assert rejected(parsed(text.format(node=norm.format("epsilon = nan")), **consts)).endswith(
        "(BatchNormalization): attribute 'epsilon' is NaN (a NaN parameter is not supported)")
    import_model(parsed(text.format(node=norm.format("momentum = nan")), **consts), {})  # unused in inference
    dropout = """
    <ir_version: 8, opset_import: ["" : 10]>
    g (float[2, 3] x) => (float y) {
        y = Dropout<ratio = nan>(x)
    }
    """
    import_model(parsed(dropout), {})  # inference passes x through (onnxruntime runs it)
    constant = """
    <ir_version: 8, opset_import: ["" : 18]>
    g (float x) => (float y) {
        c = Constant<value_float = nan>()
        y = Add(x, c)
    }
    """
    import_model(parsed(constant), {})


def test_a_required_input_left_out_is_refused_before_onnxruntime_sees_it():
    """Fuzz seed 101 case 1888: `Sum(x, "", c)` (an entry of Sum's variadic list left out) is a segmentation
    fault in onnxruntime's run, which verify and the weight-gain measurement reach; it is refused first.  An
    optional input left out (Clip's min) stays valid."""
    import pytest
    from onnx import TensorProto as T, helper as h, numpy_helper as nh

    import onnx2ttnn
    from onnx2ttnn.errors import ConversionError

    def model(op, inputs):
        graph = h.make_graph([h.make_node(op, inputs, ["y"], name="n")], "g",
                             [h.make_tensor_value_info("x", T.FLOAT, [1, 4])],
                             [h.make_tensor_value_info("y", T.FLOAT, [1, 4])],
                             [nh.from_array(np.full(4, 6.0, np.float32), "c"), nh.from_array(np.float32(6), "m")])
        return h.make_model(graph, opset_imports=[h.make_opsetid("", 13)])

    with pytest.raises(ConversionError, match=r"node 'n' \(Sum\): input 1 \(data_0\) is left out"):
        onnx2ttnn.convert(model("Sum", ["x", "", "c"]))
    onnx2ttnn.convert(model("Clip", ["x", "", "m"]))
