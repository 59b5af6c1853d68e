#!/usr/bin/env python
"""Run a generated multi-chip program's own main() on the REAL ttnn 0.81.1 in mock mode, on a mock n300 or
T3000 (the descriptors setup.sh writes with cluster_desc.py).

    run_mesh.py PROGRAM.py --device n300|t3k --json OUT.json [PROGRAM ARGS...]

The program opens its mesh, uploads with its mesh mappers, runs forward, reads back with its composers and
closes the mesh, exactly as a user runs it.  Written to OUT.json: {"exit": main's exit code, "chips": chips
the mesh opened with, "memory_at_close": {"L1": .., "DRAM": ..} bytes per bank still allocated on a chip
when the program closed the mesh (ttnn's memory view of a mesh is one chip's; a data-parallel program
allocates alike on every chip), the same after clearing the program cache ("memory_after_clearing_program_cache":
what the program itself left), "load_parameters": what load_parameters allocated, by ttnn.graph capture
({"buffers": [[buffer type, bytes], ...] in allocation order, "freed": buffers it freed again, "device_operations":
the device programs it ran; docs/ttnn-facts.md §36: an upload converted on the device shows its transient buffers
and Tilize / Typecast operations here}, "parameters": how many device tensors it returned (a conv weight stays
on the host), "stdout"}.  Mock devices compute nothing (values read back are zeros), so --check is not
meaningful here: numerics come from the simulator.  Ends with os._exit (the cp310 extension
crashes CPython 3.11 at teardown).
"""
from __future__ import annotations

import contextlib
import importlib.util
import io
import json
import os
import sys


def main() -> None:
    program, device, out = sys.argv[1], sys.argv[sys.argv.index("--device") + 1], sys.argv[sys.argv.index("--json") + 1]
    rest = [a for k, a in enumerate(sys.argv[2:], 2) if a not in ("--device", "--json")
            and sys.argv[k - 1] not in ("--device", "--json")]
    os.environ["TT_METAL_MOCK_CLUSTER_DESC_PATH"] = os.path.join(os.environ["ONNX2TTNN_TTNN_MOCK_DESC_DIR"],
                                                                 f"{device}.yaml")
    import ttnn

    report = {"exit": None, "chips": None, "memory_at_close": None}
    close = ttnn.close_mesh_device

    def used(mesh):
        return {name: int(ttnn.get_memory_view(mesh, getattr(ttnn.BufferType, name)).total_bytes_allocated_per_bank)
                for name in ("L1", "DRAM")}

    def recording_close(mesh):
        report["chips"] = mesh.get_num_devices()
        report["memory_at_close"] = used(mesh)
        mesh.clear_program_cache()  # ops' own config tensors (docs/ttnn-facts.md §12), not the program's
        report["memory_after_clearing_program_cache"] = used(mesh)
        close(mesh)

    ttnn.close_mesh_device = recording_close
    spec = importlib.util.spec_from_file_location("mesh_program", program)
    module = importlib.util.module_from_spec(spec)
    captured = io.StringIO()
    try:
        spec.loader.exec_module(module)
        load = module.load_parameters

        def recording_load(*args, **kwargs):
            ttnn.graph.begin_graph_capture(ttnn.graph.RunMode.NORMAL)
            try:
                params = load(*args, **kwargs)
            finally:
                report["load_parameters"] = _loaded(ttnn.graph.end_graph_capture())
            report["parameters"] = sum(isinstance(v, ttnn.Tensor) and v.storage_type() == ttnn.StorageType.DEVICE
                                       for v in params.values())
            return params

        module.load_parameters = recording_load
        with contextlib.redirect_stdout(captured):
            module.main(rest)
        report["exit"] = 0
    except SystemExit as exc:
        report["exit"] = exc.code if isinstance(exc.code, int) else 1
    except BaseException as exc:  # noqa: BLE001 (reported, not raised: the JSON is the result)
        report["exit"] = 3
        report["error"] = f"{type(exc).__name__}: {str(exc).split('backtrace')[0][:2000]}"
    report["stdout"] = captured.getvalue()[-4000:]
    with open(out, "w") as f:
        json.dump(report, f, indent=1)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def _loaded(trace: list) -> dict:
    """The buffers allocated and freed and the device operations run in a ttnn.graph capture."""
    out = {"buffers": [], "freed": [], "device_operations": []}
    for node in trace:
        kind, params = node.get("node_type"), node.get("params", {})
        if kind in ("buffer_allocate", "buffer_deallocate"):
            out["buffers" if kind == "buffer_allocate" else "freed"].append([params.get("type"), int(params["size"])])
        elif kind == "function_start" and "DeviceOperation" in str(params.get("name")):
            out["device_operations"].append(str(params["name"]))
    return out


if __name__ == "__main__":
    main()
