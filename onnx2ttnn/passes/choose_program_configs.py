"""choose-program-configs: every matmul and linear reading a height- or width-sharded input_tensor_a gets the
program config its shapes and shard grid call for; every scaled_dot_product_attention gets the SDPAProgramConfig
its shapes call for (ir/sdpa_config.choose: q / k chunk sizes on the device grid).

Reads: the TTNNLayout of each matmul / linear's input_tensor_a (placed by place-memory and insert-moves), the
shapes of both operands, the L1 the planner keeps free at every op (memory/budget.scratch_reserve: the
config's circular buffers must fit it), and the compute_kernel_config choose-kernel-configs set
(fp32_dest_acc_en halves the destination tiles a subblock may fill).  Writes: `program_config` as an
ir/program_config.ProgramConfig, chosen by ir/program_config.choose; a sharded call that gets none carries
the note `_no_program_config` (why), and module.notes["choose-program-configs"] counts both.  Interleaved
calls are left to ttnn's own choice, except that one carrying a fused `activation=` or a bias names the device's
core grid (`core_grid=ttnn.CoreGrid(y=8, x=8)` on n150): ttnn then folds them into the matmul's own program
instead of running each as a program of its own (docs/ttnn-facts.md §22, §31).  The emitter defines each distinct config once at the top of the program.
Must already hold: place-memory ran (shard layouts are final), choose-kernel-configs ran.
SDPA: `program_config` as an ir/sdpa_config.SDPAConfig whose circular buffers fit the same reserve, or the
note `_no_program_config`; counted under calls / declined like the matmul configs.
Before: `ttnn.matmul(q, k, ...)` with `q: tile<bf16> l1 height_sharded grid=4x1 shard=32x32`, k [1, 4, 16, 16];
after: `ttnn.matmul(q, k, ..., program_config=matmul_reuse_4x1_m1_n1_k1)` (a MatmulMultiCoreReuseProgramConfig
defined once above forward).
"""
from __future__ import annotations

from collections import Counter

import onnx_graphsurgeon as gs

from onnx2ttnn.ir.graph import Module, TTNNCall, layout_of
from onnx2ttnn.ir import sdpa_config
from onnx2ttnn.ir.program_config import HEIGHT, WIDTH, ProgramConfig, choose
from onnx2ttnn.ir.ttnn_ops import op_info
from onnx2ttnn.memory.budget import scratch_reserve
from onnx2ttnn.passes.base import Pass, PassContext

NO_CONFIG = "_no_program_config"  # the note a sharded call without a config carries (ir/notes.py)
SDPA = "transformer.scaled_dot_product_attention"


class ChooseProgramConfigs(Pass):
    name = "choose-program-configs"

    def run(self, module: Module, ctx: PassContext) -> None:
        chosen, declined, grids = Counter(), Counter(), 0
        grid = TTNNCall("CoreGrid", y=ctx.device.grid_y, x=ctx.device.grid_x)
        for node in module.graph.nodes:
            if node.op == SDPA:
                config = sdpa_config_for(node, (ctx.device.grid_x, ctx.device.grid_y))
                if isinstance(config, sdpa_config.SDPAConfig):
                    node.attrs["program_config"] = config
                    chosen[config.CLASS] += 1
                else:
                    node.attrs[NO_CONFIG] = config
                    declined[config] += 1
                continue
            if not op_info(node.op).program_config:
                continue
            if not is_sharded_call(node):
                if folds_epilogue(node):
                    node.attrs["core_grid"] = grid
                    grids += 1
                continue
            config = config_for(node)
            if isinstance(config, ProgramConfig):
                node.attrs["program_config"] = config
                chosen[config.kind] += 1
            else:
                node.attrs["_no_program_config"] = config
                declined[config] += 1
        module.notes[self.name] = {"calls": dict(sorted(chosen.items())), "declined": dict(sorted(declined.items())),
                                   "core_grid": grids}


def is_sharded_call(node: gs.Node) -> bool:
    """Whether the call reads a height- or width-sharded input_tensor_a (the calls that need a config)."""
    layout = layout_of(node.inputs[0]) if node.inputs else None
    return layout is not None and layout.memory_layout in (HEIGHT, WIDTH)


def folds_epilogue(node: gs.Node) -> bool:
    """Whether an interleaved call carries a fused activation or a bias, which real ttnn runs as programs of their
    own after the matmul unless the call names a program config or a core grid (tt-metal matmul.cpp
    `post_process_bias`; docs/ttnn-facts.md §22, §31: with `core_grid=` ttnn picks its own program config on
    that grid and folds both into the matmul's one program)."""
    has_bias = len(node.inputs) > 2 and node.inputs[2] is not None
    return (bool(node.attrs.get("activation")) or has_bias) and node.attrs.get("program_config") is None


def config_for(node: gs.Node):
    """The call's ProgramConfig, or why it gets none."""
    if node.attrs.get("transpose_a") or node.attrs.get("transpose_b"):
        return "a transposed operand"
    if len(node.inputs) < 2:
        return "no input_tensor_b"
    kernel = node.attrs.get("compute_kernel_config")
    fp32_dest = bool(getattr(kernel, "fp32_dest_acc_en", True))  # no config: assume the smaller register
    a, b = node.inputs[0], node.inputs[1]
    return choose(tuple(a.shape), layout_of(a), tuple(b.shape), fp32_dest, l1_limit=scratch_reserve(node.op))


def sdpa_config_for(node: gs.Node, grid: tuple[int, int]):
    """The SDPA call's SDPAConfig on the device grid, or why it gets none."""
    q, k = node.inputs[0], node.inputs[1]
    layout = layout_of(q)
    kernel = node.attrs.get("compute_kernel_config")
    fp32_dest = bool(getattr(kernel, "fp32_dest_acc_en", True))  # no config: count the larger intermediates
    return sdpa_config.choose(tuple(q.shape), tuple(k.shape), layout.dtype if layout is not None else "bf16", grid,
                              fp32_dest, l1_limit=scratch_reserve(node.op))
