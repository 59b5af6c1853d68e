"""ttnn.transformer: the attention ops the attention fusion emits (split_query_key_value_and_split_heads,
scaled_dot_product_attention, attention_softmax, concatenate_heads), with the requirements probed on the real
library (tools/ttnn_mock/probes/probe_attention.py; docs/ttnn-facts.md §21).

Numerics: the splits and concatenation move values exactly; scaled_dot_product_attention and attention_softmax
compute in float32 and round their result once (the kernels' accumulation order, exp approximation and
intermediate formats are not modelled), so a row whose mask blocks every key is NaN, as in ONNX.  SDPA's
compute_kernel_config acts on its two matmuls as on ttnn.matmul's (sim/_fidelity.py: q and the probabilities in
SrcB, k and v in SrcA; a Float16_b destination rounds the sums); without a config it is computed exactly (real
ttnn runs HiFi2 then: docs/ttnn-facts.md §35).  Its SDPAProgramConfig (chunk sizes) is validated and changes no
value.
"""
from __future__ import annotations

import math

import torch

from ._fidelity import bf16_dest, fidelity_operands, kernel_config, matmul_bf16_dest
from ._program_config import check_sdpa_program_config
from ._common import device_result, output_config, require_dtype, require_tile, same_device, tensor_arg, values
from ._tensor import Tensor
from ._types import BufferType, DataType, Layout, TILE

_SDPA_DTYPES = frozenset({DataType.BFLOAT16, DataType.BFLOAT8_B})
_MOVE_DTYPES = frozenset({DataType.BFLOAT16, DataType.FLOAT32, DataType.BFLOAT8_B})


def _head_size_check(op: str, dh: int, message: str) -> None:
    if dh % TILE:
        raise RuntimeError(f"TT_FATAL: {op}: {message} (head size {dh})")


def _result(op: str, data: torch.Tensor, like: Tensor, memory_config) -> Tensor:
    mc = output_config(op, memory_config, like, data.shape, Layout.TILE)
    return device_result(op, data, like._dtype, Layout.TILE, like._device, mc)


def split_query_key_value_and_split_heads(input_tensor: Tensor, kv_input_tensor=None, *, num_heads: int,
                                          num_kv_heads=None, transpose_key: bool = True, memory_config=None,
                                          use_falcon7b_backend: bool = False):
    """[b, s, (n + 2 nkv) * dh] -> q [b, n, s, dh], k [b, nkv, s, dh] ([b, nkv, dh, s] with transpose_key), v."""
    op = "ttnn.transformer.split_query_key_value_and_split_heads"
    tensor_arg(op, "input_tensor", input_tensor)
    if kv_input_tensor is not None or use_falcon7b_backend:
        raise NotImplementedError(f"{op}: kv_input_tensor and the Falcon-7B backend are not simulated")
    if input_tensor._data.dim() != 3:
        raise RuntimeError(f"TT_FATAL: {op}: Invalid input tensor: expected 3 dimensions, but found "
                           f"{input_tensor._data.dim()}")
    require_tile(op, "input_tensor", input_tensor)
    require_dtype(op, "input_tensor", input_tensor, _MOVE_DTYPES)
    nkv = num_heads if num_kv_heads is None else int(num_kv_heads)
    b, s, width = input_tensor._data.shape
    if width % (num_heads + 2 * nkv):
        raise RuntimeError(f"TT_FATAL: {op}: width {width} does not split into {num_heads} + 2 * {nkv} heads")
    dh = width // (num_heads + 2 * nkv)
    _head_size_check(op, dh, "Invalid head size: the head size must be a multiple of the tile width (32)")
    heads = values(input_tensor).reshape(b, s, num_heads + 2 * nkv, dh)
    q = heads[:, :, :num_heads].permute(0, 2, 1, 3)
    k = heads[:, :, num_heads:num_heads + nkv].permute(0, 2, 1, 3)
    v = heads[:, :, num_heads + nkv:].permute(0, 2, 1, 3)
    if transpose_key:
        k = k.transpose(-2, -1)
    return tuple(_result(op, t.contiguous(), input_tensor, memory_config) for t in (q, k, v))


def _attend(scores: torch.Tensor, mask) -> torch.Tensor:
    return torch.softmax(scores if mask is None else scores + mask, dim=-1)


