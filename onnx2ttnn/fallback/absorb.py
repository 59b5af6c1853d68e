"""Small device ops between host values and a host region, taken into the region (one round trip fewer).

After lower-to-ttnn's first round has collected the nodes only onnxruntime runs, a node the device could
run joins them (and so their region, fallback/regions.py `partition`) when all of these hold:
- every value it reads at run time is already on the host: a graph input (the program's argument) or an
  output of a hosted node; constants are fine;
- every node reading its outputs is hosted, and none of its outputs is a graph output;
- it is small: each output holds at most SMALL_ELEMENTS elements, and it has no subgraph;
- onnxruntime runs it, and the program can carry its tensors (`carriable`).
On the device such a node costs an upload of its inputs (unless another device node reads them too), a
device op and a download of its outputs before the region; in the region it costs none of these, and
onnxruntime computes it in float32.  Absorbing it never adds a transfer: its inputs are on the host already,
and only the region reads its outputs.  One pass over the nodes and their readers (linear); only ops right
next to the host values are taken (a chain of two device ops before a region keeps both on the device).
Before: `c = Equal(sr, 16000)` on the device (sr uploaded, c downloaded), `If(c)` in a region; after: the
region holds {Equal, If} and reads sr as it is (silero-vad); likewise the Unsqueeze between a Loop's trip
count output and the Slice that cuts its scan buffers (the table decoder).
"""
from __future__ import annotations

from typing import Callable

import onnx_graphsurgeon as gs

from onnx2ttnn.fallback.regions import node_reads

SMALL_ELEMENTS = 1024  # an absorbed op's outputs each hold at most this many elements (shape-sized values)


def absorbed(nodes: list[gs.Node], hosted: list[gs.Node], graph_inputs: list[gs.Tensor],
             graph_outputs: list[gs.Tensor], ort_runs: Callable[[gs.Node], bool]) -> list[gs.Node]:
    """The device nodes of `nodes` that join the host regions of `hosted` (see the module docstring);
    `ort_runs(node)` says whether onnxruntime runs the node and the program can carry its tensors."""
    host = {id(n) for n in hosted}
    on_host = {id(t) for t in graph_inputs} | {id(t) for n in hosted for t in n.outputs if t.name}
    outputs = {id(t) for t in graph_outputs}
    readers: dict[int, list[gs.Node]] = {}
    for node in nodes:
        for tensor in node_reads(node):
            readers.setdefault(id(tensor), []).append(node)
    taken = []
    for node in nodes:
        if id(node) in host or any(True for _ in node.subgraphs()) or not node.outputs:
            continue
        made = [t for t in node.outputs if t.name]
        if not made or any(id(t) in outputs or not _small(t) for t in made):
            continue
        if any(isinstance(t, gs.Variable) and id(t) not in on_host for t in node_reads(node)):
            continue
        if any(id(r) not in host for t in made for r in readers.get(id(t), ())):
            continue
        if not all(readers.get(id(t)) for t in made):
            continue  # (an output nobody reads: nothing to save)
        if ort_runs(node):
            taken.append(node)
    return taken


def _small(tensor: gs.Tensor) -> bool:
    shape = tensor.shape
    if shape is None or not all(isinstance(d, int) for d in shape):
        return False
    count = 1
    for d in shape:
        count *= d
    return count <= SMALL_ELEMENTS
