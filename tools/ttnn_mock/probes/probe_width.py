"""Check the width-sharding facts of the op table (onnx2ttnn/ir/ttnn_ops: OpInfo.width) on the real ttnn.

For every op with width facts and each shape below, in the planner's own width-sharded layout
(width_shard_layout): unary ops from width-sharded, interleaved L1 and DRAM inputs into a width-sharded
output; binary ops with the other operand width-sharded, L1, DRAM or a broadcast row; to_memory_config both
ways, to_torch, deallocate.  Prints AGREE/DISAGREE per call and `width facts: N agree, M disagree`.
    bash tools/ttnn_mock/probes/run_probe.sh probe_width.py [--sample]      (results/width.txt)
"""
import sys

from _common import *

converter_ir_on_path()
from onnx2ttnn.ir.layout import TTNNLayout  # noqa: E402
from onnx2ttnn.ir.placements import width_shard_layout  # noqa: E402
from onnx2ttnn.ir.ttnn_ops import OPS  # noqa: E402

SHAPES = [(1, 1, 64, 2048), (1, 128, 768), (1, 1, 49, 1280), (1, 1, 32, 320)]
SAMPLE_OPS = ("relu", "gelu", "add", "multiply", "to_memory_config", "to_torch")
sample = "--sample" in sys.argv
shapes = SHAPES[1:3] if sample else SHAPES
agree = disagree = 0


def memory_config(shape):
    return shard_memory_config(width_shard_layout(shape, TTNNLayout(), 8, 8))


def check(name, fn, expect_sharded=None):
    global agree, disagree
    try:
        out = fn()
        ok = expect_sharded is None or not isinstance(out, ttnn.Tensor) or (
            out.memory_config().memory_layout == (ttnn.TensorMemoryLayout.WIDTH_SHARDED if expect_sharded
                                                  else ttnn.TensorMemoryLayout.INTERLEAVED))
        text = desc(out)
    except Exception as e:  # noqa: BLE001
        ok, text = False, f"{type(e).__name__}: {errtext(e, 2)}"
    agree += ok
    disagree += not ok
    print(f"{'AGREE' if ok else 'DISAGREE':8} {name}: {text}", flush=True)


d = open_dev()
for shape in shapes:
    M = memory_config(shape)
    x, xi, xd = dev(d, shape, mc=M), dev(d, shape, mc=L1), dev(d, shape, mc=DR)
    row = dev(d, (1,) * (len(shape) - 1) + (shape[-1],), mc=DR)
    for op, info in OPS.items():
        facts = info.width
        if facts is None or (sample and op not in SAMPLE_OPS):
            continue
        form = facts.probe
        tag = f"{list(shape)}"
        if form == "unary":
            fn = getattr(ttnn, op)
            for src, t in (("WS", x), ("L1", xi), ("DRAM", xd)):
                check(f"{op}({src}) -> WS {tag}", lambda: fn(t, memory_config=M), True)
            check(f"{op}(WS) -> L1 {tag}", lambda: fn(x, memory_config=L1), False)
        elif form == "binary":
            fn = getattr(ttnn, op)
            for src, t in (("WS", x), ("L1", xi), ("DRAM", xd), ("row", row)):
                check(f"{op}(WS, {src}) -> WS {tag}", lambda: fn(x, t, memory_config=M), True)
            check(f"{op}(L1, WS) -> WS {tag}", lambda: fn(xi, x, memory_config=M), True)
        elif form == "to_memory_config":
            check(f"to_memory_config(L1 -> WS) {tag}", lambda: ttnn.to_memory_config(xi, M), True)
            check(f"to_memory_config(DRAM -> WS) {tag}", lambda: ttnn.to_memory_config(xd, M), True)
            check(f"to_memory_config(WS -> L1) {tag}", lambda: ttnn.to_memory_config(x, L1), False)
        elif form == "to_torch":
            check(f"to_torch(WS) {tag}", lambda: ttnn.to_torch(x).shape)
        elif form == "deallocate":
            y = ttnn.relu(x, memory_config=M)
            check(f"deallocate(WS) {tag}", lambda: ttnn.deallocate(y))
        elif form == "from_torch":
            check(f"from_torch -> WS {tag}", lambda: dev(d, shape, mc=M), True)
print(f"width facts: {agree} agree, {disagree} disagree", flush=True)
ttnn.close_device(d)
sys.stdout.flush()
os._exit(0 if disagree == 0 else 1)
