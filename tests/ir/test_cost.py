"""The cost model (ir/cost.py): bytes per op by placement, roofline time from the DeviceSpec, the floor."""
from __future__ import annotations

import numpy as np
import onnx
import onnx_graphsurgeon as gs
import pytest
from onnx import TensorProto, helper, numpy_helper

import onnx2ttnn
from onnx2ttnn.ir.cost import floor_bytes, node_cost, program_cost
from onnx2ttnn.ir.device import get_device
from onnx2ttnn.ir.graph import set_layout, ttnn_node
from onnx2ttnn.ir.layout import HOST_F32, TTNNLayout
from onnx2ttnn.ir.weight_bytes import weight_formats

N150 = get_device("n150")
DRAM = TTNNLayout()
L1 = TTNNLayout(buffer="l1")
HS = TTNNLayout(buffer="l1", memory_layout="height_sharded", grid=(8, 1), shard=(32, 64))


def _unary(layout_in: TTNNLayout, layout_out: TTNNLayout, shape=(1, 1, 256, 64), op="relu"):
    x = gs.Variable("x", dtype=np.float32, shape=list(shape))
    y = gs.Variable("y", dtype=np.float32, shape=list(shape))
    set_layout(x, layout_in)
    set_layout(y, layout_out)
    return ttnn_node(op, [x], [y])


def test_dram_op_reads_and_writes_dram_at_the_chip_bandwidth():
    cost = node_cost(_unary(DRAM, DRAM), N150)
    assert (cost.dram_read, cost.dram_write) == (16 * 2048, 16 * 2048)  # 16 bf16 tiles each way
    assert cost.cores == 16 and cost.bound == "dram"
    # 16 cores draw 16 x 32 GB/s over their NoC ports, more than the 288 GB/s DRAM gives
    assert cost.time_s == pytest.approx(2 * 16 * 2048 / 288e9)


def test_l1_interleaved_goes_over_the_noc_and_sharded_is_local():
    interleaved = node_cost(_unary(L1, L1), N150)
    sharded = node_cost(_unary(HS, HS), N150)
    assert interleaved.dram_bytes == 0 and sharded.dram_bytes == 0
    assert interleaved.l1_read == interleaved.l1_write == 16 * 2048
    assert sharded.local_read == sharded.local_write == 16 * 2048
    assert interleaved.time_s == pytest.approx(2 * 16 * 2048 / (32e9 * 16))  # NoC port, 16 cores
    assert sharded.cores == 8
    assert sharded.time_s == pytest.approx(2 * 16 * 2048 / (64e9 * 8))  # own L1, the 8 shard cores


def test_matmul_is_compute_bound_at_the_matrix_peak():
    a = gs.Variable("a", dtype=np.float32, shape=[1, 1024, 1024])
    b = gs.Variable("b", dtype=np.float32, shape=[1024, 1024])
    y = gs.Variable("y", dtype=np.float32, shape=[1, 1024, 1024])
    for t in (a, b, y):
        set_layout(t, L1)
    cost = node_cost(ttnn_node("matmul", [a, b], [y]), N150)
    assert cost.flops == 2.0 * 1024 ** 3
    assert cost.bound == "compute"
    # no compute kernel config: ttnn compiles a matmul at HiFi2 (ttnn-facts §35), twice the HiFi4 peak
    assert cost.time_s == pytest.approx(2.0 * 1024 ** 3 / (2 * 74e12))


@pytest.mark.parametrize("op, attrs, speedup", [("matmul", {}, 2.0), ("linear", {}, 2.0),
                                                ("linear", {"core_grid": "grid"}, 4.0)])
def test_a_call_without_a_config_runs_at_ttnns_default_fidelity(op, attrs, speedup):
    """matmul / linear without a config compile at HiFi2, LoFi when given a core grid (probe_default_fidelity.py)."""
    from onnx2ttnn.ir.cost import _fidelity_speedup
    from onnx2ttnn.ir.ttnn_ops import op_info

    a = gs.Variable("a", dtype=np.float32, shape=[1, 64, 64])
    b = gs.Variable("b", dtype=np.float32, shape=[64, 64])
    y = gs.Variable("y", dtype=np.float32, shape=[1, 64, 64])
    node = ttnn_node(op, [a, b], [y], **attrs)
    assert _fidelity_speedup(node, op_info(op)) == speedup


