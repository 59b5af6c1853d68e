"""The fused Attention node (fusion/attention.py) -> ttnn.transformer's attention calls.

    qkv = ttnn.linear(x, w_qkv, bias=b_qkv)                       one weight: q (scale folded), k, v heads
    q, k, v = ttnn.transformer.split_query_key_value_and_split_heads(qkv, num_heads=n, transpose_key=...)
    o = ttnn.transformer.scaled_dot_product_attention(q, k, v, attn_mask=, is_causal=, scale=1.0)
      [o = ttnn.multiply(o, open_rows)]      a mask from the inputs that can block a whole row (the NaN guard):
                                             SDPA reads it clipped to -1e30 and the rows it blocks entirely
                                             are zeroed, as the guard would (open_rows: isfinite(max(mask)))
      or, where SDPA declines (a mask from the inputs without one row per query):
    p = ttnn.transformer.attention_softmax(ttnn.matmul(q, k), head_size=1, attention_mask=mask)
    [p = ttnn.where(ttnn.isnan(p), 0, p)]   o = ttnn.matmul(p, v)
    y = ttnn.transformer.concatenate_heads(o)   [y = ttnn.linear(y, w_out, bias=b_out)]

Heads are padded to a multiple of 32 by the fusion (docs/ttnn-facts.md §21: split, SDPA and concatenate_heads
refuse other head sizes); the scale is in w_qkv, so SDPA gets scale=1.0 and attention_softmax head_size=1.
"""
from __future__ import annotations

import numpy as np
import onnx_graphsurgeon as gs

from onnx2ttnn.lowering.context import LoweringContext
from onnx2ttnn.lowering.registry import register
from onnx2ttnn.lowering.weight_dtype import weight_dtype

SPLIT = "transformer.split_query_key_value_and_split_heads"
SDPA = "transformer.scaled_dot_product_attention"
SOFTMAX = "transformer.attention_softmax"
CONCAT = "transformer.concatenate_heads"
TILE = 32


def _present(node: gs.Node, index: int) -> bool:
    return len(node.inputs) > index and bool(node.inputs[index].name)


def _weight(ctx: LoweringContext, value: np.ndarray, name: str) -> gs.Variable:
    """A projection weight ([K, N], as linear reads it) uploaded in the format --weights gives it (the fused
    weight is judged as one: its q, k and v columns share the upload and the call)."""
    return ctx.float_param(value, name, dtype=weight_dtype(ctx, name, value))


def _mask(ctx: LoweringContext, node: gs.Node):
    """The additive mask as a device tensor (a constant one uploaded as a parameter), or None."""
    if not _present(node, 3):
        return None
    t = node.inputs[3]
    value = ctx.constant(t)
    if value is not None:
        return ctx.float_param(value, t.name, key=(t.name, "attention_mask"))
    return ctx.value(t)


def _finite_mask(ctx: LoweringContext, mask: gs.Variable):
    """(the mask with -inf clipped to -1e30, a [b, 1, s, 1] flag: 1 where a query row has an open key, else 0).
    Under the clipped mask a row with an open key gets exactly the same probabilities (exp(-1e30 - max) is 0),
    and a row without one gets finite values that the flag zeroes, as the exporter's NaN guard does."""
    finite = ctx.op("clip", [mask], mask.shape, name=mask.name + "_finite", min=-1e30, max=3.4e38)
    rows = tuple(mask.shape[:-1]) + (1,)
    row_max = ctx.op("max", [mask], rows, name=mask.name + "_row_max", dim=-1, keepdim=True)
    return finite, ctx.op("isfinite", [row_max], rows, name=mask.name + "_open_rows")


@register("Attention", versions=(1,), domain="onnx2ttnn",
          ttnn=("linear", SPLIT, SDPA, SOFTMAX, "matmul", CONCAT, "clip", "max", "isfinite", "multiply"),
          note="fused multi-head attention (QKV projections, scores, softmax, heads, output projection)")
def attention(ctx: LoweringContext, node: gs.Node) -> None:
    x_t, out = node.inputs[0], node.outputs[0]
    n, dh = int(node.attrs["num_heads"]), int(node.attrs["head_size"])
    causal, guard = bool(node.attrs.get("causal", 0)), bool(node.attrs.get("guard", 0))
    padded = -(-dh // TILE) * TILE
    b, s = int(x_t.shape[0]), int(x_t.shape[1])
    w_qkv, b_qkv = ctx.constant(node.inputs[1]), ctx.constant(node.inputs[2])
    name = out.name
    mask = _mask(ctx, node)
    sdpa = mask is None or int(mask.shape[-2]) == s
    qkv = ctx.op("linear", [ctx.value(x_t), _weight(ctx, w_qkv, node.inputs[1].name),
                            ctx.float_param(b_qkv.reshape(1, -1), node.inputs[2].name)],
                 (b, s, w_qkv.shape[1]), name=name + "_qkv")
    heads = (b, n, s, padded)
    q, k, v = ctx.multi_op(SPLIT, [qkv], [heads, heads if sdpa else (b, n, padded, s), heads],
                           names=[name + "_q", name + "_k", name + "_v"], num_heads=n, transpose_key=not sdpa)
    if sdpa:
        open_rows = None
        if mask is not None and guard:
            mask, open_rows = ctx.derived((node.inputs[3].name, "sdpa_mask"), lambda: _finite_mask(ctx, mask))
        inputs = [q, k, v] + ([mask] if mask is not None else [])
        o = ctx.op(SDPA, inputs, heads, name=name + "_heads", is_causal=causal, scale=1.0)
        if open_rows is not None:
            o = ctx.op("multiply", [o, open_rows], heads, name=name + "_open_heads")
    else:
        scores = ctx.op("matmul", [q, k], (b, n, s, s), name=name + "_scores")
        if mask is not None:
            p = ctx.op(SOFTMAX, [scores, mask], (b, n, s, s), name=name + "_probs", head_size=1)
        else:
            p = ctx.op("softmax", [scores], (b, n, s, s), name=name + "_probs", dim=-1)
        if guard:  # a row the mask blocks entirely is NaN: the exporter's zeros (fusion/attention.py)
            nan = ctx.op("isnan", [p], p.shape, name=name + "_nan")
            p = ctx.op("where", [nan, p], p.shape, name=name + "_guarded", true_value=0.0)
        o = ctx.op("matmul", [p, v], heads, name=name + "_heads")
    y = ctx.op(CONCAT, [o], (b, s, n * padded), name=name + ("_joined" if _present(node, 4) else ""))
    if _present(node, 4):
        w_out, b_out = ctx.constant(node.inputs[4]), ctx.constant(node.inputs[5])
        y = ctx.op("linear", [y, _weight(ctx, w_out, node.inputs[4].name),
                              ctx.float_param(np.asarray(b_out).reshape(1, -1), node.inputs[5].name)],
                   (b, s, w_out.shape[1]), name=name)
    if tuple(y.shape) != tuple(out.shape):
        y = ctx.op("reshape", [y], out.shape, name=name + "_shaped", shape=tuple(out.shape))
    ctx.bind(out, y)
