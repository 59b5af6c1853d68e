"""Convolutions on NHWC tensors: conv2d (with weight preparation) and conv_transpose2d.

A compute_config truncates the operands' mantissas as its math fidelity does (sim/_fidelity.py: the input in
SrcB, the weights in SrcA; float32 weights, the default preparation, are left whole); the float32 accumulation
is kept (fp32_dest_acc_en=False is not modelled here).

conv2d takes the input as [N, H, W, C] or flattened [1, 1, N*H*W, C] and returns [1, 1, N*OH*OW, OC]
(TILE, DRAM interleaved unless memory_config says otherwise; from a DRAM input always TILE DRAM
interleaved, as real ttnn's DRAM slicing path does, unless slice_config is Conv2dL1FullSliceConfig: then the
all-in-L1 path honours memory_config, L1 interleaved or sharded, as on the real library).  Host OIHW
weights are "prepared" into a device tensor [1, 1, KH*KW*IC/groups, OC] (TILE, weights_dtype, DRAM)
plus a bias [1, 1, 1, OC]; with return_weights_and_bias they are handed back and passing them on later
calls works, as on the real library; without it they are freed when the call returns.
"""
from __future__ import annotations

import torch.nn.functional as F

from ._activation import UnaryWithParam, apply_activation, parse_activation
from ._fidelity import fidelity_operands, kernel_config
from ._common import device_result, output_config, require_dtype, tensor_arg, values
from ._memconfig import DRAM_MEMORY_CONFIG, CoreRangeSet
from ._nhwc import flat_nhwc, nchw, pair, padding_4
from ._rounding import to_storage
from ._tensor import Tensor
from ._types import BufferType, DataType, Layout, TensorMemoryLayout
from .ops_host import deallocate

_FLOAT = frozenset({DataType.BFLOAT16, DataType.FLOAT32, DataType.BFLOAT8_B})


class Conv2dConfig:
    """conv2d tuning options; the simulator honours weights_dtype, activation, output_layout and
    deallocate_activation and accepts the rest."""

    def __init__(self, *, weights_dtype: DataType | None = None, activation: UnaryWithParam | None = None,
                 deallocate_activation: bool = False, reallocate_halo_output: bool = True,
                 config_tensors_in_dram: bool = False, act_block_h_override: int = 0, act_block_w_div: int = 1,
                 reshard_if_not_optimal: bool = False, override_sharding_config: bool = False,
                 shard_layout: TensorMemoryLayout | None = None, core_grid: CoreRangeSet | None = None,
                 transpose_shards: bool = False, output_layout: Layout = Layout.TILE,
                 enable_act_double_buffer: bool = False, enable_weights_double_buffer: bool = False,
                 full_inner_dim: bool = False, enable_kernel_stride_folding=None, enable_activation_reuse=False,
                 force_split_reader=None, override_output_sharding_config: bool = False):
        if activation is not None and not isinstance(activation, UnaryWithParam):
            raise TypeError("Conv2dConfig: activation must be a ttnn.UnaryWithParam or None (ttnn 0.81.1), "
                            f"got {activation!r}")
        self.weights_dtype, self.activation = weights_dtype, activation
        self.deallocate_activation, self.reallocate_halo_output = deallocate_activation, reallocate_halo_output
        self.config_tensors_in_dram, self.act_block_h_override = config_tensors_in_dram, act_block_h_override
        self.act_block_w_div, self.reshard_if_not_optimal = act_block_w_div, reshard_if_not_optimal
        self.override_sharding_config, self.shard_layout = override_sharding_config, shard_layout
        self.core_grid, self.transpose_shards, self.output_layout = core_grid, transpose_shards, output_layout
        self.enable_act_double_buffer = enable_act_double_buffer
        self.enable_weights_double_buffer = enable_weights_double_buffer
        self.full_inner_dim, self.enable_kernel_stride_folding = full_inner_dim, enable_kernel_stride_folding
        self.enable_activation_reuse, self.force_split_reader = enable_activation_reuse, force_split_reader
        self.override_output_sharding_config = override_output_sharding_config


class Op2DSliceConfig:
    """How conv2d slices a DRAM input; the simulator tells only L1_FULL (no slicing) from the DRAM slicings."""

    def __init__(self, *, slice_type: str, num_slices: int = 0):
        self.slice_type, self.num_slices = slice_type, num_slices

    def __repr__(self) -> str:
        return f"Op2DSliceConfig(slice_type=SliceType::{self.slice_type},num_slices={self.num_slices})"


L1_FULL = "L1_FULL"
Conv2dL1FullSliceConfig = Op2DSliceConfig(slice_type=L1_FULL)


