"""unroll_plan: how many iterations a Loop unrolls into (a constant false condition output stops after one),
and the Loops that stay, declined with the reason (a data-dependent exit, a runtime trip count, over the
unroll budget), which a host region then runs."""
from __future__ import annotations

import pytest

import onnx2ttnn
from onnx2ttnn.errors import UnsupportedOpsError
from onnx2ttnn.frontend.unroll_plan import UNROLL_BUDGET
from tests.frontend._loops import LOOP, folded_ops, parse_model, verify_matches


def test_a_constant_false_condition_output_stops_after_one_iteration():
    model = parse_model(LOOP.replace("c2 = Identity (c)", "c2 = Constant <value = bool {0}> ()")
                        .replace("float[4,2,3] s", "float[1,2,3] s"))
    assert folded_ops(model).count("Mul") == 1
    verify_matches(model)


def test_a_data_dependent_exit_is_declined_naming_the_node():
    model = parse_model(LOOP.replace("c2 = Identity (c)", "r = ReduceSum <keepdims = 0> (v)\n"
                                "        zero = Constant <value = float {0}> ()\n"
                                "        c2 = Greater (r, zero)").replace("float[4,2,3] s", "float[?,2,3] s"))
    model.graph.node[-1].name = "the_loop"
    with pytest.raises(UnsupportedOpsError, match=r"Loop not unrolled: its body's condition output is computed "
                                                  r"in the body \(a data-dependent exit\)") as info:
        onnx2ttnn.convert(model, fallback=False)
    assert "'the_loop'" in str(info.value)
    # with fallbacks on (the default) the Loop runs in a host region instead
    assert len(onnx2ttnn.convert(model).region_summaries()) == 1


def test_a_runtime_trip_count_is_declined():
    model = parse_model("""
g (float[2,3] x, int64 m) => (float[2,3] y) {
    y = Loop (m, "", x) <body = body (int64 i, bool c, float[2,3] v) => (bool c2, float[2,3] w) {
        c2 = Identity (c)
        w = Add (v, v)
    }>
}
""")
    with pytest.raises(UnsupportedOpsError, match=r"its trip count M \('m'\) is not a constant"):
        onnx2ttnn.convert(model, fallback=False)
    assert len(onnx2ttnn.convert(model).region_summaries()) == 1  # by default: a host region


def test_a_loop_over_the_unroll_budget_stays_a_loop():
    model = parse_model(LOOP.replace("int64 {4}", f"int64 {{{UNROLL_BUDGET}}}")
                        .replace("float[4,2,3] s", f"float[{UNROLL_BUDGET},2,3] s"))
    assert "Loop" in folded_ops(model)
    with pytest.raises(UnsupportedOpsError, match=r"over what is left of the unroll budget"):
        onnx2ttnn.convert(model, fallback=False)
    assert len(onnx2ttnn.convert(model).region_summaries()) == 1  # by default: a host region
