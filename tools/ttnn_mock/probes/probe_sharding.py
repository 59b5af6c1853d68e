"""Check every height-sharding fact of the op table (onnx2ttnn/ir/ttnn_ops: OpInfo.height) on the real ttnn (its
maintenance probe).

For each op with height facts and each shape below, calls the op in the form its `probe` names with
height-sharded inputs at the positions the table allows (others interleaved L1 or DRAM), asking for a
height-sharded output when the table says the op writes one (from interleaved inputs too), else an
interleaved L1 output; for layer_norm also checks that a height-sharded input is refused.  Prints
`AGREE`/`DISAGREE` per call and a summary line `facts: N agree, M disagree`.
    bash tools/ttnn_mock/probes/run_probe.sh probe_sharding.py       (all facts, results/sharding.txt)
    source ~/.cache/onnx2ttnn/ttnn-mock/env.sh; $ONNX2TTNN_TTNN_MOCK_PYTHON probe_sharding.py --sample
`--sample` checks a few ops on three shapes (what tests/real_ttnn/test_placements.py runs).
"""
import math
import os
import sys

from _common import *

converter_ir_on_path()
from onnx2ttnn.ir.ttnn_ops import OPS  # noqa: E402

SHAPES = [((1, 1, 256, 64), 8), ((1, 16, 64), 1), ((1, 4, 16, 16), 4), ((1, 1, 2048, 64), 64), ((1, 1, 512, 96), 16)]
SAMPLE_OPS = ("relu", "gelu", "add", "multiply", "where", "softmax", "layer_norm", "matmul", "to_memory_config",
              "conv2d")
sample = "--sample" in sys.argv
shapes = SHAPES[:1] + SHAPES[2:4] if sample else SHAPES
ops = [op for op, info in OPS.items() if info.height is not None and (not sample or op in SAMPLE_OPS)]
agree = disagree = 0


def memory_config(shape, cores):
    """The planner's own height-sharded layout (ir/placements.py), as a ttnn.MemoryConfig."""
    return planner_height_sharded(shape, max_cores=cores)[1]


def check(name, fn, expect_ok=True, expect_sharded=None):
    global agree, disagree
    try:
        out = fn()
        ok = True
        if expect_sharded is not None and isinstance(out, ttnn.Tensor):
            ok = out.memory_config().memory_layout == (ttnn.TensorMemoryLayout.HEIGHT_SHARDED if expect_sharded
                                                       else ttnn.TensorMemoryLayout.INTERLEAVED)
        text = desc(out)
    except Exception as e:  # noqa: BLE001
        ok, text = False, f"{type(e).__name__}: {errtext(e, 2)}"
    verdict = "AGREE" if ok == expect_ok else "DISAGREE"
    agree += verdict == "AGREE"
    disagree += verdict == "DISAGREE"
    print(f"{verdict:8} {name}: {text}", flush=True)


