"""Compact downloads (passes/decompose_layouts.py compact_download): a TILE tensor whose tile padding at least
doubles its bytes is converted to ROW_MAJOR on the device, in L1, before `to_torch` reads it back.  Each step
converts a planner-shaped tensor (ResNet-50's and MobileNetV2's outputs, an integer one) from an L1 TILE
buffer and reads the ROW_MAJOR result back; the bytes per L1 bank the ROW_MAJOR copy takes are printed next
to the TILE ones.  Prints one line per step."""
from _common import *

d = open_dev()
for shape, dtype, torch_dtype in (((1, 2048, 7, 7), ttnn.bfloat16, torch.float32),
                                  ((1, 2048, 1, 1), ttnn.bfloat16, torch.float32),
                                  ((1, 1280, 7, 7), ttnn.bfloat16, torch.float32),
                                  ((1, 1, 49, 2048), ttnn.float32, torch.float32),
                                  ((1, 1024, 1, 1), ttnn.uint32, torch.int32)):
    name = str(dtype).split(".")[-1]
    before = per_bank(d, ttnn.BufferType.L1)
    x = step(f"{shape} {name} TILE to L1", lambda: dev(d, shape, dtype=dtype, mc=L1, torch_dtype=torch_dtype))
    tiled = per_bank(d, ttnn.BufferType.L1) - before
    y = step(f"to_layout({shape} TILE, ROW_MAJOR_LAYOUT, memory_config=L1)",
             lambda: ttnn.to_layout(x, layout=RM, memory_config=L1))
    rows = per_bank(d, ttnn.BufferType.L1) - before - tiled
    print(f"     L1 per bank: TILE {tiled} B, ROW_MAJOR {rows} B", flush=True)
    step(f"to_torch of the ROW_MAJOR {shape}", lambda: (tuple(ttnn.to_torch(y).shape), str(ttnn.to_torch(y).dtype)))
    for t in (x, y):
        if t is not None:
            ttnn.deallocate(t)
done(d)
