"""The device format of a weight (the --weights option, and the dequantized weights fold-dequantize marks): the
rules that upload weights (linear's, the fused attention's QKV and output projections, conv2d's prepared
weights, embedding tables, the recurrent ops' W and R: a forced format only) ask here.

Float weights (--weights):
- `bf16`: the compute dtype, as every program was before the option (a conv keeps ttnn's float32 preparation);
- `bfp8` / `bfp4`: bfloat8_b / bfloat4_b for every matmul / linear / conv weight;
- `auto` (the default): per weight, from the error block-float rounding puts into that weight alone (numpy, no
  torch): r = ||round(w) - w|| / ||w||.  A layer y = x W whose W carries a relative error r, uncorrelated with x,
  has an output whose relative error is r too, i.e. a PCC of 1 / sqrt(1 + r^2) ~ 1 - r^2 / 2; the errors of
  successive layers add up in variance, so a model whose weights carry r_1 .. r_n keeps its output PCC at about
  1 - sum(r_i^2) / 2.  The model's budget is MODEL_ERROR_BUDGET on sum(r_i^2) (a PCC of 0.9975 by that estimate,
  a quarter of the way to verify's 0.99 bound: the rest is left to bf16 activations, math fidelity and layers
  that amplify errors), split evenly over the model's weights (count_weight_layers): a weight takes bfloat4_b
  when its r^2 is within its share, else bfloat8_b when that is, else it stays bf16, and the conversion summary
  says why.  Measured: bfloat8_b rounding gives r ~ 0.006 on Gaussian weights (within the share of models up
  to ~140 weights), bfloat4_b r ~ 0.1 (never within: auto takes bfloat4_b only for weights that block floats
  represent almost exactly, e.g. few distinct magnitudes per 16 values).  The simulator's verify on the zoo is
  the proof (tests/lowering/test_weight_formats.py, tests/zoo); tools/weight_bisect.py finds the culprit
  layers when a model falls under 0.99.  A model that decides greedily in a Loop or Scan (ArgMax / TopK in its
  body: a table decoder's tokens), or branches at an If on a comparison of float values, keeps every weight bf16
  (greedy_decision; docs/design.md §6.42): a pick or branch its weights' errors flip changes all that follows,
  which no PCC budget bounds.  A weight whose node computes the
  float32 logit of a sigmoid or exp at the output tail
  (lowering/accuracy.py) stays bf16: its error would reach the output unmixed and
  amplified by the exponential.  Such a model's whole budget is divided by EXPONENTIAL_TAIL_SHARE: in the
  exponential tail verify compares the logits (onnx2ttnn/reference.py), and a detector's logits spread by a
  fraction of their magnitude (PP-OCRv4's DB head: -25 +- 5), which multiplies the weights' relative errors by
  that ratio in the compared PCC; the estimate above, which assumes a spread like the magnitude, leaves bf16
  activations nothing there (ppocr_det's logit PCC: 0.9899 under the full budget, 0.9955 under a quarter,
  docs/design.md §6.28).  And the budget is divided by the model's measured gain: how much its outputs amplify
  its weights' errors over this estimate, measured once per conversion in float32 with onnxruntime
  (lowering/weight_gain.py, passes/measure_weight_gain.py; PP-OCRv4's recognizer: 5.1, docs/design.md §6.30).

Dequantized weights (passes/fold_dequantize.py) under auto and bf16 keep their own rule: bfloat8_b when its
rounding moves them by at most BFP8_BUDGET of their quantization step, else the compute dtype; bfp8 / bfp4
apply to them too.  Under --dtype fp32, auto and bf16 keep weights in float32, except a dequantized linear
weight under auto (or bfp8), which goes up as its integer codes in bfloat8_b, exact (lowering/weight_codes.py).
"""
from __future__ import annotations

from typing import Callable, NamedTuple, Optional

import numpy as np
import onnx
import onnx_graphsurgeon as gs

