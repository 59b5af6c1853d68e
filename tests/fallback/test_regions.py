"""Host regions (onnx2ttnn/fallback/regions.py): the partition (maximal, connected, never a cycle through the
device), the schedule around the regions, and what onnxruntime is taken to run."""
from __future__ import annotations

import time

import numpy as np
import onnx_graphsurgeon as gs
import pytest

from onnx2ttnn.fallback.regions import build_region, node_reads, onnxruntime_runs, partition, schedule


class Net:
    """A tiny graphsurgeon graph built node by node: `add(name, inputs, host)`."""

    def __init__(self) -> None:
        self.x = gs.Variable("x", dtype=np.float32, shape=[1, 4])
        self.tensors = {"x": self.x}
        self.nodes: list[gs.Node] = []
        self.hosted: set[int] = set()

    def add(self, name: str, inputs: list[str], host: bool = False) -> gs.Node:
        out = gs.Variable(name + "_out", dtype=np.float32, shape=[1, 4])
        node = gs.Node("Relu" if len(inputs) == 1 else "Add", name, inputs=[self.tensors[i] for i in inputs],
                       outputs=[out])
        self.tensors[name] = out
        self.nodes.append(node)
        if host:
            self.hosted.add(id(node))
        return node

    def regions(self) -> list[list[str]]:
        return [[n.name for n in group] for group in partition(self.nodes, self.hosted)]

    def graph(self) -> gs.Graph:
        return gs.Graph(nodes=self.nodes, inputs=[self.x], outputs=[self.nodes[-1].outputs[0]])


def test_a_chain_of_hosted_nodes_is_one_region():
    net = Net()
    net.add("d0", ["x"])
    net.add("h1", ["d0"], host=True)
    net.add("h2", ["h1"], host=True)
    net.add("h3", ["h2"], host=True)
    net.add("d4", ["h3"])
    assert net.regions() == [["h1", "h2", "h3"]]


def test_branches_that_meet_on_the_host_are_one_region():
    net = Net()
    net.add("h1", ["x"], host=True)
    net.add("h2", ["x"], host=True)
    net.add("h3", ["h1", "h2"], host=True)
    net.add("d4", ["h3"])
    assert net.regions() == [["h1", "h2", "h3"]]


def test_a_device_path_between_two_hosted_nodes_keeps_them_apart():
    """h1 -> d -> h3 and h1 -> h3: one region {h1, h3} would need d's result before it runs and give d its
    input: a cycle through the device. The partition makes two regions, the schedule runs d between them."""
    net = Net()
    net.add("h1", ["x"], host=True)
    net.add("d2", ["h1"])
    net.add("h3", ["h1", "d2"], host=True)
    assert net.regions() == [["h1"], ["h3"]]
    groups = partition(net.nodes, net.hosted)
    regions = [build_region(k, g, net.graph(), {"": 17}, _readers(net.nodes)) for k, g in enumerate(groups)]
    order = schedule(net.nodes, regions)
    assert [getattr(item, "name", None) or item.source for item in order] == \
        ["host region 0", "d2", "host region 1"]


def test_unconnected_hosted_nodes_are_separate_regions():
    net = Net()
    net.add("h1", ["x"], host=True)
    net.add("d2", ["x"])
    net.add("h3", ["d2"], host=True)
    net.add("d4", ["h1", "h3"])
    assert net.regions() == [["h1"], ["h3"]]


def test_a_device_node_beside_a_region_does_not_split_it():
    """d2 reads h1 but feeds nothing of the region: {h1, h3} stays whole, and d2 runs after it."""
    net = Net()
    net.add("h1", ["x"], host=True)
    net.add("d2", ["h1"])
    net.add("h3", ["h1"], host=True)
    net.add("d4", ["d2", "h3"])
    assert net.regions() == [["h1", "h3"]]
    regions = [build_region(0, partition(net.nodes, net.hosted)[0], net.graph(), {"": 17}, _readers(net.nodes))]
    order = schedule(net.nodes, regions)
    assert [getattr(item, "name", None) or item.source for item in order] == ["host region 0", "d2", "d4"]
    assert [t.name for t in regions[0].outputs] == ["h1_out", "h3_out"]  # both are read outside the region
    assert [t.name for t in regions[0].inputs] == ["x"]


def test_every_region_is_convex():
    """Seeded random DAGs with random hosted sets: every hosted node is in exactly one region, and no path
    leaves a region and comes back (a reachability walk from each region's readers outside it)."""
    rng = np.random.default_rng(0)
    for trial in range(20):
        net = Net()
        names = ["x"]
        for i in range(40):
            inputs = list(rng.choice(names, size=min(len(names), int(rng.integers(1, 3))), replace=False))
            net.add(f"n{i}", inputs, host=bool(rng.random() < 0.5))
            names.append(f"n{i}")
        groups = partition(net.nodes, net.hosted)
        assert sorted(id(n) for g in groups for n in g) == sorted(net.hosted)
        for group in groups:
            members = {id(n) for n in group}
            # nodes reachable from the region through a node outside it must not be in it
            frontier = [c for n in group for t in n.outputs for c in t.outputs if id(c) not in members]
            seen = set()
            while frontier:
                node = frontier.pop()
                if id(node) in seen:
                    continue
                seen.add(id(node))
                assert id(node) not in members, f"trial {trial}: a path leaves region {group[0].name} and returns"
                frontier += [c for t in node.outputs for c in t.outputs]


