"""insert-deallocs: one deallocate per intermediate buffer, after its last use; never weights."""
from __future__ import annotations

import pytest

import onnx2ttnn
from onnx2ttnn.ir.liveness import buffers


@pytest.mark.parametrize("memory", ["dram", "l1"])
def test_each_intermediate_buffer_is_freed_once_after_its_last_use(cnn_path, memory):
    graph = onnx2ttnn.convert(cnn_path, memory=memory).module.graph
    frees = [i for i, n in enumerate(graph.nodes) if n.op == "deallocate"]
    bufs = [b for b in buffers(graph) if not b.is_param]
    member_of = {id(t): b for b in bufs for t in b.members}
    freed = {}
    for index in frees:
        buf = member_of[id(graph.nodes[index].inputs[0])]
        assert id(buf) not in freed, "a buffer is deallocated twice"
        freed[id(buf)] = index
    assert set(freed) == {id(b) for b in bufs}, "some buffer is never deallocated"
    for buf in bufs:
        readers = [i for i, n in enumerate(graph.nodes) if n.op != "deallocate"
                   and any(id(t) in {id(m) for m in buf.members} for t in n.inputs)]
        assert all(r < freed[id(buf)] for r in readers), "a buffer is used after its deallocation"
    params = [n for n in graph.nodes if n.attrs.get("_param")]
    assert params and not any(n.op == "deallocate" and n.inputs[0] is p.outputs[0]
                              for n in graph.nodes for p in params)
