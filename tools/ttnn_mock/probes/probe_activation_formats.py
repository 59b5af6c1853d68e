"""Q38: bfloat8_b activations between matmuls / linears (issue #14 item 1, --activations): on ttnn 0.81.1, does a
linear / matmul write its result as bfloat8_b when asked (`dtype=ttnn.bfloat8_b`) in the forms the converter emits
(bias, fused activation=, core_grid=, a compute kernel config, L1 or DRAM output), does the next linear / matmul
take that bfloat8_b input_tensor_a (interleaved in L1 / DRAM, height-sharded with the chooser's program config)
against a bfloat8_b, bfloat4_b or bf16 weight, and does `dtype=ttnn.bfloat16` return its result to bf16 (without
it the output follows the activation, docs/ttnn-facts.md §30).  Also input_tensor_b in bfloat8_b (an attention
matmul's second activation), and the width of a bfloat8_b L1 buffer per bank.  BERT-base's feed-forward sizes."""
from _common import *

converter_ir_on_path()
from onnx2ttnn.ir.layout import TTNNLayout  # noqa: E402
from onnx2ttnn.ir.placements import height_shard_layout  # noqa: E402
from onnx2ttnn.ir.program_config import choose  # noqa: E402

d = open_dev()
B8, B16, B4 = ttnn.bfloat8_b, ttnn.bfloat16, ttnn.bfloat4_b
HIFI2 = ttnn.WormholeComputeKernelConfig(math_fidelity=ttnn.MathFidelity.HiFi2, math_approx_mode=False,
                                         fp32_dest_acc_en=False, packer_l1_acc=True)
GRID = ttnn.CoreGrid(y=8, x=8)
x16 = dev(d, (1, 128, 768), mc=L1)
w1 = dev(d, (768, 3072), dtype=B8)
b1 = dev(d, (1, 3072))
w2 = {"bfp8": dev(d, (3072, 768), dtype=B8), "bfp4": dev(d, (3072, 768), dtype=B4), "bf16": dev(d, (3072, 768))}
b2 = dev(d, (1, 768))

print("--- Q38a producers: linear / matmul writing bfloat8_b", flush=True)
for where, mc in (("L1", L1), ("DRAM", DR)):
    before = per_bank(d, ttnn.BufferType.L1)
    h = step(f"linear gelu core_grid kcc dtype=bfloat8_b -> {where}", lambda: ttnn.linear(
        x16, w1, bias=b1, activation="gelu", compute_kernel_config=HIFI2, core_grid=GRID, dtype=B8, memory_config=mc))
    if h is not None and where == "L1":
        print(f"     L1 bytes per bank {per_bank(d, ttnn.BufferType.L1) - before} (bf16 would be "
              f"{-(-4 * 96 // 64) * 2048})", flush=True)
    if h is not None:
        ttnn.deallocate(h)
step("linear no bias dtype=bfloat8_b", lambda: ttnn.linear(x16, w1, dtype=B8, memory_config=L1))
step("matmul dtype=bfloat8_b", lambda: ttnn.matmul(x16, w1, dtype=B8, compute_kernel_config=HIFI2, memory_config=L1))
step("matmul activation=relu dtype=bfloat8_b", lambda: ttnn.matmul(x16, w1, activation="relu", dtype=B8,
                                                                   memory_config=L1))

print("--- Q38b consumers: a bfloat8_b input_tensor_a", flush=True)
h8 = ttnn.linear(x16, w1, bias=b1, activation="gelu", core_grid=GRID, dtype=B8, memory_config=L1)
h8d = ttnn.linear(x16, w1, bias=b1, dtype=B8, memory_config=DR)
for fmt, w in w2.items():
    step(f"linear bfp8 x {fmt} weight core_grid kcc dtype=bfloat16", lambda: ttnn.linear(
        h8, w, bias=b2, compute_kernel_config=HIFI2, core_grid=GRID, dtype=B16, memory_config=L1))
