"""Does ttnn.slice of the whole tensor (start 0, end its shape, step 1) return a new buffer or its input?
Prints, per case, whether the result shares the input's buffer and whether it is still allocated after the input
is deallocated."""
from _common import *

d = open_dev()
for name, shape, layout, start, end in [
    ("whole TILE [1, 512]", (1, 512), TILE, [0, 0], [1, 512]),
    ("whole ROW_MAJOR [1, 512]", (1, 512), RM, [0, 0], [1, 512]),
    ("whole TILE [2, 64, 96]", (2, 64, 96), TILE, [0, 0, 0], [2, 64, 96]),
    ("part TILE [1, 512] -> [1, 256]", (1, 512), TILE, [0, 0], [1, 256]),
]:
    x = dev(d, shape, layout=layout, mc=L1)
    y = ttnn.slice(x, start, end, [1] * len(shape), memory_config=L1)
    same = y.buffer_address() == x.buffer_address()
    ttnn.deallocate(x)
    print(f"OK   {name}: same buffer={same} result allocated after deallocate(input)={y.is_allocated()}", flush=True)
    if y.is_allocated():
        ttnn.deallocate(y)
done(d)
