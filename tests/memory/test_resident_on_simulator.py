"""Weights resident in L1 (memory/resident.py) on the simulator: load_parameters puts them in L1, they stay
there through two forward passes, each pass leaves nothing else allocated and gives the same outputs, and
the L1 they hold is the planned one."""
from __future__ import annotations

import types

import pytest
import torch

import onnx2ttnn
from onnx2ttnn.ir.layout import bytes_per_bank
from onnx2ttnn.ir.graph import layout_of
from onnx2ttnn.sim import runtime


def _resident_bytes_per_bank(conversion) -> int:
    """Bytes per L1 bank of the weights the plan made resident, from the converted graph."""
    cores = 64  # n150
    return sum(bytes_per_bank(n.outputs[0].shape, layout_of(n.outputs[0]), cores)
               for n in conversion.module.graph.nodes
               if n.op == "from_torch" and n.attrs.get("_param") and layout_of(n.outputs[0]).buffer == "l1")


@pytest.mark.parametrize("model", ["mlp_path", "cnn_path", "bert_path"])
def test_resident_weights_stay_in_l1_across_forward_passes_without_leaks(model, request, tmp_path):
    path = str(tmp_path / "model_ttnn.py")
    conversion = onnx2ttnn.convert(request.getfixturevalue(model), path, memory="auto")
    conversion.write(path)
    resident = _resident_bytes_per_bank(conversion)
    assert resident > 0
    program = types.ModuleType("resident_program")
    runtime.configure("n150")
    try:
        with runtime.install() as ttnn:
            exec(compile(conversion.source, path, "exec"), program.__dict__)
            program.__dict__["__file__"] = path
            device = ttnn.open_device(device_id=0, l1_small_size=16384)
            params = program.load_parameters(device)
            loaded = runtime.memory_stats(device)["L1"].current_per_bank
            assert loaded == resident  # only the resident weights are in L1 before the forward pass
            inputs = program.random_inputs()
            first = program.forward(device, params, **inputs)
            # and the conv weights the first pass prepared and moved to L1 (tests/memory/test_conv_resident.py)
            settled = runtime.memory_stats(device)["L1"].current_per_bank
            assert (settled > loaded) == hasattr(program, "RESIDENT_CONV_WEIGHTS") and settled >= loaded
            second = program.forward(device, params, **inputs)
            assert runtime.memory_stats(device)["L1"].current_per_bank == settled
            for name in first:
                assert torch.equal(first[name], second[name]), name
            for tensor in params.values():
                if isinstance(tensor, ttnn.Tensor) and tensor.storage_type() == ttnn.StorageType.DEVICE:
                    ttnn.deallocate(tensor)
            ttnn.close_device(device)
        assert runtime.leaks(device) == []
    finally:
        runtime.configure(None)
