"""Q4 (cont.): conv2d output placement when the input is in L1 vs DRAM, with memory_config / output_layout."""
from _common import *
from probe_conv_helpers import conv, cstep

d = open_dev()
N, H, W = 1, 16, 16
U = ttnn.UnaryWithParam
for iname, imc in (("DRAM", DR), ("L1", L1)):
    for mname, mc in (("none", None), ("DRAM", DR), ("L1", L1)):
        for lname, ol in (("default", None), ("RM", RM)):
            kw = {}
            if mc is not None:
                kw["memory_config"] = mc
            if ol is not None:
                kw["conv_config"] = ttnn.Conv2dConfig(output_layout=ol)
            x = dev(d, (1, 1, N * H * W, 32), layout=RM, mc=imc)
            cstep(f"conv in={iname} memory_config={mname} output_layout={lname}",
                  lambda: conv(d, x, 32, 64, N, H, W, **kw))
            ttnn.deallocate(x)
x = dev(d, (1, 1, N * H * W, 32), layout=RM, mc=DR)
cstep("conv in=DRAM slice_config=None + L1 memory_config (explicit dram slicing off via Conv2dSliceConfig L1_FULL?)",
      lambda: conv(d, x, 32, 64, N, H, W, memory_config=L1, slice_config=ttnn.Conv2dL1FullSliceConfig)
      if hasattr(ttnn, "Conv2dL1FullSliceConfig") else "no ttnn.Conv2dL1FullSliceConfig")
print("slice config names:", [n for n in dir(ttnn) if "Slice" in n], flush=True)
cstep("CLAMP_TSS 3-arg UnaryWithParam(CLAMP_TSS, 0.0, 6.0)", lambda: conv(
    d, x, 32, 64, N, H, W, conv_config=ttnn.Conv2dConfig(activation=U(ttnn.UnaryOpType.CLAMP_TSS, 0.0, 6.0))))
cstep("RELU_MAX with weights_dtype set", lambda: conv(
    d, x, 32, 64, N, H, W, conv_config=ttnn.Conv2dConfig(weights_dtype=ttnn.bfloat16, activation=U(ttnn.UnaryOpType.RELU_MAX, 6.0)), dtype=ttnn.bfloat16))
cstep("HARDTANH param form UnaryWithParam(HARDTANH, 0.0, 6.0)", lambda: conv(
    d, x, 32, 64, N, H, W, conv_config=ttnn.Conv2dConfig(activation=U(ttnn.UnaryOpType.HARDTANH, 0.0, 6.0))))
cstep("LEAKY_RELU 0.1", lambda: conv(
    d, x, 32, 64, N, H, W, conv_config=ttnn.Conv2dConfig(activation=U(ttnn.UnaryOpType.LEAKY_RELU, 0.1))))
cstep("HARDSWISH", lambda: conv(
    d, x, 32, 64, N, H, W, conv_config=ttnn.Conv2dConfig(activation=U(ttnn.UnaryOpType.HARDSWISH))))
cstep("TANH", lambda: conv(d, x, 32, 64, N, H, W, conv_config=ttnn.Conv2dConfig(activation=U(ttnn.UnaryOpType.TANH))))
cstep("ttnn.relu6 standalone on conv out", lambda: ttnn.relu6(conv(d, x, 32, 64, N, H, W)))
cstep("ttnn.clamp(t, 0.0, 6.0) standalone", lambda: ttnn.clamp(conv(d, x, 32, 64, N, H, W), 0.0, 6.0))
cstep("ttnn.clip(t, 0.0, 6.0) standalone", lambda: ttnn.clip(conv(d, x, 32, 64, N, H, W), 0.0, 6.0))
cstep("ttnn.hardtanh(t, min_val=0.0, max_val=6.0)", lambda: ttnn.hardtanh(conv(d, x, 32, 64, N, H, W), min_val=0.0, max_val=6.0))
done(d)
