"""The inputs of a mock run: from an --inputs .npz, from the program's own loader, or seeded random
tensors made from the program's INPUTS table."""
from __future__ import annotations

import re


def identifier(name: str) -> str:
    s = re.sub(r"\W", "_", name)
    if not s or s[0].isdigit():
        s = "_" + s
    return s


def torch_dtype(torch, spec):
    if isinstance(spec, torch.dtype):
        return spec
    name = str(spec).split(".")[-1]
    dt = getattr(torch, name, None)
    if not isinstance(dt, torch.dtype):
        raise ValueError(f"unknown torch dtype {spec!r} in INPUTS")
    return dt


def make_inputs(torch, module, inputs_path, seed):
    spec = getattr(module, "INPUTS", None)
    if inputs_path and hasattr(module, "load_inputs"):
        return module.load_inputs(inputs_path)  # onnx2ttnn programs know their own input format
    if not inputs_path and hasattr(module, "random_inputs"):
        return module.random_inputs(seed)
    if inputs_path:
        import numpy as np
        data = np.load(inputs_path)
        out = {}
        for k in data.files:
            arr = data[k]
            key = k if (spec is None or k in spec) else identifier(k)
            t = torch.from_numpy(np.ascontiguousarray(arr))
            if spec is not None and key in spec:
                want = torch_dtype(torch, spec[key][1])
                if t.dtype != want:
                    t = t.to(want)
            out[key] = t
        if spec is not None:
            missing = [k for k in spec if k not in out]
            if missing:
                raise KeyError(f"--inputs {inputs_path} lacks inputs {missing} (has {list(out)})")
        return out
    if spec is None:
        raise ValueError("program has no INPUTS dict and no --inputs file was given")
    g = torch.Generator().manual_seed(seed)
    out = {}
    for name, (shape, dtype) in spec.items():
        dt = torch_dtype(torch, dtype)
        shape = tuple(int(s) for s in shape)
        if dt.is_floating_point:
            out[name] = torch.randn(shape, generator=g, dtype=torch.float32).to(dt)
        else:
            out[name] = torch.zeros(shape, dtype=dt)
    return out
