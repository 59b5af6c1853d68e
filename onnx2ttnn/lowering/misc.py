"""Cast: float and bool values share the device's float dtype; other casts become ttnn.typecast.

A cast to a signed integer type from a float or signed source is pinned to int32 on the device
(`_dtype="i32"`): the values may be negative (an ignore_index of -5), which uint32 would wrap.  Casts from
booleans or unsigned sources and to unsigned types give uint32."""
from __future__ import annotations

import numpy as np
import onnx
import onnx_graphsurgeon as gs

from onnx2ttnn.lowering.context import LoweringContext
from onnx2ttnn.lowering.registry import register


@register("Cast", 1, ttnn=("typecast",), note="float<->bool casts are free; int casts typecast")
def cast(ctx: LoweringContext, node: gs.Node) -> None:
    x, form = ctx.value_with_form(node.inputs[0])
    to = np.dtype(onnx.helper.tensor_dtype_to_np_dtype(int(node.attrs["to"])))
    out = node.outputs[0]
    src_float = x.dtype.kind in "fb"
    dst_float = to.kind in "fb" or to.name == "bfloat16"  # ml_dtypes' bfloat16 is a numpy void ('V') kind
    if src_float == dst_float:
        ctx.bind(out, x, form)
        return
    if dst_float:
        ctx.bind(out, ctx.op("typecast", [x], x.shape, name=out.name, dtype=np.float32), form)
        return
    source = np.dtype(node.inputs[0].dtype)
    pinned = "i32" if to.kind == "i" and source.kind in "fi" else "u32"
    ctx.bind(out, ctx.op("typecast", [x], x.shape, name=out.name, dtype=np.int32, _dtype=pinned), form)
