"""Conv weights resident in L1 (memory/conv_resident.py): the plan weighs each conv's prepared weight and bias at
the L1 bytes real ttnn's moved copies take (probes/results/conv_resident.txt), keeps the ones that fit beside the
activations, the cost model reads them from L1 and the floor leaves them out.  On the simulator the program moves
them to L1 after the first forward pass and the second reads them there: tests/memory/test_resident_on_simulator.py."""
from __future__ import annotations


import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import onnx2ttnn
from onnx2ttnn.ir.cost import program_cost
from onnx2ttnn.ir.device import get_device
from onnx2ttnn.ir.weight_bytes import conv_param_bytes
from onnx2ttnn.memory import conv_resident
from tests.program_run import forward_text


def conv(channels: int, out_channels: int, side: int, kernel: int, stride: int, groups: int = 1) -> onnx.ModelProto:
    """One Conv (with a bias) and a Relu."""
    rng = np.random.default_rng(0)
    w = numpy_helper.from_array(rng.standard_normal((out_channels, channels // groups, kernel, kernel))
                                .astype(np.float32) * 0.05, "w")
    b = numpy_helper.from_array(rng.standard_normal(out_channels).astype(np.float32), "b")
    pad = kernel // 2
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], kernel_shape=[kernel, kernel], strides=[stride] * 2,
                              pads=[pad] * 4, group=groups),
             helper.make_node("Relu", ["c"], ["y"])]
    graph = helper.make_graph(nodes, "conv", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                              [1, channels, side, side])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], [w, b])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


# (conv, L1 bytes per bank of the weight + bias ttnn.clone copies to L1 on the mock n150: results/conv_resident.txt)
MEASURED = [((64, 256, 56, 1, 1), 1088 + 1088),
            ((128, 128, 56, 3, 2), 3264 + 1088),
            ((1024, 2048, 14, 1, 2), 34816 + 1088),
            ((512, 512, 7, 3, 1), 39168 + 1088),
            ((96, 96, 112, 3, 2, 96), 2176 + 1088),
            ((144, 144, 56, 3, 1, 144), 4352 + 1088),
            ((160, 960, 7, 1, 1), 3264 + 1088),
            ((960, 960, 7, 3, 1, 960), 156672 + 1088),  # padded to 1024 channels: block-sharded over 8 columns
            ((320, 1280, 7, 1, 1), 7616 + 1088)]


@pytest.mark.parametrize("shape,measured", MEASURED, ids=[str(case[0]) for case in MEASURED])
def test_candidates_take_at_least_the_l1_bytes_real_ttnn_copies_take(shape, measured):
    conversion = onnx2ttnn.convert(conv(*shape), memory="auto")
    nodes = conversion.module.graph.nodes
    (item,) = conv_resident.candidates(nodes, len(nodes) - 1, get_device("n150"))
    assert item.interleaved_bytes == measured
    (node,) = [n for n in nodes if n.op == "conv2d"]
    assert node.attrs.get("_resident_weights") == item.interleaved_bytes  # one conv alone: it fits


def _conv_reads(conversion) -> tuple[int, int]:
    """(DRAM, L1) bytes the forward's convs read, per the cost model."""
    graph = conversion.module.graph
    costs = program_cost(graph, get_device("n150")).nodes
    convs = [c for c in costs if c.op == "conv2d"]
    return sum(c.dram_read for c in convs), sum(c.l1_read for c in convs)


def test_the_cost_model_reads_resident_conv_weights_from_l1_and_the_floor_leaves_them_out(cnn_path):
    conversion = onnx2ttnn.convert(cnn_path, memory="auto")
    graph = conversion.module.graph
    convs = [n for n in graph.nodes if n.op == "conv2d"]
    assert convs and all(n.attrs.get("_resident_weights") for n in convs)
    dram, l1 = _conv_reads(conversion)
    floor = program_cost(graph, get_device("n150")).floor_bytes
    for node in convs:  # the same program with every conv reading its prepared weights from DRAM
        del node.attrs["_resident_weights"]
    dram_off, l1_off = _conv_reads(conversion)
    floor_off = program_cost(graph, get_device("n150")).floor_bytes
    weights = sum(conv_param_bytes(n) for n in convs)
    assert weights > 0
    assert dram_off - dram == weights and l1 - l1_off == weights
    assert floor_off - floor == weights


def test_the_replay_places_them_and_their_reasons_say_how_they_get_there(cnn_path):
    device = get_device("n150")
    conversion = onnx2ttnn.convert(cnn_path, memory="auto")
    nodes = conversion.module.graph.nodes
    sizes = {id(item.reads[0][0]): item.interleaved_bytes
             for item in conv_resident.candidates(nodes, len(nodes) - 1, device)}
    assert len(sizes) == 4
    peak = conversion.module.notes["place-memory"]["l1_peak_per_core"]
    assert peak >= sum(sizes.values())  # the replay placed them (and the activations) below the bank top
    reasons = conversion.module.notes["place-memory"]["reasons"]
    stem = next(n for n in nodes if n.op == "conv2d")
    assert reasons[stem.inputs[1]].endswith(f"({conv_resident.MOVED})")


def test_a_conv_whose_weights_do_not_fit_reads_them_from_dram():
    """ResNet-50's last 3x3 512->512 at 7x7 three times over: 120 KiB per bank of prepared weights each; under
    --weights bf16 (float prepared twice the bytes) on n150 not all fit beside conv2d's scratch reserve."""
    rng = np.random.default_rng(0)
    inits, nodes, prev = [], [], "x"
    for i in range(8):
        inits.append(numpy_helper.from_array(rng.standard_normal((512, 512, 3, 3)).astype(np.float32) * 0.01,
                                             f"w{i}"))
        nodes.append(helper.make_node("Conv", [prev, f"w{i}"], [f"c{i}"], kernel_shape=[3, 3], pads=[1] * 4))
        prev = f"c{i}"
    graph = helper.make_graph(nodes, "deep", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 512, 7, 7])],
                              [helper.make_tensor_value_info(prev, TensorProto.FLOAT, None)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    conversion = onnx2ttnn.convert(model, memory="auto", weights="bf16")
    convs = [n for n in conversion.module.graph.nodes if n.op == "conv2d"]
    resident = [n for n in convs if n.attrs.get("_resident_weights")]
    assert 0 < len(resident) < len(convs)
    reasons = conversion.module.notes["place-memory"]["reasons"]
    left = next(n for n in convs if not n.attrs.get("_resident_weights"))
    assert reasons[left.inputs[1]].startswith("DRAM: weight, ")
    text = forward_text(conversion.source)
    assert "settle_weights(params)" in text
    for node in convs:
        key = node.inputs[1].inputs[0].attrs["_param"]
        assert (f"    {key!a},\n" in conversion.source) == (node in resident)


def test_padded_channels_follows_the_split_tt_metal_picks():
    n150, p150 = get_device("n150"), get_device("p150")
    assert conv_resident.padded_channels(16, n150) == 32  # one tile
    assert conv_resident.padded_channels(144, n150) == 160  # 5 tiles on 5 cores: no padding beyond the tile
    assert conv_resident.padded_channels(960, n150) == 1024  # 30 tiles over 8 columns, 4 each (conv_resident.txt)
    assert conv_resident.padded_channels(960, p150) == 960  # over 10 of p150's 11 columns: 3 each, as measured
    assert conv_resident.padded_channels(512, n150) == 512
    assert all(conv_resident.padded_channels(c, n150) >= c for c in range(1, 2049))
