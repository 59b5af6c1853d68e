"""The weights sidecar: a deterministic, pickle-free .npz (zip of .npy files); emit/publish.py writes it with the
program, as one set.

A weight folded from a DequantizeLinear (passes/fold_dequantize.py) is stored as its quantized model stored it:
integer codes (int8, or int16 for a uint8 weight's codes centred on their zero point) under `KEY.codes` and its
float32 scales, shaped to broadcast over them, under `KEY.scale` — a quarter of the float32 bytes.  The program's
load_parameters multiplies them back (`dequantized_weight`), which gives the float32 weight bit for bit: the same
float32 product fold-dequantize computed.  `compact_weight` checks exactly that before choosing the form, so a
weight a rule changed after folding (scaled by a Gemm's alpha, concatenated, padded) that no longer factors stays
float32.
"""
from __future__ import annotations

import io
import zipfile
from typing import Optional

import numpy as np

_EPOCH = (1980, 1, 1, 0, 0, 0)
CODES, SCALE = ".codes", ".scale"  # key suffixes of a compact weight (parameter names are identifiers: no dots)
_CODE_TYPES = (np.int8, np.int16)


def npz_bytes(arrays: dict[str, np.ndarray]) -> bytes:
    """An .npz archive of `arrays` in key order, with fixed timestamps (same input, same bytes)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_STORED) as archive:
        for key in arrays:
            data = io.BytesIO()
            np.lib.format.write_array(data, np.ascontiguousarray(arrays[key]), allow_pickle=False)
            info = zipfile.ZipInfo(f"{key}.npy", date_time=_EPOCH)
            info.external_attr = 0o644 << 16
            archive.writestr(info, data.getvalue())
    return buffer.getvalue()


def store_weights(arrays: dict[str, np.ndarray], param_nodes, dequantized: dict) -> set[str]:
    """Fill `arrays` (the weights file's) with the values of the uploads `param_nodes`, a dequantized weight as
    its codes and scale where they give it back exactly; returns the parameters stored so."""
    compact = set()
    for node in param_nodes:
        key, values = node.attrs["_param"], np.asarray(node.inputs[0].values)
        name = node.attrs.get("_dequantized")
        factors = compact_weight(values, dequantized[name]) if name in dequantized else None
        if factors is None:
            arrays[key] = values
        else:
            arrays[key + CODES], arrays[key + SCALE] = factors
            compact.add(key)
    return compact


def stored_weight(key: str, compact: bool) -> str:
    """The expression of load_parameters reading parameter `key` from the weights file (`data`)."""
    return f"dequantized_weight(data, {ascii(key)})" if compact else f"data[{ascii(key)}]"


def compact_weight(array: np.ndarray, steps) -> Optional[tuple[np.ndarray, np.ndarray]]:
    """(codes, scale) with `codes.astype(float32) * scale` equal to the float32 `array` bit for bit, the scale
    one of the alignments of `steps` (a dequantized weight's scale, broadcastable to the weight as folded) over
    the array's axes; None when no alignment reproduces it or the codes need more than 16 bits."""
    if array.dtype != np.float32 or array.size < 2:
        return None
    for scale in _alignments(np.asarray(steps, dtype=np.float32), array.shape):
        with np.errstate(divide="ignore", invalid="ignore"):
            codes = np.rint(array / scale)
        if not np.all(np.isfinite(codes)):
            continue
        low, high = float(codes.min()), float(codes.max())
        kind = next((t for t in _CODE_TYPES if np.iinfo(t).min <= low and high <= np.iinfo(t).max), None)
        if kind is None:
            continue
        codes = codes.astype(kind)
        if np.array_equal(codes.astype(np.float32) * scale, array):
            return codes, scale
    return None


def _alignments(steps: np.ndarray, shape: tuple[int, ...]) -> list[np.ndarray]:
    """`steps` (one value, or one vector along a single axis) shaped to broadcast along each axis of `shape` of
    its length: the weight may have been transposed or reshaped since it was folded."""
    rank = len(shape)
    if steps.size == 1:
        return [steps.reshape((1,) * rank)]
    if sum(d != 1 for d in steps.shape) != 1:  # blocked scales: as many as the weight's values, nothing gained
        return []
    vector = steps.reshape(-1)
    aligned = []
    for axis in reversed(range(rank)):  # the last axis first: a linear weight's output channels
        if shape[axis] == vector.size:
            view = [1] * rank
            view[axis] = -1
            aligned.append(vector.reshape(view))
    return aligned
