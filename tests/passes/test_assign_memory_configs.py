"""assign-memory-configs: every device-producing node carries the memory_config its layout derives; tampering fails."""
from __future__ import annotations

import pytest

import onnx2ttnn
from onnx2ttnn.errors import VerificationError
from onnx2ttnn.ir.graph import layout_of
from onnx2ttnn.ir.layout import MemoryConfig, memory_config_of
from onnx2ttnn.ir.ttnn_ops import op_info
from onnx2ttnn.passes.assign_memory_configs import verify_memory_configs


@pytest.mark.parametrize("memory", ["dram", "l1", "auto"])
def test_every_device_op_has_its_derived_memory_config(cnn_path, memory):
    graph = onnx2ttnn.convert(cnn_path, memory=memory).module.graph
    checked = 0
    for node in graph.nodes:
        if node.outputs and op_info(node.op).memory_config and layout_of(node.outputs[0]).on_device:
            assert node.attrs["memory_config"] == memory_config_of(layout_of(node.outputs[0]))
            checked += 1
    assert checked > 10


def test_verifier_rejects_a_tampered_attribute(mlp_path):
    graph = onnx2ttnn.convert(mlp_path).module.graph
    verify_memory_configs(graph)
    node = [n for n in graph.nodes if n.op == "linear"][-1]  # (the MLP's relu is fused into the first linear)
    other = "dram" if node.attrs["memory_config"].buffer == "l1" else "l1"
    node.attrs["memory_config"] = MemoryConfig("interleaved", other)
    with pytest.raises(VerificationError, match="ttnn.linear"):
        verify_memory_configs(graph)


def test_verifier_rejects_a_missing_attribute(mlp_path):
    graph = onnx2ttnn.convert(mlp_path).module.graph
    node = next(n for n in graph.nodes if n.op == "linear")
    del node.attrs["memory_config"]
    with pytest.raises(VerificationError, match="ttnn.linear"):
        verify_memory_configs(graph)


def test_conv_slice_config_follows_its_output_buffer_and_is_verified(cnn_path):
    graph = onnx2ttnn.convert(cnn_path, memory="auto").module.graph
    conv = next(n for n in graph.nodes if n.op == "conv2d" and layout_of(n.outputs[0]).buffer == "l1")
    assert repr(conv.attrs["slice_config"]) == "ttnn.Conv2dL1FullSliceConfig"
    del conv.attrs["slice_config"]  # a DRAM input would then make real ttnn write DRAM
    with pytest.raises(VerificationError, match="ttnn.conv2d.*slice_config"):
        verify_memory_configs(graph)
