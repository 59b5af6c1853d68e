"""Weights resident in L1 (memory/resident.py) on the simulator: load_parameters puts them in L1 (and the first
forward pass the conv weights it prepared: memory/conv_resident.py), they stay there through two forward passes,
each pass leaves nothing else allocated and gives the same outputs, and the L1 they hold is the planned one."""
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


def _reserved_for_conv_weights(conversion) -> int:
    """Bytes per L1 bank the plan reserved for the conv weights it keeps resident (their `_resident_weights`)."""
    return sum(n.attrs.get("_resident_weights", 0) for n in conversion.module.graph.nodes if n.op == "conv2d")


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
            # and the conv weights the first pass prepared, cloned to L1 at its end (memory/conv_resident.py)
            settled = runtime.memory_stats(device)["L1"].current_per_bank
            keys = getattr(program, "RESIDENT_CONV_WEIGHTS", ())
            assert (settled > loaded) == bool(keys) and settled >= loaded
            assert all(params[k].memory_config().buffer_type == ttnn.BufferType.L1 for k in keys)
            # the DRAM copies were freed; the simulator prepares no channel padding: at most what the plan reserved
            assert runtime.memory_stats(device)["DRAM"].current_per_bank == 0 or not keys
            assert settled - loaded <= _reserved_for_conv_weights(conversion)
            held = {k: params[k] for k in keys}
            second = program.forward(device, params, **inputs)
            assert all(params[k] is held[k] for k in keys)  # handed back by the convs, not moved again
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
