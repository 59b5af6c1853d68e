"""onnxruntime's uint8 x int8 integer kernels without VNNI: the documented ort-gap of the fuzz oracle.

On x86 without VNNI, onnxruntime 1.32.0's u8s8 kernels (MatMulInteger, ConvInteger, QLinearMatMul,
QLinearConv with a uint8 input and an int8 weight) use AVX2's VPMADDUBSW, which saturates the sum of each
adjacent pair of products at int16 (tests/lowering/test_quantize.py `_u8s8_operands`): full-range operands
come out wrong.  `u8s8_variant(model)` is the same model with every such constant int8 weight and its zero
point shifted by +128 to uint8 ((w + 128) - (z + 128) = w - z, exactly), which onnxruntime runs with its
exact u8u8 kernel; the oracle calls a mismatch onnxruntime's when the program matches the variant's outputs.
"""
from __future__ import annotations

from typing import Optional

import numpy as np
import onnx
from onnx import numpy_helper

# op type -> (index of the uint8 input, of the int8 weight, of the weight's zero point)
U8S8_OPS = {"MatMulInteger": (0, 1, 3), "ConvInteger": (0, 1, 3), "QLinearMatMul": (0, 3, 5),
            "QLinearConv": (0, 3, 5)}


def _elem_types(model: onnx.ModelProto) -> dict[str, int]:
    inferred = onnx.shape_inference.infer_shapes(model)
    types = {vi.name: vi.type.tensor_type.elem_type
             for vi in list(inferred.graph.value_info) + list(inferred.graph.input) + list(inferred.graph.output)}
    types.update({t.name: t.data_type for t in model.graph.initializer})
    return types


def u8s8_variant(model: onnx.ModelProto) -> Optional[onnx.ModelProto]:
    """The model with each u8s8 integer op's constant int8 weight (and zero point) as uint8 + 128; None when
    the main graph has no such op."""
    try:
        types = _elem_types(model)
    except Exception:  # noqa: BLE001 - no inference, no variant
        return None
    inits = {t.name: t for t in model.graph.initializer}
    variant = onnx.ModelProto()
    variant.CopyFrom(model)
    changed = False
    for index, node in enumerate(variant.graph.node):
        spec = U8S8_OPS.get(node.op_type) if node.domain in ("", "ai.onnx") else None
        if spec is None or len(node.input) <= spec[1]:
            continue
        data, weight, zero = spec
        if types.get(node.input[data]) != onnx.TensorProto.UINT8 or node.input[weight] not in inits or \
                inits[node.input[weight]].data_type != onnx.TensorProto.INT8:
            continue
        w = numpy_helper.to_array(inits[node.input[weight]]).astype(np.int16)
        z = np.int16(0)
        if len(node.input) > zero and node.input[zero]:
            if node.input[zero] not in inits:
                continue
            z = numpy_helper.to_array(inits[node.input[zero]]).astype(np.int16)
        stem = f"u8s8_variant_{index}"
        variant.graph.initializer.extend([numpy_helper.from_array((w + 128).astype(np.uint8), f"{stem}_w"),
                                          numpy_helper.from_array((z + 128).astype(np.uint8), f"{stem}_z")])
        while len(node.input) <= zero:
            node.input.append("")
        node.input[weight], node.input[zero] = f"{stem}_w", f"{stem}_z"
        changed = True
    return variant if changed else None
