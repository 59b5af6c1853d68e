"""Constants whose data stays in the model's external data file until a pass reads their values.

The loader reads only the small external tensors into the ModelProto (frontend/load.py); each large one
becomes a graph constant whose lazy values read the file when first asked for, straight into numpy, so the
weights are held once (as numpy arrays), not twice (proto and numpy).
"""
from __future__ import annotations

import os

import numpy as np
import onnx
import onnx.external_data_helper as external
import onnx_graphsurgeon as gs
from onnx_graphsurgeon.ir.tensor import LazyValues

_T = onnx.TensorProto
# ONNX types whose raw data is numpy's own layout (little-endian); the others (bfloat16, float8, packed int4,
# strings) are read the way graphsurgeon reads them, through onnx.numpy_helper
_PLAIN = (_T.FLOAT, _T.DOUBLE, _T.FLOAT16, _T.INT8, _T.INT16, _T.INT32, _T.INT64, _T.UINT8, _T.UINT16,
          _T.UINT32, _T.UINT64, _T.BOOL)


class FileValues(LazyValues):
    """LazyValues of a tensor stored in an external data file: `tensor` is a loaded copy made on demand (the
    graphsurgeon exporter and `load()` both read it), the model keeps only the reference."""

    def __init__(self, lazy: LazyValues, base_dir: str, shared: "SharedReads" = None) -> None:
        # not super().__init__, which would measure the tensor again
        self._reference = lazy.tensor
        self._base_dir = base_dir
        self._shared = shared
        self.shape, self.dtype, self.nbytes = lazy.shape, lazy.dtype, lazy.nbytes

    @property
    def path(self) -> str:
        """The external data file the values are read from."""
        location = next((e.value for e in self._reference.external_data if e.key == "location"), "")
        return os.path.join(self._base_dir, location)

    @property
    def tensor(self) -> onnx.TensorProto:
        loaded = onnx.TensorProto()
        loaded.CopyFrom(self._reference)
        external.load_external_data_for_tensor(loaded, self._base_dir)
        loaded.data_location = onnx.TensorProto.DEFAULT
        del loaded.external_data[:]
        return loaded

    def load(self) -> np.ndarray:
        """The tensor's values as a new numpy array (the second import of a SharedReads takes the first's)."""
        if self._shared is None:
            return self._read()
        return self._shared.values(self._key(), self._read)

    def _key(self) -> tuple:
        return (self._base_dir, tuple((e.key, e.value) for e in self._reference.external_data))

    def _read(self) -> np.ndarray:
        """The file's bytes once, then one copy (the base class goes through a loaded TensorProto: four copies
        of the tensor at once)."""
        read = getattr(external, "_read_external_data_bytes", None)  # onnx's path and bounds checks (onnx 1.23)
        if self._reference.data_type not in _PLAIN or read is None:  # other onnx versions: the general route
            return super().load()
        data = read(self._reference, self._base_dir)
        dtype = onnx.helper.tensor_dtype_to_np_dtype(self._reference.data_type)
        view = np.frombuffer(data, dtype=dtype.newbyteorder("<")).reshape(tuple(self._reference.dims))
        return view.astype(dtype, copy=True)


class SharedReads:
    """The external tensors of one loaded model imported twice (--parallel auto converts it both ways): a
    tensor the first import reads from its file leaves a copy here, which the second import takes, so no file
    is read twice and each import owns its arrays (a pass may change them).  `last()` before the last import
    keeps no more copies; `clear()` after it drops those no import took."""

    def __init__(self) -> None:
        self._kept: dict[tuple, np.ndarray] = {}
        self._keeping = True

    def values(self, key: tuple, read) -> np.ndarray:
        if key in self._kept:
            return self._kept.pop(key)
        array = read()
        if self._keeping:
            self._kept[key] = array.copy()
        return array

    def last(self) -> None:
        self._keeping = False

    def clear(self) -> None:
        self._keeping = False
        self._kept.clear()


def defer_external_weights(graph: gs.Graph, base_dir: str, shared: SharedReads = None) -> None:
    """Every constant of `graph` (its subgraphs, functions and tensor attributes too) still stored in an
    external file reads it on first use; it then looks as if the loader had read it (DEFAULT location).
    Imports of one loaded model given the same `shared` read each tensor's file once."""
    for const in _constants(graph):
        lazy = const._values
        if type(lazy) is LazyValues and external.uses_external_data(lazy.tensor):
            const._values = FileValues(lazy, base_dir, shared)
            const.data_location = onnx.TensorProto.DEFAULT


def _constants(graph) -> list[gs.Constant]:
    """The constants of a graph or function, of the subgraphs in its nodes and of its tensor attributes."""
    found = [t for t in graph.tensors().values() if isinstance(t, gs.Constant)]
    for node in graph.nodes:
        for value in node.attrs.values():
            if isinstance(value, gs.Constant):
                found.append(value)
            elif isinstance(value, gs.Graph):
                found += _constants(value)
    for function in getattr(graph, "functions", None) or ():
        found += _constants(function)
    return found
