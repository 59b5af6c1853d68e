"""Multi-head attention as exporters write it -> one Attention node (fused QKV linear, split heads, SDPA or
attention softmax, concatenate heads, output projection).

    q = heads(x @ Wq + bq) [* cq]      k = heads_t(x @ Wk + bk) [* ck]      v = heads(x @ Wv + bv)
    p = softmax(q @ k [* c] [+ mask])  [-> Where(IsNaN(p), 0, p)]           y = concat_heads(p @ v) [@ Wo + bo]

Anchored at Softmax over the last axis.  `heads` / `heads_t` / `concat_heads` are whatever Reshape / Transpose
chains an exporter wrote (dynamo flattens the key transpose through rank 3, TorchScript permutes [0, 2, 3, 1]):
each chain is checked by replaying it on an index array, so any chain that moves the elements where the split
(or the concatenation) of heads puts them is accepted.  Scalar Mul / Div on q, k or the scores give the scale,
folded into the query weights at rewrite time.  Every intermediate must have a single reader; the three
projections must read the same x with constant weights.

The rewrite concatenates Wq * scale, Wk, Wv (and the biases) into one constant, each head's columns padded with
zeros to a multiple of 32 (ttnn's split and concatenation of heads refuse other head sizes: docs/ttnn-facts.md
§21); the output projection's weight gets the matching zero rows, so it must be there when a head is padded.
The exporter's NaN guard after the softmax is dropped when no row can be fully masked (no mask, or a constant
mask with an unmasked entry in every row) and kept (attribute `guard`) when the mask comes from the inputs.
"""
from __future__ import annotations

from typing import Optional

import numpy as np
import onnx_graphsurgeon as gs

from onnx2ttnn.fusion import FUSED_DOMAIN, FusionRule, Match, constant, is_op, other_input, producer, \
    replace_outputs, scalar, single_consumer

TILE = 32
_CHAIN_OPS = ("Reshape", "Transpose", "Concat", "Mul", "Div")  # Concat of one input (GPT-2's empty past)


def _static(shape) -> Optional[tuple[int, ...]]:
    if shape is None or any(not isinstance(d, (int, np.integer)) for d in shape):
        return None
    return tuple(int(d) for d in shape)


def _replay(node: gs.Node, index: np.ndarray) -> Optional[np.ndarray]:
    """The index array after one Reshape / Transpose node (None: not a static move)."""
    if node.op == "Concat":
        return index if len(node.inputs) == 1 else None
    if node.op == "Transpose":
        perm = node.attrs.get("perm")
        return index.transpose(perm) if perm is not None and len(perm) == index.ndim else None
    out = _static(node.outputs[0].shape)
    return index.reshape(out) if out is not None and int(np.prod(out)) == index.size else None


def _scale_of(node: gs.Node, tensor: gs.Tensor) -> Optional[float]:
    """The factor a scalar Mul (or a Div by a scalar) applies to `tensor`, or None."""
    if node.op == "Mul":
        return scalar(other_input(node, tensor))
    if node.op == "Div" and node.inputs[0] is tensor:
        s = scalar(node.inputs[1])
        return 1.0 / s if s else None
    return None


def _walk_back(tensor: gs.Tensor, nodes: list):
    """(the projection's output, the moves from it to `tensor` in order, the scale) through Reshape / Transpose /
    scalar Mul / Div nodes of single readers, back to an Add or MatMul."""
    moves, scale = [], 1.0
    while any(is_op(producer(tensor), op) for op in _CHAIN_OPS):
        node = producer(tensor)
        if len(tensor.outputs) != 1:
            return None, [], 1.0
        if node.op in ("Mul", "Div"):
            source = node.inputs[0] if scalar(node.inputs[1]) is not None else node.inputs[1]
            factor = _scale_of(node, source)
            if factor is None:
                return None, [], 1.0
            scale *= factor
            tensor = source
        else:
            moves.append(node)
            tensor = node.inputs[0]
        nodes.append(node)
    return tensor, moves[::-1], scale


def _gemm(node: gs.Node):
    """(A, W [K, N], b [N]) of a Gemm by a constant B (alpha, beta and transB folded), or None."""
    weight = constant(node.inputs[1])
    if weight is None or weight.ndim != 2 or node.attrs.get("transA", 0):
        return None
    weight = (weight.T if node.attrs.get("transB", 0) else weight) * float(node.attrs.get("alpha", 1.0))
    bias = np.zeros(weight.shape[1], np.float32)
    if len(node.inputs) > 2 and node.inputs[2].name:
        c = constant(node.inputs[2])
        if c is None or c.size not in (1, weight.shape[1]):
            return None
        bias = np.broadcast_to(c.reshape(-1) * float(node.attrs.get("beta", 1.0)), bias.shape)
    return node.inputs[0], weight.astype(np.float32), bias.astype(np.float32)


