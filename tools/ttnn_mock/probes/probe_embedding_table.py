"""Q: what does ttnn.embedding allocate beside its output when its table sits in L1?  Found by the full-size
BERT-base on the mock p150, whose bfloat8_b word-embedding table [30522, 768] (TILE) was resident in L1: the
embedding's circular buffers clashed with an L1 buffer far below every tensor the program had allocated.
Method: a [30522, 768] table, bfloat8_b or bfloat16 TILE, bfloat16 ROW_MAJOR, in L1 or DRAM; [1, 128] uint32
ids in L1; embedding(layout=TILE, memory_config=L1).  The output's address, compared with the lowest tensor
before the call, shows how much the op allocated above it while it ran (L1 allocates top-down, first fit)."""
from _common import *

d = open_dev()
ids = ttnn.from_torch(torch.randint(0, 30000, (1, 128), dtype=torch.int32), dtype=ttnn.uint32, layout=RM, device=d,
                      memory_config=L1)
for dt, layout in ((ttnn.bfloat8_b, TILE), (ttnn.bfloat16, TILE), (ttnn.bfloat16, RM)):
    for mc in (L1, DR):
        where = "L1" if mc is L1 else "DRAM"
        w = ttnn.from_torch(torch.randn(30522, 768), dtype=dt, layout=layout, device=d, memory_config=mc)
        step(f"table {str(dt).split('.')[-1]} {str(layout).split('.')[-1]} {where}", lambda: w)
        lowest = min(w.buffer_address(), ids.buffer_address()) if mc is L1 else ids.buffer_address()
        step("  L1 per bank with the table", lambda: per_bank(d, ttnn.BufferType.L1))
        out = step("  embedding(ids, table, layout=TILE, memory_config=L1)",
                   lambda: ttnn.embedding(ids, w, layout=TILE, memory_config=L1))
        if out is not None:
            step("  bytes per bank between the lowest tensor before the call and the output",
                 lambda: lowest - out.buffer_address())
            ttnn.deallocate(out)
        ttnn.deallocate(w)
done(d)
