"""Q3 + Q5: max_pool2d / avg_pool2d / global_avg_pool2d input forms, layouts, memory configs."""
from _common import *

d = open_dev()


def inp(N, H, W, C, layout, mc, dtype=ttnn.bfloat16, flat=True):
    shape = (1, 1, N * H * W, C) if flat else (N, H, W, C)
    return dev(d, shape, dtype=dtype, layout=layout, mc=mc)


N, H, W = 1, 16, 16
for C in (32, 64, 3, 16):
    for lname, layout in (("RM", RM), ("TILE", TILE)):
        for mname, mc in (("DRAM", DR), ("L1", L1)):
            x = step(f"input C={C} {lname} {mname}", lambda: inp(N, H, W, C, layout, mc))
            if x is None:
                continue
            for omname, omc in (("none", None), ("DRAM", DR), ("L1", L1)):
                kw = {} if omc is None else {"memory_config": omc}
                step(f"max_pool2d k3 s2 p1 C={C} in={lname}/{mname} out_mc={omname}",
                     lambda: ttnn.max_pool2d(x, batch_size=N, input_h=H, input_w=W, channels=C, kernel_size=[3, 3],
                                             stride=[2, 2], padding=[1, 1], dilation=[1, 1], **kw))
                step(f"avg_pool2d k2 s2 p0 C={C} in={lname}/{mname} out_mc={omname}",
                     lambda: ttnn.avg_pool2d(x, batch_size=N, input_h=H, input_w=W, channels=C, kernel_size=[2, 2],
                                             stride=[2, 2], padding=[0, 0], **kw))
            ttnn.deallocate(x)

x = inp(N, H, W, 32, RM, DR)
step("max_pool2d ceil_mode=True (15x15 input k2 s2)", lambda: ttnn.max_pool2d(
    dev(d, (1, 1, 15 * 15, 32), layout=RM), batch_size=1, input_h=15, input_w=15, channels=32, kernel_size=[2, 2],
    stride=[2, 2], padding=[0, 0], dilation=[1, 1], ceil_mode=True))
step("max_pool2d ceil_mode=False (15x15 input k2 s2)", lambda: ttnn.max_pool2d(
    dev(d, (1, 1, 15 * 15, 32), layout=RM), batch_size=1, input_h=15, input_w=15, channels=32, kernel_size=[2, 2],
    stride=[2, 2], padding=[0, 0], dilation=[1, 1], ceil_mode=False))
step("avg_pool2d ceil_mode=True (15x15 k2 s2)", lambda: ttnn.avg_pool2d(
    dev(d, (1, 1, 15 * 15, 32), layout=RM), batch_size=1, input_h=15, input_w=15, channels=32, kernel_size=[2, 2],
    stride=[2, 2], padding=[0, 0], ceil_mode=True))
step("max_pool2d padding as 4 ints [1,1,1,1]", lambda: ttnn.max_pool2d(
    x, batch_size=N, input_h=H, input_w=W, channels=32, kernel_size=[3, 3], stride=[2, 2], padding=[1, 1, 1, 1], dilation=[1, 1]))
step("max_pool2d padding as 4 ints asymmetric [0,1,0,1]", lambda: ttnn.max_pool2d(
    x, batch_size=N, input_h=H, input_w=W, channels=32, kernel_size=[3, 3], stride=[2, 2], padding=[0, 1, 0, 1], dilation=[1, 1]))
step("avg_pool2d padding 4 ints [1,1,1,1] k3 s1", lambda: ttnn.avg_pool2d(
    x, batch_size=N, input_h=H, input_w=W, channels=32, kernel_size=[3, 3], stride=[1, 1], padding=[1, 1, 1, 1]))
step("avg_pool2d count_include_pad=False", lambda: ttnn.avg_pool2d(
    x, batch_size=N, input_h=H, input_w=W, channels=32, kernel_size=[3, 3], stride=[1, 1], padding=[1, 1],
    count_include_pad=False))
