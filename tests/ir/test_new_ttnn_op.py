"""Adding a ttnn op is one op-table entry plus one lowering rule (ir/ttnn_ops): a fake op, declared and
registered here for a custom-domain ONNX op (and removed afterwards), goes through placement, cost, memory
config and emission untouched by any other module, and its program runs on the simulator given the op."""
from __future__ import annotations

import io
import types

import numpy as np
import pytest
import torch
from onnx import TensorProto, helper

import onnx2ttnn
from onnx2ttnn import sim
from onnx2ttnn.emit.weights import npz_bytes
from onnx2ttnn.ir.cost import node_cost
from onnx2ttnn.ir.device import get_device
from onnx2ttnn.ir.graph import layout_of
from onnx2ttnn.ir.layout import memory_config_of, padded_shape
from onnx2ttnn.ir.ttnn_ops import OPS, OpInfo, ShardFacts
from onnx2ttnn.lowering import registry
from onnx2ttnn.lowering.eltwise import unary
from onnx2ttnn.sim import runtime

DOMAIN, OP_TYPE, FAKE = "test.fake", "FakeSwish", "fake_swish"
SHAPE = [1, 1, 2048, 64]  # 64 tile rows: height-sharded over 8x8 cores when its facts allow


def _model():
    """x -> Relu -> test.fake::FakeSwish -> Exp -> y (value_info gives the custom op's output shape)."""
    nodes = [helper.make_node("Relu", ["x"], ["r"]), helper.make_node(OP_TYPE, ["r"], ["s"], domain=DOMAIN),
             helper.make_node("Exp", ["s"], ["y"])]
    graph = helper.make_graph(nodes, "fake", [helper.make_tensor_value_info("x", TensorProto.FLOAT, SHAPE)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, SHAPE)],
                              value_info=[helper.make_tensor_value_info(n, TensorProto.FLOAT, SHAPE) for n in "rs"])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(DOMAIN, 1)])


@pytest.fixture
def fake_op(monkeypatch):
    """Declare the fake ttnn op (one table entry) and its lowering rule; both vanish after the test.  Returns a
    function that (re)declares the entry with the given facts."""
    def declare(**facts) -> OpInfo:
        info = OpInfo(FAKE, ("input_tensor",), **facts)
        monkeypatch.setitem(OPS, FAKE, info)
        return info

    monkeypatch.setitem(registry._RULES, (DOMAIN, OP_TYPE), [])  # removed again at teardown
    registry.register(OP_TYPE, versions=(1,), domain=DOMAIN, ttnn=(FAKE,))(lambda ctx, node: unary(ctx, node, FAKE))
    return declare


def _node(conversion):
    return next(n for n in conversion.module.graph.nodes if n.op == FAKE)


def test_a_fake_op_with_sharding_facts_is_planned_costed_configured_and_emitted(fake_op):
    fake_op(height=ShardFacts((0,), True, "unary"), width=ShardFacts((0,), True, "unary"), vector_flops=3)
    conversion = onnx2ttnn.convert(_model(), memory="auto")
    node = _node(conversion)
    out = layout_of(node.outputs[0])
    assert str(out) == "tile<bf16> l1 height_sharded grid=8x8 shard=32x64"  # its facts allow it: sharded
    assert str(layout_of(node.inputs[0])) == str(out)  # relu's output, read sharded by the fake op
    assert node.attrs["memory_config"] == memory_config_of(out)
    cost = node_cost(node, get_device("n150"))
    assert cost.flops == 3 * np.prod(padded_shape(SHAPE, out)) and cost.local_read == cost.local_write > 0
    assert cost.dram_bytes == 0 and cost.time_s > 0
    call = next(line.strip() for line in conversion.source.splitlines() if f"ttnn.{FAKE}(" in line)
    assert call == (f"s = ttnn.{FAKE}(r, memory_config=ttnn.MemoryConfig(ttnn.TensorMemoryLayout.HEIGHT_SHARDED, "
                         "ttnn.BufferType.L1, ttnn.ShardSpec(ttnn.CoreRangeSet({ttnn.CoreRange(ttnn.CoreCoord(0, 0), "
                         "ttnn.CoreCoord(7, 7))}), [32, 64], ttnn.ShardOrientation.ROW_MAJOR)))"), call


def test_a_fake_op_without_sharding_facts_stays_interleaved(fake_op):
    fake_op()
    conversion = onnx2ttnn.convert(_model(), memory="auto")
    node = _node(conversion)
    assert str(layout_of(node.inputs[0])) == str(layout_of(node.outputs[0])) == "tile<bf16> l1 interleaved"
    assert f"s = ttnn.{FAKE}(r, memory_config=ttnn.L1_MEMORY_CONFIG)" in conversion.source
    dram = onnx2ttnn.convert(_model(), memory="dram")
    assert f"s = ttnn.{FAKE}(r, memory_config=ttnn.DRAM_MEMORY_CONFIG)" in dram.source


def test_a_fake_op_that_takes_no_memory_config_is_called_without_one(fake_op):
    fake_op(memory_config=False)
    conversion = onnx2ttnn.convert(_model(), memory="auto")
    assert "memory_config" not in _node(conversion).attrs
    assert f"s = ttnn.{FAKE}(r)\n" in conversion.source


def test_the_fake_ops_program_runs_on_the_simulator(fake_op, monkeypatch):
    fake_op(height=ShardFacts((0,), True, "unary"), width=ShardFacts((0,), True, "unary"), vector_flops=3)
    # the simulator is given the op: swish is ttnn.silu
    monkeypatch.setattr(sim, FAKE, lambda input_tensor, *, memory_config=None:
                        sim.silu(input_tensor, memory_config=memory_config), raising=False)
    conversion = onnx2ttnn.convert(_model(), memory="auto")
    x = np.random.default_rng(0).standard_normal(SHAPE).astype(np.float32)
    program = types.ModuleType("fake_op_program")
    runtime.configure("n150")
    with runtime.install() as ttnn:
        exec(compile(conversion.source, "<program>", "exec"), program.__dict__)
        device = ttnn.open_device(device_id=0, l1_small_size=16384)
        params = program.load_parameters(device, io.BytesIO(npz_bytes(conversion.program.weights)))
        (ident,) = program.INPUTS
        y = program.forward(device, params, **{ident: torch.from_numpy(x)})["y"]
        ttnn.close_device(device)
    r = np.maximum(x, 0)
    expected = np.exp(r / (1 + np.exp(-r)))
    np.testing.assert_allclose(y.float().numpy(), expected, rtol=0.05, atol=0.05)
    assert runtime.leaks(device) == []
