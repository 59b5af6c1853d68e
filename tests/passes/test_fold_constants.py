"""fold-constants: the Shape -> Gather -> Concat -> Reshape chains exporters write become constants."""
from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from onnx2ttnn.frontend.importer import import_model
from onnx2ttnn.options import Options
from onnx2ttnn.passes.base import PassContext
from onnx2ttnn.passes.fold_constants import FoldConstants


def _shape_chain_model() -> onnx.ModelProto:
    nodes = [
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("Gather", ["s", "zero"], ["n"], axis=0),
        helper.make_node("Unsqueeze", ["n", "axes"], ["n1"]),
        helper.make_node("Concat", ["n1", "minus_one"], ["target"], axis=0),
        helper.make_node("Reshape", ["x", "target"], ["y"]),
    ]
    inits = [numpy_helper.from_array(np.array(0, np.int64), "zero"),
             numpy_helper.from_array(np.array([0], np.int64), "axes"),
             numpy_helper.from_array(np.array([-1], np.int64), "minus_one")]
    graph = helper.make_graph(nodes, "chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, 4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_shape_chain_folds_to_a_constant_reshape():
    module = import_model(_shape_chain_model(), {"x": (2, 3, 4)})
    FoldConstants().run(module, PassContext(Options()))
    ops = [n.op for n in module.graph.nodes]
    assert ops == ["Reshape"]
    target = module.graph.nodes[0].inputs[1]
    assert list(np.asarray(target.values)) == [2, -1]
    assert tuple(module.graph.nodes[0].outputs[0].shape) == (2, 12)


def _fold(text: str, shapes=None):
    """The graph of the ONNX text model after import and fold-constants."""
    module = import_model(onnx.parser.parse_model(text), shapes or {})
    FoldConstants().run(module, PassContext(Options()))
    return module.graph


def test_range_of_size_gives_reduce_axes_and_a_static_output_shape():
    graph = _fold("""
        <ir_version: 8, opset_import: ["" : 18]>
        g (float[3, 4] x) => (float[3, 4] y) {
            s = Shape(x)
            rank = Size(s)
            zero = Constant<value = int64 {0}>()
            one = Constant<value = int64 {1}>()
            axes = Range(zero, rank, one)
            m = ReduceMean(x, axes)
            y = Sub(x, m)
        }""")
    assert [n.op for n in graph.nodes] == ["ReduceMean", "Sub"]
    assert list(np.asarray(graph.nodes[0].inputs[1].values)) == [0, 1]
    assert tuple(graph.nodes[0].outputs[0].shape) == (1, 1)


def test_shape_with_start_and_end_folds_to_the_slice_of_the_shape():
    graph = _fold("""
        <ir_version: 8, opset_import: ["" : 18]>
        g (float[3, 4, 2, 2] x) => (float[3, 2, 8] y) {
            c = Shape<start = 1, end = 2>(x)
            n = Shape<start = 0, end = 1>(x)
            groups = Constant<value = int64[1] {2}>()
            size = Div(c, groups)
            minus = Constant<value = int64[1] {-1}>()
            target = Concat<axis = 0>(n, groups, minus)
            y = Reshape(x, target)
        }""")
    assert [n.op for n in graph.nodes] == ["Reshape"]
    assert list(np.asarray(graph.nodes[0].inputs[1].values)) == [3, 2, -1]
    assert tuple(graph.nodes[0].outputs[0].shape) == (3, 2, 8)


def test_symbolic_shapes_become_static_after_folding():
    graph = _fold("""
        <ir_version: 8, opset_import: ["" : 18]>
        g (float[2, 6] x) => (float[a, b, c] y) {
            c = Shape<start = 1>(x)
            three = Constant<value = int64[1] {3}>()
            half = Div(c, three)
            n = Shape<end = 1>(x)
            target = Concat<axis = 0>(n, three, half)
            r = Reshape(x, target)
            y = Relu(r)
        }""")
    assert tuple(graph.nodes[-1].outputs[0].shape) == (2, 3, 2)


def test_if_with_a_constant_condition_is_replaced_by_its_branch():
    graph = _fold("""
        <ir_version: 8, opset_import: ["" : 18]>
        g (float[4] x, int64[4] size) => (float[4] y, float[4] z) {
            n = Size(size)
            four = Constant<value = int64 {4}>()
            cond = Equal(n, four)
            y, z = If(cond) <
                then_branch = then_g () => (float[4] a, float[4] x) { a = Relu(x) },
                else_branch = else_g () => (float[4] b, float[4] c) { b = Neg(x)  c = Neg(b) }
            >
        }""")
    ops = [n.op for n in graph.nodes]
    assert ops == ["Relu", "Identity"]  # the second output is the outer x itself, copied by an Identity
    relu, identity = graph.nodes
    assert relu.inputs[0].name == "x" and relu.outputs[0].name == "y"
    assert identity.inputs[0].name == "x" and identity.outputs[0].name == "z"
    names = [t.name for t in graph.tensors().values()]
    assert len(names) == len(set(names))


def test_inlined_branch_outputs_read_inside_the_branch_stay_connected():
    graph = _fold("""
        <ir_version: 8, opset_import: ["" : 18]>
        g (float[4] x) => (float[4] y, float[4] z) {
            cond = Constant<value = bool {1}>()
            y, z = If(cond) <
                then_branch = then_g () => (float[4] a, float[4] b) { a = Relu(x)  b = Neg(a) },
                else_branch = else_g () => (float[4] c, float[4] d) { c = Neg(x)  d = Neg(c) }
            >
        }""")
    relu, neg = graph.nodes
    assert relu.outputs[0].name == "y" and neg.inputs[0] is relu.outputs[0] and neg.outputs[0].name == "z"


def test_constant_of_shape_and_range_of_scalars_fold():
    graph = _fold("""
        <ir_version: 8, opset_import: ["" : 18]>
        g (float[2, 3] x) => (float[2, 3] y) {
            shape = Constant<value = int64[2] {2, 3}>()
            ones = ConstantOfShape<value = float[1] {1.0}>(shape)
            zero = Constant<value = int64 {0}>()
            three = Constant<value = int64 {3}>()
            one = Constant<value = int64 {1}>()
            steps = Range(zero, three, one)
            f = Cast<to = 1>(steps)
            row = Add(ones, f)
            y = Mul(x, row)
        }""")
    assert [n.op for n in graph.nodes] == ["Mul"]
    np.testing.assert_array_equal(np.asarray(graph.nodes[0].inputs[1].values), [[1, 2, 3], [1, 2, 3]])


def test_shapes_are_reinferred_around_large_constants_which_stay_constants():
    w = numpy_helper.from_array(np.ones((64, 64), np.float32), "w")  # above the shape-operand size limit
    nodes = [helper.make_node("Shape", ["x"], ["s"]), helper.make_node("Size", ["s"], ["rank"]),
             helper.make_node("Range", ["zero", "rank", "one"], ["axes"]),
             helper.make_node("MatMul", ["x", "w"], ["m"]), helper.make_node("ReduceMean", ["m", "axes"], ["y"])]
    inits = [w, numpy_helper.from_array(np.array(0, np.int64), "zero"),
             numpy_helper.from_array(np.array(1, np.int64), "one")]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 64])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    module = import_model(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)]), {})
    FoldConstants().run(module, PassContext(Options()))
    matmul, mean = module.graph.nodes
    assert np.asarray(matmul.inputs[1].values).shape == (64, 64)
    assert tuple(mean.outputs[0].shape) == (1, 1)


