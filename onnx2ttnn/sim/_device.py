"""The simulated device: L1 and DRAM bank allocators, buffers, open_device / close_device.

Models tt-metal's allocator as the real library uses it: one free list per buffer type shared in lockstep
by all banks of that type (an address is reserved in every bank), first fit, DRAM bottom-up and L1
top-down, block sizes rounded to the DRAM alignment.  A buffer reserves `size_per_bank` bytes in every
bank: ceil(pages / banks) * aligned page size for interleaved buffers, one shard for sharded ones
(banks = shard cores).  Besides the lockstep reservation the allocator tracks the bytes of data each bank
really holds (pages round-robin from bank 0; shard i on the i-th core of the shard grid), with peaks.
"""
from __future__ import annotations

import bisect
import itertools
import warnings
from dataclasses import dataclass, field

from onnx2ttnn.ir.device import DeviceSpec

from ._memconfig import CoreCoord, CoreGrid
from ._types import BufferType

# Per-architecture facts DeviceSpec does not carry: total L1 per core (the tensor region is its top
# l1_bank_bytes), L1 / DRAM alignment (tt-metal HAL), DRAM unreserved base.
ARCH_FACTS = {
    "wormhole_b0": {"l1_total": 1_499_136, "l1_alignment": 16, "dram_alignment": 32, "dram_base": 1_048_640},
    "blackhole": {"l1_total": 1_572_864, "l1_alignment": 16, "dram_alignment": 64, "dram_base": 1_048_704},
}

_buffer_ids = itertools.count(1)


@dataclass
class Buffer:
    """One device allocation (shared by a tensor and its views)."""

    device: "Device"
    buffer_type: BufferType
    address: int
    offset: int  # address relative to the bank's tensor region
    size: int  # bytes of all pages, aligned page size each
    size_per_bank: int  # bytes reserved in every bank (lockstep)
    page_size: int
    num_pages: int
    bank_data: dict  # bank index -> bytes of data it holds
    description: str  # shape / dtype / layout / memory layout of the tensor that allocated it
    created_by: str
    id: int = field(default_factory=lambda: next(_buffer_ids))
    allocated: bool = True
    refs: int = 0
    freed_by: str = ""

    def free(self, reason: str) -> None:
        """Return the buffer's memory to its allocator (idempotent); `reason` says who freed it."""
        if self.allocated:
            self.device._allocator(self.buffer_type).release(self)
            self.allocated = False
            self.freed_by = reason


@dataclass(frozen=True)
class BufferInfo:
    """A snapshot of a buffer for reports: where it is, how big, which tensor allocated it."""

    id: int
    buffer_type: str
    address: int
    size: int
    size_per_bank: int
    description: str
    created_by: str


