"""The command-line main() of a generated program and its helpers (MAIN, the text after the forward): random or
.npz inputs, --check against onnxruntime, --outputs, --iterations, --trace with one or two command queues, exit
codes.  main() writes it, adapted to the program: a mesh opened and closed instead of one device (and the fabric
configured for CCL ops), settle_weights before a trace's capture, the L1_SMALL size the program's convs need."""
from __future__ import annotations

from onnx2ttnn.emit.writer import CodeWriter


MAIN = '''
TRACE_REGION_SIZE = 16777216  # --trace: DRAM bytes for the captured commands (an estimate; ttnn names its need)


def random_inputs(seed=0):
    """Seeded random inputs of the right shapes: floats ~ N(0, 1), row indices uniform below their table's rows
    (INDEX_ROWS), other integers and booleans ones (masks)."""
    generator = torch.Generator().manual_seed(seed)
    inputs = {}
    for ident, (_, shape, dtype) in INPUTS.items():
        torch_dtype = getattr(torch, dtype)
        if torch_dtype.is_floating_point:
            inputs[ident] = torch.randn(shape, generator=generator).to(torch_dtype)
        elif ident in INDEX_ROWS:
            inputs[ident] = torch.randint(0, INDEX_ROWS[ident], shape, generator=generator).to(torch_dtype)
        else:
            inputs[ident] = torch.ones(shape, dtype=torch_dtype)
    return inputs


class InputError(Exception):
    """Bad input to this program (a file, an input name or shape, the device): one error line, exit code 2."""


def printable(text):
    """`text` on one line, control characters (terminal escapes) written as escapes."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in " ".join(str(text).split()))


def load_inputs(path):
    """Inputs from an .npz keyed by ONNX input names (or by the Python argument names), checked against INPUTS."""
    try:
        data = numpy.load(path, allow_pickle=False)
    except OSError as exc:
        raise InputError(f"cannot read the inputs file {path!a}: {exc.strerror or exc}") from None
    except Exception as exc:
        raise InputError(f"the inputs file {path!a} is not an .npz of arrays ({type(exc).__name__})") from None
    if not isinstance(data, numpy.lib.npyio.NpzFile):
        raise InputError(f"the inputs file {path!a} holds one array, not an .npz keyed by input name")
    inputs = {}
    with data:
        for ident, (onnx_name, shape, dtype) in INPUTS.items():
            key = onnx_name if onnx_name in data.files else ident
            if key not in data.files:
                raise InputError(f"the inputs file {path!a} has no input {onnx_name!a}")
            try:
                array = data[key]
            except Exception as exc:
                raise InputError(f"cannot read {key!a} from the inputs file {path!a} ({type(exc).__name__}: "
                                 f"{printable(exc)})") from None
            if array.dtype.kind not in "biuf" or tuple(array.shape) != shape:
                raise InputError(f"input {onnx_name!a} in {path!a} is {array.dtype} {tuple(array.shape)}; the "
                                 f"program takes {dtype} {shape}")
            inputs[ident] = torch.from_numpy(array).to(getattr(torch, dtype))
    return inputs


def pcc(a, b):
    """Pearson correlation of two arrays; a constant one, or one of two values (whose correlation is +-1 whatever
    they are), is 1.0 or 0.0 by closeness: every value within 1e-3 + 1 % of onnxruntime's (as verify judges)."""
    a = numpy.asarray(a, dtype=numpy.float64).ravel()
    b = numpy.asarray(b, dtype=numpy.float64).ravel()
    if a.size == 0 or (numpy.array_equal(a, b)):
        return 1.0
    if a.std() == 0 or b.std() == 0 or a.size == 2:
        return 1.0 if numpy.allclose(a, b, rtol=1e-2, atol=1e-3) else 0.0
    return float(numpy.corrcoef(a, b)[0, 1])


def reference(inputs):
    """onnxruntime's outputs of the source model on `inputs` (for --check)."""
    import onnxruntime

    model = SOURCE_MODEL if os.path.isabs(SOURCE_MODEL) else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), SOURCE_MODEL)
    if not os.path.exists(model):
        raise InputError(f"--check: source model {model!a} not found")
    options = onnxruntime.SessionOptions()
    options.log_severity_level = 4  # its errors come back as the exception below, not as log records
    try:
        session = onnxruntime.InferenceSession(model, options, providers=["CPUExecutionProvider"])
        feeds = {onnx_name: inputs[ident].numpy() for ident, (onnx_name, _, _) in INPUTS.items()}
        return dict(zip(OUTPUTS, session.run(OUTPUTS, feeds)))
    except Exception as exc:
        reason = printable(exc)
        reason = reason.split(" : ", 3)[-1] if reason.startswith("[ONNXRuntimeError]") else reason
        raise InputError(f"--check: onnxruntime cannot run {model!a} on these inputs: {reason[:400]}") from None


def check(outputs, expected):
    """Compare with onnxruntime's outputs; prints PCC per output, returns True if all >= 0.99."""
    ok = True
    for name in OUTPUTS:
        value = pcc(outputs[name].numpy(), expected[name])
        ok &= value >= 0.99
        print(f"{name!a}: PCC {value:.6f} {'ok' if value >= 0.99 else 'FAIL'}")
    return ok


def save_outputs(path, outputs):
    """The outputs as an .npz keyed by ONNX output name (built here: numpy.savez takes the names as keywords)."""
    import zipfile

    with zipfile.ZipFile(path, "w") as archive:
        for name, tensor in outputs.items():
            with archive.open(name + ".npy", "w", force_zip64=True) as entry:
                numpy.lib.format.write_array(entry, numpy.asarray(tensor.numpy()), allow_pickle=False)


def load_weights(device):
    """load_parameters(device); a missing, corrupt or foreign weights file is an InputError."""
    import zipfile

    try:
        weights = numpy.load(os.path.join(os.path.dirname(os.path.abspath(__file__)), WEIGHTS), allow_pickle=False)
        if not isinstance(weights, numpy.lib.npyio.NpzFile):
            raise ValueError("not an .npz")
        weights.close()  # an .npz (a zip of arrays) is read lazily: this read its directory only
        return load_parameters(device)
    except (OSError, KeyError, ValueError, EOFError, zipfile.BadZipFile) as exc:
        reason = "not an .npz of arrays" if "pickle" in str(exc) else f"{type(exc).__name__}: {printable(exc)}"
        raise InputError(f"cannot load the weights {WEIGHTS!a} (next to this program): {reason}") from None


def open_device(args):
    """The device; with --trace, a trace region and --cqs command queues (an InputError when it cannot open)."""
    try:
        if args.trace:  # (CreateDevice's signature names num_command_queues; open_device's leaves it out)
            return ttnn.CreateDevice(device_id=args.device_id, num_command_queues=args.cqs, l1_small_size=16384,
                                     trace_region_size=args.trace_region_size)
        return ttnn.open_device(device_id=args.device_id, l1_small_size=16384)
    except Exception as exc:
        raise InputError(f"cannot open device {args.device_id}: {printable(exc)}") from None


def run(args):
    """The program's work for main(): returns True unless --check found a mismatch."""
    if args.trace and NOT_TRACEABLE:
        raise InputError(f"--trace: this program cannot be traced: {NOT_TRACEABLE}")
    if args.cqs != 1 and not args.trace:
        raise InputError("--cqs 2 needs --trace (the second command queue carries the traced run's input copies)")
    inputs = load_inputs(args.inputs) if args.inputs else random_inputs()
    expected = reference(inputs) if args.check else None  # first: inputs onnxruntime refuses are not our bug
    device = open_device(args)
    try:
        params = load_weights(device)
        if args.trace:
            outputs = run_traced(device, params, inputs, args)
        else:
            outputs = forward(device, params, **inputs)
        if args.iterations > 0 and not args.trace:
            start = time.perf_counter()
            for _ in range(args.iterations):
                outputs = forward(device, params, **inputs)
            elapsed = (time.perf_counter() - start) / args.iterations
            print(f"{args.iterations} iterations: {elapsed * 1000:.3f} ms per forward")
        for tensor in params.values():
            if isinstance(tensor, ttnn.Tensor) and tensor.storage_type() == ttnn.StorageType.DEVICE:
                ttnn.deallocate(tensor)
    finally:
        ttnn.close_device(device)
    if args.outputs:
        try:
            save_outputs(args.outputs, outputs)
        except OSError as exc:
            raise InputError(f"cannot write {args.outputs!a}: {exc.strerror or exc}") from None
    for name, tensor in outputs.items():
        print(f"{name!a}: shape {tuple(tensor.shape)}")
    return expected is None or check(outputs, expected)


def run_traced(device, params, inputs, args):
    """--trace: the forward captured once as a ttnn trace and replayed (each replay's inputs copied into the
    persistent input buffers first; with --cqs 2 on command queue 1, ordered against the replays on queue 0 by
    events); returns the outputs of the last replay."""
    buffers = forward_inputs(device, **inputs)  # persistent: allocated once, where the forward reads its inputs
    release(forward_device(device, params, **buffers))  # warm-up: compiles every op's program, outside the trace
    trace_id = ttnn.begin_trace_capture(device, cq_id=0)
    device_outputs = forward_device(device, params, **buffers)  # the replays rewrite these buffers
    ttnn.end_trace_capture(device, trace_id, cq_id=0)
    host = host_inputs(**inputs)
    queue = 1 if args.cqs == 2 else 0
    read_done = ttnn.record_event(device, 0) if args.cqs == 2 else None

    def replay():
        nonlocal read_done
        if read_done is not None:
            ttnn.wait_for_event(1, read_done)  # queue 1 waits until the last replay has read the input buffers
        for name, tensor in host.items():
            ttnn.copy_host_to_device_tensor(tensor, buffers[name], cq_id=queue)
        if read_done is not None:
            ttnn.wait_for_event(0, ttnn.record_event(device, 1))  # the replay waits for the copies
        ttnn.execute_trace(device, trace_id, cq_id=0, blocking=False)
        if read_done is not None:
            read_done = ttnn.record_event(device, 0)
        return read_outputs(device_outputs)

    outputs = replay()
    if args.iterations > 0:
        start = time.perf_counter()
        for _ in range(args.iterations):
            outputs = replay()
        elapsed = (time.perf_counter() - start) / args.iterations
        print(f"{args.iterations} iterations (traced, {args.cqs} command queue{'s' if args.cqs > 1 else ''}): "
              f"{elapsed * 1000:.3f} ms per forward")
    ttnn.release_trace(device, trace_id)
    release(device_outputs)
    release(buffers)
    return outputs


def release(tensors):
    """Deallocate each distinct device tensor of a {name: tensor} dict."""
    for tensor in {id(t): t for t in tensors.values()}.values():
        ttnn.deallocate(tensor)


def main(argv=None):
    """Exit codes: 0 done, 1 --check mismatch, 2 bad input (one error line), 3 internal error (a bug in the
    converter; ONNX2TTNN_DEBUG=1 shows the traceback)."""
    import sys

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device-id", type=int, default=0)
    parser.add_argument("--inputs", help=".npz of inputs keyed by ONNX input name (default: seeded random)")
    parser.add_argument("--outputs", help="write outputs to this .npz")
    parser.add_argument("--iterations", type=int, default=0, help="time N runs after one warm-up run")
    parser.add_argument("--check", action="store_true", help="compare with onnxruntime on the source model")
    parser.add_argument("--trace", action="store_true", help="capture the forward once as a ttnn trace and replay it")
    parser.add_argument("--cqs", type=int, choices=(1, 2), default=1,
                        help="with --trace: 2 copies the inputs on command queue 1 while queue 0 replays")
    parser.add_argument("--trace-region-size", type=int, default=TRACE_REGION_SIZE,
                        help="with --trace: bytes of DRAM the device reserves for the trace (default %(default)s)")
    args = parser.parse_args(argv)
    try:
        ok = run(args)
    except InputError as exc:
        print(f"error: {printable(exc)}", file=sys.stderr)
        raise SystemExit(2)
    except MemoryError:
        print("error: the host ran out of memory", file=sys.stderr)
        raise SystemExit(2)
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        raise SystemExit(130)
    except Exception as exc:
        if os.environ.get("ONNX2TTNN_DEBUG", "") not in ("", "0"):
            raise
        print(f"internal error: {type(exc).__name__}: {printable(exc)} (set ONNX2TTNN_DEBUG=1 for the traceback; "
              "please report it)", file=sys.stderr)
        raise SystemExit(3)
    if not ok:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
'''


