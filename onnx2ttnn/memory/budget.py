"""How much L1 a memory plan may fill on each core: `usable_l1_per_core`, the one answer every policy, the
allocator replay and the report use.

    usable_l1_per_core(device)         = DeviceSpec.l1_budget_per_bank - OP_SCRATCH_RESERVE
    usable_l1_per_core(device, op)       = the same - the op's l1_reserve (op table: conv2d, conv_transpose2d,
                                                                          embedding)

Where each number comes from:
- `DeviceSpec.l1_budget_per_bank` (ir/device.py): the L1 bank size the real ttnn 0.81.1 allocator reports on
  a mock n150 (1,376,928 B) or p150 (1,444,736 B) with l1_small_size=16384 (docs/ttnn-facts.md section 0),
  times `DeviceSpec.l1_safety` = 0.95, a margin taken over from tt-mlir, not measured here.
- `OP_SCRATCH_RESERVE` = 320 KiB, left free at every op for the circular buffers ttnn ops allocate at the
  bottom of L1 while they run.  NOT MEASURED for ops without a program config: no probe has measured what
  ops other than conv2d and configured matmuls need (docs/ttnn-facts.md, "Not tested").  A matmul / linear
  with a program config is chosen so that an upper bound of its circular buffers fits this reserve
  (ir/program_config.circular_buffer_bytes; the measured needs, probe_program_configs.py and
  results/program_configs.txt, docs/ttnn-facts.md section 23).  It is the allowance the converter started with (about a quarter
  of n150's 1,308,081 B budget); every zoo program planned under it (--memory auto) runs on the mock
  device, whose real ttnn refuses a launch whose circular buffers reach an L1 tensor.
- the op table's `l1_reserve` (ir/ttnn_ops/conv_pool.py: 640 KiB for conv2d and conv_transpose2d), left
  free in addition at every convolution, so that 960 KiB
  (983,040 B) are free there.  Measured needs: ViT-B/16's 16x16/16 patch conv on its DRAM path asked
  for 892,928 B per bank of its own L1 on the mock (an out-of-memory report, recorded when the reserve was
  introduced: commit "auto: conv2d's own L1 kept free at convolutions"); the convs ir/placements.py
  admits to the all-in-L1 path need at most 532,511 B per bank beyond their input, output included
  (MobileNetV2's depthwise 3x3 over 144 channels from a height-sharded input;
  tools/ttnn_mock/probes/probe_conv_cb.py, results/conv_cb.txt).  640 KiB is the round figure that
  covers the larger of the two with the op reserve.
- embedding's `l1_reserve` (80 KiB, ir/ttnn_ops/data_movement.py): its circular buffers reached 70,545 B past
  what the op reserve leaves, on the mock n300 (docs/ttnn-facts.md §27).
"""
from __future__ import annotations

from onnx2ttnn.ir.device import DeviceSpec
from onnx2ttnn.ir.ttnn_ops import OPS

OP_SCRATCH_RESERVE = 320 * 1024  # bytes per core; not measured (module docstring)


def scratch_reserve(op: str = "") -> int:
    """Bytes per core kept free for the op's own L1 while it runs (no op: what every op may need)."""
    info = OPS.get(op)
    return OP_SCRATCH_RESERVE + ((info.l1_reserve or 0) if info is not None else 0)


def usable_l1_per_core(device: DeviceSpec, op: str = "") -> int:
    """Bytes per core that live tensors may fill while `op` runs (no op: between ops, what the allocator
    replay and the report plan against)."""
    return device.l1_budget_per_bank - scratch_reserve(op)
