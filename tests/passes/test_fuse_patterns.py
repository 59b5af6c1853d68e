"""fuse-patterns: linear+bias, erf-gelu, conv+batchnorm and conv+relu fuse; near misses do not."""
from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from onnx2ttnn.frontend.importer import import_model
from onnx2ttnn.options import Options
from onnx2ttnn.passes.base import PassContext
from onnx2ttnn.passes.fuse_patterns import FusePatterns


def _model(nodes, inits, x_shape, y_shape) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "m", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, y_shape)],
                              [numpy_helper.from_array(np.asarray(v, np.float32), k) for k, v in inits.items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _fused_ops(model) -> list[str]:
    module = import_model(model, {})
    FusePatterns().run(module, PassContext(Options()))
    return [n.op for n in module.graph.nodes]


def test_matmul_add_becomes_linear():
    nodes = [helper.make_node("MatMul", ["x", "w"], ["h"]), helper.make_node("Add", ["h", "b"], ["y"])]
    assert _fused_ops(_model(nodes, {"w": np.ones((8, 4)), "b": np.ones(4)}, [2, 8], [2, 4])) == ["Linear"]


def test_matmul_add_of_a_full_matrix_is_not_fused():
    nodes = [helper.make_node("MatMul", ["x", "w"], ["h"]), helper.make_node("Add", ["h", "b"], ["y"])]
    assert _fused_ops(_model(nodes, {"w": np.ones((8, 4)), "b": np.ones((2, 4))}, [2, 8], [2, 4])) == \
        ["MatMul", "Add"]


def test_matmul_add_whose_product_is_also_a_graph_output_is_not_fused():
    """Found by the fuzzer (the Loop recipe: a Loop unrolled into Add(MatMul(x, W), c) beside the MatMul's own
    output): the fused Linear left the graph output `h` unwritten, an internal error of the IR verifier."""
    nodes = [helper.make_node("MatMul", ["x", "w"], ["h"]), helper.make_node("Add", ["h", "b"], ["y"])]
    model = _model(nodes, {"w": np.ones((8, 4)), "b": np.ones(4)}, [2, 8], [2, 4])
    model.graph.output.append(helper.make_tensor_value_info("h", TensorProto.FLOAT, [2, 4]))
    assert _fused_ops(model) == ["MatMul", "Add"]


def test_erf_gelu_in_torch_order_becomes_gelu():
    nodes = [helper.make_node("Div", ["x", "sqrt2"], ["d"]), helper.make_node("Erf", ["d"], ["e"]),
             helper.make_node("Add", ["e", "one"], ["a"]), helper.make_node("Mul", ["x", "a"], ["m"]),
             helper.make_node("Mul", ["m", "half"], ["y"])]
    inits = {"sqrt2": np.float32(np.sqrt(2)), "one": np.float32(1), "half": np.float32(0.5)}
    assert _fused_ops(_model(nodes, inits, [2, 8], [2, 8])) == ["Gelu"]


def test_erf_without_the_half_is_not_gelu():
    nodes = [helper.make_node("Div", ["x", "sqrt2"], ["d"]), helper.make_node("Erf", ["d"], ["e"]),
             helper.make_node("Add", ["e", "one"], ["a"]), helper.make_node("Mul", ["x", "a"], ["y"])]
    inits = {"sqrt2": np.float32(np.sqrt(2)), "one": np.float32(1)}
    assert "Gelu" not in _fused_ops(_model(nodes, inits, [2, 8], [2, 8]))


def test_conv_batchnorm_relu_becomes_one_conv_with_activation():
    c = 4
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             helper.make_node("BatchNormalization", ["c", "g", "b", "m", "v"], ["n"]),
             helper.make_node("Relu", ["n"], ["y"])]
    inits = {"w": np.ones((c, 3, 3, 3)), "g": np.ones(c), "b": np.zeros(c), "m": np.zeros(c), "v": np.ones(c)}
    assert _fused_ops(_model(nodes, inits, [1, 3, 8, 8], [1, c, 8, 8])) == ["ConvAct"]


def _rms_nodes(axis: int, weight: bool):
    nodes = [helper.make_node("Pow", ["x", "two"], ["p"]),
             helper.make_node("ReduceMean", ["p"], ["m"], axes=[axis], keepdims=1),
             helper.make_node("Add", ["m", "eps"], ["a"]), helper.make_node("Sqrt", ["a"], ["s"]),
             helper.make_node("Reciprocal", ["s"], ["r"]),
             helper.make_node("Mul", ["x", "r"], ["n" if weight else "y"])]
    if weight:
        nodes.append(helper.make_node("Mul", ["w", "n"], ["y"]))
    inits = {"two": np.float32(2), "eps": np.float32(1e-6), "w": np.linspace(0.5, 1.5, 64)}
    return nodes, inits


def test_llama_style_rms_norm_becomes_one_node_and_matches_onnxruntime():
    from onnx2ttnn import convert
    from onnx2ttnn.verify import verify

    for weight in (True, False):
        nodes, inits = _rms_nodes(-1, weight)
        model = _model(nodes, inits, [1, 16, 64], [1, 16, 64])
        assert _fused_ops(model) == ["RMSNorm"]
        assert convert(model).op_counts()["rms_norm"] == 1
        report = verify(model)
        assert report.passed, report.text()


def test_a_mean_square_over_another_axis_is_not_rms_norm():
    nodes, inits = _rms_nodes(1, True)
    assert "RMSNorm" not in _fused_ops(_model(nodes, inits, [1, 16, 64], [1, 16, 64]))


def _tanh_gelu_nodes(cube: str = "three"):
    nodes = [helper.make_node("Mul", ["x", "half"], ["hx"]), helper.make_node("Pow", ["x", cube], ["p"]),
             helper.make_node("Mul", ["p", "k"], ["pk"]), helper.make_node("Add", ["x", "pk"], ["s"]),
             helper.make_node("Mul", ["c", "s"], ["sc"]), helper.make_node("Tanh", ["sc"], ["t"]),
             helper.make_node("Add", ["one", "t"], ["t1"]), helper.make_node("Mul", ["hx", "t1"], ["y"])]
    inits = {"half": np.float32(0.5), "three": np.float32(3), "two": np.float32(2), "k": np.float32(0.044715),
             "c": np.float32(np.sqrt(2 / np.pi)), "one": np.float32(1)}
    return nodes, inits


def test_tanh_gelu_in_either_operand_order_becomes_gelu_and_matches_onnxruntime():
    from onnx2ttnn import convert
    from onnx2ttnn.verify import verify

    model = _model(*_tanh_gelu_nodes(), [2, 64], [2, 64])
    assert _fused_ops(model) == ["Gelu"]
    assert "variant=ttnn.GeluVariant.Tanh" in convert(model).source
    report = verify(model)
    assert report.passed, report.text()


def test_a_square_instead_of_the_cube_is_not_tanh_gelu():
    assert "Gelu" not in _fused_ops(_model(*_tanh_gelu_nodes("two"), [2, 64], [2, 64]))
