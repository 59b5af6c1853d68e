"""Q: the calls the unrolled LSTM / GRU / RNN lowering (onnx2ttnn/lowering/recurrent.py) emits, in its shapes:
the input projection's linear over [seq * batch, input] with a bias row, row-and-column slices of it at
unaligned offsets, the per-step linear of a [batch, hidden] state, gate column slices, clip with min/max,
the concat of many [1, batch, hidden] step states along dim 0, and the permutes of layout 1."""
from _common import *

d = open_dev()
seq, batch, inputs, hidden = 7, 3, 5, 6
print("--- input projection", flush=True)
x = dev(d, (seq * batch, inputs))
w = dev(d, (inputs, 2 * 4 * hidden))
b = dev(d, (1, 2 * 4 * hidden))
proj = step("linear [21,5] @ [5,48] + bias [1,48]", lambda: ttnn.linear(x, w, bias=b, memory_config=L1))
step("permute 3-D TILE (1,0,2) [3,7,5] (layout 1 to sequence-first)",
     lambda: ttnn.permute(dev(d, (batch, seq, inputs)), (1, 0, 2)))
print("--- one step", flush=True)
xt = step("slice rows 3..6, cols 24..48 (step 1, direction 1)",
          lambda: ttnn.slice(proj, [3, 24], [6, 48], [1, 1], memory_config=L1))
h = dev(d, (batch, hidden))
hr = step("linear state [3,6] @ [6,24]", lambda: ttnn.linear(h, dev(d, (hidden, 4 * hidden)), memory_config=L1))
gates = step("add [3,24] + [3,24]", lambda: ttnn.add(xt, hr))
for k in range(4):
    step(f"slice gate {k} cols {k * hidden}..{(k + 1) * hidden}",
         lambda k=k: ttnn.slice(gates, [0, k * hidden], [batch, (k + 1) * hidden], [1, 1], memory_config=L1))
step("clip(min=-0.7, max=0.7) [3,6]", lambda: ttnn.clip(h, min=-0.7, max=0.7))
step("multiply [3,6] * peephole row [1,6]", lambda: ttnn.multiply(h, dev(d, (1, hidden))))
print("--- outputs", flush=True)
states = [ttnn.reshape(dev(d, (batch, hidden)), (1, batch, hidden)) for _ in range(2 * seq)]
y = step("concat 14 x [1,3,6] dim 0", lambda: ttnn.concat(states, dim=0, memory_config=L1))
y4 = step("reshape [14,3,6] -> [7,2,3,6]", lambda: ttnn.reshape(y, (seq, 2, batch, hidden)))
step("permute 4-D TILE (2,0,1,3) (Y to layout 1)", lambda: ttnn.permute(y4, (2, 0, 1, 3)))
step("permute 3-D TILE (1,0,2) [2,3,6] (Y_h to layout 1)", lambda: ttnn.permute(dev(d, (2, batch, hidden)), (1, 0, 2)))
many = [ttnn.reshape(dev(d, (1, 64)), (1, 1, 64)) for _ in range(256)]
step("concat 256 x [1,1,64] dim 0", lambda: ttnn.concat(many, dim=0))
done(d)
