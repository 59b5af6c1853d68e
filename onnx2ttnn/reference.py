"""verify's reference made fair where onnxruntime's float32 values, or a PCC of them, say nothing of the program.

1. Sigmoid in float64.  onnxruntime 1.32's CPU Sigmoid on float32 has an absolute error of about 6e-8 (it
   computes the tail from a value near 1): against the exact value its result is off by 0.6 % at x = -12,
   7 % at -14, 47 % at -16, and is 0 below about -17.5 (docs/design.md §6.28).  A program whose accurate
   sigmoid gets those outputs right would be compared with noise (its float64 Sigmoid is no better below
   -36: 0).  `accurate_sigmoids` runs every float32 Sigmoid of the reference as 1 / (1 + exp(-x)) in float64,
   cast back to float32: the exact values, rounded, down to float32's smallest normal.  (An input of no
   declared type, such as an intermediate made an output by --per-op, is cast back with CastLike; before
   opset 15, which has none, and for other float types, onnxruntime's own Sigmoid stays.)
2. The exponential tail.  Below x = -4.6 (outputs under 0.01) sigmoid(x) equals e^x within 1 %, so an
   absolute error d of the logit x becomes a relative error d of the output.  When every reference value of
   a Sigmoid's output lies there (a detector's probability map of an image with nothing in it, ~1e-6), the
   PCC of the outputs is the PCC of exponentials of the logits: a bfloat16 network whose logits carry
   absolute errors of 0.3 on values of -25 +- 5 (logit PCC 0.995) gets an output PCC of 0.98, an exact
   sigmoid included.  There `compare` takes the PCC of the logits, log(y) - log(1 - y) of both outputs
   (each floored at LOGIT_FLOOR, where float32 sigmoids reach 0), and says so in the report.  An output
   with any reference value at or above TAIL_MAX is compared as it is.
3. QDQ models at onnxruntime's basic graph level.  A model with QuantizeLinear / DequantizeLinear nodes means
   the ONNX operators' values: quantize, dequantize, float ops between.  From its extended level on,
   onnxruntime replaces DQ -> op -> Q groups by its integer kernels (QLinearMatMul, QGemm, QLinearAdd, ...),
   whose requantization rounds otherwise: on a QDQ ViT-B/16 its two runs of the same file differ at pooler PCC
   0.981 (docs/design.md §6.34), more than any program implementing the operators differs from either.
   `reference_level` gives such a model the basic level (constant folding and node eliminations, the same
   values bit for bit as no optimization), every other model the default.  The basic level's own QDQ
   transformers, which do change values (merging two QDQ pairs, quantizing a float weight between pairs), are
   off in that session (ort.py BASIC_BUT_EXACT).
"""
from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

TAIL_MAX = 0.01  # a Sigmoid output whose reference values all lie below this is compared by its logits
ONE = "onnx2ttnn_reference_one"  # the float64 1 of the rewritten sigmoids
LOGIT_FLOOR = -80.0  # sigmoid(-87.3) is float32's smallest normal: below, outputs flush to 0
# The one place verify's tolerances live (tt-metal's convention for bf16 programs; fp32 programs must do better),
# here so that what judges a program (verify) and what predicts its judgement (lowering/weight_gain.py) agree:
# a float output passes at a PCC of at least PCC_THRESHOLD ...
PCC_THRESHOLD = {"bf16": 0.99, "fp32": 0.9999, "auto": 0.99}  # auto: bf16's promise, whatever it settles on
# ... and a constant one (one element, or all equal: no PCC), or one of two elements (whose PCC is +-1), when every
# value is within CLOSE_ATOL + CLOSE_RTOL times onnxruntime's (numpy.allclose)
CLOSE_RTOL, CLOSE_ATOL = 1e-2, 1e-3


def close_excess(got: np.ndarray, want: np.ndarray) -> float:
    """The largest |got - want| over verify's tolerance for a constant output, CLOSE_ATOL + CLOSE_RTOL |want|
    (at most 1: such an output passes)."""
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    return float(np.max(np.abs(got - want) / (CLOSE_ATOL + CLOSE_RTOL * np.abs(want)), initial=0.0))


