"""validate_operands: constant indices out of range, Reshapes that change the element count, a Gemm C that does
not broadcast, operands of the wrong rank, unknown modes and flags onnxruntime refuses are refused before
lowering, naming the node; valid neighbours of each still convert."""
from __future__ import annotations

import numpy as np
import pytest

from onnx2ttnn.frontend.importer import import_model
from tests.frontend._validate_models import parsed, rejected


GATHER = """
<ir_version: 8, opset_import: ["" : 18]>
g (float[4, 3] x) => (float y) {
    y = Gather<axis = 0>(x, i)
}
"""


def test_a_constant_gather_index_past_the_axis_is_refused():
    # converted, it was a slice of row 50 % 4 = 2
    message = rejected(parsed(GATHER, i=np.array([1, 50], np.int64)))
    assert message == ("invalid model: node 'Gather_0' (Gather): index 50 is out of range for axis 0 of size 4 "
                       "(valid: -4 to 3)")


def test_a_constant_gather_index_from_a_constant_node_is_checked_too():
    text = """
    <ir_version: 8, opset_import: ["" : 18]>
    g (float[4, 3] x) => (float y) {
        i = Constant<value = int64 {-5}>()
        y = Gather<axis = 0>(x, i)
    }
    """
    assert "index -5 is out of range for axis 0 of size 4" in rejected(parsed(text))


def test_negative_gather_indices_within_the_axis_are_valid():
    import_model(parsed(GATHER, i=np.array([-4, 3], np.int64)), {})


def test_gather_elements_and_gather_nd_indices_are_checked():
    elements = """
    <ir_version: 8, opset_import: ["" : 18]>
    g (float[2, 3] x) => (float y) {
        y = GatherElements<axis = 1>(x, i)
    }
    """
    assert "index 3 is out of range for axis 1 of size 3" in rejected(parsed(elements, i=np.array([[0, 1], [2, 3]])))
    nd = """
    <ir_version: 8, opset_import: ["" : 18]>
    g (float[2, 3] x) => (float y) {
        y = GatherND(x, i)
    }
    """
    assert "index 7 is out of range for dim 1 of size 3" in rejected(parsed(nd, i=np.array([[1, 7]], np.int64)))
    import_model(parsed(nd, i=np.array([[1, -3]], np.int64)), {})


RESHAPE = """
<ir_version: 8, opset_import: ["" : 18]>
g (float[3, 4] x) => (float y) {
    y = Reshape(x, s)
}
"""


@pytest.mark.parametrize("target, why", [
    ([5, 5], "cannot reshape 12 elements (shape [3, 4]) to [5, 5] (25 elements)"),
    ([0, 0, 2], "cannot reshape 12 elements (shape [3, 4]) to [0, 0, 2] (24 elements)"),
], ids=["25-elements", "zeros-copy-dims"])
def test_a_reshape_that_changes_the_element_count_is_refused(target, why):
    # strict inference accepts these; onnxruntime fails when it runs them
    message = rejected(parsed(RESHAPE, s=np.array(target, np.int64)))
    assert message == f"invalid model: node 'Reshape_0' (Reshape): {why}"


@pytest.mark.parametrize("target", [[0, -1], [2, 6], [-1], [1, 12, 1]])
def test_reshapes_that_keep_the_element_count_are_valid(target):
    import_model(parsed(RESHAPE, s=np.array(target, np.int64)), {})


def test_a_reshape_whose_target_is_known_only_through_data_propagation_is_checked():
    text = """
    <ir_version: 8, opset_import: ["" : 18]>
    g (float[3, 4] x, float[5, 5] z) => (float y) {
        s = Shape(z)
        y = Reshape(x, s)
    }
    """
    assert "cannot reshape 12 elements (shape [3, 4]) to [5, 5] (25 elements)" in rejected(parsed(text))


def test_a_gemm_bias_that_does_not_broadcast_to_the_product_is_refused():
    """Found by the fuzzer: onnxruntime "Gemm: Invalid bias shape for broadcast"; convert accepted it, or failed the
    IR verifier after lower-to-ttnn (an internal error)."""
    text = """
    <ir_version: 8, opset_import: ["" : 18]>
    g (float[4, 8] x) => (float y) {
        y = Gemm<transB = 1>(x, w, c)
    }
    """
    w = np.ones((3, 8), np.float32)
    for bad in ((4,), (3, 4), (2, 3), (1, 1, 3)):
        message = rejected(parsed(text, w=w, c=np.ones(bad, np.float32)))
        assert message.endswith(f"(Gemm): C of shape {list(bad)} does not broadcast to the product's shape [4, 3]")
    for good in ((3,), (1, 3), (4, 1), (4, 3), (1,), ()):
        import_model(parsed(text, w=w, c=np.ones(good, np.float32)), {})


# --- operands and attributes onnxruntime checks when it runs the node (found by the fuzzer, seed 0) ------------------
def _one(op: str, attrs: str = "", inputs: str = "x", x: str = "float[2, 3]", opset: int = 18, **initializers):
    return parsed(f"""
    <ir_version: 8, opset_import: ["" : {opset}]>
    g ({x} x) => (float y) {{
        y = {op}{attrs}({inputs})
    }}
    """, **initializers)


