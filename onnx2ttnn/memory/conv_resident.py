"""Conv weights resident in L1: the prepared weight and bias of each conv2d that reuses them, as candidates for
resident.py's choice beside the weights load_parameters uploads.

conv2d prepares its weights on the device at its first call and hands them back in DRAM (passes/
reuse_conv_weights.py; docs/ttnn-facts.md §24).  The program moves the ones the plan keeps resident to L1
interleaved once the first forward pass has released its activations (`settle_weights`, emit/conv_resident.py);
L1 then holds only the weights load_parameters put at the top of every bank, and each move lands right below the
previous one (probes/probe_conv_resident.py, results/conv_resident.txt), as if load_parameters had uploaded it
after the other weights.  Every later call of the conv takes the L1 copies and hands them back at the same
address, so from the second forward pass on they are read from L1 (docs/ttnn-facts.md §29).

A candidate is one conv's weight and bias together:
- bytes per bank: the prepared tensors copied to L1 interleaved, [1, 1, KH*KW*IC, OC] (grouped and depthwise
  weights expanded to every input channel) and [1, 1, 1, OC], with conv2d's channel padding bounded from above
  (padded_shape), in the format the conv prepares them in (ir/weight_bytes.prepared_weights_format; float32
  without a weights_dtype), over the L1 banks 
- benefit: what the cost model counts as their DRAM reads per forward (ir/weight_bytes.conv_param_bytes);
- live range: the whole schedule, like any weight, so the plan keeps its bytes free at every op, convs' scratch
  reserves included.
The first forward pass runs with the weights still in DRAM (less L1 in use than planned: never short of room).
"""
from __future__ import annotations

from onnx2ttnn.ir.weight_bytes import conv_param_bytes, prepared_shape, prepared_weights_format
from onnx2ttnn.ir.device import DeviceSpec
from onnx2ttnn.ir.layout import TTNNLayout, bytes_per_bank
from onnx2ttnn.ir.liveness import Buffer
from onnx2ttnn.memory.buffers import BufferFacts

NOTE = "resident_weights"  # the conv2d node attribute (ir/notes.py) place-memory sets on a conv whose weights stay
MOVED = "prepared by the conv's first call, moved to L1 after the first forward pass"


def candidates(nodes: list, last_index: int, device: DeviceSpec) -> list[BufferFacts]:
    """One BufferFacts per conv2d of the schedule `nodes` that reuses its prepared weights (keyed by its weight
    tensor: `buf.root`; `reads` names the conv)."""
    found = []
    for index, node in enumerate(nodes):
        if node.op != "conv2d" or not node.attrs.get("return_weights_and_bias"):
            continue
        layout = TTNNLayout(page="tile", dtype=prepared_weights_format(node) or "f32", buffer="l1",
                            memory_layout="interleaved")
        size = bytes_per_bank(padded_shape(node, device), layout, device.cores)
        if len(node.inputs) > 2:  # a bias
            size += bytes_per_bank(padded_shape(node, device, bias=True), layout, device.cores)
        buf = Buffer(node.inputs[1], index, last_index, is_param=True)
        found.append(BufferFacts(buf, 0, last_index, layout, size, size, conv_param_bytes(node), [(node, 1)]))
    return found


def padded_shape(node, device: DeviceSpec, bias: bool = False) -> tuple[int, int, int, int]:
    """A bound on the padded shape of a conv's prepared weight (bias): ir/weight_bytes.prepared_shape with the input and
    output channels rounded up as conv2d's channel split may round them (padded_channels).  ttnn.clone keeps that
    padding in L1 (docs/ttnn-facts.md §29)."""
    _, _, rows, cols = prepared_shape(node, bias)
    kh, kw = node.attrs.get("kernel_size", (1, 1))
    if not bias:
        rows = kh * kw * padded_channels(int(node.attrs["in_channels"]), device)
    return 1, 1, rows, padded_channels(cols, device)


def padded_channels(channels: int, device: DeviceSpec) -> int:
    """The most a channel count grows when conv2d splits its tiles over n cores: tt-metal picks n counting down
    from the cores it may use and stops at the first n whose padding (the tiles rounded up to a multiple of n) is
    less than one core's share (conv2d_utils.cpp, find_closest_largest_divisor_with_num_padding).  The cores it
    may use depend on the sharding it picks (one for height, a grid side for block, every core for width), so
    this takes the largest padding over those: 144 -> 160 (a tile), 960 -> 1024 over n150's 8 columns
    (docs/ttnn-facts.md §29)."""
    tiles = -(-channels // 32)
    return 32 * max(_round_up(tiles, _cores_for(tiles, start))
                    for start in (1, device.grid_x, device.grid_y, device.cores))


def _cores_for(tiles: int, start: int) -> int:
    cores = start
    while _round_up(tiles, cores) - tiles >= _round_up(tiles, cores) // cores:
        cores -= 1
    return cores


def _round_up(value: int, step: int) -> int:
    return -(-value // step) * step


def resident_convs(items: list[BufferFacts], chosen: dict, why: dict) -> list:
    """(conv, bytes per bank) of the convs whose candidate `chosen` holds (their reasons say how the weights get
    there)."""
    convs = []
    for item in items:
        key = id(item.buf.root)
        if key in chosen:
            convs.append((item.reads[0][0], item.interleaved_bytes))
            why[key] = f"{why[key]} ({MOVED})"
    return convs
