"""Output shapes of ttnn calls, inferred from their input shapes and arguments (the IR verifier's check).

Lowering declares every ttnn tensor's shape when it creates the call; `inferred_shapes(node)` recomputes
the shapes the call produces, as ttnn defines them, so that the verifier (ir/verify_ir.py) can compare the
two.  It covers the ops whose result shape follows plainly from their arguments: element-wise ops
(numpy broadcasting of the tensor operands), data movement (reshape, permute, concat, slice, expand,
repeat, pad, embedding), reductions, matmul / linear, the convolutions and pools on flattened NHWC
tensors [1, 1, N*H*W, C], and the host <-> device conversions with their `_shape` / `_nhwc` notes.
Other ops (split, split_query_key_value_and_split_heads, topk, upsample, argmax, global_avg_pool2d, host fallback helpers) return None: not checked.
"""
from __future__ import annotations

import math
from typing import Callable, Optional

import numpy as np
import onnx_graphsurgeon as gs

from onnx2ttnn.ir.ttnn_ops import HOST_OUTPUT, OPS

Shape = tuple[int, ...]


class ShapeError(ValueError):
    """The call's inputs and arguments do not fit together (the message says how)."""


_RULES: dict[str, Callable[[gs.Node, list[Shape]], Optional[Shape]]] = {}


def inferred_shapes(node: gs.Node) -> Optional[list[Shape]]:
    """The shapes of the node's outputs as ttnn computes them, or None for an op without a rule here (or
    an input whose shape is unknown); ShapeError when its inputs and arguments do not fit together."""
    rule = _RULES.get(node.op)
    shapes = [_shape_of(t) for t in node.inputs]
    if rule is None or any(s is None for s in shapes):
        return None
    try:
        out = rule(node, shapes)
    except (KeyError, IndexError, TypeError, ValueError) as exc:
        raise ShapeError(f"inputs of shapes {shapes} and arguments do not fit ({type(exc).__name__}: {exc})") from None
    return None if out is None else [tuple(int(d) for d in out)]


def _shape_of(tensor: gs.Tensor) -> Optional[Shape]:
    if isinstance(tensor, gs.Constant):
        return tuple(tensor.values.shape)
    if tensor.shape is None or any(d is None or isinstance(d, str) for d in tensor.shape):
        return None  # unknown (a graph output whose shape a host region decides at run time)
    return tuple(int(d) for d in tensor.shape)


def _rule(*names: str):
    def wrap(fn):
        for name in names:
            _RULES[name] = fn
        return fn
    return wrap


def _attrs(node: gs.Node, *names):
    return [node.attrs[n] for n in names]


# --- element-wise -------------------------------------------------------------------------------------
_SAME = ("to_layout", "typecast", "to_memory_config", "softmax", "layer_norm", "rms_norm", "cumsum", "clip",
         "hardtanh", HOST_OUTPUT)
_UNARY = tuple(name for name, info in OPS.items() if info.inputs == ("input_tensor",) and not info.positional_attrs
               and name not in ("reshape", "permute", "slice", "split", "expand", "repeat", "max_pool2d",
                                "avg_pool2d", "global_avg_pool2d", "mean", "sum", "max", "min", "prod", "argmax",
                                "topk", "upsample", "pad"))


@_rule(*_SAME, *_UNARY)
def _same(node, shapes):
    return shapes[0]  # (the norms' weight and bias inputs broadcast over it)


@_rule("add", "subtract", "multiply", "divide", "maximum", "minimum", "eq", "ne", "gt", "ge", "lt", "le",
       "logical_and", "logical_or", "logical_xor", "fmod", "remainder", "pow", "where")
def _broadcast(node, shapes):
    return np.broadcast_shapes(*shapes)


# --- data movement ------------------------------------------------------------------------------------
@_rule("reshape")
def _reshape(node, shapes):
    (shape,) = _attrs(node, "shape")
    if math.prod(shape) != math.prod(shapes[0]):
        raise ValueError(f"reshape of {math.prod(shapes[0])} elements to {tuple(shape)}")
    return tuple(shape)


@_rule("permute")
def _permute(node, shapes):
    (dims,) = _attrs(node, "dims")
    return tuple(shapes[0][d] for d in dims)


@_rule("concat")
def _concat(node, shapes):
    dim = node.attrs["dim"] % len(shapes[0])
    out = list(shapes[0])
    out[dim] = sum(s[dim] for s in shapes)
    return tuple(out)


@_rule("slice")
def _slice(node, shapes):
    starts, ends, steps = _attrs(node, "slice_start", "slice_end", "slice_step")
    return tuple(len(range(s, e, st)) for s, e, st in zip(starts, ends, steps))


@_rule("expand")
def _expand(node, shapes):
    return tuple(node.attrs["output_shape"])


@_rule("repeat")
def _repeat(node, shapes):
    return tuple(d * r for d, r in zip(shapes[0], node.attrs["repeat_dims"]))


@_rule("pad")
def _pad(node, shapes):
    return tuple(b + d + a for d, (b, a) in zip(shapes[0], node.attrs["padding"]))


@_rule("embedding")
def _embedding(node, shapes):
    return shapes[0] + (shapes[1][-1],)


