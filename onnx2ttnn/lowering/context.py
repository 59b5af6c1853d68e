"""LoweringContext: what a lowering rule sees — ONNX values as ttnn tensors, parameters, and an op builder.

ONNX tensors map to ttnn tensors in a *form*: plain (the ONNX shape as is) or NHWC, the flattened
[1, 1, N*H*W, C] layout that ttnn's conv and pooling ops read and write for an ONNX NCHW tensor.  Rules ask
for the form they need; the context converts (permute + reshape) once per tensor and form and caches the
result, so chains of convolutions, activations and pools never leave NHWC.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence

import numpy as np
import onnx_graphsurgeon as gs

from onnx2ttnn.errors import ConversionError
from onnx2ttnn.ir.graph import ttnn_node
from onnx2ttnn.ir.names import Namespace


@dataclass(frozen=True)
class NHWC:
    """An ONNX NCHW tensor stored as ttnn's flattened NHWC [1, 1, n*h*w, c]."""

    n: int
    h: int
    w: int
    c: int

    @property
    def flat_shape(self) -> tuple[int, int, int, int]:
        return (1, 1, self.n * self.h * self.w, self.c)

    @property
    def nchw(self) -> tuple[int, int, int, int]:
        return (self.n, self.c, self.h, self.w)


FLOAT = np.dtype(np.float32)
INDEX = np.dtype(np.int32)


