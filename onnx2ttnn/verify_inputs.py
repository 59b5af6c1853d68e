"""The inputs verify feeds a generated program: seeded random ones, or the user's (an .npz or a dict of arrays)
read without unpickling and checked against the program's INPUTS (name, shape, dtype), and their numpy <-> torch
conversions (bfloat16 as ml_dtypes' type, exactly).

Errors are ConversionErrors naming the file or dict and the input: the inputs are the user's to fix.
"""
from __future__ import annotations

import os

import numpy as np

from onnx2ttnn.errors import ConversionError
from onnx2ttnn.messages import clean_message, escape_name, one_line


def read_inputs(program, inputs) -> dict[str, np.ndarray]:
    """Input arrays keyed by ONNX input name, each checked against the input it feeds (ConversionError)."""
    if inputs is None:
        return {program.INPUTS[ident][0]: _from_torch(t) for ident, t in program.random_inputs().items()}
    where = "the inputs dict"
    if isinstance(inputs, (str, os.PathLike)):
        where = f"the inputs file {escape_name(os.fspath(inputs))}"
        inputs = _read_npz(os.fspath(inputs))
    missing = [name for name, _, _ in program.INPUTS.values() if name not in inputs]
    if missing:
        raise ConversionError(f"{where} has no {', '.join(map(escape_name, missing))} (the model's inputs: "
                              f"{', '.join(escape_name(n) for n, _, _ in program.INPUTS.values())})")
    return {name: _input_array(where, name, inputs[name], shape, dtype)
            for name, shape, dtype in program.INPUTS.values()}


def _read_npz(path: str) -> dict[str, np.ndarray]:
    """The arrays of an .npz, never unpickling anything; ConversionError naming what is wrong with the file."""
    if not os.path.isfile(path):
        raise ConversionError(f"inputs file not found: {escape_name(path)}")
    try:
        data = np.load(path, allow_pickle=False)
    except Exception as exc:  # numpy raises ValueError, OSError, EOFError, BadZipFile ... on a corrupt file
        raise ConversionError(f"cannot read the inputs file {escape_name(path)}: "
                              f"{_numpy_reason(exc, 'it is not an .npz (numpy takes it for pickled data)')}") from None
    if not isinstance(data, np.lib.npyio.NpzFile):
        raise ConversionError(f"the inputs file {escape_name(path)} holds one array (.npy), not an .npz of arrays "
                              "keyed by input name (numpy.savez(path, NAME=array, ...))")
    arrays = {}
    with data:
        for key in data.files:
            try:
                arrays[key] = data[key]
            except Exception as exc:
                raise ConversionError(f"cannot read {escape_name(key)} from the inputs file {escape_name(path)}: "
                                      f"{_numpy_reason(exc, 'it is an array of Python objects')}") from None
    return arrays


def _numpy_reason(exc: BaseException, pickled: str) -> str:
    """numpy's reason, but `pickled` for its advice to unpickle (which verify never does)."""
    text = one_line(exc)
    if "pickle" in text:
        return f"{pickled}, and verify never unpickles"
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _input_array(where: str, name: str, value, shape, dtype: str) -> np.ndarray:
    """`value` as the model's input `name` takes it: numeric, of the converted shape, cast to its dtype."""
    array = np.asarray(value)
    if array.dtype.kind not in "biuf":
        raise ConversionError(f"{where}: {escape_name(name)} is an array of {array.dtype} values; the model takes "
                              f"{dtype}")
    if tuple(array.shape) != tuple(shape):
        raise ConversionError(f"{where}: {escape_name(name)} has shape {tuple(array.shape)}, the model was converted "
                              f"for {tuple(shape)} (give --input-shape {clean_message(name)}=... to convert it for "
                              "another)")
    wanted = _numpy_dtype(dtype)
    if wanted.kind in "biu" and array.dtype.kind == "f" and not np.all(np.isfinite(array) & (array == np.round(array))):
        raise ConversionError(f"{where}: {escape_name(name)} holds non-integer values; the model takes {dtype}")
    return array.astype(wanted)


def _numpy_dtype(dtype: str) -> np.dtype:
    """The numpy dtype of a program input's dtype name; bfloat16 is ml_dtypes' (numpy has none; onnx needs
    ml_dtypes, so it is installed)."""
    if dtype == "bfloat16":
        import ml_dtypes

        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(dtype)


def _from_torch(tensor) -> np.ndarray:
    """A torch tensor as numpy; a bfloat16 one as an ml_dtypes bfloat16 array (exact: widened, then narrowed)."""
    import torch

    if tensor.dtype == torch.bfloat16:
        return tensor.float().numpy().astype(_numpy_dtype("bfloat16"))
    return tensor.numpy()


def torch_input(array: np.ndarray):
    """An input array as the torch tensor forward takes."""
    import torch

    if array.dtype.name == "bfloat16":  # (torch takes no ml_dtypes array: widened, then narrowed, exactly)
        return torch.from_numpy(np.ascontiguousarray(array, dtype=np.float32)).to(torch.bfloat16)
    return torch.from_numpy(np.ascontiguousarray(array))
