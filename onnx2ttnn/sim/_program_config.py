"""Matmul program configs (ttnn.MatmulMultiCoreReuseMultiCast1DProgramConfig, ttnn.MatmulMultiCoreReuseProgramConfig)
and the checks of them real ttnn makes that are cheap to model.

A config changes how the work is cut over cores, not the numbers, so the simulator only validates it: every
check below was seen to refuse on the real ttnn 0.81.1 mock (tools/ttnn_mock/probes/probe_program_configs.py,
results/program_configs.txt, its "refused?" lines), which also showed the configured and default programs
agree.  Checked: the blocks are whole (in0_block_w divides K in tiles, the subblocks divide the per-core
block), the subblock fits the destination register (4 tiles with fp32_dest_acc_en, else 8), a height-sharded
input_tensor_a's shard is exactly per_core_M tile rows, and the per-core block covers N (1-D with
mcast_in0=False, and the batched reuse program: per_core_N is all of N) and one batch's rows (the reuse
program against a batched b).  Other kinds of program config are refused (none is emitted).
"""
from __future__ import annotations

import math

from ._memconfig import CoreCoord
from ._types import tile_pad

_TILE = 32


class _MatmulProgramConfig:
    """The fields the two classes share."""

    def _set(self, grid: CoreCoord, **fields) -> None:
        if not isinstance(grid, CoreCoord):
            raise TypeError(f"{type(self).__name__}.__init__(): incompatible function arguments: "
                            "compute_with_storage_grid_size must be a ttnn.CoreCoord")
        self.compute_with_storage_grid_size = grid
        for name, value in fields.items():
            if type(value) is not (bool if name in ("fuse_batch", "mcast_in0") else int):
                raise TypeError(f"{type(self).__name__}.__init__(): incompatible function arguments: {name} must "
                                f"be {'bool' if name in ('fuse_batch', 'mcast_in0') else 'int'}")
            setattr(self, name, value)


class MatmulMultiCoreReuseMultiCast1DProgramConfig(_MatmulProgramConfig):
    """The 1-D multicast config: for height- and width-sharded input_tensor_a (the fields the converter sets;
    the others of ttnn's are not modelled)."""

    def __init__(self, *, compute_with_storage_grid_size: CoreCoord, in0_block_w: int, out_subblock_h: int,
                 out_subblock_w: int, per_core_M: int, per_core_N: int, fuse_batch: bool,  # noqa: N803
                 mcast_in0: bool) -> None:
        self._set(compute_with_storage_grid_size, in0_block_w=in0_block_w, out_subblock_h=out_subblock_h,
                  out_subblock_w=out_subblock_w, per_core_M=per_core_M, per_core_N=per_core_N,
                  fuse_batch=fuse_batch, mcast_in0=mcast_in0)


class MatmulMultiCoreReuseProgramConfig(_MatmulProgramConfig):
    """The reuse config: each core its own output blocks, no multicast (a sharded a against a batched b)."""

    def __init__(self, *, compute_with_storage_grid_size: CoreCoord, in0_block_w: int, out_subblock_h: int,
                 out_subblock_w: int, per_core_M: int, per_core_N: int) -> None:  # noqa: N803
        self._set(compute_with_storage_grid_size, in0_block_w=in0_block_w, out_subblock_h=out_subblock_h,
                  out_subblock_w=out_subblock_w, per_core_M=per_core_M, per_core_N=per_core_N)


PROGRAM_CONFIGS = (MatmulMultiCoreReuseMultiCast1DProgramConfig, MatmulMultiCoreReuseProgramConfig)


class SDPAProgramConfig:
    """ttnn.SDPAProgramConfig: the grid and the q / k chunk sizes of scaled_dot_product_attention (the fields the
    converter sets; the others of ttnn's keep their defaults and are not modelled).  Chunks change how the work
    is cut, not the values (tools/ttnn_mock/probes/probe_sdpa_config.py, docs/ttnn-facts.md §39)."""

    def __init__(self, *, compute_with_storage_grid_size: CoreCoord, q_chunk_size: int, k_chunk_size: int) -> None:
        if not isinstance(compute_with_storage_grid_size, CoreCoord):
            raise TypeError("SDPAProgramConfig.__init__(): incompatible function arguments: "
                            "compute_with_storage_grid_size must be a ttnn.CoreCoord")
        for name, value in (("q_chunk_size", q_chunk_size), ("k_chunk_size", k_chunk_size)):
            if type(value) is not int:
                raise TypeError(f"SDPAProgramConfig.__init__(): incompatible function arguments: {name} must be int")
        self.compute_with_storage_grid_size = compute_with_storage_grid_size
        self.q_chunk_size, self.k_chunk_size = q_chunk_size, k_chunk_size


