"""Op table entries: convolution, pooling and upsampling on flattened NHWC activations [1, 1, N*H*W, C].

Placement facts, measured on real ttnn 0.81.1 in mock mode:
- conv2d reads a height-sharded input_tensor in the planner's layout (uneven splits too) and writes DRAM as
  asked, while its circular buffers fit: refused ("Statically allocated circular buffers ... beyond max L1
  size") for 1x1 2048->512, 1024->512 and 320->1280, 3x3 512->512, depthwise 3x3 over 960 channels; accepted up
  to 960->320 and depthwise over 144 channels (probe_conv_sharded.py, results/conv_sharded.txt): the bounds of
  ir/placements.py conv_reads_height_sharded;
- conv2d writes L1, interleaved or height-sharded in the planner's layout, from an interleaved DRAM or L1 input
  when called with slice_config=Conv2dL1FullSliceConfig (its all-in-L1 path; without it a DRAM input takes
  the DRAM slicing path and writes DRAM whatever memory_config says): accepted for ResNet-50's 7x7/2 stem,
  1x1 and 3x3 convs and MobileNetV2's depthwise convs up to 960 channels and its 1x1 320->1280
  (probe_conv_l1_out.py, results/conv_l1_out.txt).  Large convs stay on the DRAM path: kernels over 7x7
  and large input windows (ir/placements.py conv_all_in_l1; probe_conv_cb.py, results/conv_cb.txt);
- conv_transpose2d has only a DRAM slicing path here: it always writes DRAM, like conv2d on its DRAM path
  (not probed on its own).
Accuracy (probe_unary_modes.py, results/unary_modes.txt): conv2d and conv_transpose2d asked for dtype=float32
write FLOAT32 from a bfloat16 dest (DST_ACCUM_MODE false); with compute_config fp32_dest_acc_en=True (HiFi4,
their default fidelity) they accumulate in float32.
"""
from __future__ import annotations

from onnx2ttnn.ir.ttnn_ops.facts import Cost, Float32Result, Page, ShardFacts, Writes, declare

# conv2d's own L1 beyond OP_SCRATCH_RESERVE, kept free at every conv: the convs ir/placements.py admits to the
# all-in-L1 path need at most 532 KiB per bank beyond their input, output included (probe_conv_cb.py,
# results/conv_cb.txt), under the 960 KiB the two reserve; ViT-B/16's patch conv on its DRAM path allocates
# an 892928 B/bank L1 buffer of its own (mock run), which the two reserves leave room for too.
# conv_transpose2d was not measured: the planner keeps the same room free at it.
CONV_SCRATCH_EXTRA = 640 * 1024

_CONV = dict(keyword_inputs={"input_tensor", "weight_tensor", "bias_tensor"},
             input_layouts=(Page.ANY, Page.HOST, Page.HOST), output_page=Page.TILE, cost=Cost.CONV,
             l1_reserve=CONV_SCRATCH_EXTRA, float32_result=Float32Result.DTYPE_AND_DEST,
             kernel_config="compute_config")

declare("conv2d", ("input_tensor", "weight_tensor", "bias_tensor"), **_CONV, slice_config=True,
        height=ShardFacts((0,), True, "conv2d", same_shape_inputs=False,
                          evidence=("results/conv_sharded.txt", "results/conv_l1_out.txt", "results/conv_cb.txt")))
declare("conv_transpose2d", ("input_tensor", "weight_tensor", "bias_tensor"), **_CONV, output_buffer=Writes.DRAM)
declare("max_pool2d", input_layouts=(Page.ANY,), output_page=Page.ROW_MAJOR)
declare("avg_pool2d", input_layouts=(Page.ANY,), output_page=Page.ROW_MAJOR)
declare("global_avg_pool2d", input_layouts=(Page.TILE,), output_page=Page.TILE)
declare("upsample", input_layouts=(Page.ROW_MAJOR,), output_page=Page.ROW_MAJOR)  # NHWC [N, H, W, C]
