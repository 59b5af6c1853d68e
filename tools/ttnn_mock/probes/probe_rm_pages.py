"""How much of an L1 bank a narrow ROW_MAJOR tensor takes: [1, N, W] float32 / bfloat16 for small W, placed by
from_torch and by a slice of a DRAM tensor (the conv frames rule's chunk slices).  Prints one line per case:
`RM how shape dtype per_bank=B (one row per page would be P)`, B the change of the bank's allocated bytes."""
from _common import *

d = open_dev()


def allocated():
    return int(ttnn.get_memory_view(d, ttnn.BufferType.L1).total_bytes_allocated_per_bank)


for dtype, size in ((ttnn.float32, 4), (ttnn.bfloat16, 2)):
    for rows, width in ((21922, 2), (21922, 8), (21922, 32), (2048, 2), (2048, 64)):
        row_pages = -(-rows // 64) * max(32, -(-width * size // 32) * 32)
        before = allocated()
        x = ttnn.from_torch(torch.randn(1, rows, width), dtype=dtype, layout=RM, device=d, memory_config=L1)
        taken = allocated() - before
        ttnn.deallocate(x)
        src = ttnn.from_torch(torch.randn(1, rows + 1, width), dtype=dtype, layout=RM, device=d, memory_config=DR)
        before = allocated()
        y = ttnn.slice(src, (0, 1, 0), (1, rows + 1, width), (1, 1, 1), memory_config=L1)
        sliced = allocated() - before
        ttnn.deallocate(y)
        ttnn.deallocate(src)
        print(f"RM from_torch {(1, rows, width)} {dtype} per_bank={taken}; slice per_bank={sliced} "
              f"(one row per page, 32 B aligned: {row_pages})", flush=True)
