"""MatMul, Gemm, matmul-like Einsum and the fused Linear (MatMul + bias Add) -> ttnn.matmul / ttnn.linear."""
from __future__ import annotations

import numpy as np
import onnx_graphsurgeon as gs

from onnx2ttnn.errors import ConversionError
from onnx2ttnn.ir.ttnn_ops import Page
from onnx2ttnn.lowering.context import LoweringContext
from onnx2ttnn.lowering.registry import register
from onnx2ttnn.lowering.weight_codes import linear_codes
from onnx2ttnn.lowering.weight_dtype import weight_dtype, weight_upload


def _matmul(ctx: LoweringContext, a: gs.Tensor, b: gs.Tensor, out: gs.Tensor, bias=None) -> None:
    """out = a @ b (+ bias): ttnn.linear when b is a weight, ttnn.matmul between two activations."""
    wb = ctx.constant(b)
    x = ctx.value(a)
    a_shape, out_shape = tuple(a.shape), tuple(out.shape) or (1,)  # a rank-0 result is [1] on the device
    if len(a_shape) == 1:  # [K] @ [K, N]: treat as [1, K]
        x = ctx.op("reshape", [x], (1, a_shape[0]), name=a.name + "_row", shape=(1, a_shape[0]))
    coded = linear_codes(ctx, b.name, wb) if wb is not None else None
    x_scale = ctx.pair_codes.get(a.name)  # a holds a pair's codes (lowering/quantize.py _read_as_codes)
    if coded is None and x_scale is not None:  # a call the pair expected to run on codes that does not: the value
        x = ctx.op("multiply", [x], tuple(x.shape), name=a.name + "_value", input_tensor_b=x_scale)
    if coded is not None:
        y = _coded_linear(ctx, x, b.name, coded, bias, out.name, out_shape if len(a_shape) > 1 else (1, out_shape[-1]),
                          x_scale)
    elif wb is not None and wb.ndim == 2:
        w = ctx.float_param(wb, b.name, key=(b.name, "weight"), dtype=weight_dtype(ctx, b.name, wb))
        inputs = [x, w]
        if bias is not None:
            inputs.append(ctx.float_param(np.asarray(bias).reshape(1, -1), out.name + "_bias",
                                          key=(out.name, "bias")))
        y_shape = out_shape if len(a_shape) > 1 else (1, out_shape[-1])
        y = ctx.op("linear", inputs, y_shape, name=out.name)
    else:
        xb = ctx.value(b)
        b_shape = tuple(b.shape)
        if len(b_shape) == 1:
            xb = ctx.op("reshape", [xb], (b_shape[0], 1), name=b.name + "_col", shape=(b_shape[0], 1))
            b_shape = (b_shape[0], 1)
        x, xb = _batch_operands(ctx, x, xb)
        shape = tuple(x.shape)[:-1] + (b_shape[-1],)
        y = ctx.op("matmul", [x, xb], shape, name=out.name)
        if bias is not None:
            y = ctx.op("add", [y, ctx.float_param(np.asarray(bias).reshape((1,) * (len(shape) - 1) + (-1,)),
                                                 out.name + "_bias", key=(out.name, "bias"))], shape,
                       name=out.name + "_biased")
    if tuple(y.shape) != out_shape:
        y = ctx.op("reshape", [y], out_shape, name=out.name + "_shaped", shape=out_shape)
    ctx.bind(out, y)


