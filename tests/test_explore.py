"""Tests for traincost.explore: the notebooks' questions, checked against hand-derivable
relations (sums, ratios, orderings), never against numbers copied from the code's output."""
import math

import numpy as np
import pandas as pd
import pytest

import traincost
from traincost import catalog, explore
from traincost.assumptions import DEFAULT
from traincost.units import GIB, HOURS_PER_YEAR

H100 = "h100-sxm5-80gb"
JOB = {"accelerator": H100, "model": "llama2-70b", "devices": 64, "global_batch": 1024}
LAYOUT = {"tp": 8, "pp": 4, "vpp": 1, "zero": 1, "recompute": "selective", "micro_batch": 1}


# --- FLOP per token ------------------------------------------------------------------------
@pytest.mark.parametrize("model", ["gpt3-175b", "llama2-7b", "llama2-70b", "mixtral-8x7b"])
@pytest.mark.parametrize("recompute", ["none", "selective", "full"])
def test_flop_parts_sum_to_the_estimates_flop(model, recompute):
    parts = explore.flop_per_token_parts(model, recompute)
    est = traincost.estimate(accelerator="b200", devices=64, model=model, global_batch=512,
                             recompute=recompute)
    model_part = parts["layer_matmuls"] + parts["attention_core"] + parts["output_layer"]
    assert model_part == pytest.approx(est.model_flop_per_token, rel=1e-12)
    assert sum(parts.values()) == pytest.approx(est.hardware_flop_per_token, rel=1e-12)


def test_gpt3_flop_parts_match_megatron_by_hand():
    # GPT-3 175B: L=96, h=12288, s=2048, V=50257 (f = 4h, MHA). Per layer the matrices hold
    # 4h^2 (attention) + 8h^2 (MLP) = 12h^2 weights (Narayanan et al. SC21, Eq. 2), the
    # attention core does 4*s*h forward FLOP per token, the logits 2*V*h.
    wl = catalog.model("gpt3-175b")
    L, h, s, V = wl.layers, wl.hidden, catalog.job("gpt3-175b").seq_len, wl.vocab
    parts = explore.flop_per_token_parts("gpt3-175b")
    assert parts["layer_matmuls"] == pytest.approx(6 * 12 * L * h**2, rel=1e-12)
    assert parts["attention_core"] == pytest.approx(3 * 4 * L * s * h, rel=1e-12)
    assert parts["output_layer"] == pytest.approx(6 * V * h, rel=1e-12)
    assert parts["recompute"] == 0.0


def test_recompute_repeats_the_right_forward():
    none, sel, full = (explore.flop_per_token_parts("llama2-7b", rc)
                       for rc in ("none", "selective", "full"))
    # selective repeats the attention core's forward (1/3 of its training FLOP); full
    # repeats the layers' forward: a third of matmuls + attention core
    assert sel["recompute"] == pytest.approx(none["attention_core"] / 3)
    assert full["recompute"] == pytest.approx((none["layer_matmuls"]
                                               + none["attention_core"]) / 3)
    assert 0 == none["recompute"] < sel["recompute"] < full["recompute"]


def test_longer_sequences_give_attention_a_bigger_share():
    short = explore.flop_per_token_parts("llama2-7b", seq_len=2048)
    long = explore.flop_per_token_parts("llama2-7b", seq_len=8192)
    assert long["attention_core"] == pytest.approx(4 * short["attention_core"])
    assert long["layer_matmuls"] == short["layer_matmuls"]


def test_flop_parts_rejects_unknown_recompute():
    with pytest.raises(ValueError, match="recompute"):
        explore.flop_per_token_parts("llama2-7b", "sometimes")


# --- layouts: memory and plain-words reasons ---------------------------------------------
def est(**changes):
    return explore.layout_estimate({**JOB, **LAYOUT, **changes})


def test_layout_estimate_uses_the_given_layout():
    e = est()
    p = e.parallel
    assert (p.tp, p.pp, p.zero, p.recompute, p.micro_batch) == (8, 4, 1, "selective", 1)
    assert e.to_dict()["parallel"]["dp"] == 64 // (8 * 4)


def test_memory_parts_sum_to_the_total():
    for zero in (0, 1, 2, 3):
        d = est(zero=zero).to_dict()
        assert sum(d["breakdown"]["memory_gib"].values()) == pytest.approx(
            d["memory_gib_per_device"])


