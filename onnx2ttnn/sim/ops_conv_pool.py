"""CNN ops on NHWC tensors: conv2d (with weight preparation), conv_transpose2d, max_pool2d, avg_pool2d,
global_avg_pool2d.

conv2d takes the input as [N, H, W, C] or flattened [1, 1, N*H*W, C] and returns [1, 1, N*OH*OW, OC]
(TILE, DRAM interleaved unless memory_config says otherwise; from a DRAM input always TILE DRAM
interleaved, as real ttnn's DRAM slicing path does, unless slice_config is Conv2dL1FullSliceConfig: then the
all-in-L1 path honours memory_config, L1 interleaved or sharded, as on the real library).  Host OIHW
weights are "prepared" into a device tensor [1, 1, KH*KW*IC/groups, OC] (TILE, weights_dtype, DRAM)
plus a bias [1, 1, 1, OC]; with return_weights_and_bias they are handed back and passing them on later
calls works, as on the real library; without it they are freed when the call returns.  max/avg_pool2d take BFLOAT16 input only (the
real error for float32) and return [1, 1, N*OH*OW, C]; with no memory_config they pick ROW_MAJOR L1
height-sharded outputs like the real ops do.  global_avg_pool2d always returns BFLOAT16.
"""
from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from ._activation import UnaryWithParam, apply_activation, parse_activation
from ._common import device_result, output_config, require_dtype, tensor_arg, values
from ._rounding import to_storage
from ._memconfig import DRAM_MEMORY_CONFIG, CoreCoord, CoreRange, CoreRangeSet, MemoryConfig, ShardSpec
from ._tensor import Tensor
from ._types import BufferType, DataType, Layout, ShardOrientation, TensorMemoryLayout, tile_pad
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


def _pair(op: str, name: str, v) -> tuple:
    v = [int(x) for x in (v if isinstance(v, (list, tuple)) else (v, v))]
    if len(v) != 2:
        raise RuntimeError(f"TT_FATAL: {op}: {name} must have 2 values, got {v}")
    return tuple(v)


def _padding(op: str, padding) -> tuple:
    """(top, bottom, left, right) from 2 (h, w) or 4 values."""
    p = [int(x) for x in (padding if isinstance(padding, (list, tuple)) else (padding, padding))]
    if len(p) == 2:
        return p[0], p[0], p[1], p[1]
    if len(p) == 4:
        return tuple(p)
    raise RuntimeError(f"TT_FATAL: {op}: padding must have 2 (h, w) or 4 (top, bottom, left, right) values, got {p}")


def _nchw(op: str, t: Tensor, n: int, h: int, w: int, c: int) -> torch.Tensor:
    """The NHWC input ([N,H,W,C] or [1,1,N*H*W,C]) as a float NCHW torch tensor."""
    shape = list(t._data.shape)
    if shape[-1] != c or t._data.numel() != n * h * w * c:
        raise RuntimeError(f"TT_FATAL: {op}: input of shape {shape} does not match batch_size={n}, "
                           f"height={h}, width={w}, channels={c} (expected [N,H,W,C] or [1,1,N*H*W,C])")
    return values(t).reshape(n, h, w, c).permute(0, 3, 1, 2)


def _flat_nhwc(out: torch.Tensor) -> torch.Tensor:
    n, c, oh, ow = out.shape
    return out.permute(0, 2, 3, 1).reshape(1, 1, n * oh * ow, c)


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
    x = _nchw(op, input_tensor, batch_size, input_height, input_width, in_channels)
    wdtype = config.weights_dtype or weight_tensor._dtype  # real: a float32 host weight is prepared as FLOAT32
    weight, prepared_w = _prepared_weight(op, weight_tensor, device, out_channels, in_channels // groups, kh, kw,
                                          wdtype)
    bias, prepared_b = _prepared_bias(op, bias_tensor, device, out_channels, wdtype)
    x = F.pad(x, (left, right, top, bottom))
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
    result = device_result(op, _flat_nhwc(out), dtype or input_tensor._dtype, layout, device, mc)
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
    return (_pair(op, "kernel_size", kernel_size), _pair(op, "stride", stride), _pair(op, "dilation", dilation),
            _padding(op, padding))