from onnx2ttnn.ir.dtypes import float_dtype
from onnx2ttnn.lowering.block_float import (AUTO_ORDER, BFP_FACE, BLOCK_FLOAT_BITS, bfp8_round,  # noqa: F401
                                            bfp_round, relative_error)
from onnx2ttnn.lowering.context import LoweringContext

# A dequantized weight goes to the device as bfloat8_b when that moves its values by less than this fraction
# of their own quantization step (each value's error over its scale, root mean square over the tensor), i.e.
# when the block-float weight still tells the int8 codes apart on average; else it stays bfloat16.  A
# judgement, not a measurement: it keeps the program's weights within the quantized model's own resolution.
BFP8_BUDGET = 0.5
# auto: the budget on the sum over the model's weights of their squared relative rounding errors (module doc)
MODEL_ERROR_BUDGET = 0.005
# ... divided by this for a model with an exponential output tail (exponential_tail; module doc)
EXPONENTIAL_TAIL_SHARE = 4


class Upload(NamedTuple):
    """How a rule uploads an ONNX weight: `to` its values in the device tensor's orientation (block-float groups
    along its last dim: what the format is judged on), `back` from that orientation to the ONNX shape."""

    to: Callable[[np.ndarray], np.ndarray]
    back: Callable[[np.ndarray, tuple], np.ndarray]


AS_IS = Upload(lambda w: w, lambda u, shape: u.reshape(shape))  # linear's [K, N] is the ONNX [K, N]
TRANSPOSED = Upload(lambda w: w.T, lambda u, shape: u.T)  # Gemm transB: the ONNX [N, K] goes up as [K, N]
# conv2d's prepared weights, [KH*KW*IC/groups, OC] (lowering/conv.py; the ONNX [OC, IC/groups, KH, KW] or its
# 1-D [OC, IC/groups, KW]): block-float groups run along the out channels
PREPARED = Upload(lambda w: w.reshape(w.shape[0], -1).T, lambda u, shape: u.T.reshape(shape))
# the ONNX ops whose constant second input is a weight the rules here decide the format of, and how each rule
# uploads it (weight_upload: Gemm's depends on transB); lowering and the gain measurement both ask here
WEIGHT_OPS = {"MatMul": AS_IS, "Linear": AS_IS, "Gemm": AS_IS, "Conv": PREPARED, "ConvAct": PREPARED}
# ONNX ops whose output-tail instances take a float32 logit (lowering/accuracy.py): auto keeps the weight of the
# node computing that logit in bf16, since a block-float weight's error would reach the output unmixed
TAIL_SENSITIVE = frozenset({"Sigmoid", "Exp"})
# ops that pick an index by value: inside a Loop or Scan, a greedy decision its later steps build on
GREEDY_OPS = frozenset({"ArgMax", "ArgMin", "TopK"})
# a branch condition decided by value: a comparison of float values (or a float cast to bool) near it
COMPARISONS = frozenset({"Greater", "GreaterOrEqual", "Less", "LessOrEqual", "Equal"})


def weight_upload(node: gs.Node) -> Upload:
    """How the rule of `node` (one of WEIGHT_OPS) uploads its weight, node.inputs[1]."""
    if node.op == "Gemm" and node.attrs.get("transB", 0):
        return TRANSPOSED
    return WEIGHT_OPS[node.op]


def auto_block_float(errors: dict[str, float], share: float) -> Optional[str]:
    """auto's choice for one weight from its relative rounding errors by format (block_float.RoundingErrors):
    the first of bfloat4_b, bfloat8_b whose squared error is within `share`, or None (it stays bf16).  Lowering
    (_auto_dtype) and the gain measurement (weight_gain.py) both ask this."""
    return next((fmt for fmt in AUTO_ORDER if errors[fmt] ** 2 <= share), None)


def model_error_budget(exponential: bool, gain: float = 1.0) -> float:
    """The model's budget on the sum of squared relative errors its block-float formats add (module doc): weights
    spend it first (auto: an even share each), --activations auto what they leave.  `gain`: how much the model
    amplifies them, measured (lowering/weight_gain.py; 1 when not measured)."""
    return MODEL_ERROR_BUDGET / (EXPONENTIAL_TAIL_SHARE if exponential else 1) / max(1.0, gain)