step("avg_pool2d divisor_override=4", lambda: ttnn.avg_pool2d(
    x, batch_size=N, input_h=H, input_w=W, channels=32, kernel_size=[3, 3], stride=[1, 1], padding=[1, 1],
    divisor_override=4))
step("max_pool2d on NHWC [1,16,16,32] (not flattened)", lambda: ttnn.max_pool2d(
    inp(N, H, W, 32, RM, DR, flat=False), batch_size=N, input_h=H, input_w=W, channels=32, kernel_size=[2, 2],
    stride=[2, 2], padding=[0, 0], dilation=[1, 1]))
step("max_pool2d batch 2 [1,1,2*16*16,32]", lambda: ttnn.max_pool2d(
    inp(2, H, W, 32, RM, DR), batch_size=2, input_h=H, input_w=W, channels=32, kernel_size=[2, 2],
    stride=[2, 2], padding=[0, 0], dilation=[1, 1]))
step("max_pool2d float32 RM input", lambda: ttnn.max_pool2d(
    inp(N, H, W, 32, RM, DR, dtype=ttnn.float32), batch_size=N, input_h=H, input_w=W, channels=32, kernel_size=[2, 2],
    stride=[2, 2], padding=[0, 0], dilation=[1, 1]))
step("max_pool2d resnet stem 112x112x64 k3 s2 p1 -> DRAM", lambda: ttnn.max_pool2d(
    inp(1, 112, 112, 64, RM, DR), batch_size=1, input_h=112, input_w=112, channels=64, kernel_size=[3, 3],
    stride=[2, 2], padding=[1, 1], dilation=[1, 1], memory_config=DR))
step("max_pool2d output_layout=TILE_LAYOUT kwarg", lambda: ttnn.max_pool2d(
    x, batch_size=N, input_h=H, input_w=W, channels=32, kernel_size=[2, 2], stride=[2, 2], padding=[0, 0],
    dilation=[1, 1], output_layout=TILE))
step("max_pool2d return_indices=True", lambda: ttnn.max_pool2d(
    x, batch_size=N, input_h=H, input_w=W, channels=32, kernel_size=[2, 2], stride=[2, 2], padding=[0, 0],
    dilation=[1, 1], return_indices=True))

print("--- global_avg_pool2d", flush=True)
for lname, layout in (("TILE", TILE), ("RM", RM)):
    for C in (64, 3):
        for mname, mc in (("DRAM", DR), ("L1", L1)):
            t = step(f"input [1,7,7,{C}] {lname} {mname}", lambda: dev(d, (1, 7, 7, C), layout=layout, mc=mc))
            if t is None:
                continue
            step(f"global_avg_pool2d [1,7,7,{C}] {lname} {mname}", lambda: ttnn.global_avg_pool2d(t))
            step(f"global_avg_pool2d [1,7,7,{C}] {lname} {mname} memory_config=L1", lambda: ttnn.global_avg_pool2d(t, memory_config=L1))
            step(f"global_avg_pool2d [1,7,7,{C}] {lname} {mname} memory_config=DRAM", lambda: ttnn.global_avg_pool2d(t, memory_config=DR))
            step(f"global_avg_pool2d [1,7,7,{C}] {lname} {mname} dtype=float32?", lambda: ttnn.global_avg_pool2d(t, dtype=ttnn.float32))
t = dev(d, (1, 1, 49, 64), layout=TILE)
step("global_avg_pool2d flattened [1,1,49,64] TILE", lambda: ttnn.global_avg_pool2d(t))
t = dev(d, (2, 7, 7, 64), layout=TILE)
step("global_avg_pool2d batch 2 [2,7,7,64] TILE", lambda: ttnn.global_avg_pool2d(t))
step("mean over dims (1,2) keepdim [1,7,7,64] TILE (alternative)", lambda: ttnn.mean(dev(d, (1, 7, 7, 64)), dim=(1, 2), keepdim=True))
step("mean over dim 2 of flattened [1,1,49,64] TILE (alternative)", lambda: ttnn.mean(dev(d, (1, 1, 49, 64)), dim=2, keepdim=True))
done(d)
