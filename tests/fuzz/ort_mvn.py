"""onnxruntime's MeanVarianceNormalization where the variance is 0: the documented ort-gap of the fuzz oracle.

onnxruntime divides by the deviation alone (0 / 0 = NaN where a slice is constant); the spec's function adds
1e-9 to it (0), and so does the program.  The NaNs travel on: a Hardmax, ArgMax or comparison after the MVN
turns them into ordinary numbers that differ from the program's.  `spec_variant(model)` is the same model with
every MeanVarianceNormalization replaced by a call of a model-local function holding the schema's own function
body (for the model's opset), which onnxruntime inlines and runs op by op; the oracle calls a mismatch
onnxruntime's when the program matches the variant in every output.
"""
from __future__ import annotations

from typing import Optional

import onnx
from onnx import defs, helper

DOMAIN = "fuzz.spec"  # the local function's domain


def spec_variant(model: onnx.ModelProto) -> Optional[onnx.ModelProto]:
    """`model` with its (main graph's) MeanVarianceNormalization nodes computed by the spec's function; None
    when it has none or the schema gives no function for its opset."""
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
    variant = onnx.ModelProto()
    variant.CopyFrom(model)
    for node in variant.graph.node:
        if node.op_type == "MeanVarianceNormalization" and node.domain in ("", "ai.onnx"):
            node.domain = DOMAIN
            if not any(a.name == "axes" for a in node.attribute):
                node.attribute.append(helper.make_attribute("axes", [0, 2, 3]))  # the schema's default
    variant.functions.append(function)
    variant.opset_import.append(helper.make_opsetid(DOMAIN, 1))
    return variant
