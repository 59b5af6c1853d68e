"""A CPU simulator of the ttnn 0.81.1 API subset that onnx2ttnn's generated programs call.

This package *is* the fake `ttnn` module: bind it with `onnx2ttnn.sim.runtime.install()` (or
`sys.modules["ttnn"] = onnx2ttnn.sim`) and a generated program runs unchanged.  Every public name here
exists in the real library with the same parameter names (tests/sim/test_sim_api_manifest.py checks it
against the API manifest).  Simulator-only controls live in `onnx2ttnn.sim.runtime`.

What is modelled: logical/padded shapes, per-dtype rounding (bfloat16, float32, bfloat8_b and bfloat4_b block floats,
integers), a device built from `onnx2ttnn.ir.device.DeviceSpec` with L1/DRAM bank allocators and the real
out-of-memory errors, views that share buffers, deallocation and use-after-free errors, memory-config and
shard validation, each op's layout/dtype requirements, trace capture and replay with their rules and two command
queues' event ordering (ops_trace.py, ops_queues.py), meshes of chips (sim/_mesh.py: per-chip allocators, mesh
mappers and composers; sim/_ccl.py: the fabric config and the CCL ops' numerics), and what a compute kernel config's math fidelity and
destination accumulation do to a matmul or conv (sim/_fidelity.py).  What is not: kernels' exact arithmetic
(accumulation order, approximations), except the SFPU arithmetic of sigmoid and exp in their accuracy variants
(_sfpu.py), circular-buffer memory of ops, program caches.
"""
from ._activation import UnaryOpType, UnaryWithParam
from ._device import Device
from ._fidelity import MathFidelity, ThrottleLevel, WormholeComputeKernelConfig
from ._memconfig import (DRAM_MEMORY_CONFIG, L1_BLOCK_SHARDED_MEMORY_CONFIG, L1_HEIGHT_SHARDED_MEMORY_CONFIG,
                         L1_MEMORY_CONFIG, L1_WIDTH_SHARDED_MEMORY_CONFIG, CoreCoord, CoreGrid, CoreRange,
                         CoreRangeSet, MemoryConfig, ShardSpec, create_sharded_memory_config)
from ._program_config import (MatmulMultiCoreReuseMultiCast1DProgramConfig, MatmulMultiCoreReuseProgramConfig,
                              SDPAProgramConfig)
from ._tensor import Tensor
from ._types import (BufferType, DataType, GeluVariant, Layout, Shape, ShardOrientation, ShardStrategy, SigmoidMode,
                     StorageType, TensorMemoryLayout)
from .ops_binary import (add, divide, eq, fmod, ge, gt, le, logical_and, logical_or, logical_xor, lt, maximum,
                         minimum, multiply, ne, pow, remainder, subtract, where)
from .ops_conv import Conv2dConfig, Conv2dL1FullSliceConfig, Op2DSliceConfig, conv2d, conv_transpose2d
from .ops_data_movement import (concat, embedding, expand, pad, permute, repeat, reshape, slice, split, squeeze,
                                transpose, unsqueeze, view)
from .ops_device import (CreateDevice, close_device, element_size, get_memory_view, open_device, synchronize_device,
                         tile_size)
from .ops_eltwise import (abs, acos, acosh, asin, asinh, atan, atanh, ceil, celu, clamp, clip, cos, cosh, elu, erf,
                          exp, exp2, expm1, floor, gelu, hardshrink, hardsigmoid, hardswish, hardtanh, isfinite,
                          isinf, isnan, isneginf, isposinf, leaky_relu, log, log10, log1p, log2, logical_not, mish,
                          neg, reciprocal, relu, relu6, round, rsqrt, selu, sigmoid, sigmoid_accurate, sign, silu,
                          sin, sinh, softplus, softshrink, softsign, sqrt, square, tan, tanh, tanhshrink, threshold,
                          trunc)
from .ops_host import (as_tensor, clone, deallocate, from_device, from_torch, to_device, to_layout, to_memory_config,
                       to_torch, typecast)
from .ops_matmul import linear, matmul
from .ops_norm import argmax, cumsum, layer_norm, max, mean, min, prod, rms_norm, softmax, sum, topk
from .ops_pool import avg_pool2d, global_avg_pool2d, max_pool2d, upsample
from .ops_queues import (MeshEvent, QueueId, copy_host_to_device_tensor, event_synchronize, is_trace_capture_active,
                         record_event, wait_for_event)
from .ops_trace import MeshTraceId, begin_trace_capture, end_trace_capture, execute_trace, release_trace

from ._mesh import (CppMeshToTensor, CppTensorToMesh, MeshDevice, MeshShape, close_mesh_device,  # noqa: E402
                    concat_mesh_to_tensor_composer, get_device_tensors, open_mesh_device,
                    replicate_tensor_to_mesh_mapper, shard_tensor_to_mesh_mapper)
from ._mesh import lift as _lift  # noqa: E402
from ._ccl import (FabricConfig, MeshComposerConfig, MeshMapperConfig, PlacementReplicate,  # noqa: E402
                   PlacementShard, all_gather, all_reduce, create_mesh_composer, create_mesh_mapper, reduce_scatter,
                   set_fabric_config)


def _lift_ops(names: dict) -> None:
    """Every op runs once per chip when given mesh tensors or a mesh device (sim/_mesh.py)."""
    import inspect

    for name, value in list(names.items()):
        if (inspect.isfunction(value) and not name.startswith("_") and name not in ("from_torch", "to_torch")
                and value.__module__.startswith((__name__ + ".ops",) + tuple(f"{__name__}.{name}"
                                                                              for name in _OP_SUBMODULES))):
            names[name] = _lift(value)


from . import transformer  # noqa: E402  (ttnn.transformer: the attention ops)

# ttnn's op submodules (ttnn.<name>.<op>): lifted onto meshes and recorded by trace captures like ttnn's own ops
_OP_SUBMODULES = {"transformer": transformer}

_lift_ops(globals())
for _submodule in _OP_SUBMODULES.values():
    _lift_ops(vars(_submodule))

TILE_LAYOUT = Layout.TILE
ROW_MAJOR_LAYOUT = Layout.ROW_MAJOR
TILE_SIZE = 32
DEVICE_STORAGE_TYPE = StorageType.DEVICE

bfloat16 = DataType.BFLOAT16
bfloat8_b = DataType.BFLOAT8_B
bfloat4_b = DataType.BFLOAT4_B
float32 = DataType.FLOAT32
uint32 = DataType.UINT32
int32 = DataType.INT32
uint16 = DataType.UINT16
uint8 = DataType.UINT8