@pytest.mark.parametrize("op, inputs, bad, good, reason", [
    ("CumSum", "x, a", {"a": np.array([1, 0], np.int64)}, {"a": np.array(1, np.int64)},
     "input 1 has shape [2]; it must be a scalar (0-D or one element)"),
    ("Trilu", "x, k", {"k": np.array([[1]], np.int64)}, {"k": np.array([1], np.int64)},
     "input 1 has shape [1, 1]; it must be a scalar (0-D or one element)"),
    ("Clip", "x, lo", {"lo": np.zeros((2, 3), np.float32)}, {"lo": np.float32(0)},
     "input 1 has shape [2, 3]; it must be a scalar (0-D or one element)"),
    ("ReduceMax", "x, axes", {"axes": np.array(1, np.int64)}, {"axes": np.array([1], np.int64)},
     "input 1 has shape []; it must be 1-D"),
    ("Reshape", "x, s", {"s": np.array([[3, 2]], np.int64)}, {"s": np.array([3, 2], np.int64)},
     "input 1 has shape [1, 2]; it must be 1-D"),
])
def test_operands_of_the_wrong_rank_are_refused(op, inputs, bad, good, reason):
    assert rejected(_one(op, inputs=inputs, **bad)).endswith(f"({op}): {reason}")
    import_model(_one(op, inputs=inputs, **good), {})


@pytest.mark.parametrize("op, attrs, x, reason", [
    ("DepthToSpace", '<blocksize = 1, mode = "garbage">', "float[1, 4, 2, 2]", "mode 'garbage' is not one of DCR, CRD"),
    ("DepthToSpace", "<blocksize = 2>", "float[1, 6, 2, 2]", "the input's 6 channels are not a multiple of "
                                                            "blocksize^2 = 4"),
    ("MeanVarianceNormalization", "<axes: ints = []>", "float[2, 3]", "axes is empty; it must name at least one axis"),
    ("GatherElements", "<axis = 4>", "float[3]", "axis 4 is out of range for an input of rank 1"),
])
def test_attributes_onnxruntime_refuses_are_refused(op, attrs, x, reason):
    inputs = {"GatherElements": "x, i"}.get(op, "x")
    model = _one(op, attrs, inputs, x, i=np.array([0], np.int64))
    if "i" not in inputs.split(", "):
        del model.graph.initializer[:]
    assert rejected(model).endswith(f"({op}): {reason}")


def test_a_cumsum_flag_other_than_0_or_1_is_refused():
    model = _one("CumSum", "<reverse = 2>", "x, a", a=np.array(0, np.int64))
    assert rejected(model).endswith("(CumSum): reverse is 2; it must be 0 or 1")


def test_scatter_elements_indices_and_updates_of_different_shapes_are_refused():
    model = _one("ScatterElements", "<axis = 1>", "x, i, u", i=np.zeros((2, 1), np.int64),
                 u=np.ones((2, 3), np.float32))
    assert rejected(model).endswith("(ScatterElements): the indices (shape [2, 1]) and the updates (shape [2, 3]) "
                                    "differ in shape")


def test_topk_flags_other_than_0_or_1_are_refused():
    """Found by the fuzzer (seed 16 case 116): onnxruntime reads largest=2 as false (smallest), the lowering as
    true: a silently different program."""
    model = parsed("""
    <ir_version: 8, opset_import: ["" : 18]>
    g (float[2, 3] x) => (float v, int64 i) {
        v, i = TopK<largest = 2>(x, k)
    }
    """, k=np.array([1], np.int64))
    assert rejected(model).endswith("(TopK): largest is 2; it must be 0 or 1")


def test_an_einsum_term_with_the_wrong_number_of_labels_is_refused():
    """Found by the fuzzer (seed 7 case 598): onnxruntime "Einsum subscripts does not contain enough subscript
    labels and there is no ellipsis for input 0"."""
    # (strict inference refuses a wrong number of labels; it lets an empty equation pass)
    assert rejected(_one("Einsum", '<equation = "">')).endswith(
        "(Einsum): equation '': operand 0 has 0 labels but its input has rank 2")
    import_model(_one("Einsum", '<equation = "ab->ba">'), {})
    import_model(_one("Einsum", '<equation = "...->...">'), {})


# --- found by the fuzzer, seed 31 ------------------------------------------------------------------------------------
def test_a_prelu_slope_that_does_not_broadcast_to_x_is_refused():
    """Seed 31 cases 884 and 1264: strict inference broadcasts the slope both ways, the lowering made a [3, 3]
    product for a [3, 1] output (an internal error: the IR verifier after lower-to-ttnn); onnxruntime refuses
    it or runs it into a wrong shape."""
    for x, slope in (([3, 1], (3,)), ([4, 8], (8, 8)), ([2, 3], (1, 2, 3))):
        message = rejected(_one("PRelu", "", "x, s", f"float{x}", s=np.ones(slope, np.float32)))
        assert message.endswith(f"(PRelu): the slope of shape {list(slope)} does not broadcast to the input's "
                                f"shape {x}")
    for slope in ((3,), (1,), (2, 1), (2, 3), ()):
        import_model(_one("PRelu", "", "x, s", s=np.ones(slope, np.float32)), {})