@pytest.mark.parametrize("fidelity, speedup", [("HiFi4", 1.0), ("HiFi3", 4 / 3), ("HiFi2", 2.0), ("LoFi", 4.0)])
def test_the_matrix_peak_scales_with_the_calls_math_fidelity(fidelity, speedup):
    """matrix_tflops is the HiFi4 figure; fewer multiplier passes run proportionally faster (ir/kernel_config)."""
    from onnx2ttnn.ir.kernel_config import KernelConfig

    a = gs.Variable("a", dtype=np.float32, shape=[1, 1024, 1024])
    b = gs.Variable("b", dtype=np.float32, shape=[1024, 1024])
    y = gs.Variable("y", dtype=np.float32, shape=[1, 1024, 1024])
    for t in (a, b, y):
        set_layout(t, L1)
    node = ttnn_node("matmul", [a, b], [y], compute_kernel_config=KernelConfig(fidelity))
    cost = node_cost(node, N150)
    assert cost.bound == "compute"
    assert cost.time_s == pytest.approx(2.0 * 1024 ** 3 / (74e12 * speedup))


def test_deallocate_and_views_cost_nothing():
    x = gs.Variable("x", dtype=np.float32, shape=[1, 128, 768])
    set_layout(x, DRAM)
    assert node_cost(ttnn_node("deallocate", [x], []), N150).time_s == 0
    y = gs.Variable("y", dtype=np.float32, shape=[128, 768])
    set_layout(y, DRAM)
    view = node_cost(ttnn_node("reshape", [x], [y], shape=(128, 768)), N150)
    assert view.dram_bytes == 0 and view.time_s == 0