def count_weight_layers(graph: gs.Graph) -> int:
    """How many weights the model's budget is shared by: nodes of WEIGHT_OPS whose second input is a constant
    (or a folded dequantized weight), Gathers from a constant table (embeddings), and the fused attention's
    projections (its QKV weight, and its output weight when it took the projection in)."""
    return sum(_weights_of(node) for node in graph.nodes)


def _weights_of(node: gs.Node) -> int:
    """How many of count_weight_layers' weights `node` reads."""
    if node.op == "Attention":
        return sum(1 for i in (1, 4) if len(node.inputs) > i and isinstance(node.inputs[i], gs.Constant))
    return int((node.op in WEIGHT_OPS and len(node.inputs) > 1 and isinstance(node.inputs[1], gs.Constant))
               or (node.op == "Gather" and isinstance(node.inputs[0], gs.Constant)))


def tail_weights(graph: gs.Graph, tail: frozenset[int]) -> frozenset[str]:
    """Weights of nodes whose only reader is a TAIL_SENSITIVE node at the output tail (`tail`: ids of the tail
    nodes, lowering/accuracy.output_tail), under each name lowering may give them (Gemm's transposed `_t`)."""
    names = set()
    for node in graph.nodes:
        if node.op not in TAIL_SENSITIVE or id(node) not in tail or not node.inputs[0].inputs:
            continue
        producer = node.inputs[0].inputs[0]
        if producer.op in WEIGHT_OPS and len(node.inputs[0].outputs) == 1 and len(producer.inputs) > 1:
            names.update((producer.inputs[1].name, producer.inputs[1].name + "_t"))
    return frozenset(names)


def greedy_decision(graph: gs.Graph) -> Optional[str]:
    """Why auto keeps every weight bf16, for a model that decides by value, else None:
    - a Loop or Scan whose body (at any depth) picks an index by value (GREEDY_OPS): its later steps build on
      each pick, so a weight's error that flips one pick changes all that follows; no PCC budget bounds that,
      and measured in float32 (lowering/weight_gain.py) it is 0 until it is everything (SLANet's decoder,
      docs/design.md §6.42);
    - control flow decided by a comparison of float values: an If's condition, a Loop's condition or its body's
      next one (a wake-word model that runs its verifier when p >= 0.5), at any depth: a flipped branch gives
      another output altogether (openWakeWord's hey_jarvis: bfloat8_b weights moved a 0.503 to 0.484,
      docs/design.md §6.42)."""
    for node in graph.nodes:
        if node.op in ("Loop", "Scan") and _picks(node.attrs.get("body")):
            return (f"the model decides greedily in {node.op} {node.name!r} (ArgMax / TopK in its body): an error "
                    "that flips a pick changes all that follows")
        branching = _branches_on_floats(node)
        if branching:
            return (f"the model branches on a comparison of float values at {branching}: an error that flips the "
                    "branch changes the output")
    return None


def _branches_on_floats(node: gs.Node) -> Optional[str]:
    """"If 'name'" (or Loop) when the node, or one in its bodies, decides control flow by comparing float values."""
    conditions = []
    if node.op == "If" and node.inputs:
        conditions = [node.inputs[0]]
    elif node.op == "Loop":
        body = node.attrs.get("body")
        conditions = [t for t in node.inputs[1:2] if t.name]
        conditions += body.outputs[:1] if isinstance(body, gs.Graph) else []
    if any(_compares_floats(t) for t in conditions):
        return f"{node.op} {node.name!r}"
    for sub in node.attrs.values():
        if isinstance(sub, gs.Graph):
            inner = next((found for n in sub.nodes for found in [_branches_on_floats(n)] if found), None)
            if inner:
                return inner
    return None


