"""Operands that are bound to the case's values at conversion time (made initializers), and why.

onnx2ttnn compiles static programs: every tensor has a static shape and every op its axes fixed when the
program is generated (ttnn calls take shapes, axes and counts as Python ints).  An operand that decides an
output's shape or the axes an op works on must therefore be known when converting — in exported models it
is a constant (or folds to one).  The backend tests feed such operands as graph inputs; the harness binds
them to the case's own values, turning them into initializers, as a static-shape export would.  Resize's
roi is bound for the same reason: it fixes the sampling positions the interpolation is compiled for.  Operands
that carry data (Gather indices, Where conditions, Pad's constant value, ...) stay runtime inputs.

SHAPE_OPERANDS: ONNX op type -> input positions, per the op's schema.

PARAMETER_OPERANDS are bound the same way, for a second reason: they are a layer's learned parameters
(convolution weights and biases, normalization scales, biases and running statistics), which every
exporter writes as initializers, and which ttnn wants prepared once on the host before the program runs
(conv2d and conv_transpose2d take host weights and prepare them; norms take tile-layout parameters;
recurrent ops transpose and join their weights once, so that one matmul projects every time step).
Quantization parameters (scales, zero points, and the quantized weights of QLinearConv / ConvInteger) are
bound for the first reason too: calibration fixes them, and onnxruntime's quantizers write them as
initializers.  The computation itself still runs on the case's runtime data input.

An expanded case (the op's function body written out as nodes) has the inputs of its base op's case, by
name; it binds the same operands the base case binds, as a model exported from the op would.
"""
from __future__ import annotations

SHAPE_OPERANDS: dict[str, tuple[int, ...]] = {
    "Reshape": (1,),  # shape
    "Expand": (1,),  # shape
    "Tile": (1,),  # repeats
    "Slice": (1, 2, 3, 4),  # starts, ends, axes, steps
    "Split": (1,),  # split sizes
    "Squeeze": (1,),  # axes
    "Unsqueeze": (1,),  # axes
    "Pad": (1, 3),  # pads, axes
    "ReduceSum": (1,), "ReduceMean": (1,), "ReduceMax": (1,), "ReduceMin": (1,), "ReduceProd": (1,),
    "ReduceL1": (1,), "ReduceL2": (1,), "ReduceLogSum": (1,), "ReduceLogSumExp": (1,),
    "ReduceSumSquare": (1,),  # axes
    "TopK": (1,),  # K
    "CumSum": (1,),  # axis
    "Range": (0, 1, 2),  # start, limit, delta: the output length
    "ConstantOfShape": (0,),  # shape
    "OneHot": (1,),  # depth
    "Resize": (1, 2, 3),  # roi (the sampling window the interpolation is compiled for), scales, sizes
    "Upsample": (1,),  # scales
    "CenterCropPad": (1, 2),  # shape, axes
    "AffineGrid": (1,),  # size: the output grid's shape
    "If": (0,),  # cond: the branch taken
    "Loop": (0, 1),  # M, cond: the iteration count
    # sequence_lens: how many steps each batch entry runs, which the unrolled recurrence is compiled for
    "LSTM": (4,), "GRU": (4,), "RNN": (4,),
}

PARAMETER_OPERANDS: dict[str, tuple[int, ...]] = {
    "Conv": (1, 2),  # W, B
    "ConvTranspose": (1, 2),  # W, B
    "BatchNormalization": (1, 2, 3, 4),  # scale, B, input_mean, input_var
    "InstanceNormalization": (1, 2),  # scale, B
    "LayerNormalization": (1, 2),  # Scale, B
    "GroupNormalization": (1, 2),  # scale, bias
    "RMSNormalization": (1,),  # scale
    "LSTM": (1, 2, 3, 7),  # W, R, B, P (peepholes)
    "GRU": (1, 2, 3),  # W, R, B
    "RNN": (1, 2, 3),  # W, R, B
    # quantization parameters: calibrated scales and zero points (and the quantized weights and biases of
    # the operator-format ops), which quantizers write as initializers
    "QuantizeLinear": (1, 2),  # y_scale, y_zero_point
    "DequantizeLinear": (1, 2),  # x_scale, x_zero_point
    "QLinearMatMul": (1, 2, 4, 5, 6, 7),  # a_scale, a_zero_point, b_scale, b_zero_point, y_scale, y_zero_point
    "QLinearConv": (1, 2, 3, 4, 5, 6, 7, 8),  # x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zp, B
    "MatMulInteger": (2, 3),  # a_zero_point, b_zero_point
    "ConvInteger": (1, 2, 3),  # w, x_zero_point, w_zero_point
}


def shape_operand_names(model, base_model=None) -> set[str]:
    """Names of the graph inputs of `model` that feed a shape operand of some node (of `model`, or of
    `base_model`, the one-node case an expanded case expands)."""
    feeds = {vi.name for vi in model.graph.input} - {t.name for t in model.graph.initializer}
    names = shape_operand_names(base_model) & feeds if base_model is not None else set()
    for node in model.graph.node:
        if node.domain not in ("", "ai.onnx"):
            continue
        for position in SHAPE_OPERANDS.get(node.op_type, ()) + PARAMETER_OPERANDS.get(node.op_type, ()):
            if position < len(node.input) and node.input[position] in feeds:
                names.add(node.input[position])
    return names