def accurate_sigmoids(model: onnx.ModelProto) -> onnx.ModelProto:
    """A copy of `model` whose main-graph float32 Sigmoids run in float64 (or `model` when it has none)."""
    types = {v.name: v.type.tensor_type.elem_type for v in  # (an added output of no declared type: unknown)
             list(model.graph.input) + list(model.graph.value_info) + list(model.graph.output)
             if v.type.tensor_type.elem_type != TensorProto.UNDEFINED}
    types.update((t.name, t.data_type) for t in model.graph.initializer)
    sigmoids = [n for n in model.graph.node if n.op_type == "Sigmoid" and n.domain in ("", "ai.onnx")]
    if any(n.input[0] not in types for n in sigmoids):  # a file without value_info (paddle2onnx's): infer them
        types.update(_inferred_types(model))
    opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 0)
    # a float32 input, or one of no known type where CastLike (opset 15) gives the result the input's type back
    wanted = [i for i, n in enumerate(model.graph.node) if n.op_type == "Sigmoid" and n.domain in ("", "ai.onnx")
              and types.get(n.input[0], 0 if opset >= 15 else -1) in (TensorProto.FLOAT, 0)]
    if not wanted:
        return model
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    nodes = []
    for index, node in enumerate(copy.graph.node):
        if index not in wanted:
            nodes.append(node)
            continue
        t = [f"{node.output[0]}__f64_{k}" for k in range(5)]  # 1 / (1 + exp(-x)) in float64
        nodes += [helper.make_node("Cast", [node.input[0]], [t[0]], to=TensorProto.DOUBLE),
                  helper.make_node("Neg", [t[0]], [t[1]]), helper.make_node("Exp", [t[1]], [t[2]]),
                  helper.make_node("Add", [t[2], ONE], [t[3]]), helper.make_node("Reciprocal", [t[3]], [t[4]]),
                  helper.make_node("Cast", [t[4]], [node.output[0]], to=TensorProto.FLOAT, name=node.name)
                  if types.get(node.input[0]) == TensorProto.FLOAT else
                  helper.make_node("CastLike", [t[4], node.input[0]], [node.output[0]], name=node.name)]
    del copy.graph.node[:]
    copy.graph.node.extend(nodes)
    copy.graph.initializer.append(numpy_helper.from_array(np.array(1.0), ONE))
    return copy


def _inferred_types(model: onnx.ModelProto) -> dict[str, int]:
    """Element types ONNX type inference gives the model's values (none when it cannot run on the model)."""
    try:
        inferred = onnx.shape_inference.infer_shapes(model)
    except Exception:  # noqa: BLE001 - a model inference refuses (or one over 2 GiB) keeps what it declared
        return {}
    return {v.name: v.type.tensor_type.elem_type for v in list(inferred.graph.value_info) + list(inferred.graph.output)
            if v.type.tensor_type.elem_type != TensorProto.UNDEFINED}


def sigmoid_outputs(model: onnx.ModelProto) -> frozenset[str]:
    """The graph outputs a Sigmoid node computes."""
    made = {out for n in model.graph.node if n.op_type == "Sigmoid" and n.domain in ("", "ai.onnx")
            for out in n.output}
    return frozenset(o.name for o in model.graph.output if o.name in made)


def in_exponential_tail(want: np.ndarray) -> bool:
    """Whether every reference value of a sigmoid output lies where sigmoid(x) is e^x within 1 %."""
    want = np.asarray(want)
    return want.dtype.kind == "f" and want.size > 1 and bool(np.all(want < TAIL_MAX))


def logits(values: np.ndarray) -> np.ndarray:
    """The sigmoid's input recovered from its output, in float64, floored at LOGIT_FLOOR."""
    y = np.clip(np.asarray(values, dtype=np.float64), 0.0, 1.0)
    with np.errstate(divide="ignore"):
        return np.maximum(np.log(y) - np.log1p(-y), LOGIT_FLOOR)


# the ONNX ops whose presence makes a model a quantized one in QDQ form (onnxruntime fuses them from its extended
# graph level on, with its own integer rounding)
QDQ_OPS = frozenset({"QuantizeLinear", "DequantizeLinear", "DynamicQuantizeLinear"})


def reference_level(model: onnx.ModelProto) -> str:
    """onnxruntime's graph optimization level for verify's reference: "basic" for a model with QDQ nodes in its
    main graph (see 3. above), else "default"."""
    qdq = any(node.op_type in QDQ_OPS and node.domain in ("", "ai.onnx") for node in model.graph.node)
    return "basic" if qdq else "default"
