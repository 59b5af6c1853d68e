"""Ill-conditioned outputs: where onnxruntime's own float32 result is further from the exact value than the
tolerance, the fuzz oracle cannot judge the program against it.

A chain such as Atanh(Tanh(y)) for y near 8 amplifies one float32 rounding of tanh (0.99999976 or
0.99999982, one unit apart) by 1 / (1 - t^2), about 2.7e6, into 0.14 at the output (fuzz seed 47 case 1042:
onnxruntime's tanh is one unit below the correctly rounded value, the simulator's is the correctly rounded
one).  `float64_outputs(model, feeds)` evaluates the model made float64 (`widened`) with onnx's reference
evaluator; `closer_than_onnxruntime(exact, got, want, ...)` is True when, at every element where the program
and onnxruntime differ beyond the tolerance, onnxruntime is itself beyond the tolerance from the float64 value
and the program is at least as close to it; where the float64 value is not finite (an infinite InstanceNormalization
scale: the spec's `scale * normalized + B` is +-inf, onnxruntime's rearranged arithmetic NaN, fuzz seed 59 case
954), the program must give exactly that value and onnxruntime another; onnxruntime's NaN where the float64
value is finite excuses only a program within the tolerance of that value (a MeanVarianceNormalization over
equal values: the float64 value is the spec's 0, onnxruntime's kernel and its float32 run of the function NaN;
the evaluator runs MVN as the schema's function, whose constants `widened` makes float64 too).  A defect of the
program makes it far from both, so it stays a mismatch; so does any case the reference evaluator cannot run.
When the float64 value does not excuse a difference, `rounded_outputs` (each node's float values rounded to
float32, correctly) is asked the same question: a large factor can carry one rounding into the argument of a
periodic function, where only the float32 arguments say who is right (fuzz seed 181 case 346).
"""
from __future__ import annotations

import numpy as np
import onnx
from onnx import numpy_helper


def float64_outputs(model: onnx.ModelProto, feeds: dict) -> dict:
    """{output name: value} of `model` widened to float64 (`widened`) by onnx's reference evaluator on float64
    copies of the float32 feeds; {} when it cannot run it."""
    from onnx.reference import ReferenceEvaluator

    from tests.fuzz.ort_mvn import spec_variant

    wide = {k: v.astype(np.float64) if v.dtype == np.float32 else v for k, v in feeds.items()}
    try:  # (the evaluator's MeanVarianceNormalization is the schema's function with float32 constants)
        values = ReferenceEvaluator(widened(spec_variant(model) or model)).run(None, wide)
    except Exception:  # noqa: BLE001 - any op or type it does not handle: no float64 reference
        return {}
    return dict(zip([o.name for o in model.graph.output], values))


def rounded_outputs(model: onnx.ModelProto, feeds: dict) -> dict:
    """{output name: value} of `model` widened to float64 with every float value a top-level node writes rounded
    to float32 (Cast to float and back): float32 arithmetic rounded correctly op by op, which neither onnxruntime's
    kernels nor the simulator's promise.  Where a large factor amplifies one rounding into the argument of a
    periodic function (Tan(1e9 * Tanh(x)), fuzz seed 181 case 346: onnxruntime's tanh one unit off the correctly
    rounded value at 11 of 16 elements, times 1e9 is 64 apart, 82 apart after the tan), the float64 evaluation
    is as far from both and judges nothing; this one keeps the float32 arguments.  {} when it cannot run."""
    from onnx.reference import ReferenceEvaluator

    from tests.fuzz.ort_mvn import spec_variant

    wide = {k: v.astype(np.float64) if v.dtype == np.float32 else v for k, v in feeds.items()}
    try:
        values = ReferenceEvaluator(_rounded_per_node(widened(spec_variant(model) or model))).run(None, wide)
    except Exception:  # noqa: BLE001 - any op or type it does not handle, or inference fails: no reference
        return {}
    return dict(zip([o.name for o in model.graph.output], values))


