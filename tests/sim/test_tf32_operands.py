"""The simulator's TF32 switch (sim/_fidelity.py TF32_ENV): float32 matmul operands read as the matrix engine's
source registers hold them, 10 explicit mantissa bits, and then the bits their fidelity reads."""
from __future__ import annotations

import torch

from onnx2ttnn.sim._fidelity import MathFidelity, WormholeComputeKernelConfig, fidelity_operands

HIFI4 = WormholeComputeKernelConfig(math_fidelity=MathFidelity.HiFi4, fp32_dest_acc_en=True)


def test_float32_operands_are_whole_by_default_and_tf32_under_the_switch(monkeypatch):
    a = torch.tensor([1.0 + 2.0 ** -20, 1.0 + 2.0 ** -10])  # SrcB: TF32 keeps 2^-10, drops 2^-20
    b = torch.tensor([1.0 + 2.0 ** -9, 1.0 + 2.0 ** -8])  # SrcA: HiFi4 reads 8 of TF32's 10 bits
    monkeypatch.delenv("ONNX2TTNN_SIM_TF32", raising=False)
    x, y = fidelity_operands(HIFI4, a, b, True, True)
    assert torch.equal(x, a) and torch.equal(y, b)
    monkeypatch.setenv("ONNX2TTNN_SIM_TF32", "1")
    x, y = fidelity_operands(HIFI4, a, b, True, True)
    assert x.tolist() == [1.0, 1.0 + 2.0 ** -10] and y.tolist() == [1.0, 1.0 + 2.0 ** -8]
    bf16 = torch.tensor([1.0 + 2.0 ** -7])  # a bfloat16 operand is unchanged by the switch at HiFi4
    assert torch.equal(fidelity_operands(HIFI4, bf16, bf16)[0], bf16)