def _dense(tensor: gs.Tensor, nodes: list):
    """(x, W [K, N], b [N]) when `tensor` [b, s, N] is x @ W (+ b) with x [b, s, K] and constant W, b: MatMul
    (+ Add), or a Gemm between Reshapes to and from rank 2 (TorchScript's and dynamo's GPT-2)."""
    if len(tensor.outputs) != 1:
        return None
    node, found = producer(tensor), []
    if is_op(node, "Reshape") and is_op(producer(node.inputs[0]), "Gemm") and len(node.inputs[0].outputs) == 1:
        gemm = producer(node.inputs[0])
        parts = _gemm(gemm)
        a = parts[0] if parts else None
        if parts is None or not is_op(producer(a), "Reshape") or len(a.outputs) != 1:
            return None
        x = producer(a).inputs[0]
        shape, out = _static(x.shape), _static(tensor.shape)
        if shape is None or out is None or len(shape) != 3 or out != shape[:2] + (parts[1].shape[1],):
            return None
        nodes += [node, gemm, producer(a)]
        return x, parts[1], parts[2]
    bias = None
    if is_op(node, "Add"):
        matmul_out = next((t for t in node.inputs if is_op(producer(t), "MatMul")), None)
        if matmul_out is None or len(matmul_out.outputs) != 1:
            return None
        bias = constant(other_input(node, matmul_out))
        if bias is None:
            return None
        found.append(node)
        node = producer(matmul_out)
    if not is_op(node, "MatMul"):
        return None
    weight = constant(node.inputs[1])
    if weight is None or weight.ndim != 2 or (bias is not None and bias.size != weight.shape[1]):
        return None
    nodes += found + [node]
    bias = np.zeros(weight.shape[1], np.float32) if bias is None else bias.reshape(-1).astype(np.float32)
    return node.inputs[0], weight.astype(np.float32), bias


def _from_matmul(tensor: gs.Tensor) -> bool:
    """`tensor` is a MatMul's result, maybe scaled (the scores, not the mask added to them)."""
    source = _walk_back(tensor, [])[0]
    return source is not None and is_op(producer(source), "MatMul")


