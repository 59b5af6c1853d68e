#!/usr/bin/env python
"""Run one generated onnx2ttnn program on the REAL ttnn 0.81.1 in tt-metal mock-device mode.

Use the mock venv's python with env.sh sourced (or `tools/ttnn_mock/run.sh`, which does both):

    run_program.py PROGRAM.py [--weights W.npz] [--inputs I.npz] [--device n150|p150] [--json OUT.json]
                   [--forward-calls 2]

The program is imported as a module and must define
    load_parameters(device, path) -> params          (path: the --weights file, or None)
    forward(device, params, **inputs) -> outputs     (inputs: torch tensors keyed by Python identifiers)
    INPUTS = {name: (shape tuple, "torch.float32" | "float32" | torch.dtype)}   (module level)
Without --inputs, seeded random inputs are made from INPUTS (floats randn, ints/bools zeros).
forward runs twice by default (the memory trace and peak are the first call's; memory is counted after the
last): the second call takes what the first one left in params (conv weights prepared on the device), and
those device tensors count as parameters.

Writes JSON (to --json, else stdout):
    {"ok", "error", "error_type", "stage", "error_location", "memory_after_open", "memory_after_params",
     "memory_after_forward", "memory_after_clearing_program_cache", "program_cache_bytes_per_bank", "peak",
     "buffers" (what is still allocated once the program cache is cleared: parameter_or_persistent /
     prepared_parameter (put in params by forward) / output / allocated_in_forward), "leaked_buffers_per_bank", "outputs", "timings", ...}
The JSON file is rewritten at every stage change, so if ttnn kills the process (it aborts on some misuse,
e.g. using a deallocated tensor) the file still says {"ok": false, "stage": <where it died>}.
The process ends with os._exit(0 if ok else 1): on Python 3.11 (renamed cp310 extension) CPython segfaults
in interpreter shutdown, which must not hide the result.

This file and its siblings know nothing about the converter: they only load the generated file.
run_report.py keeps the JSON report and the progress file, run_device.py reads memory and tensors off the
device and traces every ttnn call, run_inputs.py makes the inputs.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import sys
import time

import run_report
from run_device import OpTracer, describe, flatten_outputs, memory, release_outputs
from run_inputs import make_inputs
from run_report import PROGRESS, STATE, enter_stage, error_location, error_text, finish


def supervise(argv, args):
    """Run the program in a child process; if ttnn kills it (segfault/abort), still write a report."""
    import collections
    import signal
    import subprocess
    import tempfile

    tmpdir = tempfile.mkdtemp(prefix="ttnn_mock_run_")
    out_json = os.path.abspath(args.json) if args.json else None
    child_json = out_json or os.path.join(tmpdir, "result.json")
    progress = os.path.join(tmpdir, "progress.json")
    if out_json and os.path.exists(out_json):
        os.remove(out_json)
    cmd = [sys.executable, os.path.abspath(__file__)] + argv + ["--in-process", "--progress-file", progress]
    if not out_json:
        cmd += ["--json", child_json]
    proc = subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True, errors="replace")
    tail = collections.deque(maxlen=200)
    for line in proc.stderr:
        sys.stderr.write(line)
        tail.append(line.rstrip("\n"))
    rc = proc.wait()
    try:
        with open(child_json) as f:
            res = json.load(f)
    except (OSError, ValueError):
        res = {"ok": None, "error": None, "stage": None, "program": os.path.abspath(args.program)}
    if rc not in (0, 1) or res.get("ok") is None:
        res["ok"] = False
        sig = -rc if rc < 0 else (rc - 128 if rc > 128 else None)
        try:
            signame = signal.Signals(sig).name if sig else f"exit status {rc}"
        except ValueError:
            signame = f"signal {sig}"
        try:
            with open(progress) as f:
                prog = json.loads(f.read().strip() or "{}")
        except (OSError, ValueError):
            prog = {}
        stage = prog.get("stage") or res.get("stage")
        where = f"during stage '{stage}'"
        loc = None
        if prog.get("ttnn_call"):
            where += f", in ttnn.{prog['ttnn_call']}"
        if prog.get("program_line"):
            line = prog["program_line"]
            code = ""
            try:
                with open(os.path.abspath(args.program)) as f:
                    code = f.read().splitlines()[line - 1].strip()
            except (OSError, IndexError):
                pass
            loc = {"line": line, "function": None, "code": code}
            where += f" at program line {line}: {code}"
        fatal = [ln for ln in tail if re.search(r"TT_FATAL|TT_THROW|critical|Error|error:", ln)
                 and not ln.startswith("[vm:")]
        msg = f"process killed by {signame} {where}"
        if fatal:
            msg += "\n" + "\n".join(fatal[-5:])
        res.update({"error": msg, "error_type": "ProcessCrash", "stage": stage, "error_location": loc,
                    "crash": {"returncode": rc, "signal": signame, "last_ttnn_call": prog.get("ttnn_call"),
                              "stderr_tail": list(tail)[-30:]}})
        if prog.get("ttnn_call"):
            res["failing_ttnn_call"] = prog["ttnn_call"]
    text = json.dumps(res, indent=1, default=str)
    if out_json:
        with open(out_json, "w") as f:
            f.write(text)
        status = "ok" if res.get("ok") else f"FAILED at {res.get('stage')}: {res.get('error')}"
        sys.stderr.write(f"[run_program] {status} -> {out_json}\n")
    else:
        sys.stdout.write(text + "\n")
    sys.stdout.flush()
    for name in os.listdir(tmpdir):
        os.remove(os.path.join(tmpdir, name))
    os.rmdir(tmpdir)
    return 0 if res.get("ok") else 1


def program_l1_small_size(program: str) -> int:
    """The l1_small_size the program's own open_device passes (the converter sizes it from the program's convs,
    docs/design.md §6.33); 16384 when the program names none."""

    with open(program) as f:
        found = re.search(r"ttnn\.open_device\(device_id=args\.device_id, l1_small_size=(\d+)\)", f.read())
    return int(found.group(1)) if found else 16384


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("program")
    ap.add_argument("--weights", help="weights file passed to load_parameters (default: PROGRAM stem + .npz if it exists)")
    ap.add_argument("--inputs", help=".npz of inputs (keys: graph input names or their identifiers)")
    ap.add_argument("--device", choices=["n150", "p150"], default=None,
                    help="mock cluster descriptor (default n150, or TT_METAL_MOCK_CLUSTER_DESC_PATH if set)")
    ap.add_argument("--json", help="write the result here (default: stdout)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--forward-calls", type=int, default=2,
                    help="forward passes to run (the later ones reuse what the first prepared)")
    ap.add_argument("--l1-small-size", type=int, default=None,
                    help="default: what the program's main() opens its device with (16384 if it names none)")
    ap.add_argument("--no-readback", action="store_true", help="do not call ttnn.to_torch on the outputs")
    ap.add_argument("--no-trace", action="store_true", help="do not sample memory after every ttnn call")
    ap.add_argument("--op-trace", action="store_true", help="include the per-call memory samples in the JSON")
    ap.add_argument("--in-process", action="store_true",
                    help="run here instead of in a supervised child process (a crash then loses the report)")
    ap.add_argument("--progress-file", help=argparse.SUPPRESS)
    argv = list(sys.argv[1:] if argv is None else argv)
    args = ap.parse_args(argv)
    if not args.in_process:
        return supervise(argv, args)

    program = os.path.abspath(args.program)
    run_report.JSON_PATH = os.path.abspath(args.json) if args.json else None
    weights = os.path.abspath(args.weights) if args.weights else None
    if weights is None:
        stem = os.path.splitext(program)[0]
        for cand in (stem + ".npz", stem + ".weights.npz", stem + "_weights.npz"):
            if os.path.exists(cand):
                weights = cand
                break
    inputs_path = os.path.abspath(args.inputs) if args.inputs else None
    if args.progress_file:
        PROGRESS.open(args.progress_file, program)

    STATE.update({"ok": None, "error": None, "error_type": None, "stage": None, "error_location": None,
                  "program": program, "weights": weights, "inputs": inputs_path, "device": None,
                  "memory_after_open": None, "memory_after_params": None, "memory_after_forward": None,
                  "peak": None, "buffers": [], "outputs": [], "timings": {}})

    # the mock cluster descriptor must be chosen before ttnn initializes tt-metal
    desc_dir = os.environ.get("ONNX2TTNN_TTNN_MOCK_DESC_DIR") or os.path.join(
        os.environ.get("ONNX2TTNN_TTNN_MOCK_HOME", os.path.expanduser("~/.cache/onnx2ttnn/ttnn-mock")), "mock")
    if args.device or not os.environ.get("TT_METAL_MOCK_CLUSTER_DESC_PATH"):
        os.environ["TT_METAL_MOCK_CLUSTER_DESC_PATH"] = os.path.join(desc_dir, f"{args.device or 'n150'}.yaml")
    STATE["device"] = {"name": args.device or os.path.splitext(os.path.basename(
        os.environ["TT_METAL_MOCK_CLUSTER_DESC_PATH"]))[0], "descriptor": os.environ["TT_METAL_MOCK_CLUSTER_DESC_PATH"]}
    # tt-metal writes ./generated/... into the CWD: keep that out of the caller's tree
    workdir = os.environ.get("ONNX2TTNN_TTNN_MOCK_WORKDIR")
    if workdir:
        os.makedirs(workdir, exist_ok=True)
        os.chdir(workdir)

    timings = STATE["timings"]
    ttnn = device = None
    tracer = None
    try:
        enter_stage("import")
        t0 = time.time()
        import torch  # noqa: F401
        import ttnn  # noqa: F811
        timings["import_ttnn"] = round(time.time() - t0, 3)

        enter_stage("import_program")
        t0 = time.time()
        prog_dir = os.path.dirname(program)
        if prog_dir not in sys.path:
            sys.path.insert(0, prog_dir)
        spec = importlib.util.spec_from_file_location("onnx2ttnn_program", program)
        module = importlib.util.module_from_spec(spec)
        sys.modules["onnx2ttnn_program"] = module
        spec.loader.exec_module(module)
        for fn in ("load_parameters", "forward"):
            if not callable(getattr(module, fn, None)):
                raise AttributeError(f"program {program} does not define {fn}()")
        timings["import_program"] = round(time.time() - t0, 3)

        enter_stage("make_inputs")
        inputs = make_inputs(torch, module, inputs_path, args.seed)
        STATE["input_specs"] = {k: {"shape": list(v.shape), "dtype": str(v.dtype)} for k, v in inputs.items()}

        enter_stage("open_device")
        t0 = time.time()
        device = ttnn.open_device(device_id=0, l1_small_size=args.l1_small_size or program_l1_small_size(program))
        g = device.compute_with_storage_grid_size()
        STATE["device"]["grid"] = [int(g.x), int(g.y)]
        STATE["memory_after_open"] = memory(ttnn, device)
        timings["open_device"] = round(time.time() - t0, 3)

        if not args.no_trace:
            tracer = OpTracer(ttnn, device, args.op_trace)
            tracer.install()

        enter_stage("load_parameters")
        t0 = time.time()
        params = module.load_parameters(device, weights)
        timings["load_parameters"] = round(time.time() - t0, 3)
        STATE["memory_after_params"] = memory(ttnn, device)
        param_blocks = {(bt, b["address"]) for bt in ("L1", "DRAM")
                        for b in STATE["memory_after_params"][bt]["allocated_blocks"]}
        if tracer:
            tracer.peak = {"L1": 0, "DRAM": 0}
            tracer.peak_at = {"L1": None, "DRAM": None}
            STATE["ttnn_calls_in_load_parameters"] = tracer.count
            tracer.count = 0
            tracer.calls = []

        enter_stage("forward")
        t0 = time.time()
        out = module.forward(device, params, **inputs)
        timings["forward"] = round(time.time() - t0, 3)
        if tracer:
            tracer.uninstall()
            STATE["ttnn_calls_in_forward"] = tracer.count
            STATE["peak"] = {"l1_allocated_per_bank": tracer.peak["L1"], "l1_peak_after": tracer.peak_at["L1"],
                             "dram_allocated_per_bank": tracer.peak["DRAM"], "dram_peak_after": tracer.peak_at["DRAM"],
                             "note": "sampled after each top-level ttnn call of forward(); op-internal "
                                     "circular buffers and temporaries are not included"}
            if args.op_trace:
                STATE["op_trace"] = tracer.calls
        if args.forward_calls > 1:  # the steady state: convs reuse the weights the first call prepared
            enter_stage("forward_again")
            t0 = time.time()
            for _ in range(args.forward_calls - 1):
                release_outputs(ttnn, out)
                out = module.forward(device, params, **inputs)
            timings["forward_again"] = round(time.time() - t0, 3)
        # what the program keeps in params (conv weights prepared on the device by the first call) is
        # parameter memory too
        held = {(str(t.memory_config().buffer_type).split(".")[-1], t.buffer_address())
                for t in params.values() if isinstance(t, ttnn.Tensor)
                and t.storage_type() == ttnn.StorageType.DEVICE and t.is_allocated()}
        STATE["memory_after_forward"] = memory(ttnn, device)
        # ops such as conv2d and the pools keep small config tensors alive in the program cache; they are
        # the library's, not the program's, so they are released before the program's buffers are counted
        STATE["program_cache_entries"] = int(device.num_program_cache_entries())
        device.clear_program_cache()
        STATE["memory_after_clearing_program_cache"] = memory(ttnn, device)
        STATE["program_cache_bytes_per_bank"] = {
            bt: STATE["memory_after_forward"][bt]["total_bytes_allocated_per_bank"]
            - STATE["memory_after_clearing_program_cache"][bt]["total_bytes_allocated_per_bank"]
            for bt in ("L1", "DRAM", "L1_SMALL")}
        outs = flatten_outputs(out)
        STATE["outputs"] = [dict(name=k, **describe(ttnn, v)) for k, v in outs]
        out_addr = {}
        for o in STATE["outputs"]:
            if o.get("buffer_address") is not None:
                out_addr.setdefault(o.get("buffer_type", "").split(".")[-1], set()).add(o["buffer_address"])
        base = {bt: int(ttnn.get_allocator_base_address(device, getattr(ttnn.BufferType, bt)))
                if hasattr(ttnn, "get_allocator_base_address") else 0 for bt in ("L1", "DRAM")}
        STATE["allocator_base_address"] = base
        bufs = []
        for bt in ("L1", "DRAM"):
            for b in STATE["memory_after_clearing_program_cache"][bt]["allocated_blocks"]:
                in_params = (bt, b["address"]) in held or (bt, b["address"] + base[bt]) in held
                kind = ("parameter_or_persistent" if (bt, b["address"]) in param_blocks
                        else "prepared_parameter" if in_params else "allocated_in_forward")
                if b["address"] + base[bt] in out_addr.get(bt, set()) or b["address"] in out_addr.get(bt, set()):
                    kind = "output"
                bufs.append({"buffer_type": bt, "address": b["address"], "size_per_bank": b["size"], "kind": kind})
        STATE["buffers"] = bufs
        STATE["leaked_buffers_per_bank"] = {
            bt: sum(b["size_per_bank"] for b in bufs if b["buffer_type"] == bt and b["kind"] == "allocated_in_forward")
            for bt in ("L1", "DRAM")}

        if not args.no_readback:
            enter_stage("readback")
            t0 = time.time()
            for (k, v), d in zip(outs, STATE["outputs"]):
                if isinstance(v, ttnn.Tensor):
                    tt = ttnn.to_torch(v)
                    d["torch_shape"], d["torch_dtype"] = list(tt.shape), str(tt.dtype)
            timings["readback"] = round(time.time() - t0, 3)

        enter_stage("close_device")
        ttnn.close_device(device)
        device = None
        STATE["stage"] = "done"
        finish(True)
    except BaseException as e:  # noqa: BLE001 - everything is reported in the JSON
        if tracer is not None and tracer.failed_op is not None:
            STATE["failing_ttnn_call"] = tracer.failed_op
        STATE["error"] = error_text(e)
        STATE["error_type"] = type(e).__name__
        STATE["error_location"] = error_location(e, program)
        if ttnn is not None and device is not None:
            try:
                STATE["memory_at_error"] = memory(ttnn, device)
            except Exception:  # noqa: BLE001
                pass
        finish(False)


if __name__ == "__main__":
    sys.exit(main())