@pytest.mark.parametrize("index", [1, 2, 3, 4])
def test_slice_operands_must_be_1_d(index):
    """Seed 31 case 408: onnxruntime "Ends must be a 1-D array" for a scalar ends."""
    operands = {"s": np.array([0], np.int64), "e": np.array([2], np.int64), "a": np.array([1], np.int64),
                "t": np.array([1], np.int64)}
    import_model(_one("Slice", "", "x, s, e, a, t", **operands), {})
    name = "seat"[index - 1]
    operands[name] = operands[name].reshape(())
    assert rejected(_one("Slice", "", "x, s, e, a, t", **operands)).endswith(
        f"(Slice): input {index} has shape []; it must be 1-D")


def test_a_constant_cumsum_axis_out_of_range_is_refused():
    """Seed 31 case 1072: onnxruntime "axis 1 is not in valid range [-1,0]"; strict inference does not read it."""
    assert rejected(_one("CumSum", "", "x, a", "float[3]", a=np.array(1, np.int64))).endswith(
        "(CumSum): axis 1 is out of range for an input of rank 1")
    assert rejected(_one("CumSum", "", "x, a", a=np.array([-3], np.int64))).endswith(
        "(CumSum): axis -3 is out of range for an input of rank 2")
    import_model(_one("CumSum", "", "x, a", a=np.array(-2, np.int64)), {})


def test_space_to_depth_needs_a_height_and_width_multiple_of_blocksize():
    """Seed 31 case 1476: onnxruntime "SpaceToDepth requires input height to be a multiple of block_size"; strict
    inference floors the quotient."""
    assert rejected(_one("SpaceToDepth", "<blocksize = 2>", "x", "float[1, 8, 3, 4]")).endswith(
        "(SpaceToDepth): the input's height 3 is not a multiple of blocksize 2")
    assert rejected(_one("SpaceToDepth", "<blocksize = 2>", "x", "float[1, 8, 4, 5]")).endswith(
        "(SpaceToDepth): the input's width 5 is not a multiple of blocksize 2")
    import_model(_one("SpaceToDepth", "<blocksize = 2>", "x", "float[1, 8, 4, 6]"), {})


def test_a_cast_saturate_other_than_0_or_1_is_refused():
    """Seed 31 case 740: onnxruntime's Cast of an int64 4 to float with saturate=2 gave NaN (or 0); the program
    gave 4."""
    assert rejected(_one("Cast", "<to = 1, saturate = 2>", opset=21)).endswith(
        "(Cast): saturate is 2; it must be 0 or 1")
    import_model(_one("Cast", "<to = 1, saturate = 1>", opset=21), {})


def test_unknown_gelu_and_resize_modes_and_a_non_1_d_split_are_refused():
    """Found by the fuzzer (seed 16 with the extended generator, cases 84, 98 and 138): onnxruntime "Unsupported
    approximation_algorithm: garbage", "The split tensor must be a vector", "nearest_mode:[none] is not
    supported!" (in linear mode too, where the lowering never reads it)."""
    assert rejected(_one("Gelu", '<approximate = "garbage">', opset=20)).endswith(
        "(Gelu): approximate 'garbage' is not one of none, tanh")
    import_model(_one("Gelu", '<approximate = "tanh">', opset=20), {})
    assert rejected(_one("Split", "<axis = 1>", "x, s", s=np.array([[3]], np.int64))).endswith(
        "(Split): input 1 has shape [1, 1]; it must be 1-D")
    resize = '<mode = "linear", nearest_mode = "{}">'
    sizes = {"s": np.array([2, 6], np.int64)}
    assert rejected(_one("Resize", resize.format("none"), 'x, "", "", s', **sizes)).endswith(
        "(Resize): nearest_mode 'none' is not one of round_prefer_floor, round_prefer_ceil, floor, ceil")
    import_model(_one("Resize", resize.format("floor"), 'x, "", "", s', **sizes), {})


