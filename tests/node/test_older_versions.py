"""The older schema versions a rule claims, checked: node-test cases re-stamped at them (tests/node/restamped.py)
convert and match in fp32, and every claimed version without such a case is checked by a named unit test."""
from __future__ import annotations

import pytest

from tests.node.restamped import claimed_versions, restamped_cases, node_test_versions
from tests.node.runner import result

# Claimed versions no node-test case is at and no one-node case of a newer version of the same rule re-stamps
# to (the attribute forms of the reductions, Squeeze, Split ... have node-test cases at no version): the unit
# test that checks each against onnxruntime.  (ReduceMax-11 and ReduceMin-11 are at node-test cases: the expanded
# DynamicQuantizeLinear cases.)
UNIT_TESTED = {
    **{(op, v): "tests/lowering/test_reduce.py::test_axes_attribute_versions_match_onnxruntime"
       for op, versions in (("ReduceL1", (1, 11, 13)), ("ReduceL2", (1, 11, 13)), ("ReduceLogSum", (1, 11, 13)),
                            ("ReduceLogSumExp", (1, 11, 13)), ("ReduceMax", (1, 12)),
                            ("ReduceMean", (1, 11)), ("ReduceMin", (1, 12, 13)), ("ReduceProd", (1, 11, 13)),
                            ("ReduceSum", (1, 11)), ("ReduceSumSquare", (1, 11, 13)))
       for v in versions},
    ("Clip", 6): "tests/lowering/test_lowering_rules.py Clip-6-attributes",
    ("DepthToSpace", 1): "tests/lowering/test_shape_tensor_ops.py DepthToSpace-1-DCR",
    ("Einsum", 12): "tests/lowering/test_matmul.py (opset 12)",
    ("GroupNormalization", 18): "tests/lowering/test_norm.py groupnorm-opset18-per-group",
    ("Hardmax", 1): "tests/fallback/test_fallback_ops.py Hardmax-1-2d-coerced",
    ("Hardmax", 11): "tests/fallback/test_fallback_ops.py Hardmax-2d-coerced",
    ("LogSoftmax", 1): "tests/lowering/test_norm.py logsoftmax-opset9-axis2",
    ("LogSoftmax", 11): "tests/lowering/test_norm.py logsoftmax-opset11-axis0",
    ("Pad", 2): "tests/lowering/test_pad.py constant-attrs-opset2",
    ("Resize", 10): "tests/lowering/test_resize.py opset10-nearest",
    ("Resize", 11): "tests/lowering/test_resize.py opset11-linear",
    ("Softmax", 1): "tests/lowering/test_norm.py softmax-opset9-default-axis",
    ("Softmax", 11): "tests/lowering/test_norm.py softmax-opset11-coerced",
    ("Split", 2): "tests/lowering/test_shape_tensor_ops.py Split-2-split-attribute",
    ("Split", 11): "tests/lowering/test_shape_tensor_ops.py Split-11-equal-parts",
    ("Squeeze", 1): "tests/lowering/test_shape_tensor_ops.py Squeeze-1-axes-attribute",
    ("Squeeze", 11): "tests/lowering/test_shape_tensor_ops.py Squeeze-11-axes-attribute",
    ("TopK", 1): "tests/lowering/test_select.py topk-opset9-k-attribute",
    ("TopK", 10): "tests/lowering/test_select.py topk-opset10-k-input",
    ("Unsqueeze", 1): "tests/lowering/test_shape_tensor_ops.py Unsqueeze-1-axes-attribute",
    ("Upsample", 7): "tests/lowering/test_resize.py (Upsample opset 7)",
    **{(op, v): "tests/frontend/test_control_flow.py::test_every_claimed_schema_version_rewrites_and_matches_"
                "onnxruntime"
       for op, versions in (("If", (13, 16, 21, 23, 24, 25)), ("Loop", (1, 13, 16, 19, 21, 23, 24, 25)),
                            ("Scan", (11, 16, 19, 21, 23, 24)))
       for v in versions},
}


@pytest.mark.parametrize("case", [pytest.param(c, id=c.name) for c in restamped_cases()])
def test_restamped_case(case):
    outcome = result(case, "fp32")
    assert outcome.passed, f"{case.op} at schema {case.opset}: {outcome.stage}: {outcome.message}"


def test_every_claimed_version_is_checked():
    """A claimed version is at a node-test case, re-stamped to, or in UNIT_TESTED (and only then)."""
    restamped = {(c.op, c.opset) for c in restamped_cases()}
    unchecked = sorted({(op, v) for op, groups in claimed_versions().items() for versions in groups
                        for v in versions} - set(node_test_versions()) - restamped)
    assert unchecked == sorted(UNIT_TESTED)
