"""memory/l1_small.py: the L1_SMALL region a program opens with holds what its sliding-window calls keep there
(docs/ttnn-facts.md §40); place-memory sizes it, plans on the L1 bank it leaves, and the program opens with it."""
from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from onnx2ttnn.convert import convert
from onnx2ttnn.ir.device import get_device
from onnx2ttnn.memory.l1_small import DEFAULT, call_bytes, l1_small_size
from tests.memory.memory_models import conv_model, run_pipeline

N150 = get_device("n150")

# (op, C, OC, H, W, kernel, stride, pad, bytes per bank measured on the mock n150: probe_l1_small.py)
MEASURED = [
    ("conv2d", 3, 16, 320, 320, 3, 2, 1, 224), ("conv2d", 16, 16, 160, 160, 3, 1, 1, 416),
    ("conv2d", 32, 32, 160, 160, 3, 2, 1, 480), ("conv2d", 48, 48, 80, 80, 3, 1, 1, 288),
    ("conv2d", 96, 96, 40, 40, 3, 1, 1, 320), ("conv2d", 192, 192, 20, 20, 5, 1, 2, 352),
    ("conv2d", 384, 384, 10, 10, 5, 1, 2, 256), ("conv2d", 96, 24, 10, 10, 3, 1, 1, 224),
    ("conv2d", 64, 64, 56, 56, 3, 1, 1, 288), ("conv2d", 64, 64, 112, 112, 3, 1, 1, 352),
    ("conv2d", 64, 64, 224, 224, 3, 1, 1, 544), ("conv2d", 16, 16, 160, 160, 5, 1, 2, 576),
    ("conv2d", 16, 16, 320, 320, 3, 1, 1, 800),
    ("conv_transpose2d", 24, 24, 80, 80, 2, 2, 0, 3296), ("conv_transpose2d", 24, 1, 160, 160, 2, 2, 0, 8032),
    ("conv_transpose2d", 24, 24, 40, 40, 2, 2, 0, 1184),
    ("max_pool2d", 64, 64, 112, 112, 3, 2, 1, 352), ("max_pool2d", 32, 32, 160, 160, 2, 2, 0, 352),
    ("max_pool2d", 192, 192, 28, 28, 3, 1, 1, 288),
]


def _node(op, c, oc, h, w, k, s, p):
    if op == "conv_transpose2d":
        oh, ow = (h - 1) * s - 2 * p + k, (w - 1) * s - 2 * p + k
    else:
        oh, ow = (h + 2 * p - k) // s + 1, (w + 2 * p - k) // s + 1
    if op == "max_pool2d":
        attrs = dict(batch_size=1, input_h=h, input_w=w, channels=c, kernel_size=[k, k], stride=[s, s],
                     padding=[p, p], dilation=[1, 1])
    else:
        attrs = dict(batch_size=1, input_height=h, input_width=w, kernel_size=(k, k), stride=(s, s),
                     padding=(p, p), dilation=(1, 1))
    return SimpleNamespace(op=op, attrs=attrs, outputs=[SimpleNamespace(shape=(1, 1, oh * ow, oc))])


@pytest.mark.parametrize("case", MEASURED, ids=lambda c: "%s-%d-%dx%d-k%d-s%d" % (c[0], c[1], c[3], c[4], c[5], c[6]))
def test_the_bound_holds_what_the_mock_measured_within_twice_for_larger_calls(case):
    *shape, measured = case
    bound = call_bytes(_node(*shape), N150)
    assert bound >= measured
    if measured >= 400:  # the larger calls, which decide the region's size: not padded far beyond
        assert bound <= 2 * measured


def test_a_plain_1x1_conv_and_other_ops_keep_nothing():
    assert call_bytes(_node("conv2d", 64, 64, 56, 56, 1, 1, 0), N150) == 0
    assert call_bytes(_node("conv2d", 64, 64, 56, 56, 1, 2, 0), N150) > 0  # strided: a sliding window
    assert call_bytes(SimpleNamespace(op="matmul", attrs={}, outputs=[]), N150) == 0


def test_the_region_is_the_sum_rounded_to_4_kib_and_never_below_16_kib():
    small = SimpleNamespace(nodes=[_node("conv2d", 16, 16, 32, 32, 3, 1, 1)] * 3)
    assert l1_small_size(small, N150) == DEFAULT
    big = [_node("conv_transpose2d", 24, 1, 160, 160, 2, 2, 0), _node("conv_transpose2d", 24, 24, 80, 80, 2, 2, 0)]
    big += [_node(*c[:-1]) for c in MEASURED if c[0] == "conv2d"]
    total = sum(call_bytes(n, N150) for n in big)
    assert total > DEFAULT
    assert l1_small_size(SimpleNamespace(nodes=big), N150) == math.ceil(total / 4096) * 4096


def test_with_l1_small_shrinks_the_tensor_bank_by_what_the_region_grows():
    wide = N150.with_l1_small(DEFAULT + 8192)
    assert wide.l1_small_size == DEFAULT + 8192 and wide.l1_bank_bytes == N150.l1_bank_bytes - 8192
    assert N150.with_l1_small(DEFAULT) is N150


def _conv_transpose_model(side=256, channels=24) -> onnx.ModelProto:
    """The PP-OCRv4 detector's last conv_transpose (24 -> 1, 2x2, stride 2), which found a 16 KiB L1_SMALL full,
    on a larger image (alone at 160x160 it keeps 8 KiB)."""
    rng = np.random.default_rng(0)
    w = numpy_helper.from_array(rng.standard_normal((channels, 1, 2, 2)).astype(np.float32), "w")
    node = helper.make_node("ConvTranspose", ["x", "w"], ["y"], kernel_shape=[2, 2], strides=[2, 2])
    graph = helper.make_graph([node], "up", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                           [1, channels, side, side])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1, 2 * side, 2 * side])],
                              [w])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def test_place_memory_sizes_the_region_and_plans_on_the_smaller_bank():
    module, ctx = run_pipeline(_conv_transpose_model(), passes="place-memory")
    (up,) = [n for n in module.graph.nodes if n.op == "conv_transpose2d"]
    assert module.l1_small_size == l1_small_size(module.graph, N150) > DEFAULT
    assert module.l1_small_size >= call_bytes(up, N150)
    assert ctx.device.l1_small_size == module.l1_small_size
    assert ctx.device.l1_bank_bytes == N150.l1_bank_bytes - (module.l1_small_size - DEFAULT)


def test_the_program_opens_its_device_and_mesh_with_the_region(tmp_path):
    conversion = convert(_conv_transpose_model(), str(tmp_path / "up_ttnn.py"))
    size = conversion.module.l1_small_size
    assert size > DEFAULT
    source = conversion.source
    assert f"ttnn.open_device(device_id=args.device_id, l1_small_size={size})" in source
    assert f"num_command_queues=args.cqs, l1_small_size={size}," in source  # the traced run's CreateDevice
    assert "l1_small_size=16384" not in source


def test_a_small_conv_model_keeps_the_16_kib_region(tmp_path):
    conversion = convert(conv_model(False, side=16, channels=16, kernel=3), str(tmp_path / "c_ttnn.py"))
    assert conversion.module.l1_small_size == DEFAULT
    assert conversion.source.count("l1_small_size=16384") == 2
