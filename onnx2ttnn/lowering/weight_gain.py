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
     one's r^2 within its share of the budget, in the orientation its rule uploads it, weight_dtype.weight_upload:
     a conv's [KH*KW*IC, OC], a MatMul's [K, N]); each weight's errors are kept for lowering (Module.rounding),
     which judges the same arrays again (block_float.RoundingErrors: each weight rounded once per conversion);
     with each rounded conv weight, its bias as ttnn.conv2d prepares it, in the weight's block float
     (conv_bias_rounding.py: not counted in sum(r_i^2); its error shows as amplification);
  2. onnxruntime runs the graph twice on seeded inputs (as verify's: N(0, 1) floats, token ids below their
     table's rows, other integers ones; frontend/index_inputs.py), with the
     exact weights and with those weights rounded as tt-metal packs them (weight_dtype.bfp_round), and each one's
     reader taking its activation as the weight's math fidelity reads it (operand_truncation.py: HiFi2 and LoFi
     read 6 of its 7 bits);
  3. the loss L is the largest 1 - PCC over the float outputs (an output of one element, which has no PCC, by
     verify's closeness in the same units: output_loss), the amplification a = 2 L / sum(r_i^2).

The budget B promised the weights a loss of at most B / 2.  When L keeps that promise, nothing changes (gain 1:
a plain MLP with Relus measures a = 1.16 and still fits).  When L breaks it, the gain is a: lowering divides the
model's budget by it (weight_dtype.model_error_budget): the weights it then takes add at most B / a to sum(r^2),
which loses about a * (B / a) / 2 = B / 2, as promised.  The gain is a property of the model on these inputs,
measured once per conversion: two onnxruntime runs and one rounding of each candidate weight on the host.  A
graph onnxruntime cannot run (an op it does not know) or not in limits.MEASURE_SECONDS (each run), or with no
candidate weight, keeps gain 1 and says why; so does one whose candidates all round exactly (sum(r_i^2) = 0:
both runs would be one), without running.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import ml_dtypes
import numpy as np
import onnx_graphsurgeon as gs

from onnx2ttnn import limits
from onnx2ttnn.lowering.block_float import RoundingErrors, rounding_errors
from onnx2ttnn.lowering import operand_truncation as truncation
from onnx2ttnn.lowering.conv_bias_rounding import conv_bias_rounding
from onnx2ttnn.lowering.weight_dtype import WEIGHT_OPS, auto_block_float, count_weight_layers, weight_upload
from onnx2ttnn.reference import PCC_THRESHOLD, close_excess

HANDED_BYTES = 4096  # constants from this size go to onnxruntime as arrays, not serialized (_run_both)
# candidate weights of this many bytes or more are rounded into bfloat16 (_compact), at the price of a second
# onnxruntime session (~0.1 s for ppocr_rec's 860 nodes: more than its 4 MB saved are worth)
COMPACT_BYTES = 64 << 20
CAST_BFLOAT16 = 13  # the opset from which Cast takes bfloat16 (_run_both casts the rounded weights)
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
    biases: int = 0  # conv biases rounded with their weights (conv_bias_rounding)

    @property
    def amplification(self) -> float:
        """2 L / sum(r^2): the loss over the estimate's (1 for a network that passes relative errors on)."""
        return 2.0 * self.loss / self.spent if self.spent else 1.0


def measure(graph: gs.Graph, budget: float, exempt=frozenset(), index_rows=None,
            rounding: Optional[RoundingErrors] = None, fidelity: Optional[str] = None) -> WeightGain:
    """The gain of `graph`'s outputs on the block-float errors of the weights auto would take under `budget`
    (`exempt`: weights auto does not judge by the budget, left exact: dequantized ones, the tail's logit weights;
    `index_rows`: integer inputs used as row indices -> the rows they may pick, Module.index_rows; `fidelity`:
    the one --math-fidelity forces, or None).  Each candidate's errors go into `rounding`, where lowering finds
    them."""
    share = budget / max(1, count_weight_layers(graph))
    rounding = RoundingErrors() if rounding is None else rounding
    rounded = {}
    candidates = list(_candidates(graph, exempt))
    compact = sum(_nbytes(tensor) for tensor, _ in candidates) >= COMPACT_BYTES
    biases, bits = {}, {}
    for tensor, upload in candidates:
        values = np.asarray(tensor.values, np.float32)
        uploaded = upload.to(values)
        errors, moved = rounding_errors(uploaded)
        rounding.put(uploaded, errors)
        fmt = auto_block_float(errors, share)
        if fmt is not None:
            back = upload.back(moved[fmt], values.shape)
            rounded[tensor.name] = (_compact(back) if compact else back, errors[fmt] ** 2)
            biases.update(conv_bias_rounding(tensor, fmt))
            bits[tensor.name] = truncation.activation_bits(fmt, fidelity)
        del moved
    if not rounded:
        return WeightGain(why="no weight within its share")
    spent, count = sum(r2 for _, r2 in rounded.values()), len(rounded)
    if spent == 0.0:  # each one exact in its block float: the rounded run would be the exact run, loss 0
        return WeightGain(weights=count, why="the weights it would round are exact in their block floats")
    replaced = {**{name: v for name, (v, _) in rounded.items()}, **biases}
    try:
        exact, approx = _run_both(graph, replaced, index_rows or {}, bits)
    except Exception as exc:  # noqa: BLE001 - onnxruntime refuses the graph: the estimate stands as it was
        return WeightGain(spent=spent, weights=count, why=f"onnxruntime: {str(exc).splitlines()[0][:120]}")
    loss = max((output_loss(a, b) for a, b in zip(exact, approx) if a.dtype.kind == "f"), default=0.0)
    broken = loss > budget / 2  # the budget's promise to the weights
    return WeightGain(max(1.0, 2.0 * loss / spent) if broken else 1.0, loss, spent, count, biases=len(biases))


def _candidates(graph: gs.Graph, exempt):
    """(constant, how its rule uploads it: weight_dtype.weight_upload) of each weight weight_dtype judges, once
    per constant."""
    seen = set()
    for node in graph.nodes:
        if node.op not in WEIGHT_OPS or len(node.inputs) < 2 or not isinstance(node.inputs[1], gs.Constant):
            continue
        weight = node.inputs[1]
        if weight.name in seen or weight.name in exempt or np.asarray(weight.values).dtype.kind != "f":
            continue
        seen.add(weight.name)
        yield weight, weight_upload(node)


def _nbytes(tensor: gs.Constant) -> int:
    return int(np.prod(tensor.shape, dtype=np.int64)) * np.dtype(tensor.dtype).itemsize


def _compact(rounded: np.ndarray) -> np.ndarray:
    """A rounded weight in bfloat16 (ml_dtypes) when that holds it exactly, half its float32 bytes: a block float
    keeps at most 7 significant bits, so all but values subnormal in float32 fit; else in float32."""
    bits = np.asarray(rounded, np.float32).view(np.uint32)  # (in its layout: a transposed view stays one)
    if np.any(bits & np.uint32(0xFFFF)):
        return bits.view(np.float32)
    return (bits >> 16).astype(np.uint16).view(ml_dtypes.bfloat16)


def _run_both(graph: gs.Graph, replaced: dict, index_rows: dict, truncated=None) -> tuple[list, list]:
    """The graph's outputs from onnxruntime with its weights as they are, then with `replaced` swapped in and the
    activations of the weights' readers read as their fidelity reads them (`truncated`: weight -> bits;
    operand_truncation.py, in a second session): the replaced weights become graph inputs (onnxruntime_model), fed
    the graph's own arrays in the first session; in the second, those `replaced` holds in bfloat16 come in as
    bfloat16 inputs each cast to float32 just before its first reader (_cast_inputs), so the rounded weights take
    half the memory."""
    from onnx2ttnn import ort

    as_inputs = set(replaced)
    model, handed, feeds = onnxruntime_model(graph, index_rows, as_inputs)
    names = [o.name for o in model.graph.output]
    session = ort.session(model.SerializeToString(), initializers=handed)
    exact = [np.asarray(a) for a in ort.run(session, names, feeds, limits.MEASURE_SECONDS)]
    compact = {name for name, values in replaced.items() if values.dtype != np.float32}
    if compact and default_opset(model) < CAST_BFLOAT16:
        replaced = {name: values.astype(np.float32) for name, values in replaced.items()}
        compact = set()
    truncated = truncated if truncated and default_opset(model) >= truncation.MIN_OPSET else {}
    if compact or truncated:
        del session
        truncation.truncate_operands(model.graph, truncated)
        renamed = _cast_inputs(model.graph, compact)
        session = ort.session(model.SerializeToString(), initializers=handed)
        replaced = {renamed.get(name, name): values for name, values in replaced.items()}
    inputs = {name: values for name, values in feeds.items() if name not in as_inputs}
    approx = ort.run(session, names, {**inputs, **replaced}, limits.MEASURE_SECONDS)
    return exact, [np.asarray(a) for a in approx]


def onnxruntime_model(graph: gs.Graph, index_rows: dict, as_inputs=frozenset()) -> tuple:
    """`graph` exported for onnxruntime: (the model, the arrays handed to its session, its feeds).  The feeds are
    verify's seeded inputs (_inputs), plus the constants `as_inputs` names, made graph inputs and fed the graph's
    own arrays.  The other constants of HANDED_BYTES or more stay initializers but are handed to onnxruntime as the
    graph's own arrays (ort.session's `initializers`: external initializers), so the model it parses holds no
    weights: no serialized copy, none of its own, each lazy weight read once (into `graph`, where lowering finds
    it)."""
    copy = graph.copy()
    feeds = _inputs(copy.inputs, index_rows)
    originals = graph.tensors()
    handed = {}
    top = {id(node) for node in copy.nodes}
    for name, constant in copy.tensors().items():
        if not isinstance(constant, gs.Constant):
            continue
        if name in as_inputs:
            feeds[name] = np.asarray(originals[name].values)
            _as_input(copy, constant, feeds[name])
        elif _handed(constant, top):
            handed[name] = np.ascontiguousarray(originals[name].values)
            _as_input(copy, constant, handed[name])
    model = gs.export_onnx(copy, do_type_check=False)
    del copy
    _external(model.graph, handed)
    return model, handed, feeds


def default_opset(model) -> int:
    """The default domain's opset of an onnx model (0 when it imports none)."""
    return next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 0)


