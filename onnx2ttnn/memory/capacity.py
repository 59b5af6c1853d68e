"""How much DRAM a planned program needs on each chip, and the smallest mesh of the device table that would
hold it: `dram_use`, the one answer the capacity check (limits.check_dram_plan) and the report use.

    dram_use(graph, device)          -> DramUse: per bank, the parameters, the activations' peak, the peak of
                                        both live at once (and the node where it happens)
    smallest_mesh(use, device, chips) -> the fewest-chip mesh of the device table whose chips would each hold
                                        it, by an estimate, or None

Accounting: every DRAM buffer reserves `ir/layout.bytes_per_bank` in each bank (interleaved pages go round-robin,
every bank reserves the fullest bank's pages), from the node that writes it to its last reader; a parameter
over the whole program (the program loads every parameter before its forward pass, load_parameters), so the
peak is the parameters plus the activations' peak.  The figures are one chip's: a data-parallel program is the per-chip
program (docs/design.md §6.19), so its graph already holds one chip's shapes.

The smallest-mesh figure is an ESTIMATE, stated as one in every message: tensor parallel divides the
parameters over the chips of a mesh (P / n per chip), and every chip is taken to hold the activations of the
whole batch (this program's activations times its chips: a data-parallel program's activations are one
chip's share of the batch), an upper bound since tensor parallel splits some of them too.  Candidates are
the mesh shapes of the device table (ir/device.py) of the same architecture with more than one chip, each
with its own chips' DRAM; fewest chips first, then the table's order.
"""
from __future__ import annotations

from dataclasses import dataclass

import onnx_graphsurgeon as gs

from onnx2ttnn.ir.device import DEVICES, DeviceSpec


@dataclass(frozen=True)
class DramUse:
    """One chip's DRAM over the program, in bytes per bank (every bank reserves as much)."""

    banks: int
    parameters: int  # all the parameters (live to the end of the program)
    activations: int  # the peak of everything else live at once
    peak: int  # the peak of both live at once: parameters + activations
    at: int  # the node index of the activations' peak

    @property
    def peak_bytes(self) -> int:
        return self.peak * self.banks

    @property
    def parameter_bytes(self) -> int:
        return self.parameters * self.banks

    @property
    def activation_bytes(self) -> int:
        return self.activations * self.banks


@dataclass(frozen=True)
class MeshFit:
    """A mesh of the device table that would hold the program, by the module docstring's estimate."""

    device: str
    rows: int
    cols: int
    per_chip: int  # estimated bytes needed on each chip
    available: int  # DRAM bytes of each chip

    @property
    def chips(self) -> int:
        return self.rows * self.cols


def dram_budget(device: DeviceSpec) -> int:
    """Bytes of DRAM one chip of `device` holds (all its banks)."""
    return device.dram_banks * device.dram_bank_bytes


def dram_use(graph: gs.Graph, device: DeviceSpec) -> DramUse:
    """The DRAM buffers of the planned graph, live over the schedule (module docstring)."""
    from onnx2ttnn.ir.graph import layout_of
    from onnx2ttnn.ir.layout import bytes_per_bank
    from onnx2ttnn.ir.liveness import buffers

    end = len(graph.nodes)
    change, parameters = [0] * (end + 1), 0
    for buf in buffers(graph):
        layout = layout_of(buf.root)
        if layout.buffer != "dram":
            continue
        size = bytes_per_bank(buf.root.shape, layout, device.dram_banks)
        if buf.is_param:
            parameters += size
        else:
            change[buf.first] += size
            change[buf.last + 1] -= size
    live = activations = at = 0
    for index in range(end):
        live += change[index]
        if live > activations:
            activations, at = live, index
    return DramUse(device.dram_banks, parameters, activations, parameters + activations, at)


def smallest_mesh(use: DramUse, device: DeviceSpec, chips: int = 1, tp: int = 1) -> MeshFit | None:
    """The fewest-chip mesh of the device table (same architecture as `device`, more than one chip) whose
    chips would each hold the program under tensor parallel, by the module docstring's estimate; `chips`:
    how many chips this program's batch is split over (its activations are one chip's share); `tp`: how many
    chips its layers are already split over (its parameters are one chip's part: the model's are taken as tp
    times that, which counts the replicated ones tp times)."""
    activations = use.activation_bytes * chips
    candidates = [(r * c, order, spec, r, c) for order, spec in enumerate(DEVICES.values())
                  if spec.arch == device.arch for r, c in spec.meshes if r * c > 1]
    for n, _, spec, rows, cols in sorted(candidates, key=lambda c: c[:2]):
        needed = -(-use.parameter_bytes * tp // n) + activations
        if needed <= dram_budget(spec):
            return MeshFit(spec.name, rows, cols, needed, dram_budget(spec))
    return None
