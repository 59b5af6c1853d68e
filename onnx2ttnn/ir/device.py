"""DeviceSpec: the hardware figures the compiler and the simulator plan against (docs/design.md §5)."""
from __future__ import annotations

from dataclasses import dataclass, replace

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
    # Dispatch figures of the cost model (ir/cost.py ProgramCost.eager_s / traced_s); estimates, sources below.
    op_launch_us: float = 5.0  # device side, per call that runs a program: the gap between one op and the next
    host_dispatch_us: float = 25.0  # host side, per ttnn call of an eager forward (Python + ttnn op dispatch)
    trace_replay_us: float = 25.0  # host side, per traced forward: the one execute_trace call
    # A board or system of several such chips: the mesh shapes ttnn can open on it (rows x columns of chips;
    # the first is the default).  All other figures are per chip (docs/design.md §6.19).
    meshes: tuple[tuple[int, int], ...] = ((1, 1),)
    # Between neighbouring chips of a mesh (CCL ops, ir/cost.py): each ethernet link's bandwidth per direction
    # and the links joining two neighbours.  Wormhole: 16 ethernet tiles per chip, each a bidirectional 100 GbE
    # link = 12.5 GB/s (Tenstorrent's tt-isa-documentation, WormholeB0 README); n300's two chips and T3000's
    # neighbours are joined by two links (tt-metal's T3000 topology, tools/ttnn_mock/cluster_desc.py).
    ethernet_gbps: float = 12.5
    ethernet_links: int = 2

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

    def with_l1_small(self, size: int) -> "DeviceSpec":
        """This device opened with an L1_SMALL region of `size` bytes per core: the region is carved from the top
        of each core's L1, so the tensor bank shrinks by what it grows (docs/ttnn-facts.md §12)."""
        if size == self.l1_small_size:
            return self
        return replace(self, l1_small_size=size, l1_bank_bytes=self.l1_bank_bytes - (size - self.l1_small_size))

    @property
    def l1_budget_per_bank(self) -> int:
        """Bytes per core the planner may fill with live tensors."""
        return int(self.l1_bank_bytes * self.l1_safety)


# Throughput sources: Wormhole n150/n300 board specification (1 GHz AI clock, 288 GB/s GDDR6, 74 TFLOP/s
# FP16 per chip); L1 and NoC port widths and the SFPU rate from Tenstorrent's tt-isa-documentation (WormholeB0
# L1: unpackers 512 bits/cycle, each NoC 256 bits/cycle; SFPU 0.064 TFLOP/s per core at 1 GHz). Blackhole:
# 1.35 GHz, 512 GB/s, 372 TFLOP/s FP16 for 140 cores (Hot Chips 2024), scaled to the 110 cores planned on.
# Dispatch sources (estimates, not measured here; docs/design.md §6.20): op_launch_us from tt-metal's
# tech_reports/LLMs/llms.md ("Device dispatch": the gap between one op finishing and the next starting, "single-
# digit microseconds" at its lower limit) and tt-metal issue #11386 (2-22 us op to op on a Llama layer); 5 us is
# taken from that range.  host_dispatch_us from the expected_inference_time limits of tt-metal's ResNet-50 n150
# batch-16 end-to-end perf tests (models/demos/ttnn_resnet/tests/perf_e2e_resnet50.py; 8.7 ms eager and 5.0 ms
# traced as this project's issue #14 quotes them; the limits move between tt-metal versions): ~3.7 ms of host
# dispatch not hidden behind the device over the ~150 ttnn calls of its forward (an estimate of that model's call
# count), i.e. ~25 us a call.  trace_replay_us: one host call (execute_trace) per traced forward, taken to cost
# one host dispatch; a trace replays every launch (op_launch_us stays).  Every device is given the same dispatch
# figures: nothing Blackhole-specific was found.
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
