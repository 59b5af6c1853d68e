"""Sequences and maps (fallback/values.py): a scikit-learn-style model of ai.onnx.ml ops only (no ai.onnx opset)
converts with the default options into one host region; ZipMap's seq(map) comes back as onnxruntime gives it (a
list of dicts), verify compares it, the summary and report count the host nodes, --no-fallback refuses with one
error; a model mixing device ops and ai.onnx.ml ops runs across the boundary."""
from __future__ import annotations

import os

import numpy as np
import onnx
import onnxruntime
import pytest
import torch
from click.testing import CliRunner
from onnx import TensorProto as T
from onnx import helper as h

from onnx2ttnn import convert
from onnx2ttnn.cli import main
from onnx2ttnn.limits import KNOWN_OPSETS
from onnx2ttnn.sim import runtime
from onnx2ttnn.verify import verify

ML = "ai.onnx.ml"
SEQ_OF_MAPS = h.make_sequence_type_proto(h.make_map_type_proto(T.INT64, h.make_tensor_type_proto(T.FLOAT, None)))
LOGREG_IRIS = os.path.join(os.path.dirname(onnxruntime.__file__), "datasets", "logreg_iris.onnx")


def _classifier(inputs: str, post: str = "LOGISTIC") -> onnx.NodeProto:
    coefficients = np.random.default_rng(1).standard_normal(12).astype(np.float32).tolist()
    return h.make_node("LinearClassifier", [inputs], ["label", "scores"], domain=ML, name="classifier",
                       coefficients=coefficients, intercepts=[0.25, 0.5, -0.75], classlabels_ints=[0, 1, 2],
                       post_transform=post)


def ml_only_model() -> onnx.ModelProto:
    """What skl2onnx writes for a logistic regression: LinearClassifier, Normalizer, ZipMap; ai.onnx.ml only."""
    nodes = [_classifier("x"), h.make_node("Normalizer", ["scores"], ["normalized"], domain=ML, name="normalizer",
                                           norm="L1"),
             h.make_node("ZipMap", ["normalized"], ["probabilities"], domain=ML, name="zipmap",
                         classlabels_int64s=[0, 1, 2])]
    graph = h.make_graph(nodes, "logreg", [h.make_tensor_value_info("x", T.FLOAT, [5, 4])],
                         [h.make_tensor_value_info("label", T.INT64, [5]), h.make_value_info("probabilities", SEQ_OF_MAPS)])
    return h.make_model(graph, opset_imports=[h.make_opsetid(ML, 1)], ir_version=8)


def ml_mixed_model() -> onnx.ModelProto:
    """MatMul + Add on the device feeding a LinearClassifier and a ZipMap in a host region, whose scores the
    device reads again (Mul)."""
    w = np.random.default_rng(0).standard_normal((8, 4)).astype(np.float32)
    nodes = [h.make_node("MatMul", ["x", "w"], ["h"], name="matmul"), h.make_node("Add", ["h", "b"], ["z"], name="add"),
             _classifier("z", "SOFTMAX"), h.make_node("Mul", ["scores", "two"], ["doubled"], name="mul"),
             h.make_node("ZipMap", ["scores"], ["probabilities"], domain=ML, name="zipmap", classlabels_int64s=[0, 1, 2])]
    graph = h.make_graph(nodes, "mixed", [h.make_tensor_value_info("x", T.FLOAT, [4, 8])],
                         [h.make_tensor_value_info("label", T.INT64, [4]),
                          h.make_tensor_value_info("doubled", T.FLOAT, [4, 3]),
                          h.make_value_info("probabilities", SEQ_OF_MAPS)],
                         [onnx.numpy_helper.from_array(w, "w"), onnx.numpy_helper.from_array(np.float32([0.5, -1, 0, 1]), "b"),
                          onnx.numpy_helper.from_array(np.float32([2.0]), "two")])
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 17), h.make_opsetid(ML, 1)])


