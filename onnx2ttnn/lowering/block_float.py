"""Block floats on the host: tt-metal's bfloat8_b / bfloat4_b rounding in numpy, and the relative error it puts
into a weight, computed once per weight and conversion (RoundingErrors).

`--weights auto` judges each weight by these errors twice in a conversion: measure-weight-gain (before fusion)
and lower-to-ttnn (after it) ask about the same arrays in the same upload orientation
(weight_dtype.weight_upload), and rounding was most of both passes' host time (a profile of BERT-base on main
6f632b0: 4.2 of its 7.9 s).  So both formats are rounded in one go (they share the group exponents and aligned
mantissas), in cache-sized pieces, the group maxima taken lane by lane (numpy's reduce over an axis of 16 takes
about 4x as long), and a conversion's RoundingErrors answers the second question about an array from the first
(docs/design.md §6.37).
"""
from __future__ import annotations

import weakref
from typing import Optional

import numpy as np

BFP_FACE = 16  # block floats share one exponent per 16 values along the last dim (docs/design.md §3.2)
BLOCK_FLOAT_BITS = {"bfp8": 7, "bfp4": 3}  # bits of each value's magnitude, hidden bit included
AUTO_ORDER = ("bfp4", "bfp8")  # the formats --weights auto tries, smallest first (weight_dtype.auto_block_float)
CHUNK = 1 << 16  # values block_round rounds at a time (1 << 16 float32: 256 KiB, within a core's L2)
_SCALABLE = -104  # group exponents from here up: 2**(23 - E) and 2**(E + 1 - W) are normal float32 factors


def bfp_round(x: np.ndarray, fmt: str) -> np.ndarray:
    """float values rounded to bfloat8_b ("bfp8") or bfloat4_b ("bfp4") as tt-metal's host packer does (the
    simulator's sim/_rounding.py bfp_round, in numpy): per group of 16 along the last dim, a shared exponent
    E = max floor(log2|x|); each value's mantissa aligned to E (bits below dropped), then rounded half-to-even
    to a W-bit magnitude (W = 7 or 3) saturated at 2**W - 1; value = m * 2**(E+1-W)."""
    return block_round(x, (fmt,))[fmt]


def bfp8_round(x: np.ndarray) -> np.ndarray:
    """float values rounded to bfloat8_b."""
    return bfp_round(x, "bfp8")


