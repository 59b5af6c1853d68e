"""The program's settle_weights(params): conv weights the memory plan keeps resident in L1 (memory/conv_resident.py)
moved there once, after the first forward pass.

Each conv2d with the `_resident_weights` note prepared its weight and bias in DRAM at its first call and stored
them in `params` (passes/reuse_conv_weights.py).  settle_weights copies each one still in DRAM to L1 interleaved
with ttnn.clone, which keeps the padded shape conv2d gave it (to_memory_config drops it, and the next call then
refuses a block-sharded conv's weights: docs/ttnn-facts.md §29), and frees the DRAM copy.  It runs at the end
of forward(), when every activation is released, so the copies land right below the weights load_parameters put
at the top of L1 (docs/ttnn-facts.md §29), and after the warm-up of a traced run, before the capture.  Later
calls find them in L1 and do nothing.
"""
from __future__ import annotations

import onnx_graphsurgeon as gs

from onnx2ttnn.emit.writer import CodeWriter

CALL = "settle_weights(params)"
COMMENT = "  # conv weights the plan keeps in L1: moved there once, after the first forward"


def resident_keys(nodes: list[gs.Node]) -> list[str]:
    """The params keys of the resident conv weights and biases, in schedule order (weight, then bias)."""
    keys = []
    for node in nodes:
        if node.op == "conv2d" and node.attrs.get("_resident_weights"):
            keys += [tensor.inputs[0].attrs["_param"] for tensor in node.inputs[1:3]]
    return keys


def settle_function(w: CodeWriter, keys: list[str], nodes: list[gs.Node]) -> None:
    reserved = sum(node.attrs.get("_resident_weights", 0) for node in nodes if node.op == "conv2d")
    w.line("# the conv weights and biases the memory plan keeps resident in L1, in the order they are moved there")
    w.line(f"# (the plan reserves {reserved} B per L1 bank for them)")
    w.line("RESIDENT_CONV_WEIGHTS = (")
    with w.indent():
        for key in keys:
            w.line(f"{ascii(key)},")
    w.line(")")
    w.line()
    w.line()
    w.lines('''
def settle_weights(params):
    """Move the prepared conv weights still in DRAM (each conv2d's first call prepared them there) to L1, once;
    called when no activation is allocated, so they land below the weights load_parameters put in L1."""
    for key in RESIDENT_CONV_WEIGHTS:
        tensor = params[key]
        if tensor.storage_type() == ttnn.StorageType.DEVICE and \\
                tensor.memory_config().buffer_type == ttnn.BufferType.DRAM:
            params[key] = ttnn.clone(tensor, memory_config=ttnn.L1_MEMORY_CONFIG)  # keeps conv2d's padding
            ttnn.deallocate(tensor)
'''.strip("\n"))
    w.line()
    w.line()