def _run(program: str, feeds: dict) -> dict:
    """The outputs of the program written at `program`, on the simulator."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("values_program", program)
    module = importlib.util.module_from_spec(spec)
    runtime.configure("n150")
    with runtime.install():
        spec.loader.exec_module(module)
        import ttnn

        device = ttnn.open_device(device_id=0)
        try:
            params = module.load_parameters(device)
            return module.forward(device, params, **{k: torch.from_numpy(v) for k, v in feeds.items()})
        finally:
            ttnn.close_device(device)


def test_an_ml_only_model_is_one_host_region_returning_onnxruntimes_list_of_dicts(tmp_path):
    program = str(tmp_path / "logreg_ttnn.py")
    conversion = convert(ml_only_model(), program)
    assert conversion.module.opset == KNOWN_OPSETS[""]  # (the model imports none)
    assert [r["nodes"] for r in conversion.region_summaries()] == [[
        ("classifier", "ai.onnx.ml::LinearClassifier"), ("normalizer", "ai.onnx.ml::Normalizer"),
        ("zipmap", "ai.onnx.ml::ZipMap")]]
    assert "(torch.int64, None)" in conversion.source  # the seq(map) is kept as onnxruntime returns it
    conversion.write(program)
    region = onnx.load(str(tmp_path / "logreg_ttnn_region0.onnx"))
    assert not region.graph.output[1].type.HasField("sequence_type")  # onnxruntime infers its type
    x = np.random.default_rng(2).standard_normal((5, 4)).astype(np.float32)
    got = _run(program, {"x": x})
    want = onnxruntime.InferenceSession(ml_only_model().SerializeToString()).run(None, {"x": x})
    assert torch.equal(got["label"], torch.from_numpy(want[0]))
    assert isinstance(got["probabilities"], list) and len(got["probabilities"]) == 5
    assert got["probabilities"] == want[1]  # (onnxruntime on the host both times: the same floats)


def test_verify_compares_the_sequence_of_maps():
    report = verify(ml_only_model())
    assert report.passed, report.text()
    checks = {o.name: o for o in report.outputs}
    assert checks["label"].exact and checks["probabilities"].value and checks["probabilities"].shape == (5,)
    assert "sequence/map: keys and integers exact" in report.text()


@pytest.mark.parametrize("dtype", ["bf16", "fp32"])
def test_a_model_mixing_device_ops_and_ml_ops_runs_across_the_region(dtype):
    report = verify(ml_mixed_model(), dtype=dtype)
    assert report.passed, report.text()
    conversion = report.conversion
    assert [r["nodes"] for r in conversion.region_summaries()] == [[
        ("classifier", "ai.onnx.ml::LinearClassifier"), ("zipmap", "ai.onnx.ml::ZipMap")]]
    ops = conversion.op_counts()
    assert ops["linear"] == 1 and ops["multiply"] == 1  # before and after the region: the device
    assert {o.name: o.pcc for o in report.outputs}["probabilities"] > 0.999


def test_the_summary_and_report_count_the_host_nodes(tmp_path):
    path = str(tmp_path / "logreg.onnx")
    onnx.save(ml_only_model(), path)
    result = CliRunner().invoke(main, ["convert", path, "-o", str(tmp_path / "out.py")])
    assert result.exit_code == 0, result.output
    assert "host region nodes: 3 in 1 region (onnxruntime)" in result.output
    assert "[W]" not in result.output  # (graphsurgeon's warning on the seq(map)'s UNDEFINED dtype is quiet)
    report = CliRunner().invoke(main, ["report", path])
    assert report.exit_code == 0, report.output
    assert "host: run by onnxruntime (host region 0, 3 ONNX nodes)" in report.output
    assert "  region 0: 3 nodes (ai.onnx.ml::LinearClassifier 1, ai.onnx.ml::Normalizer 1, ai.onnx.ml::ZipMap 1); " \
           "in: 'x'; out: 'label', 'probabilities'" in report.output


def test_no_fallback_refuses_with_one_error_naming_the_ml_op_types(tmp_path):
    path = str(tmp_path / "logreg.onnx")
    onnx.save(ml_only_model(), path)
    result = CliRunner().invoke(main, ["convert", path, "-o", str(tmp_path / "out.py"), "--no-fallback"])
    assert result.exit_code == 2
    lines = [line for line in result.output.splitlines() if not line.strip().endswith("...")]
    assert lines[0] == "error: 3 ONNX op types have no ttnn lowering: ai.onnx.ml::LinearClassifier (1 node), " \
                       "ai.onnx.ml::Normalizer (1 node), ai.onnx.ml::ZipMap (1 node)"
    assert sum(line.startswith("error:") for line in lines) == 1
    assert sorted(os.listdir(tmp_path)) == ["logreg.onnx"]


def _bad(kind: str) -> onnx.ModelProto:
    x = h.make_tensor_value_info("x", T.FLOAT, [3, 2])
    if kind == "coefficients":  # 5 coefficients for 3 classes: onnxruntime refuses the region
        nodes = [h.make_node("LinearClassifier", ["x"], ["label", "p"], domain=ML, name="lc", coefficients=[1.0] * 5,
                             intercepts=[0.0] * 3, classlabels_ints=[0, 1, 2])]
        ins, outs = [x], [h.make_tensor_value_info("label", T.INT64, [3]), h.make_tensor_value_info("p", T.FLOAT, [3, 3])]
    else:  # a map input (DictVectorizer's)
        ins = [h.make_value_info("m", h.make_map_type_proto(T.INT64, h.make_tensor_type_proto(T.FLOAT, None)))]
        nodes = [h.make_node("DictVectorizer", ["m"], ["v"], domain=ML, int64_vocabulary=[0, 1, 2])]
        outs = [h.make_tensor_value_info("v", T.FLOAT, [1, 3])]
    return h.make_model(h.make_graph(nodes, kind, ins, outs), opset_imports=[h.make_opsetid(ML, 1)], ir_version=8)


@pytest.mark.parametrize("kind, words", [
    ("coefficients", "and onnxruntime cannot run them as a host region either ('lc'): onnxruntime refuses the model"),
    ("map_input", "error: input 'm' is a map, not a tensor: a program's inputs are tensors")])
def test_bad_ml_models_get_one_error_line_and_no_output(tmp_path, kind, words):
    path = str(tmp_path / "bad.onnx")
    onnx.save(_bad(kind), path)
    result = CliRunner().invoke(main, ["convert", path, "-o", str(tmp_path / "out.py")])
    assert result.exit_code == 2, result.output
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and words in errors[0], result.output
    assert sorted(os.listdir(tmp_path)) == ["bad.onnx"]


def test_the_programs_main_checks_and_saves_a_sequence_of_maps(tmp_path, capsys):
    """main() --check compares the list of dicts with onnxruntime's; --outputs saves it as its [N, K] values."""
    import importlib.util

    model, program = tmp_path / "logreg.onnx", tmp_path / "logreg_ttnn.py"
    onnx.save(ml_only_model(), str(model))
    convert(str(model), str(program)).write(str(program))
    spec = importlib.util.spec_from_file_location("logreg_main", program)
    module = importlib.util.module_from_spec(spec)
    runtime.configure("n150")
    with runtime.install():
        spec.loader.exec_module(module)
        module.main(["--check", "--outputs", str(tmp_path / "out.npz")])
    out = capsys.readouterr().out
    assert "'probabilities': shape (5, 3)" in out and "'probabilities': PCC 1.000000 ok" in out
    saved = np.load(tmp_path / "out.npz")
    assert saved["probabilities"].shape == (5, 3) and np.allclose(saved["probabilities"].sum(axis=1), 1, atol=1e-6)


def test_onnxruntimes_own_logreg_iris_converts_and_verifies():
    """The scikit-learn file onnxruntime's wheel ships (docs/design.md §6.38: refused before)."""
    report = verify(LOGREG_IRIS)
    assert report.passed, report.text()
    assert [o.name for o in report.outputs] == ["label", "probabilities"]


def test_a_sequence_of_tensors_as_a_graph_output_comes_back_as_a_list():
    """SplitToSequence's seq(tensor) as the model's output (before: "tensor 's' has no known dtype")."""
    seq = h.make_sequence_type_proto(h.make_tensor_type_proto(T.FLOAT, None))
    graph = h.make_graph([h.make_node("Relu", ["x"], ["r"], name="relu"),
                          h.make_node("SplitToSequence", ["r"], ["s"], axis=1, name="split")], "g",
                         [h.make_tensor_value_info("x", T.FLOAT, [2, 6])], [h.make_value_info("s", seq)])
    report = verify(h.make_model(graph, opset_imports=[h.make_opsetid("", 17)]))
    assert report.passed, report.text()
    assert report.outputs[0].value and report.outputs[0].shape == (6,)
