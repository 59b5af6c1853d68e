"""Host regions end to end: models with nodes only onnxruntime runs (com.microsoft contrib ops, a Loop with a
data-dependent exit, sequence ops) convert with the default options, their programs run on the simulator
(verify, --per-op) with the regions run by onnxruntime, and --no-fallback refuses them with one error
naming every op type."""
from __future__ import annotations

import os

import numpy as np
import onnx
import pytest
from click.testing import CliRunner
from onnx import TensorProto as T
from onnx import helper as h

from onnx2ttnn import convert
from onnx2ttnn.cli import main
from onnx2ttnn.errors import ConversionError, UnsupportedOpsError
from onnx2ttnn.verify import verify

MS = "com.microsoft"


def _model(nodes, inputs, outputs, initializers=(), domains=(MS,)) -> onnx.ModelProto:
    graph = h.make_graph(nodes, "g", inputs, outputs, list(initializers))
    opsets = [h.make_opsetid("", 17)] + [h.make_opsetid(d, 1) for d in domains]
    return h.make_model(graph, opset_imports=opsets)


def contrib_model(gelu_name: str = "gelu_ms") -> onnx.ModelProto:
    """x -> Relu -> com.microsoft FusedMatMul (a constant weight) -> com.microsoft Gelu -> Add x."""
    w = np.random.default_rng(0).standard_normal((32, 32)).astype(np.float32) / 6
    return _model([h.make_node("Relu", ["x"], ["a"], name="relu0"),
                   h.make_node("FusedMatMul", ["a", "w"], ["m"], name="fmm", domain=MS, alpha=0.5),
                   h.make_node("Gelu", ["m"], ["g"], name=gelu_name, domain=MS),
                   h.make_node("Add", ["g", "x"], ["y"], name="add0")],
                  [h.make_tensor_value_info("x", T.FLOAT, [1, 4, 32, 32])],
                  [h.make_tensor_value_info("y", T.FLOAT, [1, 4, 32, 32])],
                  [onnx.numpy_helper.from_array(w, "w")])


def loop_model() -> onnx.ModelProto:
    """A Loop of at most 100 steps that stops once max(s) reaches 50 (a data-dependent exit), between device ops
    (on tensors larger than fallback/absorb.py's SMALL_ELEMENTS, which stay on the device)."""
    body = h.make_graph([
        h.make_node("Mul", ["s", "k"], ["s1"], name="b_mul"),
        h.make_node("Add", ["s1", "one"], ["s2"], name="b_add"),
        h.make_node("ReduceMax", ["s2"], ["m"], keepdims=0, name="b_max"),
        h.make_node("Less", ["m", "lim"], ["cond_out"], name="b_less")], "body",
        [h.make_tensor_value_info("i", T.INT64, []), h.make_tensor_value_info("cond", T.BOOL, []),
         h.make_tensor_value_info("s", T.FLOAT, [1, 8, 256])],
        [h.make_tensor_value_info("cond_out", T.BOOL, []), h.make_tensor_value_info("s2", T.FLOAT, [1, 8, 256])],
        [h.make_tensor("k", T.FLOAT, [], [1.5]), h.make_tensor("one", T.FLOAT, [], [1.0]),
         h.make_tensor("lim", T.FLOAT, [], [50.0])])
    return _model([h.make_node("Sigmoid", ["x"], ["a"], name="pre"),
                   h.make_node("Loop", ["M", "c0", "a"], ["s_final"], body=body, name="the_loop"),
                   h.make_node("Relu", ["s_final"], ["r"], name="post"),
                   h.make_node("Add", ["r", "x"], ["y"], name="post_add")],
                  [h.make_tensor_value_info("x", T.FLOAT, [1, 8, 256])],
                  [h.make_tensor_value_info("y", T.FLOAT, [1, 8, 256])],
                  [h.make_tensor("M", T.INT64, [], [100]), h.make_tensor("c0", T.BOOL, [], [True])], domains=())


def sequence_model() -> onnx.ModelProto:
    return _model([h.make_node("Relu", ["x"], ["a"], name="r0"),
                   h.make_node("Neg", ["x"], ["b"], name="n0"),
                   h.make_node("SequenceConstruct", ["a", "b"], ["s"], name="seq"),
                   h.make_node("ConcatFromSequence", ["s"], ["c"], axis=1, name="cat"),
                   h.make_node("Exp", ["c"], ["y"], name="exp")],
                  [h.make_tensor_value_info("x", T.FLOAT, [1, 4, 512])],
                  [h.make_tensor_value_info("y", T.FLOAT, [1, 8, 512])], domains=())


