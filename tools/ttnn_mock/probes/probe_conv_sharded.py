"""conv2d reading a height-sharded L1 input in the planner's own layout (ir/placements.py height_shard_layout).

The fact the auto planner relies on (the op table's conv2d height facts, ir/ttnn_ops/conv_pool.py):
ttnn.conv2d accepts its input_tensor height-sharded over the planner's grid (uneven splits included) and,
with memory_config=DRAM_MEMORY_CONFIG, writes DRAM interleaved as from an interleaved input.  Convolutions of
the shapes ResNet-50 and MobileNetV2 have at 224x224: 1x1, 3x3, depthwise (groups = channels), stride 2.
Prints AGREE/DISAGREE per call and `conv_sharded: N agree, M disagree`.
    bash tools/ttnn_mock/probes/run_probe.sh probe_conv_sharded.py     (results/conv_sharded.txt)
"""
import os
import sys

from _common import *
from probe_conv_helpers import conv

converter_ir_on_path()

# (H, W, C, OC, k, stride, groups)
CASES = [(28, 28, 32, 192, 1, 1, 1), (56, 56, 24, 144, 1, 1, 1), (14, 14, 64, 384, 1, 1, 1),
         (56, 56, 256, 64, 1, 1, 1), (56, 56, 256, 128, 1, 2, 1), (28, 28, 512, 128, 1, 1, 1),
         (14, 14, 1024, 256, 1, 1, 1), (7, 7, 2048, 512, 1, 1, 1), (56, 56, 64, 64, 3, 1, 1),
         (28, 28, 144, 144, 3, 1, 144), (14, 14, 96, 96, 3, 2, 96), (7, 7, 160, 960, 1, 1, 1),
         (7, 7, 512, 512, 1, 1, 1), (7, 7, 1024, 512, 1, 1, 1), (7, 7, 512, 512, 3, 1, 1), (14, 14, 256, 256, 3, 1, 1),
         (28, 28, 128, 128, 3, 1, 1), (7, 7, 960, 160, 1, 1, 1), (7, 7, 960, 320, 1, 1, 1), (14, 14, 576, 96, 1, 1, 1),
         (7, 7, 320, 1280, 1, 1, 1), (14, 14, 1024, 512, 1, 2, 1), (28, 28, 512, 256, 1, 2, 1),
         (7, 7, 960, 960, 3, 1, 960), (112, 112, 32, 32, 3, 1, 32), (112, 112, 96, 96, 3, 2, 96)]
if "--sample" in sys.argv:
    CASES = CASES[:2]
agree = disagree = 0


d = open_dev()
for H, W, C, OC, k, s, g in CASES:
    shape = (1, 1, H * W, C)
    layout, M = planner_height_sharded(shape)
    x = ttnn.to_memory_config(dev(d, shape, mc=DR), M)
    tag = (f"{k}x{k}/{s} g={g} {C}->{OC} {H}x{W} in {layout.grid[0]}x{layout.grid[1]} "
           f"shard={layout.shard[0]}x{layout.shard[1]}")
    try:
        out = conv(d, x, C, OC, 1, H, W, k=k, stride=s, padding=(k // 2, k // 2), groups=g, memory_config=DR)
        ok = (out.memory_config().buffer_type == ttnn.BufferType.DRAM
              and out.memory_config().memory_layout == ttnn.TensorMemoryLayout.INTERLEAVED
              and x.is_allocated())
        text = desc(out) + ("" if x.is_allocated() else " (input was deallocated)")
        ttnn.deallocate(out)
    except Exception as e:  # noqa: BLE001
        ok, text = False, f"{type(e).__name__}: {errtext(e, 2)}"
    agree += ok
    disagree += not ok
    print(f"{'AGREE' if ok else 'DISAGREE':8} conv2d(HS) -> DRAM {tag}: {text}", flush=True)
    if x.is_allocated():
        ttnn.deallocate(x)
print(f"conv_sharded: {agree} agree, {disagree} disagree", flush=True)
ttnn.close_device(d)
sys.stdout.flush()
os._exit(0 if disagree == 0 else 1)
