"""Data-parallel programs on the simulated mesh: the reduced BERT, ViT, GPT-2 and the small CNN on n300 (batch 2)
and T3000 (batch 8, as 1x8 and 2x4): the program's own main() with --check matches onnxruntime (PCC >= 0.99),
no chip leaks a buffer, the outputs hold the whole batch, and each chip holds what the one-chip program holds."""
from __future__ import annotations

import contextlib
import importlib.util
import io
import re

import pytest

import onnx2ttnn
from onnx2ttnn.ir.graph import layout_of
from onnx2ttnn.ir.layout import TTNNLayout
from onnx2ttnn.report import placement_report
from onnx2ttnn.sim import runtime
from tests.mesh.models import DP_MODELS, batch_shapes, dp_model  # noqa: F401 (dp_model is a fixture)

# (model, device, mesh, batch): every model on n300 and on T3000, each T3000 shape (1x8, 2x4) twice; the CNN
# on a Galaxy's 4x8 too (simulator only: there is no Galaxy mock descriptor)
CASES = [(name, "n300", "", 2) for name in DP_MODELS] + [
    ("bert", "t3k", "1x8", 8), ("gpt2", "t3k", "1x8", 8), ("vit", "t3k", "2x4", 8), ("cnn", "t3k", "2x4", 8),
    ("cnn", "galaxy", "", 32)]


def _run_main(program: str, device: str, *args: str) -> tuple[str, object]:
    """The program's main(args) on the simulator; (its stdout, the mesh it closed)."""
    runtime.configure(device)
    out = io.StringIO()
    try:
        with runtime.install():
            spec = importlib.util.spec_from_file_location("dp_program", program)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            with contextlib.redirect_stdout(out):
                module.main(list(args))
    finally:
        runtime.configure(None)
    return out.getvalue(), runtime.last_closed_device()


@pytest.mark.parametrize("name,device,mesh,batch", CASES, ids=[f"{c[0]}-{c[1]}{c[2] and '-' + c[2]}" for c in CASES])
def test_data_parallel_program_matches_onnxruntime(dp_model, name, device, mesh, batch, tmp_path):
    model = dp_model(name)
    program = str(tmp_path / "dp_ttnn.py")
    onnx2ttnn.convert(model, program, device=device, mesh=mesh, input_shapes=batch_shapes(model, batch)).write(program)
    text, closed = _run_main(program, device, "--check", "--iterations", "1")
    pccs = [float(v) for v in re.findall(r"PCC ([0-9.]+) ok", text)]
    assert pccs and min(pccs) >= 0.99 and "FAIL" not in text, text
    shapes = re.findall(r": shape \((\d+),", text)
    assert shapes and all(int(s) == batch for s in shapes), text
    assert len(closed.chips) == batch and closed.leaks_per_chip() == [[]] * batch


def test_each_chip_holds_what_the_one_chip_program_holds(dp_model):
    """dp: per-chip parameters (and all per-chip figures) equal the single-chip program's at batch / chips."""
    model = dp_model("vit")
    one = onnx2ttnn.convert(model, device="n150", input_shapes=batch_shapes(model, 1))
    two = onnx2ttnn.convert(model, device="n300", input_shapes=batch_shapes(model, 2))
    single, per_chip = placement_report(one), placement_report(two)
    assert per_chip.parameter_bytes == single.parameter_bytes > 0
    assert per_chip.l1_per_core == single.l1_per_core and per_chip.dram_live == single.dram_live
    assert two.weight_bytes() == one.weight_bytes()
    assert "mesh: 1x2, 2 chips, data parallel" in per_chip.text()
    assert "mesh:" not in single.text()


def test_every_tensor_carries_its_placement(dp_model):
    """Layouts print and parse their mesh placement: the input's upload is split on dim 0, the weights are
    replicated, the download joins dim 0; the mappers and composer are derived from them."""
    model = dp_model("cnn")
    result = onnx2ttnn.convert(model, device="n300", input_shapes=batch_shapes(model, 4))
    placements = {}
    for node in result.module.graph.nodes:
        for tensor in node.outputs:
            layout = layout_of(tensor)
            if layout is not None:
                assert layout.mesh is not None and TTNNLayout.parse(str(layout)) == layout
                placements.setdefault(node.op if not node.attrs.get("_param") else "param", set()).add(str(layout.mesh))
    assert placements["param"] == {"replicated"}
    assert placements["to_torch"] == {"shard0"} and "shard0" in placements["from_torch"]
    source = result.source
    assert "mesh_mapper=ttnn.shard_tensor_to_mesh_mapper(device, dim=0)" in source
    assert "mesh_mapper=ttnn.replicate_tensor_to_mesh_mapper(device)" in source
    assert "mesh_composer=ttnn.concat_mesh_to_tensor_composer(device, dim=0)" in source
    assert "ttnn.open_mesh_device(ttnn.MeshShape(1, 2), l1_small_size=16384)" in source
    assert "ttnn.close_mesh_device(device)" in source and "ttnn.close_device(" not in source
    assert "'image': ('image', (4, 3, 32, 32), 'float32')" in source


def test_one_chip_of_a_multi_chip_device(mlp_path):
    """--mesh 1x1 is one chip of an n300, as --device n300 meant before meshes: a one-chip program."""
    result = onnx2ttnn.convert(mlp_path, device="n300", mesh="1x1")
    assert "ttnn.open_device(device_id=args.device_id" in result.source and "mesh" not in result.source


def test_verify_runs_a_data_parallel_program(dp_model):
    """onnx2ttnn verify opens the program's mesh on the simulator."""
    from onnx2ttnn.verify import verify

    model = dp_model("gpt2")
    report = verify(model, device="t3k", mesh="2x4", input_shapes=batch_shapes(model, 8))
    assert report.passed and not report.leaks