def test_onnxruntime_logs_nothing_while_folding(capfd):
    """onnxruntime writes its log records to file descriptor 2 from C++: folding two Unsqueezes of one
    initializer made it print `[W:onnxruntime:, unsqueeze_elimination.cc:24 Apply] UnsqueezeElimination cannot
    remove node` twice, in colour, on a conversion that succeeds."""
    graph = _fold("""
        <ir_version: 8, opset_import: ["" : 17]>
        g (float[1, 4] x) => (float[1, 4] y) <float[4] c = {0.0, 1.0, 2.0, 3.0}, int64[1] ax = {0}> {
            u1 = Unsqueeze(c, ax)
            u2 = Unsqueeze(c, ax)
            s = Add(u1, u2)
            y = Add(x, s)
        }
    """)
    assert [n.op for n in graph.nodes] == ["Add"]
    captured = capfd.readouterr()
    assert "onnxruntime" not in captured.err + captured.out, captured.err


def test_onnxruntime_logs_again_after_folding(capfd):
    """The quiet block ends with the pass: a session the user opens later logs at onnxruntime's default level."""
    import onnxruntime

    test_onnxruntime_logs_nothing_while_folding(capfd)
    model = onnx.parser.parse_model("""
        <ir_version: 8, opset_import: ["" : 17]>
        g () => (float[1, 4] u1, float[1, 4] u2) <float[4] c = {0.0, 1.0, 2.0, 3.0}, int64[1] ax = {0}> {
            u1 = Unsqueeze(c, ax)
            u2 = Unsqueeze(c, ax)
        }
    """)  # the constant subgraph graphsurgeon hands onnxruntime
    onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    assert "UnsqueezeElimination" in capfd.readouterr().err


