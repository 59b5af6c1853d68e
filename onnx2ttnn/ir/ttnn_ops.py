"""The ttnn operations the compiler emits, as data: how node inputs bind to parameters, what layout each
input needs, whether the call takes a `memory_config`, and whether it may return a view of its input.

Every name and parameter here is checked against the real ttnn 0.81.1 API manifest by a test
(tests/ir/test_ttnn_ops.py), so this table is the one place where ttnn signatures enter the compiler.
"""
from __future__ import annotations

from dataclasses import dataclass, field

# Requirements an op places on an input tensor's page layout.
TILE = "tile"
ROW_MAJOR = "row_major"
ANY = "any"  # tile or row-major, as produced
HOST = "host"  # stays on the host (conv weights)
SAME = "same"  # whatever page layout input 0 has (concat: every input alike)


@dataclass(frozen=True)
class OpInfo:
    """Facts about one ttnn operation that passes and the emitter rely on."""

    name: str
    inputs: tuple[str, ...]  # parameter names node inputs bind to, in order
    keyword_inputs: frozenset[str] = frozenset()  # of those, the ones passed by keyword
    input_layouts: tuple[str, ...] = ()  # per input; missing entries default to TILE
    output_page: str = TILE  # page layout of the result ("same" = like input 0)
    memory_config: bool = True  # takes memory_config=
    view: bool = False  # may return a view sharing input 0's buffer (see ir/views.py)
    positional_attrs: tuple[str, ...] = ()  # attrs rendered positionally after the tensor inputs
    variadic_input: bool = False  # all node inputs form one list argument (concat)
    output_buffer: str = ""  # "dram" when the op always writes DRAM whatever memory_config says
    extra: dict = field(default_factory=dict)

    def input_layout(self, index: int) -> str:
        return self.input_layouts[index] if index < len(self.input_layouts) else (
            self.input_layouts[-1] if self.variadic_input and self.input_layouts else TILE
        )


OPS: dict[str, OpInfo] = {}


def _op(name: str, inputs: tuple[str, ...] = ("input_tensor",), **kwargs) -> None:
    if name in OPS:
        raise ValueError(f"ttnn op {name!r} declared twice")
    kwargs.setdefault("keyword_inputs", frozenset())
    kwargs["keyword_inputs"] = frozenset(kwargs["keyword_inputs"])
    OPS[name] = OpInfo(name, inputs, **kwargs)


# host <-> device, layout and placement conversions
_op("from_torch", ("tensor",), input_layouts=(HOST,), output_page="chosen")
_op("to_torch", ("tensor",), input_layouts=(ANY,), memory_config=False, output_page="host")
_op("to_layout", ("tensor",), input_layouts=(ANY,), output_page="chosen")
_op("typecast", ("input_tensor",), input_layouts=(ANY,), output_page="same")
_op("to_memory_config", ("tensor",), input_layouts=(ANY,), output_page="same")
_op("deallocate", ("tensor",), input_layouts=(ANY,), memory_config=False, output_page="none")

# data movement
_op("reshape", input_layouts=(ANY,), output_page="same", view=True)
_op("permute", input_layouts=(ANY,), output_page="same")
_op("concat", ("tensors",), variadic_input=True, input_layouts=(SAME,), output_page="same")
_op("slice", input_layouts=(ANY,), output_page="same",
    positional_attrs=("slice_start", "slice_end", "slice_step"))
_op("split", input_layouts=(ANY,), output_page="same")
_op("expand", input_layouts=(ANY,), output_page="same")
_op("repeat", input_layouts=(ANY,), output_page="same")
_op("embedding", ("input_tensor", "weight"), input_layouts=(ROW_MAJOR, ROW_MAJOR), output_page=TILE)

# eltwise unary
for _name in ("relu", "relu6", "sigmoid", "tanh", "exp", "log", "sqrt", "rsqrt", "neg", "abs", "erf",
              "gelu", "reciprocal", "sin", "cos", "floor", "ceil", "sign", "logical_not", "silu", "isnan"):
    _op(_name)
_op("clip")
_op("hardtanh")

# eltwise binary: tensor (op) tensor, or tensor (op) scalar attribute `scalar`
for _name in ("add", "subtract", "multiply", "divide", "maximum", "minimum", "eq", "ne", "gt", "ge",
              "lt", "le", "logical_and", "logical_or"):
    _op(_name, ("input_tensor_a", "input_tensor_b"))
_op("pow", ("input_tensor", "exponent"))
_op("where", ("predicate", "true_value", "false_value"))

