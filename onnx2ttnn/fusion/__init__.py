"""Fusion rules: pattern + check + replacement on the ONNX graph, grouped in one ordered rule set.

A rule's `match(node)` anchors at one node and returns either a Match (what to rewrite) or a string saying
why the pattern was rejected; `rewrite(graph, match)` changes the graph.  Fused nodes are in domain
`onnx2ttnn` and lowered by rules of that domain.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Optional, Union

import numpy as np
import onnx_graphsurgeon as gs

from onnx2ttnn.ir.graph import FUSED_DOMAIN, is_onnx_op  # noqa: F401 (FUSED_DOMAIN: for the rules)


@dataclass
class Match:
    anchor: gs.Node
    nodes: list  # every node the match consumes
    values: dict = field(default_factory=dict)


@dataclass(frozen=True)
class FusionRule:
    name: str
    anchor_op: str
    match: Callable[[gs.Node], Union[Match, str, None]]
    rewrite: Callable[[gs.Graph, Match], None]
    dtypes: tuple[str, ...] = ("bf16", "fp32")  # the compute dtypes (Module.compute_dtype, --dtype settled) whose programs it suits


def single_consumer(tensor: gs.Tensor) -> Optional[gs.Node]:
    """The only node reading `tensor`, or None (several readers, or none)."""
    return tensor.outputs[0] if len(tensor.outputs) == 1 else None


def constant(tensor: gs.Tensor) -> Optional[np.ndarray]:
    return np.asarray(tensor.values) if isinstance(tensor, gs.Constant) else None


def scalar(tensor: gs.Tensor) -> Optional[float]:
    """The value of a one-element constant, or None."""
    c = constant(tensor)
    return float(c.reshape(-1)[0]) if c is not None and c.size == 1 else None


def other_input(node: gs.Node, tensor: gs.Tensor) -> gs.Tensor:
    """The input of a two-input node that is not `tensor`."""
    return node.inputs[1] if node.inputs[0] is tensor else node.inputs[0]


def is_op(node: Optional[gs.Node], op: str) -> bool:
    return is_onnx_op(node, op)


def producer(tensor: gs.Tensor) -> Optional[gs.Node]:
    return tensor.inputs[0] if tensor.inputs else None


def replace_outputs(graph: gs.Graph, old: gs.Tensor, new_node: gs.Node) -> None:
    """Make `new_node` produce `old` (keeping its name, so graph outputs stay valid)."""
    for node in list(old.inputs):
        node.outputs.clear()
    new_node.outputs = [old]
    graph.nodes.append(new_node)


def rule_set() -> list[FusionRule]:
    """All fusion rules, in the order they are applied."""
    from onnx2ttnn.fusion import (attention, conv_activation, conv_bias, conv_bn, gelu, gelu_tanh, linear, quantize,
                                  rms_norm)

    # attention before matmul-add: it takes the q, k, v and output projections' MatMul + Add itself
    # conv-bias before conv-batchnorm and conv-activation: an exporter's separate bias Add sits between them
    return [*conv_bias.RULES, conv_bn.RULE, conv_activation.RULE, gelu.RULE, gelu_tanh.RULE, rms_norm.RULE, attention.RULE, linear.RULE,
            quantize.RULE]