def test_shape_start_folds_to_the_slice_when_built_by_onnx_helper():
    # onnx.helper leaves the node's domain unset (graphsurgeon: None); the evaluation took only "" and folding
    # fell to graphsurgeon, which ignores start: Shape(start=1) of [3, 4, 5] became [3, 4, 5], not [4, 5]
    nodes = [helper.make_node("Shape", ["x"], ["s"], start=1), helper.make_node("Size", ["x"], ["n"]),
             helper.make_node("Cast", ["s"], ["y"], to=TensorProto.FLOAT),
             helper.make_node("Cast", ["n"], ["z"], to=TensorProto.FLOAT)]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 4, 5])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2]),
                               helper.make_tensor_value_info("z", TensorProto.FLOAT, [])])
    module = import_model(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)]), {})
    FoldConstants().run(module, PassContext(Options()))
    outputs = {t.name: np.asarray(t.values).tolist() for t in module.graph.outputs}
    assert outputs == {"y": [4.0, 5.0], "z": 60.0}


def test_shapes_after_a_contrib_op_are_reinferred_once_its_shape_operands_fold():
    """onnxruntime gives a contrib op's output its shape (frontend/shapes.py); ONNX inference cannot rebuild it,
    so re-inference after folding keeps it, and a Reshape whose target was computed from that output's shape
    gets a static shape (ddddocr's int8 recognizer: a Reshape after its DynamicQuantizeLSTM kept none, and the
    MatMulInteger reading it failed with an internal error)."""
    nodes = [
        helper.make_node("Gelu", ["x"], ["g"], domain="com.microsoft"),
        helper.make_node("Shape", ["g"], ["s"]),
        helper.make_node("Gather", ["s", "zero"], ["n"], axis=0),
        helper.make_node("Unsqueeze", ["n", "axes"], ["n1"]),
        helper.make_node("Concat", ["n1", "minus_one"], ["target"], axis=0),
        helper.make_node("Reshape", ["g", "target"], ["r"]),
        helper.make_node("Relu", ["r"], ["y"]),
    ]
    inits = [numpy_helper.from_array(np.array(0, np.int64), "zero"),
             numpy_helper.from_array(np.array([0], np.int64), "axes"),
             numpy_helper.from_array(np.array([-1], np.int64), "minus_one")]
    graph = helper.make_graph(nodes, "contrib", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                    helper.make_opsetid("com.microsoft", 1)])
    module = import_model(model, {})
    FoldConstants().run(module, PassContext(Options()))
    tensors = module.graph.tensors()
    assert tuple(tensors["g"].shape) == (2, 3, 4)
    assert tuple(tensors["r"].shape) == (2, 12)
    assert tuple(tensors["y"].shape) == (2, 12)
