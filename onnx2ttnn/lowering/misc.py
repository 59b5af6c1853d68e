"""Cast: float and bool values share the device's float dtype; other casts become ttnn.typecast.

A cast to an integer type is pinned to int32 on the device (`_dtype="i32"`), where integers live: the values
may be negative (an ignore_index of -5), which uint32 would wrap, and int32 and uint32 operands do not mix in
ttnn's binary ops (probe_integers.py).  Only casts to uint32 / uint64, whose values may pass int32's range,
give uint32.  A cast to a type ttnn has no counterpart
for (float8, 4-/2-bit integers, float4/float6, strings, complex) is declined.

In an fp32 program a cast of a float32 (float64, bfloat16) value, or of an integer wider than 8 bits, to
float16 is declined too, so that a host
region rounds it as onnxruntime and the spec do (ttnn has no float16): passing it through kept float32's extra
bits, which a later rounding step can turn into a whole step (fuzz seed 67 case 627: -0.8828241 is -0.8828125
in float16, exactly -56.5 steps of a QuantizeLinear scale 1/64, which rounds to -56; unrounded, -56.501 gave
-57 and a MatMulInteger output 127 off).  So is a cast to bfloat16 that can round (from float16, float32,
float64, or an integer wider than 8 bits): its host fallback rounds to nearest even with torch
(fallback/arith.py; fuzz seed 173 case 288: Cast to bfloat16 and back before a MatMul, 0.0034 off when passed
through).  Not a host region: onnxruntime's Python API cannot return bfloat16, which is float32 inside the
compiler; not ttnn.typecast: what it rounds to bfloat16 on the device is not probed.  A bf16 program computes
every float in bfloat16 and keeps the pass-through."""
from __future__ import annotations

import numpy as np
import onnx
import onnx_graphsurgeon as gs

from onnx2ttnn.lowering.context import LoweringContext
from onnx2ttnn.lowering.registry import register


@register("Cast", versions=(6, 9, 13, 19, 21, 23, 24, 25, 28), ttnn=("typecast", "ne"),
          note="float casts and bool to float are free; to bool: x != 0; int casts typecast")
def cast(ctx: LoweringContext, node: gs.Node) -> None:
    """Cast-6 (`to` an enum; Cast-1 named the type by a string and has no shape inference: not claimed);
    9: strings; 13: bfloat16; 19: float8 and `saturate`; 21: 4-bit integers; 23: float4; 24: float8e8m0
    and `round_mode`; 25: 2-bit integers; 28: float6.  Everything 9 on adds concerns types ttnn has no
    counterpart for (declined), except bfloat16 (a float: free)."""
    x, form = ctx.value_with_form(node.inputs[0])
    to = np.dtype(onnx.helper.tensor_dtype_to_np_dtype(int(node.attrs["to"])))
    if to.kind not in "biuf" and to.name != "bfloat16":  # ml_dtypes' float8/int4/... are numpy void ('V') kinds
        ctx.decline(declined_cast(to))
    out = node.outputs[0]
    src_float = x.dtype.kind in "fb"
    dst_float = to.kind in "fb" or to.name == "bfloat16"  # ml_dtypes' bfloat16 is a numpy void ('V') kind
    if to.kind == "b" and np.dtype(node.inputs[0].dtype).kind != "b":  # x != 0, as 1.0 / 0.0
        if not src_float:
            x = ctx.op("typecast", [x], x.shape, name=out.name + "_float", dtype=np.float32)
        ctx.bind(out, ctx.op("ne", [x], x.shape, name=out.name, input_tensor_b=0.0), form)
        return
    if ctx.dtype == "fp32" and (_narrows(node.inputs[0].dtype, to) or _narrows_to_bfloat16(node.inputs[0].dtype, to)):
        ctx.decline(declined_cast(to))
    if src_float == dst_float:
        ctx.bind(out, x, form)
        return
    if dst_float:
        ctx.bind(out, ctx.op("typecast", [x], x.shape, name=out.name, dtype=np.float32), form)
        return
    pinned = "u32" if to.name in ("uint32", "uint64") else "i32"
    ctx.bind(out, ctx.op("typecast", [x], x.shape, name=out.name, dtype=np.int32, _dtype=pinned), form)


def declined_cast(to: np.dtype) -> str:
    """Why the rule declines a cast to `to` (the Cast fallback, which rounds to bfloat16 only, says the same)."""
    if to.name == "float16":
        return "a cast to float16 rounds, and ttnn has no float16 (a float32 program keeps every bit)"
    if to.name == "bfloat16":
        return "a cast to bfloat16 rounds, and a float32 program keeps every bit on the device"
    return f"ttnn has no {to.name} type to cast to"


def _narrows_to_bfloat16(source, to: np.dtype) -> bool:
    """Whether casting a value of ONNX type `source` to `to` is a cast to bfloat16 that can change the value:
    from a float of more than bfloat16's 8 significant bits (float16, float32, float64) or an integer wider than
    8 bits (257 -> 256)."""
    if to.name != "bfloat16" or source is None or isinstance(source, int):
        return False
    source = np.dtype(source)
    return source.name in ("float16", "float32", "float64") or (source.kind in "iu" and source.itemsize > 1)


def _narrows(source, to: np.dtype) -> bool:
    """Whether casting a value of ONNX type `source` (a numpy dtype, or ONNX's enum for bfloat16) to `to` is a
    cast to float16 that can change the value: from float32, float64 or bfloat16 (whose range is float32's),
    or from an integer type wider than 8 bits (float16 holds integers exactly up to 2048 only: 2049 -> 2048,
    70000 -> inf; the review of 2026-12-02)."""
    if to.name != "float16":
        return False
    if isinstance(source, int):
        return source == onnx.TensorProto.BFLOAT16
    if source is None:
        return False
    source = np.dtype(source)
    return source.name in ("float32", "float64", "bfloat16") or (source.kind in "iu" and source.itemsize > 1)
