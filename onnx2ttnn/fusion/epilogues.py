"""Epilogue fusions on the lowered ttnn graph: an op's following activation, or a norm's preceding residual add,
folded into the op's own arguments.  Each rule is pattern + check + replacement; `match` returns a Match, a
reason (the near-match it rejects) or None.  Applied by passes/fuse_epilogues.py.

What each fused argument computes on ttnn 0.81.1 (docs/ttnn-facts.md §22, probe_epilogues.py):
- `linear(..., activation="gelu")` (and relu, silu, sigmoid) on interleaved tensors runs the matmul and then the
  very unary kernel the standalone call runs (same SFPU chain, same accurate defaults), on the rounded result:
  the numbers are those of the unfused pair;
- `add(a, b, activations=[UnaryWithParam(RELU)])` (subtract, multiply) applies relu inside the binary kernel:
  relu commutes with rounding, so the numbers are those of the unfused pair;
- `layer_norm(a, residual_input_tensor=b)` (rms_norm too) normalises a + b; it returns only the normalised value.
Before: `t = ttnn.linear(x, w, bias=b); y = ttnn.gelu(t)`; after: `y = ttnn.linear(x, w, bias=b, activation="gelu")`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Collection, Optional, Union

import numpy as np
import onnx_graphsurgeon as gs

from onnx2ttnn.fusion import Match
from onnx2ttnn.ir.graph import TTNNCall, TTNNRef, argument_attrs
from onnx2ttnn.ir.ttnn_ops import OpNames

# standalone unary op -> the `activation=` string linear / matmul take for the same kernel (§22: the probe saw the
# fused call add the standalone call's SFPU chain, e.g. gelu_tile<0u>, the accurate erf form)
MATMUL_ACTIVATIONS = {"relu": "relu", "gelu": "gelu", "silu": "silu", "sigmoid": "sigmoid"}
MATMUL_OPS = OpNames(lambda info: info.fused_activation == "activation")
# binary ops whose `activations=[...]` fuse a relu into their kernel (§22); relu only: its result is the same
# whether it runs before or after the bfloat16 rounding, so the fused call computes what the unfused pair did
BINARY_OPS = OpNames(lambda info: info.fused_activation == "activations")
BINARY_ACTIVATIONS = {"relu": "RELU"}
NORM_OPS = ("layer_norm", "rms_norm")
NORM_ARGUMENTS = ("weight", "bias")  # the optional tensors before residual_input_tensor (ir/ttnn_ops/nn.py)


@dataclass(frozen=True)
class EpilogueRule:
    name: str
    anchor_ops: Collection[str]
    match: Callable[[gs.Node, frozenset], Union[Match, str, None]]
    rewrite: Callable[[Match], gs.Node]  # returns the node folded away (detached; the caller drops it)


def _producer(tensor: gs.Tensor) -> Optional[gs.Node]:
    return tensor.inputs[0] if tensor.inputs else None


def _notes_block(*nodes: gs.Node) -> Optional[str]:
    """Why these nodes cannot be merged, or None: a float32 result pinned by lowering (lowering/accuracy.py)."""
    for node in nodes:
        if node.attrs.get("_dtype"):
            return f"{node.op} computes in a pinned dtype ({node.attrs['_dtype']})"
    return None


def _only_reader(tensor: gs.Tensor, outputs: frozenset) -> Optional[str]:
    """Why `tensor` is needed after the fused op, or None when the fused op's consumer is its only reader."""
    if id(tensor) in outputs:
        return "the intermediate is a graph output"
    if len(tensor.outputs) != 1:
        return f"the intermediate has {len(tensor.outputs)} readers"
    return None


def _merge_into(first: gs.Node, second: gs.Node) -> gs.Node:
    """`first` takes over `second`'s output (and the ONNX values verify --per-op reads from it: `_probes`);
    `second` is detached."""
    first.outputs = list(second.outputs)
    _move_probes(second, first)
    second.outputs.clear()
    second.inputs.clear()
    return second


def _move_probes(source: gs.Node, target: gs.Node) -> None:
    """`target` now computes what `source` did: it reports `source`'s ONNX values, no longer its own."""
    target.attrs.pop("_probes", None)
    if source.attrs.get("_probes"):
        target.attrs["_probes"] = source.attrs["_probes"]


def _join_sources(earlier: gs.Node, later: gs.Node, kept: gs.Node) -> None:
    """The kept node's comment names both ONNX nodes it now computes."""
    sources = [s for s in (earlier.attrs.get("_source"), later.attrs.get("_source")) if s]
    if len(sources) == 2 and sources[0] != sources[1]:
        kept.attrs["_source"] = f"{sources[0]} + {sources[1]}"


# --- matmul / linear + activation -----------------------------------------------------------------------------

