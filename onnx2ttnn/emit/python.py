"""The Python emitter: renders the final ttnn graph as a standalone, readable program.

It reads node attributes and tensor names only; every decision (which op, which layout, which memory
config, where to deallocate) was made by a pass.  ONNX names reach the program only through `ascii()`
(string literals and comments); identifiers come from one Namespace (ir/names.py).  The emitter writes the
program in order: header, configs and load_parameters (emit/program_template.py), the forward (here; values'
text from emit/literals.py), the --trace functions (emit/traced.py), main() (emit/program_main.py).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import onnx_graphsurgeon as gs

from onnx2ttnn.emit import conv_resident, per_chip, program_main, program_template, traced
from onnx2ttnn.emit.literals import literal, torch_dtype
from onnx2ttnn.emit.weights import DEQUANTIZED_WEIGHT, store_weights, stored_weight
from onnx2ttnn.emit.writer import CodeWriter
from onnx2ttnn.fallback.source import defined_names, helper_source
from onnx2ttnn.ir.dtypes import HOST_COMPUTE_DTYPE
from onnx2ttnn.ir.graph import Module, argument_attrs
from onnx2ttnn.ir.kernel_config import KernelConfig
from onnx2ttnn.ir.program_config import ProgramConfig
from onnx2ttnn.ir.sdpa_config import SDPAConfig
from onnx2ttnn.ir.names import Namespace
from onnx2ttnn.ir.traceable import TracePlan, trace_plan
from onnx2ttnn.fallback.values import is_value_var
from onnx2ttnn.ir.ttnn_ops import HOST_COMPUTE, HOST_OUTPUT, HOST_REGION, Cost, op_info

PROGRAM_CONFIGS = (ProgramConfig, SDPAConfig)  # the program configs a call may pass, each defined once



def _upload_shape(node: gs.Node):
    """The shape a from_torch must give its host tensor first: its `_shape`, or the device tensor's shape
    when the host one differs (a rank-0 value lives on the device as [1]), so that the program's tensors
    have the shapes the passes planned views and deallocations with."""
    if node.attrs.get("_shape") is not None:
        return tuple(node.attrs["_shape"])
    if node.attrs.get("_tp"):  # a weight split over the chips: its host values are whole (split-tensor-parallel)
        return None
    src, out = node.inputs[0], node.outputs[0]
    host = src.values.shape if isinstance(src, gs.Constant) else src.shape
    if host is None or out.shape is None or tuple(host) == tuple(out.shape):
        return None
    return tuple(int(d) for d in out.shape)


def _static(shape) -> bool:
    return shape is not None and all(isinstance(d, (int, np.integer)) for d in shape)


@dataclass
class EmittedProgram:
    source: str
    weights: dict[str, np.ndarray]
    line_of_node: dict[int, int] = field(default_factory=dict)  # forward line -> node index
    regions: dict[str, bytes] = field(default_factory=dict)  # file name (next to the weights) -> region model
    trace: str = ""  # whether --trace can capture the forward (ir/traceable.py TracePlan.summary)


def region_files(weights_file: str, count: int) -> list[str]:
    """The file names of a program's host region models: `<weights root>_region<k>.onnx`."""
    root = weights_file[:-4] if weights_file.endswith(".npz") else weights_file
    return [f"{root}_region{k}.onnx" for k in range(count)]


def region_key(index: int) -> str:
    """The key of host region `index`'s onnxruntime session in the program's `params` (no weight key has a
    space: those are identifiers)."""
    return f"region {index}"



