"""LoweringContext: what a lowering rule sees — ONNX values as ttnn tensors, parameters, and an op builder.

ONNX tensors map to ttnn tensors in a *form*: plain (the ONNX shape as is) or NHWC, the flattened
[1, 1, N*H*W, C] layout that ttnn's conv and pooling ops read and write for an ONNX NCHW tensor.  Rules ask
for the form they need; the context converts (permute + reshape) once per tensor and form and caches the
result, so chains of convolutions, activations and pools never leave NHWC.

Host fallbacks (fallback/) also keep values on the host: `host_value` gives an ONNX value as a torch
tensor in its ONNX shape and dtype (downloading a device tensor once), and a value a fallback produced
stays on the host until a ttnn rule asks for it (`bind_host`), so chains of fallbacks never round-trip.
A rule that cannot lower a node calls `decline`; the pass rolls the context back to its `checkpoint`.
Every write to the context's tables goes through an undo log, so a checkpoint costs O(1) and a rollback
O(what the rule did), whatever the size of the graph (copying the tables at each node made the pass
quadratic).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional, Sequence

import numpy as np
import onnx_graphsurgeon as gs

from onnx2ttnn.errors import ConversionError, NotLowerable
from onnx2ttnn.ir.dtypes import host_torch_dtype
from onnx2ttnn.ir.graph import ttnn_node
from onnx2ttnn.ir.names import Namespace
from onnx2ttnn.lowering.block_float import RoundingErrors
from onnx2ttnn.ir.ttnn_ops import Dtype, op_info


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
_MISSING = object()  # an undo-log entry for a key the table did not have
INDEX = np.dtype(np.int32)  # integers live on the device as int32 (uint32 where an op takes indices)
INT32 = np.iinfo(np.int32)


def is_integer_value(tensor: gs.Tensor) -> bool:
    """Whether a ttnn-graph tensor holds integers (int32 on the device; booleans are floats 1.0 / 0.0)."""
    return tensor.dtype is not None and np.dtype(tensor.dtype).kind in "iu"


def check_int32(value, what: str) -> None:
    """ConversionError unless every integer in `value` fits the device's int32 (uploading one that does not
    would wrap it: 2^40 becomes 0)."""
    array = np.asarray(value)
    if array.size and (int(array.min()) < INT32.min or int(array.max()) > INT32.max):
        outside = array[(array < INT32.min) | (array > INT32.max)].reshape(-1)[0]
        raise ConversionError(f"{what} holds {int(outside)}, outside the int32 range [{INT32.min}, {INT32.max}] "
                              "of ttnn's integer tensors (it would wrap on upload)")


class LoweringContext:
    """Builds the ttnn graph while the lowering pass walks the ONNX nodes in order."""

    def __init__(self, dtype: str = "bf16") -> None:
        self.dtype = dtype  # the program's compute dtype ("bf16" | "fp32": Module.compute_dtype, --dtype settled)
        self.output_tail: frozenset[int] = frozenset()  # ids of ONNX nodes at an output tail (lowering/accuracy.py)
        self.output_names: frozenset[str] = frozenset()  # the ONNX graph's output names
        self.nodes: list[gs.Node] = []
        self.source = ""  # name of the ONNX node being lowered
        self._values: dict[str, tuple[gs.Variable, Optional[NHWC]]] = {}
        self._converted: dict[tuple[str, object], gs.Variable] = {}
        self._params: dict[object, gs.Variable] = {}
        self._param_names = Namespace()
        self._graph_inputs: dict[str, gs.Variable] = {}  # ONNX input name -> the program's torch argument
        self._host: dict[str, tuple[gs.Variable, str]] = {}  # values a fallback left on the host (+ source)
        self._undo: list[tuple[dict, object, object]] = []  # (table, key, previous value or _MISSING)
        self._counts: dict[str, int] = {}  # model-wide budgets the rules draw on (lowering/recurrent_unroll.py)
        self.index_reads: dict[str, bool] = {}  # indices' source -> read only as one table's rows (tensor_ops.py)
        self.dequantized: dict[str, np.ndarray] = {}  # Module.dequantized: folded weights -> quantization steps
        # tensors bound to a quantize-dequantize pair's codes, not its value (the pair's output and the moves after
        # it): name -> the pair's scale, which the coded linear reading them multiplies in after
        # (lowering/quantize.py _read_as_codes, lowering/matmul.py)
        self.pair_codes: dict[str, float] = {}
        self.weight_dtypes: dict[str, tuple[str, str]] = {}  # dequantized weight -> (device dtype, why)
        self.weights = "bf16"  # Options.weights: the format of float weights (lowering/weight_dtype.py)
        self.keep_bf16: frozenset[str] = frozenset()  # Options.keep_bf16
        self.tail_weights: frozenset[str] = frozenset()  # weights auto keeps bf16 (weight_dtype.tail_weights)
        self.exponential_tail = False  # a sigmoid or exp at the output tail (weight_dtype.exponential_tail)
        self.greedy_decision: Optional[str] = None  # why the model decides by value: weights bf16 (weight_dtype)
        self.tp = 1  # Module.tp: chips sharing each layer (tensor parallel; lowering/weight_codes.py declines)
        self.rounding = RoundingErrors()  # auto's rounding errors of each weight (Module.rounding when measured)
        self.weight_gain = 1.0  # how much the model amplifies weight errors (Module.weight_gain, weight_gain.py)
        self.activations = "bf16"  # Options.activations (passes/choose_activation_formats.py spends what is left)
        self.weight_layers = 0  # how many weights share auto's error budget (weight_dtype.count_weight_layers)
        self.weight_formats: dict[str, tuple[str, str]] = {}  # weight -> (device format, why) under --weights
        # weight -> the squared relative error its block-float format adds (weight_dtype: what auto's budget spent)
        self.weight_errors: dict[str, float] = {}

    # --- declining and rolling back ------------------------------------------------------------
    def decline(self, reason: str) -> None:
        """Give up on the node being lowered: its host fallback (if any) computes it instead."""
        raise NotLowerable(f"node {self.source!r}: {reason}", reason)

    def checkpoint(self) -> tuple[int, int, int]:
        """The context's state, to undo a rule that declined halfway: positions in the node list, the undo
        log and the parameter namespace's log."""
        return len(self.nodes), len(self._undo), self._param_names.mark()

    def rollback(self, state: tuple[int, int, int]) -> None:
        """Forget every node and value made since `state` (nodes are disconnected from their tensors)."""
        count, undo, names = state
        for node in self.nodes[count:]:
            node.inputs.clear()
            node.outputs.clear()
        del self.nodes[count:]
        while len(self._undo) > undo:
            table, key, previous = self._undo.pop()
            if previous is _MISSING:
                del table[key]
            else:
                table[key] = previous
        self._param_names.rewind(names)

    def derived(self, key: tuple, make: Callable[[], object]) -> object:
        """What `make()` builds from values already lowered, built once per key for the whole model (a mask
        every attention layer reads is prepared once); rolled back like the rest."""
        if ("derived",) + key not in self._converted:
            self._set(self._converted, ("derived",) + key, make())
        return self._converted[("derived",) + key]

    def _set(self, table: dict, key: object, value: object) -> None:
        """table[key] = value, remembered in the undo log."""
        self._undo.append((table, key, table.get(key, _MISSING)))
        table[key] = value

    def count(self, key: str, amount: int) -> int:
        """Add `amount` to the model-wide counter `key` and return its new total (undone by a rollback)."""
        total = self._counts.get(key, 0) + amount
        self._set(self._counts, key, total)
        return total

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
            self._set(self._converted, key, out)
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
            self._set(self._converted, key, self.op("reshape", [nhwc], form.flat_shape, name=tensor.name + "_flat",
                                                    shape=form.flat_shape))
        return self._converted[key], form

    def _lookup(self, tensor: gs.Tensor) -> tuple[gs.Variable, Optional[NHWC]]:
        if tensor.name not in self._values and tensor.name in self._host:
            self._upload_host_value(tensor)
        try:
            return self._values[tensor.name]
        except KeyError:
            raise ConversionError(f"node {self.source!r}: input {tensor.name!r} has no value (graph not in "
                                  "topological order?)") from None

    # --- writing ttnn values -------------------------------------------------------------------
    def bind(self, tensor: gs.Tensor, var: gs.Variable, form: Optional[NHWC] = None) -> None:
        """Record that ONNX `tensor` is computed by ttnn tensor `var` (in `form`); the producing node notes
        it in `_probes` so verify --per-op can compare the value with onnxruntime's (not a tensor that holds a
        pair's codes, `pair_codes`: onnxruntime's is the value)."""
        self._set(self._values, tensor.name, (var, form))
        if tensor.name not in self.pair_codes and var.inputs and not var.inputs[0].attrs.get("_param"):
            nhwc = (form.n, form.h, form.w, form.c) if form is not None else None
            var.inputs[0].attrs.setdefault("_probes", []).append((tensor.name, nhwc))

    def bind_input(self, tensor: gs.Variable, var: gs.Variable, host: Optional[gs.Variable] = None) -> None:
        self._set(self._values, tensor.name, (var, None))
        if host is not None:
            self._set(self._graph_inputs, tensor.name, host)

    # --- host values (fallbacks) ---------------------------------------------------------------
    def bind_host(self, tensor: gs.Tensor, host: gs.Variable) -> None:
        """Record that ONNX `tensor` was computed on the host (a torch tensor of its ONNX shape and dtype)."""
        self._set(self._host, tensor.name, (host, self.source))

    def host_result(self, tensor: gs.Tensor) -> Optional[gs.Variable]:
        """The host tensor a fallback computed for ONNX `tensor`, or None when a ttnn op computed it."""
        entry = self._host.get(tensor.name)
        return entry[0] if entry is not None else None

    def host_value(self, tensor: gs.Tensor, fallback: str) -> gs.Variable:
        """ONNX `tensor` as a host torch tensor of its ONNX shape and dtype: the program's argument for a
        graph input, a fallback's result, or a device tensor downloaded once with ttnn.to_torch."""
        if tensor.name in self._host:
            return self._host[tensor.name][0]
        if tensor.name in self._graph_inputs:
            return self._graph_inputs[tensor.name]
        key = (tensor.name, "host")
        if key not in self._converted:
            if isinstance(tensor, gs.Constant):  # a host ttnn tensor loaded with the weights
                value = np.asarray(tensor.values)
                var, form = self.param(value, tensor.name, key=key, host=True), None
            else:
                var, form = self._lookup(tensor)
            onnx_shape = tuple(tensor.shape) if tensor.shape is not None else tuple(var.shape)
            shape = form.nchw if form is not None else onnx_shape
            host = gs.Variable(tensor.name + "_host", dtype=np.dtype(tensor.dtype), shape=[int(d) for d in shape])
            nhwc = (form.n, form.h, form.w, form.c) if form is not None else None
            dtype = host_torch_dtype(host.dtype, f"node {self.source!r}: input {tensor.name!r} of the host fallback")
            self.nodes.append(ttnn_node("to_torch", [var], [host], self.source, _torch_dtype=dtype,
                                        _nhwc=nhwc, _shape=_reshape_to(var.shape, host.shape, nhwc),
                                        _fallback=fallback))
            self._set(self._converted, key, host)
        return self._converted[key]

    def _upload_host_value(self, tensor: gs.Tensor) -> None:
        """Move a fallback's result to the device when a ttnn rule first reads it."""
        host, source = self._host[tensor.name]
        if host.shape is not None and 0 in host.shape:
            raise ConversionError(f"node {self.source!r}: input {tensor.name!r} is empty (shape {list(host.shape)}, "
                                  f"computed on the host by {source!r}) and ttnn has no empty tensors; only a "
                                  "graph output or another host fallback can take it")
        kind = np.dtype(host.dtype).kind
        dtype = FLOAT if kind in "fb" else INDEX
        dev = gs.Variable(tensor.name, dtype=dtype, shape=list(host.shape) or [1])
        producer = host.inputs[0] if host.inputs else None
        fallback = producer.attrs.get("_fallback") if producer is not None else None
        node = ttnn_node("from_torch", [host], [dev], source, _fallback=fallback,
                         _shape=tuple(dev.shape) if tuple(dev.shape) != tuple(host.shape) else None)
        self.nodes.append(node)
        self._set(self._values, tensor.name, (dev, None))
        node.attrs["_probes"] = [(tensor.name, None)]

    def _result_dtype(self, op: str, inputs: Sequence[gs.Tensor], dtype) -> np.dtype:
        """The output dtype of a ttnn call: `dtype` when the rule gives one, else what the op table says
        (int32 where an op keeps an integer input's dtype), else the float dtype.  An integer input at a
        position the op table does not list (`integer_inputs`) declines the node: ttnn would refuse the call
        or compute the integers as floats, so a host fallback computes it instead."""
        info = op_info(op)
        for index, tensor in enumerate(inputs):
            if is_integer_value(tensor) and not info.takes_integer(index):
                self.decline(f"ttnn.{op} takes no integer tensors (input {index}, {tensor.name!r})")
        if dtype is not None:
            return np.dtype(dtype)
        if info.output_dtype == Dtype.FOLLOWS_INTEGER_INPUT and inputs and is_integer_value(inputs[0]):
            return INDEX
        if info.output_dtype == Dtype.LIKE_VALUES and inputs and is_integer_value(inputs[min(1, len(inputs) - 1)]):
            return INDEX
        return FLOAT

    def op(self, op: str, inputs: Sequence[gs.Tensor], out_shape: Sequence[int], *, name: str = "",
           dtype: Optional[np.dtype] = None, **attrs) -> gs.Variable:
        """Append ttnn `op` and return its (single) output tensor of `out_shape` (a rank-0 ONNX shape is [1]:
        ttnn has no rank-0 device tensors)."""
        dtype = self._result_dtype(op, inputs, dtype)
        out = gs.Variable(name or op, dtype=np.dtype(dtype), shape=[int(d) for d in out_shape] or [1])
        self.nodes.append(ttnn_node(op, list(inputs), [out], self.source, **attrs))
        return out

    def multi_op(self, op: str, inputs: Sequence[gs.Tensor], shapes: Sequence[Sequence[int]], *,
                 names: Sequence[str], dtype: Optional[np.dtype] = None, **attrs) -> list[gs.Variable]:
        """Append a ttnn op with several outputs (split)."""
        dtype = self._result_dtype(op, inputs, dtype)
        outs = [gs.Variable(n, dtype=np.dtype(dtype), shape=[int(d) for d in s] or [1])
                for n, s in zip(names, shapes)]
        self.nodes.append(ttnn_node(op, list(inputs), outs, self.source, **attrs))
        return outs

    def as_int32(self, var: gs.Variable, name: str) -> gs.Variable:
        """An integer device tensor as int32: integers are int32 on the device, but an upload that also feeds
        indices is uint32, and int32 and uint32 operands do not mix in ttnn's binary ops.  The typecast is
        dropped by decompose-layouts where the tensor is int32 already (nearly always)."""
        if not is_integer_value(var):
            return var
        return self.op("typecast", [var], var.shape, name=name, dtype=INDEX, _dtype="i32")

    def one_kind(self, xa: gs.Variable, xb: gs.Variable) -> tuple[gs.Variable, gs.Variable]:
        """Binary operands both integers or both floats: ttnn's binary ops refuse an int32 beside a float
        (docs/ttnn-facts.md §17).  An integer ONNX value computed in float (ConvInteger, MatMulInteger,
        DynamicQuantizeLinear's zero point: lowering/quantize.py) meets an int32 operand as a float, so the
        int32 one is typecast to float."""
        if is_integer_value(xa) == is_integer_value(xb):
            return xa, xb
        return tuple(self.op("typecast", [x], x.shape, name=f"{x.name}_float", dtype=np.float32)
                     if is_integer_value(x) else x for x in (xa, xb))

    def param(self, array: np.ndarray, name: str, *, key: object = None, host: bool = False,
              dtype: Optional[str] = None) -> gs.Variable:
        """A model weight uploaded once by load_parameters (kept on the host when `host`; in layout dtype
        `dtype`, e.g. "bfp8", instead of the one assign-layouts would choose)."""
        key = key if key is not None else (name, id(array))
        if key in self._params:
            return self._params[key]
        # copy=False: a weight already in its upload dtype is the model's own array, not a second copy
        array = np.ascontiguousarray(array)
        if array.dtype.kind in "fb":  # booleans live on the device as 0.0 / 1.0
            array = array.astype(np.float32, copy=False)
        elif array.dtype.kind in "iu":
            check_int32(array, f"node {self.source!r}: constant {name!r}")
            array = array.astype(np.int32, copy=False)
        pname = self._param_names.create(name)
        const = gs.Constant(pname, array)
        out = gs.Variable(pname, dtype=array.dtype, shape=list(array.shape) or [1])
        reason = self.format_reason(name)
        node = ttnn_node("from_torch", [const], [out], self.source, _param=pname, _host=host or None, _dtype=dtype,
                         _format_reason=reason, _dequantized=name if name in self.dequantized else None)
        self.nodes.append(node)
        self._set(self._params, key, out)
        return out

    def format_reason(self, name: str) -> Optional[str]:
        """Why weight `name` is uploaded in its format, when a rule said so: a dequantized weight's dtype, or
        the format --weights kept it in when that is not a block float (auto's reason for bf16)."""
        fmt, why = self.weight_formats.get(name, ("", ""))
        return self.weight_dtypes.get(name, ("", ""))[1] or (why if fmt not in ("bfp8", "bfp4") else "") or None

    def note_weight_dtype(self, name: str, dtype: str, why: str) -> None:
        """Record the device dtype a dequantized weight is uploaded in, and why (undone by a rollback)."""
        self._set(self.weight_dtypes, name, (dtype, why))

    def note_weight_format(self, name: str, dtype: str, why: str) -> None:
        """Record the device format --weights gave a weight, and why (undone by a rollback)."""
        self._set(self.weight_formats, name, (dtype, why))

    def note_weight_error(self, name: str, squared: float) -> None:
        """Record the squared relative error a weight's block-float format adds (undone by a rollback)."""
        self._set(self.weight_errors, name, squared)

    def float_param(self, array: np.ndarray, name: str, key: object = None, dtype: Optional[str] = None) -> gs.Variable:
        return self.param(np.asarray(array, dtype=np.float32), name, key=key, dtype=dtype)


def _reshape_to(device_shape, onnx_shape, nhwc) -> Optional[tuple[int, ...]]:
    """The shape a downloaded tensor must be given to have its ONNX shape (None when it already has it)."""
    if nhwc is not None:
        return None
    device_shape, onnx_shape = tuple(int(d) for d in device_shape), tuple(int(d) for d in onnx_shape)
    return onnx_shape if device_shape != onnx_shape else None
