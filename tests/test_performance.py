"""Roofline GEMM time, pipeline bubble, overlap."""

import numpy as np
import pytest

from traincost.performance import exposed, gemm_time, pipeline_bubble_fraction


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