def _coded_linear(ctx: LoweringContext, x: gs.Variable, name: str, coded, bias, out_name: str, y_shape,
                  x_scale=None):
    """`(x @ codes + bias / scale) * scale` (lowering/weight_codes.py): the codes uploaded as bfloat8_b, exact.
    `x_scale`: x is a pair's codes (LoweringContext.pair_codes), whose scale joins the weight's."""
    codes, scale = coded
    if x_scale is not None:
        scale = np.float32(x_scale) * (np.float32(scale) if isinstance(scale, float) else scale)
        scale = float(scale) if np.ndim(scale) == 0 else np.asarray(scale, np.float32)
        name_row, key_row = out_name + "_scale", (out_name, "scale")
    else:
        name_row, key_row = name + "_scale", (name, "scale")
    ctx.note_weight_dtype(name, "bfp8", "integer codes (exact), the scale applied after the linear")
    ctx.dequantized.setdefault(name + "_codes", np.float32(1.0))  # the weights file keeps them as int8 codes
    inputs = [x, ctx.float_param(codes, name + "_codes", key=(name, "codes"), dtype="bfp8")]
    if bias is not None:
        inputs.append(ctx.float_param((np.asarray(bias, np.float32) / scale).reshape(1, -1), out_name + "_bias",
                                      key=(out_name, "bias")))
    pins = {"_input_layouts": (Page.TILE, Page.TILE, Page.ROW_MAJOR)} if bias is not None else {}
    y = ctx.op("linear", inputs, y_shape, name=out_name + "_codes", **pins)
    producer = ctx.nodes[-1]
    producer.attrs["_float_dest"] = True  # choose-kernel-configs: HiFi4 and a float32 dest (sums of products)
    if isinstance(scale, float):  # a unit scale (QLinearMatMul's centred codes) needs no multiply
        return y if scale == 1.0 else ctx.op("multiply", [y], y_shape, name=out_name, input_tensor_b=scale)
    row = ctx.float_param(scale.reshape(1, -1), name_row, key=key_row)
    # the scale row ROW_MAJOR, 4 N bytes (TILE pads it to 32 rows); place-memory moves it into L1 for the
    # multiply's tilize, or turns it back to TILE (docs/design.md §6.39)
    return ctx.op("multiply", [y, row], y_shape, name=out_name, _input_layouts=(Page.TILE, Page.ROW_MAJOR))


def _batch_operands(ctx: LoweringContext, x: gs.Variable, xb: gs.Variable):
    """Operands of equal rank whose batch dims ttnn.matmul accepts: real ttnn broadcasts only a b with all
    batch dims 1 ("bmm (non-bcast matmul) expects ... batch dimension 0 mismatch: a=2 vs b=1"), so any other
    batch broadcast is made explicit with ttnn.expand."""
    rank = max(len(x.shape), len(xb.shape))
    x, xb = (_left_pad(ctx, t, rank) for t in (x, xb))
    batch = tuple(np.broadcast_shapes(tuple(x.shape)[:-2], tuple(xb.shape)[:-2]))
    if tuple(x.shape)[:-2] != batch:
        x = _expand(ctx, x, batch + tuple(x.shape)[-2:])
    if tuple(xb.shape)[:-2] != batch and int(np.prod(xb.shape[:-2], dtype=np.int64)) != 1:
        xb = _expand(ctx, xb, batch + tuple(xb.shape)[-2:])
    return x, xb


def _expand(ctx, x, shape):
    return ctx.op("expand", [x], shape, name=x.name + "_expanded", output_shape=list(shape))


def _left_pad(ctx, x, rank):
    if len(x.shape) == rank:
        return x
    shape = (1,) * (rank - len(x.shape)) + tuple(x.shape)
    return ctx.op("reshape", [x], shape, name=x.name + "_ranked", shape=shape)


@register("MatMul", versions=(1, 9, 13), ttnn=("linear", "matmul"))
def matmul(ctx: LoweringContext, node: gs.Node) -> None:
    """MatMul-1; 9: integer types; 13: bfloat16."""
    _matmul(ctx, node.inputs[0], node.inputs[1], node.outputs[0])


@register("Linear", versions=(1,), domain="onnx2ttnn", ttnn=("linear",), note="fused MatMul + Add")
def linear(ctx: LoweringContext, node: gs.Node) -> None:
    bias = ctx.require_constant(node.inputs[2], "Linear bias")
    _matmul(ctx, node.inputs[0], node.inputs[1], node.outputs[0], bias=bias)


