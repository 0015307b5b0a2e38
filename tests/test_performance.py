"""Roofline GEMM time, pipeline bubble, overlap."""

import numpy as np
import pytest

from traincost.assumptions import DEFAULT
from traincost.performance import attention_rate, exposed, gemm_time, pipeline_bubble_fraction


def test_large_gemm_is_compute_bound():
    # 8192^3 GEMM: 2*8192^3 FLOP / 2e14 FLOP/s = 5.5 ms; its 3*8192^2*2 bytes take 0.2 ms
    t = gemm_time(8192, 8192, 8192, 2e14, 2e12)
    assert float(t) == pytest.approx(2 * 8192**3 / 2e14)


def test_thin_gemm_is_memory_bound():
    # one token (m=1) through a 8192x8192 weight: bytes 2*(8192 + 8192^2 + 8192) at 2 TB/s
    t = gemm_time(1, 8192, 8192, 2e14, 2e12)
    assert float(t) == pytest.approx(2 * (8192 + 8192**2 + 8192) / 2e12)


def test_megatron_bubble():
    # Narayanan et al. SC21 Sec. 2.2: (p-1)/m, interleaved (p-1)/(v*m)
    assert pipeline_bubble_fraction(8, 1, 96) == pytest.approx(7 / 96)
    assert pipeline_bubble_fraction(8, 2, 96) == pytest.approx(7 / 192)
    assert pipeline_bubble_fraction(1, 1, 4) == 0


def test_exposed_communication():
    assert float(exposed(1.0, 0.5, 1.0)) == pytest.approx(0.5)
    assert float(exposed(1.0, 4.0, 0.5)) == 0.0
    assert list(exposed(np.array([1.0, 3.0]), 2.0, 1.0)) == [0.0, 1.0]


# Dao 2023, FlashAttention-2 (arXiv:2307.08691) Sec. 4.1: causal forward + backward on an
# A100 80GB SXM4, sequence 512 to 16k with batch x sequence = 16k, hidden 2048. A causal
# row attends to s/2 keys on average. Fig. 4c (head dim 64) as its own text layer prints the
# bars; Fig. 4d (head dim 128) read off the figure's bar labels (Dao-AILab/flash-attention
# assets/flash2_a100_fwd_bwd_benchmark.png; a transcription used before 2026-12-02 had 131,
# 182, 189, 189 for the 1k, 4k, 8k and 16k bars). [TFLOP/s]
FA2_A100_KV = np.array([256, 512, 1024, 2048, 4096, 8192])
FA2_A100_HD64 = np.array([88, 119, 140, 156, 165, 171])
FA2_A100_HD128 = np.array([99, 133, 155, 173, 182, 189])


@pytest.mark.parametrize("bars, tolerance", [(FA2_A100_HD64, 0.015), (FA2_A100_HD128, 0.05)])
def test_attention_rate_follows_flashattention2_over_sequence_length(bars, tolerance):
    # from the 16k bar alone, L/(L + L0) with the assumed L0 gives every shorter bar: a
    # 1.9x rise from 512 to 16k that the catalog's single rate would miss
    predicted = attention_rate(bars[-1], FA2_A100_KV, FA2_A100_KV[-1],
                               DEFAULT.attention_half_rate_kv_tokens)
    assert predicted == pytest.approx(bars, rel=tolerance)
    assert bars[-1] / bars[0] > 1.9


def test_attention_rate_is_the_measurement_at_its_own_size_and_half_at_l0():
    assert float(attention_rate(514e12, 4096, 4096, 250.0)) == pytest.approx(514e12, rel=1e-15)
    # with a benchmark at very long rows (the rate's ceiling), L = L0 runs at half of it
    assert float(attention_rate(2.0, 250.0, 1e15, 250.0)) == pytest.approx(1.0, rel=1e-9)
    # 4x the keys per row at L >> L0 changes little; 1/4 of them at L = L0 costs a lot
    assert float(attention_rate(1.0, 1000.0, 250.0, 250.0)) == pytest.approx(
        (1000 / 1250) / (250 / 500))
