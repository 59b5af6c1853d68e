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
"""
from __future__ import annotations

from onnx2ttnn.ir.ttnn_ops.facts import Dtype, ShardFacts, declare

_BINARY = ("input_tensor_a", "input_tensor_b")
_FLOPS = {"exp": 2, "sigmoid": 3, "tanh": 3, "silu": 3, "gelu": 4, "erf": 4}
_KEEPS_INTEGERS = dict(output_dtype=Dtype.FOLLOWS_INTEGER_INPUT)  # ttnn gives an integer input's dtype back

# probed unary ops: height- and width-sharded in, out
for _name in ("relu", "relu6", "sigmoid", "tanh", "exp", "log", "sqrt", "rsqrt", "neg", "abs", "erf",
              "gelu", "reciprocal", "sin", "cos", "floor", "ceil", "sign", "logical_not", "silu", "isnan"):
    declare(_name, height=ShardFacts((0,), True, "unary"), width=ShardFacts((0,), True, "unary"),
            vector_flops=_FLOPS.get(_name, 1), tail_float32_input=_name in ("sigmoid", "exp"),
            **(_KEEPS_INTEGERS if _name in ("neg", "abs") else {}))
declare("clip", **_KEEPS_INTEGERS)
declare("hardtanh")

# probed binary ops: tensor (op) tensor, or tensor (op) scalar attribute `scalar`; height- and width-sharded
for _name in ("add", "subtract", "multiply", "divide", "maximum", "minimum", "eq", "ne", "gt", "ge",
              "lt", "le", "logical_and", "logical_or"):
    declare(_name, _BINARY, height=ShardFacts((0, 1), True, "binary"), width=ShardFacts((0, 1), True, "binary"),
            comparison=_name in ("eq", "ne", "gt", "ge", "lt", "le"),
            **(_KEEPS_INTEGERS if _name in ("add", "subtract", "multiply", "maximum", "minimum") else {}))
declare("pow", ("input_tensor", "exponent"))
declare("where", ("predicate", "true_value", "false_value"), output_dtype=Dtype.LIKE_VALUES,
        height=ShardFacts((0, 1, 2), True, "where"))

# activations, trigonometry, rounding (not probed with sharded tensors)
for _name in ("hardsigmoid", "hardswish", "leaky_relu", "elu", "selu", "celu", "softplus", "softsign", "mish",
              "threshold", "softshrink", "hardshrink", "tan", "asin", "acos", "atan", "sinh", "cosh", "asinh",
              "acosh", "atanh", "round", "trunc", "isinf", "isposinf", "isneginf"):
    declare(_name)
for _name in ("logical_xor", "fmod", "remainder"):
    declare(_name, _BINARY, **(_KEEPS_INTEGERS if _name != "logical_xor" else {}))