def _product(config, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """x @ y as a matrix kernel under `config` computes it (x in SrcB, y in SrcA)."""
    x, y = fidelity_operands(config, x, y)
    return matmul_bf16_dest(x, y) if bf16_dest(config) else torch.matmul(x, y)


def scaled_dot_product_attention(input_tensor_q: Tensor, input_tensor_k: Tensor, input_tensor_v: Tensor, *,
                                 attn_mask=None, is_causal: bool = True, scale=None, sliding_window_size=None,
                                 memory_config=None, program_config=None, compute_kernel_config=None,
                                 attention_sink=None, cu_window_seqlens=None, windowed_q_token_offset: int = 0,
                                 windowed_q_token_offset_tensor=None, output_concat_heads: bool = False,
                                 attn_mask_block_map=None) -> Tensor:
    """softmax(q @ k^T * scale + mask) @ v per head; k / v heads shared by groups of q heads."""
    op = "ttnn.transformer.scaled_dot_product_attention"
    if any(a is not None for a in (sliding_window_size, attention_sink, cu_window_seqlens,
                                   windowed_q_token_offset_tensor, attn_mask_block_map)) \
            or windowed_q_token_offset or output_concat_heads:
        raise NotImplementedError(f"{op}: windows, sinks and concatenated outputs are not simulated")
    config = kernel_config(op, "compute_kernel_config", compute_kernel_config)
    tensors = (("input_tensor_q", input_tensor_q), ("input_tensor_k", input_tensor_k),
               ("input_tensor_v", input_tensor_v))
    for name, t in tensors:
        tensor_arg(op, name, t)
        require_tile(op, name, t)
        require_dtype(op, name, t, _SDPA_DTYPES)
        if t._data.dim() != 4:
            raise RuntimeError(f"TT_FATAL: {op}: {name} must be [b, heads, s, dh], got {list(t._data.shape)}")
        _head_size_check(op, t._data.shape[-1], "Padding is not supported on the head_dim dimension")
    same_device(op, input_tensor_q, input_tensor_k, input_tensor_v)
    check_sdpa_program_config(op, program_config, input_tensor_q._device)
    q, k, v = (values(t) for _, t in tensors)
    b, n, sq, dh = q.shape
    nkv, sk = k.shape[1], k.shape[2]
    if n % nkv or v.shape[1] != nkv or k.shape[0] != b or v.shape[2] != sk or k.shape[3] != dh:
        raise RuntimeError(f"TT_FATAL: {op}: q {list(q.shape)}, k {list(k.shape)}, v {list(v.shape)} do not fit")
    if is_causal and attn_mask is not None:
        raise RuntimeError(f"TT_FATAL: {op}: is_causal and attn_mask cannot both be present")
    mask = None
    if attn_mask is not None:
        tensor_arg(op, "attn_mask", attn_mask)
        if attn_mask._layout is not Layout.TILE:
            raise RuntimeError(f"TT_FATAL: {op}: When mask is provided to SDPA, it must be tilized")
        require_dtype(op, "attn_mask", attn_mask, _SDPA_DTYPES)
        if attn_mask._mem.buffer_type is not BufferType.DRAM:
            raise RuntimeError(f"TT_FATAL: {op}: When mask is provided to SDPA, it must be in DRAM")
        mask = values(attn_mask)
        if mask.dim() != 4 or mask.shape[2] != sq or mask.shape[3] != sk or mask.shape[0] not in (1, b) \
                or mask.shape[1] not in (1, n):
            raise RuntimeError(f"TT_FATAL: {op}: Mask sequence length must match Q sequence length (mask "
                               f"{list(mask.shape)} for q {list(q.shape)}, k {list(k.shape)})")
    if is_causal:
        mask = torch.full((sq, sk), float("-inf")).triu(1 + sk - sq)
    group = n // nkv
    k, v = k.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1)
    factor = 1.0 / math.sqrt(dh) if scale is None else float(scale)
    out = _product(config, _attend(_product(config, q, k.transpose(-2, -1)) * factor, mask), v)
    return _result(op, out, input_tensor_q, memory_config)


def _attention_softmax(op: str, tensor: Tensor, head_size, attention_mask, causal_mask, memory_config) -> Tensor:
    tensor_arg(op, "tensor", tensor)
    require_tile(op, "tensor", tensor)
    require_dtype(op, "tensor", tensor, _MOVE_DTYPES)
    if causal_mask:
        raise NotImplementedError(f"{op}: causal_mask is not simulated")
    if head_size is not None and attention_mask is None:
        raise RuntimeError(f"TT_FATAL: {op}: Cannot apply divide by sqrt(head_size) using in-place version when "
                           "attention_mask is not set.")
    x = values(tensor)
    if head_size is not None:
        x = x / math.sqrt(head_size)
    mask = None
    if attention_mask is not None:
        tensor_arg(op, "attention_mask", attention_mask)
        require_tile(op, "attention_mask", attention_mask)
        same_device(op, tensor, attention_mask)
        mask = values(attention_mask)
    return _result(op, _attend(x, mask), tensor, memory_config)


def attention_softmax(tensor: Tensor, *, head_size=None, attention_mask=None, program_config=None,
                      causal_mask=None, memory_config=None) -> Tensor:
    """softmax(tensor / sqrt(head_size) + attention_mask) over the last axis, into a new tensor."""
    return _attention_softmax("ttnn.transformer.attention_softmax", tensor, head_size, attention_mask, causal_mask,
                              memory_config)


def concatenate_heads(input_tensor: Tensor, *, memory_config=None) -> Tensor:
    """[b, n, s, dh] -> [b, s, n * dh]."""
    op = "ttnn.transformer.concatenate_heads"
    tensor_arg(op, "input_tensor", input_tensor)
    require_tile(op, "input_tensor", input_tensor)
    if input_tensor._data.dim() != 4:
        raise RuntimeError(f"TT_FATAL: {op}: input must be [b, heads, s, dh], got {list(input_tensor._data.shape)}")
    b, n, s, dh = input_tensor._data.shape
    _head_size_check(op, dh, "Head size must be a multiple of 32")
    out = values(input_tensor).permute(0, 2, 1, 3).reshape(b, s, n * dh)
    return _result(op, out.contiguous(), input_tensor, memory_config)