def _projection(tensor: gs.Tensor, nodes: list):
    """(x, W, b) of one projection: a dense layer, or its slice when one dense layer computes q, k and v and a
    Split over the last axis separates them."""
    split = producer(tensor)
    if not is_op(split, "Split"):
        return _dense(tensor, nodes)
    whole = split.inputs[0]
    rank = len(whole.shape or ())
    if rank == 0 or int(split.attrs.get("axis", 0)) % rank != rank - 1 or len(tensor.outputs) != 1:
        return None
    sizes = constant(split.inputs[1]) if len(split.inputs) > 1 and split.inputs[1].name else None
    width = int(whole.shape[-1])
    sizes = [width // len(split.outputs)] * len(split.outputs) if sizes is None else [int(d) for d in sizes]
    if sum(sizes) != width:
        return None
    dense = _dense(whole, nodes)
    if dense is None:
        return None
    nodes.append(split)
    index = split.outputs.index(tensor)
    start = sum(sizes[:index])
    x, weight, bias = dense
    return x, weight[:, start:start + sizes[index]], bias[start:start + sizes[index]]


def _heads(tensor: gs.Tensor, key: bool, nodes: list):
    """(x, W, b, heads, head size, scale) when `tensor` is a projection split into heads: [b, n, s, dh], or for the
    key [b, n, dh, s]; None with the chain unrecognised."""
    source, moves, scale = _walk_back(tensor, nodes)
    shape = _static(tensor.shape)
    if source is None or shape is None or len(shape) != 4:
        return None
    projected = _projection(source, nodes)
    src = _static(source.shape)
    if projected is None or src is None or len(src) != 3:
        return None
    b, heads = shape[0], shape[1]
    s, dh = (shape[3], shape[2]) if key else (shape[2], shape[3])
    if src != (b, s, heads * dh):
        return None
    index = np.arange(int(np.prod(src))).reshape(src)
    for node in moves:
        index = _replay(node, index)
        if index is None:
            return None
    expected = np.arange(int(np.prod(src))).reshape(b, s, heads, dh).transpose((0, 2, 3, 1) if key else (0, 2, 1, 3))
    if index.shape != expected.shape or not np.array_equal(index, expected):
        return None
    return projected + (heads, dh, scale)


def _concat_heads(tensor: gs.Tensor, nodes: list):
    """The tensor holding `tensor` [b, n, s, dh] with its heads concatenated, [b, s, n * dh], or None."""
    shape = _static(tensor.shape)
    b, n, s, dh = shape
    index = np.arange(int(np.prod(shape))).reshape(shape)
    expected = index.transpose(0, 2, 1, 3).reshape(b, s, n * dh)
    while True:
        node = single_consumer(tensor)
        if not (is_op(node, "Reshape") or is_op(node, "Transpose")) or len(tensor.outputs) != 1:
            return None
        index = _replay(node, index)
        if index is None:
            return None
        nodes.append(node)
        tensor = node.outputs[0]
        if index.shape in (expected.shape, (b * s, n * dh)) and np.array_equal(index.reshape(-1), expected.reshape(-1)):
            return tensor


def _output_projection(joined: gs.Tensor, nodes: list):
    """(the output, W, b) of the constant projection reading the joined heads (MatMul [+ Add], or Gemm between
    Reshapes), or (joined, None, None)."""
    node, found = single_consumer(joined), []
    if is_op(node, "Reshape") and len(joined.outputs) == 1 and len(node.outputs[0].shape or ()) == 2:
        found.append(node)
        node = single_consumer(node.outputs[0])
    if is_op(node, "Gemm") and len(node.inputs[0].outputs) == 1 and _gemm(node) is not None:
        _, weight, bias = _gemm(node)
        found.append(node)
        after = single_consumer(node.outputs[0])
        if is_op(after, "Reshape") and len(after.outputs[0].shape or ()) == 3:
            found.append(after)
        nodes += found
        return found[-1].outputs[0], weight, bias
    if not is_op(node, "MatMul") or found or node.inputs[0] is not joined:
        return joined, None, None
    weight = constant(node.inputs[1])
    if weight is None or weight.ndim != 2:
        return joined, None, None
    found.append(node)
    bias = np.zeros(weight.shape[1], np.float32)
    add = single_consumer(node.outputs[0])
    if is_op(add, "Add") and len(node.outputs[0].outputs) == 1:
        c = constant(other_input(add, node.outputs[0]))
        if c is not None and c.size == weight.shape[1]:
            bias = c.reshape(-1).astype(np.float32)
            found.append(add)
    nodes += found
    return found[-1].outputs[0], weight.astype(np.float32), bias


def _mask_kind(mask: Optional[gs.Tensor], s: int):
    """("none" | "causal" | "constant" | "input", array or None) for the scores' additive mask."""
    if mask is None:
        return "none", None
    value = constant(mask)
    if value is None:
        return "input", None
    if not np.any(value):
        return "none", None  # an all-zero mask (dynamo writes one for SDPA without a mask)
    value = np.broadcast_to(value.astype(np.float32), value.shape[:-2] + (s, s))
    value = value.reshape((1,) * (4 - value.ndim) + value.shape)
    blocked = value < -1e9
    if np.all(value[~blocked] == 0) and np.array_equal(blocked.reshape(-1, s, s)[0], np.triu(np.ones((s, s), bool), 1)) \
            and all(np.array_equal(m, blocked.reshape(-1, s, s)[0]) for m in blocked.reshape(-1, s, s)):
        return "causal", None
    if np.any(blocked.all(axis=-1)):
        return "input", None  # a fully masked row: the guard's zeros are needed
    return "constant", value


def match(softmax: gs.Node):
    scores = softmax.inputs[0]
    shape = _static(scores.shape)
    if shape is None or len(shape) != 4 or int(softmax.attrs.get("axis", -1)) not in (-1, 3):
        return None
    nodes, mask, scale = [softmax], None, 1.0
    node = producer(scores)
    if is_op(node, "Add") and len(scores.outputs) == 1:
        matmul_side = next((t for t in node.inputs if _from_matmul(t)), None)
        if matmul_side is None:
            return None
        mask = other_input(node, matmul_side)
        nodes.append(node)
        scores = matmul_side
    raw, moves, score_scale = _walk_back(scores, nodes)
    if raw is None or moves or not is_op(producer(raw), "MatMul") or len(raw.outputs) != 1:
        return None
    scale *= score_scale
    qk = producer(raw)
    nodes.append(qk)
    q = _heads(qk.inputs[0], False, nodes)
    k = _heads(qk.inputs[1], True, nodes)
    if q is None or k is None:
        return "q or k is not a projection split into heads"
    readers, guard = softmax.outputs[0].outputs, None
    isnan = next((r for r in readers if is_op(r, "IsNaN")), None)
    if isnan is not None:
        guard = single_consumer(isnan.outputs[0])
        if not (is_op(guard, "Where") and guard.inputs[0] is isnan.outputs[0] and scalar(guard.inputs[1]) == 0.0
                and guard.inputs[2] is softmax.outputs[0] and len(readers) == 2):
            return "the softmax's NaN guard is not Where(IsNaN(p), 0, p)"
        nodes += [isnan, guard]
        out = single_consumer(guard.outputs[0])
    else:
        out = single_consumer(softmax.outputs[0])
    probs = (guard or softmax).outputs[0]
    if not is_op(out, "MatMul") or out.inputs[0] is not probs:
        return "the probabilities do not multiply v"
    nodes.append(out)
    v = _heads(out.inputs[1], False, nodes)
    if v is None:
        return "v is not a projection split into heads"
    (xq, wq, bq, n, dh, sq), (xk, wk, bk, nk, dhk, sk), (xv, wv, bv, nv, dhv, _) = q, k, v
    if not (xq is xk is xv):
        return "q, k and v do not read the same input"
    if not (n == nk == nv and dh == dhk == dhv):
        return "q, k and v differ in heads or head size"
    b, _, s, _ = _static(out.outputs[0].shape)
    if len(out.outputs[0].outputs) != 1:
        return "the attention output has other readers"
    joined = _concat_heads(out.outputs[0], nodes)
    if joined is None:
        return "the heads are not concatenated back to [batch, sequence, hidden]"
    mask_shape = _static(mask.shape) if mask is not None else None
    if mask is not None and (mask_shape is None or len(mask_shape) > 4 or mask_shape[-1] != s or
                             (constant(mask) is None and len(mask_shape) != 4)):
        return f"the mask of shape {mask.shape} is not [batch|1, heads|1, rows, {s}]"
    kind, mask_value = _mask_kind(mask, s)
    last, w_out, b_out = _output_projection(joined, nodes)
    if dh % TILE and w_out is None:
        return f"head size {dh} is not a multiple of {TILE} and no output projection takes the zero padding"
    if len(xq.shape or ()) != 3:
        return f"the attention input has rank {len(xq.shape or ())}, not 3 ([batch, sequence, hidden])"
    return Match(softmax, nodes, dict(x=xq, w=(wq, wk, wv), b=(bq, bk, bv), heads=n, head_size=dh,
                                      scale=scale * sq * sk, mask=mask, mask_kind=kind, mask_value=mask_value,
                                      guard=guard is not None and kind == "input", w_out=w_out, b_out=b_out,
                                      out=last, note=_note(kind, guard is not None)))


def _note(kind: str, guard: bool) -> str:
    """What the fused node does with the mask and the exporter's NaN guard (the pass notes' key)."""
    if kind == "input":
        return "mask from the inputs, fully masked rows zeroed" if guard else "mask from the inputs"
    dropped = ", NaN guard dropped" if guard else ""
    return {"none": "no mask", "causal": "causal", "constant": "constant mask"}[kind] + dropped


def _pad_heads(w: np.ndarray, heads: int, dh: int, padded: int) -> np.ndarray:
    """[..., heads * dh] -> [..., heads * padded], each head's columns followed by zeros."""
    lead = w.shape[:-1]
    out = np.zeros(lead + (heads, padded), np.float32)
    out[..., :dh] = w.reshape(lead + (heads, dh))
    return out.reshape(lead + (heads * padded,))


def rewrite(graph: gs.Graph, m: Match) -> None:
    v = m.values
    n, dh = v["heads"], v["head_size"]
    padded = -(-dh // TILE) * TILE
    (wq, wk, wv), (bq, bk, bv) = v["w"], v["b"]
    w = np.concatenate([_pad_heads(wq * v["scale"], n, dh, padded), _pad_heads(wk, n, dh, padded),
                        _pad_heads(wv, n, dh, padded)], axis=1)
    b = np.concatenate([_pad_heads(bq * v["scale"], n, dh, padded), _pad_heads(bk, n, dh, padded),
                        _pad_heads(bv, n, dh, padded)])
    name = m.anchor.name
    inputs = [v["x"], gs.Constant(f"{name}_qkv_weight", w), gs.Constant(f"{name}_qkv_bias", b)]
    mask = v["mask"] if v["mask_kind"] in ("input",) else None
    if v["mask_kind"] == "constant":
        mask = gs.Constant(f"{name}_mask", np.ascontiguousarray(v["mask_value"]))
    inputs.append(mask if mask is not None else gs.Variable.empty())
    if v["w_out"] is not None:
        w_out = v["w_out"].T
        inputs += [gs.Constant(f"{name}_out_weight", _pad_heads(w_out, n, dh, padded).T),
                   gs.Constant(f"{name}_out_bias", v["b_out"])]
    fused = gs.Node("Attention", name=name, domain=FUSED_DOMAIN, inputs=inputs,
                    attrs={"num_heads": n, "head_size": dh, "causal": int(v["mask_kind"] == "causal"),
                           "guard": int(v["guard"])})
    out = v["out"]
    for node in m.nodes:
        node.outputs.clear()
    replace_outputs(graph, out, fused)


# ttnn's SDPA refuses float32 q, k, v (docs/ttnn-facts.md §21): bfloat16 programs only
RULE = FusionRule("attention", "Softmax", match, rewrite, dtypes=("bf16",))
