"""The compiler's IR: an onnx-graphsurgeon graph plus what the passes need to know about the model.

ttnn nodes are gs.Nodes in domain `ttnn` whose op is the ttnn function name and whose attributes are its
arguments; attributes starting with `_` are compiler notes (the source ONNX node, the parameter key, ...),
never rendered as arguments, each declared with its type in ir/notes.py.  Each tensor carries its
TTNNLayout in the Python attribute ir/notes.LAYOUT_ATTRIBUTE, read and written through layout_of/set_layout.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

import numpy as np
import onnx_graphsurgeon as gs

from onnx2ttnn.errors import VerificationError
from onnx2ttnn.ir.layout import TTNNLayout
from onnx2ttnn.ir.notes import LAYOUT_ATTRIBUTE, problem

TTNN_DOMAIN = "ttnn"  # nodes that are ttnn calls (after lower-to-ttnn)
FUSED_DOMAIN = "onnx2ttnn"  # nodes the fusion rules produce (read by the lowering rules)


class TTNNRef(str):
    """A name inside the ttnn module used as an argument value, rendered as `ttnn.<name>`."""

    def __repr__(self) -> str:
        return f"ttnn.{str(self)}"


class TTNNCall:
    """A ttnn constructor call used as an argument value, e.g. `ttnn.Conv2dConfig(weights_dtype=...)`."""

    def __init__(self, name: str, *args, **kwargs) -> None:
        self.name, self.args, self.kwargs = name, args, kwargs

    def __repr__(self) -> str:
        parts = [repr(a) for a in self.args] + [f"{k}={v!r}" for k, v in self.kwargs.items()]
        return f"ttnn.{self.name}({', '.join(parts)})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TTNNCall) and repr(self) == repr(other)

    def __hash__(self) -> int:
        return hash(repr(self))


class DeviceArg:
    """The `device` argument of calls that take it (conv2d, from_torch), rendered as `device`."""

    def __repr__(self) -> str:
        return "device"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, DeviceArg)

    def __hash__(self) -> int:
        return hash("DeviceArg")


DEVICE = DeviceArg()


@dataclass
class TensorSpec:
    """A graph input or output as the generated program's user sees it."""

    onnx_name: str
    shape: tuple[int, ...]
    dtype: np.dtype


@dataclass
class Module:
    """What flows through the pass pipeline."""

    graph: gs.Graph
    opset: int
    source_path: Optional[str] = None
    producer: str = ""
    inputs: list[TensorSpec] = field(default_factory=list)
    outputs: list[TensorSpec] = field(default_factory=list)
    notes: dict = field(default_factory=dict)  # pass -> summary numbers for the CLI
    passes_run: list[str] = field(default_factory=list)  # in order (the IR verifier checks their contracts)
    regions: list[bytes] = field(default_factory=list)  # host region k's ONNX model (fallback/regions.py)
    # constant weights fold-dequantize computed from a DequantizeLinear: name -> their quantization steps (the
    # scale, broadcastable to the weight), what lowering weighs a bfloat8_b upload's rounding against
    dequantized: dict = field(default_factory=dict)
    # a data-parallel (multi-chip) program: the mesh (rows, columns) it runs on, and each graph output's batch
    # dim (frontend/batch_split.py); the graph is the per-chip program (docs/design.md §6.19)
    mesh: tuple[int, int] = (1, 1)
    batch_dims: dict = field(default_factory=dict)
    tp: int = 1  # chips along mesh axis 1 sharing each layer (tensor parallel, §6.21); the batch splits over the rest
    # bytes per core of the L1_SMALL region the program opens its device (or mesh) with: what its convs keep there
    # (memory/l1_small.py, set by place-memory; docs/design.md §6.33); the emitter and verify read it
    l1_small_size: int = 16384
    # integer graph inputs used as row indices -> how many rows they may pick (frontend/index_inputs.py): the
    # program's random_inputs() draws ids below it
    index_rows: dict = field(default_factory=dict)
    # how much the model amplifies its weights' block-float errors (>= 1; measure-weight-gain, lowering/weight_gain.py):
    # lower-to-ttnn divides --weights auto's error budget by it
    weight_gain: float = 1.0
    # the dtype the program computes float values in: --dtype as asked, auto settled (settle-dtype): "bf16" | "fp32"
    compute_dtype: str = "bf16"
    # the relative block-float errors measure-weight-gain computed for the weights it judged (a
    # lowering/block_float.RoundingErrors): lower-to-ttnn asks it instead of rounding them again, then drops it
    rounding: object = None

    @property
    def chips(self) -> int:
        return self.mesh[0] * self.mesh[1]

    @property
    def dp(self) -> int:
        """Chips the batch is split over (data parallel)."""
        return self.chips // self.tp


def layout_of(tensor: gs.Tensor) -> Optional[TTNNLayout]:
    return getattr(tensor, LAYOUT_ATTRIBUTE, None)


def set_layout(tensor: gs.Tensor, layout: TTNNLayout) -> None:
    setattr(tensor, LAYOUT_ATTRIBUTE, layout)


def is_ttnn(node: gs.Node) -> bool:
    return node.domain == TTNN_DOMAIN


def ttnn_node(op: str, inputs: list, outputs: list, source: str = "", **attrs) -> gs.Node:
    """A ttnn-domain node; `source` names the ONNX node it came from (for comments and --per-op).  Notes
    (`_`-prefixed attributes, None ones left out) must be declared in ir/notes.py with the value's type."""
    attrs = {k: v for k, v in attrs.items() if v is not None}
    if source:
        attrs["_source"] = source
    for key, value in attrs.items():
        wrong = problem(key, value, op) if key.startswith("_") else None
        if wrong:
            raise VerificationError(f"ttnn.{op} (from {source!r}): {wrong}")
    return gs.Node(op=op, name="", domain=TTNN_DOMAIN, attrs=attrs, inputs=inputs, outputs=outputs)


def argument_attrs(node: gs.Node) -> dict:
    """The node's attributes that are ttnn call arguments (not compiler notes)."""
    return {k: v for k, v in node.attrs.items() if not k.startswith("_")}


def onnx_domain(node: gs.Node) -> str:
    """The node's domain with the default domain spelled "" (graphsurgeon may give None or "ai.onnx")."""
    return "" if node.domain in (None, "", "ai.onnx") else node.domain


def is_onnx_op(node, op_type: str) -> bool:
    """True for a default-domain ONNX node of `op_type`."""
    return node is not None and node.op == op_type and onnx_domain(node) == ""


def replace_uses(old: gs.Tensor, new: gs.Tensor) -> None:
    """Every node reading `old` reads `new` instead."""
    for consumer in list(old.outputs):
        for index, tensor in enumerate(consumer.inputs):
            if tensor is old:
                consumer.inputs[index] = new
