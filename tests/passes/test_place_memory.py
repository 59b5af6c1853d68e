"""place-memory: the pass writes the plan of memory/plan.py (layouts and notes) and nothing else; auto
programs end to end (simulator vs onnxruntime).  The policies themselves: tests/memory."""
from __future__ import annotations

import pytest

from onnx2ttnn.ir.graph import layout_of
from onnx2ttnn.memory.plan import plan_memory
from onnx2ttnn.passes.place_memory import PlaceMemory
from onnx2ttnn.verify import verify
from tests.memory.memory_models import chain, conv_model, run_pipeline


@pytest.mark.parametrize("memory", ["dram", "l1", "auto"])
def test_the_pass_writes_the_plans_layouts_and_notes(memory):
    module, ctx = run_pipeline(conv_model(True), memory=memory, passes="decompose-layouts")
    nodes = list(module.graph.nodes)
    plan = plan_memory(module.graph, ctx.device, memory)
    PlaceMemory().run(module, ctx)
    assert module.graph.nodes == nodes  # no node added or removed: moves are insert-moves' work
    assert all(layout_of(tensor) == layout for tensor, layout in plan.layouts)
    assert module.notes["place-memory"] == plan.notes()


def test_sharded_layouts_are_written_to_the_tensors():
    module, _ = run_pipeline(chain((1, 1, 2048, 64)), passes="place-memory")
    relu = next(n for n in module.graph.nodes if n.op == "relu")
    assert str(layout_of(relu.outputs[0])) == "tile<bf16> l1 height_sharded grid=8x8 shard=32x64"


@pytest.mark.parametrize("model", ["mlp_path", "cnn_path", "bert_path"])
def test_auto_programs_match_onnxruntime(model, request):
    report = verify(request.getfixturevalue(model), memory="auto")
    assert report.passed, report
    assert report.leaks == []
    assert report.peak_l1_per_core > 0
