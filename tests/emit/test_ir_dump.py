"""--emit-ir: the annotated graph as ONNX, layouts in value_info metadata_props, memory configs as attributes."""
from __future__ import annotations

import onnx
from click.testing import CliRunner

from onnx2ttnn.cli import main
from onnx2ttnn.ir.layout import TTNNLayout


def test_emit_ir_writes_layouts_and_memory_configs(cnn_path, tmp_path):
    ir_path = tmp_path / "cnn_ir.onnx"
    result = CliRunner().invoke(main, ["convert", cnn_path, "-o", str(tmp_path / "cnn_ttnn.py"), "--memory", "l1",
                                       "--emit-ir", str(ir_path)])
    assert result.exit_code == 0, result.output
    model = onnx.load(str(ir_path))
    layouts = [p.value for vi in model.graph.value_info for p in vi.metadata_props if p.key == "ttnn_layout"]
    assert len(layouts) > 20
    parsed = [TTNNLayout.parse(text) for text in layouts]
    assert any(lay.buffer == "l1" for lay in parsed) and any(lay.buffer == "dram" for lay in parsed)
    configs = [a for n in model.graph.node for a in n.attribute if a.name == "memory_config"]
    assert configs and all(a.s.decode() in ("dram interleaved", "l1 interleaved") for a in configs)
    assert {n.domain for n in model.graph.node} == {"ttnn"}


def test_dump_ir_after_a_pass(mlp_path, tmp_path):
    result = CliRunner().invoke(main, ["convert", mlp_path, "-o", str(tmp_path / "m_ttnn.py"),
                                       "--dump-ir-after", "fuse-patterns"])
    assert result.exit_code == 0, result.output
    model = onnx.load(str(tmp_path / "ir_after_fuse-patterns.onnx"))
    assert "Linear" in {n.op_type for n in model.graph.node}


def test_a_sequence_of_maps_is_dumped_with_an_undefined_element_type(tmp_path):
    """ZipMap's seq(map) (graphsurgeon's UNDEFINED enum before lowering, dtype object after) in the IR dumps."""
    from tests.fallback.test_values import ml_only_model

    path = tmp_path / "logreg.onnx"
    onnx.save(ml_only_model(), str(path))
    result = CliRunner().invoke(main, ["convert", str(path), "-o", str(tmp_path / "m_ttnn.py"),
                                       "--dump-ir-after", "fold-constants", "--dump-ir-after", "lower-to-ttnn"])
    assert result.exit_code == 0, result.output
    for after in ("fold-constants", "lower-to-ttnn"):
        outputs = onnx.load(str(tmp_path / f"ir_after_{after}.onnx")).graph.output
        assert {o.name: o.type.tensor_type.elem_type for o in outputs} == {"label": onnx.TensorProto.INT64,
                                                                           "probabilities": 0}
