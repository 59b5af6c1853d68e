"""The fields of the ttnn op table: what one entry (OpInfo) says about one ttnn operation, the declared value
sets its fields take (Page, Writes, Dtype, InDtype, Cost), how an op takes sharded L1 tensors (ShardFacts),
`declare`, which files an entry in OPS, and live views of the table (OpNames, OpFacts) for modules that keep
a list of op names.  The entries live in this package's family modules.

Only the standard library is imported: the mock-ttnn probes (tools/ttnn_mock/probes) read the table in an
environment that has ttnn but not the converter's dependencies.
"""
from __future__ import annotations

from collections.abc import Mapping, Set
from dataclasses import dataclass
from typing import Callable, Iterator, Optional


def _declared(cls):
    """Collect a value class's upper-case string constants into `cls.ALL` (its declared set)."""
    cls.ALL = frozenset(v for k, v in vars(cls).items() if k.isupper() and isinstance(v, str))
    return cls


@_declared
class Page:
    """Page layouts in the table: what an op needs of an input, or what it writes (not the tile size: that is
    ir/layout.py TILE = 32).  TILE and ROW_MAJOR equal TTNNLayout.page values."""

    TILE = "tile"
    ROW_MAJOR = "row_major"
    ANY = "any"  # input: tile or row-major, as produced
    SAME = "same"  # input: input 0's page (concat: every input alike); output: the page input 0 is read in
    HOST = "host"  # input: stays on the host (conv weights); output: a host tensor
    CHOSEN = "chosen"  # output: set by the caller's `layout=` argument (from_torch, to_layout)
    NONE = "none"  # output: none (deallocate)


INPUT_PAGES = frozenset({Page.TILE, Page.ROW_MAJOR, Page.ANY, Page.SAME, Page.HOST})
OUTPUT_PAGES = frozenset({Page.TILE, Page.ROW_MAJOR, Page.SAME, Page.HOST, Page.CHOSEN, Page.NONE})


@_declared
class Writes:
    """Where an op writes its output."""

    AS_ASKED = "as_asked"  # where memory_config says
    DRAM = "dram"  # always DRAM, whatever memory_config says (conv_transpose2d: ttnn_ops/conv_pool.py)


@_declared
class Dtype:
    """The dtype of an op's output (a rule may pin another with the node note `_dtype`)."""

    COMPUTE = "compute"  # float results in the compute dtype, integer ones uint32
    FOLLOWS_INTEGER_INPUT = "follows_integer_input"  # an integer input 0 keeps the result integer (no dtype arg)
    LIKE_VALUES = "like_values"  # the dtype of the first tensor value (where: true_value, else predicate)


@_declared
class InDtype:
    """What dtype an op reads at an input."""

    VALUES = "values"  # values: the compute dtype, or the integer dtype a rule pinned
    INDICES = "indices"  # uint32 indices (an integer upload stays uint32 and ROW_MAJOR for it)


@_declared
class Float32Result:
    """How an op that accumulates (conv, matmul) writes a float32-accurate result (probe_unary_modes.py)."""

    DTYPE = "dtype"  # `dtype=float32` alone: the kernel then accumulates in a float32 dest
    DTYPE_AND_DEST = "dtype_and_dest"  # `dtype=float32` keeps a bfloat16 dest: also compute_config fp32_dest_acc_en


@_declared
class Cost:
    """How the cost model (ir/cost.py) times an op."""

    MATRIX = "matrix"  # 2 * output elements * K FLOPs at the matrix peak
    CONV = "conv"  # 2 * output elements * (in_channels / groups * kh * kw) FLOPs at the matrix peak
    ATTENTION = "attention"  # 4 * output elements * key length FLOPs (scores and values) at the matrix peak
    VECTOR = "vector"  # vector_flops per output element at the SFPU rate
    CONVERSION = "conversion"  # timed like VECTOR (one FLOP per element); its bytes count as conversion bytes
    FREE = "free"  # moves and computes nothing on the device
    CCL = "ccl"  # moves data between chips: bytes over the ethernet links at their bandwidth (ir/cost.py)


# The keywords ttnn 0.81.1 takes a WormholeComputeKernelConfig under (tests/ir/test_ttnn_ops.py checks each entry
# against the API manifest; probe_kernel_config.py, results/kernel_config.txt, saw them validate)
KERNEL_CONFIG_KEYWORDS = frozenset({"compute_kernel_config", "compute_config"})
KERNEL_CONFIG_PROBE = ("probe_kernel_config.py", "results/kernel_config.txt")
FUSED_ACTIVATION_KEYWORDS = frozenset({"activation", "activations"})
EPILOGUE_PROBE = ("probe_epilogues.py", "results/epilogues.txt")

# Which probe proves each kind of sharding fact, and the results file it wrote (tools/ttnn_mock/probes/).
HEIGHT_PROBE = ("probe_sharding.py", "results/sharding.txt")
INTEGER_PROBE = ("probe_integers.py", "results/integers.txt")
WIDTH_PROBE = ("probe_width.py", "results/width.txt")