# eltwise: activations, trigonometry, rounding and remainders (lowering/eltwise.py, lowering/activations.py)
for _name in ("hardsigmoid", "hardswish", "leaky_relu", "elu", "selu", "celu", "softplus", "softsign", "mish",
              "threshold", "softshrink", "hardshrink", "tan", "asin", "acos", "atan", "sinh", "cosh", "asinh",
              "acosh", "atanh", "round", "trunc", "isinf", "isposinf", "isneginf"):
    _op(_name)
for _name in ("logical_xor", "fmod", "remainder"):
    _op(_name, ("input_tensor_a", "input_tensor_b"))

# matmul and normalisation
_op("matmul", ("input_tensor_a", "input_tensor_b"))
_op("linear", ("input_tensor_a", "input_tensor_b", "bias"), keyword_inputs={"bias"})
_op("softmax")
_op("layer_norm", ("input_tensor", "weight", "bias"), keyword_inputs={"weight", "bias"})

# reductions
for _name in ("mean", "sum", "max", "min"):
    _op(_name)

# convolution and pooling (flattened NHWC activations [1, 1, N*H*W, C])
_op("conv2d", ("input_tensor", "weight_tensor", "bias_tensor"),
    keyword_inputs={"input_tensor", "weight_tensor", "bias_tensor"},
    input_layouts=(ANY, HOST, HOST), output_page=TILE)  # writes L1 on its all-in-L1 path: ir/placements.py
_op("max_pool2d", input_layouts=(ANY,), output_page=ROW_MAJOR)
_op("avg_pool2d", input_layouts=(ANY,), output_page=ROW_MAJOR)
_op("global_avg_pool2d", input_layouts=(TILE,), output_page=TILE)


# --- NN op families (matmul / conv / pool / norm / reduce helpers' block) ---------------------------------
_op("rms_norm", ("input_tensor", "weight", "bias"), keyword_inputs={"weight", "bias"})
_op("prod", input_layouts=(ANY,), output_page=TILE)
_op("argmax", input_layouts=(ANY,), output_page=ROW_MAJOR)  # UINT32 ROW_MAJOR indices
_op("topk", input_layouts=(TILE,), output_page=TILE)  # returns [values, indices]
_op("cumsum", ("input",), input_layouts=(TILE,), output_page=TILE)
_op("conv_transpose2d", ("input_tensor", "weight_tensor", "bias_tensor"),
    keyword_inputs={"input_tensor", "weight_tensor", "bias_tensor"},
    input_layouts=(ANY, HOST, HOST), output_page=TILE, output_buffer="dram")


# --- host fallback (onnx2ttnn/fallback) -------------------------------------------------------------
# Not a ttnn call: a torch helper of the generated program, reading and writing host torch tensors
# (its inputs come from to_torch or the program's arguments; from_torch uploads what ttnn ops read).
HOST_COMPUTE = "host_compute"
HOST_OUTPUT = "host_output"  # a graph output a host fallback computed: returned as is, in its ONNX dtype
HOST_OPS: dict[str, OpInfo] = {
    HOST_COMPUTE: OpInfo(HOST_COMPUTE, ("tensors",), variadic_input=True, input_layouts=(HOST,),
                         output_page="host", memory_config=False),
    HOST_OUTPUT: OpInfo(HOST_OUTPUT, ("tensor",), input_layouts=(HOST,), output_page="host", memory_config=False),
}
# --- resize / LRN block -----------------------------------------------------------------------------------
_op("upsample", input_layouts=(ROW_MAJOR,), output_page=ROW_MAJOR)  # NHWC [N, H, W, C]; ROW_MAJOR result


# --- pad block --------------------------------------------------------------------------------------------------
_op("pad", input_layouts=(ANY,), output_page="same")  # a rule asks for ROW_MAJOR (node `_input_layouts`) to pad the front


def node_input_layout(node, index: int) -> str:
    """The page layout input `index` of this node needs: the node's own `_input_layouts` (a rule's choice for
    this call) or its op's requirement."""
    pinned = node.attrs.get("_input_layouts")
    if pinned and index < len(pinned):
        return pinned[index]
    return op_info(node.op).input_layout(index)


def op_info(name: str) -> OpInfo:
    """The OpInfo of a ttnn op (or of the host fallback's computation); KeyError names the op."""
    try:
        return OPS[name] if name in OPS else HOST_OPS[name]
    except KeyError:
        raise KeyError(f"ttnn op {name!r} is not in the compiler's op table (ir/ttnn_ops.py)") from None