def cycle_model() -> onnx.ModelProto:
    """g = Gelu(x) (host), r = Relu(g) (device), y = FusedMatMul(g, r) (host): {Gelu, FusedMatMul} as one
    region would feed Relu and need its result; two regions with the Relu between them."""
    return _model([h.make_node("Gelu", ["x"], ["g"], name="gelu_a", domain=MS),
                   h.make_node("Relu", ["g"], ["r"], name="relu_mid"),
                   h.make_node("FusedMatMul", ["g", "r"], ["y"], name="fmm_b", domain=MS, transB=1)],
                  [h.make_tensor_value_info("x", T.FLOAT, [2, 32, 32])],
                  [h.make_tensor_value_info("y", T.FLOAT, [2, 32, 32])])


def test_a_contrib_op_converts_with_default_options_and_runs_in_a_host_region(tmp_path):
    program = str(tmp_path / "model_ttnn.py")
    conversion = convert(contrib_model(), program)
    conversion.write(program)
    regions = conversion.region_summaries()
    assert [r["nodes"] for r in regions] == \
        [[("fmm", "com.microsoft::FusedMatMul"), ("gelu_ms", "com.microsoft::Gelu")]]
    assert regions[0]["inputs"] == ["a"] and regions[0]["outputs"] == ["g"]
    assert sorted(os.listdir(tmp_path)) == ["model_ttnn.npz", "model_ttnn.py", "model_ttnn_region0.onnx"]
    region = onnx.load(str(tmp_path / "model_ttnn_region0.onnx"))
    assert [n.op_type for n in region.graph.node] == ["FusedMatMul", "Gelu"]
    assert [t.name for t in region.graph.initializer] == ["w"]  # the weight lives in the region's model
    assert "w" not in conversion.program.weights
    source = conversion.source
    assert "# host region 0: 2 ONNX nodes run by onnxruntime from 'model_ttnn_region0.onnx':" in source
    assert "#   'fmm' com.microsoft::FusedMatMul" in source and "#   'gelu_ms' com.microsoft::Gelu" in source
    assert "params['region 0'] = open_region(" in source
    assert "ttnn.relu(" in source and "ttnn.add(" in source  # the rest stays on the device
    report = verify(contrib_model(), conversion=conversion, per_op=False)
    assert report.passed, report.text()


@pytest.mark.parametrize("dtype", ["bf16", "fp32"])
def test_verify_per_op_compares_across_a_region(dtype):
    report = verify(contrib_model(), per_op=True, dtype=dtype)
    assert report.passed, report.text()
    compared = {name for name, _, _ in report.per_op}
    assert {"a", "g", "y"} <= compared  # before, out of and after the region
    assert report.first_divergent is None


def test_no_fallback_refuses_with_one_error_naming_every_op_type(tmp_path):
    path = str(tmp_path / "m.onnx")
    onnx.save(contrib_model(), path)
    result = CliRunner().invoke(main, ["convert", path, "-o", str(tmp_path / "out.py"), "--no-fallback"])
    assert result.exit_code == 2
    lines = [line for line in result.output.splitlines() if not line.strip().endswith("...")]
    assert lines[0] == "error: 2 ONNX op types have no ttnn lowering: com.microsoft::FusedMatMul (1 node), " \
                       "com.microsoft::Gelu (1 node)"
    assert sum(line.startswith("error:") for line in lines) == 1
    assert "onnxruntime runs com.microsoft::FusedMatMul, com.microsoft::Gelu in a host region" in result.output
    assert sorted(os.listdir(tmp_path)) == ["m.onnx"]


def test_the_conversion_summary_shows_the_regions(tmp_path):
    path = str(tmp_path / "m.onnx")
    onnx.save(contrib_model(), path)
    result = CliRunner().invoke(main, ["convert", path, "-o", str(tmp_path / "out.py")])
    assert result.exit_code == 0, result.output
    assert "host region nodes: 2 in 1 region (onnxruntime)" in result.output
    assert "  region 0: 2 nodes (com.microsoft::FusedMatMul 1, com.microsoft::Gelu 1); in: 'a'; out: 'g'" \
        in result.output
    report = CliRunner().invoke(main, ["report", path])
    assert report.exit_code == 0, report.output
    assert "host: run by onnxruntime (host region 0, 2 ONNX nodes)" in report.output
    assert "  region 0: 2 nodes (com.microsoft::FusedMatMul 1, com.microsoft::Gelu 1); in: 'a'; out: 'g'" \
        in report.output