class LoweringContext:
    """Builds the ttnn graph while the lowering pass walks the ONNX nodes in order."""

    def __init__(self) -> None:
        self.nodes: list[gs.Node] = []
        self.source = ""  # name of the ONNX node being lowered
        self._values: dict[str, tuple[gs.Variable, Optional[NHWC]]] = {}
        self._converted: dict[tuple[str, object], gs.Variable] = {}
        self._params: dict[object, gs.Variable] = {}
        self._param_names = Namespace()

    # --- reading ONNX values -------------------------------------------------------------------
    @staticmethod
    def constant(tensor: gs.Tensor) -> Optional[np.ndarray]:
        """The value of a constant ONNX tensor, or None for a runtime value."""
        if isinstance(tensor, gs.Constant):
            return np.asarray(tensor.values)
        return None

    def require_constant(self, tensor: gs.Tensor, what: str) -> np.ndarray:
        value = self.constant(tensor)
        if value is None:
            raise ConversionError(f"node {self.source!r}: {what} must be a constant (got runtime tensor "
                                  f"{tensor.name!r})")
        return value

    def value(self, tensor: gs.Tensor) -> gs.Variable:
        """The ttnn tensor for an ONNX tensor, in plain form (the ONNX shape)."""
        if isinstance(tensor, gs.Constant):
            return self.param(np.asarray(tensor.values), tensor.name, key=tensor.name)
        var, form = self._lookup(tensor)
        if form is None:
            return var
        key = (tensor.name, "plain")
        if key not in self._converted:
            shape = (form.n, form.h, form.w, form.c)
            if form.h == 1 and form.w == 1:  # NHWC and NCHW orders coincide
                out = self.op("reshape", [var], form.nchw, name=tensor.name, shape=form.nchw)
            else:
                nhwc = self.op("reshape", [var], shape, name=tensor.name + "_nhwc", shape=shape)
                out = self.op("permute", [nhwc], form.nchw, name=tensor.name, dims=(0, 3, 1, 2))
            self._converted[key] = out
        return self._converted[key]

    def value_with_form(self, tensor: gs.Tensor) -> tuple[gs.Variable, Optional[NHWC]]:
        """The ttnn tensor in whatever form it was produced."""
        if isinstance(tensor, gs.Constant):
            return self.value(tensor), None
        return self._lookup(tensor)

    def value_nhwc(self, tensor: gs.Tensor) -> tuple[gs.Variable, NHWC]:
        """The ttnn tensor in flattened NHWC form (converting a plain NCHW tensor once)."""
        var, form = self.value_with_form(tensor)
        if form is not None:
            return var, form
        shape = tuple(var.shape)
        if len(shape) != 4:
            raise ConversionError(f"node {self.source!r}: expected a 4-D NCHW input, got shape {shape}")
        form = NHWC(shape[0], shape[2], shape[3], shape[1])
        key = (tensor.name, form)
        if key not in self._converted:
            nhwc = self.op("permute", [var], (form.n, form.h, form.w, form.c), name=tensor.name + "_nhwc",
                           dims=(0, 2, 3, 1))
            self._converted[key] = self.op("reshape", [nhwc], form.flat_shape, name=tensor.name + "_flat",
                                           shape=form.flat_shape)
        return self._converted[key], form

    def _lookup(self, tensor: gs.Tensor) -> tuple[gs.Variable, Optional[NHWC]]:
        try:
            return self._values[tensor.name]
        except KeyError:
            raise ConversionError(f"node {self.source!r}: input {tensor.name!r} has no value (graph not in "
                                  "topological order?)") from None

    # --- writing ttnn values -------------------------------------------------------------------
    def bind(self, tensor: gs.Tensor, var: gs.Variable, form: Optional[NHWC] = None) -> None:
        """Record that ONNX `tensor` is computed by ttnn tensor `var` (in `form`); the producing node notes
        it in `_probes` so verify --per-op can compare the value with onnxruntime's."""
        self._values[tensor.name] = (var, form)
        if var.inputs and not var.inputs[0].attrs.get("_param"):
            nhwc = (form.n, form.h, form.w, form.c) if form is not None else None
            var.inputs[0].attrs.setdefault("_probes", []).append((tensor.name, nhwc))

    def bind_input(self, tensor: gs.Variable, var: gs.Variable) -> None:
        self._values[tensor.name] = (var, None)

    def op(self, op: str, inputs: Sequence[gs.Tensor], out_shape: Sequence[int], *, name: str = "",
           dtype: np.dtype = FLOAT, **attrs) -> gs.Variable:
        """Append ttnn `op` and return its (single) output tensor of `out_shape`."""
        out = gs.Variable(name or op, dtype=np.dtype(dtype), shape=[int(d) for d in out_shape])
        self.nodes.append(ttnn_node(op, list(inputs), [out], self.source, **attrs))
        return out

    def multi_op(self, op: str, inputs: Sequence[gs.Tensor], shapes: Sequence[Sequence[int]], *,
                 names: Sequence[str], dtype: np.dtype = FLOAT, **attrs) -> list[gs.Variable]:
        """Append a ttnn op with several outputs (split)."""
        outs = [gs.Variable(n, dtype=np.dtype(dtype), shape=[int(d) for d in s]) for n, s in zip(names, shapes)]
        self.nodes.append(ttnn_node(op, list(inputs), outs, self.source, **attrs))
        return outs

    def param(self, array: np.ndarray, name: str, *, key: object = None, host: bool = False) -> gs.Variable:
        """A model weight uploaded once by load_parameters (kept on the host when `host`)."""
        key = key if key is not None else (name, id(array))
        if key in self._params:
            return self._params[key]
        array = np.ascontiguousarray(array)
        if array.dtype.kind in "fb":  # booleans live on the device as 0.0 / 1.0
            array = array.astype(np.float32)
        elif array.dtype.kind in "iu":
            array = array.astype(np.int32)
        pname = self._param_names.create(name)
        const = gs.Constant(pname, array)
        out = gs.Variable(pname, dtype=array.dtype, shape=list(array.shape) or [1])
        node = ttnn_node("from_torch", [const], [out], self.source, _param=pname, _host=host or None)
        self.nodes.append(node)
        self._params[key] = out
        return out

    def float_param(self, array: np.ndarray, name: str, key: object = None) -> gs.Variable:
        return self.param(np.asarray(array, dtype=np.float32), name, key=key)
