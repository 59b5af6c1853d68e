"""SDPA program configs: what one `ttnn.SDPAProgramConfig` says (SDPAConfig) and the one function that chooses it
for a `ttnn.transformer.scaled_dot_product_attention` call from its shapes (choose).

What the config sets (ttnn 0.81.1 API manifest: `SDPAProgramConfig(*, compute_with_storage_grid_size,
q_chunk_size, k_chunk_size, [sub_core_grids, exp_approx_mode, max_cores_per_head_batch, max_k_splits,
matmul_math_fidelity, segmented_accumulation])`; the op's docstring: "the grid size and chunk tiles in the Q and
K sequence lengths. The op parallelizes over b, nqh, and Q's s dimension"; FlashAttention-2): each core takes
q chunks of q_chunk_size rows of one (batch, head) and walks the keys k_chunk_size at a time, rescaling its
running maximum, sum and output accumulator after every k chunk.  Without a config ttnn runs 32 / 32 on the
device grid (the probe: the same L1 as an explicit 32 / 32 config).

The rule (the converter's; the cost model does not price chunking, so the config is chosen for the two effects
above and for L1, not for a modelled time):
- q_chunk_size: the largest divisor (in tiles) of the padded query length that still gives every core of the
  grid a chunk of its own (b * heads * chunks >= cores), one tile when even that leaves cores idle (BERT-base's
  12 heads of 128 tokens: 48 chunks of 32 rows); a smaller divisor when no k chunk fits beside it;
- k_chunk_size: the largest divisor (in tiles) of the padded key length whose circular buffers fit the L1 the
  planner keeps free at every op (memory/budget.scratch_reserve) — all the keys in one chunk where they fit,
  so the online softmax needs no rescaling pass.  None fitting even at 32 / 32: no config (ttnn's own 32 / 32).
- circular_buffer_bytes bounds the configured call's circular buffers from above: every accepted config the
  probe measured (tools/ttnn_mock/probes/probe_sdpa_config.py, results/sdpa_config.txt, docs/ttnn-facts.md §39)
  needed at most it; the sizes of tt-metal's SDPA program factory are not modelled one by one.
Standard library only (like ir/ttnn_ops).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence, Union

from onnx2ttnn.ir.layout import LAYOUT_DTYPES

TILE = 32
CLASS = "SDPAProgramConfig"
MISC_BYTES = 16 * 1024  # scale, identity and the other small buffers: what the measured needs left beyond the blocks


@dataclass(frozen=True)
class SDPAConfig:
    """The fields of one ttnn.SDPAProgramConfig the converter sets (the others keep their defaults)."""

    grid: tuple[int, int]  # compute_with_storage_grid_size (x, y)
    q_chunk_size: int
    k_chunk_size: int

    CLASS = CLASS

    def __post_init__(self) -> None:
        for name in ("q_chunk_size", "k_chunk_size"):
            value = getattr(self, name)
            if value <= 0 or value % TILE:
                raise ValueError(f"{name} must be a positive multiple of {TILE} (real ttnn refuses it), got {value}")

    @property
    def identifier(self) -> str:
        """The base of the program's name for it (SDPA_8X8_Q32_K128; the namespace lower-cases it)."""
        return f"SDPA_{self.grid[0]}x{self.grid[1]}_Q{self.q_chunk_size}_K{self.k_chunk_size}"

    def arguments(self) -> str:
        """The constructor's keyword arguments, as the program writes them."""
        return (f"compute_with_storage_grid_size=ttnn.CoreCoord({self.grid[0]}, {self.grid[1]}), "
                f"q_chunk_size={self.q_chunk_size}, k_chunk_size={self.k_chunk_size}")

    def __repr__(self) -> str:  # the call that constructs it
        return f"ttnn.{CLASS}({self.arguments()})"


def tiles(n: int) -> int:
    return -(-int(n) // TILE)


def circular_buffer_bytes(q_tiles: int, k_tiles: int, head_tiles: int, tile_bytes: int, fp32_dest: bool) -> int:
    """An upper bound of the L1 per core the call's circular buffers take with q / k chunks of these many tiles:
    q double-buffered, k and v double-buffered, a mask block double-buffered and the output block (in the
    operands' format), the q @ k^T block, two output accumulators and five statistics columns (in the
    destination's format: float32 with fp32_dest_acc_en), and MISC_BYTES.  Measured needs: results/sdpa_config.txt."""
    inter = 4096 if fp32_dest else LAYOUT_DTYPES["bf16"][2]
    operands = 2 * q_tiles * head_tiles + 4 * k_tiles * head_tiles + 2 * q_tiles * k_tiles + q_tiles * head_tiles
    intermediates = q_tiles * k_tiles + 2 * q_tiles * head_tiles + 5 * q_tiles
    return operands * tile_bytes + intermediates * inter + MISC_BYTES


def choose(q_shape: Sequence[int], k_shape: Sequence[int], dtype: str, grid: tuple[int, int], fp32_dest: bool,
           l1_limit: int) -> Union[SDPAConfig, str]:
    """The program config of an SDPA call on q [b, n, s_q, dh] and k [b, nkv, s_k, dh] stored as `dtype` (a
    layout dtype) on a device grid, whose circular buffers take at most `l1_limit` bytes per core, or why none."""
    if len(q_shape) != 4 or len(k_shape) != 4:
        return "q or k is not [b, heads, s, dh]"
    b, n, s_q, dh = (int(d) for d in q_shape)
    q_t, k_t, head_t = tiles(s_q), tiles(k_shape[2]), tiles(dh)
    tile_bytes = max(LAYOUT_DTYPES.get(dtype, LAYOUT_DTYPES["bf16"])[2], LAYOUT_DTYPES["bf16"][2])
    cores = grid[0] * grid[1]
    widest = max([t for t in _divisors(q_t) if b * n * (q_t // t) >= cores], default=1)
    for q_chunk in sorted((t for t in _divisors(q_t) if t <= widest), reverse=True):
        for k_chunk in sorted(_divisors(k_t), reverse=True):
            if circular_buffer_bytes(q_chunk, k_chunk, head_t, tile_bytes, fp32_dest) <= l1_limit:
                return SDPAConfig(grid, q_chunk * TILE, k_chunk * TILE)
    need = circular_buffer_bytes(1, 1, head_t, tile_bytes, fp32_dest)
    return f"its circular buffers (~{need} B per core at 32 / 32 chunks) exceed the L1 kept free at each op " \
           f"({l1_limit} B)"


def _divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]