def _cast_inputs(graph, names: set) -> dict:
    """The float32 graph inputs `names` made bfloat16 inputs (renamed: name -> new name, returned), each cast back
    to float32 under its own name just before the first node that reads it (or, for one a subgraph may read,
    before the first node holding a subgraph)."""
    from onnx import AttributeProto, TensorProto, helper

    taken = {i.name for i in graph.input} | {o for node in graph.node for o in node.output}
    renamed = {}
    for tensor in graph.input:
        if tensor.name in names:
            new = tensor.name + "_bf16"
            while new in taken:
                new += "_"
            taken.add(new)
            renamed[tensor.name] = new
            tensor.name = new
            tensor.type.tensor_type.elem_type = TensorProto.BFLOAT16
    nodes, pending = [], dict(renamed)

    def cast(name):
        nodes.append(helper.make_node("Cast", [pending.pop(name)], [name], to=TensorProto.FLOAT,
                                      name=renamed[name] + "_cast"))

    for node in graph.node:
        if any(a.type in (AttributeProto.GRAPH, AttributeProto.GRAPHS) for a in node.attribute):
            for name in list(pending):
                cast(name)
        for name in node.input:
            if name in pending:
                cast(name)
        nodes.append(node)
    for name in list(pending):  # read by no node (a graph output)
        cast(name)
    del graph.node[:]
    graph.node.extend(nodes)
    return renamed


