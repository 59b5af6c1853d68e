"""Pooling and upsampling on NHWC tensors: max_pool2d, avg_pool2d, global_avg_pool2d, upsample.

max/avg_pool2d take BFLOAT16 input only (the real error for float32) and return [1, 1, N*OH*OW, C]; with no
memory_config they pick ROW_MAJOR L1 height-sharded outputs like the real ops do.  global_avg_pool2d always
returns BFLOAT16.  upsample repeats rows and columns of [N, H, W, C] by integer factors.
"""
from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from ._common import device_result, output_config, require_dtype, tensor_arg, values
from ._memconfig import CoreCoord, CoreRange, CoreRangeSet, MemoryConfig, ShardSpec
from ._nhwc import flat_nhwc, nchw, pair, padding_4
from ._tensor import Tensor
from ._types import BufferType, DataType, Layout, ShardOrientation, TensorMemoryLayout, tile_pad
from .ops_host import deallocate

_FLOAT = frozenset({DataType.BFLOAT16, DataType.FLOAT32, DataType.BFLOAT8_B})


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
    kh, kw = pair(op, "kernel_size", kernel_size)
    sh, sw = pair(op, "stride", stride)
    dh, dw = pair(op, "dilation", dilation)
    top, bottom, left, right = padding_4(op, padding)
    if (kh - 1) * dh + 1 > input_h + top + bottom or (kw - 1) * dw + 1 > input_w + left + right:
        # the real library does not refuse this: the process dies (SIGSEGV) inside the call
        raise RuntimeError(f"{op}: a {kh}x{kw} window (dilation {dh}x{dw}) larger than the padded "
                           f"{input_h + top + bottom}x{input_w + left + right} input crashes real ttnn 0.81.1")
    x = nchw(op, input_tensor, batch_size, input_h, input_w, channels)
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
    return device_result(op, flat_nhwc(out), dtype or DataType.BFLOAT16, layout, input_tensor._device, mc)


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