def _prepared_weight(op, weight, device, out_channels, in_per_group, kh, kw, wdtype):
    """(OIHW float32 weights, prepared device tensor or None) from a host weight or a prepared one."""
    if weight._device is not None:
        expect = [1, 1, kh * kw * in_per_group, out_channels]
        if list(weight._data.shape) != expect:
            raise RuntimeError(f"TT_FATAL: {op}: a device weight_tensor must be the prepared weight returned by "
                               f"an earlier ttnn.conv2d with the same arguments (shape {expect}), got "
                               f"{list(weight._data.shape)}")
        oihw = values(weight).reshape(kh, kw, in_per_group, out_channels).permute(3, 2, 0, 1)
        return oihw, weight
    if list(weight._data.shape) != [out_channels, in_per_group, kh, kw]:
        raise RuntimeError(f"TT_FATAL: {op}: weight_tensor shape {list(weight._data.shape)} must be "
                           f"[out_channels, in_channels/groups, kH, kW] = {[out_channels, in_per_group, kh, kw]}")
    prepared_values = values(weight).permute(2, 3, 1, 0).reshape(1, 1, kh * kw * in_per_group, out_channels)
    prepared = device_result(op, prepared_values, wdtype, Layout.TILE, device, DRAM_MEMORY_CONFIG)
    oihw = values(prepared).reshape(kh, kw, in_per_group, out_channels).permute(3, 2, 0, 1)
    return oihw, prepared


def _prepared_bias(op, bias, device, out_channels, wdtype):
    if bias is None:
        return None, None
    tensor_arg(op, "bias_tensor", bias, on_device=False)
    if bias._data.numel() != out_channels:
        raise RuntimeError(f"TT_FATAL: {op}: bias_tensor of shape {list(bias._data.shape)} must be "
                           f"[1, 1, 1, {out_channels}]")
    if bias._device is not None:
        return values(bias).reshape(out_channels), bias
    prepared = device_result(op, values(bias).reshape(1, 1, 1, out_channels), wdtype, Layout.TILE, device,
                             DRAM_MEMORY_CONFIG)
    return values(prepared).reshape(out_channels), prepared


def _free_temporaries(*tensors) -> None:
    """Free weights prepared during the call and not handed back: on the real library they are C++
    temporaries whose buffers go when the call returns (docs/ttnn-facts.md section 12: only program-cache
    config tensors stay allocated after a forward pass)."""
    for tensor in tensors:
        if tensor is not None:
            deallocate(tensor, True)


def conv2d(*, input_tensor: Tensor, weight_tensor: Tensor, device, in_channels: int, out_channels: int,
           batch_size: int, input_height: int, input_width: int, kernel_size, stride=(1, 1), padding=(0, 0),
           dilation=(1, 1), groups: int = 1, dtype=None, bias_tensor=None, conv_config=None, compute_config=None,
           memory_config=None, slice_config=None, return_output_dim: bool = False,
           return_weights_and_bias: bool = False):
    """2-D convolution of an NHWC input; see the module docstring for shapes and the return tuple."""
    op = "ttnn.conv2d"
    tensor_arg(op, "input_tensor", input_tensor, on_device=False)
    tensor_arg(op, "weight_tensor", weight_tensor, on_device=False)
    require_dtype(op, "input_tensor", input_tensor, _FLOAT)
    if device is None or not getattr(device, "is_open", False):
        raise RuntimeError(f"TT_FATAL: {op}: an open device is required")
    config = conv_config or Conv2dConfig()
    (kh, kw), (sh, sw), (dh, dw), (top, bottom, left, right) = _conv_geometry(
        op, kernel_size, stride, dilation, padding, groups, in_channels, out_channels)
    x = nchw(op, input_tensor, batch_size, input_height, input_width, in_channels)
    wdtype = config.weights_dtype or weight_tensor._dtype  # real: a float32 host weight is prepared as FLOAT32
    weight, prepared_w = _prepared_weight(op, weight_tensor, device, out_channels, in_channels // groups, kh, kw,
                                          wdtype)
    bias, prepared_b = _prepared_bias(op, bias_tensor, device, out_channels, wdtype)
    x = F.pad(x, (left, right, top, bottom))
    x, weight = fidelity_operands(kernel_config(op, "compute_config", compute_config), x, weight,
                                  input_tensor._dtype is DataType.FLOAT32, wdtype is DataType.FLOAT32)
    out = F.conv2d(x, weight, bias, (sh, sw), 0, (dh, dw), groups)
    out = apply_activation(out, parse_activation(op, config.activation, allow_string=False))
    oh, ow = out.shape[2], out.shape[3]
    layout = config.output_layout or Layout.TILE
    if _in_dram(input_tensor) and getattr(slice_config, "slice_type", None) != L1_FULL:
        # real ttnn takes its DRAM slicing path: TILE DRAM interleaved, whatever memory_config / output_layout
        # say (docs/ttnn-facts.md section 4; Conv2dL1FullSliceConfig lifts this, probes/results/conv_l1_out.txt)
        memory_config, layout = DRAM_MEMORY_CONFIG, Layout.TILE
    mc = output_config(op, memory_config, None, (1, 1, batch_size * oh * ow, out_channels), layout,
                       default=DRAM_MEMORY_CONFIG)
    result = device_result(op, flat_nhwc(out), dtype or input_tensor._dtype, layout, device, mc)
    if config.deallocate_activation and input_tensor._device is not None:
        deallocate(input_tensor, True)
    if not return_weights_and_bias:
        _free_temporaries(prepared_w if prepared_w is not weight_tensor else None,
                          prepared_b if prepared_b is not bias_tensor else None)
    if return_output_dim and return_weights_and_bias:
        return result, (oh, ow), (prepared_w, prepared_b)
    if return_output_dim:
        return result, (oh, ow)
    if return_weights_and_bias:
        return result, (prepared_w, prepared_b)
    return result


