"""The fused attention ops of ttnn.transformer, as the attention fusion emits them (fusion/attention.py,
lowering/attention.py): split_query_key_value_and_split_heads (with and without transpose_key, num_kv_heads for
grouped-query), scaled_dot_product_attention (no mask, an additive mask broadcast over heads and over query
rows, causal, grouped-query, a given scale), concatenate_heads, attention_softmax(_) (the fallback), and the calls that make an input mask fit SDPA, at the
zoo's reduced shapes (hidden 64, 4 heads of 16, 16 tokens; ViT's 5 and 17 tokens) and BERT-base's, on bfloat16
TILE tensors in DRAM and L1 interleaved and height-sharded.  Prints one line per step."""
from _common import *

d = open_dev()

# --- split_query_key_value_and_split_heads: [b, s, 3h] -> q [b, n, s, dh], k [b, n, dh, s] (transposed), v
for b, s, n, dh in ((1, 16, 4, 16), (1, 16, 4, 32), (1, 17, 4, 32), (1, 5, 4, 32), (2, 16, 4, 32), (1, 128, 12, 64),
                    (1, 64, 2, 32)):
    for mc_name, mc in (("dram", DR), ("l1", L1)):
        x = dev(d, (b, s, 3 * n * dh), mc=mc)
        for tk in (True, False):
            step(f"split_qkv b={b} s={s} heads={n} dh={dh} {mc_name} transpose_key={tk}",
                 lambda: ttnn.transformer.split_query_key_value_and_split_heads(x, num_heads=n, transpose_key=tk,
                                                                                memory_config=mc))
step("split_qkv rank-4 input [1,1,16,192]", lambda: ttnn.transformer.split_query_key_value_and_split_heads(
    dev(d, (1, 1, 16, 384)), num_heads=4, transpose_key=False))
step("split_qkv row-major input", lambda: ttnn.transformer.split_query_key_value_and_split_heads(
    dev(d, (1, 16, 384), layout=RM), num_heads=4, transpose_key=False))
step("split_qkv float32 input", lambda: ttnn.transformer.split_query_key_value_and_split_heads(
    dev(d, (1, 16, 384), dtype=ttnn.float32), num_heads=4, transpose_key=False))
# grouped-query: 4 query heads, 2 key/value heads of 32 -> [1, 16, 128 + 2 * 64]
step("split_qkv gqa heads=4 kv_heads=2 dh=32", lambda: ttnn.transformer.split_query_key_value_and_split_heads(
    dev(d, (1, 16, 256)), num_heads=4, num_kv_heads=2, transpose_key=False))
step("split_qkv gqa heads=4 kv_heads=1 dh=32", lambda: ttnn.transformer.split_query_key_value_and_split_heads(
    dev(d, (1, 16, 192)), num_heads=4, num_kv_heads=1, transpose_key=False))
# a height-sharded input [1, 128, 2304] (the planner's layout) crashes the process (segmentation fault): not used

# --- scaled_dot_product_attention: q [b, n, s, dh], k and v [b, nkv, s, dh]
SDPA = ttnn.transformer.scaled_dot_product_attention
for b, s, n, dh in ((1, 16, 4, 16), (1, 16, 4, 32), (1, 17, 4, 32), (1, 5, 4, 32), (1, 32, 4, 32), (2, 16, 4, 32),
                    (1, 128, 12, 64), (1, 64, 2, 32)):
    q, k, v = (dev(d, (b, n, s, dh)) for _ in range(3))
    step(f"sdpa b={b} s={s} heads={n} dh={dh} no mask", lambda: SDPA(q, k, v, is_causal=False))
    step(f"sdpa b={b} s={s} heads={n} dh={dh} causal", lambda: SDPA(q, k, v, is_causal=True))
    step(f"sdpa b={b} s={s} heads={n} dh={dh} causal scale=0.5", lambda: SDPA(q, k, v, is_causal=True, scale=0.5))
    for mshape in ((b, 1, s, s), (b, 1, 1, s), (b, n, s, s), (1, 1, s, s)):
        step(f"sdpa b={b} s={s} heads={n} dh={dh} mask {mshape} scale=0.25",
             lambda: SDPA(q, k, v, attn_mask=dev(d, mshape), is_causal=False, scale=0.25))
    step(f"sdpa b={b} s={s} heads={n} dh={dh} l1 in and out",
         lambda: SDPA(*(dev(d, (b, n, s, dh), mc=L1) for _ in range(3)), is_causal=False, memory_config=L1))