def _in_dram(tensor: Tensor) -> bool:
    """The tensor is on a device, in a DRAM buffer."""
    return tensor._device is not None and tensor.memory_config().buffer_type == BufferType.DRAM


def _pool_output_config(op: str, memory_config, device, rows: int, channels: int, layout: Layout):
    """The given memory config, or the real pools' default: L1 height-sharded over as many cores as needed."""
    if memory_config is not None:
        return output_config(op, memory_config, None, (1, 1, rows, channels), layout)
    gx, gy = device.spec.grid_x, device.spec.grid_y
    ncores = max(1, min(gx * gy, math.ceil(rows / 32)))
    shard_h = tile_pad(math.ceil(rows / ncores))
    ncores = math.ceil(rows / shard_h)
    full_rows, rest = divmod(ncores, gx)
    ranges = set()
    if full_rows:
        ranges.add(CoreRange(CoreCoord(0, 0), CoreCoord(gx - 1, full_rows - 1)))
    if rest:
        ranges.add(CoreRange(CoreCoord(0, full_rows), CoreCoord(rest - 1, full_rows)))
    width = tile_pad(channels) if layout is Layout.TILE else channels
    spec = ShardSpec(CoreRangeSet(ranges), (shard_h, width), ShardOrientation.ROW_MAJOR)
    return MemoryConfig(TensorMemoryLayout.HEIGHT_SHARDED, BufferType.L1, spec)


def _pool_impl(op, kind, input_tensor, batch_size, input_h, input_w, channels, kernel_size, stride, padding,
               dilation, ceil_mode, count_include_pad, divisor_override, memory_config, dtype, output_layout):
    tensor_arg(op, "input_tensor", input_tensor)
    if input_tensor._dtype is not DataType.BFLOAT16:  # real: "Only BFLOAT16 supported for now"
        raise RuntimeError(f"TT_FATAL: {op}: Only BFLOAT16 supported for now (input is "
                           f"DataType::{input_tensor._dtype.name})")
    kh, kw = _pair(op, "kernel_size", kernel_size)
    sh, sw = _pair(op, "stride", stride)
    dh, dw = _pair(op, "dilation", dilation)
    top, bottom, left, right = _padding(op, padding)
    if (kh - 1) * dh + 1 > input_h + top + bottom or (kw - 1) * dw + 1 > input_w + left + right:
        # the real library does not refuse this: the process dies (SIGSEGV) inside the call
        raise RuntimeError(f"{op}: a {kh}x{kw} window (dilation {dh}x{dw}) larger than the padded "
                           f"{input_h + top + bottom}x{input_w + left + right} input crashes real ttnn 0.81.1")
    x = _nchw(op, input_tensor, batch_size, input_h, input_w, channels)
    if kind == "max":
        if top == bottom and left == right and top <= kh // 2 and left <= kw // 2:
            out = F.max_pool2d(x, (kh, kw), (sh, sw), (top, left), (dh, dw), ceil_mode)
        else:
            out = F.max_pool2d(F.pad(x, (left, right, top, bottom), value=-math.inf), (kh, kw), (sh, sw), 0,
                               (dh, dw), ceil_mode)
    else:
        if (dh, dw) != (1, 1):
            raise RuntimeError(f"TT_FATAL: {op}: dilation is not supported for average pooling")
        if top == bottom and left == right and top <= kh // 2 and left <= kw // 2:
            out = F.avg_pool2d(x, (kh, kw), (sh, sw), (top, left), ceil_mode, count_include_pad, divisor_override)
        else:
            padded = F.pad(x, (left, right, top, bottom))
            out = F.avg_pool2d(padded, (kh, kw), (sh, sw), 0, ceil_mode, True, divisor_override)
            if not count_include_pad and divisor_override is None:
                ones = F.pad(torch.ones_like(x[:1, :1]), (left, right, top, bottom))
                out = out * (kh * kw) / (F.avg_pool2d(ones, (kh, kw), (sh, sw), 0, ceil_mode) * (kh * kw))
    rows = out.shape[0] * out.shape[2] * out.shape[3]
    layout = output_layout or Layout.ROW_MAJOR
    mc = _pool_output_config(op, memory_config, input_tensor._device, rows, channels, layout)
    return device_result(op, _flat_nhwc(out), dtype or DataType.BFLOAT16, layout, input_tensor._device, mc)


