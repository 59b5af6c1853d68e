"""matmul and linear: batched/broadcast matrix products on TILE device tensors.

Computed from the stored (already rounded) operands with float32 accumulation, then bias, then one rounding to
the output dtype.  An `activation` without a program config or core grid is what real ttnn 0.81.1 runs then:
the standalone unary op on the rounded result, in a second buffer, the first freed (docs/ttnn-facts.md §22);
with one, it is applied in float32 before the rounding (the activation inside the matmul kernel: its numerics
are not probed).  A compute_kernel_config changes the operands and the
accumulation as sim/_fidelity.py models (mantissa bits per math fidelity; a bfloat16 destination without
fp32_dest_acc_en).  When both operands are stored as bfloat16 (bf16 or
bfloat8_b) and the CPU has native bf16 matrix units, torch's bf16 GEMM is used: it multiplies the same
operands exactly and accumulates in float32, so results agree with the float32 path to within the last
bit of a bf16 result (summation order).  Default output placement: DRAM interleaved.
Batch broadcasting: only a b whose batch dims are all 1 (e.g. [K, N]) is broadcast over a's batch; other
batch mismatches ([2,3,M,K] @ [1,3,K,N]) are refused like the real "bmm (non-bcast matmul)" check.
"""
from __future__ import annotations

import functools
import math

import torch

from ._activation import apply_activation, parse_activation, standalone_activation
from ._fidelity import bf16_dest, fidelity_operands, kernel_config, matmul_bf16_dest
from ._common import (device_result, output_config, require_dtype, require_tile, same_device, tensor_arg,
                      tilized_copy, values)
from ._memconfig import DRAM_MEMORY_CONFIG
from ._program_config import check_program_config
from ._tensor import Tensor
from ._types import DataType, Layout, tile_pad

_FLOAT = frozenset({DataType.BFLOAT16, DataType.FLOAT32, DataType.BFLOAT8_B, DataType.BFLOAT4_B})
# results torch's native bf16 GEMM may produce: bfloat16 only (its bf16 output rounded again to a block float
# would round twice where a float32 dest is packed once: the simulator's numbers would depend on the CPU)
_BF16_OUT = frozenset({DataType.BFLOAT16})


@functools.lru_cache(maxsize=1)
def native_bf16_gemm() -> bool:
    """True when the CPU has AMX or AVX512-BF16 (torch's bf16 GEMM is then fast and fp32-accumulating)."""
    try:
        with open("/proc/cpuinfo") as f:
            flags = f.read()
    except OSError:
        return False
    return "amx_bf16" in flags or "avx512_bf16" in flags


def _operands(op: str, a: Tensor, b: Tensor, transpose_a: bool, transpose_b: bool, out_dtype: DataType, config):
    fast = (native_bf16_gemm() and a._data.dtype is torch.bfloat16 and b._data.dtype is torch.bfloat16
            and out_dtype in _BF16_OUT and not bf16_dest(config))
    x, y = (a._data, b._data) if fast else (values(a), values(b))
    x, y = fidelity_operands(config, x, y, a._dtype is DataType.FLOAT32, b._dtype is DataType.FLOAT32)
    if fast and (x.dtype is not torch.bfloat16 or y.dtype is not torch.bfloat16):
        x, y = x.float(), y.float()
    if transpose_a and x.dim() >= 2:
        x = x.transpose(-1, -2)
    if transpose_b and y.dim() >= 2:
        y = y.transpose(-1, -2)
    k_a = x.shape[-1]
    k_b = y.shape[-2] if y.dim() >= 2 else y.shape[0]
    if k_a != k_b:
        raise RuntimeError(f"TT_FATAL: {op}: The width of the first tensor must be equal to the height of the "
                           f"second tensor. Mismatch: width={k_a} height={k_b}")
    batch_a, batch_b = tuple(x.shape[:-2]), tuple(y.shape[:-2]) if y.dim() >= 2 else ()
    rank = max(len(batch_a), len(batch_b))
    batch_a, batch_b = (1,) * (rank - len(batch_a)) + batch_a, (1,) * (rank - len(batch_b)) + batch_b
    if math.prod(batch_b) != 1 and batch_a != batch_b:  # only a [K, N]-like b is broadcast over a's batch
        dim = next(i for i, (p, q) in enumerate(zip(batch_a, batch_b)) if p != q)
        raise RuntimeError(f"TT_FATAL: {op}: bmm (non-bcast matmul) expects input tensors of shapes "
                           f"BCMK*BCKN=BCMN or equal ranks, got batch dimension {dim} mismatch: "
                           f"a={batch_a[dim]} vs b={batch_b[dim]} ({list(x.shape)} @ {list(y.shape)})")
    return x, y