step("linear bfp8 x bfp8 weight (no dtype)", lambda: ttnn.linear(h8, w2["bfp8"], bias=b2, core_grid=GRID,
                                                                 memory_config=L1))
step("linear bfp8 (DRAM) x bfp8 weight dtype=bfloat16", lambda: ttnn.linear(
    h8d, w2["bfp8"], bias=b2, compute_kernel_config=HIFI2, dtype=B16, memory_config=DR))
step("linear bfp8 x bfp8 weight activation=gelu dtype=bfloat16", lambda: ttnn.linear(
    h8, w2["bfp8"], bias=b2, activation="gelu", core_grid=GRID, dtype=B16, memory_config=L1))
step("linear bfp8 -> bfp8 (dtype=bfloat8_b)", lambda: ttnn.linear(h8, w2["bfp8"], bias=b2, core_grid=GRID, dtype=B8,
                                                                   memory_config=L1))
step("matmul bfp8 x bfp8 weight dtype=bfloat16", lambda: ttnn.matmul(h8, w2["bfp8"], dtype=B16,
                                                                     compute_kernel_config=HIFI2, memory_config=L1))
step("matmul bfp8 x bf16 weight dtype=bfloat16", lambda: ttnn.matmul(h8, w2["bf16"], dtype=B16, memory_config=L1))

print("--- Q38c a height-sharded bfloat8_b input_tensor_a with the chooser's program config", flush=True)
for shape, k, n in (((1, 128, 3072), 3072, 768), ((1, 1, 2048, 64), 64, 96)):
    layout = height_shard_layout(shape, TTNNLayout("tile", "bfp8"), 8, 8)
    chosen = choose(shape, layout, (k, n), fp32_dest=False, l1_limit=320 * 1024)
    config = None if isinstance(chosen, str) else eval(repr(chosen), {"ttnn": ttnn})  # noqa: S307 (our repr)
    print(f"     {shape} {layout}: {chosen!r}"[:300], flush=True)
    a = step(f"from_torch {shape} bfloat8_b height-sharded", lambda: dev(d, shape, dtype=B8,
                                                                         mc=shard_memory_config(layout)))
    wk = dev(d, (k, n), dtype=B8)
    extra = {} if config is None else {"program_config": config}
    if a is not None:
        step(f"linear sharded bfp8 {shape} x [{k},{n}] dtype=bfloat16 L1", lambda: ttnn.linear(
            a, wk, compute_kernel_config=HIFI2, dtype=B16, memory_config=L1, **extra))
        step(f"matmul sharded bfp8 {shape} x [{k},{n}] dtype=bfloat16 L1", lambda: ttnn.matmul(
            a, wk, compute_kernel_config=HIFI2, dtype=B16, memory_config=L1, **extra))
        step(f"matmul sharded bfp8 {shape} x [{k},{n}] (no dtype) L1", lambda: ttnn.matmul(
            a, wk, memory_config=L1, **extra))

print("--- Q38d an attention matmul's activations in bfloat8_b", flush=True)
q16 = dev(d, (1, 12, 128, 64), mc=L1)
k8 = dev(d, (1, 12, 64, 128), dtype=B8, mc=L1)
q8 = dev(d, (1, 12, 128, 64), dtype=B8, mc=L1)
step("matmul bf16 a x bfp8 b (batched) dtype=bfloat16", lambda: ttnn.matmul(q16, k8, dtype=B16, memory_config=L1))
step("matmul bfp8 a x bfp8 b (batched) dtype=bfloat16", lambda: ttnn.matmul(q8, k8, dtype=B16, memory_config=L1))
step("matmul bf16 a x bf16 b (batched) dtype=bfloat8_b", lambda: ttnn.matmul(q16, dev(d, (1, 12, 64, 128), mc=L1),
                                                                             dtype=B8, memory_config=L1))
done(d)
