"""The command line: onnx2ttnn convert | verify | report | ops.

Every command runs inside one error boundary (`boundary`): bad input of any kind (the model, the options,
the files, an --inputs file, a model onnxruntime refuses, the host's memory) prints one `error:` message and
exits 2; a verification mismatch prints the report and exits 1; anything else is a compiler bug, which
prints the internal-error line and exits 3 (with ONNX2TTNN_DEBUG=1 it raises, traceback and all).  Messages
pass through messages.clean_message, so a model's names never reach the terminal as control characters.
docs/errors.md lists the messages.
"""
from __future__ import annotations

import functools
import os
import re
import sys
from collections import Counter

import click

from onnx2ttnn.emit.weights import CODES
from onnx2ttnn.errors import ConversionError
from onnx2ttnn.ir.device import DEVICES
from onnx2ttnn.limits import INT64_MAX
from onnx2ttnn.messages import DEBUG_VARIABLE, clean_message, escape_name, internal_error_line
from onnx2ttnn.options import (ACTIVATION_FORMATS, COMPUTE_DTYPES, MATH_FIDELITIES, MEMORY_POLICIES, PARALLEL_MODES,
                               WEIGHT_FORMATS, Options)
from onnx2ttnn.parallel import auto_line
from onnx2ttnn.report import region_lines

EXIT_MISMATCH, EXIT_ERROR, EXIT_INTERNAL = 1, 2, 3


def parse_input_shapes(values: tuple[str, ...]) -> dict[str, tuple[int, ...]]:
    """NAME=1,3,224,224 (repeatable) -> {NAME: (1, 3, 224, 224)}; the name may itself contain '='."""
    shapes = {}
    for text in values:
        name, sep, dims = text.rpartition("=")
        parts = dims.split(",")
        if not sep or not name or not all(re.fullmatch(r"[0-9]+", d.strip()) for d in parts):
            fail(f"--input-shape {text!r}: expected NAME=D0,D1,... with positive integers")
        shape = tuple(int(d) for d in parts)
        if any(d <= 0 or d > INT64_MAX for d in shape):
            fail(f"--input-shape {text!r}: every dimension must be from 1 to {INT64_MAX} (int64, as ONNX dims are)")
        shapes[name] = shape
    return shapes


def fail(message: str) -> None:
    """The one way a command reports bad input: `error: MESSAGE` on stderr, exit code 2."""
    click.echo(f"error: {clean_message(message)}", err=True)
    sys.exit(EXIT_ERROR)


def boundary(command):
    """Run `command` so that nothing but an `error:` line (exit 2) or the internal-error line (exit 3) leaves
    it: ConversionError is bad input; OSError a file the user named; MemoryError a model, shape or input
    too large for this host; any other exception a compiler bug."""
    @functools.wraps(command)
    def run(*args, **kwargs):
        try:
            return command(*args, **kwargs)
        except (SystemExit, click.exceptions.Exit, click.ClickException, click.Abort, KeyboardInterrupt):
            raise
        except ConversionError as exc:
            fail(str(exc))
        except OSError as exc:
            fail(os_error_message(exc))
        except MemoryError:
            fail(f"the host ran out of memory running `onnx2ttnn {command.__name__}`: the model, its input shapes "
                 "or its inputs need more memory than this machine has")
        except Exception as exc:  # a compiler bug, not bad input: say so, keep the traceback behind a flag
            if os.environ.get(DEBUG_VARIABLE, "") not in ("", "0"):
                raise
            click.echo(clean_message(internal_error_line(exc)), err=True)
            sys.exit(EXIT_INTERNAL)
    return run


def os_error_message(exc: OSError, default: str = "") -> str:
    """'cannot use 'path': No such file or directory' for an OSError (its file, else `default`)."""
    name = exc.filename if exc.filename is not None else default
    reason = exc.strerror or str(exc) or type(exc).__name__
    return f"cannot use {escape_name(name)}: {reason}" if name else reason