def _compares_floats(condition: gs.Tensor) -> bool:
    """Whether a condition is computed from a comparison of float values, or a float cast to bool, within a few
    nodes (a bounded walk back through any op: a condition is near its comparison)."""
    pending, seen = [condition], set()
    while pending and len(seen) < 32:
        tensor = pending.pop()
        if id(tensor) in seen or not tensor.inputs:
            continue
        seen.add(id(tensor))
        producer = tensor.inputs[0]
        if producer.op in COMPARISONS and any(_is_float(t) for t in producer.inputs):
            return True
        if producer.op == "Cast" and producer.attrs.get("to") == onnx.TensorProto.BOOL and producer.inputs \
                and _is_float(producer.inputs[0]):
            return True
        pending.extend(t for t in producer.inputs if not isinstance(t, gs.Constant))
    return False


def _is_float(tensor: gs.Tensor) -> bool:
    return float_dtype(tensor.values.dtype if isinstance(tensor, gs.Constant) else tensor.dtype)


def _picks(body) -> bool:
    """Whether a subgraph, or one nested in it, holds a GREEDY_OPS node."""
    return isinstance(body, gs.Graph) and any(
        node.op in GREEDY_OPS or any(_picks(v) for v in node.attrs.values() if isinstance(v, gs.Graph))
        for node in body.nodes)


def exponential_tail(graph: gs.Graph, tail: frozenset[int]) -> bool:
    """Whether a TAIL_SENSITIVE node (sigmoid, exp) is at the output tail (`tail`: lowering/accuracy.output_tail)."""
    return any(node.op in TAIL_SENSITIVE and id(node) in tail for node in graph.nodes)


def weight_dtype(ctx: LoweringContext, name: str, uploaded: np.ndarray, steps=None) -> Optional[str]:
    """The device dtype of a weight as the rule uploads it (`uploaded`: its values in the device tensor's
    shape, block-float groups along its last dim; `steps`: a dequantized weight's quantization steps,
    broadcastable to it, by default the ones fold-dequantize recorded): "bfp8", "bfp4", or None (the compute
    dtype).  Each decision is recorded in the context for the conversion summary."""
    if name in ctx.keep_bf16 and ctx.weights != "bf16":
        ctx.note_weight_format(name, "bf16", "kept by keep_bf16")
        return None
    if ctx.weights in BLOCK_FLOAT_BITS:
        ctx.note_weight_format(name, ctx.weights, f"--weights {ctx.weights}")
        if name not in ctx.dequantized and ctx.activations == "auto":  # what --activations auto has left
            ctx.note_weight_error(name, relative_error(uploaded, ctx.weights) ** 2)
        if name in ctx.dequantized:
            ctx.note_weight_dtype(name, ctx.weights, "" if ctx.weights == "bfp8" else f"--weights {ctx.weights}")
        return ctx.weights
    if name in ctx.dequantized:
        return _dequantized_dtype(ctx, name, uploaded, steps)
    if ctx.weights == "bf16":
        return None
    if ctx.dtype != "bf16":
        ctx.note_weight_format(name, "f32", "--dtype fp32 keeps weights in float32")
        return None
    return _auto_dtype(ctx, name, uploaded)


def recurrent_weight_dtype(ctx: LoweringContext, name: str, uploaded: np.ndarray) -> Optional[str]:
    """The device dtype of a recurrent op's W or R (lowering/recurrent.py): a forced format (--weights bfp8 /
    bfp4) as any weight; under auto bf16, outside the budget: the recurrence carries a weight's error into every
    later step, which auto's one-layer estimate does not see (an RNN of hidden size 40 over 12 steps: Y_h PCC
    0.977 with bfloat8_b W and R, 0.981 with a bfloat8_b W alone)."""
    if ctx.weights == "auto" and ctx.dtype == "bf16" and name not in ctx.dequantized:
        ctx.note_weight_format(name, "bf16", "a recurrent op's weight: its error reaches every later time step")
        return None
    return weight_dtype(ctx, name, uploaded)