@pytest.mark.parametrize("op, attrs, inputs, x, consts, reason", [
    ("DequantizeLinear", "<axis = 2>", "x, s", "uint8[3]", {"s": np.float32(0.1)},
     "axis 2 is out of range for an input of rank 1"),
    ("LSTM", '<hidden_size = 1, direction = "CRD">', "x, w, r", "float[2, 1, 3]",
     {"w": np.ones((1, 4, 3), np.float32), "r": np.ones((1, 4, 1), np.float32)},
     "direction 'CRD' is not one of forward, reverse, bidirectional"),
    ("Squeeze", "", "x, a", "float[2, 1]", {"a": np.array(1, np.int64)}, "input 1 has shape []; it must be 1-D"),
    ("Transpose", "<perm = [0]>", "x", "float[2, 3]", {}, "perm [0] has 1 entries for an input of rank 2"),
    ("Einsum", '<equation = "edge">', "x", "float[3, 4, 3, 5]", {},
     "equation 'edge': label 'e' is repeated in operand 0 (shape [3, 4, 3, 5]) over dims of sizes 3 and 5"),
    ("Einsum", '<equation = "ij,kj->ik">', "x, w", "float[2, 3]", {"w": np.ones((4, 5), np.float32)},
     "equation 'ij,kj->ik': label 'j' has size 3 in operand 0 and 5 in operand 1"),
    ("Einsum", '<equation = "...i,i">', "x, w", "float[2, 3]", {"w": np.ones(4, np.float32)},
     "equation '...i,i': label 'i' has size 3 in operand 0 and 4 in operand 1"),
    ("LRN", "<size = 1, beta = 0.0>", "x", "float[1, 4, 2, 2]", {}, "beta 0.0 must be positive"),
    ("LRN", "<size = 3, alpha = -1.0>", "x", "float[1, 4, 2, 2]", {}, "alpha -1.0 must be positive"),
    ("LRN", "<size = 2>", "x", "float[1, 4, 2, 2]", {}, "size 2 must be odd and positive"),
    # seed 53 cases 1324, 314
    ("Concat", "<axis = 1099511627776>", "x, x", "float[2, 3]", {},
     "axis 1099511627776 is out of range for inputs of rank 2"),
    ("Mod", "<fmod = 2>", "x, x", "float[2, 3]", {}, "fmod is 2; it must be 0 or 1"),
    # seed 59 case 1816
    ("LpNormalization", "<p = 3>", "x", "float[2, 3]", {}, "p 3: LpNormalization's order must be 1 or 2"),
])
def test_what_seed_47_found_onnxruntime_refusing_is_refused(op, attrs, inputs, x, consts, reason):
    """Found by the fuzzer (seed 47, cases 174, 180, 558, 562, 908, 920, 1250; seed 53 cases 314, 466, 1324, 1480):
    each converted (two with an internal error); onnxruntime refuses each (Einsum "operands could not be broadcast
    together", LRN "beta_ > 0.0f was false", BatchNormalization "Invalid input var: 0th dimension != C", ...)."""
    assert rejected(_one(op, attrs, inputs, x, **consts)).endswith(f"({op}): {reason}")


@pytest.mark.parametrize("opset", [7, 12])
@pytest.mark.parametrize("mean, var, reason", [
    ((2, 3), (3,), "mean has shape [2, 3]; it must be [3], one value per channel"),
    ((3,), (2,), "var has shape [2]; it must be [3], one value per channel"),
])
def test_batch_norm_parameters_of_another_shape_than_the_channels_are_refused(opset, mean, var, reason):
    """Found by the fuzzer (seed 53 cases 466, 1480: internal errors, a broadcast of 32 against 2 values and a
    reshape of 32 into 16); strict inference before opset 14 does not check them, onnxruntime "Invalid input var:
    0th dimension != C"."""
    consts = {"g": np.ones(3, np.float32), "b": np.zeros(3, np.float32), "m": np.zeros(mean, np.float32),
              "v": np.ones(var, np.float32)}
    model = _one("BatchNormalization", "", "x, g, b, m, v", "float[1, 3, 2, 2]", opset=opset, **consts)
    assert rejected(model).endswith(f"(BatchNormalization): {reason}")
    consts.update(m=np.zeros(3, np.float32), v=np.ones(3, np.float32))
    import_model(_one("BatchNormalization", "", "x, g, b, m, v", "float[1, 3, 2, 2]", opset=opset, **consts), {})


@pytest.mark.parametrize("op, attrs, inputs, x, consts", [
    ("Einsum", '<equation = "ij,jk->ik">', "x, w", "float[2, 1]", {"w": np.ones((3, 4), np.float32)}),
    ("Einsum", '<equation = "ij,ij->ij">', "x, w", "float[2, 3]", {"w": np.ones((1, 3), np.float32)}),
    ("Einsum", '<equation = "ii->i">', "x", "float[3, 3]", {}),
    ("LRN", "<size = 3, alpha = 0.5, beta = 0.6, bias = 0.0>", "x", "float[1, 4, 2, 2]", {}),
    ("LpNormalization", "<p = 1>", "x", "float[2, 3]", {}),
])
def test_their_valid_neighbours_pass_validation(op, attrs, inputs, x, consts):
    """A label of size 1 broadcasts across operands (onnxruntime runs these); LRN's bias may be 0."""
    import_model(_one(op, attrs, inputs, x, **consts), {})


def test_a_quantize_axis_out_of_range_is_refused():
    model = parsed("""
    <ir_version: 8, opset_import: ["" : 18]>
    g (float[3] x) => (uint8 y) {
        y = QuantizeLinear<axis = 16>(x, s, z)
    }
    """, s=np.float32(0.1), z=np.uint8(0))
    assert rejected(model).endswith("(QuantizeLinear): axis 16 is out of range for an input of rank 1")


