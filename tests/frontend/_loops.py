"""Loop models in ONNX text for the control-flow tests (tests/frontend/test_control_flow.py, test_unroll_plan.py,
test_validate_control_flow.py): parsing them, checking a conversion against onnxruntime, the ops left after
fold-constants."""
from __future__ import annotations

import numpy as np
import onnx
import onnx.parser

import onnx2ttnn
from onnx2ttnn.frontend.importer import import_model
from onnx2ttnn.options import Options
from onnx2ttnn.passes.base import PassContext
from onnx2ttnn.passes.fold_constants import FoldConstants


def parse_model(text: str, opset: int = 17) -> onnx.ModelProto:
    """The graph in ONNX text as a checked model at `opset`."""
    ir = onnx.helper.find_min_ir_version_for([onnx.helper.make_opsetid("", opset)])
    model = onnx.parser.parse_model(f'<ir_version: {max(ir, 8)}, opset_import: ["" : {opset}]>\n' + text)
    onnx.checker.check_model(model, full_check=True)
    return model


def verify_matches(model: onnx.ModelProto, seed: int = 0):
    """The converted model matches onnxruntime in fp32 on random inputs."""
    rng = np.random.default_rng(seed)
    inputs = {}
    for vi in model.graph.input:
        shape = [d.dim_value for d in vi.type.tensor_type.shape.dim]
        inputs[vi.name] = rng.standard_normal(shape).astype(np.float32)
    report = onnx2ttnn.verify(model, inputs=inputs, dtype="fp32")
    assert report.passed, report.text()
    return report


def folded_ops(model: onnx.ModelProto) -> list[str]:
    """The op types left after fold-constants (which unrolls and inlines)."""
    module = import_model(model, {})
    FoldConstants().run(module, PassContext(Options()))
    return [n.op for n in module.graph.nodes]


LOOP = """
g (float[2,3] x) => (float[2,3] y, float[4,2,3] s) {
    m = Constant <value = int64 {4}> ()
    t = Constant <value = bool {1}> ()
    y, s = Loop (m, t, x) <body = body (int64 i, bool c, float[2,3] v) => (bool c2, float[2,3] w, float[2,3] u) {
        c2 = Identity (c)
        f = Cast <to = 1> (i)
        a = Add (v, f)
        w = Mul (a, x)
        u = Identity (a)
    }>
}
"""
