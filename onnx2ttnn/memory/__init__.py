"""Memory planning: where every device tensor lives (DRAM or L1, interleaved, height- or width-sharded) and why.

budget.py    the usable L1 per core (capacity less the op and conv scratch reserves, with their sources)
view.py      a planning view of the graph the planner may rewire with candidate moves
buffers.py   what the planner knows about each buffer (bytes per bank, DRAM bytes saved, DRAM pins)
sharding.py  which L1 buffers are sharded, and why the others are not
moves.py     candidate to_memory_config moves out of DRAM-only outputs, and whether they pay
replay.py    the model of ttnn's L1 allocator the plans are replayed on
policies.py  the dram, l1 and auto policies over the same buffers, budget and replay
plan.py      plan_memory: the pure analysis the place-memory and insert-moves passes apply
capacity.py  one chip's DRAM over the planned program, and the smallest mesh that would hold it
"""
