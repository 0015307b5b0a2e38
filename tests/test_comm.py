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


def test_an_all_to_all_sends_its_in_domain_share_over_the_scale_up_links():
    """NCCL's all-to-all is n - 1 concurrent point-to-point exchanges of S/n each (its user
    guide's point-to-point all-to-all): a rank reaches its g - 1 domain peers over the
    scale-up links and the n - g others over its own NIC, at once; the slower leg sets
    the time."""
    from traincost.comm import all_to_all_link, collective_time
    S = 1e9
    # 16 ranks over two 8-GPU boxes, 450 GB/s up, 50 GB/s a NIC: 8 of 16 shares cross the
    # network, max(7/16 S/450, 8/16 S/50) = S/100 GB/s = 10 ms (every byte over the NIC,
    # as the model priced it before: 15/16 S/50 = 18.75 ms)
    bw, lat = all_to_all_link(16, 1, 8, 450e9, 50e9, 1.0, 1.0, 1e-6, 5e-6)
    assert float(collective_time("all_to_all", S, 16, bw, 0.0)) == pytest.approx(0.010)
    assert float(lat) == 5e-6
    # one rank a box (expert parallelism strided over tensor parallelism): all over the NIC
    bw, _ = all_to_all_link(8, 8, 8, 450e9, 50e9, 1.0, 1.0, 0.0, 0.0)
    assert float(collective_time("all_to_all", S, 8, bw, 0.0)) == pytest.approx(7 / 8 * S / 50e9)
    # inside one box: the scale-up rate and latency, as a ring collective's
    bw, lat = all_to_all_link(8, 1, 8, 450e9, 50e9, 0.5, 1.0, 1e-6, 5e-6)
    assert float(bw) == pytest.approx(225e9) and float(lat) == 1e-6
    # 64 ranks over 8 boxes with a slow scale-up leg (mesh pairs at 1/7 of 100 GB/s):
    # the in-box leg, 7/64 S over 7 links of 100/7 GB/s (100 GB/s), against 56/64 S/50
    bw, _ = all_to_all_link(64, 1, 8, 100e9, 50e9, 1.0, 1.0, 0.0, 0.0, mesh=True)
    assert float(collective_time("all_to_all", S, 64, bw, 0.0)) == pytest.approx(
        max(7 / 64 * S / 100e9, 56 / 64 * S / 50e9))


def test_p2p():
    assert p2p_time(1e9, 1e10, 1e-5) == pytest.approx(0.10001)


# ---- a mesh domain (Gaudi 2/3, MI300X): a link to each other device ------------------------
GAUDI2 = (8, 262.5e9, 37.5e9, 1.0, 1.0, 0.0, 0.0)    # 21 x 12.5 GB/s up, 3 x 12.5 out


def test_a_mesh_group_uses_only_its_own_links():
    """Intel's Network Configuration page: 21 scale-up ports, 3 to each of the 7 others of
    an 8-device box. A group of g in one box reaches its g - 1 peers over 3 (g - 1) ports
    of 12.5 GB/s; a pipeline send one peer's 3 ports whatever the group."""
    for g, ports in ((2, 3), (4, 9), (8, 21)):
        assert link(g, 1, *GAUDI2, mesh=True)[0] == pytest.approx(ports * 12.5e9)
        assert link(g, 1, *GAUDI2)[0] == pytest.approx(262.5e9)         # a switch
    assert link(4, 1, *GAUDI2, mesh=True, p2p=True)[0] == pytest.approx(3 * 12.5e9)
    # 4 ranks two apart share a box: 3 peers each
    assert link(4, 2, *GAUDI2, mesh=True)[0] == pytest.approx(9 * 12.5e9)


def test_a_mesh_group_across_boxes():
    """16 ranks over two boxes: the 8 of a box use all 21 ports, the fabric is 8 NICs' rate
    (8 x 37.5 GB/s) capped by the scale-up leg, as on a switch; one rank per box (stride 8)
    has no scale-up leg, its NIC's rate; 2 per box (stride 4) a leg of one peer's 3 ports."""
    assert link(16, 1, *GAUDI2, mesh=True)[0] == pytest.approx(min(8 * 37.5e9, 262.5e9))
    assert link(2, 8, *GAUDI2, mesh=True)[0] == pytest.approx(37.5e9)
    assert link(4, 4, *GAUDI2, mesh=True)[0] == pytest.approx(min(2 * 37.5e9, 3 * 12.5e9))


