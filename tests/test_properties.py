"""Property tests (hypothesis): invariants no single example shows."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import traincost
from traincost import catalog, layout
from traincost.assemble import Inputs, columns
from traincost.inputs import Stack, System
from traincost.model import evaluate

SETTINGS = settings(max_examples=40, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])
ACCELERATORS = ["a100-sxm4-80gb", "h100-sxm5-80gb", "mi300x", "tpu-v5p", "gaudi3", "b200"]
MODELS = ["gpt2-small", "llama2-7b", "llama3.1-8b", "megatron-18.4b", "mixtral-8x7b"]


def _layout_table(acc_id, model_id, devices, global_batch):
    acc = catalog.accelerator(acc_id)
    wl = catalog.model(model_id)
    spec = Inputs(wl, catalog.job(model_id, global_batch=global_batch, tokens=1e10), Stack(),
                  catalog.site("FRA", price_usd_per_h=2.0))
    lay = layout.candidates({}, heads=wl.heads, layers=wl.layers, experts=wl.experts,
                            devices=devices, domain=acc.scaleup_domain_devices)
    arch = layout.arch_columns(spec, devices)
    mask = layout.valid({**arch, **lay})
    lay = {k: v[mask] for k, v in lay.items()}
    return acc, spec, lay


def _one_layout(acc_id, model_id, devices, data):
    """One valid layout drawn from :func:`_layout_table` (global batch 1024), with the
    device and the inputs; None where the table has none."""
    acc, spec, lay = _layout_table(acc_id, model_id, devices, 1024)
    if len(lay["tp"]) == 0:
        return None
    i = data.draw(st.integers(0, len(lay["tp"]) - 1))
    return acc, spec, {k: v[i] for k, v in lay.items()}


@SETTINGS
@given(acc=st.sampled_from(ACCELERATORS), model=st.sampled_from(MODELS),
       log_devices=st.integers(3, 10), data=st.data())
def test_vectorised_rows_equal_single_evaluations(acc, model, log_devices, data):
    devices = 2**log_devices
    acc_o, spec, lay = _layout_table(acc, model, devices, 1024)
    if len(lay["tp"]) == 0:
        return
    sys_ = System(acc_o, devices)
    # every enumerated layout multiplies out to the device count
    out = evaluate(columns(sys_, spec, "bf16", lay))
    assert np.all(lay["tp"] * lay["pp"] * out["dp"] * lay["cp"] == devices)
    i = data.draw(st.integers(0, len(lay["tp"]) - 1))
    one = evaluate(columns(sys_, spec, "bf16", {k: v[i] for k, v in lay.items()}))
    for key in ("step_time_s", "memory_bytes_per_device", "avg_power_w_per_device", "cost_usd",
                "co2e_g", "mfu"):
        assert np.asarray(out[key]).reshape(-1)[i if np.ndim(out[key]) else 0] == \
            pytest.approx(float(one[key]), rel=1e-12)


@SETTINGS
@given(acc=st.sampled_from(ACCELERATORS), model=st.sampled_from(MODELS),
       devices=st.sampled_from([16, 64, 256]), pue=st.floats(1.0, 2.0),
       grid=st.floats(0.0, 900.0), price=st.floats(0.1, 20.0))
def test_energy_carbon_cost_identities(acc, model, devices, pue, grid, price):
    try:
        d = traincost.estimate(accelerator=acc, devices=devices, model=model, global_batch=1024,
                               tokens=1e10, pue=pue, grid_intensity=grid,
                               price_per_hour=price).to_dict()
    except ValueError:
        return
    assert d["it_energy_mwh"] == pytest.approx(
        d["avg_power_w_per_device"] * d["device_hours"] / 1e6, rel=1e-9)
    assert d["facility_energy_mwh"] == pytest.approx(d["it_energy_mwh"] * pue, rel=1e-9)
    assert d["co2e_t"] == pytest.approx(d["facility_energy_mwh"] * grid / 1e3, rel=1e-9, abs=1e-12)
    assert d["cost_usd"] == pytest.approx(d["device_hours"] * price, rel=1e-9)
    acc_o = catalog.accelerator(acc)
    assert acc_o.idle_w <= d["breakdown"]["power_w"]["device"] <= acc_o.tdp_w


@SETTINGS
@given(scale=st.floats(0.1, 10.0))
def test_cost_and_carbon_linear_in_price_and_intensity(scale):
    kw = dict(accelerator="h100-sxm5-80gb", devices=64, model="llama2-7b", global_batch=512,
              tokens=1e10, tp=1, pp=1, zero=1, micro_batch=1, recompute="selective")
    a = traincost.estimate(**kw, grid_intensity=100.0, price_per_hour=2.0).to_dict()
    b = traincost.estimate(**kw, grid_intensity=100.0 * scale, price_per_hour=2.0 * scale).to_dict()
    assert b["co2e_t"] == pytest.approx(a["co2e_t"] * scale, rel=1e-9)
    assert b["cost_usd"] == pytest.approx(a["cost_usd"] * scale, rel=1e-9)


@SETTINGS
@given(zero=st.integers(1, 3), log_dp=st.integers(0, 6), model=st.sampled_from(MODELS))
def test_more_data_parallel_never_needs_more_state_memory(zero, log_dp, model):
    spec = Inputs(catalog.model(model), catalog.job(model, global_batch=2**12, tokens=1e10),
                  Stack(), catalog.site())
    acc = catalog.accelerator("h100-sxm5-80gb")
    base = dict(tp=1, pp=1, cp=1, ep=1, vpp=1, zero=zero, micro_batch=1, recompute=1)
    small = evaluate(columns(System(acc, 2**log_dp), spec, "bf16", base))
    large = evaluate(columns(System(acc, 2**(log_dp + 1)), spec, "bf16", base))
    state = lambda o: float(o["memory_weights_bytes"] + o["memory_gradients_bytes"]
                            + o["memory_optimizer_bytes"])
    assert state(large) <= state(small)


@SETTINGS
@given(log_replicas=st.integers(0, 8), recompute=st.sampled_from(["none", "selective", "full"]),
       acc=st.sampled_from(["a100-sxm4-80gb", "h100-sxm5-80gb"]))
def test_straggler_wait_grows_with_devices_and_stays_below_its_slowdown(log_replicas, recompute,
                                                                          acc):
    # the same replica (tp 8 x pp 8, 16 sequences) on 1..256 replicas: the expected wait for
    # a slow machine grows with the device count, and never exceeds the straggler's extra
    # forward time, 10% of at most half the compute (the forward and its recompute)
    def share(replicas):
        n = 64 * replicas
        parts = traincost.estimate(accelerator=acc, devices=n, model="megatron-18.4b",
                                   global_batch=16 * replicas, micro_batch=1, tp=8, pp=8,
                                   vpp=1, zero=1, recompute=recompute).step_breakdown_s()
        return parts["stragglers"] / parts["compute"]
    a = traincost.DEFAULT_ASSUMPTIONS.straggler_forward_slowdown
    few, more = share(2**log_replicas), share(2**(log_replicas + 1))
    assert 0 < few <= more <= a / 2


@SETTINGS
@given(acc=st.sampled_from(ACCELERATORS), model=st.sampled_from(MODELS),
       log_devices=st.integers(3, 9), low=st.floats(0.5, 0.99), data=st.data())
def test_a_lower_power_cap_never_speeds_a_layout_up_nor_raises_its_power(acc, model,
                                                                          log_devices, low,
                                                                          data):
    devices = 2**log_devices
    drawn = _one_layout(acc, model, devices, data)
    if drawn is None:
        return
    acc_o, spec, one = drawn
    free = evaluate(columns(System(acc_o, devices), spec, "bf16", one))
    capped = evaluate(columns(System(acc_o, devices, power_cap_w=low * acc_o.tdp_w), spec,
                              "bf16", one))
    if not np.isfinite(free["step_time_s"]):
        return                                   # a link the catalog has no figure for
    # slower, by at most the clock factor; lower device power; memory untouched
    ratio = float(capped["step_time_s"] / free["step_time_s"])
    assert 1.0 <= ratio <= 1.0 / low ** traincost.DEFAULT_ASSUMPTIONS.power_cap_clock_exponent \
        + 1e-12
    assert float(capped["device_power_w"]) < float(free["device_power_w"])
    assert float(capped["memory_bytes_per_device"]) == float(free["memory_bytes_per_device"])


@SETTINGS
@given(acc=st.sampled_from(ACCELERATORS), model=st.sampled_from(MODELS),
       log_devices=st.integers(3, 9), overlap=st.sampled_from(["tp", "pp", "dp", "tp,pp,dp"]),
       slowdown=st.floats(0.0, 1.0), data=st.data())
def test_hiding_communication_never_slows_a_step_and_costs_what_it_slows(acc, model,
                                                                         log_devices, overlap,
                                                                         slowdown, data):
    # a hidden exchange of t costs t s/(1 + s) < t (assumptions.overlap_compute_slowdown,
    # Lee et al. 2025): a stack that overlaps never takes longer than one that does not,
    # and the more compute slows beside a collective, the longer the overlapped step
    from dataclasses import replace
    devices = 2**log_devices
    drawn = _one_layout(acc, model, devices, data)
    if drawn is None:
        return
    acc_o, spec, one = drawn
    a = replace(traincost.DEFAULT_ASSUMPTIONS, overlap_compute_slowdown=slowdown)
    more = replace(a, overlap_compute_slowdown=slowdown + 0.1)

    def step(stack, assumptions):
        s = replace(spec, stack=stack)
        return float(evaluate(columns(System(acc_o, devices), s, "bf16", one),
                              assumptions)["step_time_s"])
    plain = step(Stack(), a)
    if not np.isfinite(plain):
        return                                   # a link the catalog has no figure for
    hidden = step(Stack(overlap=overlap), a)
    assert hidden <= plain * (1 + 1e-12)
    assert step(Stack(overlap=overlap), more) >= hidden * (1 - 1e-12)
