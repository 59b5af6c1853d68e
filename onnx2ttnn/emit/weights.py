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
Block = tuple[int, int]  # (axis, values per block) of a blocked scale


# the program's reader of a compact weight, emitted when the file holds one
DEQUANTIZED_WEIGHT = '''
def dequantized_weight(data, key, block=None):
    """A weight the quantized model stored as integer codes and scales: their float32 product, the value the
    converter computed from them, bit for bit.  block (axis, size): one scale per `size` values along `axis`."""
    codes, scale = data[key + ".codes"], data[key + ".scale"]
    if block is not None:
        axis, size = block
        scale = numpy.repeat(scale, size, axis=axis).take(numpy.arange(codes.shape[axis]), axis=axis)
    return codes.astype(numpy.float32) * scale
'''


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


def store_weights(arrays: dict[str, np.ndarray], param_nodes, dequantized: dict) -> dict[str, Optional[Block]]:
    """Fill `arrays` (the weights file's) with the values of the uploads `param_nodes`, a dequantized weight as
    its codes and scale where they give it back exactly; returns the parameters stored so, each with its
    scale's blocks (None: per tensor or per axis)."""
    compact = {}
    for node in param_nodes:
        key, values = node.attrs["_param"], np.asarray(node.inputs[0].values)
        name = node.attrs.get("_dequantized")
        factors = compact_weight(values, dequantized[name]) if name in dequantized else None
        if factors is None:
            arrays[key] = values
        else:
            arrays[key + CODES], arrays[key + SCALE], compact[key] = factors
    return compact


def stored_weight(key: str, compact: dict[str, Optional[Block]]) -> str:
    """The expression of load_parameters reading parameter `key` from the weights file (`data`)."""
    if key not in compact:
        return f"data[{ascii(key)}]"
    block = compact[key]
    return f"dequantized_weight(data, {ascii(key)}{'' if block is None else ', ' + repr(block)})"


def compact_weight(array: np.ndarray, steps) -> Optional[tuple[np.ndarray, np.ndarray, Optional[Block]]]:
    """(codes, scale, block) with `codes.astype(float32) * expand(scale, block)` equal to the float32 `array` bit
    for bit, the scale one of the alignments of `steps` (a dequantized weight's scale, broadcastable to the
    weight as folded) over the array's axes, `block` (axis, size) when it holds one value per block along an
    axis (expand: `expand_blocks`); None when nothing reproduces it or the codes need more than 16 bits."""
    if array.dtype != np.float32 or array.size < 2:
        return None
    for scale, block in _alignments(np.asarray(steps, dtype=np.float32), array.shape):
        full = scale if block is None else expand_blocks(scale, block, array.shape[block[0]])
        with np.errstate(divide="ignore", invalid="ignore"):
            codes = np.rint(array / full)
        if not np.all(np.isfinite(codes)):
            continue
        low, high = float(codes.min()), float(codes.max())
        kind = next((t for t in _CODE_TYPES if np.iinfo(t).min <= low and high <= np.iinfo(t).max), None)
        if kind is None:
            continue
        codes = codes.astype(kind)
        if np.array_equal(codes.astype(np.float32) * full, array):
            return codes, scale, block
    return None


def expand_blocks(scale: np.ndarray, block: Block, length: int) -> np.ndarray:
    """A scale of one value per block along `block[0]` repeated over its `block[1]` values, cut to `length`
    (what the program's dequantized_weight does)."""
    axis, size = block
    return np.repeat(scale, size, axis=axis).take(np.arange(length), axis=axis)


def _blocks(steps: np.ndarray) -> list[tuple[np.ndarray, Block]]:
    """`steps` (as many as the weight's values) as one value per block along one axis, when it is that."""
    found = []
    for axis, length in enumerate(steps.shape):
        changes = np.flatnonzero(np.any(np.diff(steps, axis=axis) != 0, axis=tuple(
            a for a in range(steps.ndim) if a != axis))) if length > 1 else np.array([], np.int64)
        size = int(changes[0]) + 1 if changes.size else length
        if size < 2:
            continue
        scale = steps.take(np.arange(0, length, size), axis=axis)
        if np.array_equal(expand_blocks(scale, (axis, size), length), steps):
            found.append((np.ascontiguousarray(scale), (axis, size)))
    return found


def _alignments(steps: np.ndarray, shape: tuple[int, ...]) -> list[tuple[np.ndarray, Optional[Block]]]:
    """`steps` (one value, one vector along a single axis, or one value per block along one axis) shaped to
    broadcast along each axis of `shape` of its length: the weight may have been transposed or reshaped since it
    was folded."""
    rank = len(shape)
    if steps.size == 1:
        return [(steps.reshape((1,) * rank), None)]
    if sum(d != 1 for d in steps.shape) != 1:  # blocked scales, in the weight's shape
        return _blocks(steps) if tuple(steps.shape) == tuple(shape) else []
    vector = steps.reshape(-1)
    aligned = []
    for axis in reversed(range(rank)):  # the last axis first: a linear weight's output channels
        if shape[axis] == vector.size:
            view = [1] * rank
            view[axis] = -1
            aligned.append((vector.reshape(view), None))
    return aligned
