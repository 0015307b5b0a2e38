"""ZeRO-3 / FSDP weight gathers: one all-gather per layer, prefetched behind compute.

Hand-derived from the ring cost model (comm.py: an all-gather of n ranks costs
(n-1)/n * S/bw + (n-1) * latency) and the prefetch rule of the PyTorch FSDP notes
("FSDP Prefetch Nuances": layer i+1's all-gather overlaps layer i's compute; the first
all-gather of a pass cannot overlap anything).
"""

from dataclasses import replace

import pytest

import traincost
from traincost import catalog
from traincost.assumptions import DEFAULT
from traincost.inputs import Job, Workload

A100 = catalog.accelerator("a100-sxm4-80gb")
N = 16                 # two 8-GPU domains: the data-parallel ring crosses the scale-out fabric
LAYERS = 4
# no overlap of the gradient reduce-scatter, so its whole time is on the critical path, and
# no slowdown of the compute the hidden gathers run beside (test_each_pass_slows_... prices it)
NO_DP_OVERLAP = replace(DEFAULT, dp_overlap_fraction=0.0, overlap_compute_slowdown=0.0)


def _dp_comm(acc, hidden, assumptions=NO_DP_OVERLAP, **kw):
    wl = Workload(layers=LAYERS, hidden=hidden, heads=16, vocab=32000)
    knobs = dict(tp=1, pp=1, vpp=1, cp=1, ep=1, zero=3, micro_batch=1, recompute="none",
                 job=Job(seq_len=2048, global_batch=2 * N))
    knobs.update(kw)
    return traincost.estimate(acc, N, workload=wl, assumptions=assumptions,
                              **knobs).report["step_dp_comm_s"]


def test_gathers_pay_the_ring_latency_once_per_layer():
    # comm-bound (a 1 GB/s fabric): nothing of the gathers hides except the compute window,
    # so raising the per-step latency by d adds (n-1)*d for the gradient reduce-scatter
    # plus (n-1)*d for every layer's all-gather in each of the m = 2 micro-batches' two
    # passes (forward, backward; no recompute)
    slow = replace(A100, scaleout_bytes_per_s=1e9)
    d = 1e-4
    base = _dp_comm(slow, 1024)
    later = _dp_comm(slow, 1024, assumptions=replace(
        NO_DP_OVERLAP, scaleout_latency_s=NO_DP_OVERLAP.scaleout_latency_s + d))
    assert later - base == pytest.approx((N - 1) * d * (1 + 2 * 2 * LAYERS), rel=1e-9)


@pytest.mark.parametrize("recompute,passes", [("none", 2), ("full", 3)])
def test_prefetch_leaves_only_the_first_gather_of_each_pass_exposed(recompute, passes):
    # latency-bound gathers far shorter than the compute (infinitely fast links, both tiers: a
    # ring crossing domains runs at most at the scale-up rate, comm.link; a wide
    # layer): the prefetched gathers of layers 2..L hide behind the layer before; the
    # first layer's gather of each pass, (n-1)*latency, stays exposed in every micro-batch.
    # The gradient reduce-scatter adds one more (n-1)*latency.
    fast = replace(A100, scaleout_bytes_per_s=1e30, scaleup_bytes_per_s=1e30)
    lat = DEFAULT.scaleout_latency_s
    got = _dp_comm(fast, 4096, recompute=recompute,
                   assumptions=replace(DEFAULT, overlap_compute_slowdown=0.0))
    assert got == pytest.approx((N - 1) * lat * (1 + 2 * passes), rel=1e-9)


def test_without_prefetch_every_gather_is_exposed():
    # prefetch turned off (overlap fraction 0): all L gathers of each pass are exposed
    fast = replace(A100, scaleout_bytes_per_s=1e30, scaleup_bytes_per_s=1e30)
    a = replace(NO_DP_OVERLAP, zero3_prefetch_overlap_fraction=0.0)
    lat = DEFAULT.scaleout_latency_s
    assert _dp_comm(fast, 4096, assumptions=a) == pytest.approx(
        (N - 1) * lat * (1 + 2 * 2 * LAYERS), rel=1e-9)