def max_pool2d(input_tensor: Tensor, batch_size: int, input_h: int, input_w: int, channels: int, kernel_size,
               stride, padding, dilation, ceil_mode: bool = False, *, memory_config=None, applied_shard_scheme=None,
               deallocate_input: bool = False, reallocate_halo_output: bool = True, dtype=DataType.BFLOAT16,
               output_layout=Layout.ROW_MAJOR) -> Tensor:
    """Max pooling of an NHWC input -> [1, 1, N*OH*OW, C]."""
    out = _pool_impl("ttnn.max_pool2d", "max", input_tensor, batch_size, input_h, input_w, channels, kernel_size,
                     stride, padding, dilation, ceil_mode, True, None, memory_config, dtype, output_layout)
    if deallocate_input:
        deallocate(input_tensor, True)
    return out


def avg_pool2d(input_tensor: Tensor, batch_size: int, input_h: int, input_w: int, channels: int, kernel_size,
               stride, padding, ceil_mode: bool = False, count_include_pad: bool = True, divisor_override=None, *,
               memory_config=None, applied_shard_scheme=None, compute_kernel_config=None,
               deallocate_input: bool = False, reallocate_halo_output: bool = True, dtype=DataType.BFLOAT16,
               output_layout=Layout.ROW_MAJOR) -> Tensor:
    """Average pooling of an NHWC input -> [1, 1, N*OH*OW, C]."""
    out = _pool_impl("ttnn.avg_pool2d", "avg", input_tensor, batch_size, input_h, input_w, channels, kernel_size,
                     stride, padding, (1, 1), ceil_mode, count_include_pad, divisor_override, memory_config, dtype,
                     output_layout)
    if deallocate_input:
        deallocate(input_tensor, True)
    return out


def global_avg_pool2d(input_tensor, *, memory_config=None, dtype=None) -> Tensor:
    """Mean over H and W of [N, H, W, C] (or [H, W, C], [H, W]) -> [N, 1, 1, C] TILE bfloat16."""
    op = "ttnn.global_avg_pool2d"
    tensor_arg(op, "input_tensor", input_tensor)
    require_dtype(op, "input_tensor", input_tensor, _FLOAT)
    x = values(input_tensor)
    if x.dim() == 2:
        x = x.reshape(1, *x.shape, 1)
    elif x.dim() == 3:
        x = x.unsqueeze(0)
    elif x.dim() != 4:
        raise RuntimeError(f"TT_FATAL: {op}: expected a rank 2-4 NHWC tensor, got {list(x.shape)}")
    out = x.mean(dim=(1, 2), keepdim=True)
    mc = output_config(op, memory_config, input_tensor, out.shape, Layout.TILE)
    # real: dtype=ttnn.float32 is accepted but the output stays BFLOAT16 (docs/ttnn-facts.md section 5)
    return device_result(op, out, DataType.BFLOAT16, Layout.TILE, input_tensor._device, mc)


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
    oph, opw = _pair(op, "output_padding", output_padding)
    expect = [in_channels, out_channels // groups, kh, kw]
    if list(weight_tensor._data.shape) != expect:
        raise RuntimeError(f"TT_FATAL: {op}: weight_tensor shape {list(weight_tensor._data.shape)} must be "
                           f"[in_channels, out_channels/groups, kH, kW] = {expect}")
    wdtype = config.weights_dtype or weight_tensor._dtype
    weight = to_storage(values(weight_tensor), wdtype).float()
    x = _nchw(op, input_tensor, batch_size, input_height, input_width, in_channels)
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
    result = device_result(op, _flat_nhwc(out.contiguous()), dtype or input_tensor._dtype, layout, device, mc)
    return (result, (oh, ow)) if return_output_dim else result


# --- resize block ------------------------------------------------------------------------------------------------

def _scale_pair(op: str, scale_factor) -> tuple[float, float]:
    values_ = list(scale_factor) if isinstance(scale_factor, (list, tuple)) else [scale_factor, scale_factor]
    if len(values_) != 2 or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values_):
        raise TypeError(f"{op}: scale_factor must be an int, a float or a pair of them, got {scale_factor!r}")
    return float(values_[0]), float(values_[1])


