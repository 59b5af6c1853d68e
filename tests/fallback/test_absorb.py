"""fallback/absorb.py: small device ops right between host values and a host region join the region; nothing
else does, and the walk is linear."""
from __future__ import annotations

import time

import numpy as np
import onnx
import onnx_graphsurgeon as gs
from onnx import TensorProto as T
from onnx import helper as h

from onnx2ttnn import convert
from onnx2ttnn.fallback.absorb import SMALL_ELEMENTS, absorbed
from onnx2ttnn.verify import verify
from tests.fallback.test_regions import alternating_chain
from tests.program_run import forward_text


class Net:
    """A graphsurgeon chain builder: `add(name, inputs, host=False, size=4)`; x is a graph input."""

    def __init__(self) -> None:
        self.x = gs.Variable("x", dtype=np.float32, shape=[1, 4])
        self.tensors = {"x": self.x}
        self.nodes: list[gs.Node] = []
        self.hosted: list[gs.Node] = []

    def add(self, name: str, inputs: list[str], host: bool = False, size: int = 4) -> gs.Node:
        out = gs.Variable(name + "_out", dtype=np.float32, shape=[1, size])
        node = gs.Node("Relu" if len(inputs) == 1 else "Add", name, inputs=[self.tensors[i] for i in inputs],
                       outputs=[out])
        self.tensors[name] = out
        self.nodes.append(node)
        if host:
            self.hosted.append(node)
        return node

    def absorbed(self, outputs=()) -> list[str]:
        return [n.name for n in absorbed(self.nodes, self.hosted, [self.x], [self.tensors[o] for o in outputs],
                                         lambda n: True)]


def test_a_small_op_on_a_graph_input_that_only_a_region_reads_joins_it():
    net = Net()
    net.add("small", ["x"])
    net.add("region", ["small"], host=True)
    assert net.absorbed() == ["small"]


def test_a_small_op_on_a_region_output_that_only_a_region_reads_joins_it():
    net = Net()
    net.add("first", ["x"], host=True)
    net.add("between", ["first"])
    net.add("second", ["between"], host=True)
    assert net.absorbed() == ["between"]


def test_what_would_add_a_transfer_or_a_large_host_op_stays_on_the_device():
    net = Net()
    net.add("dev", ["x"])  # read by a device op too
    net.add("region", ["dev"], host=True)
    net.add("also_dev", ["dev"])
    net.add("from_device", ["also_dev"])  # reads a device value
    net.add("region2", ["from_device"], host=True)
    net.add("large", ["x"], size=SMALL_ELEMENTS + 1)  # too large
    net.add("region3", ["large"], host=True)
    net.add("out", ["x"])  # a graph output
    net.add("region4", ["out"], host=True)
    assert net.absorbed(outputs=["out"]) == []


def test_an_op_onnxruntime_does_not_run_stays_on_the_device():
    net = Net()
    net.add("small", ["x"])
    net.add("region", ["small"], host=True)
    assert absorbed(net.nodes, net.hosted, [net.x], [], lambda n: False) == []


def test_absorbing_is_linear():
    """20,000 nodes, every other one hosted: every device node between two hosted ones joins them."""
    net = alternating_chain(Net(), 20_000, first_hosted=False)
    start = time.perf_counter()
    assert len(net.absorbed()) == 10_000
    assert time.perf_counter() - start < 5.0


def sample_rate_model() -> onnx.ModelProto:
    """silero-vad's shape: y = If(sr == 16000) {x * 2} {x + 1} on a large x, then a Relu on the device."""
    then = h.make_graph([h.make_node("Mul", ["x", "two"], ["t"], name="then_mul")], "then", [],
                        [h.make_tensor_value_info("t", T.FLOAT, [1, 2048])], [h.make_tensor("two", T.FLOAT, [], [2.0])])
    other = h.make_graph([h.make_node("Add", ["x", "one"], ["e"], name="else_add")], "else", [],
                         [h.make_tensor_value_info("e", T.FLOAT, [1, 2048])], [h.make_tensor("one", T.FLOAT, [], [1.0])])
    graph = h.make_graph([h.make_node("Equal", ["sr", "rate"], ["c"], name="is_16k"),
                          h.make_node("If", ["c"], ["b"], then_branch=then, else_branch=other, name="pick"),
                          h.make_node("Relu", ["b"], ["y"], name="after")], "g",
                         [h.make_tensor_value_info("x", T.FLOAT, [1, 2048]), h.make_tensor_value_info("sr", T.INT64, [])],
                         [h.make_tensor_value_info("y", T.FLOAT, [1, 2048])], [h.make_tensor("rate", T.INT64, [], [16000])])
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])


def test_the_sample_rate_comparison_runs_in_the_ifs_region_and_sr_is_never_uploaded():
    conversion = convert(sample_rate_model())
    assert [r["nodes"] for r in conversion.region_summaries()] == [[("is_16k", "Equal"), ("pick", "If")]]
    forward = forward_text(conversion.source)
    assert "ttnn.from_torch(sr" not in forward and "run_region(params['region 0'], {'sr': (sr, " in forward
    assert forward.count("ttnn.relu(") == 1
    x = np.random.default_rng(0).standard_normal((1, 2048)).astype(np.float32)
    for rate in (16000, 8000):
        report = verify(sample_rate_model(), conversion=conversion, inputs={"x": x, "sr": np.array(rate)})
        assert report.passed, report.text()
