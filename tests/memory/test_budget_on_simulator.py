"""The memory plan's L1 budget holds on the simulator where ttnn holds more than the eager schedule shows:
a traced run keeps its input and output buffers from their birth to the end of the forward
(ir/traceable.py persistent_buffers), and a plain linear's fused activation writes an intermediate of its
output's size before the output (memory/buffers.py BufferFacts.twin, docs/ttnn-facts.md §32).  Each test
also plans once without the rule, to show that the budget is then overrun (the check can fail)."""
from __future__ import annotations

import dataclasses
import importlib.util

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import onnx2ttnn
from onnx2ttnn.ir.device import DEVICES, get_device
from onnx2ttnn.memory import buffers as planner_buffers
from onnx2ttnn.memory import policies
from onnx2ttnn.memory.budget import OP_SCRATCH_RESERVE, usable_l1_per_core
from onnx2ttnn.passes import choose_program_configs
from onnx2ttnn.sim import runtime
from tests.memory.memory_models import chain

TILE_PER_BANK = 2048  # one bf16 tile in every one of n150's 64 L1 banks: a [1, 1, 32, 2048] tensor


def _device(slots: int):
    """An n150 whose planner budget holds `slots` one-tile-per-bank tensors between ops (and 100 B more)."""
    bank = int((OP_SCRATCH_RESERVE + slots * TILE_PER_BANK + 100) / 0.95) + 1
    return dataclasses.replace(get_device("n150"), name="n150_small_l1", l1_bank_bytes=bank)


def _l1_peak(model: onnx.ModelProto, spec, monkeypatch, tmp_path, *argv: str) -> int:
    """The simulator's L1 peak per bank over the program's main(argv) (converted for `spec`)."""
    monkeypatch.setitem(DEVICES, spec.name, spec)
    path = str(tmp_path / "m_ttnn.py")
    onnx2ttnn.convert(model, path, device=spec.name, weights="bf16").write(path)
    module_spec = importlib.util.spec_from_file_location("budget_program", path)
    program = importlib.util.module_from_spec(module_spec)
    runtime.configure(spec)
    try:
        with runtime.install():
            module_spec.loader.exec_module(program)
            try:
                program.main(list(argv))
            except SystemExit as exc:
                assert exc.code in (0, None), exc.code
        device = runtime.last_closed_device()
        assert runtime.leaks(device) == []
        return runtime.memory_stats(device)["L1"].peak_per_bank
    finally:
        runtime.configure(None)


def test_a_traced_run_stays_in_the_l1_budget_with_its_input_held_to_the_end(monkeypatch, tmp_path):
    # x -> relu -> exp -> sigmoid -> y: eagerly two tensors are live at a time, a traced run holds x too
    spec = _device(slots=2)
    model = chain((1, 1, 32, 2048))
    budget = usable_l1_per_core(spec)
    assert _l1_peak(model, spec, monkeypatch, tmp_path, "--trace", "--iterations", "2") <= budget
    monkeypatch.setattr(policies, "persistent_buffers", lambda view: frozenset())
    assert _l1_peak(model, spec, monkeypatch, tmp_path, "--trace") > budget  # planned as an eager run
    assert _l1_peak(model, spec, monkeypatch, tmp_path) <= budget  # (which it is fine for)


def _linear_relu(width: int) -> onnx.ModelProto:
    """y = relu(x @ w), x [32, width], w [width, width]: a linear with its relu fused (activation="relu")."""
    rng = np.random.default_rng(0)
    w = numpy_helper.from_array((rng.standard_normal((width, width)) / np.sqrt(width)).astype(np.float32), "w")
    nodes = [helper.make_node("MatMul", ["x", "w"], ["h"]), helper.make_node("Relu", ["h"], ["y"])]
    graph = helper.make_graph(nodes, "linear_relu",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [32, width])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [32, width])], [w])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_a_fused_activation_s_intermediate_is_counted_in_the_l1_budget(monkeypatch, tmp_path):
    # x and y take one slot each (the weight does not fit): the linear writes its intermediate in a third.
    # Only an unconfigured linear does (no core grid, no program config): an interleaved one with an activation
    # now gets a core grid (choose-program-configs) and runs it in one program, so the test turns that off.
    # The planner, which runs before the core grid is chosen, counts the intermediate either way.
    monkeypatch.setattr(choose_program_configs, "folds_epilogue", lambda node: False)
    spec = _device(slots=2)
    model = _linear_relu(2048)
    budget = usable_l1_per_core(spec)
    source = onnx2ttnn.convert(model, device="n150", weights="bf16").source
    assert "activation='relu'" in source and "core_grid" not in source
    assert _l1_peak(model, spec, monkeypatch, tmp_path) <= budget
    monkeypatch.setattr(planner_buffers, "activation_apart", lambda node: False)
    assert _l1_peak(model, spec, monkeypatch, tmp_path) > budget
