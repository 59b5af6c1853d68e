"""The simulator's matmul program configs: the configs ir/program_config.choose makes are accepted and change no
value; the broken ones real ttnn refused (tools/ttnn_mock/probes/results/program_configs.txt, its "refused?"
lines, the same cases) are refused."""
from __future__ import annotations

import dataclasses
import os

import pytest
import torch

from onnx2ttnn.ir.layout import TTNNLayout
from onnx2ttnn.ir.placements import height_shard_layout, width_shard_layout
from onnx2ttnn.memory.budget import OP_SCRATCH_RESERVE as RESERVE
from onnx2ttnn.ir.program_config import choose

RESULTS = os.path.join(os.path.dirname(__file__), "..", "..", "tools", "ttnn_mock", "probes", "results",
                       "program_configs.txt")
# (a shape, placement: "height" | "width" | "batch" (one batch per shard), b shape, fp32_dest_acc_en)
CASES = {
    "reduced attention": ((1, 4, 17, 16), "height", (1, 4, 16, 17), True),
    "8 heads": ((1, 8, 128, 64), "batch", (1, 8, 64, 128), True),
    "h 128x768 @ 768x768": ((1, 128, 768), "height", (768, 768), True),
    "h uneven 416 rows": ((1, 1, 416, 64), "height", (64, 96), False),
    "h 2048x64": ((1, 1, 2048, 64), "height", (64, 96), True),
    "h 3136x64": ((1, 1, 3136, 64), "height", (64, 256), False),
    "w 64x256": ((1, 64, 256), "width", (256, 512), False),
}
# the probe's BROKEN cases: (case, field overrides, the refusal's text)
BROKEN = [
    ("h 3136x64", dict(per_core_M=1, out_subblock_h=1), "shard height"),
    ("h 2048x64", dict(per_core_M=2), "shard height"),
    ("h 128x768 @ 768x768", dict(in0_block_w=5), "in0_block_w"),
    ("h 128x768 @ 768x768", dict(out_subblock_w=8, out_subblock_h=1), "destination register"),
    ("h 3136x64", dict(out_subblock_h=2, out_subblock_w=8), "destination register"),
    ("h 2048x64", dict(out_subblock_w=2), "divisible by out_subblock_w"),
    ("8 heads", dict(per_core_M=2, out_subblock_h=1), "shard height"),
    ("8 heads", dict(per_core_N=2, out_subblock_w=1), "per_core_N"),
    ("h 128x768 @ 768x768", dict(per_core_N=12, out_subblock_w=4), "per_core_N"),
]


def _layout(shape, kind) -> TTNNLayout:
    """The planner's layout of a case's input_tensor_a (the probe's `sharded`)."""
    if kind == "width":
        return width_shard_layout(shape, TTNNLayout(), 8, 8)
    batches = int(torch.tensor(shape[:-2]).prod()) if kind == "batch" else None
    return height_shard_layout(shape, TTNNLayout(), 8, 8, max_cores=batches)


def _placed(ttnn, device, shape, kind):
    layout = _layout(shape, kind)
    last = ttnn.CoreCoord(layout.grid[0] - 1, layout.grid[1] - 1)
    grid = ttnn.CoreRangeSet({ttnn.CoreRange(ttnn.CoreCoord(0, 0), last)})
    memory = ttnn.MemoryConfig(getattr(ttnn.TensorMemoryLayout, layout.memory_layout.upper()), ttnn.BufferType.L1,
                               ttnn.ShardSpec(grid, list(layout.shard), ttnn.ShardOrientation.ROW_MAJOR))
    tensor = ttnn.from_torch(torch.randn(shape), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device,
                             memory_config=memory)
    return layout, tensor


def _call(ttnn, device, name, fields=None):
    a_shape, kind, b_shape, fp32 = CASES[name]
    torch.manual_seed(0)
    layout, a = _placed(ttnn, device, a_shape, kind)
    b = ttnn.from_torch(torch.randn(b_shape), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    config = choose(a_shape, layout, b_shape, fp32_dest=fp32, l1_limit=RESERVE)
    config = dataclasses.replace(config, **(fields or {}))
    kernel = ttnn.WormholeComputeKernelConfig(math_fidelity=ttnn.MathFidelity.HiFi4, fp32_dest_acc_en=fp32)
    made = eval(repr(config), {"ttnn": ttnn})  # noqa: S307 (the program's own text)
    run = lambda **extra: ttnn.to_torch(ttnn.matmul(a, b, compute_kernel_config=kernel,  # noqa: E731
                                                    memory_config=ttnn.L1_MEMORY_CONFIG, **extra))
    return run, made


@pytest.mark.parametrize("name", sorted(CASES))
def test_chosen_configs_are_accepted_and_change_no_value(ttnn, device, name):
    run, config = _call(ttnn, device, name)
    assert torch.equal(run(program_config=config), run())


@pytest.mark.parametrize("name, fields, text", BROKEN)
def test_configs_real_ttnn_refuses_are_refused(ttnn, device, name, fields, text):
    run, config = _call(ttnn, device, name, fields)
    with pytest.raises(RuntimeError, match=text):
        run(program_config=config)


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_case_is_a_config_real_ttnn_accepted(name):
    """The chooser still makes, for each case, the config the probe saw validate (an `AGREE ok` line)."""
    a_shape, kind, b_shape, fp32 = CASES[name]
    text = repr(choose(a_shape, _layout(a_shape, kind), b_shape, fp32_dest=fp32, l1_limit=RESERVE)).replace("ttnn.", "")
    with open(RESULTS) as handle:
        accepted = [line for line in handle if line.startswith("AGREE    ok ") and "covered" in line]
    assert any(f"fp32_dest={fp32}]: {text} |" in line for line in accepted), text


def test_a_program_config_of_another_kind_is_refused(ttnn, device):
    run, _ = _call(ttnn, device, "h 2048x64")
    with pytest.raises(TypeError, match="program_config must be one of"):
        run(program_config=ttnn.WormholeComputeKernelConfig())
