"""frontend/branches.py through shapes.infer_shapes: an If the pinned input shapes decide has only its taken
branch checked by strict inference; a conflict in the taken branch still refuses the model."""
from __future__ import annotations

import numpy as np
import onnx
import onnx.parser
import pytest

from onnx2ttnn.errors import ConversionError
from onnx2ttnn.frontend.shapes import infer_shapes, override_input_shapes


def _picks_by_width(then_op: str = "Add", else_op: str = "Mul") -> onnx.ModelProto:
    """y = If(width of x == 512) {then: then_op(x, b512)} {else: else_op(x, b256)}: each branch fits one width."""
    b512, b256 = ", ".join(["0.5"] * 512), ", ".join(["2.0"] * 256)
    return onnx.parser.parse_model(f"""
    <ir_version: 8, opset_import: ["" : 17]>
    agraph (float[1, N] x) => (float[1, N] y) {{
      s = Shape(x)
      one = Constant<value = int64[1] {{1}}>()
      w = Gather<axis=0>(s, one)
      big = Constant<value = int64[1] {{512}}>()
      e1 = Equal(w, big)
      c = Squeeze(e1)
      y = If(c) <then_branch = g1 () => (float[1, 512] t) {{
          b = Constant<value = float[1, 512] {{{b512}}}>()
          t = {then_op}(x, b)
      }}, else_branch = g2 () => (float[1, 256] e) {{
          b = Constant<value = float[1, 256] {{{b256}}}>()
          e = {else_op}(x, b)
      }}>
    }}""")


def _inferred(model: onnx.ModelProto, width: int) -> onnx.ModelProto:
    override_input_shapes(model, {"x": (1, width)})
    return infer_shapes(model)


@pytest.mark.parametrize("width, kept", [(256, "Mul"), (512, "Add")])
def test_the_untaken_branch_of_an_if_the_input_shape_decides_is_not_checked(width, kept):
    model = _inferred(_picks_by_width(), width)
    ops = [n.op_type for n in model.graph.node]
    assert "If" not in ops and kept in ops  # the taken branch inlined
    y = next(o for o in model.graph.output if o.name == "y")
    assert [d.dim_value for d in y.type.tensor_type.shape.dim] == [1, width]


def test_the_inlined_model_computes_what_onnxruntime_computes_on_the_original():
    import onnxruntime

    original = _picks_by_width()
    x = np.random.default_rng(0).standard_normal((1, 256)).astype(np.float32)
    want = onnxruntime.InferenceSession(original.SerializeToString()).run(None, {"x": x})[0]
    model = _inferred(_picks_by_width(), 256)
    got = onnxruntime.InferenceSession(model.SerializeToString()).run(None, {"x": x})[0]
    np.testing.assert_array_equal(got, want)


def test_a_conflict_in_the_taken_branch_is_refused_naming_its_node():
    model = _picks_by_width(else_op="Sub")
    model.graph.node[-1].attribute[1].g.node[1].name = "bad_sub"  # else_branch's Sub
    b = model.graph.node[-1].attribute[1].g.node[0]  # else_branch's constant: make it not fit 256
    b.CopyFrom(onnx.helper.make_node("Constant", [], ["b"], value=onnx.numpy_helper.from_array(
        np.ones((1, 300), np.float32))))
    with pytest.raises(ConversionError, match=r"(?s)invalid model.*'bad_sub' \(Sub\): Incompatible dimensions$"):
        _inferred(model, 256)


def test_an_if_on_an_input_value_keeps_both_branches():
    """A condition on values (not shapes) is not decided: the If stays, and the branch that does not fit the
    pinned width is left to the lenient inference, as before (onnxruntime runs the branch taken)."""
    model = _picks_by_width()
    model.graph.input.append(onnx.helper.make_tensor_value_info("flag", onnx.TensorProto.BOOL, []))
    model.graph.node[-1].input[0] = "flag"
    model = _inferred(model, 256)
    assert [n.op_type for n in model.graph.node].count("If") == 1


def test_a_model_whose_ifs_all_fit_is_left_alone():
    model = _picks_by_width()
    for branch in model.graph.node[-1].attribute:  # both branches Identity: nothing fails, nothing inlined
        del branch.g.node[:]
        branch.g.node.extend([onnx.helper.make_node("Identity", ["x"], [branch.g.output[0].name])])
        branch.g.output[0].type.tensor_type.ClearField("shape")
    model = _inferred(model, 256)
    assert [n.op_type for n in model.graph.node].count("If") == 1