def model_options(fn):
    """Options shared by convert and verify."""
    decorators = [
        click.option("--input-shape", "input_shape", multiple=True, metavar="NAME=D0,D1,...",
                     help="static shape for a graph input (repeatable)"),
        click.option("--device", type=click.Choice(sorted(DEVICES)), default="n150", show_default=True,
                     help="target device: n150 and p150 are one chip; n300 (2 chips), t3k (8) and galaxy (32) "
                          "are meshes, used whole unless --mesh says otherwise"),
        click.option("--mesh", default="", metavar="RxC",
                     help="the mesh of chips to run on, rows x columns (default: the device's whole mesh: n300 "
                          "1x2, t3k 1x8, galaxy 4x8; t3k also 2x4); --mesh 1x1 runs on one chip, as "
                          "--device n300 did before meshes"),
        click.option("--parallel", type=click.Choice(list(PARALLEL_MODES)), default=Options.parallel,
                     show_default=True,
                     help="how the chips share the work: dp splits the batch (dim 0 of every input) over the "
                          "chips with the weights replicated; tp splits each transformer layer over a mesh row "
                          "(Megatron pairs, an all_reduce after each) and the batch over the rows; auto "
                          "is tp when the weights do not fit one chip or the batch does not divide, dp when tp "
                          "cannot split the model or the mesh has one column, else the one of lower modelled "
                          "time per forward (both converted, times in the summary)"),
        click.option("--memory", type=click.Choice(list(MEMORY_POLICIES)), default=Options.memory, show_default=True,
                     help="placement policy: auto (L1, height or width sharding chosen by the cost model), dram "
                          "interleaved everywhere, or L1 interleaved where it fits"),
        click.option("--dtype", type=click.Choice(list(COMPUTE_DTYPES)), default="auto", show_default=True,
                     help="compute dtype of float tensors"),
        click.option("--math-fidelity", "math_fidelity", type=click.Choice(list(MATH_FIDELITIES)),
                     default=Options.math_fidelity, show_default=True,
                     help="math fidelity of matmul, linear, conv, softmax and norm calls: auto (LoFi for "
                          "bfloat4_b operands, HiFi2 for bfloat8_b, HiFi4 for bf16 and fp32) or one for all"),
        click.option("--weights", type=click.Choice(list(WEIGHT_FORMATS)), default=Options.weights,
                     show_default=True,
                     help="device format of matmul, linear, conv and embedding weights: auto (bfloat8_b or "
                          "bfloat4_b per weight where its rounding error stays within the model's budget, else "
                          "bf16), or bf16, bfp8, bfp4 for all (embedding tables: bfloat8_b at most)"),
        click.option("--activations", type=click.Choice(list(ACTIVATION_FORMATS)), default=Options.activations,
                     show_default=True,
                     help="device format of the activations a matmul or linear writes when only matmuls and "
                          "linears read them: auto (bfloat8_b while the model's error budget, after the "
                          "weights, holds; none under --weights bf16), bf16, or bfp8 for all such"),
        click.option("--no-fallback", "no_fallback", is_flag=True,
                     help="refuse host fallbacks (ONNX ops computed with torch on the host): fail, naming every "
                          "op type that has no ttnn lowering"),
    ]
    for d in reversed(decorators):
        fn = d(fn)
    return fn


@click.group()
@click.version_option(package_name="onnx2ttnn")
def main() -> None:
    """Convert ONNX models into Python programs that run on Tenstorrent devices through ttnn."""


@main.command()
@click.argument("model", required=False)
@click.option("-o", "--output", help="the generated program (.py); its weights go next to it (.npz)")
@model_options
@click.option("--emit-ir", "emit_ir", help="also write the annotated IR as ONNX (opens in Netron)")
@click.option("--print-pipeline", is_flag=True, help="print the passes in order and exit")
@click.option("--dump-ir-after", multiple=True, metavar="PASS",
              help="also write the IR after PASS next to the program, as ir_after_PASS.onnx (repeatable)")
@click.option("--keep-failed-dumps", is_flag=True,
              help="when the conversion fails, still write the --dump-ir-after files of the passes that ran")
@click.option("--verify-each", "verify_each", is_flag=True,
              help="check the IR after every pass (declared notes, layouts, shapes, deallocations); slower, "
                   "the generated program is the same")
@boundary
def convert(model, output, input_shape, device, mesh, parallel, memory, dtype, math_fidelity, weights, activations,
            no_fallback, emit_ir, print_pipeline, dump_ir_after, keep_failed_dumps, verify_each):
    """Convert MODEL (.onnx) into a ttnn Python program."""
    from onnx2ttnn.passes.pipeline import PassManager, build_pipeline, pipeline_text

    if print_pipeline:
        click.echo(pipeline_text())
        return
    if not model:
        fail("missing MODEL (the .onnx file to convert)")
    if not output:
        fail("missing -o/--output (the program to write, e.g. model_ttnn.py)")
    if not output.endswith(".py"):
        fail(f"the output {output!r} must be a .py file")
    manager = PassManager(build_pipeline())
    unknown = [p for p in dump_ir_after if p not in manager.known]
    if unknown:
        fail(f"--dump-ir-after: unknown pass {', '.join(map(escape_name, unknown))}; see --print-pipeline")
    from onnx2ttnn.convert import convert as run_convert, output_files
    from onnx2ttnn.emit.publish import check_distinct

    dump_dir = os.path.dirname(os.path.abspath(output))
    dumped = tuple(dict.fromkeys(p.name for p in manager.passes if p.name in dump_ir_after))
    outputs = output_files(output, ir_path=emit_ir, dump_dir=dump_dir, dump_passes=dumped)
    for _, path in outputs:
        _check_writable(path)
    check_distinct([("the model", model)], outputs)  # its external data files too, once read (Conversion.write)
    shapes = parse_input_shapes(input_shape)
    result = run_convert(model, output, input_shapes=shapes, device=device, mesh=mesh, parallel=parallel,
                         memory=memory, dtype=dtype, math_fidelity=math_fidelity, weights=weights,
                         activations=activations, fallback=not no_fallback, dump_ir_after=tuple(dump_ir_after),
                         dump_dir=dump_dir, keep_failed_dumps=keep_failed_dumps, **({"verify_each": True} if verify_each else {}),
                         progress=lambda name: click.echo(f"  {name} ...", err=True))
    try:
        program, weights_path = result.write(output, ir_path=emit_ir)
    except OSError as exc:
        fail(f"cannot write {escape_name(exc.filename or output)}: {exc.strerror or exc}")
    click.echo(summary(result, program, weights_path))


