"""One-node ONNX models for the lowering tests (inputs as graph inputs, the rest as initializers)."""
from __future__ import annotations

import numpy as np
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(0)


def f32(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def model(op, inputs, consts=(), attrs=None, outputs=("y",), opset=18, out_types=None, out_shape=None):
    """`outputs = op(*inputs, *consts)`; inputs: {name: shape}, consts: initializer arrays (in order)."""
    names = list(inputs) + [f"c{i}" for i in range(len(consts))]
    inits = [numpy_helper.from_array(np.asarray(v), f"c{i}") for i, v in enumerate(consts)]
    node = helper.make_node(op, names, list(outputs), **(attrs or {}))
    out_types = out_types or [TensorProto.FLOAT] * len(outputs)
    graph = helper.make_graph([node], op, [helper.make_tensor_value_info(n, TensorProto.FLOAT, s)
                                           for n, s in inputs.items()],
                              [helper.make_tensor_value_info(o, t, out_shape) for o, t in zip(outputs, out_types)], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def ttnn_ops(m, **options):
    """The ttnn op names of the converted model (no parameter uploads)."""
    from onnx2ttnn.convert import convert

    conversion = convert(m, **options)
    return [n.op for n in conversion.module.graph.nodes if not n.attrs.get("_param")]