def block_round(x: np.ndarray, fmts=AUTO_ORDER) -> dict[str, np.ndarray]:
    """`x` rounded to each of `fmts` (bfp_round), the group exponents and aligned mantissas computed once.
    Exact as bfp_round's definition: the scalings by powers of two are multiplications by normal float32 powers
    of two (np.ldexp where a group's exponent is below _SCALABLE), flooring and rounding act on integers below
    2**24.  A large x is rounded CHUNK values at a time (rows are independent), so that the temporaries stay in
    the processor's cache; each result is laid out as x is."""
    x = np.asarray(x, dtype=np.float32)
    flat = x.reshape(-1, x.shape[-1]) if x.ndim else x.reshape(1, 1)
    rows, width = flat.shape
    if rows * width <= CHUNK or width % BFP_FACE:
        return _block_round(x, flat, fmts)
    out = {fmt: np.empty_like(flat) for fmt in fmts}
    if flat.flags.f_contiguous:  # a transposed view: pieces of whole groups of columns, each contiguous
        step = max(BFP_FACE, CHUNK // rows // BFP_FACE * BFP_FACE)
        pieces = [np.s_[:, start:start + step] for start in range(0, width, step)]
    else:
        step = max(1, CHUNK // width)
        pieces = [np.s_[start:start + step] for start in range(0, rows, step)]
    for piece in pieces:
        for fmt, rounded in _block_round(flat[piece], flat[piece], fmts).items():
            out[fmt][piece] = rounded
    return {fmt: rounded.reshape(x.shape) for fmt, rounded in out.items()}


def _block_round(x: np.ndarray, flat: np.ndarray, fmts) -> dict[str, np.ndarray]:
    """block_round of `x` (`flat`: x as [rows, last dim]) in one piece."""
    width = flat.shape[-1]
    pad = (-width) % BFP_FACE
    groups = (np.pad(flat, ((0, 0), (0, pad))) if pad else flat).reshape(flat.shape[0], -1, BFP_FACE)
    aligned = np.abs(groups)
    largest = _group_max(aligned)
    _, exp = np.frexp(largest)
    shared = np.where(largest == 0, 0, exp - 1)  # E = floor(log2 max|x|) (the largest value's); all zeros: 0
    scalable = shared.size == 0 or int(shared.min()) >= _SCALABLE
    _scale(aligned, 23 - shared, scalable)
    np.floor(aligned, out=aligned)  # the mantissa aligned to E, the bits below it dropped: an integer < 2**24
    out = {}
    for fmt in fmts:
        bits = BLOCK_FLOAT_BITS[fmt]
        mag = np.multiply(aligned, np.float32(2.0 ** (bits - 24)))
        np.round(mag, out=mag)
        np.minimum(mag, np.float32(2 ** bits - 1), out=mag)
        _scale(mag, shared + 1 - bits, scalable)
        rounded = np.copysign(mag, groups, out=mag).reshape(flat.shape[0], -1)
        out[fmt] = rounded[:, :width].reshape(x.shape).astype(np.float32, copy=False)
    return out


def _group_max(magnitude: np.ndarray) -> np.ndarray:
    """max over the last axis (16 lanes) as [rows, groups, 1]: lane against lane, eight whole-array maxima and
    then halving (the same values as magnitude.max(-1), a quarter of its time); each lane's buffer laid out as
    the lanes are (a prepared conv weight or a transposed Gemm weight is a transposed view)."""
    half = BFP_FACE // 2
    lanes = [np.maximum(magnitude[..., j], magnitude[..., j + half],
                        out=np.empty_like(magnitude[..., j])) for j in range(half)]
    while len(lanes) > 1:
        half = len(lanes) // 2
        for j in range(half):
            np.maximum(lanes[j], lanes[j + half], out=lanes[j])
        lanes = lanes[:half]
    return lanes[0][..., None]


def _scale(values: np.ndarray, exponents: np.ndarray, scalable: bool) -> None:
    """values *= 2**exponents in place (exponents per group, broadcast): a multiplication by a float32 power of
    two built from its bits when every exponent is normal, else np.ldexp (the same result)."""
    if scalable:
        np.multiply(values, ((exponents + 127).astype(np.uint32) << 23).view(np.float32), out=values)
    else:
        np.ldexp(values, exponents.astype(np.int32), out=values)


def norm(values: np.ndarray) -> float:
    """||values||, in float64."""
    return float(np.sqrt(np.sum(np.square(values, dtype=np.float64))))


def error(rounded: np.ndarray, values: np.ndarray, size: float) -> float:
    """||rounded - values|| / size (0 for size 0)."""
    if size == 0.0:
        return 0.0
    return float(np.sqrt(np.sum(np.square(rounded - values, dtype=np.float64)))) / size


def relative_error(values: np.ndarray, fmt: str) -> float:
    """||round(values) - values|| / ||values|| for block-float format `fmt` (0 for an all-zero weight)."""
    values = np.asarray(values, np.float32)
    return error(bfp_round(values, fmt), values, norm(values))


def rounding_errors(values: np.ndarray, fmts=AUTO_ORDER) -> tuple[dict[str, float], dict[str, np.ndarray]]:
    """The relative error of each format in `fmts` on `values` (as relative_error), and the rounded values."""
    values = np.asarray(values, np.float32)
    rounded = block_round(values, fmts)
    size = norm(values)
    return {fmt: error(rounded[fmt], values, size) for fmt in fmts}, rounded


class RoundingErrors:
    """auto's relative errors (bfp4 and bfp8) of each uploaded weight array, computed once per conversion:
    measure-weight-gain puts what it computed (`put`), lower-to-ttnn asks (`errors`).  An entry is the array's
    place in memory (data address, shape, strides, dtype) and a weak reference to the array owning that memory:
    a hit is the same values (must hold: no pass changes a weight's values in place; every pass that changes a
    weight builds a new array), an owner freed since makes the entry stale.  Holds no array alive."""

    def __init__(self) -> None:
        self._entries: dict[tuple, tuple[weakref.ref, dict[str, float]]] = {}
        self.hits = 0

    def put(self, values: np.ndarray, errors: dict[str, float]) -> None:
        key, owner = _place(values)
        if owner is not None:
            self._entries[key] = (weakref.ref(owner), dict(errors))

    def errors(self, values: np.ndarray) -> dict[str, float]:
        """The errors of AUTO_ORDER's formats on `values`, from an earlier put of the same array or computed."""
        key, owner = _place(values)
        entry = self._entries.get(key)
        if entry is not None and entry[0]() is owner and owner is not None:
            self.hits += 1
            return dict(entry[1])
        found, _ = rounding_errors(values)
        self.put(values, found)
        return found


def _place(values: np.ndarray) -> tuple[tuple, Optional[np.ndarray]]:
    """(where `values` lies: address, shape, strides, dtype; the ndarray owning that memory, or None when `values`
    is not a float32 ndarray, whose values a conversion to float32 would copy)."""
    if not isinstance(values, np.ndarray) or values.dtype != np.float32:
        return (), None
    owner = values
    while isinstance(owner.base, np.ndarray):
        owner = owner.base
    return (values.__array_interface__["data"][0], values.shape, values.strides, values.dtype.str), owner