@register("Gemm", versions=(7, 9, 11, 13), ttnn=("linear", "matmul"))
def gemm(ctx: LoweringContext, node: gs.Node) -> None:
    """Gemm-7: C broadcasts unidirectionally (1 and 6 asked for it with a `broadcast` attribute: not claimed);
    9: integer types; 11: C optional; 13: bfloat16."""
    a, b = node.inputs[0], node.inputs[1]
    c = node.inputs[2] if len(node.inputs) > 2 and node.inputs[2].name else None
    alpha, beta = float(node.attrs.get("alpha", 1.0)), float(node.attrs.get("beta", 1.0))
    out = node.outputs[0]
    if node.attrs.get("transA", 0):
        x = ctx.value(a)
        a = gs.Variable(a.name + "_t", dtype=a.dtype, shape=list(reversed(a.shape)))
        ctx.bind(a, ctx.op("permute", [x], a.shape, name=a.name, dims=(1, 0)))
    wb = ctx.constant(b)
    bias = ctx.constant(c) if c is not None else None
    # (alpha not finite: alpha * (A @ B) is +-inf, while inf * B summed in the product is inf - inf, NaN where B
    # has both signs: fuzz seed 157 case 1044; such an alpha multiplies the product, below)
    if wb is not None and np.isfinite(alpha) and (c is None or bias is not None) and (
            bias is None or bias.size == out.shape[-1] or bias.size == 1):
        w = weight_upload(node).to(wb)  # linear's [K, N]
        w = alpha * w if alpha != 1.0 else w  # alpha 1: the model's own weight, not a scaled copy of it
        w = gs.Constant(b.name + ("_t" if node.attrs.get("transB", 0) else ""), np.asarray(w, dtype=np.float32))
        if b.name in ctx.dequantized:  # the transposed or scaled copy of a dequantized weight is one too
            steps = np.asarray(ctx.dequantized[b.name])
            ctx.dequantized[w.name] = weight_upload(node).to(steps) * abs(alpha)
        full_bias = None if bias is None else np.broadcast_to(beta * bias.reshape(-1), (out.shape[-1],))
        _matmul(ctx, a, w, out, bias=full_bias)
        return
    # general case: activations on both sides, or a full [M, N] C
    if node.attrs.get("transB", 0):
        xb = ctx.value(b)
        b = gs.Variable(b.name + "_t", dtype=b.dtype, shape=list(reversed(b.shape)))
        ctx.bind(b, ctx.op("permute", [xb], b.shape, name=b.name, dims=(1, 0)))
    prod = gs.Variable(out.name + "_ab", dtype=out.dtype, shape=list(out.shape))
    _matmul(ctx, a, b, prod)
    y = ctx.value(prod)
    if alpha != 1.0:
        y = ctx.op("multiply", [y], out.shape, name=out.name + "_alpha", input_tensor_b=alpha)
    if c is not None:
        xc = ctx.value(c) if bias is None else ctx.float_param(
            (beta * bias).reshape((1,) * (2 - bias.ndim) + bias.shape), c.name, key=(c.name, "gemm_c"))
        if bias is None and beta != 1.0:
            xc = ctx.op("multiply", [xc], xc.shape, name=c.name + "_beta", input_tensor_b=beta)
        y = ctx.op("add", [y, xc], out.shape, name=out.name)
    ctx.bind(out, y)


# --- Einsum ------------------------------------------------------------------------------------------------

def _einsum_terms(ctx: LoweringContext, node: gs.Node) -> tuple[list[str], str]:
    """The operand subscripts and the output subscript, '...' expanded to letters (A, B, ...)."""
    equation = node.attrs["equation"]
    equation = (equation.decode() if isinstance(equation, bytes) else equation).replace(" ", "")
    lhs, arrow, rhs = equation.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(node.inputs):
        raise ConversionError(f"node {ctx.source!r}: Einsum equation {equation!r} does not fit "
                              f"{len(node.inputs)} inputs")
    ellipsis_rank = 0
    for term, t in zip(terms, node.inputs):
        if "..." in term:
            ellipsis_rank = max(ellipsis_rank, len(t.shape) - (len(term) - 3))
    fill = "".join(chr(ord("A") + i) for i in range(ellipsis_rank))
    expanded = []
    for term, t in zip(terms, node.inputs):
        if "..." in term:
            own = len(t.shape) - (len(term) - 3)
            term = term.replace("...", fill[ellipsis_rank - own:])
        if len(term) != len(t.shape) or len(set(term)) != len(term):
            raise ConversionError(f"node {ctx.source!r}: Einsum {equation!r}: repeated subscripts (diagonals) "
                                  "or subscripts that do not match the input rank are not supported")
        expanded.append(term)
    if arrow:
        out = rhs.replace("...", fill)
    else:  # implicit output: the letters used once, in alphabetical order, after the ellipsis
        counts = {c: "".join(expanded).count(c) for c in "".join(expanded)}
        out = fill + "".join(sorted(c for c, n in counts.items() if n == 1 and c not in fill))
    return expanded, out


