"""Dtypes across a host region's boundary (design §6.28): a region's model takes and gives the ONNX dtypes
(float32 for a float32 model), so a bf16 device tensor is widened once on the host as it is downloaded (exact:
every bf16 value is a float32) and a float result is narrowed once as it is uploaded, straight into the
program's compute dtype; a graph input the region reads directly, and a value passed from region to region,
never go through the device and keep float32."""
from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h

from onnx2ttnn import convert
from onnx2ttnn.verify import verify
from tests.program_run import forward_text

MS = "com.microsoft"


def _model(nodes, n: int = 2048) -> onnx.ModelProto:
    graph = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", T.FLOAT, [1, n])],
                         [h.make_tensor_value_info("y", T.FLOAT, [1, n])])
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 17), h.make_opsetid(MS, 1)])


def device_region_device() -> onnx.ModelProto:
    """Relu on the device, com.microsoft Gelu in a region, Neg on the device."""
    return _model([h.make_node("Relu", ["x"], ["a"], name="before"),
                   h.make_node("Gelu", ["a"], ["g"], domain=MS, name="gelu"),
                   h.make_node("Neg", ["g"], ["y"], name="after")])


def _lines(source: str, needle: str) -> list[str]:
    return [line.strip() for line in forward_text(source).splitlines() if needle in line]


def test_a_bf16_program_widens_on_download_and_narrows_on_upload_once_each():
    source = convert(device_region_device()).source
    downloads = _lines(source, "ttnn.to_torch(")
    assert downloads[0] == "a_host = ttnn.to_torch(a).to(torch.float32)", downloads  # the region's float32 input
    assert not _lines(source, "ttnn.typecast(")  # no float32 copy made on the device for it
    uploads = _lines(source, "ttnn.from_torch(g_host")
    assert len(uploads) == 1 and "g_host.to(torch.bfloat16), dtype=ttnn.bfloat16" in uploads[0], uploads
    assert "'a': (a_host, 'float32')" in _lines(source, "run_region(")[0]


def test_a_float32_program_carries_float32_both_ways():
    source = convert(device_region_device(), dtype="fp32").source
    uploads = _lines(source, "ttnn.from_torch(g_host")
    assert len(uploads) == 1 and "g_host.to(torch.float32), dtype=ttnn.float32" in uploads[0], uploads
    assert verify(device_region_device(), dtype="fp32").passed


def test_a_region_reading_a_graph_input_gets_it_in_float32_and_matches_onnxruntime_exactly():
    """y = Gelu(x): the region reads the program's argument as given; a bf16 program loses nothing."""
    model = _model([h.make_node("Gelu", ["x"], ["y"], domain=MS, name="gelu")])
    conversion = convert(model)
    assert not _lines(conversion.source, "ttnn.from_torch(x")  # x is never uploaded
    report = verify(model, conversion=conversion)
    assert report.passed and report.outputs[0].max_abs == 0.0, report.text()


def test_a_value_passed_from_region_to_region_skips_the_device():
    """Gelu -> Gelu, both for onnxruntime: one region, the first's result handed on the host, no transfer."""
    model = _model([h.make_node("Gelu", ["x"], ["g"], domain=MS, name="first"),
                    h.make_node("Gelu", ["g"], ["y"], domain=MS, name="second")])
    conversion = convert(model)
    assert len(conversion.region_summaries()) == 1
    assert not _lines(conversion.source, "ttnn.from_torch(") and not _lines(conversion.source, "ttnn.to_torch(")