def _conv_geometry(op: str, kernel_size, stride, dilation, padding, groups: int, in_channels: int,
                   out_channels: int):
    """(kernel, stride, dilation) pairs and (top, bottom, left, right) padding, with the groups check."""
    if groups < 1 or in_channels % groups or out_channels % groups:
        raise RuntimeError(f"TT_FATAL: {op}: groups={groups} must divide in_channels={in_channels} and "
                           f"out_channels={out_channels}")
    return (pair(op, "kernel_size", kernel_size), pair(op, "stride", stride), pair(op, "dilation", dilation),
            padding_4(op, padding))


def _in_dram(tensor: Tensor) -> bool:
    """The tensor is on a device, in a DRAM buffer."""
    return tensor._device is not None and tensor.memory_config().buffer_type == BufferType.DRAM



def conv_transpose2d(*, input_tensor: Tensor, weight_tensor: Tensor, device, in_channels: int, out_channels: int,
                     batch_size: int, input_height: int, input_width: int, kernel_size, stride=(1, 1),
                     padding=(0, 0), output_padding=(0, 0), dilation=(1, 1), groups: int = 1, dtype=None,
                     bias_tensor=None, conv_config=None, compute_config=None, memory_config=None,
                     dram_slice_config=None, mirror_kernel: bool = False, return_output_dim: bool = False,
                     return_weights_and_bias: bool = False):
    """2-D transposed convolution of an NHWC input with host weights [IC, OC/groups, KH, KW] (API docs):
    H_out = (H - 1) * stride - (top + bottom) + dilation * (k - 1) + output_padding + 1.  Returns
    [1, 1, N*OH*OW, OC] TILE in DRAM (like conv2d from a DRAM input)."""
    op = "ttnn.conv_transpose2d"
    tensor_arg(op, "input_tensor", input_tensor, on_device=False)
    tensor_arg(op, "weight_tensor", weight_tensor, on_device=False)
    require_dtype(op, "input_tensor", input_tensor, _FLOAT)
    if device is None or not getattr(device, "is_open", False):
        raise RuntimeError(f"TT_FATAL: {op}: an open device is required")
    if weight_tensor._device is not None or (bias_tensor is not None and bias_tensor._device is not None):
        raise NotImplementedError(f"{op}: the simulator models host (unprepared) weights and bias only")
    if return_weights_and_bias:
        raise NotImplementedError(f"{op}: the simulator does not model returning prepared weights")
    config = conv_config or Conv2dConfig()
    (kh, kw), (sh, sw), (dh, dw), (top, bottom, left, right) = _conv_geometry(
        op, kernel_size, stride, dilation, padding, groups, in_channels, out_channels)
    oph, opw = pair(op, "output_padding", output_padding)
    expect = [in_channels, out_channels // groups, kh, kw]
    if list(weight_tensor._data.shape) != expect:
        raise RuntimeError(f"TT_FATAL: {op}: weight_tensor shape {list(weight_tensor._data.shape)} must be "
                           f"[in_channels, out_channels/groups, kH, kW] = {expect}")
    wdtype = config.weights_dtype or weight_tensor._dtype
    weight = to_storage(values(weight_tensor), wdtype).float()
    x = nchw(op, input_tensor, batch_size, input_height, input_width, in_channels)
    x, weight = fidelity_operands(kernel_config(op, "compute_config", compute_config), x, weight,
                                  input_tensor._dtype is DataType.FLOAT32, wdtype is DataType.FLOAT32)
    full = F.conv_transpose2d(x, weight, None, (sh, sw), 0, 0, groups, (dh, dw))
    full = F.pad(full, (0, opw, 0, oph))  # output padding adds rows/columns at the end
    out = full[:, :, top:full.shape[2] - bottom, left:full.shape[3] - right]
    if bias_tensor is not None:
        if bias_tensor._data.numel() != out_channels:
            raise RuntimeError(f"TT_FATAL: {op}: bias_tensor of shape {list(bias_tensor._data.shape)} must hold "
                               f"{out_channels} values")
        out = out + to_storage(values(bias_tensor), wdtype).float().reshape(1, out_channels, 1, 1)
    out = apply_activation(out, parse_activation(op, config.activation, allow_string=False))
    oh, ow = out.shape[2], out.shape[3]
    layout = config.output_layout or Layout.TILE
    mc = output_config(op, memory_config, None, (1, 1, batch_size * oh * ow, out_channels), layout,
                       default=DRAM_MEMORY_CONFIG)
    result = device_result(op, flat_nhwc(out.contiguous()), dtype or input_tensor._dtype, layout, device, mc)
    return (result, (oh, ow)) if return_output_dim else result
