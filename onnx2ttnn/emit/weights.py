"""The weights sidecar: a deterministic, pickle-free .npz (zip of .npy files); emit/publish.py writes it with the
program, as one set."""
from __future__ import annotations

import io
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