OPEN_DEVICE = """        return ttnn.open_device(device_id=args.device_id, l1_small_size=16384)
    except Exception as exc:
        raise InputError(f"cannot open device {args.device_id}: {printable(exc)}") from None"""
OPEN_MESH = """        # a {rows}x{cols} mesh of chips (--device-id is not used): the batch is split over them
        return ttnn.open_mesh_device(ttnn.MeshShape({rows}, {cols}), l1_small_size=16384)
    except Exception as exc:
        raise InputError(f"cannot open a {rows}x{cols} mesh of devices: {{printable(exc)}}") from None"""
CLOSE_DEVICE = "        ttnn.close_device(device)"
WARM_UP = "    release(forward_device(device, params, **buffers))  # warm-up: compiles every op's program, outside the trace"
# CCL ops need the ethernet fabric configured before the mesh opens (docs/ttnn-facts.md §27)
FABRIC = """        ttnn.set_fabric_config(ttnn.FabricConfig.FABRIC_1D)  # the CCL ops move data over the fabric
"""
CLOSE_FABRIC = "\n        ttnn.set_fabric_config(ttnn.FabricConfig.DISABLED)"
# a program with an output that is a sequence or map (fallback/values.py: ZipMap's list of dicts) reads each
# output through as_array for --check, --outputs and the shapes it prints
AS_ARRAY = '''def as_array(value):
    """An output as one numpy array: a tensor's values; a sequence or map as onnxruntime returns it (ZipMap's
    list of dicts), a map's values in key order and a sequence's items stacked (a list of N maps of K keys:
    [N, K]), or, when their shapes differ (SplitToSequence's uneven pieces), their values one after another."""
    if isinstance(value, (dict, list, tuple)):
        items = [as_array(value[key]) for key in sorted(value)] if isinstance(value, dict) else \
            [as_array(item) for item in value]
        if len({item.shape for item in items}) > 1:
            return numpy.concatenate([item.reshape(-1) for item in items])
        return numpy.array(items)
    return numpy.asarray(value.float().numpy() if getattr(value, "dtype", None) is torch.bfloat16 else
                         value.numpy() if hasattr(value, "numpy") else value)


def check(outputs, expected):'''
VALUE_READS = (("def check(outputs, expected):", AS_ARRAY),
               ("pcc(outputs[name].numpy(), expected[name])", "pcc(as_array(outputs[name]), as_array(expected[name]))"),
               ("numpy.asarray(tensor.numpy())", "as_array(tensor)"),
               ("shape {tuple(tensor.shape)}", "shape {as_array(tensor).shape}"))


