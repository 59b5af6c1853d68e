"""ir/sdpa_config: the SDPAProgramConfig chooser (q chunks that keep every core busy, the widest k chunk whose
circular buffers fit the reserve) and its circular-buffer bound against what real ttnn needed on the mock
(tools/ttnn_mock/probes/results/sdpa_config.txt)."""
from __future__ import annotations

import pytest

from onnx2ttnn.ir.sdpa_config import SDPAConfig, choose, circular_buffer_bytes

RESERVE = 320 * 1024

# (q chunk tiles, k chunk tiles, fp32 destination, NEED B/bank) measured for 12 heads of 64 over 128 tokens with
# a mask (BERT-base; at 1 x 1 the causal GPT-2 and the 197-token ViT shapes' 64,543, larger; results/sdpa_config.txt)
MEASURED = [(1, 1, True, 64543), (2, 2, True, 131776), (4, 4, True, 325406), (1, 4, True, 134465),
            (4, 1, True, 177494), (2, 4, True, 199008), (8, 8, True, 906298), (3, 3, True, 220523),
            (1, 1, False, 64543), (2, 2, False, 126397), (4, 4, False, 276998), (1, 4, False, 129087),
            (4, 1, False, 155979), (2, 4, False, 182873), (8, 8, False, 728803), (3, 3, False, 196319)]


@pytest.mark.parametrize("q_tiles, k_tiles, fp32, need", MEASURED)
def test_the_bound_is_never_under_a_measured_need(q_tiles, k_tiles, fp32, need):
    assert circular_buffer_bytes(q_tiles, k_tiles, 2, 2048, fp32) >= need


@pytest.mark.parametrize("q_shape, chosen", [
    ((1, 12, 128, 64), SDPAConfig((8, 8), 32, 128)),   # BERT-base / GPT-2: 48 q chunks < 64 cores: one tile
    ((1, 12, 197, 64), SDPAConfig((8, 8), 32, 224)),   # ViT-B/16: all 7 key tiles in one chunk
    ((1, 12, 1024, 64), SDPAConfig((8, 8), 128, 64)),  # 12 * 8 chunks >= 64 cores; k limited by the reserve
    ((4, 16, 256, 64), SDPAConfig((8, 8), 128, 64)),   # 256-row q chunks fit no k chunk: 128
])
def test_q_chunks_keep_every_core_busy_and_k_chunks_fill_the_reserve(q_shape, chosen):
    config = choose(q_shape, q_shape, "bf16", (8, 8), True, RESERVE)
    assert config == chosen
    assert circular_buffer_bytes(config.q_chunk_size // 32, config.k_chunk_size // 32, 2, 2048, True) <= RESERVE


def test_a_smaller_reserve_narrows_the_k_chunk_and_none_fitting_gives_a_reason():
    shape = (1, 12, 128, 64)
    assert choose(shape, shape, "bf16", (8, 8), True, 140_000) == SDPAConfig((8, 8), 32, 64)
    why = choose(shape, shape, "bf16", (8, 8), True, 50_000)
    assert isinstance(why, str) and "exceed the L1 kept free" in why
    assert isinstance(choose((12, 128, 64), shape, "bf16", (8, 8), True, RESERVE), str)


def test_the_config_writes_the_constructor_real_ttnn_took():
    config = SDPAConfig((8, 8), 32, 128)
    assert repr(config) == ("ttnn.SDPAProgramConfig(compute_with_storage_grid_size=ttnn.CoreCoord(8, 8), "
                            "q_chunk_size=32, k_chunk_size=128)")
    assert config.identifier == "SDPA_8x8_Q32_K128"
    with pytest.raises(ValueError, match="multiple of 32"):
        SDPAConfig((8, 8), 16, 32)
