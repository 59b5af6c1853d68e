"""fold-dequantize: a DequantizeLinear of a constant (a quantized weight or bias) becomes its float value.

Reads: DequantizeLinear nodes whose input, scale and zero point are constants (QDQ models store weights as
int8 initializers, biases as int32).  Writes: a float32 constant of the same name, `(x - zero_point) *
scale` as onnxruntime computes it, in place of the node's output, and `Module.dequantized[name]`: the RMS of
the weight's quantization step, against which the rules uploading it (linear, conv2d) decide bfloat8_b or
the compute dtype (lowering/weight_dtype.py).  The scale, axis and zero point are checked as the device rule
checks them (lowering/quantize.py `qparams`): a zero or negative scale, an axis out of range or a zero point of
the wrong type is one error naming the node.
Before: `W_dq = DequantizeLinear(W_int8, s, z); y = MatMul(x, W_dq)`; after: `y = MatMul(x, W_dq)` with
`W_dq` a constant.  Runs before fold-constants, so that constant folding sees the float weight and does not
evaluate the node itself (it would, through onnxruntime, but without the check and the mark).
"""
from __future__ import annotations

import numpy as np
import onnx_graphsurgeon as gs

from onnx2ttnn.errors import ConversionError
from onnx2ttnn.ir.graph import Module, is_onnx_op
from onnx2ttnn.lowering.quantize import DEQUANT_TYPES, broadcast_param, dequantize_array, qparams, type_name
from onnx2ttnn.lowering.versions import schema_version
from onnx2ttnn.passes.base import Pass, PassContext
from onnx2ttnn.passes.fold_constants import _constant_nodes_to_tensors


class FoldDequantize(Pass):
    name = "fold-dequantize"

    def run(self, module: Module, ctx: PassContext) -> None:
        graph = module.graph
        _constant_nodes_to_tensors(graph)
        version = schema_version("", "DequantizeLinear", module.opset)
        outputs = {t.name for t in graph.outputs}
        folded = 0
        for index, node in enumerate(graph.nodes if version is not None else ()):  # (unknown: unsupported)
            if not is_onnx_op(node, "DequantizeLinear") or node.outputs[0].name in outputs:
                continue
            inputs = [t for t in node.inputs if t.name]
            if not all(isinstance(t, gs.Constant) for t in inputs) or type_name(inputs[0]) not in DEQUANT_TYPES:
                continue
            source = node.name or f"DequantizeLinear_{index}"
            x, scale = inputs[0], inputs[1]
            zero = inputs[2] if len(inputs) > 2 else None
            if zero is not None and type_name(zero) != type_name(x):
                raise ConversionError(f"node {source!r}: zero point {zero.name!r} has type {type_name(zero)}, "
                                      f"its input {x.name!r} {type_name(x)}")
            values = np.asarray(x.values)
            q = qparams(source, node, values.shape, scale, zero, np.dtype(type_name(x)),
                        axis_allowed=True, block_allowed=True)  # (one rule serves every version)
            scales = np.asarray(scale.values, dtype=np.float32)
            value = dequantize_array(values, q, scales, np.asarray(zero.values) if zero is not None else None)
            out = node.outputs[0]
            const = gs.Constant(out.name, value)
            for consumer in list(out.outputs):
                for position, t in enumerate(consumer.inputs):
                    if t is out:
                        consumer.inputs[position] = const
            node.outputs.clear()
            module.dequantized[out.name] = broadcast_param(scales, q, values.shape)
            folded += 1
        if folded:
            graph.cleanup(remove_unused_graph_inputs=False)
        module.notes[self.name] = {"folded": folded}