def main(w: CodeWriter, mesh: tuple[int, int] = (1, 1), settle: bool = False, fabric: bool = False,
         l1_small_size: int = 16384, values: bool = False) -> None:
    """main() and its helpers; on a mesh of chips run() opens and closes the mesh instead of one device; with
    `fabric` (a program with CCL ops, tensor parallel) it sets the fabric config first and resets it after
    (data parallel moves nothing between chips and sets none, docs/design.md §6.19).  `settle`: the program has
    settle_weights (emit/conv_resident.py), which a traced run calls after its warm-up, before the capture.
    `l1_small_size`: the L1_SMALL region the device or mesh opens with (module.l1_small_size).  `values`: an
    output is a sequence or map, read through as_array (VALUE_READS)."""
    text = MAIN.strip("\n")
    if settle:
        assert WARM_UP in text
        text = text.replace(WARM_UP, WARM_UP + "\n    settle_weights(params)  # before the capture: not part of the trace")
    if mesh != (1, 1):
        assert OPEN_DEVICE in text and CLOSE_DEVICE in text
        opening = OPEN_MESH.format(rows=mesh[0], cols=mesh[1])
        text = text.replace(OPEN_DEVICE, FABRIC + opening if fabric else opening)
        text = text.replace(CLOSE_DEVICE, "        ttnn.close_mesh_device(device)" + (CLOSE_FABRIC if fabric else ""))
    if l1_small_size != 16384:  # the region the program's convs need (memory/l1_small.py, docs/design.md §6.33)
        assert "l1_small_size=16384" in text
        text = text.replace("l1_small_size=16384", f"l1_small_size={int(l1_small_size)}")
    for old, new in VALUE_READS if values else ():
        assert text.count(old) == 1
        text = text.replace(old, new)
    for raw in text.splitlines():
        w.line(raw)