def _check_writable(path: str) -> None:
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        fail(f"cannot write {path!r}: folder {folder!r} does not exist")
    if os.path.exists(path) and not os.path.isfile(path):
        fail(f"cannot write {path!r}: it exists and is not a file")
    if not os.access(folder, os.W_OK) or (os.path.exists(path) and not os.access(path, os.W_OK)):
        fail(f"cannot write {path!r}: permission denied")


def summary(result, program: str, weights: str) -> str:
    counts = result.op_counts()
    ops = ", ".join(f"{op} {n}" for op, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))
    times = ", ".join(f"{name} {seconds * 1000:.0f} ms" for name, seconds in result.timings)
    fallbacks = result.fallback_counts()
    hosted = ", ".join(f"{op} {n}" for op, n in sorted(fallbacks.items(), key=lambda kv: (-kv[1], kv[0])))
    regions = [os.path.join(os.path.dirname(weights), name) for name in result.program.regions]
    return clean_message("\n".join([
        f"wrote {program} and {weights}" + "".join(f" and {region}" for region in regions),
        f"ttnn calls: {sum(counts.values())} ({ops})",
        f"host fallback nodes: {sum(fallbacks.values())}" + (f" ({hosted})" if hosted else ""),
        *_fusions_line(result.module.notes),
        *region_lines(result.region_summaries()),
        _weights_line(result.program.weights, result.weight_bytes()),
        *_quantized_line(result.quantized_weights()),
        f"trace: {result.program.trace}",
        *_formats_line(result.weight_formats()),
        *_dtype_line(result.module.notes.get("settle-dtype", {})),
        *_gain_line(result.module.notes.get("measure-weight-gain", {})),
        *([auto_line(result.auto)] if result.auto else []),
        *_activations_line(result.module.notes.get("choose-activation-formats", {})),
        f"time: {times}",
    ]))


def _fusions_line(notes: dict) -> list[str]:
    """The summary line of the fusion rules applied, with how many times (attention says its form): the
    patterns before lowering and the epilogues after it."""
    applied = Counter()
    for fusion_pass in ("fuse-patterns", "fuse-epilogues"):
        applied.update(notes.get(fusion_pass, {}).get("applied", {}))
    if not applied:
        return []
    return ["fused: " + ", ".join(f"{name} {n}" for name, n in sorted(applied.items(), key=lambda kv: (-kv[1], kv[0])))]


def _weights_line(stored: dict, nbytes: int) -> str:
    """The weights file's tensors and bytes; a quantized weight kept as codes and scales counts once."""
    compact = sum(1 for key in stored if key.endswith(CODES))
    return (f"weights: {len(stored) - compact} tensors, {nbytes / 1e6:.2f} MB"
            + (f" ({compact} as integer codes and scales)" if compact else ""))


def _quantized_line(weights: dict) -> list[str]:
    """The summary line of the weights a DequantizeLinear folded into: how many go to the device as
    bfloat8_b, and which do not and why (the first three of each device dtype)."""
    if not weights:
        return []
    block = sum(1 for dtype, _ in weights.values() if dtype == "bfp8")
    others: dict[str, list[str]] = {}
    for name, (dtype, why) in weights.items():
        if dtype != "bfp8":
            others.setdefault(dtype, []).append(f"{name}: {why}")
    parts = [f"{len(items)} as {dtype} ({'; '.join(items[:3])}{'; ...' if len(items) > 3 else ''})"
             for dtype, items in others.items()]
    return [f"quantized weights: {len(weights)}, {block} as bfloat8_b" + "".join(f"; {p}" for p in parts)]


