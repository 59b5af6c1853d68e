"""Host fallbacks and host regions in data-parallel programs (fallback/per_chip.py): each runs once per chip on
that chip's piece; the program's own main() with --check matches onnxruntime on the simulated mesh, no chip
leaks, and the outputs hold the whole batch.  (The real mock runs them too: tests/real_ttnn/test_mesh_programs.py.)"""
from __future__ import annotations

import re

import pytest

import onnx2ttnn
from tests.mesh.models import HOST_MODELS, batch_shapes, host_model
from tests.mesh.test_data_parallel import _run_main

CASES = [(name, "n300", "", 4) for name in sorted(HOST_MODELS)] + [("det", "t3k", "2x4", 8),
                                                                  ("col2im", "t3k", "1x8", 8)]


@pytest.mark.parametrize("name,device,mesh,batch", CASES, ids=[f"{c[0]}-{c[1]}{c[2] and '-' + c[2]}" for c in CASES])
def test_host_steps_run_per_chip_and_match_onnxruntime(name, device, mesh, batch, tmp_path):
    model = host_model(name, tmp_path)
    program = str(tmp_path / "host_ttnn.py")
    result = onnx2ttnn.convert(model, program, device=device, mesh=mesh, input_shapes=batch_shapes(model, batch))
    result.write(program)
    text, closed = _run_main(program, device, "--check", "--iterations", "1")
    pccs = [float(v) for v in re.findall(r"PCC ([0-9.]+) ok", text)]
    assert len(pccs) == len(result.module.graph.outputs) and min(pccs) >= 0.99 and "FAIL" not in text, text
    shapes = re.findall(r": shape \((\d+),", text)
    assert shapes and all(int(s) == batch for s in shapes), text
    chips = len(closed.chips)
    assert chips == {"n300": 2, "t3k": 8}[device] and closed.leaks_per_chip() == [[]] * chips
    hosted = [n for n in result.module.graph.nodes if n.op in ("host_compute", "host_region")]
    assert hosted and all(n.attrs["_pieces"] == (chips, -1) for n in hosted)


def test_each_host_step_reads_and_writes_the_chips_pieces(tmp_path):
    """The download joins the chips' pieces and splits them again; the helper runs on each; the upload joins
    them on the device tensor's split dim and shards them back; a graph input read on the host is split on
    dim 0, a host result returned as an output joined on its batch dim."""
    source = onnx2ttnn.convert(host_model("det", tmp_path), device="n300",
                               input_shapes={"x": (4, 4, 3, 3)}).source
    assert ("r_host = [piece.to(torch.float32) for piece in ttnn.to_torch(r, mesh_composer="
            "ttnn.concat_mesh_to_tensor_composer(device, dim=0)).chunk(2, 0)]") in source
    assert "d_host = [host_det(piece_1) for piece_1 in r_host]" in source
    assert ("d = ttnn.to_device(ttnn.from_torch(torch.cat([piece_2.to(torch.bfloat16) for piece_2 in d_host], 0), "
            "dtype=" in source and "mesh_mapper=ttnn.shard_tensor_to_mesh_mapper(device, dim=0)), device, "
            "memory_config=ttnn.L1_MEMORY_CONFIG)\n    # 'Sigmoid_2'" in source)
    edges = onnx2ttnn.convert(host_model("det_edges", tmp_path), device="n300",
                              input_shapes={"x": (4, 4, 3, 3)}).source
    assert "for piece in x.chunk(2, 0)]" in edges and "torch.cat([piece_" in edges


def test_a_one_chip_program_keeps_its_host_steps_as_they_were(tmp_path):
    source = onnx2ttnn.convert(host_model("det", tmp_path), input_shapes={"x": (4, 4, 3, 3)}).source
    assert "d_host = host_det(r_host)" in source and "piece" not in source and "chunk" not in source