def upsample(input_tensor: Tensor, scale_factor, *, mode: str = "nearest", memory_config=None,
             compute_kernel_config=None) -> Tensor:
    """Nearest upsampling of [N, H, W, C] by integer factors (each row and column repeated), ROW_MAJOR result of
    the input's dtype (BFLOAT8_B gives BFLOAT16).  Real constraints: factors > 0; TILE input tile-aligned (W and C
    multiples of 32) and interleaved; ROW_MAJOR input interleaved, height- or block-sharded.  Not modelled (the
    simulator refuses them): non-integer factors (the real float path) and mode 'bilinear'."""
    op = "ttnn.upsample"
    tensor_arg(op, "input_tensor", input_tensor)
    sh, sw = _scale_pair(op, scale_factor)
    if sh <= 0 or sw <= 0:
        raise RuntimeError(f"TT_FATAL: {op}: scale_factor_h must be positive, got {sh}" if sh <= 0 else
                           f"TT_FATAL: {op}: scale_factor_w must be positive, got {sw}")
    if mode not in ("nearest", "bilinear"):
        raise RuntimeError(f"TT_FATAL: {op}: mode must be 'nearest' or 'bilinear'")
    if mode == "bilinear" or sh != int(sh) or sw != int(sw):
        raise NotImplementedError(f"{op}: the simulator models integer nearest upsampling only "
                                  f"(mode={mode!r}, scale_factor={scale_factor!r})")
    x = input_tensor._data
    if x.dim() != 4:
        raise RuntimeError(f"TT_FATAL: {op}: expected a 4-D [N, H, W, C] input, got shape {list(x.shape)}")
    layout = input_tensor._layout
    mem_layout = input_tensor._mem.memory_layout
    if layout is Layout.TILE:
        if x.shape[2] % 32 or x.shape[3] % 32:
            raise RuntimeError(f"TT_FATAL: {op}: Tiled input must be tile-aligned (no padding difference), got "
                               f"shape {list(x.shape)}")
        ok = mem_layout is TensorMemoryLayout.INTERLEAVED
    else:
        ok = mem_layout in (TensorMemoryLayout.INTERLEAVED, TensorMemoryLayout.HEIGHT_SHARDED,
                            TensorMemoryLayout.BLOCK_SHARDED)
    if not ok:
        raise RuntimeError(f"TT_FATAL: {op}: Unsupported upsample configuration: integer scales + nearest need "
                           f"ROW_MAJOR (INTERLEAVED|HEIGHT_SHARDED|BLOCK_SHARDED) or TILE INTERLEAVED input, got "
                           f"{layout.name} {mem_layout.name}")
    out = x.repeat_interleave(int(sh), dim=1).repeat_interleave(int(sw), dim=2)
    dtype = DataType.BFLOAT16 if input_tensor._dtype is DataType.BFLOAT8_B else input_tensor._dtype
    mc = output_config(op, memory_config, input_tensor, out.shape, Layout.ROW_MAJOR)
    return device_result(op, _compute_values(out), dtype, Layout.ROW_MAJOR, input_tensor._device, mc)


def _compute_values(data: torch.Tensor) -> torch.Tensor:
    """Stored values as compute values (float32 for floats, int64 for integers)."""
    return data.float() if data.is_floating_point() else data.long()
