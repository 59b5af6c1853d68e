"""The ttnn enums and small value types: DataType, Layout, buffer and memory-layout enums, Shape.

Models the parts of `ttnn._ttnn.tensor` that carry no behaviour: the enum members the generated programs
name (a subset of the real members) and per-dtype facts (element size, tile size, torch storage type).
"""
from __future__ import annotations

import enum

import torch

TILE = 32
FACE = 16


class DataType(enum.Enum):
    """Element type of a tensor (ttnn.DataType)."""

    BFLOAT16 = 0
    FLOAT32 = 1
    UINT32 = 2
    BFLOAT8_B = 3
    BFLOAT4_B = 4
    UINT8 = 5
    UINT16 = 6
    INT32 = 7


class Layout(enum.Enum):
    """Page layout: ROW_MAJOR (one page per row) or TILE (32x32 tiles)."""

    ROW_MAJOR = 0
    TILE = 1


class TensorMemoryLayout(enum.Enum):
    """How a device buffer is spread over banks."""

    INTERLEAVED = 0
    HEIGHT_SHARDED = 2
    WIDTH_SHARDED = 3
    BLOCK_SHARDED = 4


class BufferType(enum.Enum):
    """Which memory a device buffer lives in."""

    DRAM = 0
    L1 = 1


class ShardOrientation(enum.Enum):
    """Order in which shards are assigned to the cores of a grid."""

    ROW_MAJOR = 0
    COL_MAJOR = 1


class ShardStrategy(enum.Enum):
    """Strategy argument of create_sharded_memory_config."""

    HEIGHT = 1
    WIDTH = 2
    BLOCK = 3


class StorageType(enum.Enum):
    """Where a tensor's data lives."""

    HOST = 0
    DEVICE = 1


class GeluVariant(enum.Enum):
    """ttnn.gelu implementation choice."""

    Accurate = 0
    FastLut = 1
    Tanh = 2


class SigmoidMode(enum.Enum):
    """ttnn.sigmoid implementation choice."""

    Accurate = 0
    AccurateWithFastExp = 1
    FastApproximate = 2


class Shape(tuple):
    """ttnn.Shape: an immutable sequence of dimensions."""

    def __new__(cls, shape=()):
        return super().__new__(cls, (int(d) for d in shape))

    def __init__(self, shape=()):
        super().__init__()

    @property
    def rank(self) -> int:
        return len(self)

    def to_rank(self, rank: int) -> "Shape":
        """Pad with leading 1s (or drop leading 1s) to the given rank."""
        dims = list(self)
        while len(dims) < rank:
            dims.insert(0, 1)
        while len(dims) > rank:
            if dims[0] != 1:
                raise RuntimeError(f"TT_FATAL: cannot reduce {self!r} to rank {rank}")
            dims.pop(0)
        return Shape(dims)

    def __repr__(self) -> str:
        return f"Shape({list(self)})"


# ---- per-dtype facts ------------------------------------------------------------------------------------

ELEMENT_SIZE = {
    DataType.BFLOAT16: 2, DataType.FLOAT32: 4, DataType.UINT32: 4, DataType.INT32: 4,
    DataType.UINT16: 2, DataType.UINT8: 1, DataType.BFLOAT8_B: 1,
}
TILE_BYTES = {dt: TILE * TILE * size for dt, size in ELEMENT_SIZE.items()}
TILE_BYTES[DataType.BFLOAT8_B] = TILE * TILE + 64  # 1024 mantissa bytes + 64 shared exponents = 1088
TILE_BYTES[DataType.BFLOAT4_B] = TILE * TILE // 2 + 64  # 512 mantissa bytes + 64 shared exponents = 576
# block floats: bits of each value's magnitude, hidden bit included (sim/_rounding.py)
BLOCK_FLOAT_BITS = {DataType.BFLOAT8_B: 7, DataType.BFLOAT4_B: 3}

FLOAT_TYPES = frozenset({DataType.BFLOAT16, DataType.FLOAT32, DataType.BFLOAT8_B, DataType.BFLOAT4_B})
INT_TYPES = frozenset({DataType.UINT32, DataType.INT32, DataType.UINT16, DataType.UINT8})

# torch dtype used to hold the values of a simulated tensor (exactly representable in every case:
# bfloat8_b values have at most 7 significant bits, so bfloat16 holds them exactly).
STORAGE_DTYPE = {
    DataType.BFLOAT16: torch.bfloat16, DataType.BFLOAT8_B: torch.bfloat16, DataType.BFLOAT4_B: torch.bfloat16,
    DataType.FLOAT32: torch.float32,
    DataType.INT32: torch.int32, DataType.UINT32: torch.int64, DataType.UINT16: torch.int32,
    DataType.UINT8: torch.uint8,
}

# what ttnn.to_torch returns (tt-metal convert_tt_tensor_to_torch_tensor)
TO_TORCH_DTYPE = {
    DataType.BFLOAT16: torch.bfloat16, DataType.BFLOAT8_B: torch.float32, DataType.BFLOAT4_B: torch.float32,
    DataType.FLOAT32: torch.float32,
    DataType.INT32: torch.int32, DataType.UINT32: torch.int32, DataType.UINT16: torch.int16,
    DataType.UINT8: torch.uint8,
}

# the dtype from_torch picks when none is given
FROM_TORCH_DTYPE = {
    torch.float32: DataType.FLOAT32, torch.float64: DataType.FLOAT32, torch.bfloat16: DataType.BFLOAT16,
    torch.float16: DataType.BFLOAT16, torch.int32: DataType.INT32, torch.int64: DataType.UINT32,
    torch.int16: DataType.UINT16, torch.uint8: DataType.UINT8, torch.bool: DataType.UINT8,
}

SHORT_NAME = {
    DataType.BFLOAT16: "bf16", DataType.FLOAT32: "f32", DataType.BFLOAT8_B: "bfp8", DataType.BFLOAT4_B: "bfp4",
    DataType.INT32: "i32", DataType.UINT32: "u32", DataType.UINT16: "u16", DataType.UINT8: "u8",
}


def tile_pad(n: int) -> int:
    """Round a dimension up to a multiple of the tile size."""
    return -(-n // TILE) * TILE


def padded_shape(shape: tuple, layout: Layout) -> Shape:
    """Physical shape: TILE pads the last two dims to multiples of 32; ROW_MAJOR keeps the logical shape."""
    if layout is not Layout.TILE:
        return Shape(shape)
    dims = list(shape)
    if not dims:
        return Shape(())
    dims[-1] = tile_pad(dims[-1])
    if len(dims) >= 2:
        dims[-2] = tile_pad(dims[-2])
    return Shape(dims)