def test_an_if_condition_of_more_than_one_element_is_refused():
    """Found by the fuzzer (seed 47 case 616): onnxruntime "If nodes condition input must have exactly one
    element", of any rank: openWakeWord's hey_jarvis model (in its 0.4.0 wheel) has a [1, 1] condition."""
    text = """
    <ir_version: 8, opset_import: ["" : 18]>
    g (bool[{n}] c, float[2] x) => (float y) {{
        y = If(c) <then_branch = t () => (float[2] a) {{ a = Neg(x) }},
                   else_branch = e () => (float[2] b) {{ b = Abs(x) }}>
    }}
    """
    assert rejected(parsed(text.format(n=3))).endswith(
        "(If): input 0 has shape [3]; it must hold one element")
    assert rejected(parsed(text.format(n="1, 2"))).endswith("(If): input 0 has shape [1, 2]; it must hold one element")
    import_model(parsed(text.format(n=1)), {})
    import_model(parsed(text.format(n="1, 1")), {})


def test_a_quantize_scale_that_fits_no_axis_is_refused():
    """Found by the fuzzer (seed 47 cases 1092, 1186: a QuantizeLinear -> DequantizeLinear pair, fused before
    the lowering's own checks): onnxruntime refuses a scale that is neither per tensor nor per axis."""
    text = """
    <ir_version: 8, opset_import: ["" : 18]>
    g (uint8[5, 2, 5] x) => (float y) {{
        y = DequantizeLinear{attrs}(x, s)
    }}
    """
    assert rejected(parsed(text.format(attrs=""), s=np.full(5, 0.1, np.float32))).endswith(
        "(DequantizeLinear): the scale has 5 values but axis 1 of the input (shape [5, 2, 5]) has 2 elements")
    assert rejected(parsed(text.format(attrs=""), s=np.full((5, 2), 0.1, np.float32))).endswith(
        "(DequantizeLinear): the scale has shape [5, 2]; it must be a scalar or 1-D (one value per element of axis)")
    import_model(parsed(text.format(attrs="<axis = 2>"), s=np.full(5, 0.1, np.float32)), {})
    import_model(parsed(text.format(attrs=""), s=np.full(1, 0.1, np.float32)), {})


# ---- fuzz seed 71 --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("op, attrs, inputs, x, consts, reason", [
    # case 1252: onnx inference leaves the output unshaped; the declared [1] stood for onnxruntime's rank 0
    ("GatherND", "", "x, i", "float[1]", {"i": np.array([0], np.int64)},
     "its output 'y' is declared [1], but GatherND gives []"),
    # case 828: onnxruntime runs an unknown reduction as "none"; the simulator crashed
    ("ScatterElements", '<axis = 1, reduction = "nearest">', "x, i, u", "float[2, 3]",
     {"i": np.zeros((2, 1), np.int64), "u": np.ones((2, 1), np.float32)},
     "reduction 'nearest' is not one of none, add, mul, max, min"),
    # cases 1428 and 304
    ("ReverseSequence", "<time_axis = 64>", "x, n", "float[2, 3]", {"n": np.array([1, 1, 1], np.int64)},
     "time_axis 64 must be 0 or 1"),
    ("ReverseSequence", "<time_axis = 1, batch_axis = 1>", "x, n", "float[2, 3]", {"n": np.array([1, 1], np.int64)},
     "time_axis and batch_axis are both 1; they must differ"),
])
def test_what_seed_71_found_onnxruntime_refusing_is_refused(op, attrs, inputs, x, consts, reason):
    """Found by the fuzzer (seed 71): each converted; onnxruntime refuses each, or (GatherND, ScatterElements)
    runs it otherwise than the model says."""
    model = _one(op, attrs, inputs, x, **consts)
    if op == "GatherND":
        model.graph.output[0].type.tensor_type.shape.dim.add().dim_value = 1
    assert rejected(model).endswith(f"({op}): {reason}")


def test_an_integer_convolution_with_group_0_is_refused():
    """Fuzz seed 71 case 824: a ConvInteger / QLinearConv with group 0 converted (onnxruntime: "Input channels C
    is not equal to kernel channels * group ... group: 0")."""
    model = parsed("""
    <ir_version: 8, opset_import: ["" : 18]>
    g (uint8[1, 1, 4, 4] x) => (int32[1, 1, 3, 3] y) {
        y = ConvInteger<group = 0>(x, w)
    }
    """, w=np.ones((1, 1, 2, 2), np.uint8))
    assert rejected(model).endswith("(ConvInteger): group 0 must be at least 1")


