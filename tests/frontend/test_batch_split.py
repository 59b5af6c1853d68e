"""frontend/batch_split.py: which models split over the chips by batch, and the error naming the node that
mixes batch rows.  One tiny ONNX model per behaviour, written as ONNX text; nothing runs but the check."""
from __future__ import annotations

import pytest
from onnx import parser

from onnx2ttnn.errors import ConversionError
from onnx2ttnn.frontend.batch_split import split_batch


def _split(body: str, inputs: str = "float[B, 4, 8] x", outputs: str = "float[B, 4, 8] y", shapes=None,
           chips: int = 2):
    model = parser.parse_model(f"""
        <ir_version: 8, opset_import: ["" : 18]>
        g ({inputs}) => ({outputs}) {{
            {body}
        }}""")
    names = [i.name for i in model.graph.input]
    return split_batch(model, shapes or {name: (4, 4, 8) for name in names}, chips)


def test_rows_kept_apart_split():
    """Elementwise, a MatMul by a weight, a softmax over the last dim, a transpose keeping the batch first and a
    reshape merging the batch with the dim after it all keep each chip's rows."""
    per_chip, outputs = _split("""
        w = Constant <value = float[8, 8] {0,0,0,0,0,0,0,0, 0,0,0,0,0,0,0,0, 0,0,0,0,0,0,0,0, 0,0,0,0,0,0,0,0,
                                           0,0,0,0,0,0,0,0, 0,0,0,0,0,0,0,0, 0,0,0,0,0,0,0,0, 0,0,0,0,0,0,0,0}> ()
        a = MatMul (x, w)
        b = Softmax <axis = -1> (a)
        c = Transpose <perm = [0, 2, 1]> (b)
        flat = Constant <value = int64[2] {-1, 4}> ()
        d = Reshape (c, flat)
        back = Constant <value = int64[3] {-1, 8, 4}> ()
        e = Reshape (d, back)
        y = Transpose <perm = [0, 2, 1]> (e)""")
    assert per_chip == {"x": (2, 4, 8)} and outputs == {"y": 0}


@pytest.mark.parametrize("body,outputs,why", [
    ("y = ReduceSum <keepdims = 1> (x, axes)\n axes = Constant <value = int64[1] {0}> ()".replace("\n", "\n") ,
     "float[1, 4, 8] y", "mixes the rows of the batch"),
    ("y = Softmax <axis = 0> (x)", "float[B, 4, 8] y", "works along dim 0 of 'x', the batch dim"),
    ("y = Concat <axis = 0> (x, x)", "float[C, 4, 8] y", "works along dim 0 of 'x', the batch dim"),
    ("t = Transpose <perm = [1, 0, 2]> (x)\n shape = Constant <value = int64[2] {-1, 8}> ()\n y = Reshape (t, shape)",
     "float[D, 8] y", "moves the batch dim of 't' (dim 1) to dim 0 of 'y', which interleaves the chips' rows"),
])
def test_batch_mixing_ops_are_refused(body, outputs, why):
    body = "\n".join(sorted(body.split("\n"), key=lambda line: "Constant" not in line))  # constants first
    with pytest.raises(ConversionError, match="data parallel: the batch cannot be split over the chips") as info:
        _split(body, outputs=outputs)
    assert why in str(info.value)


def test_a_matmul_contracting_the_batch_is_refused():
    """x^T x sums over the batch rows: each chip would give a partial sum."""
    with pytest.raises(ConversionError, match=r"a MatMul node \(unnamed\) mixes the rows of the batch"):
        _split("xt = Transpose (x)\n y = MatMul (xt, x)", inputs="float[B, 8] x", outputs="float[8, 8] y",
               shapes={"x": (4, 8)})


def test_a_batch_that_does_not_divide():
    with pytest.raises(ConversionError, match=r"the batch \(3, dim 0 of every input\) does not divide by the "
                                              r"mesh's 2 chips"):
        _split("y = Relu (x)", shapes={"x": (3, 4, 8)})


def test_inputs_that_disagree_on_the_batch():
    with pytest.raises(ConversionError, match="the inputs disagree on it"):
        _split("y = Add (x, z)", inputs="float[B, 4, 8] x, float[B, 4, 8] z", shapes={"x": (4, 4, 8), "z": (2, 4, 8)})


def test_gather_nd_of_each_chips_own_rows():
    """x[arange(batch)[:, None], j] (an exporter's advanced indexing) picks each chip's own rows: accepted; the
    same GatherND with the rows reversed is refused."""
    own = """
        s = Shape <start = 0, end = 1> (x)
        n = Squeeze (s)
        zero = Constant <value = int64 {0}> ()
        one = Constant <value = int64 {1}> ()
        r = Range (zero, n, one)
        rows = Unsqueeze (r, one)
        idx = Unsqueeze (rows, one)
        y = GatherND (x, idx)"""
    assert _split(own, outputs="float[B, 1, 4, 8] y")[1] == {"y": 0}
    reversed_rows = own.replace("r = Range (zero, n, one)", "f = Range (zero, n, one)\n minus = Constant <value = "
                                "int64 {-1}> ()\n m = Sub (n, one)\n g = Mul (f, minus)\n r = Add (g, m)")
    with pytest.raises(ConversionError, match="picks batch rows other than each chip's own"):
        _split(reversed_rows, outputs="float[B, 1, 4, 8] y")


@pytest.mark.parametrize("axes,ok", [("{1}", True), ("{0}", False)])
def test_a_slice_may_cut_any_dim_but_the_batch(axes, ok):
    body = f"""
        starts = Constant <value = int64[1] {{0}}> ()
        ends = Constant <value = int64[1] {{2}}> ()
        axes = Constant <value = int64[1] {axes}> ()
        y = Slice (x, starts, ends, axes)"""
    if ok:
        assert _split(body, outputs="float[B, 2, 8] y")[1] == {"y": 0}
    else:
        with pytest.raises(ConversionError, match="Slice node"):
            _split(body, outputs="float[2, 4, 8] y")