def alternating_chain(net, count: int, first_hosted: bool):
    """`net` (any builder with `add(name, inputs, host=)`) extended by a chain of `count` nodes from x that
    alternate between hosted and device nodes."""
    previous = "x"
    for i in range(count):
        net.add(f"n{i}", [previous], host=(i % 2 == 0) == first_hosted)
        previous = f"n{i}"
    return net


def test_the_partition_is_linear():
    """20,000 nodes alternating host and device: 10,000 regions, in well under a second per 10k nodes."""
    net = alternating_chain(Net(), 20_000, first_hosted=True)
    start = time.perf_counter()
    groups = partition(net.nodes, net.hosted)
    assert len(groups) == 10_000
    assert time.perf_counter() - start < 5.0


def test_a_loop_body_reading_an_outer_tensor_reads_it():
    """A subgraph's outer-scope reads count as the node's inputs (for the partition and the region's
    boundary)."""
    outer = gs.Variable("outer", dtype=np.float32, shape=[1])
    inner_in = gs.Variable("s", dtype=np.float32, shape=[1])
    inner_out = gs.Variable("s2", dtype=np.float32, shape=[1])
    body = gs.Graph(nodes=[gs.Node("Add", inputs=[inner_in, outer], outputs=[inner_out])], inputs=[inner_in],
                    outputs=[inner_out])
    loop = gs.Node("Loop", inputs=[gs.Variable("m", dtype=np.int64, shape=[])], outputs=[gs.Variable("y")],
                   attrs={"body": body})
    assert [t.name for t in node_reads(loop)] == ["m", "outer"]


def _if_node(outer: gs.Variable) -> gs.Node:
    """An If on a runtime condition whose else branch clips `outer` with its min omitted (an empty-named
    input) and carries a value info of a static shape."""
    cond = gs.Variable("c", dtype=np.bool_, shape=[])
    hi = gs.Constant("hi", np.array(0.5, np.float32))
    then_out = gs.Variable("t_out", dtype=np.float32, shape=[1, 4])
    then_b = gs.Graph(nodes=[gs.Node("Relu", inputs=[outer], outputs=[then_out])], outputs=[then_out])
    clipped = gs.Variable("e_mid", dtype=np.float32, shape=[1, 4])  # a shape inference filled in
    else_out = gs.Variable("e_out", dtype=np.float32, shape=[1, 4])
    else_b = gs.Graph(nodes=[gs.Node("Clip", inputs=[outer, gs.Variable.empty(), hi], outputs=[clipped]),
                             gs.Node("Relu", inputs=[clipped], outputs=[else_out])], outputs=[else_out])
    y = gs.Variable("y", dtype=np.float32, shape=[1, 4])
    return gs.Node("If", "branch", inputs=[cond], outputs=[y], attrs={"then_branch": then_b, "else_branch": else_b})


def test_an_omitted_optional_input_inside_a_body_is_not_read():
    """silero-vad's If bodies hold LSTMs with omitted inputs: the region took the empty name for a boundary
    tensor and failed ('tensor '' has no known dtype')."""
    x = gs.Variable("x", dtype=np.float32, shape=[1, 4])
    assert [t.name for t in node_reads(_if_node(x))] == ["c", "x"]


def test_a_region_with_bodies_opens_its_input_sizes_and_drops_the_bodies_value_infos():
    """onnxruntime checks every branch against the region's input shapes when it opens it; a branch the
    inputs never take may not fit the sizes the conversion pinned (silero-vad's 8 kHz branch on 512 samples),
    so the inputs keep their rank only and the bodies' inferred shapes are left to onnxruntime."""
    import onnx

    x = gs.Variable("x", dtype=np.float32, shape=[1, 4])
    node = _if_node(x)
    graph = gs.Graph(nodes=[node], inputs=[x, node.inputs[0]], outputs=node.outputs)
    region = build_region(0, [node], graph, {"": 17}, _readers([node]))
    model = onnx.load_from_string(region.model)
    dims = {vi.name: [d.dim_param or d.dim_value for d in vi.type.tensor_type.shape.dim] for vi in model.graph.input}
    assert dims == {"c": [], "x": ["d0", "d1"]}
    bodies = [a.g for a in model.graph.node[0].attribute]
    assert bodies and all(len(b.value_info) == 0 for b in bodies)


@pytest.mark.parametrize("domain, op, version, runs", [
    ("com.microsoft", "Gelu", 1, True), ("com.microsoft", "FusedMatMul", 1, True),
    ("", "Loop", 17, True), ("", "SequenceConstruct", 17, True), ("", "ConcatFromSequence", 17, True),
    ("onnx2ttnn", "Linear", 1, False), ("my.domain", "Nothing", 1, False)])
def test_what_onnxruntime_runs(domain, op, version, runs):
    assert onnxruntime_runs(domain, op, version) is runs


def _readers(nodes):
    readers = {}
    for node in nodes:
        for tensor in node_reads(node):
            readers.setdefault(id(tensor), []).append(node)
    return readers