def _formats_line(formats: dict) -> list[str]:
    """The summary line of --weights: how many weights took each format, and which stayed bf16 and why."""
    if not formats:
        return []
    counts: dict[str, int] = {}
    for dtype, _ in formats.values():
        counts[dtype] = counts.get(dtype, 0) + 1
    kept = [f"{name}: {why}" for name, (dtype, why) in formats.items() if dtype == "bf16"]
    text = ", ".join(f"{n} {_FORMAT_NAMES.get(d, d)}" for d, n in sorted(counts.items()))
    shown = "; ".join(kept[:5]) + ("; ..." if len(kept) > 5 else "")
    return [f"weight formats: {text}" + (f" (kept bf16: {shown})" if kept else "")]


def _dtype_line(notes: dict) -> list[str]:
    """The summary line of --dtype auto for a quantized model: what it settled on and why (passes/settle_dtype.py;
    a float model's bf16 goes without saying)."""
    if "quantizers" not in notes:
        return []
    return [f"dtype: {notes['dtype']} (auto: {notes['why']})"]


def _gain_line(notes: dict) -> list[str]:
    """The summary line of measure-weight-gain when it divided auto's budget (docs/design.md §6.30)."""
    if notes.get("gain", 1.0) <= 1.0:
        return []
    return [f"weight gain: the outputs amplify the weights' block-float errors {notes['gain']:.1f}x (float32 loss "
            f"{notes['loss']:.4f} for {notes['weights']} weights in block floats{_with_biases(notes)}, over the "
            f"budget's promise): "
            f"auto's budget divided by {notes['gain']:.1f}"]


def _with_biases(notes: dict) -> str:
    """' and 27 conv biases' when the measurement rounded conv biases with their weights (§6.43)."""
    return f" and {notes['biases']} conv biases" if notes.get("biases") else ""


def _activations_line(notes: dict) -> list[str]:
    """The summary line of --activations: the tensors between matmuls / linears that took bfloat8_b, of those that
    could, the bytes saved and the error budget spent (passes/choose_activation_formats.py)."""
    if not notes.get("candidates"):
        return []
    return [f"activation formats: {notes['bfp8']} of {notes['candidates']} matmul-to-matmul tensors in bfloat8_b "
            f"({notes['bytes_saved'] / 1e6:.2f} MB smaller; error budget {notes['error_spent']:.4f} of "
            f"{notes['error_budget']:.4f} spent)"]


_FORMAT_NAMES = {"bfp8": "bfloat8_b", "bfp4": "bfloat4_b", "f32": "float32"}


@main.command()
@click.argument("model")
@model_options
@click.option("--inputs", "inputs_path", help=".npz of inputs keyed by ONNX input name (default: seeded random)")
@click.option("--per-op", is_flag=True, help="compare every intermediate and name the first divergent op")
@boundary
def verify(model, input_shape, device, mesh, parallel, memory, dtype, math_fidelity, weights, activations, no_fallback,
           inputs_path, per_op):
    """Convert MODEL, run it on the ttnn simulator and compare with onnxruntime (exit 1 on a mismatch)."""
    from onnx2ttnn.verify import verify as run_verify

    shapes = parse_input_shapes(input_shape)
    report = run_verify(model, input_shapes=shapes, device=device, mesh=mesh, parallel=parallel, memory=memory,
                        dtype=dtype, math_fidelity=math_fidelity, weights=weights, activations=activations,
                        fallback=not no_fallback, inputs=inputs_path, per_op=per_op)
    click.echo(clean_message(report.text()))
    sys.exit(0 if report.passed else EXIT_MISMATCH)


@main.command()
@click.argument("model")
@model_options
@click.option("--png", "png", help="also draw per-core L1 and DRAM use over the forward pass into this PNG")
@boundary
def report(model, input_shape, device, mesh, parallel, memory, dtype, math_fidelity, weights, activations, no_fallback,
           png):
    """Convert MODEL and print the per-op placement table and totals (DRAM traffic vs floor, device time)."""
    from onnx2ttnn.convert import convert as run_convert
    from onnx2ttnn.report import placement_report

    if png:
        if not png.endswith(".png"):
            fail(f"--png {png!r} must name a .png file")
        _check_writable(png)
    shapes = parse_input_shapes(input_shape)
    result = run_convert(model, input_shapes=shapes, device=device, mesh=mesh, parallel=parallel, memory=memory,
                         dtype=dtype, math_fidelity=math_fidelity, weights=weights, activations=activations,
                         fallback=not no_fallback)
    placed = placement_report(result)
    if png:
        placed.write_png(png)
    click.echo(clean_message(placed.text()))
    if result.auto:
        click.echo(auto_line(result.auto))
    if png:
        click.echo(f"wrote {clean_message(png)}")


@main.command()
@click.option("--markdown", is_flag=True, help="print the docs page (docs/ops.md) instead of the text table")
@boundary
def ops(markdown) -> None:
    """Print the support table: op, opsets, ttnn ops, constraints, fallback."""
    from onnx2ttnn.support import support_markdown, support_table

    click.echo(support_markdown() if markdown else support_table(), nl=not markdown)
