"""matmul / linear reading a height-sharded input_tensor_a: which shard grids real ttnn accepts.

A sharded A makes matmul pick MatmulMultiCoreReuseProgramConfig, which asks that its output blocks divide
evenly over the cores of A's shard grid ("num_output_blocks (12) must be evenly divisible by the number of
cores in the input shard grid (16)": wav2vec2's attention scores, 12 tile rows on the planner's 8x2 grid).
Each case: A's shape, tile rows per shard, the grid; B a batched activation (L1) or a 2-D weight (DRAM).
Prints AGREE/DISAGREE against ir/placements.py matmul_reads_height_sharded and a summary line."""
import sys

from _common import *

converter_ir_on_path()
from onnx2ttnn.ir.layout import TTNNLayout  # noqa: E402
from onnx2ttnn.ir.placements import HEIGHT_SHARDED, matmul_reads_height_sharded  # noqa: E402

d = open_dev()
# (A shape, rows per shard, grid (x, y)), B: "batched" [.., K, N] in L1 or "weight" [K, N] in DRAM
CASES = [((1, 4, 79, 16), 1, (8, 2), "batched"),  # wav2vec2: 12 shards on 16 cores
         ((1, 4, 79, 16), 3, (4, 1), "batched"),  # one shard per batch
         ((1, 4, 79, 16), 6, (2, 1), "batched"),  # a shard spans two batches
         ((1, 4, 79, 16), 2, (6, 1), "batched"),  # shards cut batches (3 rows each)
         ((1, 4, 79, 16), 1, (8, 2), "weight"),
         ((1, 1, 384, 64), 1, (8, 2), "weight"),  # 12 shards on 16 cores
         ((1, 1, 384, 64), 2, (6, 1), "weight"),
         ((1, 1, 416, 64), 2, (7, 1), "weight"),  # 13 rows: the last shard holds one
         ((1, 1, 2048, 64), 1, (8, 8), "weight"),
         ((1, 1, 2048, 64), 1, (8, 8), "weight in L1")]
agree = disagree = 0
for shape, per_core, grid, kind in CASES:
    layout = TTNNLayout().with_(buffer="l1", memory_layout=HEIGHT_SHARDED, grid=grid,
                                shard=(per_core * 32, -(-shape[-1] // 32) * 32))
    mc = shard_memory_config(layout)
    name = f"matmul A{list(shape)} {per_core} rows/shard on {grid[0]}x{grid[1]}, B {kind}"
    try:
        a = dev(d, shape, mc=mc)
        if kind == "batched":
            b = dev(d, shape[:-2] + (shape[-1], 96), mc=L1)
        else:
            b = dev(d, (shape[-1], 96), mc=L1 if kind == "weight in L1" else DR)
        out = ttnn.matmul(a, b, memory_config=L1)
        ok, text = True, desc(out)
    except Exception as e:  # noqa: BLE001
        ok, text = False, f"{type(e).__name__}: {errtext(e, 3)}"
    expect = matmul_reads_height_sharded(shape, layout, b_batched=kind == "batched")
    verdict = "AGREE" if ok == expect else "DISAGREE"
    agree += verdict == "AGREE"
    disagree += verdict == "DISAGREE"
    print(f"{verdict:8} {'ok ' if ok else 'err'} {name}: {text}", flush=True)
print(f"matmul facts: {agree} agree, {disagree} disagree", flush=True)
ttnn.close_device(d)
sys.stdout.flush()
os._exit(0 if disagree == 0 else 1)
