"""Run the parts of a generated program's --trace path that a mock device can run: open the device as the
program's --trace --cqs 2 run does (a trace region and two command queues), upload the inputs into their persistent buffers (forward_inputs), copy new
host values into them on queues 0 and 1 (host_inputs, ttnn.copy_host_to_device_tensor), record events, and run
forward_device and read_outputs eagerly, as the capture would record them. Capture, replay and wait_for_event are
not run: on a mock device tt-metal has no command queue and they segfault (docs/ttnn-facts.md §25).

    python run_traced_parts.py PROGRAM.py OUT.json [--device n150|p150]
OUT.json: {"ok", "error", "steps": [name, ...], "addresses_kept": bool, "outputs": {name: shape}}."""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys


def main(program: str, out: str, device_name: str) -> int:
    home = os.environ.get("ONNX2TTNN_TTNN_MOCK_HOME", os.path.expanduser("~/.cache/onnx2ttnn/ttnn-mock"))
    desc_dir = os.path.join(home, "mock")
    os.environ["TT_METAL_MOCK_CLUSTER_DESC_PATH"] = os.path.join(desc_dir, f"{device_name}.yaml")
    weights = os.path.splitext(program)[0] + ".npz"
    report = {"ok": False, "error": None, "steps": [], "addresses_kept": None, "outputs": {}}
    workdir = os.environ.get("ONNX2TTNN_TTNN_MOCK_WORKDIR")
    if workdir:
        os.makedirs(workdir, exist_ok=True)
        os.chdir(workdir)
    try:
        import ttnn

        spec = importlib.util.spec_from_file_location("traced_program", program)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        steps = report["steps"]
        # the program's own opening of a --trace --cqs 2 run (ttnn.CreateDevice, docs/ttnn-facts.md §32)
        args = argparse.Namespace(device_id=0, trace=True, cqs=2, trace_region_size=module.TRACE_REGION_SIZE)
        device = module.open_device(args)
        steps.append("program open_device(--trace --cqs 2)")
        params = module.load_parameters(device, weights)
        inputs = module.random_inputs()
        buffers = module.forward_inputs(device, **inputs)
        addresses = {name: t.buffer_address() for name, t in buffers.items()}
        steps.append("forward_inputs")
        module.release(module.forward_device(device, params, **buffers))
        steps.append("forward_device (warm-up)")
        if hasattr(module, "settle_weights"):  # conv weights the plan keeps in L1, moved before the capture
            module.settle_weights(params)
            steps.append("settle_weights")
        host = module.host_inputs(**inputs)
        for queue in (0, 1):
            for name, tensor in host.items():
                ttnn.copy_host_to_device_tensor(tensor, buffers[name], cq_id=queue)
            steps.append(f"copy_host_to_device_tensor cq_id={queue}")
            ttnn.record_event(device, queue)
            steps.append(f"record_event({queue})")
        device_outputs = module.forward_device(device, params, **buffers)
        outputs = module.read_outputs(device_outputs)
        steps.append("forward_device + read_outputs")
        report["addresses_kept"] = all(buffers[n].buffer_address() == a for n, a in addresses.items())
        report["outputs"] = {name: list(t.shape) for name, t in outputs.items()}
        module.release(device_outputs)
        module.release(buffers)
        for tensor in params.values():
            if isinstance(tensor, ttnn.Tensor) and tensor.storage_type() == ttnn.StorageType.DEVICE:
                ttnn.deallocate(tensor)
        ttnn.close_device(device)
        report["ok"] = True
    except Exception as exc:  # noqa: BLE001 - the report carries the real message
        report["error"] = f"{type(exc).__name__}: {str(exc)[:600]}"
    with open(out, "w") as handle:
        json.dump(report, handle, indent=1)
    sys.stdout.flush()
    os._exit(0 if report["ok"] else 1)  # the cp310-under-3.11 extension segfaults at a normal exit


if __name__ == "__main__":
    args = sys.argv[1:]
    main(args[0], args[1], args[3] if len(args) > 3 and args[2] == "--device" else "n150")
