"""Spatial rearrangement and sampling ops: DepthToSpace, SpaceToDepth, GridSample, AffineGrid."""
import torch


def host_depth_to_space(x, *, blocksize, mode="DCR"):
    n, c, h, w = x.shape
    b = blocksize
    if mode == "DCR":
        t = x.reshape(n, b, b, c // (b * b), h, w).permute(0, 3, 4, 1, 5, 2)
    else:
        t = x.reshape(n, c // (b * b), b, b, h, w).permute(0, 1, 4, 2, 5, 3)
    return t.reshape(n, c // (b * b), h * b, w * b)


def host_space_to_depth(x, *, blocksize, mode="DCR"):
    n, c, h, w = x.shape
    b = blocksize
    t = x.reshape(n, c, h // b, b, w // b, b)
    t = t.permute(0, 3, 5, 1, 2, 4) if mode == "DCR" else t.permute(0, 1, 3, 5, 2, 4)
    return t.reshape(n, c * b * b, h // b, w // b)


def host_grid_sample(x, grid, *, mode="linear", padding_mode="zeros", align_corners=0):
    torch_mode = {"linear": "bilinear", "bilinear": "bilinear", "cubic": "bicubic", "bicubic": "bicubic",
                  "nearest": "nearest"}[mode]
    out = torch.nn.functional.grid_sample(x.to(torch.float32), grid.to(torch.float32), mode=torch_mode,
                                          padding_mode=padding_mode, align_corners=bool(align_corners))
    return out.to(x.dtype)


def host_affine_grid(theta, size, *, align_corners=0):
    shape = [int(v) for v in size.reshape(-1).tolist()]
    return torch.nn.functional.affine_grid(theta, shape, align_corners=bool(align_corners))
