"""The torch dtypes of the generated program's host tensors, and the one place numpy dtypes become them.

Three dtype spellings meet in the compiler: ONNX tensors carry numpy dtypes (`float32`, `int64`, ml_dtypes'
`bfloat16`), device layouts carry short names (`bf16`, `u32`: ir/layout.LAYOUT_DTYPES), and the program's host
tensors carry torch dtypes.  Every note that names a host dtype (`_torch_dtype`, the constants in
`_args`: ir/notes.py) holds a torch dtype name from TORCH_DTYPES, decided by lowering through the functions
below; the emitter writes it as `torch.<name>` and refuses anything else.
"""
from __future__ import annotations

import numpy as np

from onnx2ttnn.errors import ConversionError

# torch dtypes a generated program may name (torch 2.x spells each like the numpy dtype of the same name)
TORCH_DTYPES = ("float32", "float16", "float64", "bfloat16", "int64", "int32", "int16", "int8", "uint8",
                "uint16", "uint32", "uint64", "bool")
# what host fallbacks compute in: wide unsigned types as int64 (torch lacks their arithmetic), bfloat16 as
# float32 (the device's bfloat16 values are exact in float32)
HOST_COMPUTE_DTYPE = {"uint16": "int64", "uint32": "int64", "uint64": "int64", "bfloat16": "float32"}
# ONNX TensorProto float types numpy has no dtype for (graphsurgeon gives their enum numbers): BFLOAT16,
# FLOAT8E4M3FN, FLOAT8E4M3FNUZ, FLOAT8E5M2, FLOAT8E5M2FNUZ, FLOAT4E2M1
FLOAT_ENUMS = frozenset({16, 17, 18, 19, 20, 23})
# layout dtype -> the torch dtype a host fallback's result is cast to before from_torch uploads it
UPLOAD_TORCH_DTYPE = {"bf16": "bfloat16", "f32": "float32", "i32": "int32", "u32": "int32", "u16": "int16",
                      "u8": "uint8", "bfp8": "float32", "bfp4": "float32"}


def torch_dtype(dtype, what: str) -> str:
    """The torch dtype of the same name as numpy `dtype` (a graph output keeps its ONNX dtype); `what` names
    the tensor for the error a dtype the program cannot carry gets."""
    name = np.dtype(dtype).name
    if name not in TORCH_DTYPES:
        raise ConversionError(f"{what} has dtype {name}, which the generated program's torch tensors cannot "
                              f"carry (supported: {', '.join(TORCH_DTYPES)})")
    return name


def host_torch_dtype(dtype, what: str) -> str:
    """The torch dtype a host fallback computes a value of numpy `dtype` in."""
    name = torch_dtype(dtype, what)
    return HOST_COMPUTE_DTYPE.get(name, name)


def float_dtype(dtype) -> bool:
    """Whether a graphsurgeon tensor's dtype is a float one (a numpy dtype; graphsurgeon gives an ONNX enum
    number for the types numpy lacks, bfloat16 and the float8s, and 0 for an undefined one)."""
    if isinstance(dtype, int):
        return dtype in FLOAT_ENUMS
    try:
        return dtype is not None and np.dtype(dtype).kind == "f"
    except TypeError:
        return False
