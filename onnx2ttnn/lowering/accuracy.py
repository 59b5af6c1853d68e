"""Accuracy at the output tail: which ONNX nodes' results reach a graph output unmixed, and the float32 input a
tail-sensitive unary op gets there.

Every unary default onnx2ttnn emits is ttnn 0.81.1's accurate kernel (docs/ttnn-facts.md §16): no variant
needs switching.  What a bfloat16 program loses at the tail is the input: exp and sigmoid's far tail turn an
input error dx into a relative output error dx (sigmoid(x) ~ exp(x) below about -5), and a bfloat16 logit near
-14 is only known to 1/32, about 3 % of the output.  A model that says "nothing here" with outputs around 1e-6
verifies badly for that alone.  So, in a bfloat16 program, an op whose entry says `tail_float32_input`
(sigmoid, exp) at the output tail takes a float32 input when it can: the conv or matmul that computes its
input writes float32 and accumulates in a float32 dest (the entry's `float32_result` says how), the op runs on
float32 (a float32 dest, docs/ttnn-facts.md §16), and a typecast returns the result to bfloat16, whose
rounding costs 0.4 % at most and is not amplified.

The output tail: a node whose output is a graph output, or is the data a tail node only moves on (TAIL_MOVES:
reshapes, transposes, slices, concatenation, casts; not their shapes or indices).  One reverse walk over the topologically
sorted nodes finds them all (linear in the graph).
Before: `y = sigmoid(conv2d(x))` (bf16 throughout); after:
`c = conv2d(x, dtype=float32, compute_config=fp32 dest); y = typecast(sigmoid(c), bfloat16)`.
"""
from __future__ import annotations

import onnx_graphsurgeon as gs

from onnx2ttnn.ir.graph import TTNNRef
from onnx2ttnn.ir.ttnn_ops import Float32Result, op_info

# ONNX ops that move values without mixing them: an error at their input reaches their output unchanged
TAIL_MOVES = frozenset({"Reshape", "Transpose", "Flatten", "Squeeze", "Unsqueeze", "Identity", "Slice", "Concat",
                        "Split", "Cast", "Expand", "Tile", "Gather", "DepthToSpace", "SpaceToDepth"})


def output_tail(graph: gs.Graph) -> frozenset[int]:
    """The ids of the ONNX nodes whose results reach a graph output through value-moving nodes only."""
    outputs = {t.name for t in graph.outputs}
    tail: set[int] = set()
    for node in reversed(graph.nodes):
        if any(out.name in outputs or any(_moves_on(c, out, tail) for c in out.outputs) for out in node.outputs):
            tail.add(id(node))
    return frozenset(tail)


def _moves_on(consumer: gs.Node, tensor: gs.Tensor, tail: set[int]) -> bool:
    """Whether a tail node passes `tensor`'s values on: a value mover reading them as its data (input 0; every
    input of Concat), not as a shape, an index or a bound."""
    return (id(consumer) in tail and consumer.op in TAIL_MOVES
            and (consumer.op == "Concat" or (bool(consumer.inputs) and consumer.inputs[0] is tensor)))


def tail_float32(ctx, node: gs.Node, ttnn_op: str) -> bool:
    """Lower `out = ttnn_op(x)` with a float32 x when the node is at the output tail of a bfloat16 program and
    x's producer can write float32; False (nothing done) otherwise."""
    if ctx.dtype != "bf16" or id(node) not in ctx.output_tail or not op_info(ttnn_op).tail_float32_input:
        return False
    x, form = ctx.value_with_form(node.inputs[0])
    producer = _float32_producer(ctx, node.inputs[0], x)
    if producer is None:
        return False
    producer.attrs.update(_dtype="f32", dtype=TTNNRef("float32"))
    if op_info(producer.op).float32_result == Float32Result.DTYPE_AND_DEST:
        producer.attrs["_float_dest"] = True  # choose-kernel-configs: fp32_dest_acc_en (unary_modes.txt)
    out = node.outputs[0]
    y = ctx.op(ttnn_op, [x], x.shape, name=f"{out.name}_fp32", _dtype="f32")
    ctx.bind(out, ctx.op("typecast", [y], x.shape, name=out.name), form)
    return True


def _float32_producer(ctx, tensor: gs.Tensor, x: gs.Variable):
    """The ttnn node computing `x` if it can write float32 and nothing else reads the value: the ONNX tensor
    has one consumer and is no graph output, and the ttnn node has no other output or reader yet."""
    if isinstance(tensor, gs.Constant) or len(tensor.outputs) != 1 or tensor.name in ctx.output_names:
        return None
    producer = x.inputs[0] if x.inputs else None
    if producer is None or x.outputs or len(producer.outputs) != 1 or producer.attrs.get("_dtype"):
        return None
    return producer if op_info(producer.op).float32_result is not None else None