def _handed(constant: gs.Constant, top: set) -> bool:
    """Whether `constant` goes to onnxruntime as a handed array: HANDED_BYTES or more of a numpy type onnxruntime
    takes, read by top-level nodes only (`top`: their ids; a subgraph's reader keeps it serialized)."""
    dtype = np.dtype(constant.dtype) if constant.dtype is not None else None
    if dtype is None or dtype.kind not in "fiub" or dtype.name == "bfloat16":
        return False
    if int(np.prod(constant.shape, dtype=np.int64)) * dtype.itemsize < HANDED_BYTES:
        return False
    return all(id(node) in top for node in constant.outputs)


def _as_input(graph: gs.Graph, constant: gs.Constant, values: np.ndarray) -> None:
    """`constant` replaced by a graph input of its name, dtype and shape."""
    variable = gs.Variable(constant.name, dtype=values.dtype, shape=list(values.shape))
    for node in list(constant.outputs):
        for k, tensor in enumerate(node.inputs):
            if tensor is constant:
                node.inputs[k] = variable
    graph.inputs.append(variable)


def _external(graph, handed: dict) -> None:
    """The handed arrays' graph inputs made initializers whose data lies outside the model (onnxruntime takes the
    arrays themselves, ort.session's `initializers`)."""
    from onnx import TensorProto, helper

    kept = [i for i in graph.input if i.name not in handed]
    del graph.input[:]
    graph.input.extend(kept)
    for name, values in handed.items():
        tensor = TensorProto(name=name, data_type=helper.np_dtype_to_tensor_dtype(values.dtype),
                             dims=values.shape, data_location=TensorProto.EXTERNAL)
        for key, value in (("location", "handed"), ("offset", "0"), ("length", str(values.nbytes))):
            entry = tensor.external_data.add()
            entry.key, entry.value = key, value
        graph.initializer.append(tensor)


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


def output_loss(exact: np.ndarray, approx: np.ndarray) -> float:
    """1 - PCC of two float outputs (0 for equal ones; 1 when the rounded run gives non-finite values).  An output
    with no PCC (one element, two, or constant) verify judges by closeness (reference.close_excess: passing while the
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
    if a.size <= 2 or a.std() == 0 or b.std() == 0:
        return (1.0 - PCC_THRESHOLD["bf16"]) * close_excess(b, a) ** 2
    return float(max(0.0, 1.0 - np.corrcoef(a, b)[0, 1]))
