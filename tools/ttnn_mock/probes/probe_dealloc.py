"""Q11: deallocation edge cases. Each case runs in its own child process (some kill the process)."""
import os
import subprocess
import sys

CASES = ["host", "twice", "use_after", "use_after_to_torch", "view_then_base", "memview_after_close",
         "deallocate_after_close", "is_allocated_after"]

if len(sys.argv) == 1:
    for c in CASES:
        r = subprocess.run([sys.executable, os.path.abspath(__file__), c], capture_output=True, text=True, timeout=300)
        lines = [ln for ln in r.stdout.splitlines() if ln.startswith(("OK", "ERR", "NOTE"))]
        tail = [ln for ln in r.stderr.splitlines() if "TT_FATAL" in ln or "TT_THROW" in ln or "Signal:" in ln][-2:]
        print(f"CASE {c}: exit={r.returncode} " + " || ".join(lines + tail), flush=True)
    sys.exit(0)

from _common import *  # noqa: E402

case = sys.argv[1]
d = open_dev()
x = dev(d, (1, 1, 32, 32))
if case == "host":
    h = ttnn.from_torch(torch.zeros(1, 1, 32, 32), dtype=ttnn.bfloat16)
    step("deallocate(host tensor)", lambda: ttnn.deallocate(h))
    step("host tensor still usable: to_device", lambda: ttnn.to_device(h, d))
elif case == "twice":
    step("deallocate once", lambda: ttnn.deallocate(x))
    step("deallocate twice", lambda: ttnn.deallocate(x))
    print("NOTE is_allocated:", x.is_allocated(), flush=True)
elif case == "use_after":
    ttnn.deallocate(x)
    step("relu(deallocated)", lambda: ttnn.relu(x))
elif case == "use_after_to_torch":
    ttnn.deallocate(x)
    step("to_torch(deallocated)", lambda: ttnn.to_torch(x))
elif case == "view_then_base":
    v = ttnn.reshape(x, (32, 32))
    ttnn.deallocate(v)
    step("add(base, base) after deallocating its view", lambda: ttnn.add(x, x))
elif case == "memview_after_close":
    ttnn.close_device(d)
    step("get_memory_view after close_device", lambda: ttnn.get_memory_view(d, ttnn.BufferType.L1).total_bytes_allocated_per_bank)
    os._exit(0)
elif case == "deallocate_after_close":
    ttnn.close_device(d)
    step("deallocate(device tensor) after close_device", lambda: ttnn.deallocate(x))
    os._exit(0)
elif case == "is_allocated_after":
    ttnn.deallocate(x)
    step("is_allocated / buffer_address after deallocate", lambda: (x.is_allocated(), x.storage_type()))
    step("buffer_address after deallocate", lambda: x.buffer_address())
done(d)
