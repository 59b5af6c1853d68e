"""choose-kernel-configs: every matmul, linear, conv, scaled_dot_product_attention, softmax and norm gets the compute kernel config its operand
formats call for.

Reads: the TTNNLayout dtype of each call's multiplied operands (matmul / linear: input_tensor_a and b; conv2d /
conv_transpose2d: the input and the weights, in the Conv2dConfig's weights_dtype when it names one, else in
their own; scaled_dot_product_attention: q, k and v, a matrix kernel like matmul's; softmax and the norms:
the input), the op table's `kernel_config` keyword (ir/ttnn_ops), a call's `_float_dest` attribute (a QDQ
linear on int8 codes, lowering/weight_codes.py: HiFi4 and a float32 dest whatever its formats; a conv asked
for a float32 result: a float32 dest), and Options.math_fidelity (auto, or one fidelity forced on every call).  Writes: that keyword's argument
(`compute_kernel_config`, conv: `compute_config`) as an ir/kernel_config.KernelConfig, chosen by
ir/kernel_config.choose; the emitter defines each distinct config once at the top of the program.
Must already hold: assign-layouts and decompose-layouts ran (operand dtypes are final).
Before: `y = ttnn.linear(x, params['w'])` with `w: tile<bfp8>`;
after: `ttnn.linear(x, params['w'], compute_kernel_config=hifi2_l1_acc)` (hifi2_l1_acc defined once above forward).
"""
from __future__ import annotations

from typing import Iterator

import onnx_graphsurgeon as gs

from onnx2ttnn.ir.graph import Module, layout_of
from onnx2ttnn.ir.kernel_config import CONV, MATRIX, REDUCTION, choose, forced_fidelity
from onnx2ttnn.ir.weight_bytes import prepared_weights_format
from onnx2ttnn.ir.ttnn_ops import Cost, op_info
from onnx2ttnn.passes.base import Pass, PassContext


class ChooseKernelConfigs(Pass):
    name = "choose-kernel-configs"

    def run(self, module: Module, ctx: PassContext) -> None:
        forced = forced_fidelity(ctx.options.math_fidelity)
        chosen: dict[str, int] = {}
        for node in module.graph.nodes:
            keyword = op_info(node.op).kernel_config
            if keyword is None:
                continue
            config = choose(kernel_kind(node), operand_formats(node), forced,
                            fp32_dest=bool(node.attrs.get("_float_dest")))
            node.attrs[keyword] = config
            chosen[config.identifier] = chosen.get(config.identifier, 0) + 1
        module.notes[self.name] = {"calls": dict(sorted(chosen.items()))}


def kernel_kind(node: gs.Node) -> str:
    """MATRIX or CONV for the matrix-engine products (the op table's cost class; SDPA's two matmuls are MATRIX),
    else REDUCTION."""
    cost = op_info(node.op).cost
    return MATRIX if cost in (Cost.MATRIX, Cost.ATTENTION) else CONV if cost == Cost.CONV else REDUCTION


def operand_formats(node: gs.Node) -> Iterator[str]:
    """The storage dtypes (layout names) of the operands this call multiplies."""
    attention = op_info(node.op).cost == Cost.ATTENTION
    multiplied = node.inputs[:1] if kernel_kind(node) == REDUCTION else node.inputs[:3 if attention else 2]
    weights_dtype = prepared_weights_format(node)
    for index, tensor in enumerate(multiplied):
        if index == 1 and weights_dtype is not None:
            yield weights_dtype
            continue
        layout = layout_of(tensor)
        if layout is not None:
            yield layout.dtype