def test_each_pass_hides_its_gathers_behind_its_own_compute():
    # forward window = 1 unit of a micro-batch's 3 (forward 1 + backward 2, no recompute).
    # Choose the ring latency so the L gathers of a pass take 1.5 forward units: the forward
    # exposes 0.5 unit, the backward (2 units) only its first gather; plus the reduce-scatter
    fast = replace(A100, scaleout_bytes_per_s=1e30, scaleup_bytes_per_s=1e30)
    wl = Workload(layers=LAYERS, hidden=4096, heads=16, vocab=32000)
    knobs = dict(tp=1, pp=1, vpp=1, cp=1, ep=1, zero=3, micro_batch=1, recompute="none",
                 job=Job(seq_len=2048, global_batch=2 * N))
    m = 2                                                   # micro-batches per step
    compute = traincost.estimate(fast, N, workload=wl, assumptions=NO_DP_OVERLAP,
                                 **knobs).report["step_compute_s"]
    forward = compute / m / 3
    lat = 1.5 * forward / (LAYERS * (N - 1))
    a = replace(NO_DP_OVERLAP, scaleout_latency_s=lat)
    got = traincost.estimate(fast, N, workload=wl, assumptions=a, **knobs).report["step_dp_comm_s"]
    first = (N - 1) * lat
    assert got == pytest.approx(first + m * (0.5 * forward + first), rel=1e-9)


def test_hidden_gathers_slow_the_compute_they_run_beside():
    # test_each_pass_hides_its_gathers_behind_its_own_compute's layout, with compute running
    # 25% slower beside a collective (Lee et al. 2025 measured 18.9% on average, up to 40%):
    # each micro-batch's gathers last 2 passes x 1.5 forward units = 3 units, of which
    # 0.5 unit + the backward's first gather stay exposed, so 2.5 units - first hide, and
    # each hidden second gets only 1/1.25 of a second of compute done: s/(1+s) = 0.2 of it
    # is lost. The reduce-scatter (no dp overlap) is all exposed and hides nothing.
    fast = replace(A100, scaleout_bytes_per_s=1e30, scaleup_bytes_per_s=1e30)
    wl = Workload(layers=LAYERS, hidden=4096, heads=16, vocab=32000)
    knobs = dict(tp=1, pp=1, vpp=1, cp=1, ep=1, zero=3, micro_batch=1, recompute="none",
                 job=Job(seq_len=2048, global_batch=2 * N))
    m = 2
    compute = traincost.estimate(fast, N, workload=wl, assumptions=NO_DP_OVERLAP,
                                 **knobs).report["step_compute_s"]
    forward = compute / m / 3
    lat = 1.5 * forward / (LAYERS * (N - 1))
    a = replace(NO_DP_OVERLAP, scaleout_latency_s=lat, overlap_compute_slowdown=0.25)
    got = traincost.estimate(fast, N, workload=wl, assumptions=a, **knobs).report["step_dp_comm_s"]
    first = (N - 1) * lat
    exposed = first + m * (0.5 * forward + first)
    assert got == pytest.approx(exposed + 0.2 * m * (2.5 * forward - first), rel=1e-9)


@pytest.mark.parametrize("framework,syncs", [("olmo-core", True), ("pytorch-fsdp", False)])
def test_a_framework_that_syncs_every_micro_batch_reduces_in_each_backward(framework, syncs):
    # data/frameworks.csv grad_sync_every_microbatch: OLMo-core's trainer enters no_sync only
    # under DDP, so FSDP2 reduce-scatters in every micro-batch's backward; plain FSDP leaves
    # it to the loop (blank: once a step). Latency-bound links chosen so a ring's (N-1)
    # latencies, x, equal one forward unit f: the L = 4 gathers of a pass take 4f, the
    # forward (f) exposes 3f, the backward (2f) 2f; the reduce-scatter (x = f, no dp
    # overlap) is all exposed. m = 2 micro-batches: 11f a step. Syncing each micro-batch,
    # the first one's backward carries the reduce-scatter too, 5f in its 2f: 1f more, 12f.
    fast = replace(A100, scaleout_bytes_per_s=1e30, scaleup_bytes_per_s=1e30)
    wl = Workload(layers=LAYERS, hidden=4096, heads=16, vocab=32000)
    knobs = dict(tp=1, pp=1, vpp=1, cp=1, ep=1, zero=3, micro_batch=1, recompute="none",
                 job=Job(seq_len=2048, global_batch=2 * N), framework=framework, overlap="tp")
    m = 2
    est = traincost.estimate(fast, N, workload=wl, assumptions=NO_DP_OVERLAP, **knobs)
    assert est.stack.overlap == "tp"                  # the gradient reduction not overlapped
    forward = est.report["step_compute_s"] / m / 3
    a = replace(NO_DP_OVERLAP, scaleout_latency_s=forward / (N - 1))
    got = traincost.estimate(fast, N, workload=wl, assumptions=a, **knobs).report["step_dp_comm_s"]
    assert got == pytest.approx((12 if syncs else 11) * forward, rel=1e-9)
