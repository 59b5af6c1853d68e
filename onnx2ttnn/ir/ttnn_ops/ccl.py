"""The collective (CCL) ops: data moved between the chips of a mesh over the ethernet fabric (tensor parallel,
docs/design.md §6.21; probe_tp.py, results/tp_n300.txt, tp_t3k_1x8.txt, tp_t3k.txt; docs/ttnn-facts.md §27).

- all_reduce(t, cluster_axis=a): every chip along mesh axis a gets the sum of their pieces (same shape), TILE
  bfloat16 / bfloat8_b / float32, rank >= 2, DRAM or L1 interleaved output;
- reduce_scatter(t, dim, cluster_axis=a): the sum, split on `dim` over the chips along a (one piece each);
- all_gather(t, dim, cluster_axis=a): the chips' pieces along a concatenated on `dim`.
All three need `ttnn.set_fabric_config(ttnn.FabricConfig.FABRIC_1D)` before the mesh opens ("Trying to get
un-initialized fabric context" otherwise).  Cost: the bytes each chip sends over its ethernet links
(ir/ccl_cost.py ccl_bytes), at the link bandwidth of ir/device.py.
"""
from __future__ import annotations

from onnx2ttnn.ir.ttnn_ops.facts import Cost, declare

declare("all_reduce", cost=Cost.CCL)
declare("reduce_scatter", cost=Cost.CCL)
declare("all_gather", cost=Cost.CCL)