def test_what_seed_73_found_onnxruntime_refusing_is_refused():
    """Fuzz seed 73 cases 508 and 288: a Split with num_outputs 64 and three outputs, an integer convolution whose
    kernel_shape is not its weight's (onnxruntime: "Number of outputs (3) does not match num_outputs (64)",
    "kernel_shape is not compatible with W shape"); both converted."""
    split = parsed("""
    <ir_version: 8, opset_import: ["" : 18]>
    g (float[2, 6] x) => (float[2, 2] a, float[2, 2] b, float[2, 2] c) {
        a, b, c = Split<axis = 1, num_outputs = 64>(x)
    }
    """)
    assert rejected(split).endswith("(Split): num_outputs 64 but the node has 3 outputs")
    conv = parsed("""
    <ir_version: 8, opset_import: ["" : 18]>
    g (uint8[1, 1, 4, 4] x) => (int32[1, 1, 3, 3] y) {
        y = ConvInteger<kernel_shape = [3, 1]>(x, w)
    }
    """, w=np.ones((1, 1, 2, 2), np.uint8))
    assert "(ConvInteger): kernel_shape [3, 1] contradicts the weight's spatial dims [2, 2]" in rejected(conv)


def test_what_seed_79_found_onnxruntime_refusing_is_refused():
    """Fuzz seed 79 cases 720 and 1156: a Gemm-7 whose A [1, 512] meets a [10, 32] B^T (its inference does not
    check the inner dims; it converted in bf16 and was an internal error in fp32), and a QuantizeLinear with an
    [8] scale on a rank-1 input and the default axis 1 (onnxruntime: "axis 1 is not in valid range [-1,0]"; it
    converted as if the axis were 0)."""
    gemm = parsed("""
    <ir_version: 8, opset_import: ["" : 7]>
    g (float[1, 512] x) => (float[1, 10] y) {
        y = Gemm<transB = 1>(x, w, b)
    }
    """, w=np.ones((10, 32), np.float32), b=np.zeros(10, np.float32))
    assert "(Gemm): A of shape [1, 512] and B of shape [10, 32] (transA 0, transB 1) have inner dims 512 and 32" \
        in rejected(gemm)
    quantize = parsed("""
    <ir_version: 9, opset_import: ["" : 21]>
    g (float[8] x) => (uint8[8] y) {
        y = QuantizeLinear(x, s)
    }
    """, s=np.full(8, 0.5, np.float32))
    assert rejected(quantize).endswith("(QuantizeLinear): a per-axis scale (shape [8]) along axis 1, out of range "
                                       "for an input of rank 1")

# ---- fuzz seed 67 ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("op, attrs, inputs, x, consts, reason", [
    # case 32: onnxruntime "Unexpected axis value (16) rank of first input is 2"
    ("LayerNormalization", "<axis = 16>", "x, s", "float[2, 3]", {"s": np.ones(3, np.float32)},
     "axis 16 is out of range for an input of rank 2"),
    ("LayerNormalization", "<axis = 2>", "x, s", "float[2, 3]", {"s": np.ones(3, np.float32)},
     "axis 2 is out of range for an input of rank 2"),  # (strict inference refuses a negative one)
    # case 838: onnxruntime "'indices' shape should have values within bounds of 'data' shape. Invalid value in
    # indices shape is: 5"
    ("GatherElements", "<axis = 0>", "x, i", "float[5, 4]", {"i": np.zeros((1, 5), np.int64)},
     "the indices (shape [1, 5]) are larger than the data (shape [5, 4]) in dim 1, which is not the axis"),
])
def test_what_seed_67_found_onnxruntime_refusing_is_refused(op, attrs, inputs, x, consts, reason):
    """Found by the fuzzer (seed 67 cases 32, 838): strict inference lets each pass, onnxruntime refuses it."""
    assert rejected(_one(op, attrs, inputs, x, **consts)).endswith(f"({op}): {reason}")


@pytest.mark.parametrize("op, attrs, inputs, x, consts", [
    ("LayerNormalization", "<axis = -2>", "x, s", "float[2, 3]", {"s": np.ones((2, 3), np.float32)}),
    ("GatherElements", "<axis = 1>", "x, i", "float[5, 4]", {"i": np.zeros((2, 7), np.int64)}),  # longer on the axis
])
def test_the_neighbours_of_what_seed_67_found_pass_validation(op, attrs, inputs, x, consts):
    import_model(_one(op, attrs, inputs, x, **consts), {})


@pytest.mark.parametrize("flag, value", [("exclude_outside", -2), ("antialias", 2)])
def test_a_resize_flag_neither_0_nor_1_is_refused(flag, value):
    """Fuzz seed 167 case 166: an unused nearest Resize with exclude_outside -2 converted (onnxruntime refuses any
    non-zero exclude_outside outside cubic and antialiased linear); the spec's flags are 0 or 1."""
    scales = {"s": np.array([1, 1, 0.5, 0.5], np.float32)}
    model = _one("Resize", f'<mode = "linear", {flag} = {value}>', "x, , s", "float[1, 1, 4, 4]", opset=19, **scales)
    assert rejected(model).endswith(f"(Resize): {flag} is {value}; it must be 0 or 1")
    import_model(_one("Resize", f'<mode = "linear", {flag} = 1>', "x, , s", "float[1, 1, 4, 4]", opset=19,
                      **scales), {})


