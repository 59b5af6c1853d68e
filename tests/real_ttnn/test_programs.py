"""Every end-to-end model's generated program, run on the real ttnn 0.81.1 (mock n150 and p150), with
--memory auto, dram and l1: the forward pass completes, afterwards only parameters and outputs are
allocated, and the simulator's per-bank usage after loading the parameters equals the real allocator's."""
from __future__ import annotations

import dataclasses
import importlib.util
import os
import re
from pathlib import Path

import pytest
import torch

import onnx2ttnn
from onnx2ttnn import sim
from onnx2ttnn.ir.device import get_device
from onnx2ttnn.sim import runtime
from tests.e2e.test_end_to_end import _view_model
from tests.real_ttnn.test_allocation import MOCK_GRIDS

MODELS = ["mlp_path", "cnn_path", "bert_path"]


def _convert(model, out_dir, memory: str, device: str, **options) -> str:
    program = str(out_dir / "model_ttnn.py")
    onnx2ttnn.convert(model, program, memory=memory, device=device, **options).write(program)
    return program


def _simulated_parameter_memory(program: str, device: str) -> tuple[dict, dict]:
    """Bytes per bank the simulator holds once load_parameters ran, and what a forward pass added to the
    parameters (conv weights it prepared), each {'L1': n, 'DRAM': n}.  The simulated device has the mock's
    grid (p150: 13x10 L1 banks, where the program plans for 11x10): an interleaved L1 weight whose pages do not
    divide evenly reserves per bank what its pages over the real bank count take."""
    grid_x, grid_y = MOCK_GRIDS[device]
    runtime.configure(dataclasses.replace(get_device(device), grid_x=grid_x, grid_y=grid_y))
    try:
        with runtime.install():
            spec = importlib.util.spec_from_file_location("sim_program", program)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            dev = sim.open_device(device_id=0)
            params = module.load_parameters(dev, None)

            def used():
                return {bt: sim.get_memory_view(dev, getattr(sim.BufferType, bt)).total_bytes_allocated_per_bank
                        for bt in ("L1", "DRAM")}
            loaded = used()
            inputs = {ident: torch.zeros(shape, dtype=getattr(torch, dtype.split(".")[-1]))
                      for ident, (_, shape, dtype) in module.INPUTS.items()}
            module.forward(dev, params, **inputs)
            prepared = {bt: n - loaded[bt] for bt, n in used().items()}
            sim.close_device(dev)
    finally:
        runtime.configure(None)
    return loaded, prepared


def _allocated(view: dict) -> int:
    return view["total_bytes_allocated_per_bank"]


@pytest.mark.parametrize("device", ["n150", "p150"])
@pytest.mark.parametrize("memory", ["dram", "l1", "auto"])
@pytest.mark.parametrize("model", MODELS)
def test_program_runs_on_real_ttnn(ttnn_mock, model, memory, device, tmp_path, request):
    program = _convert(request.getfixturevalue(model), tmp_path, memory, device)
    _check_on_real_ttnn(ttnn_mock, program, memory, device)


@pytest.mark.parametrize("memory", ["dram", "l1", "auto"])
@pytest.mark.parametrize("case", ["mlp_fp32", "views"])
def test_other_end_to_end_programs_run_on_real_ttnn(ttnn_mock, case, memory, tmp_path, mlp_path):
    """The remaining programs tests/e2e generates: the fp32 MLP and the model whose reshapes are views."""
    if case == "mlp_fp32":
        program = _convert(mlp_path, tmp_path, memory, "n150", dtype="fp32")
    else:
        program = _convert(_view_model(), tmp_path, memory, "n150")
    _check_on_real_ttnn(ttnn_mock, program, memory, "n150")


@pytest.mark.parametrize("kind", ["conv", "convt", "gemm"])
def test_output_tail_float32_programs_run_on_real_ttnn(ttnn_mock, kind, tmp_path):
    """A far-tail sigmoid's float32 logit (lowering/accuracy.py): conv2d / conv_transpose2d with dtype=float32
    and an fp32-dest compute_config, or linear with dtype=float32, then sigmoid on float32 and a typecast to
    bfloat16."""
    from tests.lowering.test_accuracy import tail_model

    program = _convert(tail_model(kind), tmp_path, "auto", "n150")
    assert "dtype=ttnn.float32" in Path(program).read_text()


