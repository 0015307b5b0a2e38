"""Collective times: ring algorithm volumes (nccl-tests PERFORMANCE.md) and tiers."""

import numpy as np
import pytest

from traincost.comm import collective_time, link, p2p_time


def test_ring_all_reduce_volume():
    # all-reduce sends 2(n-1)/n * S per rank; 1 GB on 8 ranks at 100 GB/s = 17.5 ms
    assert float(collective_time("all_reduce", 1e9, 8, 100e9, 0.0)) == pytest.approx(0.0175)


def test_all_gather_is_half_an_all_reduce_without_latency():
    ar = collective_time("all_reduce", 4e8, 16, 50e9, 0.0)
    ag = collective_time("all_gather", 4e8, 16, 50e9, 0.0)
    assert float(ar) == pytest.approx(2 * float(ag))


def test_latency_term_counts_ring_steps():
    # zero-byte all-reduce on n ranks: 2(n-1) steps of latency
    assert float(collective_time("all_reduce", 0.0, 4, 1e9, 1e-5)) == pytest.approx(6e-5)


def test_group_of_one_is_free():
    assert float(collective_time("all_reduce", 1e9, 1, 1e9, 1e-3)) == 0.0


def test_tier_choice():
    # 8 ranks, stride 1, domain 8: inside; stride 8 (data parallel over nodes): outside
    bw_in, lat_in = link(8, 1, 8, 300e9, 25e9, 0.75, 0.8, 5e-6, 1.5e-5)
    bw_out, lat_out = link(8, 8, 8, 300e9, 25e9, 0.75, 0.8, 5e-6, 1.5e-5)
    assert float(bw_in) == pytest.approx(225e9) and float(lat_in) == 5e-6
    assert float(bw_out) == pytest.approx(20e9) and float(lat_out) == 1.5e-5
    bw, _ = link(np.array([2, 16]), 1, 8, 300e9, 25e9, 1.0, 1.0, 0, 0)
    # 16 ranks stride 1 over two 8-device domains: each domain's 8 ranks move the ring's
    # inter-domain share over 8 NICs, 8 x 25 = 200 GB/s (below the 300 GB/s scale-up rate)
    assert list(bw) == [300e9, 200e9]
    # stride 2 (tp 2 inside): 4 ranks of the group per domain, 4 NICs, 100 GB/s
    assert float(link(16, 2, 8, 300e9, 25e9, 1.0, 1.0, 0, 0)[0]) == 100e9
    # never above the scale-up links the first level runs on (8 x 50 = 400 > 300)
    assert float(link(16, 1, 8, 300e9, 50e9, 1.0, 1.0, 0, 0)[0]) == 300e9
    # an all-to-all sends each rank's own data off the domain: one NIC's rate
    assert float(link(16, 1, 8, 300e9, 25e9, 1.0, 1.0, 0, 0, hierarchical=False)[0]) == 25e9


def test_p2p():
    assert p2p_time(1e9, 1e10, 1e-5) == pytest.approx(0.10001)