def test_unsqueeze_axes_of_rank_2_are_refused():
    """Fuzz seed 181 case 450: Unsqueeze with [1, 1] axes converted (onnxruntime "An axes tensor must be a scalar
    or a 1-D tensor"); a scalar and a 1-D axes convert."""
    model = _one("Unsqueeze", "", "x, a", "float[4, 3]", a=np.array([[1]], np.int64))
    assert rejected(model).endswith("(Unsqueeze): input 1 has shape [1, 1]; it must be 0-D or 1-D")
    import_model(_one("Unsqueeze", "", "x, a", "float[4, 3]", a=np.array(1, np.int64)), {})
    import_model(_one("Unsqueeze", "", "x, a", "float[4, 3]", a=np.array([1], np.int64)), {})


@pytest.mark.parametrize("axis", [2**40, -2**40])
def test_a_gather_axis_past_int32_is_refused(axis):
    """Fuzz seed 173 case 456: strict inference lets Gather's axis 2^40 pass (it refuses 5 for a rank-4 input);
    an unused Gather converted, onnxruntime "axis 1099511627776 is not in valid range [-4,3]"."""
    model = _one("Gather", f"<axis = {axis}>", "x, i", "float[8, 4]", i=np.zeros((2, 2), np.int64))
    assert rejected(model).endswith(f"(Gather): axis {axis} is out of range for an input of rank 2")


@pytest.mark.parametrize("op, inputs, consts, reason", [
    ("GatherElements", "x, i", {"i": np.zeros(1, np.int64)}, "the indices (shape [1]) have rank 1 but the data "
     "(shape [5, 4]) rank 2; they must have one rank"),
    ("ScatterElements", "x, i, u", {"i": np.zeros(3, np.int64), "u": np.ones(3, np.float32)},
     "the indices (shape [3]) have rank 1 but the data (shape [5, 4]) rank 2; they must have one rank"),
])
def test_element_indices_of_another_rank_than_the_data_are_refused(op, inputs, consts, reason):
    """Fuzz seed 163 case 1662: an unused GatherElements with [1] indices into [8, 5, 8, 3] data converted (strict
    inference checks the rank only against a declared output shape; onnxruntime: "Rank of input 'data' needs to
    be equal to rank of input 'indices'"); ScatterElements: "Indices must have the same rank as Input"."""
    assert rejected(_one(op, "<axis = 0>", inputs, "float[5, 4]", **consts)).endswith(f"({op}): {reason}")
    import_model(_one(op, "<axis = 0>", inputs, "float[5, 4]",
                      **{k: v.reshape(-1, 1) for k, v in consts.items()}), {})


# ---- fuzz seed 61 ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("op, attrs, inputs, x, consts, reason", [
    # case 756
    ("LpNormalization", "<axis = 64, p = 1>", "x", "float[8, 1, 8]", {},
     "axis 64 is out of range for an input of rank 3"),
    ("LpNormalization", "<axis = -4>", "x", "float[8, 1, 8]", {}, "axis -4 is out of range for an input of rank 3"),
    # case 998
    ("ScatterND", "", "x, i, u", "float[3, 5, 1, 8]",
     {"i": np.array([[2]], np.int64), "u": np.ones((8, 1, 5, 1), np.float32)},
     "the updates have shape [8, 1, 5, 1]; indices [1, 1] into data [3, 5, 1, 8] need [1, 5, 1, 8]"),
    # case 1836
    ("ScatterND", "", "x, i, u", "float[8]", {"i": np.zeros((1, 3), np.int64), "u": np.ones(1, np.float32)},
     "the indices' last dim 3 is larger than the data's rank 1"),
])
def test_what_seed_61_found_onnxruntime_refusing_is_refused(op, attrs, inputs, x, consts, reason):
    """Found by the fuzzer (seed 61 cases 756, 998, 1836): each converted, onnxruntime refuses each when it runs
    it ("axis 64 is not in valid range [-3,2]", "updates tensor should have shape equal to indices.shape[:-1] +
    data.shape[indices.shape[-1]:]", "last dimension of indices must not be larger than rank of input tensor")."""
    assert rejected(_one(op, attrs, inputs, x, **consts)).endswith(f"({op}): {reason}")


@pytest.mark.parametrize("op, attrs, inputs, x, consts", [
    ("LpNormalization", "<axis = -3>", "x", "float[8, 1, 8]", {}),
    ("ScatterND", "", "x, i, u", "float[3, 5, 1, 8]",
     {"i": np.array([[2]], np.int64), "u": np.ones((1, 5, 1, 8), np.float32)}),
    ("ScatterND", "", "x, i, u", "float[3, 5, 1, 8]", {"i": np.zeros((2, 4), np.int64), "u": np.ones(2, np.float32)}),
])
def test_their_seed_61_valid_neighbours_pass_validation(op, attrs, inputs, x, consts):
    import_model(_one(op, attrs, inputs, x, **consts), {})


