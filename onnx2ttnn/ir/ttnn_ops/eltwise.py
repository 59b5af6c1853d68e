"""Op table entries: elementwise unary and binary ops, `where`, activations with parameters, trigonometry,
rounding and remainders (lowered by lowering/eltwise.py and lowering/activations.py).

Sharding (probe_sharding.py, results/sharding.txt; probe_width.py, results/width.txt): the unary and binary ops
of the first two groups below and `where` read height-sharded inputs (a binary op's other operand may be
interleaved L1 or DRAM, or a broadcast row) and write a height-sharded output from any input placement, its
shard spec given as memory_config; the unary and binary ops read and write width-sharded L1 tensors in the
planner's layout (whole padded height, whole tile columns per core, no idle core) from and into any placement,
the other operand of a binary op interleaved, DRAM or a broadcast row too.  The other groups were not probed
and are not sharded.

Accuracy variants (probe_unary_modes.py, results/unary_modes.txt; docs/ttnn-facts.md §16): every default the
compiler emits compiles to the accurate kernel (sigmoid mode Accurate, exp / tanh / erf without
fast_and_approximate_mode, gelu variant Accurate; APPROX false), and a float32 input runs it in a float32 dest.
sigmoid and exp (`tail_float32_input`) lose |x| times their input's relative error: where their result reaches a
graph output, lowering/accuracy.py feeds them a float32 input.

Vector FLOPs per output element: the cost model's rough estimates of the passes an op makes over its data, not
measured (exp 2; sigmoid, tanh, silu 3; gelu, erf 4; every other op 1).

Integers (probe_integers.py, results/integers.txt; `integer_inputs`): add, subtract, multiply, maximum,
minimum, the comparisons, logical_and/or/xor, remainder and fmod take int32 tensors (or an int32 tensor and an
integer scalar) in TILE and ROW_MAJOR and return INT32 (a comparison's mask too, unless dtype= asks for
another); int32 and uint32 operands do not mix ("Mixed dtype is not supported").  divide of int32 returns
FLOAT32, INT32 with rounding_mode "trunc" or "floor".  pow takes an int32 base with a non-negative integer
scalar exponent in TILE only (ROW_MAJOR: "pow_int: input must be in TILE layout"; tensor exponents refused).
clamp keeps int32 (scalar or int32 tensor bounds); clip turns it into FLOAT32.  neg, abs and relu keep int32;
sign refuses it.  where takes a bfloat16 or int32 predicate with int32 tensor values (TILE; a scalar value
beside an int32 one is refused as mixed dtypes).
"""
from __future__ import annotations

from onnx2ttnn.ir.ttnn_ops.facts import Dtype, ShardFacts, declare

_BINARY = ("input_tensor_a", "input_tensor_b")
_FLOPS = {"exp": 2, "sigmoid": 3, "tanh": 3, "silu": 3, "gelu": 4, "erf": 4}
_KEEPS_INTEGERS = dict(output_dtype=Dtype.FOLLOWS_INTEGER_INPUT)  # ttnn gives an integer input's dtype back
_INT_UNARY = dict(_KEEPS_INTEGERS, integer_inputs=(0,))  # int32 in, exact int32 out (probe_integers.py)
_INT_BINARY = dict(_KEEPS_INTEGERS, integer_inputs=(0, 1))

# probed unary ops: height- and width-sharded in, out
for _name in ("relu", "relu6", "sigmoid", "tanh", "exp", "log", "sqrt", "rsqrt", "neg", "abs", "erf",
              "gelu", "reciprocal", "sin", "cos", "floor", "ceil", "sign", "logical_not", "silu", "isnan"):
    declare(_name, height=ShardFacts((0,), True, "unary"), width=ShardFacts((0,), True, "unary"),
            vector_flops=_FLOPS.get(_name, 1), tail_float32_input=_name in ("sigmoid", "exp"),
            **(_INT_UNARY if _name in ("neg", "abs", "relu") else {}))
declare("clip")  # int32 in gives FLOAT32: integers are clamped
declare("clamp", ("input_tensor", "min", "max"), **dict(_KEEPS_INTEGERS, integer_inputs=(0, 1, 2)))
declare("hardtanh")

# probed binary ops: tensor (op) tensor, or tensor (op) scalar attribute `scalar`; height- and width-sharded
for _name in ("add", "subtract", "multiply", "divide", "maximum", "minimum", "eq", "ne", "gt", "ge",
              "lt", "le", "logical_and", "logical_or"):
    declare(_name, _BINARY, height=ShardFacts((0, 1), True, "binary"), width=ShardFacts((0, 1), True, "binary"),
            comparison=_name in ("eq", "ne", "gt", "ge", "lt", "le"),
            fused_activation="activations" if _name in ("add", "subtract", "multiply") else None,  # §22
            tilized_inputs=(0, 1) if _name == "multiply" else (),  # probed for multiply only (§47)
            **(_INT_BINARY if _name in ("add", "subtract", "multiply", "maximum", "minimum", "divide")
               else dict(integer_inputs=(0, 1))))
declare("pow", ("input_tensor", "exponent"), **_INT_UNARY)  # an int32 base takes an integer scalar exponent
declare("where", ("predicate", "true_value", "false_value"), output_dtype=Dtype.LIKE_VALUES, integer_inputs=(0, 1, 2),
        height=ShardFacts((0, 1, 2), True, "where"))

# activations, trigonometry, rounding (not probed with sharded tensors)
for _name in ("hardsigmoid", "hardswish", "leaky_relu", "elu", "selu", "celu", "softplus", "softsign", "mish",
              "threshold", "softshrink", "hardshrink", "tan", "asin", "acos", "atan", "sinh", "cosh", "asinh",
              "acosh", "atanh", "round", "trunc", "isinf", "isposinf", "isneginf", "isfinite"):
    declare(_name)
for _name in ("logical_xor", "fmod", "remainder"):
    declare(_name, _BINARY, **(_INT_BINARY if _name != "logical_xor" else dict(integer_inputs=(0, 1))))
