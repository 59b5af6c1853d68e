"""control_flow: Loops and Scans with a static iteration count are unrolled (and match onnxruntime), nested
bodies and Ifs inside them too, with unique names, within a budget shared by the model's loops.  (When a node
unrolls and why one stays: tests/frontend/test_unroll_plan.py.)"""
from __future__ import annotations

import os

import onnx
import pytest

import onnx2ttnn
from onnx2ttnn.errors import UnsupportedOpsError
from onnx2ttnn.frontend.unroll_plan import UNROLL_BUDGET
from tests.frontend._loops import LOOP, folded_ops, parse_model, verify_matches


def test_a_loop_with_a_constant_trip_count_is_unrolled_and_matches_onnxruntime():
    model = parse_model(LOOP)
    ops = folded_ops(model)
    assert "Loop" not in ops and ops.count("Mul") == 4  # one copy per iteration; the outer `x` is shared
    verify_matches(model)


def test_a_trip_count_that_only_folds_later_is_unrolled():
    model = parse_model(LOOP.replace("m = Constant <value = int64 {4}> ()",
                                     "sh = Shape (x)\n    k = ReduceSum <keepdims = 0> (sh)\n"
                                     "    one = Constant <value = int64 {1}> ()\n    m = Sub (k, one)"))
    assert "Loop" not in folded_ops(model)
    verify_matches(model)


def test_nested_loops_and_an_if_on_the_iteration_number_unroll():
    model = parse_model("""
g (float[3] x) => (float[3] y) {
    m = Constant <value = int64 {3}> ()
    y = Loop (m, "", x) <body = outer (int64 i, bool c, float[3] v) => (bool c2, float[3] w) {
        c2 = Identity (c)
        zero = Constant <value = int64 {0}> ()
        first = Equal (i, zero)
        two = Constant <value = int64 {2}> ()
        p = If (first) <then_branch = t () => (float[3] a) { a = Neg (v) },
                        else_branch = e () => (float[3] b) { b = Add (v, x) }>
        w = Loop (two, "", p) <body = inner (int64 j, bool d, float[3] q) => (bool d2, float[3] r) {
            d2 = Identity (d)
            r = Mul (q, x)
        }>
    }>
}
""")
    ops = folded_ops(model)
    assert "Loop" not in ops and "If" not in ops and ops.count("Mul") == 6
    verify_matches(model)


SCAN = """
g (float[2] s0, float[2,4] xs) => (float[2] s, float[2,4] ys) {
    s, ys = Scan (s0, xs) <num_scan_inputs = 1, scan_input_axes = [1], scan_input_directions = [1],
                          scan_output_axes = [-1], scan_output_directions = [1],
                          body = body (float[2] acc, float[2] x) => (float[2] acc2, float[2] y) {
        acc2 = Add (acc, x)
        y = Mul (acc2, x)
    }>
}
"""


def test_a_scan_over_axis_1_in_reverse_is_unrolled_and_matches_onnxruntime():
    model = parse_model(SCAN)
    ops = folded_ops(model)
    assert "Scan" not in ops and ops.count("Add") == 4
    verify_matches(model)


def test_scan_8_with_a_batch_axis_unrolls_every_batch_entry():
    model = parse_model("""
g (float[2,2] s0, float[2,3,2] xs) => (float[2,2] s, float[2,3,2] ys) {
    s, ys = Scan ("", s0, xs) <num_scan_inputs = 1, directions = [1],
                              body = body (float[2] acc, float[2] x) => (float[2] acc2, float[2] y) {
        acc2 = Add (acc, x)
        y = Identity (acc2)
    }>
}
""", opset=8)
    assert folded_ops(model).count("Add") == 6
    verify_matches(model)


def test_a_runtime_if_condition_is_declined():
    model = parse_model("""
g (float[3] x, bool c) => (float[3] y) {
    y = If (c) <then_branch = t () => (float[3] a) { a = Neg (x) }, else_branch = e () => (float[3] b) { b = Abs (x) }>
}
""")
    with pytest.raises(UnsupportedOpsError, match=r"If not inlined: its condition is not a constant"):
        onnx2ttnn.convert(model, fallback=False)
    assert len(onnx2ttnn.convert(model).region_summaries()) == 1  # by default: a host region


