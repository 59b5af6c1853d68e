"""Q15: quantization on ttnn 0.81.1: bfloat8_b weights (upload, linear / matmul taking them, conv2d's
weights_dtype), the eltwise chain QuantizeLinear / DequantizeLinear lower to (divide by a number, round,
clip, add / subtract / multiply), and ttnn's own quantize / dequantize / requantize (what they take and give)."""
from _common import *

d = open_dev()
print("--- Q15a bfloat8_b weights", flush=True)
w = step("from_torch float32 [64,32] dtype=bfloat8_b layout=TILE", lambda: ttnn.from_torch(
    torch.randn(64, 32), dtype=ttnn.bfloat8_b, layout=TILE, device=d, memory_config=DR))
step("from_torch float32 [64,32] dtype=bfloat8_b layout=ROW_MAJOR", lambda: ttnn.from_torch(
    torch.randn(64, 32), dtype=ttnn.bfloat8_b, layout=RM, device=d))
step("from_torch bfloat8_b on the host (no device)", lambda: ttnn.from_torch(
    torch.randn(64, 32), dtype=ttnn.bfloat8_b, layout=TILE))
x = dev(d, (8, 64))
step("linear bf16 [8,64] x bfloat8_b [64,32]", lambda: ttnn.linear(x, w))
step("linear bf16 x bfloat8_b + bf16 bias [1,32]", lambda: ttnn.linear(x, w, bias=dev(d, (1, 32))))
step("matmul bf16 [8,64] x bfloat8_b [64,32]", lambda: ttnn.matmul(x, w))
step("linear float32 [8,64] x bfloat8_b", lambda: ttnn.linear(dev(d, (8, 64), dtype=ttnn.float32), w))
step("linear bf16 x bfloat8_b dtype=bfloat16", lambda: ttnn.linear(x, w, dtype=ttnn.bfloat16))
xin = ttnn.from_torch(torch.randn(1, 1, 64, 16), dtype=ttnn.bfloat16, layout=RM, device=d)
cw = ttnn.from_torch(torch.randn(32, 16, 3, 3), dtype=ttnn.float32)
step("conv2d Conv2dConfig(weights_dtype=bfloat8_b), float32 host weight", lambda: ttnn.conv2d(
    input_tensor=xin, weight_tensor=cw, device=d, in_channels=16, out_channels=32, batch_size=1, input_height=8,
    input_width=8, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1), dilation=(1, 1), groups=1,
    conv_config=ttnn.Conv2dConfig(weights_dtype=ttnn.bfloat8_b), return_weights_and_bias=True))

print("--- Q15b the QuantizeLinear / DequantizeLinear chain", flush=True)
a = dev(d, (1, 1, 64, 32))
s = step("divide tensor / 0.05", lambda: ttnn.divide(a, 0.05))
r = step("round", lambda: ttnn.round(s))
step("add 128.0", lambda: ttnn.add(r, 128.0))
step("clip min=0.0 max=255.0", lambda: ttnn.clip(r, min=0.0, max=255.0))
step("divide by a [1,1,1,32] tensor (per channel)", lambda: ttnn.divide(a, dev(d, (1, 1, 1, 32))))
step("subtract 128.0, multiply 0.05", lambda: ttnn.multiply(ttnn.subtract(r, 128.0), 0.05))

print("--- Q15c ttnn.quantize / dequantize / requantize", flush=True)
q = step("quantize bf16, scale 0.05, zero_point 3", lambda: ttnn.quantize(a, 0.05, 3))
step("quantize float32, scale 0.05, zero_point 3", lambda: ttnn.quantize(dev(d, (1, 1, 64, 32), dtype=ttnn.float32),
                                                                          0.05, 3))
step("quantize bf16 dtype=ttnn.bfloat16", lambda: ttnn.quantize(a, 0.05, 3, dtype=ttnn.bfloat16))
step("quantize bf16 dtype=ttnn.uint8", lambda: ttnn.quantize(a, 0.05, 3, dtype=ttnn.uint8))
step("quantize per channel axis=3, float32 scale / zero-point tensors", lambda: ttnn.quantize(
    a, dev(d, (32,), dtype=ttnn.float32), dev(d, (32,), dtype=ttnn.float32), axis=3))
if q is not None:
    step("dequantize the int32 result", lambda: ttnn.dequantize(q, 0.05, 3))
    step("requantize the int32 result", lambda: ttnn.requantize(q, 0.05, 3, 0.1, 0))
step("dequantize a bf16 tensor", lambda: ttnn.dequantize(a, 0.05, 3))
done(d)
