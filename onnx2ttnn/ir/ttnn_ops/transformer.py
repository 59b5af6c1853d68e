"""Op table entries: ttnn.transformer's attention ops, as the attention fusion emits them (lowering/attention.py).

Probed on ttnn 0.81.1 in mock mode (probe_attention.py, results/attention.txt; docs/ttnn-facts.md §21):
- split_query_key_value_and_split_heads: a rank-3 TILE [b, s, (n + 2 nkv) * dh] input ("expected 3 dimensions"),
  dh a multiple of 32 ("Invalid head size: 16"), DRAM or L1 interleaved (a height-sharded input crashed the
  process: not used); bfloat16 or float32; returns q [b, n, s, dh], k [b, nkv, s, dh] or with transpose_key
  [b, nkv, dh, s], v [b, nkv, s, dh];
- scaled_dot_product_attention: bfloat16 / bfloat8_b / bfloat4_b q, k, v only (float32 refused), dh a multiple
  of 32 ("Padding is not supported on the head_dim dimension"), any sequence length (5, 16, 17: padded
  to tiles); attn_mask TILE bfloat16 [b|1, n|1, s_q, s_k] (a [.., 1, s_k] mask refused: "Mask sequence length
  must match Q sequence length") and in DRAM ("When mask is provided to SDPA, it must be in DRAM", seen when a
  program gave it an L1 mask: `dram_inputs`); is_causal and attn_mask exclusive; fewer k/v heads than q heads accepted;
  output [b, n, s, dh] where memory_config asks (DRAM, L1 interleaved);
- concatenate_heads: [b, n, s, dh] -> [b, s, n * dh], dh a multiple of 32;
- attention_softmax: scores / sqrt(head_size) + attention_mask (a [1, 1, 1, s] or [1, 1, s, s] mask), softmax
  over the last axis; the in-place attention_softmax_ refuses head_size without a mask and returns its input's
  buffer, so the converter calls the copying attention_softmax (an in-place op would alias its input).
Configs (probe_sdpa_config.py, results/sdpa_config.txt; docs/ttnn-facts.md §39): SDPA takes compute_kernel_config
(HiFi4 with fp32_dest_acc_en, HiFi2 / LoFi with packer_l1_acc accepted; ir/kernel_config.py chooses it as for a
matmul) and program_config=ttnn.SDPAProgramConfig (q / k chunk sizes, multiples of 32; ir/sdpa_config.py).
Cost: SDPA does 4 * b * n * s_q * s_k * dh FLOPs (two matmuls) at the matrix rate (Cost.ATTENTION); the
others move data or run a softmax (vector FLOPs as softmax's estimate).
"""
from __future__ import annotations

from onnx2ttnn.ir.ttnn_ops.facts import Cost, declare

declare("transformer.split_query_key_value_and_split_heads")
declare("transformer.scaled_dot_product_attention", ("input_tensor_q", "input_tensor_k", "input_tensor_v",
                                                    "attn_mask"), keyword_inputs={"attn_mask"}, cost=Cost.ATTENTION,
        dram_inputs=(3,), kernel_config="compute_kernel_config")
declare("transformer.concatenate_heads")
declare("transformer.attention_softmax", ("tensor", "attention_mask"), keyword_inputs={"attention_mask"},
        vector_flops=6)
