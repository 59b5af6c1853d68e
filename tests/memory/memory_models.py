"""Tiny models for the memory planner's tests, built inline, and a helper that runs the whole pipeline."""
from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from onnx2ttnn.frontend.importer import import_model
from onnx2ttnn.ir.graph import layout_of
from onnx2ttnn.options import Options
from onnx2ttnn.passes.base import PassContext
from onnx2ttnn.passes.pipeline import PassManager, build_pipeline


def chain(shape, ops=("Relu", "Exp", "Sigmoid")) -> onnx.ModelProto:
    """x -> op -> op -> ... -> y, every tensor of `shape`."""
    names = ["x"] + [f"t{i}" for i in range(len(ops) - 1)] + ["y"]
    nodes = [helper.make_node(op, [names[i]], [names[i + 1]]) for i, op in enumerate(ops)]
    graph = helper.make_graph(nodes, "chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape))],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, list(shape))])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def layer_norm_model(shape=(1, 2048, 64)) -> onnx.ModelProto:
    """Relu -> LayerNormalization -> Relu: layer_norm refuses a height-sharded input (ir/placements.py)."""
    scale = numpy_helper.from_array(np.ones(shape[-1], np.float32), "g")
    bias = numpy_helper.from_array(np.zeros(shape[-1], np.float32), "b")
    nodes = [helper.make_node("Relu", ["x"], ["r"]),
             helper.make_node("LayerNormalization", ["r", "g", "b"], ["n"], axis=-1),
             helper.make_node("Relu", ["n"], ["y"])]
    graph = helper.make_graph(nodes, "ln", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape))],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, list(shape))], [scale, bias])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def conv_model(two_readers: bool, side=56, channels=32, kernel=9) -> onnx.ModelProto:
    """Conv whose output is read by Sigmoid and, with two_readers, also by an Add with the Sigmoid's result.
    Its default 9x9 kernel keeps it on conv2d's DRAM path (ir/placements.py): its output is DRAM-only."""
    rng = np.random.default_rng(0)
    w = numpy_helper.from_array(rng.standard_normal((channels, channels, kernel, kernel)).astype(np.float32)
                                * 0.2 / kernel, "w")
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], kernel_shape=[kernel, kernel], pads=[kernel // 2] * 4)]
    if two_readers:
        nodes += [helper.make_node("Sigmoid", ["c"], ["r"]), helper.make_node("Add", ["c", "r"], ["y"])]
    else:
        nodes += [helper.make_node("Sigmoid", ["c"], ["y"])]
    shape = [1, channels, side, side]
    graph = helper.make_graph(nodes, "conv", [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)], [w])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def shared_weight_model(side: int) -> onnx.ModelProto:
    """Two MatMuls reading the same side x side weight."""
    w = numpy_helper.from_array(np.ones((side, side), np.float32), "w")
    nodes = [helper.make_node("MatMul", ["x", "w"], ["h"]), helper.make_node("Relu", ["h"], ["r"]),
             helper.make_node("MatMul", ["r", "w"], ["y"])]
    graph = helper.make_graph(nodes, "shared", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [32, side])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [32, side])], [w])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def run_pipeline(model, memory="auto", device=None, passes=None, **options):
    """The module after the pipeline (or its passes up to and including the one named `passes`); `options`: other
    Options fields."""
    ctx = PassContext(Options(memory=memory, **options), device=device)
    module = import_model(model, {})
    pipeline = build_pipeline()
    if passes is not None:
        pipeline = pipeline[:[p.name for p in pipeline].index(passes) + 1]
    PassManager(pipeline).run(module, ctx)
    return module, ctx


def placed(module, op):
    """The output layouts of every node of `op`, in schedule order."""
    return [layout_of(n.outputs[0]) for n in module.graph.nodes if n.op == op]
