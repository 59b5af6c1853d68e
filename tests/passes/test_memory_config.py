"""memory-config: every device-producing node carries the memory_config its layout derives; tampering fails."""
from __future__ import annotations

import pytest

import onnx2ttnn
from onnx2ttnn.errors import VerificationError
from onnx2ttnn.ir.graph import layout_of
from onnx2ttnn.ir.layout import MemoryConfig, memory_config_of
from onnx2ttnn.ir.ttnn_ops import op_info
from onnx2ttnn.passes.memory_config import verify_memory_configs


@pytest.mark.parametrize("memory", ["dram", "l1"])
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
    node = next(n for n in graph.nodes if n.op == "relu")
    node.attrs["memory_config"] = MemoryConfig("interleaved", "l1")
    with pytest.raises(VerificationError, match="ttnn.relu"):
        verify_memory_configs(graph)


def test_verifier_rejects_a_missing_attribute(mlp_path):
    graph = onnx2ttnn.convert(mlp_path).module.graph
    node = next(n for n in graph.nodes if n.op == "linear")
    del node.attrs["memory_config"]
    with pytest.raises(VerificationError, match="ttnn.linear"):
        verify_memory_configs(graph)