def test_a_loop_with_a_data_dependent_exit_runs_in_a_host_region():
    report = verify(loop_model(), per_op=True)
    assert report.passed, report.text()
    assert [r["nodes"] for r in report.conversion.region_summaries()] == [[("the_loop", "Loop")]]
    ops = report.conversion.op_counts()
    assert ops["sigmoid"] == 1 and ops["relu"] == 1 and ops["add"] == 1  # before and after it: the device


def test_sequence_ops_run_in_a_host_region_and_what_reads_a_shape_they_decide_stays_there():
    """ConcatFromSequence's output length is symbolic: the Exp reading it joins the region."""
    report = verify(sequence_model(), per_op=True)
    assert report.passed, report.text()
    assert [[op for _, op in r["nodes"]] for r in report.conversion.region_summaries()] == \
        [["SequenceConstruct", "ConcatFromSequence", "Exp"]]


def test_a_device_path_between_hosted_nodes_makes_two_regions():
    report = verify(cycle_model(), per_op=True, dtype="fp32")
    assert report.passed, report.text()
    assert [r["nodes"] for r in report.conversion.region_summaries()] == \
        [[("gelu_a", "com.microsoft::Gelu")], [("fmm_b", "com.microsoft::FusedMatMul")]]
    assert report.conversion.op_counts()["relu"] == 1


def test_hostile_names_in_a_region_are_escaped():
    name = "gelu'\n\x1b[31m\"\"\"; import os"
    conversion = convert(contrib_model(gelu_name=name))
    compile(conversion.source, "program", "exec")
    assert "#   'gelu\\'\\n\\x1b[31m\"\"\"; import os' com.microsoft::Gelu" in conversion.source
    assert verify(contrib_model(gelu_name=name), conversion=conversion).passed


def test_an_op_onnxruntime_does_not_know_is_still_unsupported():
    model = _model([h.make_node("Relu", ["x"], ["a"]), h.make_node("Frob", ["a"], ["y"], name="frob", domain="my.ops")],
                   [h.make_tensor_value_info("x", T.FLOAT, [1, 32])], [h.make_tensor_value_info("y", T.FLOAT, [1, 32])],
                   domains=("my.ops",))
    with pytest.raises(UnsupportedOpsError, match="my.ops::Frob"):
        convert(model)


def test_a_region_output_of_data_dependent_shape_the_device_reads_is_refused_or_kept_on_the_host():
    """NonZero's output length depends on the values: what reads it joins the region, so the device never
    sees a shape it cannot know."""
    model = _model([h.make_node("Relu", ["x"], ["a"], name="r"),
                    h.make_node("NonZero", ["a"], ["nz"], name="nonzero"),
                    h.make_node("Cast", ["nz"], ["f"], to=T.FLOAT, name="cast"),
                    h.make_node("ReduceSum", ["f"], ["y"], keepdims=1, name="sum")],
                   [h.make_tensor_value_info("x", T.FLOAT, [4, 8])], [h.make_tensor_value_info("y", T.FLOAT, [1, 1])],
                   domains=())
    try:
        conversion = convert(model)
    except ConversionError as exc:  # a lowering refused it: the message names the node
        assert "nonzero" in str(exc)
        return
    nodes = [n for r in conversion.region_summaries() for n, _ in r["nodes"]]
    assert "nonzero" in nodes and "cast" in nodes
    assert verify(model, conversion=conversion, inputs={"x": np.arange(32, dtype=np.float32).reshape(4, 8) - 10}).passed


def test_a_region_file_that_would_overwrite_the_model_is_refused_before_anything_is_written(tmp_path):
    """The region models are outputs like the program and the weights: one that is the input model is refused
    and nothing is written."""
    model = str(tmp_path / "m_region0.onnx")
    onnx.save(contrib_model(), model)
    result = CliRunner().invoke(main, ["convert", model, "-o", str(tmp_path / "m.py")])
    assert result.exit_code == 2
    assert "host region 0's model" in result.output and "is the same file as the model" in result.output
    assert sorted(os.listdir(tmp_path)) == ["m_region0.onnx"]
    onnx.checker.check_model(onnx.load(model))  # untouched