def _rounded_per_node(wide: onnx.ModelProto) -> onnx.ModelProto:
    """`wide` (widened) with a Cast to float32 and back after each top-level float64 value a node writes."""
    inferred = onnx.shape_inference.infer_shapes(wide)
    types = {vi.name: vi.type.tensor_type.elem_type for vi in list(inferred.graph.value_info)
             + list(inferred.graph.output)}
    nodes = []
    for node in wide.graph.node:
        rounding = []
        for k, name in enumerate(node.output):
            if name and types.get(name) == onnx.TensorProto.DOUBLE:
                node.output[k] = f"{name}__wide"
                rounding += [onnx.helper.make_node("Cast", [f"{name}__wide"], [f"{name}__f32"],
                                                   to=onnx.TensorProto.FLOAT),
                             onnx.helper.make_node("Cast", [f"{name}__f32"], [name], to=onnx.TensorProto.DOUBLE)]
        nodes += [node, *rounding]
    del wide.graph.node[:]
    wide.graph.node.extend(nodes)
    return wide


def widened(model: onnx.ModelProto) -> onnx.ModelProto:
    """`model` with float32 made float64: graph inputs and outputs, initializers, Constant values and Cast /
    CastLike targets (value_info dropped), in the main graph, every subgraph and every model-local function."""
    wide = onnx.ModelProto()
    wide.CopyFrom(model)
    _widen_graph(wide.graph)
    for function in wide.functions:
        _widen_nodes(function.node)
    return wide


def _widen_graph(graph: onnx.GraphProto) -> None:
    del graph.value_info[:]
    for vi in list(graph.input) + list(graph.output):
        if vi.type.tensor_type.elem_type == onnx.TensorProto.FLOAT:
            vi.type.tensor_type.elem_type = onnx.TensorProto.DOUBLE
    for k, tensor in enumerate(graph.initializer):
        if tensor.data_type == onnx.TensorProto.FLOAT:
            graph.initializer[k].CopyFrom(_double(tensor))
    _widen_nodes(graph.node)


def _widen_nodes(nodes) -> None:
    for node in nodes:
        for attr in node.attribute:
            if attr.type == onnx.AttributeProto.TENSOR and attr.t.data_type == onnx.TensorProto.FLOAT:
                attr.t.CopyFrom(_double(attr.t))
            elif attr.type == onnx.AttributeProto.GRAPH:
                _widen_graph(attr.g)
            elif attr.name == "to" and node.op_type == "Cast" and attr.i == onnx.TensorProto.FLOAT:
                attr.i = onnx.TensorProto.DOUBLE
        if node.op_type == "Constant" and any(a.name in ("value_float", "value_floats") for a in node.attribute):
            attr = node.attribute[0]
            value = np.asarray(attr.f if attr.name == "value_float" else list(attr.floats), np.float64)
            del node.attribute[:]
            node.attribute.append(onnx.helper.make_attribute("value", numpy_helper.from_array(value)))


def _double(tensor: onnx.TensorProto) -> onnx.TensorProto:
    return numpy_helper.from_array(numpy_helper.to_array(tensor).astype(np.float64), tensor.name)


def closer_than_onnxruntime(exact, got, want: np.ndarray, rtol: float, atol: float) -> bool:
    """Whether every element where `got` (the program) and `want` (onnxruntime) differ beyond the tolerance is
    one where `want` is beyond it from `exact` (the float64 value) and `got` is no further from it."""
    if exact is None or got is None or want.dtype.kind != "f":
        return False
    exact, got, want = (np.asarray(a, dtype=np.float64) for a in (exact, got, want))
    if not exact.shape == got.shape == want.shape:
        return False
    with np.errstate(invalid="ignore"):
        differ = ~np.isclose(got, want, rtol=rtol, atol=atol, equal_nan=True)
        if not differ.any():
            return False
        e, g, w = exact[differ], got[differ], want[differ]
        finite = np.isfinite(e)
        # a non-finite exact value (an infinite parameter, an overflow): the program must give it exactly, as
        # the spec's formula does, where onnxruntime's rearranged arithmetic gives another (NaN for +-inf)
        same = lambda a, b: (a == b) | (np.isnan(a) & np.isnan(b))  # noqa: E731
        if not (same(g[~finite], e[~finite]).all() and not same(w[~finite], e[~finite]).any()):
            return False
        ort_off = ~np.isclose(w[finite], e[finite], rtol=rtol, atol=atol)
        # onnxruntime's NaN where the exact value is finite says nothing of how far the program may be: there it
        # must be within the tolerance of the exact value
        no_further = np.where(np.isnan(w[finite]), np.isclose(g[finite], e[finite], rtol=rtol, atol=atol),
                              np.abs(g[finite] - e[finite]) <= np.abs(w[finite] - e[finite]))
    return bool(ort_off.all() and no_further.all())
