"""The weights sidecar: a deterministic, pickle-free .npz (zip of .npy files) written atomically."""
from __future__ import annotations

import contextlib
import io
import os
import tempfile
import zipfile

import numpy as np

_EPOCH = (1980, 1, 1, 0, 0, 0)


def npz_bytes(arrays: dict[str, np.ndarray]) -> bytes:
    """An .npz archive of `arrays` in key order, with fixed timestamps (same input, same bytes)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_STORED) as archive:
        for key in arrays:
            data = io.BytesIO()
            np.lib.format.write_array(data, np.ascontiguousarray(arrays[key]), allow_pickle=False)
            info = zipfile.ZipInfo(f"{key}.npy", date_time=_EPOCH)
            info.external_attr = 0o644 << 16
            archive.writestr(info, data.getvalue())
    return buffer.getvalue()


def write_atomic(path: str, payload: bytes | str) -> None:
    """Write one file so that readers see either the old file or the complete new one."""
    write_files({path: payload})


def write_files(payloads: dict[str, bytes | str]) -> None:
    """Write several files all-or-nothing: every one goes to a temporary file first, then all are renamed."""
    staged = []
    try:
        for path, payload in payloads.items():
            folder = os.path.dirname(os.path.abspath(path))
            if os.path.exists(path) and not os.path.isfile(path):
                raise IsADirectoryError(21, "it exists and is not a file", path)
            fd, tmp = tempfile.mkstemp(prefix=".onnx2ttnn-", dir=folder)
            staged.append((tmp, path))
            with os.fdopen(fd, "wb") as handle:
                handle.write(payload.encode("utf-8") if isinstance(payload, str) else payload)
            os.chmod(tmp, 0o644)
        for tmp, path in staged:
            os.replace(tmp, path)
    except BaseException:
        for tmp, _ in staged:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        raise
