"""The inputs as the physics splits them: Workload (architecture), Job, Stack,
ParallelConfig (None: searched), System (devices, power limit, network tiers) and Site.

Each is a frozen dataclass validated on construction; the declarative table of inputs
(traincost.options.INPUTS) names, for every user input, the dataclass that holds it.
"""

from dataclasses import fields, replace

import pytest

import traincost
from traincost import catalog, options
from traincost.inputs import Job, ParallelConfig, Site, Stack, System, Workload

H100 = catalog.accelerator("h100-sxm5-80gb")
SMALL = dict(model="gpt2-small", global_batch=64, tokens=1e9)


def _fields(cls) -> set:
    return {f.name for f in fields(cls)}


def test_each_declared_input_is_a_field_of_its_container():
    held = {"Workload": _fields(Workload), "Job": _fields(Job), "Stack": _fields(Stack),
            "ParallelConfig": _fields(ParallelConfig), "System": _fields(System),
            "Site": _fields(Site)}
    # inputs that choose rather than hold a value: a preset, the precision (the device's
    # default when not given), a region or grid figure (Site holds the resolved number)
    # (site_regions: a region per site, held as each site's own Site in Inputs.sites)
    chooses = {"model", "precision", "region", "site_regions"}
    # network bandwidths are given in Gb/s and held in B/s, latencies in ms held in s; the
    # interruption rate per million device-hours held per device-second, minutes in s
    converted = {"scale_up_gbps": "scaleup_bytes_per_s", "scale_out_gbps": "scaleout_bytes_per_s",
                 "oversubscription": "scaleout_oversubscription",
                 "site_link_gbps": "site_link_bytes_per_s",
                 "site_link_latency_ms": "site_link_latency_s",
                 "interruption_rate": "interruption_rate_per_device_s",
                 "interruption_minutes": "interruption_lost_s"}
    for o in options.INPUTS:
        if o.name in chooses:
            continue
        name = converted.get(o.name, o.column)
        assert name in held[o.container] or o.name in held[o.container], o.name


def test_the_architecture_holds_no_job_or_stack_field():
    assert not _fields(Workload) & (_fields(Job) | _fields(Stack))
    assert "power_cap_w" not in _fields(Site) and "power_cap_w" in _fields(System)


def test_a_job_must_run_at_least_one_step():
    # 8 sequences of 2048 tokens: one step is 16,384 tokens
    Job(seq_len=2048, global_batch=8, tokens=16384)
    with pytest.raises(ValueError, match="tokens: 16383 is fewer than one optimizer step's "
                                         "16,384"):
        Job(seq_len=2048, global_batch=8, tokens=16383)
    with pytest.raises(ValueError, match="seq-len"):
        Job(seq_len=0, global_batch=8)


def test_a_system_refuses_a_power_limit_the_device_cannot_take():
    # data/accelerators.csv: H100 SXM idles at 90 W (tdp 700 W)
    assert System(H100, 8).power_limit_w == 700.0
    assert System(H100, 8, power_cap_w=500).power_limit_w == 500.0
    for cap in (H100.idle_w, 701.0):
        with pytest.raises(ValueError, match=f"power-cap: {cap:g} W is outside what "
                                             "h100-sxm5-80gb allows"):
            System(H100, 8, power_cap_w=cap)


def test_network_tiers_default_to_the_accelerators_row():
    s = System(H100, 16)
    assert (s.domain_devices, s.scaleup_bw, s.scaleout_bw) == (
        H100.scaleup_domain_devices, H100.scaleup_bytes_per_s, H100.scaleout_bytes_per_s)
    what_if = System(H100, 16, scaleup_domain_devices=72, scaleout_bytes_per_s=25e9)
    assert (what_if.domain_devices, what_if.scaleout_bw) == (72, 25e9)


def test_a_slower_fabric_on_the_system_is_a_device_with_that_link():
    # the same what-if asked two ways: a System tier, or an Accelerator built with it
    knobs = dict(tp=1, pp=1, cp=1, ep=1, vpp=1, zero=3, micro_batch=1, recompute="none")
    tier = traincost.estimate(system=System(H100, 16, scaleout_bytes_per_s=5e9), **SMALL,
                              **knobs)
    device = traincost.estimate(replace(H100, scaleout_bytes_per_s=5e9), 16, **SMALL, **knobs)
    base = traincost.estimate(H100, 16, **SMALL, **knobs)
    assert tier.step_time_s == device.step_time_s > base.step_time_s


def test_parallel_config_is_an_input_whose_blanks_are_searched():
    assert not ParallelConfig(tp=2).complete and ParallelConfig(tp=2).knobs()["pp"] is None
    with pytest.raises(ValueError, match="recompute: 'some'"):
        ParallelConfig(recompute="some")
    fixed = dict(tp=2, pp=1, cp=1, ep=1, vpp=1, zero=1, micro_batch=2, recompute="full")
    by_object = traincost.estimate(H100, 16, parallel=ParallelConfig(**fixed), **SMALL)
    by_keyword = traincost.estimate(H100, 16, **fixed, **SMALL)
    assert by_object.to_dict() == by_keyword.to_dict()
    # one site: the placement across sites is moot and reported as its default, dp
    assert by_object.parallel == ParallelConfig(**fixed, cross_site="dp")
    assert by_object.parallel.complete
    partly = traincost.estimate(H100, 16, parallel=ParallelConfig(tp=2), **SMALL)
    assert partly.parallel.tp == 2 and "pp" in partly.to_dict()["parallel"]["chosen_by_search"]