d = open_dev()
for shape, cores in shapes:
    M = memory_config(shape, cores)
    x, xi, xd = dev(d, shape, mc=M), dev(d, shape, mc=L1), dev(d, shape, mc=DR)
    row = dev(d, (1,) * (len(shape) - 1) + (shape[-1],), mc=DR)
    w = dev(d, (shape[-1], shape[-1]))
    g = dev(d, (1, shape[-1]))
    tag = f"{list(shape)} on {cores}"
    for op in ops:
        facts = OPS[op].height
        out = M if facts.output else L1

        def arg(i):
            return x if i in facts.inputs else xi

        form = facts.probe
        if form == "unary":
            fn = getattr(ttnn, op)
            check(f"{op}(HS) -> {'HS' if facts.output else 'L1'} {tag}", lambda: fn(x, memory_config=out), True, facts.output)
            check(f"{op}(HS) -> L1 {tag}", lambda: fn(x, memory_config=L1), True, False)
            check(f"{op}(L1) -> HS {tag}", lambda: fn(xi, memory_config=M), True, True)
            check(f"{op}(DRAM) -> HS {tag}", lambda: fn(xd, memory_config=M), True, True)
        elif form == "binary":
            fn = getattr(ttnn, op)
            check(f"{op}(HS, HS) -> HS {tag}", lambda: fn(x, x, memory_config=M), True, True)
            check(f"{op}(HS, HS) -> L1 {tag}", lambda: fn(x, x, memory_config=L1), True, False)
            check(f"{op}(HS, L1) -> L1 {tag}", lambda: fn(x, xi, memory_config=L1), True, False)
            check(f"{op}(L1, HS) -> HS {tag}", lambda: fn(xi, x, memory_config=M), True, True)
            check(f"{op}(HS, DRAM) -> DRAM {tag}", lambda: fn(x, xd, memory_config=DR), True, False)
            check(f"{op}(DRAM, DRAM) -> HS {tag}", lambda: fn(xd, xd, memory_config=M), True, True)
            check(f"{op}(L1, DRAM row) -> HS {tag}", lambda: fn(xi, row, memory_config=M), True, True)
            check(f"{op}(HS, 0.5) -> HS {tag}", lambda: fn(x, 0.5, memory_config=M), True, True)
            check(f"{op}(HS, 0.5) -> L1 {tag}", lambda: fn(x, 0.5, memory_config=L1), True, False)
        elif form == "where":
            c = ttnn.gt(x, 0.0, memory_config=M)
            check(f"where(HS, 0.0, -1.0) -> HS {tag}", lambda: ttnn.where(c, 0.0, -1.0, memory_config=M), True, True)
            check(f"where(HS, 0.0, -1.0) -> L1 {tag}", lambda: ttnn.where(c, 0.0, -1.0, memory_config=L1), True, False)
            check(f"where(HS, HS, HS) -> HS {tag}", lambda: ttnn.where(c, x, x, memory_config=M), True, True)
            check(f"where(L1, L1, L1) -> HS {tag}", lambda: ttnn.where(xi, xi, xi, memory_config=M), True, True)
        elif form == "typecast":  # layouts must match: the table keeps typecast interleaved
            check(f"typecast(HS) -> HS fp32 {tag}", lambda: ttnn.typecast(x, ttnn.float32, memory_config=M), True, True)
            check(f"typecast(HS) -> L1 refused {tag}", lambda: ttnn.typecast(x, ttnn.float32, memory_config=L1), False)
            check(f"typecast(L1) -> HS refused {tag}", lambda: ttnn.typecast(xi, ttnn.float32, memory_config=M), False)
        elif form == "softmax":
            check(f"softmax(HS) -> HS {tag}", lambda: ttnn.softmax(x, memory_config=M), True, True)
            check(f"softmax(HS) -> L1 {tag}", lambda: ttnn.softmax(x, memory_config=L1), True, False)
            check(f"softmax(L1) -> HS {tag}", lambda: ttnn.softmax(xi, memory_config=M), True, True)
        elif form == "layer_norm":
            check(f"layer_norm(L1) -> HS {tag}", lambda: ttnn.layer_norm(xi, weight=g, bias=g, memory_config=M), True, True)
            check(f"layer_norm(HS) refused {tag}", lambda: ttnn.layer_norm(x, weight=g, bias=g, memory_config=L1), False)
        elif form in ("matmul", "linear"):
            fn = getattr(ttnn, form)
            check(f"{form}(HS, w DRAM) -> L1 {tag}", lambda: fn(x, w, memory_config=L1), True, False)
            check(f"{form}(HS, w DRAM) -> DRAM {tag}", lambda: fn(x, w, memory_config=DR), True, False)
            if len(shape) == 4:
                b = dev(d, shape[:-2] + (shape[-1], shape[-2]), mc=L1)
                check(f"{form}(HS, batched b L1) -> L1 {tag}", lambda: fn(x, b, memory_config=L1), True, False)
        elif form == "permute":
            dims = tuple(range(len(shape) - 2)) + (len(shape) - 1, len(shape) - 2)
            check(f"permute(HS) -> L1 {tag}", lambda: ttnn.permute(x, dims, memory_config=L1), True, False)
            if len(shape) == 4:
                check(f"permute(HS, 0213) -> L1 {tag}", lambda: ttnn.permute(x, (0, 2, 1, 3), memory_config=L1), True, False)
        elif form == "reshape_view":
            flat = (math.prod(shape[:-1]), shape[-1])
            check(f"reshape(HS) view keeps the spec {tag}", lambda: ttnn.reshape(x, flat, memory_config=M), True, True)
        elif form == "to_memory_config":
            check(f"to_memory_config(L1 -> HS) {tag}", lambda: ttnn.to_memory_config(xi, M), True, True)
            check(f"to_memory_config(DRAM -> HS) {tag}", lambda: ttnn.to_memory_config(xd, M), True, True)
            check(f"to_memory_config(HS -> L1) {tag}", lambda: ttnn.to_memory_config(x, L1), True, False)
            check(f"to_memory_config(HS -> DRAM) {tag}", lambda: ttnn.to_memory_config(x, DR), True, False)
        elif form == "conv2d":  # bounds of conv_reads_height_sharded: probe_conv_sharded.py
            side = math.isqrt(shape[-2]) if len(shape) == 4 and shape[:2] == (1, 1) else 0
            if side * side == shape[-2] and side:
                from probe_conv_helpers import conv
                check(f"conv2d(HS) 1x1 -> DRAM {tag}", lambda: conv(d, x, shape[-1], shape[-1], 1, side, side, k=1,
                                                                     padding=(0, 0), memory_config=DR), True, False)
                # writes height-sharded on its all-in-L1 path (the assign-memory-configs pass's slice_config)
                for src, t in (("HS", x), ("L1", xi), ("DRAM", xd)):
                    check(f"conv2d({src}) 3x3 -> HS (L1 full slicing) {tag}",
                          lambda: conv(d, t, shape[-1], shape[-1], 1, side, side, memory_config=M,
                                       slice_config=ttnn.Conv2dL1FullSliceConfig), True, True)
        elif form == "to_torch":
            check(f"to_torch(HS) {tag}", lambda: ttnn.to_torch(x).shape)
        elif form == "deallocate":
            y = ttnn.relu(x, memory_config=M)
            check(f"deallocate(HS) {tag}", lambda: ttnn.deallocate(y))
        elif form == "from_torch":
            check(f"from_torch -> HS {tag}", lambda: dev(d, shape, mc=M), True, True)
        else:
            print(f"DISAGREE {op}: no probe form {form!r}", flush=True)
            disagree += 1
print(f"facts: {agree} agree, {disagree} disagree", flush=True)
ttnn.close_device(d)
sys.stdout.flush()
os._exit(0 if disagree == 0 else 1)
