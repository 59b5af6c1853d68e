"""DeviceSpec: the hardware figures the compiler and the simulator plan against (docs/design.md §5)."""
from __future__ import annotations

from dataclasses import dataclass

TILE = 32


@dataclass(frozen=True)
class DeviceSpec:
    """One Tenstorrent chip as the memory planner and the simulator see it."""

    name: str
    arch: str
    grid_x: int
    grid_y: int
    l1_bank_bytes: int  # usable for tensors per core (one L1 bank per core)
    dram_banks: int
    dram_bank_bytes: int
    dram_gbps: float
    l1_small_size: int = 16384
    l1_safety: float = 0.95  # fraction of a bank the planner lets tensors use (as tt-mlir does)
    # Throughput figures of the cost model (ir/cost.py); sources next to each device below.
    clock_ghz: float = 1.0  # AI clock
    matrix_tflops: float = 74.0  # bf16 matrix-engine peak of the whole chip, at HiFi4 (ir/kernel_config.PASSES)
    vector_flops_per_cycle: int = 64  # per core: SFPU 32 lanes x fused multiply-add
    l1_bytes_per_cycle: int = 64  # per core: what the unpackers read from the core's own L1
    noc_bytes_per_cycle: int = 32  # per core: one NoC port (256 bits/cycle), remote (interleaved) L1 pages
    # A board or system of several such chips: the mesh shapes ttnn can open on it (rows x columns of chips;
    # the first is the default).  All other figures are per chip (docs/design.md §6.19).
    meshes: tuple[tuple[int, int], ...] = ((1, 1),)

    @property
    def chips(self) -> int:
        return max(r * c for r, c in self.meshes)

    def fits_mesh(self, rows: int, cols: int) -> bool:
        """Whether a rows x cols mesh is one of, or a sub-mesh of one of, this device's mesh shapes."""
        return any(rows <= r and cols <= c for r, c in self.meshes)

    @property
    def l1_gbps_per_core(self) -> float:
        return self.l1_bytes_per_cycle * self.clock_ghz

    @property
    def noc_gbps_per_core(self) -> float:
        return self.noc_bytes_per_cycle * self.clock_ghz

    @property
    def vector_gflops_per_core(self) -> float:
        return self.vector_flops_per_cycle * self.clock_ghz

    @property
    def cores(self) -> int:
        return self.grid_x * self.grid_y

    @property
    def l1_budget_per_bank(self) -> int:
        """Bytes per core the planner may fill with live tensors."""
        return int(self.l1_bank_bytes * self.l1_safety)


# Throughput sources: Wormhole n150/n300 board specification (1 GHz AI clock, 288 GB/s GDDR6, 74 TFLOP/s
# FP16 per chip); L1 and NoC port widths and the SFPU rate from Tenstorrent's tt-isa-documentation (WormholeB0
# L1: unpackers 512 bits/cycle, each NoC 256 bits/cycle; SFPU 0.064 TFLOP/s per core at 1 GHz). Blackhole:
# 1.35 GHz, 512 GB/s, 372 TFLOP/s FP16 for 140 cores (Hot Chips 2024), scaled to the 110 cores planned on.
DEVICES: dict[str, DeviceSpec] = {
    # Bank sizes of n150 are what the real ttnn 0.81.1 allocator reports on a mock n150
    # with l1_small_size=16384 (64 L1 banks, 12 DRAM banks).
    "n150": DeviceSpec("n150", "wormhole_b0", 8, 8, 1_376_928, 12, 1_072_693_184, 288.0),
    # Multi-chip Wormhole systems, figures per chip (as n150's): n300 is one board of 2 chips (1x2); T3000
    # (t3k) is 4 n300 boards, 8 chips opened as 1x8 or 2x4; Galaxy is 32 chips as 4x8 (tt-metal's
    # MeshShape figures for these systems; the n300 and T3000 shapes open on the mock, docs/ttnn-facts.md §26).
    "n300": DeviceSpec("n300", "wormhole_b0", 8, 8, 1_376_928, 12, 1_072_693_184, 288.0, meshes=((1, 2),)),
    "t3k": DeviceSpec("t3k", "wormhole_b0", 8, 8, 1_376_928, 12, 1_072_693_184, 288.0, meshes=((1, 8), (2, 4))),
    "galaxy": DeviceSpec("galaxy", "wormhole_b0", 8, 8, 1_376_928, 12, 1_072_693_184, 288.0, meshes=((4, 8),)),
    # Blackhole p150: bank sizes measured on a mock p150 (docs/ttnn-facts.md §0). The grid is the 11x10 of
    # docs/design.md §5, a sub-grid of the mock descriptor's 13x10, on which its plans remain valid.
    "p150": DeviceSpec("p150", "blackhole", 11, 10, 1_444_736, 8, 4_277_141_376, 512.0,
                       clock_ghz=1.35, matrix_tflops=round(372.0 * 110 / 140, 1)),
}

DEFAULT_DEVICE = "n150"


def get_device(name: str) -> DeviceSpec:
    """Look up a DeviceSpec by name; raises KeyError naming the known devices."""
    try:
        return DEVICES[name]
    except KeyError:
        raise KeyError(f"unknown device {name!r}; known: {', '.join(sorted(DEVICES))}") from None