@dataclass(frozen=True)
class ShardFacts:
    """What one ttnn op does with height- (OpInfo.height) or width-sharded (OpInfo.width) L1 tensors, as
    measured on real ttnn 0.81.1 in mock mode by HEIGHT_PROBE / WIDTH_PROBE."""

    inputs: tuple[int, ...]  # input positions that may be sharded
    output: bool  # may write a sharded output whatever its inputs' placements
    probe: str  # the form in which the probe calls it ("unary", "binary", "softmax", ...)
    same_shape_inputs: bool = True  # a sharded input must have the output's padded 2-D shape
    evidence: tuple[str, ...] = ()  # further results files (probes/results/) behind a bound on the fact


@dataclass(frozen=True)
class OpInfo:
    """Every fact the compiler uses about one ttnn operation (its entry in the op table)."""

    name: str
    # --- arguments: how a node renders as a call (emit/python.py) and which arguments passes set
    inputs: tuple[str, ...]  # parameter names node inputs bind to, in order
    keyword_inputs: frozenset[str] = frozenset()  # of those, the ones passed by keyword
    positional_attrs: tuple[str, ...] = ()  # attrs rendered positionally after the tensor inputs
    variadic_input: bool = False  # all node inputs form one list argument (concat)
    memory_config: bool = True  # takes memory_config= (assign-memory-configs derives it from the output layout)
    slice_config: bool = False  # takes slice_config=; writes L1 only with Conv2dL1FullSliceConfig (conv2d)
    # the keyword taking its compute kernel config (compute_kernel_config; conv2d: compute_config), which
    # choose-kernel-configs sets from the operand formats (ir/kernel_config.py); None: takes none
    kernel_config: Optional[str] = None
    program_config: bool = False  # takes program_config= (choose-program-configs sets it: ir/program_config.py)
    # the keyword taking a fused activation that computes what the standalone op would (fusion/epilogues.py;
    # EPILOGUE_PROBE): "activation" (linear, matmul: a string) or "activations" (binary ops: a list); None: none
    fused_activation: Optional[str] = None
    layout_arguments: tuple[str, ...] = ()  # of dtype / layout / device: set from the output layout
    # --- page layouts and dtypes
    input_layouts: tuple[str, ...] = ()  # Page per input; missing entries TILE (variadic: like the last)
    input_dtypes: tuple[str, ...] = ()  # InDtype per input; missing entries VALUES
    # input positions that may hold an int32 tensor, with an exact integer result (INTEGER_PROBE); variadic:
    # position 0 stands for every input.  An op that refuses int32, or turns it into floats (clip -> FLOAT32,
    # max_pool2d -> BFLOAT16), lists none: lowering declines such a call (a host fallback computes the node)
    integer_inputs: tuple[int, ...] = ()
    output_page: str = Page.TILE  # page layout of the result
    integer_page: Optional[str] = None  # page of an integer result, when it is not output_page
    output_dtype: str = Dtype.COMPUTE
    index_output: Optional[int] = None  # the output holding indices in the dtype ttnn.topk documents
    comparison: bool = False  # returns its mask in input a's dtype unless `dtype=` asks for another
    # --- placement
    output_buffer: str = Writes.AS_ASKED
    dram_inputs: tuple[int, ...] = ()  # input positions it reads from DRAM only (memory/buffers.py pins them)
    # input positions that, in TILE layout, it copies whole into a temporary as large as the input, in the input's
    # own memory, at every call (memory/buffers.py keeps such a weight in DRAM)
    copied_tile_inputs: tuple[int, ...] = ()
    # input positions where a ROW_MAJOR operand (beside a TILE one) is first tilized into a tile-padded copy in
    # its own buffer, freed after the call, at every call (docs/ttnn-facts.md §47; ir/cost.py counts the copy)
    tilized_inputs: tuple[int, ...] = ()
    view: bool = False  # may return a view sharing input 0's buffer (ir/views.py says when)
    height: Optional[ShardFacts] = None  # takes height-sharded L1 tensors (None: never used so)
    width: Optional[ShardFacts] = None  # takes width-sharded L1 tensors (None: never used so)
    l1_reserve: Optional[int] = None  # L1 bytes per bank it needs beyond OP_SCRATCH_RESERVE; None: not measured
    # a ROW_MAJOR call's circular buffers hold about this many rows of its output (memory/buffers.py
    # row_buffers_reserve keeps what passes OP_SCRATCH_RESERVE free at the call); None: not measured
    row_buffer_rows: Optional[int] = None
    # --- accuracy (docs/ttnn-facts.md §16; lowering/accuracy.py)
    float32_result: Optional[str] = None  # Float32Result: how it writes a float32-accurate result; None: unprobed
    tail_float32_input: bool = False  # relative error ~ |x| times the input's (exp, sigmoid's tail): at an output
    # tail, fed a float32 input
    # --- cost (ir/cost.py)
    cost: str = Cost.VECTOR
    vector_flops: int = 1  # vector FLOPs per output element (VECTOR ops)

    def __post_init__(self) -> None:
        for page in self.input_layouts:
            _check(page, INPUT_PAGES, self.name, "input page")
        _check(self.output_page, OUTPUT_PAGES, self.name, "output page")
        if self.integer_page is not None:
            _check(self.integer_page, OUTPUT_PAGES, self.name, "integer page")
        for dtype in self.input_dtypes:
            _check(dtype, InDtype.ALL, self.name, "input dtype")
        _check(self.output_dtype, Dtype.ALL, self.name, "output dtype")
        _check(self.output_buffer, Writes.ALL, self.name, "output buffer")
        _check(self.cost, Cost.ALL, self.name, "cost class")
        if self.float32_result is not None:
            _check(self.float32_result, Float32Result.ALL, self.name, "float32 result")
        for argument in self.layout_arguments:
            _check(argument, {"dtype", "layout", "device"}, self.name, "layout argument")
        if self.vector_flops != 1 and self.cost != Cost.VECTOR:
            raise ValueError(f"ttnn op {self.name!r}: vector_flops is for {Cost.VECTOR} ops")
        if self.kernel_config is not None:
            _check(self.kernel_config, KERNEL_CONFIG_KEYWORDS, self.name, "kernel config keyword")
        if self.fused_activation is not None:
            _check(self.fused_activation, FUSED_ACTIVATION_KEYWORDS, self.name, "fused activation keyword")
        if not set(self.keyword_inputs) <= set(self.inputs):
            raise ValueError(f"ttnn op {self.name!r}: keyword inputs {set(self.keyword_inputs)} not among inputs")

    def input_layout(self, index: int) -> str:
        """The page layout input `index` needs (Page)."""
        if index < len(self.input_layouts):
            return self.input_layouts[index]
        return self.input_layouts[-1] if self.variadic_input and self.input_layouts else Page.TILE

    def takes_integer(self, index: int) -> bool:
        """Whether input `index` may be an int32 tensor (`integer_inputs`)."""
        return (0 if self.variadic_input else index) in self.integer_inputs

    def input_dtype(self, index: int) -> str:
        """What dtype input `index` takes (InDtype)."""
        return self.input_dtypes[index] if index < len(self.input_dtypes) else InDtype.VALUES