def _permute(ctx: LoweringContext, x: gs.Variable, term: str, order: str, name: str) -> gs.Variable:
    if term == order:
        return x
    dims = [term.index(c) for c in order]
    return ctx.op("permute", [x], [x.shape[d] for d in dims], name=name, dims=dims)


def _sum_out(ctx: LoweringContext, x: gs.Variable, term: str, keep: set, name: str) -> tuple[gs.Variable, str]:
    """Sum away the subscripts of `term` not in `keep` (ttnn.sum, keepdim, then drop them by reshape)."""
    dims = [i for i, c in enumerate(term) if c not in keep]
    if not dims:
        return x, term
    kept = [1 if i in dims else d for i, d in enumerate(x.shape)]
    y = ctx.op("sum", [x], kept, name=name + "_sum", dim=dims[0] if len(dims) == 1 else dims, keepdim=True)
    new_term = "".join(c for c in term if c in keep)
    shape = [d for i, d in enumerate(x.shape) if i not in dims] or [1]
    return _reshape_to(ctx, y, shape, name + "_summed"), new_term


def _reshape_to(ctx, x, shape, name):
    shape = [int(d) for d in shape]
    return x if list(x.shape) == shape else ctx.op("reshape", [x], shape, name=name, shape=shape)


@register("Einsum", versions=(12, 28), ttnn=("matmul", "permute", "sum"),
          note="one or two operands without repeated subscripts: transposes, sums, (batched) matmuls")
def einsum(ctx: LoweringContext, node: gs.Node) -> None:
    """Einsum-12; 28: bfloat16."""
    terms, out_term = _einsum_terms(ctx, node)
    out = node.outputs[0]
    out_shape = [int(d) for d in out.shape] or [1]
    if len(terms) == 1:
        x, term = _sum_out(ctx, ctx.value(node.inputs[0]), terms[0], set(out_term), out.name)
        y = _permute(ctx, x, term, out_term, out.name + "_perm")
        ctx.bind(out, _reshape_to(ctx, y, out_shape, out.name))
        return
    if len(terms) != 2:
        raise ConversionError(f"node {ctx.source!r}: Einsum with {len(terms)} operands is not supported")
    (ta, tb), sizes = terms, {}
    for term, t in zip(terms, node.inputs):
        for c, d in zip(term, t.shape):
            if sizes.setdefault(c, int(d)) != int(d):
                raise ConversionError(f"node {ctx.source!r}: Einsum subscript {c!r} has sizes {sizes[c]} and "
                                      f"{d} (broadcasting subscripts is not supported)")
    a, ta = _sum_out(ctx, ctx.value(node.inputs[0]), ta, set(tb) | set(out_term), out.name + "_a")
    b, tb = _sum_out(ctx, ctx.value(node.inputs[1]), tb, set(ta) | set(out_term), out.name + "_b")
    batch = "".join(c for c in ta if c in tb and c in out_term)
    contract = "".join(c for c in ta if c in tb and c not in out_term)
    m = "".join(c for c in ta if c not in tb)
    n = "".join(c for c in tb if c not in ta)
    size = lambda letters: int(np.prod([sizes[c] for c in letters], dtype=np.int64))  # noqa: E731
    a = _permute(ctx, a, ta, batch + m + contract, out.name + "_a_perm")
    b = _permute(ctx, b, tb, batch + contract + n, out.name + "_b_perm")
    lead = [size(batch)] if batch else []
    a = _reshape_to(ctx, a, lead + [size(m), size(contract)], out.name + "_a_mat")
    b = _reshape_to(ctx, b, lead + [size(contract), size(n)], out.name + "_b_mat")
    y = ctx.op("matmul", [a, b], lead + [size(m), size(n)], name=out.name + "_mm")
    natural = batch + m + n
    y = _reshape_to(ctx, y, [sizes[c] for c in natural] or [1], out.name + "_unflat")
    if natural != out_term:
        y = _permute(ctx, y, natural, out_term, out.name + "_perm")
    ctx.bind(out, _reshape_to(ctx, y, out_shape, out.name))