def test_an_object_and_its_own_keywords_are_not_both_taken():
    wl = catalog.model("gpt2-small")
    job = catalog.job("gpt2-small", global_batch=64)
    with pytest.raises(ValueError, match="tp: given beside parallel="):
        traincost.estimate(H100, 16, parallel=ParallelConfig(tp=2), tp=4, **SMALL)
    with pytest.raises(ValueError, match="layers: given beside workload="):
        traincost.estimate(H100, 16, workload=wl, job=job, layers=4)
    with pytest.raises(ValueError, match="global-batch: given beside job="):
        traincost.estimate(H100, 16, workload=wl, job=job, global_batch=32)
    with pytest.raises(ValueError, match="overlap: given beside stack="):
        traincost.estimate(H100, 16, stack=Stack(), overlap="dp", **SMALL)
    with pytest.raises(ValueError, match="devices: given beside system="):
        traincost.estimate(devices=8, system=System(H100, 16), **SMALL)
    with pytest.raises(ValueError, match="power-cap: given beside system="):
        traincost.estimate(system=System(H100, 16), power_cap=500, **SMALL)


def test_the_objects_give_the_same_estimate_as_the_keywords():
    objs = dict(workload=catalog.model("gpt2-small"),
                job=catalog.job("gpt2-small", global_batch=64, tokens=1e9),
                stack=Stack(overlap="dp"), site=catalog.site("FRA"),
                system=System(H100, 16, power_cap_w=500))
    by_objects = traincost.estimate(**objs)
    by_keywords = traincost.estimate(H100, 16, **SMALL, overlap="dp", region="FRA",
                                     power_cap=500)
    assert by_objects.to_dict() == by_keywords.to_dict()
    assert by_objects.accelerator is H100 and by_objects.devices == 16
    assert by_objects.to_dict()["power_cap_w"] == 500.0


def test_search_keeps_a_systems_power_limit():
    capped = traincost.search(System(H100, 8, power_cap_w=400), 8, **SMALL, pareto=False)
    keyword = traincost.search(H100, 8, power_cap=400, **SMALL, pareto=False)
    assert capped.best["time"]["step_time_s"] == keyword.best["time"]["step_time_s"]
    uncapped = traincost.search(H100, 8, **SMALL, pareto=False)
    assert capped.best["time"]["step_time_s"] > uncapped.best["time"]["step_time_s"]


def test_network_what_ifs_reach_the_system_from_keywords_and_flags(capsys):
    # 400 Gb/s = 50 GB/s each direction (8 bits a byte); a 16-GPU scale-up domain keeps the
    # ZeRO-3 ring of 16 devices on the scale-up links, as a device built with it would
    from traincost.cli import main
    knobs = dict(tp=1, pp=1, cp=1, ep=1, vpp=1, zero=3, micro_batch=1, recompute="none")
    nvl16 = traincost.estimate(H100, 16, scale_up_domain=16, **SMALL, **knobs)
    device = traincost.estimate(replace(H100, scaleup_domain_devices=16), 16, **SMALL, **knobs)
    assert nvl16.step_time_s == device.step_time_s < traincost.estimate(
        H100, 16, **SMALL, **knobs).step_time_s
    nic = traincost.estimate(H100, 16, scale_out_gbps=100, **SMALL, **knobs)
    assert nic.system.scaleout_bw == 12.5e9
    assert nic.to_dict()["network"] == {"scale_up_domain": 8, "scale_up_gbps": 3600.0,
                                        "scale_out_gbps": 100.0, "oversubscription": 1.0,
                                        "site_link_gbps": None,
                                        "site_link_latency_ms": None}
    with pytest.raises(ValueError, match="scale-out-gbps: 0.0 must be above 0"):
        traincost.estimate(H100, 16, scale_out_gbps=0, **SMALL)
    with pytest.raises(ValueError, match="scale-up-domain: given beside system="):
        traincost.estimate(system=System(H100, 16), scale_up_domain=16, **SMALL)
    base = ["estimate", "--accelerator", "h100-sxm5-80gb", "--devices", "16", "--model",
            "gpt2-small", "--global-batch", "64", "--tokens", "1e9", "--json"]
    assert main(base + ["--scale-up-domain", "16", "--tp", "1", "--pp", "1", "--cp", "1",
                        "--zero", "3", "--micro-batch", "1", "--recompute", "none",
                        "--vpp", "1", "--ep", "1"]) == 0
    import json
    assert json.loads(capsys.readouterr().out)["step_time_s"] == pytest.approx(nvl16.step_time_s)
    swept = traincost.sweep(__import__("pandas").DataFrame(
        {"accelerator": ["h100-sxm5-80gb"] * 2, "devices": 16, "model": "gpt2-small",
         "global_batch": 64, "tokens": 1e9, "zero": 3, "recompute": "none",
         "scaleup_domain_devices": [8, 16]}))
    assert swept["step_time_s"].iloc[1] == pytest.approx(nvl16.step_time_s)
