"""A linear / matmul with `activation=` on interleaved tensors given `core_grid=` (choose-program-configs on an
interleaved call with a fused activation): does real ttnn accept it with the compute kernel configs the
converter passes, and how many device programs does the call add to the program cache (cleared before each call) (2 without a core grid:
the matmul and a standalone eltwise_sfpu, docs/ttnn-facts.md §22; 1 when the activation is folded into the
matmul's own program)?  Shapes are BERT-base's / GPT-2's / ViT-B's FFN1 and the MLP's small linear; weights
in DRAM and in L1 (resident), bfloat8_b and bf16.  Prints one line per call, and the programs it added.
Usage: probe_core_grid.py [--device n150|p150]  (the core grid is the converter's: 8x8 on n150, 11x10 on p150)."""
import sys

from _common import *

d = open_dev()
P150 = "p150" in " ".join(sys.argv)
GRID = ttnn.CoreGrid(y=10, x=11) if P150 else ttnn.CoreGrid(y=8, x=8)
HIFI2 = ttnn.WormholeComputeKernelConfig(math_fidelity=ttnn.MathFidelity.HiFi2, math_approx_mode=False,
                                         fp32_dest_acc_en=False, packer_l1_acc=True)
HIFI4 = ttnn.WormholeComputeKernelConfig(math_fidelity=ttnn.MathFidelity.HiFi4, math_approx_mode=False,
                                         fp32_dest_acc_en=True, packer_l1_acc=False)
LOFI = ttnn.WormholeComputeKernelConfig(math_fidelity=ttnn.MathFidelity.LoFi, math_approx_mode=False,
                                        fp32_dest_acc_en=False, packer_l1_acc=True)
# (name, a shape, b shape, b dtype, b buffer, bias?, activation, kernel config, op)
CASES = [
    ("bert ffn1 gelu bfp8 dram", (1, 128, 768), (768, 3072), ttnn.bfloat8_b, DR, True, "gelu", HIFI2, "linear"),
    ("bert ffn1 gelu bfp8 l1", (1, 128, 768), (768, 3072), ttnn.bfloat8_b, L1, True, "gelu", HIFI2, "linear"),
    ("gpt2 ffn1 gelu_tanh bf16 dram", (1, 128, 768), (768, 3072), ttnn.bfloat16, DR, True, "gelu_tanh", HIFI4, "linear"),
    ("vit ffn1 gelu bf16 dram 197 rows", (1, 197, 768), (768, 3072), ttnn.bfloat16, DR, True, "gelu", HIFI4, "linear"),
    ("vit ffn1 gelu bfp4 dram 197 rows", (1, 197, 768), (768, 3072), ttnn.bfloat4_b, DR, True, "gelu", LOFI, "linear"),
    ("mlp relu small", (1, 32, 64), (64, 64), ttnn.bfloat16, L1, True, "relu", HIFI4, "linear"),
    ("matmul relu no bias", (1, 1, 64, 96), (96, 128), ttnn.bfloat8_b, DR, False, "relu", HIFI2, "matmul"),
    ("linear sigmoid", (1, 64, 256), (256, 512), ttnn.bfloat8_b, DR, True, "sigmoid", HIFI2, "linear"),
    # a bias and no activation (the transformers' QKV, output and FFN2 linears)
    ("bert qkv bias only bf16 dram", (1, 128, 768), (768, 2304), ttnn.bfloat16, DR, True, None, HIFI4, "linear"),
    ("bert ffn2 bias only bfp8 l1", (1, 128, 3072), (3072, 768), ttnn.bfloat8_b, L1, True, None, HIFI2, "linear"),
    ("linear no bias no activation", (1, 128, 768), (768, 768), ttnn.bfloat8_b, DR, False, None, HIFI2, "linear"),
]


def programs():
    return int(d.num_program_cache_entries())


for name, a_shape, b_shape, b_dtype, b_mc, with_bias, act, config, op in CASES:
    x = dev(d, a_shape, mc=L1)
    w = dev(d, b_shape, dtype=b_dtype, mc=b_mc)
    bias = dev(d, (1, b_shape[-1]), mc=L1) if with_bias else None
    kwargs = dict(compute_kernel_config=config, memory_config=L1)
    if act is not None:
        kwargs["activation"] = act
    if bias is not None:
        kwargs["bias"] = bias
    fn = getattr(ttnn, op)
    for label, extra in (("no core_grid", {}), (f"core_grid={GRID.y}x{GRID.x}", {"core_grid": GRID})):
        d.clear_program_cache()  # so that every program the call runs is counted, none found cached
        before = programs()
        y = step(f"{name}: {op}(activation={act!r}, {label})", lambda: fn(x, w, **kwargs, **extra))
        print(f"     programs added: {programs() - before}", flush=True)
        if y is not None:
            ttnn.deallocate(y)
    for t in (x, w, bias):
        if t is not None:
            ttnn.deallocate(t)
done(d)
