"""The measured gain of a model's outputs on its weights' block-float errors: what auto's budget
(lowering/weight_dtype.py) assumes to be 1, checked in float32 with onnxruntime (docs/design.md §6.30).

auto's estimate: a weight whose block-float rounding carries a relative error r adds r^2 / 2 to 1 - PCC of the
outputs, so weights carrying r_1 .. r_n lose sum(r_i^2) / 2.  That holds when the network passes a relative
error on unchanged (gain 1: a linear layer, a transformer's residual stream).  A network can amplify it: in
PP-OCRv4's recognizer (a MobileOne-style conv backbone with hardswish, then an SVTR neck) the bfloat8_b rounding
of one 3x3 depthwise conv (r = 0.0084) costs the logits 1 - PCC = 0.0098, 280 times r^2 / 2, while its neck
linears and its head pass theirs on at 0.1 to 1 (measured one weight at a time in float32).  Nothing in a
weight's values tells the two apart; the network's Jacobian does.  So the gain is measured:

  1. the weights auto would take in a block float, by lowering's own rule (weight_dtype.auto_block_float: each
     one's r^2 within its share of the budget, in the orientation the rule uploads it: a conv's
     [KH*KW*IC, OC], a MatMul's [K, N]);
  2. onnxruntime runs the graph twice on seeded inputs (as verify's: N(0, 1) floats, token ids below their
     table's rows, other integers ones; frontend/index_inputs.py), with the
     exact weights and with those weights rounded as tt-metal packs them (weight_dtype.bfp_round);
  3. the loss L is the largest 1 - PCC over the float outputs (an output of one element, which has no PCC, by
     verify's closeness in the same units: _loss), the amplification a = 2 L / sum(r_i^2).

The budget B promised the weights a loss of at most B / 2.  When L keeps that promise, nothing changes (gain 1:
a plain MLP with Relus measures a = 1.16 and still fits).  When L breaks it, the gain is a: lowering divides the
model's budget by it (weight_dtype.model_error_budget): the weights it then takes add at most B / a to sum(r^2),
which loses about a * (B / a) / 2 = B / 2, as promised.  The gain is a property of the model on these inputs,
measured once per conversion: two onnxruntime runs and one rounding of each candidate weight on the host.  A
graph onnxruntime cannot run (an op it does not know), or with no candidate weight, keeps gain 1 and says why.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import onnx_graphsurgeon as gs

from onnx2ttnn.lowering.weight_dtype import WEIGHT_OPS, auto_block_float, count_weight_layers
from onnx2ttnn.reference import PCC_THRESHOLD, close_excess

SEED = 0  # the inputs' seed: verify's random inputs are seeded 0 too (emit/program_main.py random_inputs)


@dataclass(frozen=True)
class WeightGain:
    """What the measurement found: `gain` (the budget's divisor: 1, or the amplification when the loss broke the
    budget's promise), the loss it saw, the sum of r^2 it put in, how many weights it rounded, and `why` when it
    measured nothing."""

    gain: float = 1.0
    loss: float = 0.0
    spent: float = 0.0
    weights: int = 0
    why: str = ""

    @property
    def amplification(self) -> float:
        """2 L / sum(r^2): the loss over the estimate's (1 for a network that passes relative errors on)."""
        return 2.0 * self.loss / self.spent if self.spent else 1.0


def measure(graph: gs.Graph, budget: float, exempt=frozenset(), index_rows=None) -> WeightGain:
    """The gain of `graph`'s outputs on the block-float errors of the weights auto would take under `budget`
    (`exempt`: weights auto does not judge by the budget, left exact: dequantized ones, the tail's logit weights;
    `index_rows`: integer inputs used as row indices -> the rows they may pick, Module.index_rows)."""
    share = budget / max(1, count_weight_layers(graph))
    rounded = {}
    for tensor, uploaded_to, back in _candidates(graph, exempt):
        values = np.asarray(tensor.values, np.float32)
        fmt, moved, errors = auto_block_float(uploaded_to(values), share)
        if fmt is not None:
            rounded[tensor.name] = (back(moved, values.shape).astype(values.dtype), errors[fmt] ** 2)
    if not rounded:
        return WeightGain(why="no weight within its share")
    spent = sum(r2 for _, r2 in rounded.values())
    try:
        exact, approx = _run_both(graph, {name: v for name, (v, _) in rounded.items()}, index_rows or {})
    except Exception as exc:  # noqa: BLE001 - onnxruntime refuses the graph: the estimate stands as it was
        return WeightGain(spent=spent, weights=len(rounded), why=f"onnxruntime: {str(exc).splitlines()[0][:120]}")
    loss = max((_loss(a, b) for a, b in zip(exact, approx) if a.dtype.kind == "f"), default=0.0)
    broken = loss > budget / 2  # the budget's promise to the weights
    return WeightGain(max(1.0, 2.0 * loss / spent) if broken else 1.0, loss, spent, len(rounded))


def _candidates(graph: gs.Graph, exempt):
    """(constant, its uploaded form from its values, the uploaded form back to the ONNX shape) of each weight
    weight_dtype judges, once per constant."""
    seen = set()
    for node in graph.nodes:
        if node.op not in WEIGHT_OPS or len(node.inputs) < 2 or not isinstance(node.inputs[1], gs.Constant):
            continue
        weight = node.inputs[1]
        if weight.name in seen or weight.name in exempt or np.asarray(weight.values).dtype.kind != "f":
            continue
        seen.add(weight.name)
        if node.op in ("Conv", "ConvAct") and weight.values.ndim >= 3:  # prepared [KH*KW*IC, OC]
            yield weight, lambda w: w.reshape(w.shape[0], -1).T, lambda u, shape: u.T.reshape(shape)
        elif node.op == "Gemm" and node.attrs.get("transB", 0):  # uploaded transposed: [K, N]
            yield weight, lambda w: w.T, lambda u, shape: u.T
        else:
            yield weight, lambda w: w, lambda u, shape: u.reshape(shape)


def _run_both(graph: gs.Graph, replaced: dict, index_rows: dict) -> tuple[list, list]:
    """The graph's outputs from onnxruntime with its weights as they are, then with `replaced` swapped in (one
    session: the replaced weights become graph inputs, fed either way, so the model onnxruntime parses holds
    only the other weights)."""
    from onnx2ttnn import ort

    copy = graph.copy()
    feeds = _inputs(copy.inputs, index_rows)
    tensors = copy.tensors()
    exact = {}
    for name in replaced:
        constant = tensors[name]
        exact[name] = np.asarray(constant.values)
        variable = gs.Variable(name, dtype=exact[name].dtype, shape=list(exact[name].shape))
        for node in list(constant.outputs):
            for k, tensor in enumerate(node.inputs):
                if tensor is constant:
                    node.inputs[k] = variable
        copy.inputs.append(variable)
    model = gs.export_onnx(copy, do_type_check=False)
    names = [o.name for o in model.graph.output]
    session = ort.session(model.SerializeToString())
    return ([np.asarray(a) for a in ort.run(session, names, {**feeds, **exact})],
            [np.asarray(a) for a in ort.run(session, names, {**feeds, **replaced})])


def _inputs(inputs: list, index_rows: dict) -> dict:
    """Seeded inputs of the graph's static shapes, by verify's convention: floats N(0, 1), row indices uniform
    below `index_rows`, everything else ones."""
    rng = np.random.default_rng(SEED)
    feeds = {}
    for tensor in inputs:
        shape, dtype = tuple(int(d) for d in tensor.shape), np.dtype(tensor.dtype)
        feeds[tensor.name] = (rng.standard_normal(shape).astype(dtype) if np.issubdtype(dtype, np.floating) else
                              rng.integers(0, index_rows[tensor.name], shape).astype(dtype)
                              if tensor.name in index_rows else np.ones(shape, dtype=dtype))
    return feeds


def _loss(exact: np.ndarray, approx: np.ndarray) -> float:
    """1 - PCC of two float outputs (0 for equal ones; 1 when the rounded run gives non-finite values).  An output
    with no PCC (one element, or constant) verify judges by closeness (reference.close_excess: passing while the
    excess e is at most 1): its loss is (1 - PCC_THRESHOLD) e^2, quadratic in the error as 1 - PCC is, and equal
    to verify's PCC bound where verify's closeness bound lies (Silero VAD v6's one speech probability: the
    weights auto took moved it by 11 %, e = 1.3, where the PCC of its state outputs lost 0.0006;
    docs/design.md §6.38)."""
    a = np.asarray(exact, np.float64).ravel()
    b = np.asarray(approx, np.float64).ravel()
    finite = np.isfinite(a)
    if not np.all(np.isfinite(b[finite])):
        return 1.0
    a, b = a[finite], b[finite]
    if a.size == 0 or np.array_equal(a, b):
        return 0.0
    if a.size < 2 or a.std() == 0 or b.std() == 0:
        return (1.0 - PCC_THRESHOLD["bf16"]) * close_excess(b, a) ** 2
    return float(max(0.0, 1.0 - np.corrcoef(a, b)[0, 1]))
