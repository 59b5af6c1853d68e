"""reuse-conv-weights: convs hand back their prepared weights and later forward calls reuse them; a weight two
convs share stays on the host."""
from __future__ import annotations

import numpy as np
import onnx
import torch
from onnx import TensorProto, helper, numpy_helper

import onnx2ttnn
from onnx2ttnn.sim import runtime
from onnx2ttnn.verify import _load_program


def _tied_convs() -> onnx.ModelProto:
    """Two 3x3 convs reading one weight (and one bias), then added."""
    rng = np.random.default_rng(0)
    w = numpy_helper.from_array(rng.standard_normal((8, 8, 3, 3)).astype(np.float32) * 0.1, "w")
    b = numpy_helper.from_array(rng.standard_normal(8).astype(np.float32), "b")
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c1"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             helper.make_node("Conv", ["c1", "w", "b"], ["c2"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             helper.make_node("Add", ["c1", "c2"], ["y"])]
    shape = [1, 8, 16, 16]
    graph = helper.make_graph(nodes, "tied", [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)], [w, b])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_every_conv_of_the_cnn_hands_back_its_prepared_weights(cnn_path):
    conversion = onnx2ttnn.convert(cnn_path)
    convs = [n for n in conversion.module.graph.nodes if n.op == "conv2d"]
    assert convs and all(n.attrs.get("return_weights_and_bias") for n in convs)
    assert conversion.module.notes["reuse-conv-weights"]["convs_reusing_weights"] == len(convs)
    line = next(line for line in conversion.source.splitlines() if "= ttnn.conv2d(" in line)
    assert line.split(" = ttnn.conv2d(")[0].strip() == (
        "stem_out, (params['stem_w_bn'], params['stem_conv_bn_bias'])")


def test_a_weight_two_convs_share_stays_on_the_host():
    conversion = onnx2ttnn.convert(_tied_convs())
    convs = [n for n in conversion.module.graph.nodes if n.op == "conv2d"]
    assert len(convs) == 2 and not any(n.attrs.get("return_weights_and_bias") for n in convs)
    report = onnx2ttnn.verify(_tied_convs())
    assert report.passed, report.text()


def test_the_second_forward_reuses_the_prepared_weights_and_computes_the_same(cnn_path, tmp_path):
    program_path = str(tmp_path / "cnn_ttnn.py")
    onnx2ttnn.convert(cnn_path, program_path).write(program_path)
    program = _load_program(program_path)
    x = torch.from_numpy(np.random.default_rng(0).standard_normal((1, 3, 32, 32)).astype(np.float32))
    runtime.configure("n150")
    with runtime.install():
        import ttnn

        device = ttnn.open_device(device_id=0, l1_small_size=16384)
        params = program.load_parameters(device)
        assert all(t.storage_type() != ttnn.StorageType.DEVICE for k, t in params.items() if k.endswith("_w_bn"))
        first = program.forward(device, params, image=x)
        prepared = {k: t for k, t in params.items() if k.endswith("_w_bn")}
        assert prepared and all(t.storage_type() == ttnn.StorageType.DEVICE for t in prepared.values())
        second = program.forward(device, params, image=x)
        assert all(params[k] is t or params[k].buffer_address() == t.buffer_address() for k, t in prepared.items())
        for name in first:
            assert torch.equal(first[name], second[name])
        for tensor in params.values():
            if tensor.storage_type() == ttnn.StorageType.DEVICE:
                ttnn.deallocate(tensor)
        assert runtime.live_buffers(device) == []  # nothing but params was left on the device
        ttnn.close_device(device)