def test_each_zero_stage_shards_one_more_state():
    m = [est(zero=z, tp=2, pp=1).memory_breakdown_gib() for z in (0, 1, 2, 3)]
    dp = 64 // 2
    assert m[1]["optimizer"] == pytest.approx(m[0]["optimizer"] / dp)
    assert m[2]["gradients"] == pytest.approx(m[0]["gradients"] / dp)
    assert m[3]["weights"] == pytest.approx(m[0]["weights"] / dp)
    totals = [sum(x.values()) for x in m]
    assert totals[3] < totals[2] < totals[1] < totals[0]


def test_recompute_and_micro_batch_move_activations_only():
    act = {rc: est(recompute=rc).memory_breakdown_gib()["activations"]
           for rc in ("none", "selective", "full")}
    assert act["full"] < act["selective"] < act["none"]
    one, two = est(micro_batch=1), est(micro_batch=2)
    assert two.memory_breakdown_gib()["weights"] == one.memory_breakdown_gib()["weights"]
    assert two.memory_breakdown_gib()["activations"] > one.memory_breakdown_gib()["activations"]


def test_more_tensor_parallelism_less_state_per_device():
    assert sum(est(tp=8, pp=1).memory_breakdown_gib().values()) < \
        sum(est(tp=2, pp=1).memory_breakdown_gib().values())


@pytest.mark.parametrize("changes, flag", [
    ({"tp": 3}, "tp 3"), ({"pp": 3}, "devices 64"), ({"vpp": 2, "pp": 1}, "vpp 2"),
    ({"micro_batch": 3}, "global batch 1024 must be"),
])
def test_impossible_layouts_say_why_in_plain_words(changes, flag):
    with pytest.raises(ValueError) as info:
        explore.layout_estimate({**JOB, **LAYOUT, **changes})
    msg = str(info.value)
    assert flag in msg
    assert "--" not in msg and "(" in msg            # CLI dashes gone, a reason added


def test_plain_reason_passes_other_messages_through():
    assert explore.plain_reason("accelerator: unknown 'x'") == "accelerator: unknown 'x'"


# --- smallest device count that fits -------------------------------------------------------
SCAN_JOB = {"accelerator": "a100-sxm4-80gb", "model": "llama2-70b", "global_batch": 1024,
            "recompute": "selective", "micro_batch": 1}


@pytest.fixture(scope="module")
def scans():
    return {z: explore.device_scan({**SCAN_JOB, "zero": z}) for z in (0, 3)}


def test_smallest_fitting_count_fits_and_no_smaller_one_does(scans):
    scan = scans[0]
    n = explore.smallest_fitting_devices(scan)
    assert n is not None
    assert bool(scan.loc[n, "fits_in_memory"])
    smaller = scan[scan.index < n]
    assert not smaller["fits_in_memory"].fillna(False).any()
    # and the estimate at that count agrees
    e = traincost.estimate(devices=n, **{k: v for k, v in SCAN_JOB.items()}, zero=0)
    assert e.fits_in_memory


def test_zero3_never_needs_more_devices_than_zero0(scans):
    assert explore.smallest_fitting_devices(scans[3]) <= explore.smallest_fitting_devices(scans[0])


def test_scan_rows_report_memory_against_hbm(scans):
    scan = scans[0].dropna(subset=["memory_gib_per_device"])
    fits = scan["fits_in_memory"].astype(bool)
    assert (fits == (scan["memory_gib_per_device"] <= scan["hbm_gib"])).all()
    assert (scan["tp"] * scan["pp"] * scan["dp"] == scan.index.to_series()).all()


def test_scan_with_nothing_fitting_returns_none():
    scan = explore.device_scan({**SCAN_JOB, "model": "llama3.1-405b", "zero": 0}, (1, 2))
    assert explore.smallest_fitting_devices(scan) is None


def test_scan_keeps_impossible_counts_as_rows():
    # 3 devices: tp, pp in {1, 2} leave dp = 3, and 1024 is no multiple of 3 * 8
    scan = explore.device_scan({**SCAN_JOB, "zero": 0, "micro_batch": 8}, (1, 3))
    assert pd.isna(scan.loc[3, "fits_in_memory"])
    assert scan.loc[3, "note"]
    assert not pd.isna(scan.loc[1, "fits_in_memory"])


