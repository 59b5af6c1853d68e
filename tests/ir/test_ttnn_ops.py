"""The compiler's ttnn op table (ir/ttnn_ops): every entry agrees with the real ttnn 0.81.1 API manifest, every
sharding fact names a probe result that proved it, values come from the declared sets, and the name lists
other modules keep are views derived from the table."""
from __future__ import annotations

import os
import re

import pytest

from onnx2ttnn.ir import cost, placements
from onnx2ttnn.ir.ttnn_ops import (HEIGHT_PROBE, KERNEL_CONFIG_PROBE, OPS, WIDTH_PROBE, Cost, OpInfo, Page,
                                   ShardFacts, declare, op_info)
from tests.ttnn_api import _signatures, _split_params

PROBES = os.path.join(os.path.dirname(__file__), "..", "..", "tools", "ttnn_mock", "probes")


@pytest.mark.parametrize("name", sorted(OPS))
def test_op_exists_with_its_parameters(name):
    info = OPS[name]
    signatures = _signatures(name)
    assert signatures, f"ttnn.{name} is not in the manifest"
    wanted = set(info.inputs) | set(info.positional_attrs) | set(info.layout_arguments)
    for argument in ("memory_config", "slice_config", "program_config"):
        if getattr(info, argument):
            wanted.add(argument)
    if info.kernel_config is not None:
        wanted.add(info.kernel_config)
    if info.comparison:
        wanted.add("dtype")  # decompose-layouts asks for the mask's dtype when it is not input a's
    assert any(wanted <= _split_params(sig)[1] for sig in signatures), f"ttnn.{name} lacks one of {wanted}"


def _agreeing_lines(results: str) -> list[str]:
    with open(os.path.join(PROBES, results)) as handle:
        return [line for line in handle if line.startswith("AGREE")]


@pytest.mark.parametrize("kind, probe", [("height", HEIGHT_PROBE), ("width", WIDTH_PROBE)])
def test_every_sharding_fact_was_proved_by_its_probe(kind, probe):
    script, results = probe
    assert os.path.exists(os.path.join(PROBES, script))
    lines = _agreeing_lines(results)
    ops = {name: getattr(info, kind) for name, info in OPS.items() if getattr(info, kind) is not None}
    assert {"relu", "add", "to_memory_config"} <= set(ops)
    for name, facts in ops.items():
        # the probe names each call after the op: `relu(HS) -> HS ...`, `from_torch -> WS ...`
        assert any(re.match(rf"AGREE\s+{name}[( ]", line) for line in lines), f"{name}: no agreeing {results} line"
        for evidence in facts.evidence:  # the bound's own probe output (its format is the probe's)
            assert os.path.getsize(os.path.join(PROBES, evidence)) > 0, f"{name}: {evidence} missing or empty"


@pytest.mark.parametrize("results", [KERNEL_CONFIG_PROBE[1], "results/kernel_config_p150.txt"])
def test_every_op_taking_a_kernel_config_was_seen_to_take_the_converters_configs(results):
    """probe_kernel_config.py calls each such op with each kind of config the converter emits (n150, p150)."""
    assert os.path.exists(os.path.join(PROBES, KERNEL_CONFIG_PROBE[0]))
    with open(os.path.join(PROBES, results)) as handle:
        lines = handle.read().splitlines()
    for name, info in OPS.items():
        if info.kernel_config is None:
            continue
        conv = info.kernel_config == "compute_config"  # convs keep the Float16_b destination (ir/kernel_config)
        configs = ("HiFi4 bf16dest", "HiFi2 bf16dest", "LoFi bf16dest") if conv else ("HiFi4 fp32acc", "HiFi2 l1acc",
                                                                                      "LoFi l1acc")
        for config in configs[:1] if name == "conv_transpose2d" else configs:
            assert any(line.startswith(f"OK   {name} ") and config in line for line in lines), (name, config)
        assert not any(line.startswith(f"ERR  {name} ") for line in lines if "wrong type" not in line), name
    assert "BlackholeComputeKernelConfig exists: False" in lines[0]  # p150 uses the Wormhole class too


def test_ops_without_measured_l1_needs_say_so():
    measured = {name for name, info in OPS.items() if info.l1_reserve is not None}
    # the conv reserve (results/conv_cb.txt); embedding's circular buffers (the mock n300, docs/ttnn-facts.md §27)
    assert measured == {"conv2d", "conv_transpose2d", "embedding"}
    assert op_info("relu").l1_reserve is None  # not measured: the shared OP_SCRATCH_RESERVE covers it


@pytest.mark.parametrize("field, value", [("output_page", "tile_layout"), ("input_layouts", ("rowmajor",)),
                                          ("cost", "matmul"), ("output_buffer", "l1"), ("output_dtype", "bf16")])
def test_an_undeclared_value_is_refused(field, value):
    with pytest.raises(ValueError, match="is not one of"):
        OpInfo("fake", ("input_tensor",), **{field: value})


def test_vector_flops_belong_to_vector_ops_and_names_are_declared_once():
    with pytest.raises(ValueError, match="vector_flops"):
        OpInfo("fake", ("a", "b"), cost=Cost.MATRIX, vector_flops=4)
    with pytest.raises(ValueError, match="declared twice"):
        declare("relu")


def test_page_names_are_not_the_tile_size():
    from onnx2ttnn.ir.layout import TILE, TTNNLayout

    assert TILE == 32 and Page.TILE == TTNNLayout().page == "tile"


def test_other_modules_hold_views_of_the_table(monkeypatch):
    assert placements.HEIGHT_SHARDING["matmul"] is OPS["matmul"].height
    assert "matmul" not in placements.WIDTH_SHARDING and set(cost.MATRIX_OPS) == {"matmul", "linear"}
    assert set(cost.CONV_OPS) == {"conv2d", "conv_transpose2d"} and "host_compute" in cost.FREE_OPS
    assert cost.VECTOR_FLOPS["softmax"] == 5 and "matmul" not in cost.VECTOR_FLOPS
    # an entry added to the table shows in every view at once
    fake = OpInfo("fake_op", ("input_tensor",), cost=Cost.CONV, width=ShardFacts((0,), True, "unary"))
    monkeypatch.setitem(OPS, "fake_op", fake)
    assert "fake_op" in cost.CONV_OPS and placements.WIDTH_SHARDING["fake_op"] is fake.width
    assert "fake_op" not in placements.HEIGHT_SHARDING