@pytest.mark.parametrize("fidelity", ["lofi", "hifi2"])
@pytest.mark.parametrize("model", ["bert_path", "cnn_path"])
def test_programs_with_low_fidelity_configs_run_on_real_ttnn(ttnn_mock, model, fidelity, tmp_path, request):
    """--math-fidelity lofi / hifi2: the configs block-float weights get (packer L1 accumulation, a Float16_b
    destination for matmuls) on every matmul, linear, conv, softmax and norm of a program the real ttnn runs."""
    program = _convert(request.getfixturevalue(model), tmp_path, "auto", "n150", math_fidelity=fidelity)
    text = Path(program).read_text()
    assert f"math_fidelity=ttnn.MathFidelity.{'LoFi' if fidelity == 'lofi' else 'HiFi2'}" in text
    assert "HiFi4" not in text
    _check_on_real_ttnn(ttnn_mock, program, "auto", "n150")


@pytest.mark.parametrize("device", ["n150", "p150"])
@pytest.mark.parametrize("model", ["bert_path", "cnn_path"])
def test_programs_with_bfloat4_b_weights_run_on_real_ttnn(ttnn_mock, model, device, tmp_path, request):
    """--weights bfp4: every linear weight uploaded as bfloat4_b (LoFi configs), every conv's prepared as
    bfloat4_b (Conv2dConfig weights_dtype), embedding tables as bfloat8_b (ttnn refuses bfloat4_b ones);
    bfloat8_b everywhere is the default auto's, run by the tests above."""
    program = _convert(request.getfixturevalue(model), tmp_path, "auto", device, weights="bfp4")
    text = Path(program).read_text()
    assert "ttnn.bfloat4_b" in text
    bfp8 = re.findall(r"params\['(\w+)'\] = ttnn.from_torch\([^\n]*dtype=ttnn.bfloat8_b", text)
    embedding_lines = [line for line in text.splitlines() if "ttnn.embedding(" in line]
    assert all(any(f"params['{name}']" in line for line in embedding_lines) for name in bfp8)
    _check_on_real_ttnn(ttnn_mock, program, "auto", device)


@pytest.mark.parametrize("device", ["n150", "p150"])
def test_compact_download_program_runs_on_real_ttnn(ttnn_mock, device, tmp_path):
    """A [1, 1024, 1, 1] output converted to ROW_MAJOR on the device before to_torch reads it back
    (passes/decompose_layouts.py compact_download; docs/ttnn-facts.md §31)."""
    from tests.passes.test_decompose_layouts import pooled_model

    program = _convert(pooled_model(1024), tmp_path, "auto", device)
    assert "layout=ttnn.ROW_MAJOR_LAYOUT" in Path(program).read_text().split("def forward")[1]
    _check_on_real_ttnn(ttnn_mock, program, "auto", device)


def _check_on_real_ttnn(ttnn_mock, program: str, memory: str, device: str) -> None:
    report = ttnn_mock.run_program(program, device=device)
    assert report["ok"], f"real ttnn refused the program: {report['error']}\nat {report.get('error_location')}"
    assert report["returncode"] == 0
    assert report["ttnn_calls_in_forward"] > 0

    # after forward (run twice) only parameters, the conv weights the first call prepared into params, and
    # outputs hold device memory (outputs come back as torch tensors, so they hold none); the program
    # cache's own config tensors are cleared first (run_program.py)
    after = report["memory_after_clearing_program_cache"]
    params = report["memory_after_params"]
    leaked = [b for b in report["buffers"] if b["kind"] == "allocated_in_forward"]
    assert leaked == [], f"buffers allocated in forward and never freed: {leaked}"
    prepared = {}
    for bt in ("L1", "DRAM"):
        def held(kind):
            return sum(b["size_per_bank"] for b in report["buffers"] if b["kind"] == kind and b["buffer_type"] == bt)
        prepared[bt] = held("prepared_parameter")  # conv weights the first forward prepared into params
        assert _allocated(after[bt]) == _allocated(params[bt]) + prepared[bt] + held("output"), bt

    # the simulator places the same parameters in the same bytes per bank; both prepare conv weights in
    # forward exactly when the program has convs (their sizes differ: real ttnn pads a conv's input channels
    # in its prepared weight, e.g. 16 to 32, the simulator does not)
    loaded, simulated_prepared = _simulated_parameter_memory(program, device)
    assert loaded == {bt: _allocated(params[bt]) for bt in ("L1", "DRAM")}
    text = Path(program).read_text()
    assert (sum(prepared.values()) > 0) == (sum(simulated_prepared.values()) > 0) == ("ttnn.conv2d(" in text)
    # conv weights the plan keeps resident (memory/conv_resident.py) are in L1 after forward on both, never
    # more of it than the plan reserved for them
    resident = "RESIDENT_CONV_WEIGHTS = (" in text
    assert (prepared["L1"] > 0) == (simulated_prepared["L1"] > 0) == resident
    if resident:
        reserved = int(re.search(r"# \(the plan reserves (\d+) B per L1 bank for them\)", text).group(1))
        assert prepared["L1"] <= reserved
    if memory == "l1":
        assert report["peak"]["l1_allocated_per_bank"] > 0, "the l1 policy placed nothing in L1 on real ttnn"
    if memory == "auto" and "memory_config=ttnn.L1_MEMORY_CONFIG)" in Path(program).read_text().split("def forward")[0]:
        # weights resident in L1 (memory/resident.py): held from load_parameters through both forward passes
        assert _allocated(params["L1"]) > 0 and _allocated(after["L1"]) >= _allocated(params["L1"])