def test_unrolled_names_are_unique_even_against_the_graphs_own_names():
    # the graph already holds names an iteration prefix would produce
    model = parse_model(LOOP.replace("y, s = Loop", "Loop_it0_a = Neg (x)\n    y, s = Loop")
                        .replace("(float[2,3] y, float[4,2,3] s)",
                                 "(float[2,3] y, float[4,2,3] s, float[2,3] Loop_it0_a)"))
    verify_matches(model)


IF = """
g (float[2,3] x) => (float[2,3] y) {
    s = Shape (x)
    r = Size (s)
    two = Constant <value = int64 {2}> ()
    c = Equal (r, two)
    y = If (c) <then_branch = t () => (float[2,3] a) { a = Neg (x) },
                else_branch = e () => (float[2,3] b) { b = Abs (x) }>
}
"""
# (op, schema version) -> the opset of the model that checks it: the claimed versions no node-test case is at
# (tests/node/test_older_versions.py UNIT_TESTED points here)
VERSIONS = [("If", v) for v in (13, 16, 21, 23, 24, 25)] + [("Loop", v) for v in (1, 13, 16, 19, 21, 23, 24, 25)] + \
    [("Scan", v) for v in (11, 16, 19, 21, 23, 24, 25)]


@pytest.mark.parametrize("op,version", VERSIONS, ids=[f"{op}-{v}" for op, v in VERSIONS])
def test_every_claimed_schema_version_rewrites_and_matches_onnxruntime(op, version):
    opset = 10 if version == 1 else version  # Loop-1 serves opsets 1 to 10 (onnxruntime runs 7 on)
    assert onnx.defs.get_schema(op, opset).since_version == version
    model = parse_model({"If": IF, "Loop": LOOP, "Scan": SCAN}[op], opset)
    assert op not in folded_ops(model)
    verify_matches(model)


def test_a_loop_that_runs_no_iteration_passes_its_initial_values_through():
    model = parse_model("""
g (float[2,3] x) => (float[2,3] y) {
    m = Constant <value = int64 {0}> ()
    y = Loop (m, "", x) <body = body (int64 i, bool c, float[2,3] v) => (bool c2, float[2,3] w) {
        c2 = Identity (c)
        w = Add (v, v)
    }>
}
""")
    assert "Add" not in folded_ops(model)
    verify_matches(model)


def test_the_unroll_budget_is_shared_by_the_loops_of_a_model():
    body = "\n".join(f"        w{k} = Add ({'v' if k == 0 else f'w{k - 1}'}, x)" for k in range(8))
    loop = """
    {y} = Loop (m, "", {x}) <body = body{n} (int64 i, bool c, float[2,3] v) => (bool c2, float[2,3] w7) {{
        c2 = Identity (c)
{body}
    }}>"""
    half = UNROLL_BUDGET // 8 // 2 + 1  # each loop alone fits, both together do not
    model = parse_model(f"""
g (float[2,3] x) => (float[2,3] z) {{
    m = Constant <value = int64 {{{half}}}> ()
    {loop.format(y="y", x="x", n=0, body=body)}
    {loop.format(y="z", x="y", n=1, body=body)}
}}
""")
    ops = folded_ops(model)
    assert ops.count("Loop") == 1 and ops.count("Add") == 8 * half


def test_a_torchscript_exported_loop_over_an_input_dim_is_unrolled():
    # tests/data/torchscript_loop.onnx: torch.onnx.export(torch.jit.script(m), dynamo=False, opset 17) of
    #   h = x; for i in range(x.size(0) + 3): h = tanh(lin(h)) + x[i % 2]; if x.dim() == 2: h = h * 2
    # with x [2, 8]: the exporter writes Loop(M=5, cond=true) whose condition output is Identity(an outer true)
    path = os.path.join(os.path.dirname(__file__), "..", "data", "torchscript_loop.onnx")
    assert [n.op_type for n in onnx.load(path).graph.node].count("Loop") == 1
    report = onnx2ttnn.verify(path)
    assert report.passed, report.text()
    assert "Loop" not in folded_ops(onnx.load(path))
