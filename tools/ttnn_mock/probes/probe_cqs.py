"""Q: how does a program open a device with two command queues so that a static check against the API
manifest accepts the call?  The manifest's open_device signature string lists device_id, l1_small_size,
trace_region_size, dispatch_core_config and worker_l1_size (num_command_queues only in its doc's Keyword Args);
CreateDevice's signature lists num_command_queues.  Each way is opened, asked how many queues it has, given the
calls a --cqs 2 program makes outside a capture on queue 1, and closed.  begin_trace_capture and wait_for_event
are not called (they segfault on a mock device, results/trace.txt)."""
from _common import *


def dram_bank_bytes(d):
    """DRAM bytes per bank the allocator manages (total_bytes_per_bank of get_memory_view)."""
    return int(ttnn.get_memory_view(d, ttnn.BufferType.DRAM).total_bytes_per_bank)


def queue_one_calls(d, label):
    """The queue-1 calls a --cqs 2 program makes outside its capture."""
    step(f"{label}: queue methods", lambda: [a for a in dir(d) if "cq" in a.lower() or "queue" in a.lower()])
    step(f"{label}: num_program_cache_entries()", lambda: d.num_program_cache_entries())
    host = ttnn.from_torch(torch.randn(1, 1, 32, 64), dtype=ttnn.bfloat16, layout=TILE)
    dev_t = ttnn.to_device(host, d, memory_config=DR)
    step(f"{label}: copy_host_to_device_tensor(host, dev, cq_id=1)",
         lambda: ttnn.copy_host_to_device_tensor(host, dev_t, cq_id=1))
    step(f"{label}: record_event(d, 1)", lambda: ttnn.record_event(d, 1) is not None)
    step(f"{label}: record_event(d, 0)", lambda: ttnn.record_event(d, 0) is not None)
    ttnn.deallocate(dev_t)


print("--- C1 open_device without num_command_queues", flush=True)
d = step("open_device(device_id=0, l1_small_size=16384, trace_region_size=1<<20)", lambda: ttnn.open_device(
    device_id=0, l1_small_size=16384, trace_region_size=1 << 20))
if d is not None:
    step("DRAM bytes per bank (trace region 1 MiB)", lambda: dram_bank_bytes(d))
    step("close_device", lambda: ttnn.close_device(d))
for region in (0, 16 << 20):
    d = step(f"open_device(device_id=0, l1_small_size=16384, trace_region_size={region})",
             lambda: ttnn.open_device(device_id=0, l1_small_size=16384, trace_region_size=region))
    if d is not None:
        step(f"DRAM bytes per bank (trace region {region} B)", lambda: dram_bank_bytes(d))
        step("close_device", lambda: ttnn.close_device(d))

def create_device(queues, label):
    """CreateDevice with `queues` command queues, the queue-1 calls on it, closed."""
    d = step(f"CreateDevice(device_id=0, num_command_queues={queues}, l1_small_size=16384, trace_region_size=1<<20)",
             lambda: ttnn.CreateDevice(device_id=0, num_command_queues=queues, l1_small_size=16384,
                                       trace_region_size=1 << 20))
    if d is None:
        return
    if queues == 2:
        step("type", lambda: type(d).__name__)
        step("L1 per bank after CreateDevice", lambda: per_bank(d, ttnn.BufferType.L1))
    queue_one_calls(d, label)
    step("close_device(d)", lambda: ttnn.close_device(d))


print("--- C2 CreateDevice(device_id=0, num_command_queues=2, ...)", flush=True)
create_device(2, "CreateDevice")
print("--- C3 CreateDevice with one queue", flush=True)
create_device(1, "CreateDevice, one queue")

print("--- C4 open_device(num_command_queues=2) (the call the manifest's signature leaves out)", flush=True)
d = step("open_device(device_id=0, l1_small_size=16384, trace_region_size=1<<20, num_command_queues=2)",
         lambda: ttnn.open_device(device_id=0, l1_small_size=16384, trace_region_size=1 << 20,
                                  num_command_queues=2))
if d is not None:
    queue_one_calls(d, "open_device")
    done(d)