@pytest.mark.parametrize("case", ["contrib", "loop", "two_regions"])
def test_programs_with_host_regions_run_on_real_ttnn(ttnn_mock, case, tmp_path):
    """Host regions (onnxruntime sessions opened by load_parameters, device tensors to the host and back around
    them) between real ttnn calls: the forward pass completes with nothing leaked."""
    from tests.e2e.test_host_regions import contrib_model, cycle_model, loop_model

    model = {"contrib": contrib_model, "loop": loop_model, "two_regions": cycle_model}[case]()
    program = _convert(model, tmp_path, "auto", "n150")
    assert (tmp_path / "model_ttnn_region0.onnx").is_file()
    _check_on_real_ttnn(ttnn_mock, program, "auto", "n150")


@pytest.mark.parametrize("case", ["ml_only", "ml_mixed"])
def test_a_sequence_of_maps_from_a_host_region_comes_back_on_real_ttnn(ttnn_mock, case, tmp_path):
    """ZipMap's seq(map) (fallback/values.py): the forward pass returns onnxruntime's list of dicts next to the
    torch tensors; an ai.onnx.ml-only model makes no ttnn call, a mixed one runs its device ops around it."""
    from tests.fallback.test_values import ml_mixed_model, ml_only_model

    program = _convert(ml_only_model() if case == "ml_only" else ml_mixed_model(), tmp_path, "auto", "n150")
    if case == "ml_mixed":
        _check_on_real_ttnn(ttnn_mock, program, "auto", "n150")
    report = ttnn_mock.run_program(program, device="n150")
    assert report["ok"] and report["returncode"] == 0, report.get("error")
    outputs = {o["name"]: o for o in report["outputs"]}
    assert outputs["probabilities"]["python_type"] == "list" and "{0: " in outputs["probabilities"]["repr"]
    assert outputs["label"]["python_type"] == "Tensor"
    assert (report["ttnn_calls_in_forward"] == 0) == (case == "ml_only")


@pytest.mark.parametrize("case", ["qoperator", "qoperator_fp32", "qlinear_conv_fp32", "nbits"])
def test_quantized_contrib_programs_run_on_real_ttnn(ttnn_mock, case, tmp_path):
    """com.microsoft QLinearAdd / QLinearMul (quantize_static's QOperator format) and MatMulNBits (a 4-bit weight
    dequantized to bfloat8_b) on the device, their weights stored as integer codes and scales, nothing leaked;
    in float32 a QLinearMatMul or QLinearConv as its integer accumulator times one multiplier."""
    from tests.lowering.test_quantize_contrib import nbits_model, qoperator_model
    from tests.lowering.test_quantize_operators import conv_model

    model = (qoperator_model(tmp_path) if case.startswith("qoperator") else
             conv_model() if case.startswith("qlinear_conv") else nbits_model(tmp_path))
    options = {"dtype": "fp32"} if case.endswith("fp32") else {}
    program = _convert(model, tmp_path, "auto", "n150", **options)
    if options:
        assert "_accumulator" in Path(program).read_text()
    assert "dequantized_weight(data" in Path(program).read_text()
    _check_on_real_ttnn(ttnn_mock, program, "auto", "n150")


@pytest.mark.parametrize("memory", ["auto", "dram"])
def test_coded_linear_rows_run_on_real_ttnn(ttnn_mock, memory, tmp_path):
    """A float32 QDQ linear on its codes with its scale and bias rows ROW_MAJOR in L1 (auto: tilized by the
    multiply and by linear's bias add, ttnn-facts §47) or TILE in DRAM (dram): real ttnn runs it, nothing leaked."""
    from tests.lowering.test_weight_codes import qdq_gemm

    program = _convert(qdq_gemm(), tmp_path, memory, "n150", dtype="fp32")
    assert ("ROW_MAJOR_LAYOUT" in Path(program).read_text()) == (memory == "auto")
    _check_on_real_ttnn(ttnn_mock, program, memory, "n150")
