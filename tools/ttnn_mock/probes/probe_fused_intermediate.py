"""Q: where does a plain linear's fused activation (`activation="relu"`, interleaved, no program config: the
matmul and then the standalone unary kernel, ttnn-facts section 22) put the matmul's result before the
activation reads it?  Method: fill L1 from the top with one interleaved tensor so that F bytes per bank stay
free, then run linear(a, b, memory_config=L1) without and with activation= (a and b in DRAM); F steps up by one
tile per bank.  The smallest F each call runs with is printed: if the intermediate sits in L1 beside the
output, the activation call needs one more output-sized block per bank than the plain call."""
from _common import *

d = open_dev()
OUT = (1, 1, 1024, 2048)  # bf16 TILE: 2048 tiles, 32 a bank on n150 (64 KiB per bank), 16 on p150's 130 banks
a = dev(d, (1, 1, 1024, 256))
b = dev(d, (1, 1, 256, 2048))
banks = d.compute_with_storage_grid_size().x * d.compute_with_storage_grid_size().y
bank = int(ttnn.get_memory_view(d, ttnn.BufferType.L1).total_bytes_per_bank)
out_tiles = OUT[2] * OUT[3] // 1024
out_per_bank = -(-out_tiles // banks) * 2048
print(f"INFO L1 banks={banks} bank bytes={bank} output per bank={out_per_bank}", flush=True)


def runs(free, activation):
    """Whether linear runs with `free` bytes per bank left below a filler tensor."""
    tiles = (bank - free) // 2048 * banks
    filler = ttnn.from_torch(torch.zeros(1, 1, 32, tiles * 32), dtype=ttnn.bfloat16, layout=TILE, device=d,
                             memory_config=L1)
    try:
        kwargs = {"activation": activation} if activation else {}
        out = ttnn.linear(a, b, memory_config=L1, **kwargs)
        ttnn.deallocate(out)
        return True
    except Exception as e:  # noqa: BLE001
        runs.last_error = errtext(e, 2)
        return False
    finally:
        ttnn.deallocate(filler)


runs.last_error = ""
for activation in (None, "relu"):
    runs(bank // 2, activation)  # compile first, with room to spare
    found = None
    for free in range(out_per_bank // 2, 4 * out_per_bank + 2048 * 64, 2048):
        if runs(free, activation):
            found = free
            break
    label = f"linear(a, b, memory_config=L1{', activation=' + repr(activation) if activation else ''})"
    print(f"OK   {label}: smallest free L1 per bank it runs with = {found} "
          f"(= output {out_per_bank} + {found - out_per_bank if found else '?'}); "
          f"the step below failed with: {runs.last_error}", flush=True)
done(d)