class BankAllocator:
    """Lockstep free-list allocator for all banks of one buffer type, with usage statistics."""

    def __init__(self, buffer_type: BufferType, num_banks: int, bank_size: int, base: int, alignment: int,
                 bottom_up: bool):
        self.buffer_type, self.num_banks, self.bank_size = buffer_type, num_banks, bank_size
        self.base, self.alignment, self.bottom_up = base, alignment, bottom_up
        self._free = [[0, bank_size]]  # sorted, non-adjacent [start, end) blocks
        self.live: dict[int, Buffer] = {}
        self.allocated = 0
        self.peak = 0
        self.data = [0] * num_banks
        self.data_peak = [0] * num_banks

    def reserve(self, size_per_bank: int) -> int | None:
        """Reserve `size_per_bank` bytes at the same offset in every bank; None when nothing fits."""
        size = max(self.alignment, -(-size_per_bank // self.alignment) * self.alignment)
        blocks = self._free if self.bottom_up else reversed(self._free)
        for block in blocks:
            if block[1] - block[0] >= size:
                if self.bottom_up:
                    offset = block[0]
                    block[0] += size
                else:
                    offset = block[1] - size
                    block[1] -= size
                if block[0] == block[1]:
                    self._free.remove(block)
                return offset
        return None

    def commit(self, buffer: Buffer) -> None:
        """Account a reserved buffer in the statistics."""
        self.live[buffer.id] = buffer
        self.allocated += self._rounded(buffer.size_per_bank)
        self.peak = max(self.peak, self.allocated)
        data, peak = self.data, self.data_peak
        for bank, nbytes in buffer.bank_data.items():
            data[bank] += nbytes
            if data[bank] > peak[bank]:
                peak[bank] = data[bank]

    def release(self, buffer: Buffer) -> None:
        """Free a buffer's blocks and statistics."""
        del self.live[buffer.id]
        size = self._rounded(buffer.size_per_bank)
        self.allocated -= size
        for bank, nbytes in buffer.bank_data.items():
            self.data[bank] -= nbytes
        start, end = buffer.offset, buffer.offset + size
        starts = [b[0] for b in self._free]
        i = bisect.bisect_left(starts, start)
        self._free.insert(i, [start, end])
        if i + 1 < len(self._free) and self._free[i + 1][0] == end:
            self._free[i][1] = self._free.pop(i + 1)[1]
        if i > 0 and self._free[i - 1][1] == start:
            self._free[i - 1][1] = self._free.pop(i)[1]

    def _rounded(self, size_per_bank: int) -> int:
        return max(self.alignment, -(-size_per_bank // self.alignment) * self.alignment)

    def largest_free(self) -> int:
        return max((b[1] - b[0] for b in self._free), default=0)

    def out_of_memory(self, size: int, size_per_bank: int, num_banks: int) -> RuntimeError:
        """The error real tt-metal raises when a buffer does not fit (bank_manager.cpp)."""
        return RuntimeError(
            f"TT_FATAL: Out of Memory: Not enough space to allocate {size} B {self.buffer_type.name} buffer "
            f"across {num_banks} banks, where each bank needs to store {size_per_bank} B, but bank size is "
            f"{self.bank_size} B (allocated: {self.allocated} B, free: {self.bank_size - self.allocated} B, "
            f"largest free block: {self.largest_free()} B)")


def trace_region_bank_bytes(trace_region_size: int, dram_banks: int) -> int:
    """What a trace region of `trace_region_size` bytes takes off the top of every DRAM bank: its share of the
    banks rounded up to 4 KiB (docs/ttnn-facts.md section 32: 1 MiB over n150's 12 banks takes 90,112 B of each)."""
    share = -(-trace_region_size // dram_banks)
    return -(-share // 4096) * 4096


class Device:
    """A simulated Tenstorrent chip (what ttnn.open_device returns)."""

    def __init__(self, spec: DeviceSpec, device_id: int = 0, l1_small_size: int = 16384, trace_region_size: int = 0):
        facts = ARCH_FACTS.get(spec.arch, ARCH_FACTS["wormhole_b0"])
        self.spec, self.device_id, self.l1_small_size = spec, device_id, l1_small_size
        self.l1_alignment, self.dram_alignment = facts["l1_alignment"], facts["dram_alignment"]
        l1_bank = spec.l1_bank_bytes - (l1_small_size - spec.l1_small_size)
        l1_bank -= l1_bank % self.dram_alignment
        # the L1_SMALL region (l1_small_size bytes) sits at the top of each core's L1, above the tensor banks
        self.l1 = BankAllocator(BufferType.L1, spec.cores, l1_bank, facts["l1_total"] - l1_small_size - l1_bank,
                                self.dram_alignment, bottom_up=False)
        dram_bank = spec.dram_bank_bytes - trace_region_bank_bytes(trace_region_size, spec.dram_banks)
        self.dram = BankAllocator(BufferType.DRAM, spec.dram_banks, dram_bank, facts["dram_base"],
                                  self.dram_alignment, bottom_up=True)
        self.is_open = True
        self.num_command_queues = 1  # open_device(num_command_queues=) sets it
        self.leaks: list[BufferInfo] = []

    # -- the parts of ttnn.Device the generated programs may touch --
    def compute_with_storage_grid_size(self) -> CoreCoord:
        return CoreCoord(self.spec.grid_x, self.spec.grid_y)

    @property
    def core_grid(self) -> CoreGrid:
        return CoreGrid(x=self.spec.grid_x, y=self.spec.grid_y)

    def dram_grid_size(self) -> CoreCoord:
        return CoreCoord(self.spec.dram_banks, 1)

    def id(self) -> int:
        return self.device_id

    def arch(self) -> str:
        return self.spec.arch

    def __repr__(self) -> str:
        state = "open" if self.is_open else "closed"
        return f"<simulated ttnn device {self.device_id}: {self.spec.name} {self.spec.grid_x}x{self.spec.grid_y}, {state}>"

    # -- allocation --
    def _allocator(self, buffer_type: BufferType) -> BankAllocator:
        if buffer_type is BufferType.L1:
            return self.l1
        if buffer_type is BufferType.DRAM:
            return self.dram
        raise RuntimeError(f"TT_FATAL: Unsupported buffer type {buffer_type} for a device tensor")

    def allocate(self, buffer_type: BufferType, *, size: int, size_per_bank: int, page_size: int, num_pages: int,
                 num_banks: int, bank_data: dict, description: str, created_by: str) -> Buffer:
        """Allocate a buffer or raise the real library's out-of-memory error."""
        if not self.is_open:
            raise RuntimeError(f"TT_FATAL: {created_by}: device {self.device_id} is closed")
        alloc = self._allocator(buffer_type)
        offset = alloc.reserve(size_per_bank)
        if offset is None:
            raise alloc.out_of_memory(size, size_per_bank, num_banks)
        buffer = Buffer(self, buffer_type, alloc.base + offset, offset, size, size_per_bank, page_size, num_pages,
                        bank_data, description, created_by)
        alloc.commit(buffer)
        return buffer

    def live_buffers(self) -> list[BufferInfo]:
        """Snapshots of all buffers currently allocated, oldest first."""
        buffers = sorted(itertools.chain(self.l1.live.values(), self.dram.live.values()), key=lambda b: b.id)
        return [BufferInfo(b.id, b.buffer_type.name, b.address, b.size, b.size_per_bank, b.description,
                           b.created_by) for b in buffers]

    def close(self) -> list[BufferInfo]:
        """Free everything, remember what was still allocated (leaks) and refuse further use."""
        self.leaks = self.live_buffers()
        for alloc in (self.l1, self.dram):
            for buffer in list(alloc.live.values()):
                buffer.free("ttnn.close_device")
        self.is_open = False
        if self.leaks:
            warnings.warn(f"ttnn simulator: close_device found {len(self.leaks)} leaked buffer(s): "
                          + "; ".join(f"{b.description} from {b.created_by}" for b in self.leaks[:5]),
                          ResourceWarning, stacklevel=3)
        return self.leaks


@dataclass(frozen=True)
class MemoryView:
    """What ttnn.get_memory_view reports for one buffer type (allocator statistics per bank)."""

    num_banks: int
    total_bytes_per_bank: int
    total_bytes_allocated_per_bank: int
    total_bytes_free_per_bank: int
    largest_contiguous_bytes_free_per_bank: int
    block_table: list


def get_memory_view(device, buffer_type):
    """Allocator statistics of one buffer type of a device (lockstep: identical in every bank)."""
    alloc = device._allocator(buffer_type)
    table = [{"address": b.address, "size": alloc._rounded(b.size_per_bank), "allocated": "yes"}
             for b in sorted(alloc.live.values(), key=lambda b: b.address)]
    return MemoryView(alloc.num_banks, alloc.bank_size, alloc.allocated, alloc.bank_size - alloc.allocated,
                      alloc.largest_free(), table)