def test_scan_needs_a_count():
    with pytest.raises(ValueError, match="devices"):
        explore.device_scan(SCAN_JOB, ())


def test_model_state_gib_is_16_bytes_per_parameter():
    n = traincost.estimate(accelerator=H100, devices=8, model="llama2-13b",
                           global_batch=1024).params
    assert explore.model_state_gib("llama2-13b", 8, 0) == pytest.approx(16 * n / GIB)
    assert explore.model_state_gib("llama2-13b", 8, 3) == pytest.approx(16 * n / GIB / 8)
    # stage 1: 2 + 2 bytes whole, 12 sharded
    assert explore.model_state_gib("llama2-13b", 8, 1) == pytest.approx((4 + 12 / 8) * n / GIB)
    with pytest.raises(ValueError, match="zero"):
        explore.model_state_gib("llama2-13b", 8, 4)


# --- power --------------------------------------------------------------------------------
def test_more_waiting_lowers_power():
    curve = explore.power_curve(H100)
    assert curve["busy_fraction"].is_monotonic_increasing
    assert np.all(np.diff(curve["device_w"]) > 0)
    assert (curve["total_w"] == curve["device_w"] + curve["host_w"]).all()


def test_power_curve_endpoints_by_hand():
    acc = catalog.accelerator(H100)
    a = DEFAULT
    curve = explore.power_curve(acc, [0.0, 1.0])
    span = acc.tdp_w - acc.idle_w
    assert curve["device_w"].iloc[0] == pytest.approx(acc.idle_w + span * a.wait_power_fraction)
    assert curve["device_w"].iloc[1] == pytest.approx(acc.idle_w + span * a.compute_power_fraction)
    assert curve["host_w"].iloc[0] == pytest.approx(a.host_power_fraction_of_tdp * acc.tdp_w)


@pytest.mark.parametrize("bad", [[-0.1], [1.5], [], [math.nan]])
def test_power_curve_rejects_bad_fractions(bad):
    with pytest.raises(ValueError, match="busy_fraction"):
        explore.power_curve(H100, bad)


# --- regions -------------------------------------------------------------------------------
REGION_JOB = {"accelerator": H100, "model": "llama2-7b", "devices": 256, "global_batch": 1024}


def test_same_run_different_grids_fixed_pue():
    df = explore.carbon_by_region({**REGION_JOB, "pue": 1.2}, ["world", "FRA", "POL"])
    g = catalog.regions()["grid_gco2e_per_kwh"]
    assert df["facility_energy_mwh"].nunique() == 1               # same energy everywhere
    assert (df["pue"] == 1.2).all()
    # tCO2e = MWh x gCO2e/kWh / 1000
    expected = df["facility_energy_mwh"] * g[df.index] / 1000
    assert df["co2e_t"].to_numpy() == pytest.approx(expected.to_numpy())
    assert df.loc["FRA", "co2e_t"] < df.loc["world", "co2e_t"] < df.loc["POL", "co2e_t"]


def test_default_pue_follows_the_region():
    df = explore.carbon_by_region(REGION_JOB, ["world", "gcp:europe-west1"])
    assert df.loc["gcp:europe-west1", "pue"] == pytest.approx(catalog.pue("google")[0])
    assert df.loc["world", "facility_energy_mwh"] == pytest.approx(
        df.loc["world", "it_energy_mwh"] * df.loc["world", "pue"])


def test_embodied_override_scales_embodied_only():
    base = explore.carbon_by_region(REGION_JOB, ["FRA"])
    server = explore.carbon_by_region({**REGION_JOB, "embodied_kgco2e": 463.0}, ["FRA"])
    kg = catalog.accelerator(H100).embodied_kgco2e
    assert server["embodied_co2e_t"].iloc[0] == pytest.approx(
        base["embodied_co2e_t"].iloc[0] * 463.0 / kg)
    assert server["co2e_t"].iloc[0] == pytest.approx(base["co2e_t"].iloc[0])