def _check_sharded_batched(op: str, a: Tensor, b: Tensor) -> None:
    """A height-sharded a against a batched b: real ttnn's batched program takes one whole batch per shard on
    a grid with no idle core (tools/ttnn_mock/probes/results/matmul_sharded.txt)."""
    if not a.is_sharded() or math.prod(b._data.shape[:-2]) <= 1:
        return
    spec = a._mem.shard_spec
    rows = tile_pad(a._data.shape[-2]) // 32 if a._data.dim() >= 2 else 1
    per_core = spec.shape[0] // 32
    shards = -(-math.prod(a.padded_shape[:-1]) // spec.shape[0])
    if per_core != rows:
        raise RuntimeError(f"TT_FATAL: {op}: MatmulMultiCoreReuseProgramConfig: per_core_M, {per_core}, must divide "
                           f"M, {rows} (a height-sharded input_tensor_a against a batched input_tensor_b needs "
                           "one whole batch per shard)")
    if shards % spec.num_cores():
        raise RuntimeError(f"TT_FATAL: {op}: MatmulMultiCoreReuseProgramConfig: num_output_blocks ({shards}) must "
                           f"be evenly divisible by the number of cores in the input shard grid ({spec.num_cores()})")


def _matmul_impl(op: str, a, b, bias, transpose_a, transpose_b, memory_config, dtype, activation,
                 compute_kernel_config, program_config=None, core_grid=None) -> Tensor:
    config = kernel_config(op, "compute_kernel_config", compute_kernel_config)
    for name, t in (("input_tensor_a", a), ("input_tensor_b", b)):
        tensor_arg(op, name, t)
        require_tile(op, name, t)
        require_dtype(op, name, t, _FLOAT)
    same_device(op, a, b)
    _check_sharded_batched(op, a, b)
    check_program_config(op, program_config, a, b, config)
    act = parse_activation(op, activation)
    if act is not None and a.is_sharded() and program_config is None:
        raise RuntimeError(f"TT_FATAL: {op}: Sharded matmul run with {act.op_type} activation: this should be "
                           "placed in the program config's fused_activation field")
    after = standalone_activation(op, act) if program_config is None and core_grid is None else None
    if after is not None:
        act = None  # run below, after the rounding, as the standalone op
    out_dtype = dtype or a._dtype
    x, y = _operands(op, a, b, transpose_a, transpose_b, out_dtype, config)
    out = matmul_bf16_dest(x, y) if bf16_dest(config) else torch.matmul(x, y)
    copy = intermediate = None
    if bias is not None:
        tensor_arg(op, "bias", bias)
        if bias._layout is Layout.ROW_MAJOR and bias._device is not None:
            # a ROW_MAJOR bias is added apart, whatever the config (docs/ttnn-facts.md §47): the matmul's result,
            # the bias's tilized copy and the sum are allocated in turn
            intermediate = device_result(op, out, out_dtype, Layout.TILE, a._device, output_config(
                op, memory_config, a, out.shape, Layout.TILE, default=DRAM_MEMORY_CONFIG))
        copy = tilized_copy(op, bias)
        require_tile(op, "bias", copy or bias)
        bv = values(bias)
        n = out.shape[-1]
        if bv.shape[-1] != n or bv.numel() != n:
            raise RuntimeError(f"TT_FATAL: {op}: bias of shape {list(bv.shape)} must hold one value per output "
                               f"column ({n}), e.g. [{n}] or [1, {n}]")
        out = out.float() + bv.reshape(n)
    out = apply_activation(out.float() if act is not None else out, act)
    if memory_config is not None and memory_config.is_sharded() and not a.is_sharded():
        raise RuntimeError(f"TT_FATAL: {op}: a sharded output ({memory_config.memory_layout.name}) from an "
                           "interleaved input_tensor_a is refused by the real matmul program configs (seen: "
                           "'Shard width 32 must match physical width 768 for height sharded', 'Number of "
                           "shards along width 24 must not exceed number of columns 8'); shard the input first")
    mc = output_config(op, memory_config, a, out.shape, Layout.TILE, default=DRAM_MEMORY_CONFIG)
    result = device_result(op, out, out_dtype, Layout.TILE, a._device, mc)
    for temporary in (intermediate, copy):
        if temporary is not None:
            temporary.deallocate(True)
    if after is None:
        return result
    activated = after(result, memory_config=mc)  # the intermediate result is freed, as real ttnn does
    result.deallocate(True)
    return activated


def matmul(input_tensor_a: Tensor, input_tensor_b: Tensor, *, transpose_a: bool = False, transpose_b: bool = False,
           memory_config=None, dtype=None, program_config=None, activation=None, compute_kernel_config=None,
           core_grid=None) -> Tensor:
    """input_tensor_a @ input_tensor_b with torch.matmul broadcasting (a program config is checked, not needed)."""
    return _matmul_impl("ttnn.matmul", input_tensor_a, input_tensor_b, None, transpose_a, transpose_b,
                        memory_config, dtype, activation, compute_kernel_config, program_config, core_grid)


def linear(input_tensor_a: Tensor, input_tensor_b: Tensor, *, bias=None, transpose_a: bool = False,
           transpose_b: bool = False, memory_config=None, dtype=None, program_config=None, activation=None,
           compute_kernel_config=None, core_grid=None) -> Tensor:
    """input_tensor_a @ input_tensor_b + bias, then the activation ("relu", "gelu", ... or UnaryWithParam)."""
    return _matmul_impl("ttnn.linear", input_tensor_a, input_tensor_b, bias, transpose_a, transpose_b,
                        memory_config, dtype, activation, compute_kernel_config, program_config, core_grid)
