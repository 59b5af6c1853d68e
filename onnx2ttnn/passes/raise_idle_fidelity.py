"""raise-idle-fidelity: a block-float conv whose matrix engine would idle at HiFi4 anyway runs at HiFi4.

Reads: each conv2d / conv_transpose2d call's compute_config (choose-kernel-configs: LoFi for bfloat4_b
weights, HiFi2 for bfloat8_b), the placed layouts (place-memory, insert-moves: final), the cost model
(ir/cost.node_cost) and Options.math_fidelity (auto only; a forced fidelity is left as asked).
Writes: that call's compute_config at HiFi4 (its accumulation unchanged) where the cost model says the call is
not compute-bound at HiFi4, so its modelled time is the same as at the faster fidelity; the pass notes count
the calls raised and kept.
Must already hold: choose-kernel-configs, place-memory and insert-moves ran.
Why: LoFi and HiFi2 read 6 of a bfloat16 activation's 7 mantissa bits (SrcB, ir/kernel_config.py), and dropping
a bit truncates: every such call scales its result by about 1 - 2^-8 / (2 ln 2) = 0.9972, a gain, not noise,
that compounds over layers and through folded batch norms' biases becomes per-channel offsets (SLANet: 39
convs at -0.30 % each flipped its table decoder's greedy token, docs/design.md §6.42). Where the call is bound
by DRAM or L1 traffic the faster fidelity buys nothing, and HiFi4 reads every bit. Matmuls and linears keep
their fidelity: at HiFi3/4 they take a float32 dest, which changes their program configs (choose-program-configs).
Before: `ttnn.conv2d(..., conv_config=ttnn.Conv2dConfig(weights_dtype=ttnn.bfloat8_b), compute_config=hifi2)`;
after (a memory-bound conv): `..., compute_config=hifi4)`.
"""
from __future__ import annotations

from dataclasses import replace

from onnx2ttnn.ir.cost import node_cost
from onnx2ttnn.ir.graph import Module
from onnx2ttnn.ir.kernel_config import CONV, KernelConfig
from onnx2ttnn.ir.ttnn_ops import op_info
from onnx2ttnn.passes.base import Pass, PassContext
from onnx2ttnn.passes.choose_kernel_configs import kernel_kind

TRUNCATING = ("LoFi", "HiFi2")  # the fidelities that read fewer than 7 bits of SrcB (the activation)


class RaiseIdleFidelity(Pass):
    name = "raise-idle-fidelity"

    def run(self, module: Module, ctx: PassContext) -> None:
        if ctx.options.math_fidelity != "auto":
            return
        raised, kept = self._plan(module, ctx)
        for node, config in raised:
            node.attrs[op_info(node.op).kernel_config] = config
        module.notes[self.name] = {"raised": len(raised), "kept": kept}

    @staticmethod
    def _plan(module: Module, ctx: PassContext) -> tuple[list, int]:
        """(conv, its HiFi4 config) for each truncating conv not compute-bound at HiFi4, and how many are."""
        raised, kept = [], 0
        for index, node in enumerate(module.graph.nodes):
            keyword = op_info(node.op).kernel_config
            config = node.attrs.get(keyword) if keyword and kernel_kind(node) == CONV else None
            if not isinstance(config, KernelConfig) or config.math_fidelity not in TRUNCATING:
                continue
            precise = replace(config, math_fidelity="HiFi4")
            if _bound_at(node, keyword, precise, ctx, index) == "compute":
                kept += 1
            else:
                raised.append((node, precise))
        return raised, kept


def _bound_at(node, keyword: str, config: KernelConfig, ctx: PassContext, index: int) -> str:
    """What bounds the call's modelled time with `config` in place of its own (its own is restored)."""
    own = node.attrs[keyword]
    node.attrs[keyword] = config
    try:
        return node_cost(node, ctx.device, index).bound
    finally:
        node.attrs[keyword] = own
