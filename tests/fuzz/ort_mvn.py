"""onnxruntime's MeanVarianceNormalization where the variance is 0: the documented ort-gap of the fuzz oracle.

onnxruntime divides by the deviation alone (0 / 0 = NaN where a slice is constant); the spec's function adds
1e-9 to it (0), and so does the program.  The NaNs travel on: a Hardmax, ArgMax or comparison after the MVN
turns them into ordinary numbers that differ from the program's.  `spec_variant(model)` is the same model with
every MeanVarianceNormalization replaced by a call of a model-local function holding the schema's own function
body (for the model's opset), which onnxruntime inlines and runs op by op; the oracle calls a mismatch
onnxruntime's when the program matches the variant in every output.  A float32 MVN's function runs in float64
(its input cast to double, its constants double, its result cast back): in float32, E[x^2] - E[x]^2 over equal
values is a rounding of either sign, NaN under the square root or a deviation of 1e-4 that turns x - mean's own
rounding into an output near +-1 (fuzz seed 127 case 1111: onnxruntime 1, its float32 function 0.00058, the spec
0); in float64 it is exactly 0 there.
"""
from __future__ import annotations

from typing import Optional

import numpy as np
import onnx
from onnx import TensorProto, defs, helper, numpy_helper

DOMAIN = "fuzz.spec"  # the local functions' domain
WIDE = "MeanVarianceNormalizationFloat64"  # the function for float32 inputs


def spec_variant(model: onnx.ModelProto) -> Optional[onnx.ModelProto]:
    """`model` with its (main graph's) MeanVarianceNormalization nodes computed by the spec's function (in float64
    for a float32 input); None when it has none or the schema gives no function for its opset."""
    mvns = [n for n in model.graph.node if n.op_type == "MeanVarianceNormalization" and n.domain in ("", "ai.onnx")]
    opset = next((e.version for e in model.opset_import if e.domain in ("", "ai.onnx")), 0)
    if not mvns or opset < 9:
        return None
    body = defs.get_schema("MeanVarianceNormalization", opset).get_function_with_opset_version(opset)
    if not body:
        return None
    function = onnx.FunctionProto()
    function.ParseFromString(body)
    function.domain = DOMAIN
    float32 = _float32_values(model)
    variant = onnx.ModelProto()
    variant.CopyFrom(model)
    for node in variant.graph.node:
        if node.op_type == "MeanVarianceNormalization" and node.domain in ("", "ai.onnx"):
            node.domain = DOMAIN
            if node.input[0] in float32:
                node.op_type = WIDE
            if not any(a.name == "axes" for a in node.attribute):
                node.attribute.append(helper.make_attribute("axes", [0, 2, 3]))  # the schema's default
    variant.functions.extend([function, _in_float64(function)])
    variant.opset_import.append(helper.make_opsetid(DOMAIN, 1))
    return variant


def _float32_values(model: onnx.ModelProto) -> set:
    """Names of the main graph's values inferred float32 (none when inference fails)."""
    try:
        inferred = onnx.shape_inference.infer_shapes(model)
    except Exception:  # noqa: BLE001 - no types known: every MVN keeps the float32 function
        return set()
    return {v.name for v in list(inferred.graph.input) + list(inferred.graph.value_info) +
            list(inferred.graph.output) if v.type.tensor_type.elem_type == TensorProto.FLOAT}


def _in_float64(function: onnx.FunctionProto) -> onnx.FunctionProto:
    """The function computing in float64 between a Cast of its input and a Cast of its result to float32."""
    wide = onnx.FunctionProto()
    wide.CopyFrom(function)
    wide.name = WIDE
    (x,), (y,) = wide.input, wide.output
    del wide.node[:]
    wide.node.append(helper.make_node("Cast", [x], [x + "_f64"], to=TensorProto.DOUBLE))
    for node in function.node:
        copy = wide.node.add()
        copy.CopyFrom(node)
        copy.input[:] = [x + "_f64" if name == x else name for name in copy.input]
        copy.output[:] = [y + "_f64" if name == y else name for name in copy.output]
        for attr in copy.attribute:
            if attr.type == onnx.AttributeProto.TENSOR and attr.t.data_type == TensorProto.FLOAT:
                attr.t.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(attr.t).astype(np.float64)))
    wide.node.append(helper.make_node("Cast", [y + "_f64"], [y], to=TensorProto.FLOAT))
    return wide