@pytest.mark.parametrize("changes, regions, word", [
    ({}, [], "region"), ({}, ["ATLANTIS"], "region"), ({"devices": 0}, ["FRA"], "devices"),
    ({"embodied_kgco2e": -1.0}, ["FRA"], "embodied"),
])
def test_carbon_by_region_messages(changes, regions, word):
    with pytest.raises(ValueError, match=word):
        explore.carbon_by_region({**REGION_JOB, **changes}, regions)


# --- rent or own ---------------------------------------------------------------------------
OWN_JOB = {"accelerator": "a100-sxm4-40gb", "model": "llama2-7b", "devices": 256,
           "global_batch": 1024}


@pytest.fixture(scope="module")
def rent_own():
    return explore.rent_vs_own(OWN_JOB)


def test_rent_and_own_parts_sum_to_cost(rent_own):
    parts = rent_own[["rent_usd", "depreciation_usd", "electricity_usd"]].sum(axis=1)
    assert parts.to_numpy() == pytest.approx(rent_own["cost_usd"].to_numpy())


def test_rent_and_own_by_hand(rent_own):
    acc = catalog.accelerator("a100-sxm4-40gb")
    rent, own = rent_own.loc["rent"], rent_own.loc["own"]
    assert rent["device_hours"] == own["device_hours"]           # same run, same layout
    assert rent["cost_usd"] == pytest.approx(rent["device_hours"] * acc.price_usd_per_h)
    life_h = DEFAULT.ownership_lifetime_years * HOURS_PER_YEAR
    system = acc.capex_usd * (1 + DEFAULT.ownership_system_overhead_fraction)
    # the building: $/W of critical load x (the A100's 400 W TDP plus its host's share)
    building = (DEFAULT.facility_capex_usd_per_w * 400.0
                * (1 + DEFAULT.host_power_fraction_of_tdp))
    assert own["depreciation_usd"] == pytest.approx(
        system * own["device_hours"] / life_h
        + building * own["device_hours"] / (DEFAULT.facility_lifetime_years * HOURS_PER_YEAR))
    assert own["electricity_usd"] == pytest.approx(
        own["facility_energy_mwh"] * 1000 * DEFAULT.electricity_usd_per_kwh)


def test_break_even_points(rent_own):
    rent, own = rent_own.loc["rent"], rent_own.loc["own"]
    u = rent_own.attrs["break_even_utilisation"]
    assert 0 < u < 1
    # at utilisation u, each used hour carries 1/u of the depreciation: owning = renting
    assert own["depreciation_usd"] / u + own["electricity_usd"] == pytest.approx(rent["cost_usd"])
    price = rent_own.attrs["break_even_price_usd_per_h"]
    assert price * rent["device_hours"] == pytest.approx(own["cost_usd"])


def test_without_a_purchase_price_own_is_blank_with_a_note():
    """L40S: a rental price in the catalog, no purchase price (only aggregator pages)."""
    table = explore.rent_vs_own({**OWN_JOB, "accelerator": "l40s"})
    assert pd.isna(table.loc["own", "cost_usd"])
    assert "purchase price" in table.loc["own", "note"]
    given = explore.rent_vs_own({**OWN_JOB, "accelerator": "l40s", "capex_usd": 25_000.0})
    assert given.loc["own", "cost_usd"] > 0 and given.loc["own", "note"] == ""


def test_rent_vs_own_overrides_and_messages():
    cheap = explore.rent_vs_own({**OWN_JOB, "price_per_hour": 1.0})
    assert cheap.loc["rent", "cost_usd"] == pytest.approx(cheap.loc["rent", "device_hours"])
    pricier_power = explore.rent_vs_own({**OWN_JOB, "electricity_usd_per_kwh": 0.16})
    base = explore.rent_vs_own(OWN_JOB)
    assert pricier_power.loc["own", "electricity_usd"] == pytest.approx(
        2 * base.loc["own", "electricity_usd"])
    with pytest.raises(ValueError, match="devices"):
        explore.rent_vs_own({**OWN_JOB, "devices": -4})


