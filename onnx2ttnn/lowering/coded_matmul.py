"""The fused CodedMatMul (fusion/coded_matmul.py): two activations' codes multiplied, their scales applied after.

Each operand becomes its codes in two calls, as a quantize-dequantize pair's value does (lowering/quantize.py):
`divide(x, s)`, then a multiply by 1 whose input activations round and clamp (the pair's own multiply is by s);
then the float MatMul rule on the codes, and one multiply by s_a * s_b (computed on the host in float32).  One
call more than the two pairs and the MatMul, which buys operands the matrix engine reads whole (docs/design.md
§6.40).  In a tensor-parallel program the operands stay the pairs' values and nothing is multiplied after (the
split of lowering's output pairs linears that read each other, §6.34); the numbers are the unfused chain's.
"""
from __future__ import annotations

import numpy as np
import onnx_graphsurgeon as gs

from onnx2ttnn.ir.graph import FUSED_DOMAIN, TTNNCall, TTNNRef
from onnx2ttnn.lowering.context import LoweringContext
from onnx2ttnn.lowering.quantize_operators import float_tensor, helper_node, run_float_rule
from onnx2ttnn.lowering.registry import register


@register("CodedMatMul", versions=(1,), domain=FUSED_DOMAIN, ttnn=("divide", "multiply", "matmul"),
          note="fused MatMul of two quantize-dequantize pairs (float32 programs): codes multiplied, scales after")
def coded_matmul(ctx: LoweringContext, node: gs.Node) -> None:
    xa, sa, xb, sb = node.inputs[:4]
    out = node.outputs[0]
    scales = [float(np.asarray(ctx.require_constant(s, "CodedMatMul scale"), np.float32).reshape(-1)[0])
              for s in (sa, sb)]
    codes = ctx.tp == 1
    operands = [_operand(ctx, x, s, node.attrs[f"low_{k}"], node.attrs[f"high_{k}"], f"{out.name}_{k}", codes)
                for x, s, k in ((xa, scales[0], "a"), (xb, scales[1], "b"))]
    product = float_tensor(f"{out.name}_codes_product", out.shape) if codes else out
    run_float_rule(ctx, "MatMul", 13, helper_node("MatMul", {}, operands, [product]))
    if codes:
        scale = float(np.float32(scales[0]) * np.float32(scales[1]))
        var = ctx.value(product)
        ctx.bind(out, ctx.op("multiply", [var], var.shape, name=out.name, input_tensor_b=scale))


def _operand(ctx: LoweringContext, x: gs.Tensor, s: float, low: float, high: float, name: str,
             codes: bool) -> gs.Tensor:
    """x's codes (`codes`), or its quantize-dequantize value, as an ONNX-level tensor bound to the result."""
    var, form = ctx.value_with_form(x)
    q = ctx.op("divide", [var], var.shape, name=name + "_scaled", input_tensor_b=s)
    clamp = [TTNNCall("UnaryWithParam", TTNNRef("UnaryOpType.ROUND"), 0.0),
             TTNNCall("UnaryWithParam", TTNNRef("UnaryOpType.HARDTANH"), float(low), float(high))]
    result = float_tensor(name + ("_codes" if codes else "_value"), var.shape)
    ctx.bind(result, ctx.op("multiply", [q], q.shape, name=result.name, input_tensor_b=1.0 if codes else s,
                            input_tensor_a_activations=clamp), form)
    return result