def test_mesh_tensor_parallel_pair_in_an_estimate():
    """Gaudi 2 at TP 2: its tensor-parallel all-reduces run at a seventh of a switched
    box's rate, so their bandwidth term is 7 x a switch copy's; at TP 8 (the whole box)
    the two are the same."""
    import dataclasses
    import traincost
    g2 = traincost.accelerator("gaudi2")
    assert g2.scaleup_topology == "mesh"
    switched = dataclasses.replace(g2, scaleup_topology="switch")
    kw = dict(model="llama2-13b", global_batch=256, seq_len=4096, micro_batch=2, zero=1,
              recompute="selective", precision="fp8", pp=2)
    full = [traincost.estimate(a, 16, tp=8, **{**kw, "pp": 1}).step_breakdown_s()["tp_comm"]
            for a in (g2, switched)]
    assert full[0] == pytest.approx(full[1], rel=1e-12)
    pair = [traincost.estimate(a, 16, tp=2, **kw).step_breakdown_s()["tp_comm"]
            for a in (g2, switched)]
    assert 5.0 < pair[0] / pair[1] <= 7.0          # latency terms are the same on both
    with pytest.raises(ValueError, match="scaleup_topology"):
        dataclasses.replace(g2, scaleup_topology="ring")


def test_a_measured_allreduce_fraction_scales_the_fitted_scaleup_efficiency():
    # Intel's Collectives Performance page: hccl_demo all_reduce over the 8 Gaudi 3 of a box
    # reaches 512.957 GB/s bus bandwidth of the 525 GB/s line rate (21 x 200 Gb/s): 0.977,
    # where nccl-tests on DGX A100 reach 230 of 300 GB/s (0.767), the devices whose runs fit
    # the scale-up efficiency; Gaudi 2 borrows Gaudi 3's fraction (same network, 100 Gb/s)
    import math
    from dataclasses import replace

    import traincost
    from traincost import catalog
    from traincost.assumptions import DEFAULT
    from traincost.comm_stages import _network

    g3 = catalog.accelerator("gaudi3")
    assert g3.allreduce_busbw_fraction == pytest.approx(512.957 / 525, abs=1e-4)
    assert catalog.accelerator("gaudi2").allreduce_busbw_fraction == g3.allreduce_busbw_fraction
    assert math.isnan(catalog.accelerator("h100-sxm5-80gb").allreduce_busbw_fraction)
    assert DEFAULT.reference_allreduce_busbw_fraction == pytest.approx(230 / 300)
    expected = min(1.0, DEFAULT.scaleup_comm_efficiency * (512.957 / 525) / (230 / 300))
    kw = dict(model="llama3.1-70b", global_batch=64, tp=8, pp=1, cp=1, zero=1, micro_batch=1,
              recompute="full", seq_len=8192)
    est = traincost.estimate(g3, 64, **kw)
    cols = {"scaleup_efficiency_ratio": (512.957 / 525) / (230 / 300),
            "scaleup_domain_devices": 8, "scaleup_bytes_per_s": 525e9,
            "scaleout_bytes_per_s": 75e9, "scaleout_oversubscription": 1.0,
            "scaleup_mesh": True}
    assert float(_network(cols, DEFAULT)[3]) == pytest.approx(expected, rel=1e-3)
    assert float(_network({**cols, "scaleup_efficiency_ratio": 1.0}, DEFAULT)[3]) == \
        DEFAULT.scaleup_comm_efficiency
    # the same box without the measurement exchanges its tensor-parallel traffic slower
    bare = traincost.estimate(replace(g3, allreduce_busbw_fraction=math.nan), 64, **kw)
    assert bare.values["step_tp_comm_s"] > est.values["step_tp_comm_s"]
    assert bare.values["step_compute_s"] == est.values["step_compute_s"]