def test_price_sensitivity_is_linear():
    df = explore.price_sensitivity(OWN_JOB, percents=(50, 100, 200))
    rent = df["rent: price per device-hour"]
    assert rent[200.0] == pytest.approx(2 * rent[100.0])       # through the origin
    assert rent[50.0] == pytest.approx(rent[100.0] / 2)
    own = explore.rent_vs_own(OWN_JOB).loc["own"]
    # the building's share does not follow the devices' purchase price: $/W of critical
    # load x (the A100's 400 W plus its host's share) over the building's life
    building = (DEFAULT.facility_capex_usd_per_w * 400.0 * (1 + DEFAULT.host_power_fraction_of_tdp)
                * own["device_hours"] / (DEFAULT.facility_lifetime_years * HOURS_PER_YEAR))
    for col, fixed_part in (("own: purchase price", own["electricity_usd"] + building),
                            ("own: electricity price", own["depreciation_usd"])):
        s = df[col]
        # a straight line: equal steps in price give equal steps in cost ...
        assert s[200.0] - s[100.0] == pytest.approx(2 * (s[100.0] - s[50.0]))
        # ... whose value at a price of 0 is the part that price does not touch
        assert 2 * s[50.0] - s[100.0] == pytest.approx(fixed_part)
        assert s[100.0] == pytest.approx(own["cost_usd"])


def test_price_sensitivity_needs_positive_percents():
    with pytest.raises(ValueError, match="percents"):
        explore.price_sensitivity(OWN_JOB, percents=(0, 100))


def test_price_sensitivity_without_capex_has_blank_own_columns():
    df = explore.price_sensitivity({**OWN_JOB, "accelerator": "l40s"}, percents=(100,))
    assert df["own: purchase price"].isna().all()
    assert df["rent: price per device-hour"].notna().all()


# --- cheapest for a deadline -----------------------------------------------------------------
@pytest.fixture(scope="module")
def candidates():
    return explore.deadline_candidates({"model": "llama2-7b", "global_batch": 1024},
                                       ["a100-sxm4-80gb", H100, "tpu-v5p", "mi325x"],
                                       (64, 128, 256, 512, 1024))


def test_deadline_candidates_one_row_per_pair(candidates):
    assert len(candidates) == 4 * 5
    assert set(candidates["devices"]) == {64, 128, 256, 512, 1024}


@pytest.mark.parametrize("deadline", [5.0, 10.0, 20.0, 60.0])
def test_winner_meets_deadline_and_nothing_cheaper_does(candidates, deadline):
    table, winner = explore.pick_cheapest(candidates, deadline)
    assert winner is not None
    w = table.loc[winner]
    assert w["train_time_days"] <= deadline and bool(w["fits_in_memory"])
    ok = table[(table["train_time_days"] <= deadline)
               & table["fits_in_memory"].fillna(False).astype(bool)
               & table["cost_usd"].notna()]
    assert (ok["cost_usd"] >= w["cost_usd"]).all()


def test_a_later_deadline_never_costs_more(candidates):
    costs = []
    for deadline in (5.0, 10.0, 20.0, 60.0):
        table, winner = explore.pick_cheapest(candidates, deadline)
        costs.append(table.loc[winner, "cost_usd"])
    assert costs == sorted(costs, reverse=True)


def test_no_candidate_meets_an_impossible_deadline(candidates):
    table, winner = explore.pick_cheapest(candidates, 0.01)
    assert winner is None
    assert "meets deadline" not in set(table["status"])


def test_unpriced_accelerators_are_left_out(candidates):
    table, _ = explore.pick_cheapest(candidates, 60.0)
    assert set(table.loc[table["accelerator"] == "mi325x", "status"]) <= {
        "no price", "does not fit", "cannot run"}


@pytest.mark.parametrize("bad", [0, -1, math.nan, "soon"])
def test_pick_cheapest_rejects_bad_deadlines(candidates, bad):
    with pytest.raises(ValueError, match="deadline"):
        explore.pick_cheapest(candidates, bad)


def test_deadline_candidates_messages():
    job = {"model": "llama2-7b", "global_batch": 1024}
    with pytest.raises(ValueError, match="accelerator"):
        explore.deadline_candidates(job, [], (64,))
    with pytest.raises(ValueError, match="devices"):
        explore.deadline_candidates(job, [H100], ())
    with pytest.raises(ValueError, match="model"):
        explore.deadline_candidates({**job, "model": "nope"}, [H100], (64,))


