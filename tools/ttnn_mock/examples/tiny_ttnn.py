"""A hand-written program in the shape onnx2ttnn generates (used to test tools/ttnn_mock/run_program.py).

Graph: y = softmax(relu(linear(x + embedding(token_ids), W1, b1)), axis=-1)
  x: float32 [1, 7, 48], token_ids: int64 [1, 7], W1: [48, 64], b1: [64], emb: [50, 48]
"""
import numpy as np
import torch
import ttnn

INPUTS = {
    "x": ((1, 7, 48), "torch.float32"),
    "token_ids": ((1, 7), "torch.int64"),
}
OUTPUTS = ["y"]


def load_parameters(device, path):
    w = np.load(path)
    dram = ttnn.DRAM_MEMORY_CONFIG
    return {
        "W1": ttnn.from_torch(torch.from_numpy(w["W1"]), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT,
                              device=device, memory_config=dram),
        "b1": ttnn.from_torch(torch.from_numpy(w["b1"]).reshape(1, -1), dtype=ttnn.bfloat16,
                              layout=ttnn.TILE_LAYOUT, device=device, memory_config=dram),
        "emb": ttnn.from_torch(torch.from_numpy(w["emb"]), dtype=ttnn.bfloat16, layout=ttnn.ROW_MAJOR_LAYOUT,
                               device=device, memory_config=dram),
    }


def forward(device, params, x, token_ids):
    x_0 = ttnn.from_torch(x, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device,
                          memory_config=ttnn.DRAM_MEMORY_CONFIG)
    ids_0 = ttnn.from_torch(token_ids.to(torch.int32), dtype=ttnn.uint32, layout=ttnn.ROW_MAJOR_LAYOUT,
                            device=device, memory_config=ttnn.DRAM_MEMORY_CONFIG)
    e_0 = ttnn.embedding(ids_0, params["emb"], layout=ttnn.TILE_LAYOUT, memory_config=ttnn.L1_MEMORY_CONFIG)
    ttnn.deallocate(ids_0)
    s_0 = ttnn.add(x_0, e_0, memory_config=ttnn.L1_MEMORY_CONFIG)
    ttnn.deallocate(x_0)
    ttnn.deallocate(e_0)
    h_0 = ttnn.linear(s_0, params["W1"], bias=params["b1"], memory_config=ttnn.L1_MEMORY_CONFIG)
    ttnn.deallocate(s_0)
    r_0 = ttnn.relu(h_0, memory_config=ttnn.L1_MEMORY_CONFIG)
    ttnn.deallocate(h_0)
    y = ttnn.softmax(r_0, dim=-1, memory_config=ttnn.DRAM_MEMORY_CONFIG)
    ttnn.deallocate(r_0)
    return {"y": y}
