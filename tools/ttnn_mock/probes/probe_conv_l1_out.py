"""Q4 (cont.): conv2d writing L1 through the all-in-L1 path (slice_config=Conv2dL1FullSliceConfig), from DRAM
and L1 inputs, interleaved and in the planner's height-sharded layout, on ResNet-50 / MobileNetV2 shapes."""
from _common import *
from probe_conv_helpers import conv, cstep

converter_ir_on_path()
d = open_dev()
FULL = ttnn.Conv2dL1FullSliceConfig
# (name, C, OC, H, W, k, stride, padding, groups)
CASES = [("small 3x3 32->64 16x16", 32, 64, 16, 16, 3, 1, (1, 1), 1),
         ("resnet stem 7x7/2 3->64 224x224", 3, 64, 224, 224, 7, 2, (3, 3), 1),
         ("resnet 1x1 64->256 56x56", 64, 256, 56, 56, 1, 1, (0, 0), 1),
         ("resnet 3x3 512->512 7x7", 512, 512, 7, 7, 3, 1, (1, 1), 1),
         ("mobilenet dw 3x3 96 112x112 /2", 96, 96, 112, 112, 3, 2, (1, 1), 96),
         ("mobilenet dw 3x3 960 7x7", 960, 960, 7, 7, 3, 1, (1, 1), 960),
         ("mobilenet 1x1 320->1280 7x7", 320, 1280, 7, 7, 1, 1, (0, 0), 1)]
for name, C, OC, H, W, k, s, p, g in CASES:
    oh, ow = (H + 2 * p[0] - k) // s + 1, (W + 2 * p[1] - k) // s + 1
    _, hs = planner_height_sharded((1, 1, oh * ow, OC))
    for iname, imc in (("DRAM", DR), ("L1", L1)):
        for mname, mc in (("L1", L1), ("HS", hs)):
            x = dev(d, (1, 1, H * W, C), layout=RM if C < 16 else TILE, mc=imc)
            cstep(f"{name} in={iname} out={mname} slice=L1Full",
                  lambda: conv(d, x, C, OC, 1, H, W, k=k, stride=s, padding=p, groups=g, memory_config=mc,
                               slice_config=FULL))
            ttnn.deallocate(x)
done(d)