q = dev(d, (1, 4, 16, 32))
step("sdpa mask and is_causal=True", lambda: SDPA(q, q, q, attn_mask=dev(d, (1, 1, 16, 16)), is_causal=True))
step("sdpa gqa q heads=4 kv heads=2", lambda: SDPA(q, dev(d, (1, 2, 16, 32)), dev(d, (1, 2, 16, 32)), is_causal=True))
step("sdpa gqa q heads=4 kv heads=1", lambda: SDPA(q, dev(d, (1, 1, 16, 32)), dev(d, (1, 1, 16, 32)), is_causal=False))
step("sdpa float32 q k v", lambda: SDPA(*(dev(d, (1, 4, 16, 32), dtype=ttnn.float32) for _ in range(3)),
                                         is_causal=False))
step("sdpa float32 mask", lambda: SDPA(q, q, q, attn_mask=dev(d, (1, 1, 16, 16), dtype=ttnn.float32),
                                        is_causal=False))
step("sdpa row-major mask", lambda: SDPA(q, q, q, attn_mask=dev(d, (1, 1, 16, 16), layout=RM), is_causal=False))
step("sdpa kernel config HiFi4 fp32acc", lambda: SDPA(q, q, q, is_causal=False, compute_kernel_config=ttnn.WormholeComputeKernelConfig(
    math_fidelity=ttnn.MathFidelity.HiFi4, math_approx_mode=False, fp32_dest_acc_en=True, packer_l1_acc=False)))
step("sdpa q seq 16, kv seq 32 no mask", lambda: SDPA(q, dev(d, (1, 4, 32, 32)), dev(d, (1, 4, 32, 32)),
                                                      is_causal=False))

# --- concatenate_heads: [b, n, s, dh] -> [b, s, n * dh]
for b, s, n, dh in ((1, 16, 4, 16), (1, 16, 4, 32), (1, 17, 4, 32), (1, 5, 4, 32), (2, 16, 4, 32), (1, 128, 12, 64)):
    for mc_name, mc in (("dram", DR), ("l1", L1)):
        step(f"concatenate_heads b={b} s={s} heads={n} dh={dh} {mc_name}",
             lambda: ttnn.transformer.concatenate_heads(dev(d, (b, n, s, dh), mc=mc), memory_config=mc))

# --- attention_softmax_ (in place): scores / sqrt(head_size) + mask, softmax over the last axis
for s, mshape in ((16, None), (16, (1, 1, 1, 16)), (16, (1, 1, 16, 16)), (17, (1, 1, 1, 17)), (128, (1, 1, 1, 128))):
    scores = dev(d, (1, 4, s, s))
    mask = dev(d, mshape) if mshape else None
    r = step(f"attention_softmax_ s={s} head_size=16 mask={mshape}",
             lambda: ttnn.transformer.attention_softmax_(scores, head_size=16, attention_mask=mask))
    if r is not None:
        print(f"     same buffer as its input: {r.buffer_address() == scores.buffer_address()}", flush=True)
scores = dev(d, (1, 4, 16, 16))
step("attention_softmax_ causal_mask=True with mask", lambda: ttnn.transformer.attention_softmax_(
    scores, head_size=16, attention_mask=dev(d, (1, 1, 16, 16)), causal_mask=True))
step("attention_softmax_ no head_size", lambda: ttnn.transformer.attention_softmax_(dev(d, (1, 4, 16, 16))))
step("attention_softmax (not in place) s=16 mask [1,1,1,16]", lambda: ttnn.transformer.attention_softmax(
    dev(d, (1, 4, 16, 16)), head_size=16, attention_mask=dev(d, (1, 1, 1, 16))))

# --- SDPA under a mask from the inputs (lowering/attention.py): the mask made finite (clip), each query row's
# "some key open" flag (max over keys, isfinite) and the output rows multiplied by it
mask = dev(d, (1, 1, 16, 16))
finite = step("clip mask [1,1,16,16] min=-1e30", lambda: ttnn.clip(mask, min=-1e30, max=3.4e38))
rowmax = step("max over keys dim=-1 keepdim", lambda: ttnn.max(mask, dim=-1, keepdim=True))
open_rows = step("isfinite of the row max", lambda: ttnn.isfinite(rowmax))
o = step("sdpa with the clipped mask", lambda: SDPA(q, q, q, attn_mask=finite, is_causal=False, scale=1.0))
step("multiply [1,4,16,32] by [1,1,16,1]", lambda: ttnn.multiply(o, open_rows))
step("multiply [2,4,16,32] by [2,1,16,1]", lambda: ttnn.multiply(dev(d, (2, 4, 16, 32)), dev(d, (2, 1, 16, 1))))
done(d)
