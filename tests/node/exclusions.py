"""The one list of ONNX backend node-test cases the harness does not run, each group with its reason.

Only three kinds of reason are allowed (issue #5): a dtype ttnn has no type for, sequence/optional values,
and training mode.  Every group is a predicate over a case's model and data, so a new case of the same
kind is excluded for the same written reason, and nothing is excluded by name.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np
import onnx
from onnx import TensorProto

# ONNX element types ttnn has no type for (its DataType has bfloat16, float32, bfloat8_b, bfloat4_b, uint8,
# uint16, uint32, int32, int8, fp8_e4m3: float64 and complex have no counterpart, strings are not numbers,
# and the sub-byte / float8 encodings ONNX defines are not ttnn's block formats).
FLOAT64 = {TensorProto.DOUBLE}
STRINGS = {TensorProto.STRING}
FLOAT8 = {TensorProto.FLOAT8E4M3FN, TensorProto.FLOAT8E4M3FNUZ, TensorProto.FLOAT8E5M2,
          TensorProto.FLOAT8E5M2FNUZ} | ({TensorProto.FLOAT8E8M0} if hasattr(TensorProto, "FLOAT8E8M0") else set())
SUB_BYTE = {TensorProto.INT4, TensorProto.UINT4, TensorProto.FLOAT4E2M1} | {
    getattr(TensorProto, n) for n in ("INT2", "UINT2") if hasattr(TensorProto, n)}
COMPLEX = {TensorProto.COMPLEX64, TensorProto.COMPLEX128}

TRAINING_DOMAIN = "ai.onnx.preview.training"


@dataclass(frozen=True)
class Exclusion:
    """A group of cases not run, and why."""

    name: str
    reason: str
    applies: Callable[[object], bool]  # (onnx.backend.test.loader TestCase) -> bool


def _value_infos(graph: onnx.GraphProto):
    """Graph inputs and outputs, and the value infos of nested graphs (If/Loop/Scan bodies)."""
    yield from graph.input
    yield from graph.output
    for node in graph.node:
        for attr in node.attribute:
            for sub in ([attr.g] if attr.HasField("g") else []) + list(attr.graphs):
                yield from _value_infos(sub)


def _elem_types(case) -> set[int]:
    """Every tensor element type the case's model declares or carries in constants."""
    graph = case.model.graph
    types = {vi.type.tensor_type.elem_type for vi in _value_infos(graph) if vi.type.HasField("tensor_type")}
    types |= {t.data_type for t in graph.initializer}
    for node in graph.node:
        for attr in node.attribute:
            if attr.HasField("t"):
                types.add(attr.t.data_type)
            if attr.name in ("to", "output_dtype", "dtype") and attr.type == onnx.AttributeProto.INT:
                types.add(attr.i)
    return types


def _has_types(types: set[int]) -> Callable[[object], bool]:
    return lambda case: bool(_elem_types(case) & types)


def _has_sequence_or_optional(case) -> bool:
    for vi in _value_infos(case.model.graph):
        if vi.type.HasField("sequence_type") or vi.type.HasField("optional_type"):
            return True
    for inputs, outputs in case.data_sets:
        if any(not isinstance(v, (np.ndarray, np.generic, TensorProto)) for v in list(inputs) + list(outputs)):
            return True
    return False


def _training_mode(case) -> bool:
    """Training-only ops, `training_mode=1` attributes, or a true `training_mode` input (Dropout)."""
    graph = case.model.graph
    feeds = [vi.name for vi in graph.input]
    for node in graph.node:
        if node.domain == TRAINING_DOMAIN:
            return True
        if any(a.name == "training_mode" and a.i for a in node.attribute):
            return True
        if node.op_type == "Dropout" and len(node.input) > 2 and node.input[2] in feeds:
            position = feeds.index(node.input[2])
            if any(bool(np.asarray(inputs[position])) for inputs, _ in case.data_sets):
                return True
    return False


EXCLUSIONS: list[Exclusion] = [
    Exclusion("float64", "ttnn has no 64-bit float type", _has_types(FLOAT64)),
    Exclusion("strings", "ttnn tensors hold numbers only, no strings", _has_types(STRINGS)),
    Exclusion("float8", "ONNX float8 encodings (e4m3fn/fnuz, e5m2/fnuz, e8m0) are not ttnn types",
              _has_types(FLOAT8)),
    Exclusion("sub-byte", "ttnn has no 2-/4-bit integer or float4 element type", _has_types(SUB_BYTE)),
    Exclusion("complex", "ttnn has no complex type", _has_types(COMPLEX)),
    Exclusion("sequence-optional", "ttnn has tensors only: no sequence or optional values",
              _has_sequence_or_optional),
    Exclusion("training", "training mode (training ops, training_mode=1, Dropout's training_mode input) "
                          "is outside inference conversion", _training_mode),
]


def exclusion_of(case) -> Optional[Exclusion]:
    """The first exclusion group a case belongs to, or None when it must run."""
    for exclusion in EXCLUSIONS:
        if exclusion.applies(case):
            return exclusion
    return None