def _check(value: str, allowed, op: str, what: str) -> None:
    if value not in allowed:
        raise ValueError(f"ttnn op {op!r}: {what} {value!r} is not one of {sorted(allowed)}")


OPS: dict[str, OpInfo] = {}  # every ttnn call the compiler emits (checked against the ttnn API manifest)
HOST_OPS: dict[str, OpInfo] = {}  # not ttnn calls: the generated program's host-side steps (host fallbacks)


def declare(name: str, inputs: tuple[str, ...] = ("input_tensor",), *, host: bool = False, **facts) -> OpInfo:
    """File one entry in the table (OPS, or HOST_OPS for a host-side step); a name declared twice is an error."""
    if name in OPS or name in HOST_OPS:
        raise ValueError(f"ttnn op {name!r} declared twice")
    facts["keyword_inputs"] = frozenset(facts.get("keyword_inputs", ()))
    info = OpInfo(name, tuple(inputs), **facts)
    (HOST_OPS if host else OPS)[name] = info
    return info


def op_info(name: str) -> OpInfo:
    """The entry of a ttnn op (or of a host-side step); KeyError names the op."""
    try:
        return OPS[name] if name in OPS else HOST_OPS[name]
    except KeyError:
        raise KeyError(f"ttnn op {name!r} is not in the compiler's op table (ir/ttnn_ops)") from None


def node_input_layout(node, index: int) -> str:
    """The page layout input `index` of this node needs: the node's own `_input_layouts` (a rule's choice for
    this call) or its op's requirement."""
    pinned = node.attrs.get("_input_layouts")
    if pinned and index < len(pinned):
        return pinned[index]
    return op_info(node.op).input_layout(index)


def _entries() -> Iterator[tuple[str, OpInfo]]:
    yield from OPS.items()
    yield from HOST_OPS.items()


class OpNames(Set):
    """The names of the ops whose entry passes `test`, read from the table at every use: a derived view for a
    module that keeps a list of names (an entry added later, even by a test, shows in it)."""

    def __init__(self, test: Callable[[OpInfo], bool]) -> None:
        self._test = test

    def __contains__(self, name) -> bool:
        info = OPS.get(name) or HOST_OPS.get(name)
        return info is not None and bool(self._test(info))

    def __iter__(self) -> Iterator[str]:
        return (name for name, info in _entries() if self._test(info))

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def __repr__(self) -> str:
        return f"OpNames({sorted(self)})"


class OpFacts(Mapping):
    """op name -> `fact(entry)` for every op whose fact is not None, read from the table at every use (a
    derived view, like OpNames)."""

    def __init__(self, fact: Callable[[OpInfo], object]) -> None:
        self._fact = fact

    def __getitem__(self, name):
        info = OPS.get(name) or HOST_OPS.get(name)
        value = None if info is None else self._fact(info)
        if value is None:
            raise KeyError(name)
        return value

    def __iter__(self) -> Iterator[str]:
        return (name for name, info in _entries() if self._fact(info) is not None)

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def __repr__(self) -> str:
        return f"OpFacts({dict(self)})"