# --- reductions and matrix products -------------------------------------------------------------------
@_rule("mean", "sum", "max", "min", "prod")
def _reduce(node, shapes):
    if "dim" not in node.attrs:
        return None
    dim = node.attrs["dim"]
    rank = len(shapes[0])
    dims = {d % rank for d in (dim if isinstance(dim, (list, tuple)) else [dim])}
    if node.attrs.get("keepdim", False):
        return tuple(1 if i in dims else d for i, d in enumerate(shapes[0]))
    return tuple(d for i, d in enumerate(shapes[0]) if i not in dims)


@_rule("matmul", "linear")
def _matmul(node, shapes):
    a, b = shapes[0], shapes[1]
    if len(a) < 2 or len(b) < 2 or a[-1] != b[-2]:
        raise ValueError(f"matmul of {a} by {b}")
    return tuple(np.broadcast_shapes(a[:-2], b[:-2])) + (a[-2], b[-1])


# --- convolutions and pools (flattened NHWC [1, 1, N*H*W, C]) ------------------------------------------
def _pads(padding) -> tuple[int, int, int, int]:
    """(top, bottom, left, right) from ttnn's (h, w) or (top, bottom, left, right)."""
    padding = tuple(padding)
    return (padding[0], padding[0], padding[1], padding[1]) if len(padding) == 2 else padding


def _window(size, k, s, d, before, after) -> int:
    return (size + before + after - d * (k - 1) - 1) // s + 1


@_rule("conv2d")
def _conv2d(node, shapes):
    n, h, w, kernel, stride = _attrs(node, "batch_size", "input_height", "input_width", "kernel_size", "stride")
    top, bottom, left, right = _pads(node.attrs["padding"])
    dil = node.attrs.get("dilation", (1, 1))
    oh = _window(h, kernel[0], stride[0], dil[0], top, bottom)
    ow = _window(w, kernel[1], stride[1], dil[1], left, right)
    return (1, 1, n * oh * ow, node.attrs["out_channels"])


@_rule("conv_transpose2d")
def _conv_transpose2d(node, shapes):
    n, h, w, kernel, stride = _attrs(node, "batch_size", "input_height", "input_width", "kernel_size", "stride")
    top, bottom, left, right = _pads(node.attrs["padding"])
    dil = node.attrs.get("dilation", (1, 1))
    extra = node.attrs.get("output_padding", (0, 0))
    oh = (h - 1) * stride[0] - top - bottom + dil[0] * (kernel[0] - 1) + extra[0] + 1
    ow = (w - 1) * stride[1] - left - right + dil[1] * (kernel[1] - 1) + extra[1] + 1
    return (1, 1, n * oh * ow, node.attrs["out_channels"])


@_rule("max_pool2d", "avg_pool2d")
def _pool2d(node, shapes):
    if node.attrs.get("ceil_mode"):
        return None  # ceil mode drops a last window that starts in the padding: not modelled here
    n, h, w, c, kernel, stride = _attrs(node, "batch_size", "input_h", "input_w", "channels", "kernel_size", "stride")
    top, bottom, left, right = _pads(node.attrs["padding"])
    dil = node.attrs.get("dilation", (1, 1))
    oh = _window(h, kernel[0], stride[0], dil[0], top, bottom)
    ow = _window(w, kernel[1], stride[1], dil[1], left, right)
    return (1, 1, n * oh * ow, c)


# --- host <-> device ----------------------------------------------------------------------------------
@_rule("from_torch")
def _from_torch(node, shapes):
    shape = node.attrs.get("_shape")
    return tuple(shape) if shape is not None else (shapes[0] or (1,))


@_rule("to_torch")
def _to_torch(node, shapes):
    if node.attrs.get("_nhwc") is not None:
        n, h, w, c = node.attrs["_nhwc"]
        return (n, c, h, w) if node.attrs.get("_shape") is None else tuple(node.attrs["_shape"])
    shape = node.attrs.get("_shape")
    return tuple(shape) if shape is not None else shapes[0]


# --- attention (ttnn.transformer; docs/ttnn-facts.md §21) ---------------------------------------------------
@_rule("transformer.split_query_key_value_and_split_heads")
def _split_heads(node, shapes):
    return None  # three outputs: not checked (like split)


@_rule("transformer.scaled_dot_product_attention", "transformer.attention_softmax")
def _attention(node, shapes):
    return shapes[0]


@_rule("transformer.concatenate_heads")
def _concatenate_heads(node, shapes):
    b, n, s, dh = shapes[0]
    return (b, s, n * dh)


# --- collectives (docs/ttnn-facts.md §27): each chip's result; `_ccl_chips` along the cluster axis ---------------
@_rule("all_reduce")
def _all_reduce(node, shapes):
    return shapes[0]


@_rule("all_gather", "reduce_scatter")
def _gather_scatter(node, shapes):
    chips, dim = int(node.attrs.get("_ccl_chips", 1)), int(node.attrs["dim"])
    out = list(shapes[0])
    out[dim] = out[dim] * chips if node.op == "all_gather" else out[dim] // chips
    return tuple(out)