def test_model_flop_per_token_is_the_estimates():
    # one formula: the sum the exercises and the validation use is the estimate's own
    # model FLOP per token (recompute left out), here with full recompute in the layout
    from traincost import estimate
    est = estimate("a100-sxm4-80gb", 64, model="llama2-7b", global_batch=512, tp=1, pp=1,
                   recompute="full")
    assert explore.model_flop_per_token("llama2-7b") == \
        pytest.approx(est.report["model_flop_per_token"], rel=1e-12)
    parts = explore.flop_per_token_parts("llama2-7b", "full")
    assert explore.model_flop_per_token("llama2-7b") == pytest.approx(
        parts["layer_matmuls"] + parts["attention_core"] + parts["output_layer"], rel=1e-12)


# --- 04: why the other layouts lose (traincost.explain, re-exported by explore) -------------
def test_layout_label_and_layout_of_by_hand():
    row = {"tp": 4.0, "pp": 4, "dp": 16, "cp": 1, "ep": 2, "vpp": 4, "micro_batch": 1,
           "zero": 1, "recompute": "selective", "devices": 512}
    assert explore.layout_label(row) == "tp4 pp4 dp16 ep2 vpp4 mb1 ZeRO-1 selective"
    assert explore.layout_of(row) == {"tp": 4, "pp": 4, "cp": 1, "ep": 2, "vpp": 4, "zero": 1,
                                      "micro_batch": 1, "recompute": "selective"}
    assert isinstance(explore.layout_of(row)["tp"], int)


def test_one_knob_variants_counted_by_hand():
    lay = {"tp": 1, "pp": 4, "cp": 1, "ep": 1, "vpp": 1, "zero": 1, "micro_batch": 1,
           "recompute": "selective"}
    names = [what for what, _ in explore.one_knob_variants(lay)]
    # tp and micro-batch cannot halve below 1, vpp is already 1 ("no interleaving" is no
    # change), ZeRO-1 and selective are the current values: 3 of 10 size changes drop,
    # 3 ZeRO stages and 2 recompute modes stay -> 7 + 3 + 2 = 12
    assert names == ["tp × 2", "tp × 4", "pp × 2", "pp × 4, no interleaving", "pp ÷ 2",
                     "micro-batch × 2", "micro-batch × 4", "ZeRO-0", "ZeRO-2", "ZeRO-3",
                     "none recompute", "full recompute"]


def row(change, step_s, bubble_s, comm_s, fits=True):
    return {"change": change, "step_time_s": step_s, "bubble_s": bubble_s,
            "exposed_comm_s": comm_s, "within_limit": fits}


def test_typical_losers_by_hand():
    best = row("best", 10.0, 1.0, 2.0)
    variants = [row("a", 9.0, 0.5, 1.0, fits=False),     # faster, over memory
                row("b", 8.0, 0.5, 1.0, fits=False),     # the fastest over memory
                row("c", 10.4, 1.04, 2.0),               # bubble +4 %: within 5 %, no loss
                row("d", 11.0, 1.2, 2.05),               # bubble +20 %; comm +2.5 %
                row("e", 12.0, 1.5, 2.0),                # bubble +50 %: the bubble loser
                row("f", 13.0, 1.0, 3.0)]                # comm +50 %: the comm loser
    chosen = explore.typical_losers(best, variants, excess_fraction=0.05)
    assert [(c["role"], c["change"]) for c in chosen] == [
        ("over memory", "b"), ("bubble", "e"), ("communication", "f")]
    # a wider margin than every excess leaves only the memory loser
    assert [c["role"] for c in explore.typical_losers(best, variants, 0.6)] == ["over memory"]
    # one variant is never chosen twice: e is also the worst on communication here
    chosen = explore.typical_losers(best, [row("e", 12.0, 1.5, 3.0)], 0.05)
    assert [c["role"] for c in chosen] == ["bubble"]


def test_typical_losers_default_margin_is_the_assumption():
    assert DEFAULT.why_lose_excess_fraction == 0.05
    best = row("best", 10.0, 1.0, 2.0)
    just_over = [row("x", 10.6, 1.06, 2.0)]                  # +6 % > 5 %
    just_under = [row("y", 10.4, 1.04, 2.0)]                 # +4 % < 5 %
    assert [c["change"] for c in explore.typical_losers(best, just_over)] == ["x"]
    assert explore.typical_losers(best, just_under) == []
