"""Q30: block-float embedding tables at the zoo's sizes, and bfloat8_b activations (issue #14 item 1) on ttnn
0.81.1: whether ttnn.embedding takes BERT-base's and GPT-2's bfloat8_b tables (vocabularies that are not a
multiple of 32 rows), from DRAM and L1, and which of the transformer calls take a bfloat8_b activation or return
one (`dtype=ttnn.bfloat8_b`)."""
from _common import *

d = open_dev()
print("--- Q30a embedding: bfloat8_b tables of the zoo's vocabularies", flush=True)
ids = ttnn.from_torch(torch.randint(0, 1000, (1, 128), dtype=torch.int32), dtype=ttnn.uint32, layout=RM, device=d)
for rows in (30522, 50257, 512, 2):  # BERT-base words, GPT-2 words, positions, token types
    before = per_bank(d, ttnn.BufferType.DRAM)
    table = step(f"from_torch [{rows},768] bfloat8_b TILE DRAM", lambda: dev(d, (rows, 768), dtype=ttnn.bfloat8_b))
    if table is None:
        continue
    print(f"     DRAM bytes per bank {per_bank(d, ttnn.BufferType.DRAM) - before}", flush=True)
    step(f"embedding [{rows},768] bfloat8_b layout=TILE", lambda: ttnn.embedding(ids, table, layout=TILE))
    step(f"embedding [{rows},768] bfloat8_b layout=TILE L1 out", lambda: ttnn.embedding(
        ids, table, layout=TILE, memory_config=L1))
    step(f"embedding [{rows},768] bfloat8_b layout=TILE dtype=bfloat8_b", lambda: ttnn.embedding(
        ids, table, layout=TILE, dtype=ttnn.bfloat8_b))
    ttnn.deallocate(table)
small = dev(d, (512, 768), dtype=ttnn.bfloat8_b, mc=L1)
step("embedding [512,768] bfloat8_b table in L1", lambda: ttnn.embedding(ids, small, layout=TILE))

print("--- Q30b bfloat8_b activations in a transformer layer", flush=True)
x16 = dev(d, (1, 128, 768))
x8 = step("typecast bf16 -> bfloat8_b", lambda: ttnn.typecast(x16, ttnn.bfloat8_b))
step("from_torch [1,128,768] bfloat8_b L1", lambda: dev(d, (1, 128, 768), dtype=ttnn.bfloat8_b, mc=L1))
w8 = dev(d, (768, 2304), dtype=ttnn.bfloat8_b)
b16 = dev(d, (1, 2304))
step("linear bfp8 x bfp8 weight", lambda: ttnn.linear(x8, w8, bias=b16))
qkv8 = step("linear bf16 x bfp8 weight dtype=bfloat8_b", lambda: ttnn.linear(x16, w8, bias=b16, dtype=ttnn.bfloat8_b))
step("linear bfp8 -> bfp8 L1", lambda: ttnn.linear(x8, w8, bias=b16, dtype=ttnn.bfloat8_b, memory_config=L1))
heads = step("split_query_key_value_and_split_heads bfp8", lambda: ttnn.transformer.split_query_key_value_and_split_heads(
    qkv8, num_heads=12, transpose_key=False))
if heads is not None:
    q, k, v = heads
    o = step("scaled_dot_product_attention bfp8 q k v", lambda: ttnn.transformer.scaled_dot_product_attention(
        q, k, v, is_causal=False, scale=1.0))
    q16, k16, v16 = (ttnn.typecast(t, ttnn.bfloat16) for t in (q, k, v))
    o16 = step("scaled_dot_product_attention bf16 q k v", lambda: ttnn.transformer.scaled_dot_product_attention(
        q16, k16, v16, is_causal=False, scale=1.0))
    for name, t in (("bfp8", o), ("bf16", o16)):
        if t is not None:
            step(f"concatenate_heads {name}", lambda: ttnn.transformer.concatenate_heads(t))
step("layer_norm bfp8 input", lambda: ttnn.layer_norm(x8, weight=dev(d, (1, 768)), bias=dev(d, (1, 768))))
step("layer_norm bfp8 input residual bf16", lambda: ttnn.layer_norm(
    x8, residual_input_tensor=x16, weight=dev(d, (1, 768)), bias=dev(d, (1, 768))))
step("layer_norm bf16 -> bfp8 (dtype=)", lambda: ttnn.layer_norm(x16, weight=dev(d, (1, 768)), bias=dev(d, (1, 768)),
                                                                 dtype=ttnn.bfloat8_b))
step("gelu bfp8", lambda: ttnn.gelu(x8))
step("add bfp8 + bf16", lambda: ttnn.add(x8, x16))
step("add bfp8 + bfp8", lambda: ttnn.add(x8, x8))
step("softmax bfp8", lambda: ttnn.softmax(x8, dim=-1))
step("reshape bfp8 TILE", lambda: ttnn.reshape(x8, (1, 1, 128, 768)))
step("to_layout bfp8 -> ROW_MAJOR", lambda: ttnn.to_layout(x8, RM))
step("to_torch bfp8", lambda: ttnn.to_torch(x8))
done(d)
