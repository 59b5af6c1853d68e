"""Op table entries: matmul and linear, softmax and normalisation, reductions, argmax, topk, cumsum.

Sharding (probe_sharding.py, results/sharding.txt):
- matmul / linear read a height-sharded input_tensor_a (not b: "Input B memory layout must be INTERLEAVED")
  into an interleaved output; against a batched b only in whole batches per shard, which
  ir/placements.py matmul_reads_height_sharded states (probe_matmul_sharded.py, results/matmul_sharded.txt).
  A sharded output from an interleaved input depends on the batch shape ("Number of shards along height 4 must
  not exceed number of cores 1"), so it is not used;
- softmax reads and writes height-sharded; layer_norm writes height-sharded but refuses such an input
  ("Height sharded inputs are not supported.").
Accuracy (probe_unary_modes.py, results/unary_modes.txt): matmul and linear on bfloat16 inputs asked for
dtype=float32 accumulate in a float32 dest by themselves (DST_ACCUM_MODE true).  softmax's default kernel runs
math_approx_mode (APPROX true, its exp approximate: EXP_APPROX 1) in a float32 dest, HiFi3; a compute_kernel_config
with math_approx_mode=False gives the accurate exp (not emitted yet).
Epilogues (probe_epilogues.py, results/epilogues.txt; docs/ttnn-facts.md §22): matmul and linear take
`activation="relu" | "gelu" | "silu" | "sigmoid"`, which on interleaved tensors runs the standalone op's own
unary kernel after the matmul; layer_norm and rms_norm take `residual_input_tensor=` (same shape, TILE) and
normalise input + residual.
Vector FLOPs per output element: the cost model's rough estimates of the passes over a row, not measured
(softmax 5, layer_norm 8, rms_norm 6, mean and sum 1).
"""
from __future__ import annotations

from onnx2ttnn.ir.ttnn_ops.facts import Cost, Dtype, Float32Result, Page, ShardFacts, declare

_KCC = dict(kernel_config="compute_kernel_config")  # ir/kernel_config.py chooses it
_MATMUL_SHARDED = dict(same_shape_inputs=False, evidence=("results/matmul_sharded.txt",))
_PROGRAM = dict(program_config=True)  # ir/program_config.py chooses it for sharded calls (program_configs.txt)

declare("matmul", ("input_tensor_a", "input_tensor_b"), cost=Cost.MATRIX, float32_result=Float32Result.DTYPE,
        fused_activation="activation", **_KCC, **_PROGRAM, height=ShardFacts((0,), False, "matmul", **_MATMUL_SHARDED))
declare("linear", ("input_tensor_a", "input_tensor_b", "bias"), keyword_inputs={"bias"}, cost=Cost.MATRIX,
        float32_result=Float32Result.DTYPE, fused_activation="activation", **_KCC, **_PROGRAM,
        height=ShardFacts((0,), False, "linear", **_MATMUL_SHARDED), tilized_inputs=(2,))  # its bias (§47)
declare("softmax", vector_flops=5, **_KCC, height=ShardFacts((0,), True, "softmax"))
_NORM = ("input_tensor", "weight", "bias", "residual_input_tensor")  # the residual: fuse-epilogues (§22)
declare("layer_norm", _NORM, keyword_inputs=set(_NORM[1:]), vector_flops=8,
        **_KCC, height=ShardFacts((), True, "layer_norm"))
declare("rms_norm", _NORM, keyword_inputs=set(_NORM[1:]), vector_flops=6,
        **_KCC)

# reductions
for _name in ("mean", "sum", "max", "min"):
    declare(_name)
declare("prod", input_layouts=(Page.ANY,), output_page=Page.TILE)
declare("argmax", input_layouts=(Page.ANY,), output_page=Page.ROW_MAJOR)  # UINT32 ROW_MAJOR indices
# returns [values, indices]; indices UINT32 for float32 inputs or a tile-padded reduced dim above 65536, else
# UINT16 (ttnn.topk's documentation)
declare("topk", input_layouts=(Page.TILE,), output_page=Page.TILE, index_output=1)
# int32 TILE in, INT32 out (probe_integers.py, results/integers.txt; ROW_MAJOR refused)
declare("cumsum", ("input",), input_layouts=(Page.TILE,), output_page=Page.TILE, integer_inputs=(0,),
        output_dtype=Dtype.FOLLOWS_INTEGER_INPUT)