def check_sdpa_program_config(op: str, config, device) -> None:
    """Refuse an SDPA config as real ttnn did (probe_sdpa_config.py: "q_chunk_size must be a positive multiple of
    TILE_SIZE"; k_chunk_size is checked alike); a grid larger than the device's is refused too (not probed)."""
    if config is None:
        return
    if not isinstance(config, SDPAProgramConfig):
        raise TypeError(f"{op}(): incompatible function arguments: program_config must be a ttnn.SDPAProgramConfig")
    for name in ("q_chunk_size", "k_chunk_size"):
        value = getattr(config, name)
        _require(value > 0 and value % _TILE == 0, op, "SDPAProgramConfig", f"{name} must be a positive multiple "
                 f"of TILE_SIZE. Got {name}: {value}, TILE_SIZE: {_TILE}")
    grid = config.compute_with_storage_grid_size
    available = device.compute_with_storage_grid_size()
    _require(grid.x <= available.x and grid.y <= available.y, op, "SDPAProgramConfig",
             f"the grid {grid.x}x{grid.y} exceeds the device's {available.x}x{available.y}")


def check_program_config(op: str, config, a, b, kernel) -> None:
    """Refuse `config` for a @ b as real ttnn does (module docstring); None passes."""
    if config is None:
        return
    if not isinstance(config, PROGRAM_CONFIGS):
        raise TypeError(f"{op}(): program_config must be one of "
                        f"{', '.join(c.__name__ for c in PROGRAM_CONFIGS)} (the simulator models no other)")
    name = type(config).__name__
    k_tiles = tile_pad(a._data.shape[-1]) // _TILE
    n_tiles = tile_pad(b._data.shape[-1]) // _TILE
    _require(k_tiles % config.in0_block_w == 0, op, name, f"Kt ({k_tiles}) must be divisible by in0_block_w "
             f"({config.in0_block_w})")
    _require(config.per_core_M % config.out_subblock_h == 0, op, name, f"per_core_M ({config.per_core_M}) must be "
             f"divisible by out_subblock_h ({config.out_subblock_h})")
    _require(config.per_core_N % config.out_subblock_w == 0, op, name, f"per_core_N ({config.per_core_N}) must be "
             f"divisible by out_subblock_w ({config.out_subblock_w})")
    dest = 4 if kernel is not None and kernel.fp32_dest_acc_en else 8
    _require(config.out_subblock_h * config.out_subblock_w <= dest, op, name,
             f"out_subblock_w * out_subblock_h ({config.out_subblock_h * config.out_subblock_w}) must be <= "
             f"{dest} (the destination register's tiles{' with fp32_dest_acc_en' if dest == 4 else ''})")
    batched = math.prod(b._data.shape[:-2]) > 1
    if a.is_sharded() and a._mem.memory_layout.name == "HEIGHT_SHARDED":
        shard_rows = a._mem.shard_spec.shape[0] // _TILE
        _require(config.per_core_M == shard_rows, op, name, f"per_core_M ({config.per_core_M}) must be the shard "
                 f"height of input_tensor_a in tiles ({shard_rows})")
        if batched or not getattr(config, "mcast_in0", True):
            _require(config.per_core_N == n_tiles, op, name, f"per_core_N ({config.per_core_N}) must be N in "
                     f"tiles ({n_tiles}) when each core computes whole rows")
    if batched and isinstance(config, MatmulMultiCoreReuseProgramConfig):
        rows = tile_pad(a._data.shape[-2]) // _TILE
        _require(config.per_core_M == rows, op, name, f"per_core_M ({config.per_core_M}) must be one batch's rows "
                 f"of input_tensor_a in tiles ({rows})")


def _require(ok: bool, op: str, name: str, text: str) -> None:
    if not ok:
        raise RuntimeError(f"TT_FATAL: {op}: {name}: {text}")
