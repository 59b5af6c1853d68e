"""Q: which of the calls a traced generated program makes does the mock device accept? open_device with
trace_region_size / num_command_queues, allocate_tensor_on_device, copy_host_to_device_tensor (cq 0 and 1),
record_event / wait_for_event, is_trace_capture_active. begin_trace_capture is NOT called: on a mock device
tt-metal has no command queue and capture segfaults (the process would die before printing the rest)."""
from _common import *

print("--- T1 open_device", flush=True)
d = step("open_device(trace_region_size=1<<20, num_command_queues=2)", lambda: ttnn.open_device(
    device_id=0, l1_small_size=16384, trace_region_size=1 << 20, num_command_queues=2))
if d is None:
    d = step("open_device(trace_region_size=1<<20)", lambda: ttnn.open_device(
        device_id=0, l1_small_size=16384, trace_region_size=1 << 20))
if d is None:
    d = open_dev()
step("DRAM per bank after open", lambda: per_bank(d, ttnn.BufferType.DRAM))
step("L1 per bank after open", lambda: per_bank(d, ttnn.BufferType.L1))

print("--- T2 persistent input buffers", flush=True)
x = torch.randn(1, 1, 32, 64)
host = step("from_torch host bf16 TILE", lambda: ttnn.from_torch(x, dtype=ttnn.bfloat16, layout=TILE))
spec_dev = step("allocate_tensor_on_device(shape, dtype, layout, device, DRAM)", lambda: ttnn.allocate_tensor_on_device(
    ttnn.Shape([1, 1, 32, 64]), ttnn.bfloat16, TILE, d, DR))
step("allocate_tensor_on_device(... L1)", lambda: ttnn.allocate_tensor_on_device(
    ttnn.Shape([1, 1, 32, 64]), ttnn.bfloat16, TILE, d, L1))
step("allocate_tensor_on_device(tensor_spec, device)", lambda: ttnn.allocate_tensor_on_device(host.spec, d))
dev_t = step("host.to(device, DRAM) (persistent buffer the way from_torch(device=) makes it)",
             lambda: ttnn.to_device(host, d, memory_config=DR))
addr = dev_t.buffer_address() if dev_t is not None else None
step("copy_host_to_device_tensor(host, dev)", lambda: ttnn.copy_host_to_device_tensor(host, dev_t))
step("  address unchanged", lambda: dev_t.buffer_address() == addr)
step("copy_host_to_device_tensor(host, dev, cq_id=0)", lambda: ttnn.copy_host_to_device_tensor(host, dev_t, cq_id=0))
step("copy_host_to_device_tensor(host, dev, cq_id=1)", lambda: ttnn.copy_host_to_device_tensor(host, dev_t, cq_id=1))
step("copy_host_to_device_tensor(host, dev, ttnn.QueueId(1))",
     lambda: ttnn.copy_host_to_device_tensor(host, dev_t, ttnn.QueueId(1)))
host_rm = ttnn.from_torch(x, dtype=ttnn.bfloat16, layout=RM)
step("copy_host_to_device_tensor RM host -> TILE device (layout mismatch)",
     lambda: ttnn.copy_host_to_device_tensor(host_rm, dev_t))
host_f32 = ttnn.from_torch(x, dtype=ttnn.float32, layout=TILE)
step("copy_host_to_device_tensor f32 host -> bf16 device (dtype mismatch)",
     lambda: ttnn.copy_host_to_device_tensor(host_f32, dev_t))
dev_l1 = ttnn.to_device(host, d, memory_config=L1)
step("copy_host_to_device_tensor into an L1 tensor", lambda: ttnn.copy_host_to_device_tensor(host, dev_l1))
hs_layout, hs_mc = None, None
try:
    grid = ttnn.CoreRangeSet({ttnn.CoreRange(ttnn.CoreCoord(0, 0), ttnn.CoreCoord(0, 0))})
    hs_mc = ttnn.MemoryConfig(ttnn.TensorMemoryLayout.HEIGHT_SHARDED, ttnn.BufferType.L1,
                              ttnn.ShardSpec(grid, [32, 64], ttnn.ShardOrientation.ROW_MAJOR))
except Exception as e:  # noqa: BLE001
    print("ERR  shard config:", errtext(e))
if hs_mc is not None:
    dev_hs = step("to_device height-sharded L1", lambda: ttnn.to_device(host, d, memory_config=hs_mc))
    if dev_hs is not None:
        step("copy_host_to_device_tensor into a height-sharded tensor",
             lambda: ttnn.copy_host_to_device_tensor(host, dev_hs))
ids = ttnn.from_torch(torch.randint(0, 9, (1, 7), dtype=torch.int32), dtype=ttnn.uint32, layout=RM)
dev_ids = ttnn.to_device(ids, d, memory_config=DR)
step("copy_host_to_device_tensor uint32 RM", lambda: ttnn.copy_host_to_device_tensor(ids, dev_ids))

print("--- T3 events", flush=True)
ev = step("record_event(d, 0)", lambda: ttnn.record_event(d, 0))
ev1 = step("record_event(d, 1)", lambda: ttnn.record_event(d, 1))
step("record_event(d, ttnn.QueueId(1))", lambda: ttnn.record_event(d, ttnn.QueueId(1)))
step("is_trace_capture_active(d)", lambda: ttnn.is_trace_capture_active(d))
step("synchronize_device(d)", lambda: ttnn.synchronize_device(d))
step("to_torch(dev_t) after copies", lambda: ttnn.to_torch(dev_t).shape)
step("ttnn.MeshTraceId exists", lambda: ttnn.MeshTraceId)
# the last two may kill the process (a segfault on the mock): each is printed before it runs
print("     next: event_synchronize(ev1)", flush=True)
if ev1 is not None:
    step("event_synchronize(ev1)", lambda: ttnn.event_synchronize(ev1))
print("     next: wait_for_event(1, ev) (segfaulted in the first run of this probe)", flush=True)
if ev is not None:
    step("wait_for_event(1, ev)", lambda: ttnn.wait_for_event(1, ev))
print("--- T4 begin_trace_capture not called (segfaults on a mock device: no command queue)", flush=True)
done(d)
