#!/usr/bin/env python3
"""Write the mock cluster descriptors of the multi-chip systems: n300 (2 Wormhole chips on one board) and
T3000 (8 chips on 4 n300 boards), in tt-metal's cluster descriptor format (the one n150.yaml uses).

    cluster_desc.py FOLDER     -> FOLDER/n300.yaml, FOLDER/t3k.yaml (rewritten only when they differ)

Topology (tt-metal's T3000: four n300 boards in a row, each board's two chips joined by two ethernet
links, neighbouring boards joined by two links per chip row): chip coordinates are (x, y, rack, shelf);
each board has one chip on PCIe (mmio).  Every chip keeps one harvested Tensix row (harvest_mask one bit:
an 8x8 compute grid, as n150.yaml; two bits gave an 8x7 grid, docs/ttnn-facts.md §26).  Board ids encode
the board type (UPI 0x14 for n300) in bits 36..55 (with bit 56 set, as n150.yaml's), else UMD warns.
Python's standard library only (setup.sh runs it before the venv exists).
"""
from __future__ import annotations

import os
import sys

N300_UPI = 0x14
FIRST_UNIQUE_ID = 10226774059


def _board_id(upi: int, serial: int) -> int:
    return ((0x100000 | upi) << 36) | serial


# system -> (chip coordinates, ethernet links (chip, channel, chip, channel), mmio chip per PCIe device,
#            boards (chips on each))
SYSTEMS = {
    "n300": (
        {0: (0, 0), 1: (1, 0)},
        [(0, 8, 1, 0), (0, 9, 1, 1)],
        [0],
        [(0, 1)],
    ),
    "t3k": (
        {0: (1, 0), 1: (1, 1), 2: (2, 0), 3: (2, 1), 4: (0, 0), 5: (0, 1), 6: (3, 0), 7: (3, 1)},
        [(0, 6, 2, 6), (0, 7, 2, 7), (0, 8, 4, 0), (0, 9, 4, 1), (0, 14, 1, 14), (0, 15, 1, 15),
         (1, 0, 3, 0), (1, 1, 3, 1), (1, 8, 5, 0), (1, 9, 5, 1), (2, 8, 6, 0), (2, 9, 6, 1),
         (2, 14, 3, 14), (2, 15, 3, 15), (3, 8, 7, 0), (3, 9, 7, 1), (4, 6, 5, 6), (4, 7, 5, 7),
         (6, 6, 7, 6), (6, 7, 7, 7)],
        [0, 1, 3, 2],
        [(4, 0), (5, 1), (6, 2), (7, 3)],
    ),
}


def descriptor(name: str) -> str:
    coords, links, mmio, boards = SYSTEMS[name]
    chips = sorted(coords)
    out = ["arch:"] + [f"  {c}: wormhole_b0" for c in chips]
    out.append("chips:")
    for c in chips:
        x, y = coords[c]
        out += [f"  {c}:", f"    - {x}", f"    - {y}", "    - 0", "    - 0"]
    out.append("chip_unique_ids:")
    out += [f"  {c}: {FIRST_UNIQUE_ID + c}" for c in chips]
    out.append("ethernet_connections:")
    for a, ca, b, cb in links:
        out += [f"  - - chip: {a}", f"      chan: {ca}", f"    - chip: {b}", f"      chan: {cb}"]
    out += ["ethernet_connections_to_remote_devices:", "  []", "chips_with_mmio:"]
    out += [f"  - {k}: {c}" for k, c in enumerate(mmio)]
    out.append("harvesting:")
    for c in chips:
        out += [f"  {c}:", "    noc_translation: true", "    harvest_mask: 32", "    dram_harvesting_mask: 0",
                "    eth_harvesting_mask: 0", "    pcie_harvesting_mask: 0"]
    out.append("chip_to_boardtype:")
    out += [f"  {c}: n300" for c in chips]
    out.append("boards:")
    for k, board in enumerate(boards):
        out += ["  -", f"    - board_id: {_board_id(N300_UPI, 0x61190302B + k)}", "    - board_type: n300",
                "    - chips:"]
        out += [f"        - {c}" for c in board]
    return "\n".join(out) + "\n"


def main(folder: str) -> int:
    changed = 0
    for name in SYSTEMS:
        path = os.path.join(folder, f"{name}.yaml")
        text = descriptor(name)
        if os.path.exists(path) and open(path).read() == text:
            continue
        with open(path + ".tmp", "w") as f:
            f.write(text)
        os.replace(path + ".tmp", path)
        changed += 1
    print(f"CHANGED={changed}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