def test_a_max_pool_storage_order_other_than_0_or_1_is_refused():
    """Fuzz seed 97 case 1608: MaxPool storage_order -3 converted (onnxruntime: "storage_order == 0 ||
    storage_order == 1 was false")."""
    model = parsed("""
    <ir_version: 8, opset_import: ["" : 18]>
    g (float[1, 3, 5] x) => (float[1, 3, 3] y) {
        y = MaxPool<kernel_shape = [3], storage_order = -3>(x)
    }
    """)
    assert rejected(model).endswith("(MaxPool): storage_order -3 must be 0 or 1")


def test_what_seed_103_found_onnxruntime_refusing_is_refused():
    """Fuzz seed 103 cases 1060 and 1786: an InstanceNormalization of a rank-1 input was an internal error
    (onnxruntime: "Invalid input data: number of dimensions is less than 3"), and a Min-6 of [2], [5, 2] and [1]
    converted with broadcasting, which came with version 8."""
    norm = parsed("""
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[4] x) => (float[4] y) {
        y = InstanceNormalization(x, s, b)
    }
    """, s=np.float32(-1), b=np.float32(0.5))
    assert rejected(norm).endswith("(InstanceNormalization): the input has rank 1; it needs a batch, a channel and "
                                   "at least one spatial dim")
    minimum = parsed("""
    <ir_version: 8, opset_import: ["" : 7]>
    g (float[5, 2] x) => (float[5, 2] y) {
        y = Min(a, x)
    }
    """, a=np.ones(2, np.float32))
    assert "(Min): its inputs have shapes [2], [5, 2]; version 6 takes one shape" in rejected(minimum)
    import_model(parsed("""
    <ir_version: 8, opset_import: ["" : 8]>
    g (float[5, 2] x) => (float[5, 2] y) {
        y = Min(a, x)
    }
    """, a=np.ones(2, np.float32)), {})


def test_a_gather_elements_of_a_scalar_is_refused():
    """Fuzz seed 79 case 1838: GatherElements of a rank-0 value with axis 0 converted (onnxruntime: "axis 0 is
    not in valid range [-0,-1]"; the spec asks rank >= 1)."""
    model = parsed("""
    <ir_version: 8, opset_import: ["" : 13]>
    g (float x) => (float[1] y) {
        y = GatherElements<axis = 0>(x, i)
    }
    """, i=np.zeros(1, np.int64))
    assert "(GatherElements): axis 0 is out of range for an input of rank 0" in rejected(model)


@pytest.mark.parametrize("s_shape,b_shape,message", [
    ((4, 1), (4,), "scale has shape [4, 1]; it must be [4], one value per channel"),
    ((4,), (3,), "B has shape [3]; it must be [4], one value per channel")])
def test_an_instance_norm_parameter_not_one_per_channel_is_refused(s_shape, b_shape, message):
    """Fuzz seed 127 case 1476: an InstanceNormalization scale of shape [4, 1] converted (onnxruntime: "Invalid
    input scale: number of dimensions is not 1: 2"); a [4] pair is accepted."""
    text = """
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[3, 4, 2] x) => (float[3, 4, 2] y) {
        y = InstanceNormalization(x, s, b)
    }
    """
    model = parsed(text, s=np.ones(s_shape, np.float32), b=np.zeros(b_shape, np.float32))
    assert rejected(model).endswith(f"(InstanceNormalization): {message}")
    import_model(parsed(text, s=np.ones(4, np.float32), b=np.zeros(4, np.float32)), {})


@pytest.mark.parametrize("scale,refused", [((3, 3, 8, 8), True), ((3, 1), True), ((3, 3, 8, 1), False),
                                           ((3, 1, 8, 1), False), ((8, 1), False)])
def test_a_layer_norm_scale_must_broadcast_to_the_input_not_only_with_it(scale, refused):
    """Fuzz seed 137 case 46: a [3, 3, 8, 8] scale for an input [3, 3, 8, 1] normalised from axis 0 broadcasts with
    it both ways but not to it; onnxruntime refuses ("Scale and (optional) bias must match X.shape[axis:] or be
    NumPy-broadcastable to it"); a dim of 1 or the input's passes."""
    model = _one("LayerNormalization", "<axis = 0>", "x, s", "float[3, 3, 8, 1]", s=np.ones(scale, np.float32))
    if refused:
        assert rejected(model).endswith(f"(LayerNormalization): the scale of shape {list(scale)} does not broadcast "
                                        "with the normalised dims [3, 3, 8, 1]")
    else:
        import_model(model, {})


def test_a_resize_with_scales_not_1d_is_refused():
    """Fuzz seed 149 case 436: Resize(x, "", x) took the 4-D input as its scales and converted (onnxruntime:
    "Number of elements in scales should be equal to rank of the data"); roi, scales and sizes are 1-D."""
    text = """
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[5, 3, 1, 3] x) => (float[5, 3, 1, 3] y) {
        y = Resize<mode = "nearest">(x, "", %s)
    }
    """
    assert rejected(parsed(text % "x")).endswith("(Resize): input 2 has shape [5, 3, 1, 3]; it must be 1-D")
    import_model(parsed(text % "s", s=np.ones(4, np.float32)), {})