class PythonEmitter:
    """Renders one Module; construct, then call emit()."""

    def __init__(self, module: Module, weights_file: str, source_model: str, options_text: str,
                 device_name: str, probes: bool = False) -> None:
        self.module = module
        self.probes = probes
        self.settle: list[str] = []  # params keys settle_weights moves to L1 (emit/conv_resident.py)
        self.weights_file = weights_file
        self.source_model = source_model
        self.options_text = options_text
        self.device_name = device_name
        self.helpers = sorted({(n.attrs["_family"], n.attrs["_helper"]) for n in module.graph.nodes
                               if n.op == HOST_COMPUTE})
        self.names = Namespace(reserved=tuple(defined_names(self.helpers)))
        self._tensor_names: dict[int, str] = {}
        self.weights: dict[str, np.ndarray] = {}  # the weights file's arrays
        self.compact: dict = {}  # parameters stored as codes and scales -> their blocks (emit/weights.py)
        self.region_files = region_files(weights_file, len(module.regions))
        self.trace = trace_plan(module.graph)
        if module.chips > 1 and self.trace.traceable:  # (the traced helpers upload without mesh mappers)
            self.trace = TracePlan(reason="a multi-chip program (--mesh): traced replay is not built for meshes yet")
        self._regions_shown: set[str] = set()  # region sources whose comment was written
        # one program-level name per distinct compute kernel config and program config, in order of first use
        self.kernel_configs: dict[KernelConfig, str] = {}
        self.program_configs: dict[ProgramConfig | SDPAConfig, str] = {}
        for node in module.graph.nodes:
            for value in node.attrs.values():
                defined = self.kernel_configs if isinstance(value, KernelConfig) else \
                    self.program_configs if isinstance(value, PROGRAM_CONFIGS) else None
                if defined is not None and value not in defined:
                    defined[value] = self.names.create(value.identifier)

    @staticmethod
    def region_key(index: int) -> str:
        return region_key(index)

    # --- names ---------------------------------------------------------------------------------
    def name(self, tensor: gs.Tensor) -> str:
        key = id(tensor)
        if key not in self._tensor_names:
            producer = tensor.inputs[0] if tensor.inputs else None
            if producer is not None and producer.attrs.get("_param"):
                self._tensor_names[key] = f"params[{ascii(producer.attrs['_param'])}]"
            else:
                self._tensor_names[key] = self.names.create(tensor.name, key=key)
        return self._tensor_names[key]

    def caller_shape(self, tensor: gs.Tensor) -> tuple[int, ...]:
        """A graph input's shape as the program's caller gives it: on a mesh (data parallel), dim 0 holds every
        chip's piece (the graph is one chip's program; place-on-mesh places each input `shard0`)."""
        shape = tuple(int(d) for d in tensor.shape)
        return (shape[0] * self.module.dp,) + shape[1:] if self.module.dp > 1 else shape

    # --- rendering -----------------------------------------------------------------------------
    def call(self, node: gs.Node, host: bool = False) -> str:
        """`ttnn.op(args...)` for one node (`host`: a from_torch without its device and memory config)."""
        info = op_info(node.op)
        attrs = argument_attrs(node)
        if node.op == "from_torch" and not host and "mesh_mapper" in attrs and "device" in attrs:
            return per_chip.mesh_upload(self, node, attrs)
        if host:
            attrs = {k: v for k, v in attrs.items() if k not in ("device", "memory_config")}
        args: list[str] = []
        tensors = list(node.inputs)
        if node.op == "from_torch":
            src = node.inputs[0]
            param = node.attrs.get("_param")
            first = f"torch.from_numpy({stored_weight(param, self.compact)})" if param else self.name(src)
            shape, suffix = _upload_shape(node), ""
            if shape is not None:
                suffix += f".reshape({literal(shape)})"
            if node.attrs.get("_torch_dtype"):  # a host fallback's result, in the upload's torch dtype
                suffix += f".to({torch_dtype(node, node.attrs['_torch_dtype'])})"
            first = per_chip.joined(self, node, first, suffix) if per_chip.pieces_of(node) else first + suffix
            if node.attrs.get("_int_range"):  # an integer input whose values may not fit the device dtype
                low, high = node.attrs["_int_range"]
                first = f"integer_input({first}, {ascii(node.attrs['_input'])}, {low}, {high})"
            elif node.attrs.get("_index_rows"):  # Gather indices: checked, negative ones counted from the end
                first = f"index_input({first}, {ascii(node.attrs['_input'])}, {node.attrs['_index_rows']})"
            tensors, args = [], [first]
        if info.variadic_input:
            args.append("[" + ", ".join(self.name(t) for t in tensors) + "]")
            tensors = []
        positional = True
        for param in info.inputs if not args else ():
            if param in attrs:
                value = literal(attrs.pop(param))
            elif tensors:
                value = self.name(tensors.pop(0))
            else:
                positional = False
                continue
            keyword = param in info.keyword_inputs or not positional
            args.append(f"{param}={value}" if keyword else value)
        for param in info.positional_attrs:
            if param in attrs:
                args.append(literal(attrs.pop(param)))
        args += [f"{k}={self._config_name(v) or literal(v)}" for k, v in attrs.items()]
        return f"ttnn.{node.op}({', '.join(args)})"

    def _config_name(self, value) -> str:
        """The program-level name of a compute kernel config or program config ("" for other values)."""
        if isinstance(value, KernelConfig):
            return self.kernel_configs[value]
        return self.program_configs[value] if isinstance(value, PROGRAM_CONFIGS) else ""

    def host_call(self, node: gs.Node, pieces: dict | None = None) -> str:
        """`host_<op>(inputs..., attrs...)`: a host fallback's torch helper (not a ttnn call); `pieces`: the
        loop variable naming each split input's piece (emit/per_chip.py)."""
        pieces, args = pieces or {}, []
        for arg in node.attrs["_args"]:
            if arg is None:
                args.append("None")
            elif arg[0] == "input":
                tensor = node.inputs[arg[1]]
                dtype = str(np.dtype(tensor.dtype)) if not tensor.inputs and tensor.dtype is not None else ""
                cast = HOST_COMPUTE_DTYPE.get(dtype, dtype)  # a program argument, in its ONNX dtype
                args.append(pieces.get(id(tensor), self.name(tensor)) + (f".to(torch.{cast})" if cast != dtype else ""))
            else:
                _, dtype, shape, values = arg
                args.append(f"torch.tensor({literal(values)}, dtype={torch_dtype(node, dtype)})"
                            f".reshape({literal(shape)})")
        args += [f"{k}={literal(v)}" for k, v in argument_attrs(node).items()]
        return f"{node.attrs['_helper']}({', '.join(args)})"

    def region_call(self, node: gs.Node, pieces: dict | None = None) -> str:
        """`run_region(params['region k'], {ONNX input: (tensor, numpy dtype)}, (torch dtypes,))`."""
        feeds = ", ".join(f"{ascii(name)}: ({(pieces or {}).get(id(t), self.name(t))}, {ascii(dtype)})"
                          for (name, dtype), t in zip(node.attrs["_region_feeds"], node.inputs))
        results = ", ".join("None" if d is None else torch_dtype(node, d) for d in node.attrs["_region_results"])
        shapes = tuple(tuple(int(d) for d in t.shape) if _static(t.shape) else None for t in node.outputs)
        return (f"run_region(params[{ascii(region_key(node.attrs['_region']))}], {{{feeds}}}, "
                f"({results}{',' if len(node.attrs['_region_results']) == 1 else ''}), {literal(shapes)})")

    def region_comment(self, node: gs.Node) -> list[str]:
        """The comment above a host region's first line: its model file and every node it runs."""
        k = node.attrs["_region"]
        nodes = node.attrs["_region_nodes"]
        lines = [f"# host region {k}: {len(nodes)} ONNX node{'s' if len(nodes) != 1 else ''} run by onnxruntime "
                 f"from {ascii(self.region_files[k])}:"]
        lines += [f"#   {ascii(name)} {ascii(op)[1:-1]}" for name, op in nodes]
        return lines

    def statement(self, node: gs.Node) -> str:
        if node.op == "deallocate":
            return self.call(node)
        if node.op == HOST_REGION:
            targets = ", ".join(self.name(t) for t in node.outputs) + ("," if len(node.outputs) == 1 else "")
            if per_chip.pieces_of(node):  # one call per chip's piece: each output, the tuple of its pieces
                return f"{targets} = zip(*{per_chip.per_piece(self, node, lambda p: self.region_call(node, p))})"
            return f"{targets} = {self.region_call(node)}"
        if node.op == HOST_COMPUTE:
            targets = ", ".join(self.name(t) for t in node.outputs)
            if per_chip.pieces_of(node):
                calls = per_chip.per_piece(self, node, lambda p: self.host_call(node, p))
                return f"{targets} = {f'zip(*{calls})' if len(node.outputs) > 1 else calls}"
            return f"{targets} = {self.host_call(node)}"
        if node.op == HOST_OUTPUT:  # a host fallback's result returned as a graph output, in its ONNX dtype
            dtype, source = torch_dtype(node, node.attrs.get("_torch_dtype")), self.name(node.inputs[0])
            text = per_chip.joined(self, node, source, f".to({dtype})") if per_chip.pieces_of(node) else \
                f"{source}.to({dtype})"
            return f"{self.name(node.outputs[0])} = {text}"
        if node.op == "to_torch":  # a download, cast to the torch dtype lowering chose
            dtype = torch_dtype(node, node.attrs.get("_torch_dtype"))
            suffix = ""
            if node.attrs.get("_nhwc") is not None:  # flattened NHWC [1, 1, N*H*W, C] back to NCHW
                suffix += f".reshape({literal(tuple(node.attrs['_nhwc']))}).permute(0, 3, 1, 2)"
            if node.attrs.get("_shape") is not None:
                suffix += f".reshape({literal(tuple(node.attrs['_shape']))})"
            suffix += f".to({dtype})"
            if per_chip.pieces_of(node):  # a host fallback's input: the chips' pieces
                return f"{self.name(node.outputs[0])} = {per_chip.download(self, node, self.call(node), suffix)}"
            return f"{self.name(node.outputs[0])} = {self.call(node)}{suffix}"
        targets = ", ".join(self.name(t) for t in node.outputs)
        if node.attrs.get("return_weights_and_bias"):  # the prepared weights replace the parameters read
            prepared = [self.name(t) for t in node.inputs[1:3]] + ["_"] * (3 - len(node.inputs))
            targets += f", ({prepared[0]}, {prepared[1]})"
        return f"{targets} = {self.call(node)}"

    def emit(self) -> EmittedProgram:
        graph = self.module.graph
        param_nodes = [n for n in graph.nodes if n.attrs.get("_param")]
        body_nodes = [n for n in graph.nodes if not n.attrs.get("_param")]
        self.compact = store_weights(self.weights, param_nodes, self.module.dequantized)
        inputs = {self.name(t): t for t in graph.inputs}
        w = CodeWriter()
        program_template.header(w, self, inputs)
        program_template.config_definitions(w, self.kernel_configs, program_template.KERNEL_CONFIGS)
        program_template.config_definitions(w, self.program_configs, program_template.PROGRAM_CONFIGS)
        for block, wanted in ((DEQUANTIZED_WEIGHT, self.compact),
                              (program_template.REGION_HELPERS, self.region_files),
                              (program_template.INTEGER_INPUT, any(n.attrs.get("_int_range") for n in body_nodes)),
                              (program_template.INDEX_INPUT, any(n.attrs.get("_index_rows") for n in body_nodes))):
            if wanted:
                w.lines(block)
                w.line()
                w.line()
        if self.helpers:
            w.line("# Host fallbacks: torch implementations of the ONNX ops that have no ttnn equivalent.")
            w.line()
            w.lines(helper_source(self.helpers))
            w.line()
            w.line()
        if self.probes:
            w.line("PROBE = None  # set by onnx2ttnn verify --per-op: PROBE(onnx_name, tensor, nhwc_dims)")
            w.line()
        program_template.load_parameters(w, self, param_nodes)
        self.settle = conv_resident.resident_keys(body_nodes)
        if self.settle:
            conv_resident.settle_function(w, self.settle, body_nodes)
        line_map = self._forward(w, body_nodes, inputs)
        if self.trace.traceable:
            traced.traced_parts(self, w, inputs)
        program_main.main(w, self.module.mesh, settle=bool(self.settle),
                          fabric=any(op_info(n.op).cost == Cost.CCL for n in graph.nodes),
                          l1_small_size=self.module.l1_small_size,
                          values=any(is_value_var(t) for t in graph.outputs))
        return EmittedProgram(w.text(), self.weights, line_map, dict(zip(self.region_files, self.module.regions)),
                              self.trace.summary())

    def _forward(self, w: CodeWriter, nodes: list[gs.Node], inputs: dict) -> dict[int, int]:
        signature = ", ".join(inputs)
        w.line(f"def forward(device, params, *, {signature}):" if signature else "def forward(device, params):")
        line_map: dict[int, int] = {}
        with w.indent():
            if any(is_value_var(t) for t in self.module.graph.outputs):  # (fallback/values.py)
                w.line('"""Run the model on `device`; returns {ONNX output name: torch tensor, or a sequence or map '
                       'as onnxruntime returns it}."""')
            else:
                w.line('"""Run the model on `device`; returns {ONNX output name: torch tensor}."""')
            self.statements(w, nodes, line_map)
            if self.settle:
                w.line(conv_resident.CALL + conv_resident.COMMENT)
            outs = ", ".join(f"{ascii(t.name)}: {self.name(t)}" for t in self.module.graph.outputs)
            w.line(f"return {{{outs}}}")
        w.line()
        w.line()
        return line_map

    def statements(self, w: CodeWriter, nodes: list[gs.Node], line_map: dict | None = None) -> None:
        """The statements of `nodes`, each source's first preceded by a comment naming its ONNX node
        (`line_map`: filled with forward line -> node index; probes are reported only then)."""
        index_of = {id(n): i for i, n in enumerate(self.module.graph.nodes)}
        regions = {n.attrs["_source"]: n for n in nodes if n.op == HOST_REGION}
        last_source = None
        for node in nodes:
            source = node.attrs.get("_source", "")
            if source != last_source and node.op != "deallocate":
                fallback = node.attrs.get("_fallback")
                if source in regions and source not in self._regions_shown:
                    self._regions_shown.add(source)
                    for line in self.region_comment(regions[source]):
                        w.line(line)
                elif source in regions:
                    w.line(f"# {ascii(source)}: its result to the device")
                elif fallback:
                    w.line(f"# host fallback: ONNX {fallback} {ascii(source)}")
                else:
                    w.line(f"# {ascii(source)}")
                last_source = source
            if line_map is not None:
                line_map[w.line_count + 1] = index_of[id(node)]
            w.line(self.statement(node))
            if self.probes and line_map is not None:
                for onnx_name, nhwc in node.attrs.get("_probes", ()):
                    w.line(f"PROBE({ascii(onnx_name)}, {self.name(node.outputs[0])}, {nhwc!r})")
def emit_program(module: Module, *, weights_file: str, source_model: str, options_text: str,
                 device_name: str, probes: bool = False) -> EmittedProgram:
    return PythonEmitter(module, weights_file, source_model, options_text, device_name, probes).emit()

