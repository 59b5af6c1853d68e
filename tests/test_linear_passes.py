"""Every stage of the converter is linear in graph size, counted in Python function calls (issue #16).

A call count does not change with the machine's load, so this holds the line that timings cannot in a shared
test run: on Add/Relu chains of 500, 1000 and 2000 nodes, each stage's calls per added node must be the same
from the first doubling to the second (a stage that walked the graph once per node would double it).
Calls made inside C code (a `list.index` on a growing list) are not counted: the CPU-seconds table of
`benchmarks/bench_convert.py --chain ...` (up to 50k nodes; `--calls` prints these counts) covers those.
Seen failing: `graph.tensors()` every 50th node of insert-deallocs gives 630 calls per node, then 810.
"""
from __future__ import annotations

import pytest

from benchmarks.bench_convert import chain_path, stage_costs

SIZES = (500, 1000, 2000)


@pytest.fixture(scope="module")
def costs(tmp_path_factory):
    folder = str(tmp_path_factory.mktemp("chains"))
    return [stage_costs(chain_path(n, folder), calls=True) for n in SIZES]


def test_every_stage_is_counted(costs):
    stages = set(costs[0])
    assert {"import", "fold-constants", "lower-to-ttnn", "place-memory", "insert-deallocs"} <= stages
    assert all(set(c) == stages for c in costs)


def test_each_stage_costs_the_same_per_added_node(costs):
    small, middle, large = costs
    for stage in small:
        first = (middle[stage] - small[stage]) / (SIZES[1] - SIZES[0])
        second = (large[stage] - middle[stage]) / (SIZES[2] - SIZES[1])
        # 2 % slack for per-run noise in the count (caches warmed by the first conversion); quadratic is +100 %
        assert second <= first * 1.02 + 1, f"{stage}: {first:.1f} calls per node, then {second:.1f}"