def _match_matmul_activation(node: gs.Node, outputs: frozenset):
    out = node.outputs[0]
    moved = _only_reshape(out, outputs)  # an elementwise activation commutes with the reshape between them
    last = moved.outputs[0] if moved is not None else out
    if len(last.outputs) != 1 or last.outputs[0].op not in MATMUL_ACTIVATIONS:
        return None
    act = last.outputs[0]
    reason = _only_reader(out, outputs) or _only_reader(last, outputs) or _notes_block(node, act)
    if reason:
        return reason
    name = _activation_string(act)
    if name is None:
        return f"{act.op} has arguments {sorted(argument_attrs(act))} (a variant no activation string names)"
    if "activation" in node.attrs:
        return f"{node.op} already has an activation"
    return Match(node, [node, act], {"act": act, "activation": name, "reshape": moved})


def _only_reshape(tensor: gs.Tensor, outputs: frozenset) -> Optional[gs.Node]:
    """The reshape that is `tensor`'s only reader, or None."""
    if len(tensor.outputs) == 1 and tensor.outputs[0].op == "reshape" and id(tensor) not in outputs:
        return tensor.outputs[0]
    return None


def _activation_string(act: gs.Node) -> Optional[str]:
    """The `activation=` string running the same kernel as this standalone call, or None."""
    attrs = argument_attrs(act)
    if not attrs:
        return MATMUL_ACTIVATIONS[act.op]
    if act.op == "gelu" and attrs == {"variant": TTNNRef("GeluVariant.Tanh")}:
        return "gelu_tanh"  # gelu_tanh_tile, the kernel of gelu(variant=GeluVariant.Tanh) (§22)
    return None


def _rewrite_matmul_activation(m: Match) -> gs.Node:
    m.anchor.attrs["activation"] = m.values["activation"]
    _join_sources(m.anchor, m.values["act"], m.anchor)
    if m.values["reshape"] is not None:  # linear -> reshape -> act becomes linear(activation) -> reshape
        m.anchor.attrs.pop("_probes", None)  # its values are no longer the ONNX ones before the activation
        return _merge_into(m.values["reshape"], m.values["act"])
    return _merge_into(m.anchor, m.values["act"])


# --- binary + relu --------------------------------------------------------------------------------------------

def _match_binary_activation(node: gs.Node, outputs: frozenset):
    out = node.outputs[0]
    if len(out.outputs) != 1 or out.outputs[0].op not in BINARY_ACTIVATIONS:
        return None
    act = out.outputs[0]
    reason = _only_reader(out, outputs) or _notes_block(node, act)
    if reason:
        return reason
    if argument_attrs(act):
        return f"{act.op} has arguments {sorted(argument_attrs(act))}"
    if out.dtype is not None and np.dtype(out.dtype).kind in "iub":
        return "integer values (a fused activation on int32 is not probed)"
    if "activations" in node.attrs:
        return f"{node.op} already has activations"
    return Match(node, [node, act], {"act": act, "kind": BINARY_ACTIVATIONS[act.op]})


def _rewrite_binary_activation(m: Match) -> gs.Node:
    m.anchor.attrs["activations"] = [TTNNCall("UnaryWithParam", TTNNRef(f"UnaryOpType.{m.values['kind']}"))]
    _join_sources(m.anchor, m.values["act"], m.anchor)
    return _merge_into(m.anchor, m.values["act"])


# --- residual add + norm --------------------------------------------------------------------------------------

def _match_norm_residual(node: gs.Node, outputs: frozenset):
    x = node.inputs[0]
    add = _producer(x)
    if add is None or add.op != "add":
        return None
    reason = _only_reader(x, outputs) or _notes_block(add, node)
    if reason:
        return reason
    if len(add.inputs) != 2:
        return "the add has a scalar operand"
    if argument_attrs(add):
        return f"the add has arguments {sorted(argument_attrs(add))}"
    a, b = add.inputs
    if tuple(a.shape) != tuple(x.shape) or tuple(b.shape) != tuple(x.shape):
        return f"the add broadcasts ({tuple(a.shape)} + {tuple(b.shape)}): the residual must have the input's shape"
    if len(node.inputs) > 1 + len(NORM_ARGUMENTS) or "residual_input_tensor" in node.attrs:
        return f"{node.op} already has a residual"
    return Match(node, [add, node], {"add": add, "a": a, "b": b})


def _rewrite_norm_residual(m: Match) -> gs.Node:
    norm, add = m.anchor, m.values["add"]
    present = len(norm.inputs) - 1
    for name in NORM_ARGUMENTS[present:]:  # absent weight / bias stay absent, so the residual binds by name
        norm.attrs[name] = None
    norm.inputs = [m.values["a"], *norm.inputs[1:], m.values["b"]]
    add.inputs.clear()
    add.outputs.clear()
    _join_sources(add, norm, norm)
    return add


RULES = (
    EpilogueRule("matmul-activation", MATMUL_OPS, _match_matmul_activation, _rewrite_matmul_activation),
    EpilogueRule("binary-activation", BINARY_OPS, _match_binary_activation, _rewrite_binary_activation),
    EpilogueRule("norm-residual", NORM_OPS, _match_norm_residual, _rewrite_norm_residual),
)
