"""LoweringContext (onnx2ttnn/lowering/context.py): a rollback undoes exactly what a declining rule did,
and a checkpoint does not copy the context's tables (the lowering pass stays linear in graph size)."""
from __future__ import annotations

import numpy as np
import onnx_graphsurgeon as gs

from onnx2ttnn.lowering.context import LoweringContext


def _input(lctx: LoweringContext, name: str) -> gs.Variable:
    onnx_tensor = gs.Variable(name, dtype=np.float32, shape=[1, 4])
    device = gs.Variable(name + "_dev", dtype=np.float32, shape=[1, 4])
    lctx.bind_input(onnx_tensor, device)
    return onnx_tensor


def test_rollback_forgets_nodes_values_parameters_and_names_made_since_the_checkpoint():
    lctx = LoweringContext()
    x = _input(lctx, "x")
    kept = lctx.param(np.ones(4, np.float32), "w", key="w")
    state = lctx.checkpoint()
    y = gs.Variable("y", dtype=np.float32, shape=[1, 4])
    lctx.bind(y, lctx.op("relu", [lctx.value(x)], [1, 4]))
    lctx.param(np.zeros(4, np.float32), "w", key="w2")  # would be named w_1
    lctx.bind_input(x, gs.Variable("x_other", dtype=np.float32, shape=[1, 4]))  # overwrites a kept value
    lctx.rollback(state)

    assert [n.op for n in lctx.nodes] == ["from_torch"]  # only the kept parameter's upload
    assert lctx.value(x).name == "x_dev"
    assert lctx.param(np.ones(4, np.float32), "w", key="w") is kept
    again = lctx.param(np.zeros(4, np.float32), "w", key="w2")
    assert again.name == "w_1"  # the forgotten name is free again, and the counter starts where it was


def test_a_checkpoint_costs_the_same_whatever_the_context_holds():
    lctx = LoweringContext()
    for i in range(2000):
        lctx.param(np.full(2, i, np.float32), f"p{i}", key=i)
    state = lctx.checkpoint()
    assert len(state) == 3 and all(isinstance(part, int) for part in state)  # positions, not copies


def test_a_declined_node_gives_back_what_it_counted():
    """The model-wide counters (the recurrent rules' unrolled-steps budget) are undone by a rollback."""
    lctx = LoweringContext()
    assert lctx.count("steps", 10) == 10
    state = lctx.checkpoint()
    assert lctx.count("steps", 5) == 15
    lctx.rollback(state)
    assert lctx.count("steps", 1) == 11
