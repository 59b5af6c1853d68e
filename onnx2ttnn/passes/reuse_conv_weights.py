"""reuse-conv-weights: conv2d prepares its weights once and later calls reuse them.

Reads: ttnn nodes after lowering (conv2d reading host weight and bias parameters).  Writes: the argument
`return_weights_and_bias=True` on every conv2d whose weight and bias parameters no other node reads.  The
call then hands back the weight and bias it prepared on the device, the program stores them in `params` in
place of the host tensors (the emitter assigns them to the parameters the call read), and every later call
passes them in, so a forward pass no longer uploads and rearranges every conv weight from the host
(tools/ttnn_mock/probes/probe_conv_reuse.py: the second call takes them and keeps their buffers).
Before: `y = ttnn.conv2d(..., weight_tensor=params['w'], bias_tensor=params['b'])`;
after: `y, (params['w'], params['b']) = ttnn.conv2d(..., return_weights_and_bias=True)`.
A parameter read by two convs (tied weights) stays on the host: each conv prepares it for its own input.
"""
from __future__ import annotations

from onnx2ttnn.ir.graph import Module
from onnx2ttnn.passes.base import Pass, PassContext


class ReuseConvWeights(Pass):
    name = "reuse-conv-weights"

    def run(self, module: Module, ctx: PassContext) -> None:
        reused = 0
        for node in module.graph.nodes:
            if node.op != "conv2d":
                continue
            params = node.inputs[1:3]
            if all(_own_parameter(tensor, node) for tensor in params):
                node.attrs["return_weights_and_bias"] = True
                reused += 1
        module.notes[self.name] = {"convs_reusing_weights": reused}


def _own_parameter(tensor, node) -> bool:
    """The tensor is a parameter (load_parameters uploads it) that only this node reads."""
    producer = tensor.inputs[0] if tensor.inputs else None
    readers = [c for c in tensor.outputs if c.op != "deallocate"]
    return producer is not None and bool(producer.attrs.get("_param")) and readers == [node]
