"""Moves out of DRAM and uneven height shards, as the auto planner emits them (onnx2ttnn/memory/moves.py).

For conv-sized activations ([1, 1, N*H*W, C] of ResNet-50 / MobileNetV2 at 224x224) in the planner's own
height-sharded layout (ir/placements.py height_shard_layout: uneven splits, e.g. 98 tile rows as 49 shards
of 2 rows on an 8x7 grid), checks on the real ttnn: to_memory_config DRAM -> L1 interleaved and DRAM -> HS,
binary add reading HS with the other operand HS, L1 or DRAM into an HS output, unary relu HS -> HS and
HS -> L1, and the way back (HS -> DRAM).  Prints AGREE/DISAGREE per call and `moves: N agree, M disagree`.
    bash tools/ttnn_mock/probes/run_probe.sh probe_moves.py      (results/moves.txt)
"""
import os
import sys

import torch

from _common import *

converter_ir_on_path()

SHAPES = [(1, 1, 12544, 64), (1, 1, 3136, 256), (1, 1, 3136, 24), (1, 1, 784, 32), (1, 1, 784, 512),
          (1, 1, 196, 1024), (1, 1, 49, 2048), (1, 1, 196, 64)]
if "--sample" in sys.argv:
    SHAPES = SHAPES[2:4]
agree = disagree = 0


def check(name, fn, expect_sharded, reference=None):
    global agree, disagree
    try:
        out = fn()
        ok = out.memory_config().memory_layout == (ttnn.TensorMemoryLayout.HEIGHT_SHARDED if expect_sharded
                                                   else ttnn.TensorMemoryLayout.INTERLEAVED)
        if ok and reference is not None:  # the mock computes nothing; the shape must survive
            ok = tuple(out.shape) == tuple(reference.shape)
        text = desc(out)
    except Exception as e:  # noqa: BLE001
        ok, text = False, f"{type(e).__name__}: {errtext(e, 2)}"
    verdict = "AGREE" if ok else "DISAGREE"
    agree += ok
    disagree += not ok
    print(f"{verdict:8} {name}: {text}", flush=True)


d = open_dev()
for shape in SHAPES:
    layout, M = planner_height_sharded(shape)
    tag = f"{list(shape)} {layout.grid[0]}x{layout.grid[1]} shard={layout.shard[0]}x{layout.shard[1]}"
    xd, xi = dev(d, shape, mc=DR), dev(d, shape, mc=L1)
    check(f"to_memory_config(DRAM -> L1) {tag}", lambda: ttnn.to_memory_config(xd, L1), False, xd)
    x = ttnn.to_memory_config(xd, M)
    check(f"to_memory_config(DRAM -> HS) {tag}", lambda: x, True, xd)
    check(f"add(HS, HS) -> HS {tag}", lambda: ttnn.add(x, x, memory_config=M), True, xd)
    check(f"add(HS, L1) -> HS {tag}", lambda: ttnn.add(x, xi, memory_config=M), True, xd)
    check(f"add(DRAM, L1) -> HS {tag}", lambda: ttnn.add(xd, xi, memory_config=M), True, xd)
    check(f"add(HS, DRAM) -> HS {tag}", lambda: ttnn.add(x, xd, memory_config=M), True, xd)
    check(f"relu(HS) -> HS {tag}", lambda: ttnn.relu(x, memory_config=M), True, xd)
    check(f"relu(HS) -> L1 {tag}", lambda: ttnn.relu(x, memory_config=L1), False, xd)
    check(f"to_memory_config(HS -> DRAM) {tag}", lambda: ttnn.to_memory_config(x, DR), False, xd)
    ttnn.deallocate(x)
    ttnn.deallocate(xd)
    ttnn.deallocate(xi)
print(f"moves: {agree} agree, {disagree} disagree", flush=True)
ttnn.close_device(d)
sys.stdout.flush()
os._exit(0 if disagree == 0 else 1)
