"""A conv's bias as the device holds it beside a block-float weight, for the gain measurement (weight_gain.py).

ttnn.conv2d prepares the bias [1, 1, 1, OC] in its Conv2dConfig's weights_dtype (docs/ttnn-facts.md §29): when
auto gives a conv's weight bfloat8_b (or bfloat4_b), its bias goes into the same block float, one tile row, so 16
consecutive output channels share one exponent and a bias far below its group's largest loses its low bits.  The
measurement rounds what the program rounds: with the weight, the bias the fusions will hand the conv (its own
constant bias plus the per-channel Add conv-bias folds in, or a following BatchNormalization's shift, as
conv-batchnorm folds it), rounded as one row.  PP-OCRv6's recognizer: its 27 rounded convs' biases carry relative
errors 0.005 to 0.012, and a bf16 program with the weights and these biases rounded verifies at 0.9897 where
the weights alone give 0.9962 (docs/design.md §6.43); a linear's bias stays bf16 (its own tensor), so only convs.
The error goes into one constant the graph holds (own bias, the Add's constant, or BatchNormalization's B), read
by that node alone; a bias spread over several constants takes it in the last that qualifies.
"""
from __future__ import annotations

import numpy as np
import onnx_graphsurgeon as gs

from onnx2ttnn.fusion import Match, constant, conv_bias, conv_bn, other_input
from onnx2ttnn.lowering.block_float import bfp_round


def conv_bias_rounding(weight: gs.Constant, fmt: str) -> dict[str, np.ndarray]:
    """{constant name: its values with the rounding error of the fused bias added} for each Conv reading `weight`
    as its weight whose bias ttnn prepares in `fmt` (bfp8 / bfp4); empty for a conv without a bias."""
    found = {}
    for node in weight.outputs:
        if node.op == "Conv" and len(node.inputs) > 1 and node.inputs[1] is weight:
            found.update(_rounded(node, int(weight.shape[0]), fmt))
    return found


def _rounded(conv: gs.Node, channels: int, fmt: str) -> dict[str, np.ndarray]:
    """The one constant of `conv`'s fused bias that takes the rounding error (or nothing)."""
    parts = _bias_parts(conv, channels)
    if not parts:
        return {}
    total = sum(scale * value for _, scale, value in parts)
    exact = np.asarray(total, np.float32).reshape(1, channels)
    error = bfp_round(exact, fmt).astype(np.float64).reshape(channels) - exact.astype(np.float64).reshape(channels)
    if not np.any(error):
        return {}
    for tensor, scale, _ in reversed(parts):
        if _sole(tensor, channels):
            values = np.asarray(tensor.values, np.float64)
            moved = np.divide(error, scale, out=np.zeros(channels), where=scale != 0)  # (a channel BN zeroes: none)
            return {tensor.name: (values.reshape(-1) + moved).reshape(values.shape).astype(np.float32)}
    return {}


def _bias_parts(conv: gs.Node, channels: int) -> list[tuple[gs.Constant, np.ndarray, np.ndarray]]:
    """(constant, its factor in the fused bias, its per-channel contribution before that factor) for each
    constant the fused bias is made of; empty when there is no bias or a part is not constant."""
    parts = []
    if len(conv.inputs) > 2 and conv.inputs[2].name:
        own = conv.inputs[2]
        if constant(own) is None:
            return []
        parts.append((own, np.ones(channels), np.asarray(own.values, np.float64).reshape(-1)))
    found = conv_bias.match(conv)
    if isinstance(found, Match):
        add = found.values["add"]
        parts.append((other_input(add, conv.outputs[0]), np.ones(channels), found.values["bias"]))
        return parts  # (a BatchNormalization after the Add is folded after conv-bias: not modelled)
    found = conv_bn.match(conv)
    if isinstance(found, Match):
        bn = found.values["bn"]
        gamma, beta, mean, var = (np.asarray(p, np.float64).reshape(-1) for p in found.values["params"])
        scale = gamma / np.sqrt(var + float(bn.attrs.get("epsilon", 1e-5)))
        parts = [(tensor, factor * scale, value) for tensor, factor, value in parts]
        parts.append((bn.inputs[2], np.ones(channels), beta - mean * scale))
    return parts


def _sole(tensor: gs.Tensor, channels: int) -> bool:
    """Whether `tensor` is a float constant of one value per channel read by one node only."""
    return (isinstance(tensor, gs.Constant) and len(tensor.outputs) == 1 and np.asarray(tensor.values).size == channels
            and np.asarray(tensor.values).dtype.kind == "f")