def _shared_weight_model() -> onnx.ModelProto:
    """Two MatMuls reading the same 64x64 weight."""
    w = numpy_helper.from_array(np.ones((64, 64), np.float32), "w")
    nodes = [helper.make_node("MatMul", ["x", "w"], ["h"]), helper.make_node("Relu", ["h"], ["r"]),
             helper.make_node("MatMul", ["r", "w"], ["y"])]
    graph = helper.make_graph(nodes, "shared", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [32, 64])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [32, 64])], [w])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_floor_reads_each_weight_once_and_counts_inputs_and_outputs():
    conversion = onnx2ttnn.convert(_shared_weight_model(), memory="dram", weights="bf16")
    graph = conversion.module.graph
    tile = 2048
    # weight 64x64 = 4 tiles read once; input 32x64 and output 32x64 = 2 tiles each
    assert floor_bytes(graph) == (4 + 2 + 2) * tile
    cost = program_cost(graph, N150)
    # all DRAM, in tiles: upload x 2; linear reads x 2 + w 4, writes r 2 (its relu, activation=, folded into the
    # matmul's program by core_grid=: docs/ttnn-facts.md §31); linear r 2 + w 4, y 2; to_torch reads y 2
    assert [(n.op, n.dram_read // tile, n.dram_write // tile) for n in cost.nodes] == [
        ("from_torch", 0, 2), ("linear", 6, 2), ("linear", 6, 2), ("to_torch", 2, 0)]
    assert cost.dram_bytes == 20 * tile
    # without the core grid, real ttnn runs the relu as a second program (§22): it reads h 2 and writes r 2 more
    first = next(node for node in graph.nodes if node.op == "linear")
    del first.attrs["core_grid"]
    apart = program_cost(graph, N150)
    assert [(n.dram_read // tile, n.dram_write // tile) for n in apart.nodes if n.op == "linear"][0] == (8, 4)


def _relu_chain(count: int, view_every: int = 0) -> gs.Graph:
    """`count` relus in a row in DRAM, with a view (a reshape that keeps the tile shape) after every
    `view_every`-th one."""
    nodes, x = [], gs.Variable("x0", dtype=np.float32, shape=[1, 1, 64, 64])
    set_layout(x, DRAM)
    for i in range(count):
        y = gs.Variable(f"y{i}", dtype=np.float32, shape=[1, 1, 64, 64])
        set_layout(y, DRAM)
        nodes.append(ttnn_node("relu", [x], [y]))
        x = y
        if view_every and (i + 1) % view_every == 0:
            v = gs.Variable(f"v{i}", dtype=np.float32, shape=[1, 64, 64])
            set_layout(v, DRAM)
            nodes.append(ttnn_node("reshape", [x], [v], shape=(1, 64, 64)))
            x = v
    return gs.Graph(nodes=nodes)


def test_dispatch_scales_with_the_calls_and_trace_removes_the_host_part():
    small, large = program_cost(_relu_chain(4), N150), program_cost(_relu_chain(8), N150)
    assert (small.calls, large.calls) == (4, 8) and (small.launches, large.launches) == (4, 8)
    per_call = (N150.op_launch_us + N150.host_dispatch_us) * 1e-6
    assert small.eager_s - small.time_s == pytest.approx(4 * per_call)
    assert large.eager_s - large.time_s == pytest.approx(8 * per_call)
    # traced: every launch stays, the host pays one execute_trace per forward
    assert large.traced_s == pytest.approx(large.time_s + 8 * N150.op_launch_us * 1e-6 + N150.trace_replay_us * 1e-6)
    assert small.traced_s < small.eager_s and large.traced_s < large.eager_s
    assert large.summary()["calls"] == 8 and large.summary()["traced_us"] == pytest.approx(large.traced_s * 1e6, abs=1e-3)


def test_a_view_is_a_call_the_host_dispatches_but_launches_nothing():
    cost = program_cost(_relu_chain(4, view_every=2), N150)
    assert cost.calls == 6 and cost.launches == 4
    assert cost.eager_s - cost.time_s == pytest.approx((4 * N150.op_launch_us + 6 * N150.host_dispatch_us) * 1e-6)


def test_weight_formats_count_each_weight_once_in_the_format_it_is_read_in():
    a = gs.Variable("a", dtype=np.float32, shape=[1, 64, 64])
    set_layout(a, DRAM)
    uploads, nodes = [], []
    for name, dtype in (("w8", "bfp8"), ("w16", "bf16")):
        const = gs.Constant(name, np.zeros((64, 64), np.float32))
        w = gs.Variable(name + "_d", dtype=np.float32, shape=[64, 64])
        set_layout(w, TTNNLayout(dtype=dtype))
        uploads.append(ttnn_node("from_torch", [const], [w], _param=name))
    for i in range(2):  # both matmuls read both weights: each is counted once
        for up in uploads:
            y = gs.Variable(f"y{i}{up.attrs['_param']}", dtype=np.float32, shape=[1, 64, 64])
            set_layout(y, DRAM)
            nodes.append(ttnn_node("matmul", [a, up.outputs[0]], [y]))
    formats = weight_formats(gs.Graph(nodes=uploads + nodes))
    assert formats == {"bf16": 4 * 2048, "bfp8": 4 * 1088}  # 2x2 tiles each


def _embedding(table_layout: TTNNLayout, rows: int = 128, vocab: int = 30522, width: int = 768):
    ids = gs.Variable("ids", dtype=np.int32, shape=[1, rows])
    set_layout(ids, TTNNLayout(page="row_major", dtype="u32", buffer="l1"))
    table = gs.Variable("table", dtype=np.float32, shape=[vocab, width])
    set_layout(table, table_layout)
    out = gs.Variable("rows", dtype=np.float32, shape=[1, rows, width])
    set_layout(out, TTNNLayout(buffer="l1"))
    return ttnn_node("embedding", [ids, table], [out])


def test_embedding_reads_only_the_rows_of_a_row_major_table():
    """One table row per index (tt-metal embeddings.cpp): 128 rows of 768 bf16, not the 47 MB table."""
    cost = node_cost(_embedding(TTNNLayout(page="row_major", buffer="dram")), get_device("n150"))
    assert cost.dram_read == 128 * 768 * 2 and cost.dram_write == 0


def test_embedding_untilizes_a_tile_table_whole_on_every_call():
    """ttnn.embedding turns a TILE table into a ROW_MAJOR copy first (tt-metal embedding.cpp): the bfloat8_b
    tiles are read, the bfloat16 rows written, and the gathered rows read from the copy."""
    cost = node_cost(_embedding(TTNNLayout(dtype="bfp8", buffer="dram")), get_device("n150"))
    tiles = -(-30522 // 32) * (768 // 32) * 1088
    assert cost.dram_read == tiles + 128 * 768 * 2 and cost.dram_write == 30522 * 768 * 2


def test_an_unconfigured_linear_adds_its_bias_in_a_second_pass(mlp_path):
    """Without a program config or a core grid, ttnn adds a linear's bias with a program of its own (tt-metal
    matmul.cpp post_process_bias; probe_core_grid.py: 2 programs, 1 with core_grid): the result is read back
    with the bias and written again."""
    graph = onnx2ttnn.convert(mlp_path, memory="dram", weights="bf16").module.graph
    head = [node for node in graph.nodes if node.op == "linear"][-1]
    assert not head.attrs.get("activation") and "core_grid" in head.attrs
    folded = node_cost(head, N150)
    del head.attrs["core_grid"]
    apart = node_cost(head, N150)
    out, bias = head.outputs[0], head.inputs[2]
    from onnx2ttnn.ir.graph import layout_of
    from onnx2ttnn.ir.layout import total_bytes

    result = total_bytes(out.shape, layout_of(out))
    assert apart.dram_read - folded.dram_read == result + total_bytes(bias.shape, layout_of(bias))
    assert apart.dram_write - folded.dram_write == result and apart.time_s > folded.time_s


@pytest.mark.parametrize("device", ["n300", "t3k", "galaxy"])
def test_all_reduce_is_never_dearer_than_reduce_scatter_and_all_gather(device):
    """The pair sends the ring bytes of one all_reduce (2 (chips - 1) / chips of the tensor) in two calls: the
    model takes all_reduce at every size and chip count, which is why split-tensor-parallel emits it
    (docs/design.md §6.29).  A change to the model that made the pair cheaper fails here and in the pass."""
    from onnx2ttnn.ir.ccl_cost import cheaper_reduction, reduction_seconds

    spec = get_device(device)
    for chips in (2, 4, 8, 32):
        for size in (2048, 128 * 768 * 2, 64 << 20):
            one = reduction_seconds(("all_reduce",), size, chips, spec)
            pair = reduction_seconds(("reduce_scatter", "all_gather"), size, chips, spec)
            launch = (spec.op_launch_us + spec.host_dispatch_us) * 1e-6
            assert pair == pytest.approx(one + launch, rel=1e-6, abs=1e-12)
            assert cheaper_reduction(size, chips, spec) == ("all_reduce",)


def _scaled(row_layout: TTNNLayout, n: int = 768):
    """multiply(y, row): y [1, 1, 224, n] float32 TILE in L1, the [1, n] float32 row in `row_layout`."""
    y = gs.Variable("y", dtype=np.float32, shape=[1, 1, 224, n])
    row = gs.Variable("row", dtype=np.float32, shape=[1, n])
    out = gs.Variable("out", dtype=np.float32, shape=[1, 1, 224, n])
    for t, layout in ((y, TTNNLayout(dtype="f32", buffer="l1")), (row, row_layout),
                      (out, TTNNLayout(dtype="f32", buffer="l1"))):
        set_layout(t, layout)
    return ttnn_node("multiply", [y, row], [out])


@pytest.mark.parametrize("buffer", ["dram", "l1"])
def test_a_row_major_row_is_tilized_into_a_copy_in_its_own_buffer_at_every_call(buffer):
    """ttnn-facts §47: a ROW_MAJOR [1, N] operand is read, its tile-padded copy written in the row's buffer and
    read by the binary op: in DRAM 4 N + 2 x 128 N bytes (more than a TILE row's 128 N), in L1 none."""
    tile = node_cost(_scaled(TTNNLayout(dtype="f32", buffer=buffer)), N150)
    rows = node_cost(_scaled(TTNNLayout(page="row_major", dtype="f32", buffer=buffer)), N150)
    padded, content = 32 * 768 * 4, 768 * 4
    if buffer == "dram":
        assert (tile.dram_read, tile.dram_write) == (padded, 0)
        assert (rows.dram_read, rows.dram_write) == (content + padded, padded)
    else:
        assert rows.dram_bytes == tile.dram_bytes == 0
        assert rows.l1_read - tile.l1_read == content and rows.l1_write - tile.l1_write == padded


def test_a_row_major_bias_is_added_apart_even_with_a_core_grid(mlp_path):
    """probe_compact_rows_l1.py: linear with a core grid fuses a TILE bias (one device operation) but runs a
    ROW_MAJOR one as matmul, tilize, binary add: the result is read back and written again."""
    from onnx2ttnn.ir.graph import layout_of
    from onnx2ttnn.ir.layout import total_bytes

    graph = onnx2ttnn.convert(mlp_path, memory="dram", weights="bf16").module.graph
    head = [node for node in graph.nodes if node.op == "linear"][-1]
    assert "core_grid" in head.attrs and not head.attrs.get("activation")
    fused = node_cost(head, N150)
    out, bias = head.outputs[0], head.inputs[2]
    tile_bias = layout_of(bias)
    set_layout(bias, tile_bias.with_(page="row_major"))
    apart = node_cost(head, N150)
    result, padded = total_bytes(out.shape, layout_of(out)), total_bytes(bias.shape, tile_bias)
    row = total_bytes(bias.shape, layout_of(bias))
    # the row instead of the padded bias, then the add reads the result back and the padded copy
    assert apart.dram_read - fused.dram_read == row + result
    assert apart.dram_write - fused.dram_write == result + padded  # the result again, the copy


def test_a_value_of_unknown_size_is_named_not_counted():
    """A host value whose shape only running the program tells (a Loop's scan output) reads 0 known bytes; the
    call names it, and a known operand beside it is still counted."""
    from onnx2ttnn.ir.weight_bytes import known_size, read_bytes

    host = HOST_F32
    scan = gs.Variable("scan", dtype=np.float32, shape=[None, 1, 4])
    known = gs.Variable("known", dtype=np.float32, shape=[2, 4])
    assert not known_size(scan) and known_size(known) and read_bytes(scan, host) == 0
    y = gs.Variable("y", dtype=np.float32, shape=[2, 4])
    for t, layout in ((scan, host), (known, host), (y, host)):
        set_layout(t, layout)
    cost = node_cost(ttnn_node("host_output", [scan], [y]), N150)
    assert cost.unknown == ["y"] and cost.dram_read == 0  # named as the program output it is returned as
    both = node_cost(ttnn_node("concat", [scan, known], [gs.Variable("z", dtype=np.float32, shape=[2, 4])]), N150)
    assert both.unknown == ["scan"] and both.dram_read == 4 * 8