def embedding_dtype(ctx: LoweringContext, name: str, table: np.ndarray) -> Optional[str]:
    """The device dtype of an embedding table.  auto and bf16: the compute dtype, a ROW_MAJOR table (a
    dequantized one too: the programs of before the option), because ttnn.embedding converts a TILE table whole
    to ROW_MAJOR on every call before gathering its rows (docs/ttnn-facts.md §31: a BERT-base word table in
    bfloat8_b reads 25 MB and writes 47 MB per forward where the ROW_MAJOR bf16 one reads 0.2 MB).  A forced
    --weights bfp8 / bfp4: bfloat8_b TILE (it halves the table's DRAM footprint; ttnn.embedding refuses a
    bfloat4_b table, docs/ttnn-facts.md §20)."""
    if ctx.weights == "bf16":
        return None
    if ctx.weights == "auto":  # a dequantized table too (a QDQ BERT-base's word table: 72 MB per forward in TILE)
        why = "an embedding table: ttnn.embedding untilizes a TILE table whole on every call, so it stays ROW_MAJOR"
        if name in ctx.dequantized:
            if ctx.dtype != "bf16":
                ctx.note_weight_dtype(name, "f32", "--dtype fp32 keeps weights in float32")
                return None
            ctx.note_weight_dtype(name, "bf16", why)
        else:
            ctx.note_weight_format(name, "bf16", why)
        return None
    fmt = weight_dtype(ctx, name, table)
    if fmt == "bfp4":
        ctx.note_weight_format(name, "bfp8", "an embedding table: ttnn.embedding refuses bfloat4_b")
        if name in ctx.dequantized:
            ctx.note_weight_dtype(name, "bfp8", "")
        return "bfp8"
    return fmt


def _auto_dtype(ctx: LoweringContext, name: str, uploaded: np.ndarray) -> Optional[str]:
    """bfloat4_b, else bfloat8_b, where the weight's squared relative rounding error is within its share of
    MODEL_ERROR_BUDGET; else None (bf16), with the reason recorded."""
    if name in ctx.tail_weights:
        ctx.note_weight_format(name, "bf16", "computes the float32 logit of a sigmoid or exp at the output tail")
        return None
    if ctx.greedy_decision:
        ctx.note_weight_format(name, "bf16", ctx.greedy_decision)
        return None
    share = model_error_budget(ctx.exponential_tail, ctx.weight_gain) / max(1, ctx.weight_layers)
    errors = ctx.rounding.errors(uploaded)
    fmt = auto_block_float(errors, share)
    if fmt is not None:
        ctx.note_weight_format(name, fmt, f"relative error {errors[fmt]:.4f}")
        ctx.note_weight_error(name, errors[fmt] ** 2)
        return fmt
    tail = " (a quarter: the model ends in an exponential tail)" if ctx.exponential_tail else ""
    tail += f" (divided by {ctx.weight_gain:.1f}: the model amplifies weight errors)" if ctx.weight_gain > 1 else ""
    ctx.note_weight_format(name, "bf16", f"bfloat8_b would add a relative error of {errors['bfp8']:.4f}, over "
                                         f"its share {share ** 0.5:.4f} of the model's budget{tail}")
    return None


def _dequantized_dtype(ctx: LoweringContext, name: str, uploaded: np.ndarray, steps) -> Optional[str]:
    """bfloat8_b for a dequantized weight within BFP8_BUDGET of its quantization step, else None."""
    if ctx.dtype != "bf16":
        ctx.note_weight_dtype(name, "f32", "--dtype fp32 keeps weights in float32")
        return None
    steps = ctx.dequantized[name] if steps is None else steps
    values = np.asarray(uploaded, np.float32)
    moved = (bfp8_round(values) - values) / np.asarray(steps, np.float32)
    rms = float(np.sqrt(np.mean(np.square(moved, dtype=np.float64))))
    if rms <= BFP8_BUDGET:
        ctx.note_weight_dtype(name, "bfp8", "")
        return "bfp8"
    ctx.note_weight_dtype(name, "bf16", f"bfloat8_b would move it by {rms:.2f} of a quantization step (budget "
                                        f"{BFP8_BUDGET})")
    return None
