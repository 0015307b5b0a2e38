"""Intervals from the model's held-out errors and the sourced input ranges (issue 22).

Hand values: a pool of one error eps = log 2 makes every draw's step twice the predicted
one, so throughput halves and time, device-hours, energy, carbon and cost double (the
busy share, and so the power, is unchanged when every part of the step scales alike).
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

import traincost
from traincost import calibration, uncertainty
from traincost.cli import main

KW = dict(model="llama3.1-8b", global_batch=512, tokens=1e11)


@pytest.fixture(scope="module")
def est():
    return traincost.estimate("h100-sxm5-80gb", 64, **KW)


def test_one_error_of_log_2_halves_throughput_and_doubles_time_and_energy(est, monkeypatch):
    monkeypatch.setitem(calibration.ERROR_POOLS, "unspecified", [math.log(2.0)])
    box = uncertainty.intervals(est, draws=50, seed=0, spread="model")
    r = est.report
    for key in ("tokens_per_s", "mfu"):
        assert box[key] == pytest.approx([r[key] / 2] * 3, rel=1e-12)
    for key in ("step_time_s", "train_time_days", "device_hours", "facility_energy_mwh",
                "co2e_t", "cost_usd"):
        assert box[key] == pytest.approx([r[key] * 2] * 3, rel=1e-12)


def test_no_error_gives_the_point_itself(est, monkeypatch):
    monkeypatch.setitem(calibration.ERROR_POOLS, "unspecified", [0.0, 0.0])
    box = uncertainty.intervals(est, draws=10, seed=5)
    assert box["tokens_per_s"] == pytest.approx([est.report["tokens_per_s"]] * 3, rel=1e-12)


def test_quantiles_are_the_pools_as_drawn(est, monkeypatch):
    # errors -log 2, 0, +log 2 in equal shares: p10 of throughput is the point / 2, p90 twice
    # it (draws from the three, so p10 and p90 land on the outer two), the median the point
    monkeypatch.setitem(calibration.ERROR_POOLS, "unspecified",
                        [-math.log(2.0), 0.0, math.log(2.0)])
    monkeypatch.setitem(calibration.ERROR_POOL_DOCUMENTS, "unspecified", 0)   # not widened
    box = uncertainty.intervals(est, draws=3000, seed=0)
    t = est.report["tokens_per_s"]
    assert box["tokens_per_s"] == pytest.approx([t / 2, t, 2 * t], rel=1e-12)


def test_a_pool_of_few_documents_is_widened_for_a_new_one(est, monkeypatch):
    # the same pool from 10 documents: a new document's errors spread t_9(0.9) / z(0.9) x
    # sqrt(1 + 1/10) = 1.383 / 1.2816 x 1.0488 = 1.132 times wider (t-table: t_9,0.90 =
    # 1.383), so p10 and p90 of throughput are the point over and times 2^1.132
    monkeypatch.setitem(calibration.ERROR_POOLS, "unspecified",
                        [-math.log(2.0), 0.0, math.log(2.0)])
    monkeypatch.setitem(calibration.ERROR_POOL_DOCUMENTS, "unspecified", 10)
    box = uncertainty.intervals(est, draws=3000, seed=0)
    t = est.report["tokens_per_s"]
    k = 1.383 / 1.2816 * math.sqrt(1.1)
    assert box["tokens_per_s"] == pytest.approx([t / 2 ** k, t, t * 2 ** k], rel=1e-3)


def test_same_seed_same_interval_and_the_point_inside(est):
    a = uncertainty.intervals(est, draws=2000, seed=7)
    assert a == uncertainty.intervals(est, draws=2000, seed=7)
    assert a != uncertainty.intervals(est, draws=2000, seed=8)
    for key in uncertainty.INTERVAL_KEYS:
        lo, mid, hi = a[key]
        assert lo <= est.report[key] <= hi and lo <= mid <= hi, key
    # every framework class's pool has errors of both signs around zero: a point inside its
    # interval (the long-context class is where the model is known to run steps too fast)
    for cls, pool in calibration.ERROR_POOLS.items():
        if cls == "long-context":
            continue
        q10, q90 = np.quantile(pool, [0.1, 0.9])
        assert q10 < 0 < q90, cls


def test_kept_draws_follow_a_new_pool_and_equal_fresh_ones(est, monkeypatch):
    """The seeded draws are kept between intervals (issue 26: a widget bands 25 candidates
    a change); a new pool or a new ranges table must not reuse them."""
    monkeypatch.setitem(calibration.ERROR_POOLS, "unspecified", [0.0, 0.0])
    flat = uncertainty.intervals(est, draws=200, seed=3, spread="model")
    assert flat == uncertainty.intervals(est, draws=200, seed=3, spread="model")
    monkeypatch.setitem(calibration.ERROR_POOLS, "unspecified", [math.log(2.0)])
    doubled = uncertainty.intervals(est, draws=200, seed=3, spread="model")
    assert doubled["step_time_s"] == pytest.approx([2 * x for x in flat["step_time_s"]],
                                                   rel=1e-12)
    # every kept input's values are its quantile function at the seeded design
    inputs = uncertainty.uncertain_inputs(est)
    cls = uncertainty.error_class(est.inputs.stack.framework, est.system.accelerator)
    u, values = uncertainty._seeded_values(inputs, 200, 3, cls)
    assert np.array_equal(u, np.random.default_rng(3).random((200, len(inputs))))
    for j, inp in enumerate(inputs):
        assert np.array_equal(values[j], inp.ppf(u[:, j])), inp.id
        assert not values[j].flags.writeable


def test_the_class_follows_the_framework_factor():
    assert uncertainty.error_class("megatron", "a100-sxm4-80gb") == "reference"
    assert uncertainty.error_class("unspecified", "a100-sxm4-80gb") == "unspecified"
    assert uncertainty.error_class("torchtitan", "h100-sxm5-80gb") == "fitted"
    assert uncertainty.error_class("unspecified", "tpu-v5p") == "fitted"      # MaxText's
    assert uncertainty.error_class("torchtitan", "tpu-v5p") == "borrowed"
    # wider where no fit checks the framework: the stored pools' spreads are ordered
    width = {c: np.subtract(*np.quantile(p, [0.9, 0.1])) for c, p in
             calibration.ERROR_POOLS.items()}
    assert width["reference"] < width["fitted"] < width["borrowed"]


def test_estimate_keyword_and_cli_flag(capsys):
    e = traincost.estimate("h100-sxm5-80gb", 64, uncertainty=True, seed=2, **KW)
    assert e.intervals["class"] == "unspecified" and e.intervals["draws"] == 10_000
    assert e.to_dict()["intervals"] == e.intervals
    assert "intervals" not in traincost.estimate("h100-sxm5-80gb", 64, **KW).to_dict()
    base = ["estimate", "--accelerator", "h100-sxm5-80gb", "--devices", "64", "--model",
            "llama3.1-8b", "--global-batch", "512", "--tokens", "1e11"]
    assert main(base + ["--uncertainty", "--seed", "2", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["intervals"]["tokens_per_s"] == pytest.approx(e.intervals["tokens_per_s"])
    assert main(base + ["--uncertainty"]) == 0
    assert "range       p10-p90 under the model's error" in capsys.readouterr().out
    with pytest.raises(ValueError, match="seed: -1 must be a whole number of at least 0"):
        traincost.estimate("h100-sxm5-80gb", 64, uncertainty=True, seed=-1, **KW)
    with pytest.raises(ValueError, match="draws: 0 must be"):
        uncertainty.draw_error_factors("reference", 0, 0)


def test_stored_coverage_is_near_eighty_percent_where_the_model_is_calibrated():
    # issue 22's target: 80% intervals cover 75-85% of runs held out by source; met for the
    # reference framework and for an unstated one; the fitted and borrowed classes (31 and
    # 60 figures) fall a few points short, which the closing note reports
    m = calibration.METRICS
    assert 75.0 <= m["interval_reference_coverage_pct"] <= 85.0
    assert 75.0 <= m["interval_unspecified_coverage_pct"] <= 85.0
    assert m["interval_reference_median_width"] <= 1.6


# ---- the inputs nobody knows exactly (data/input_ranges.csv) --------------------------------
def test_each_range_maps_uniform_draws_to_its_stated_shape():
    tri = uncertainty.range_ppf(dict(distribution="triangular", low=0.0, mode=1.0, high=2.0))
    # symmetric triangle on [0, 2]: median 1; F(x) = x^2/2 below the mode, so p12.5 = 0.5
    assert tri(np.array([0.5, 0.125])) == pytest.approx([1.0, 0.5], rel=1e-12)
    uni = uncertainty.range_ppf(dict(distribution="uniform", low=0.9, mode=float("nan"),
                                     high=1.1))
    assert uni(np.array([0.25])) == pytest.approx([0.95], rel=1e-12)
    with pytest.raises(ValueError, match="distribution: 'beta'"):
        uncertainty.range_ppf(dict(distribution="beta", low=0, high=1))


def test_a_range_is_drawn_only_where_the_value_is_not_known():
    def ids(**kw):
        return [i.id for i in uncertainty.uncertain_inputs(traincost.estimate(
            "h100-sxm5-80gb", 64, **KW, **kw))]
    # a cloud region's PUE is its operator's fleet figure; a country's the survey mean
    assert "pue-fleet-site" in ids(region="aws:us-east-1")
    assert "pue-unknown-site" in ids(region="FRA")
    given = ids(pue=1.2, grid_intensity=300.0)
    assert not [i for i in given if i.startswith(("pue", "grid"))]
    assert given[0] == "model"
    assert {"compute-power", "host-power", "goodput-mature", "interruption-lost-mature"} \
        <= set(given)


def _design(est, *inputs):
    u = np.full((4, len(inputs)), 0.5)
    return uncertainty.evaluate_design(est, u, list(inputs))


def _const(id_, input_, use, value):
    return uncertainty.Uncertain(id_, input_, use, id_, lambda u: np.full(len(u), value))


def test_drawn_inputs_move_energy_carbon_and_time_as_the_formulas_say(est):
    # the world-average site: PUE 1.56 (Uptime survey mean). A factor 2 on its excess gives
    # PUE 1 + 2 x 0.56 = 2.12; half the grid intensity halves the carbon per MWh; operations
    # that keep 0.45 instead of 0.9 double the wall-clock time; the throughput stays
    r = est.report
    assert est.site.pue == pytest.approx(1.56)
    rep = _design(est, _const("m", "model_error_factor", "model", 1.0),
                  _const("p", "pue", "pue_survey", 2.0), _const("g", "grid", "grid", 0.5),
                  _const("q", "operations_goodput_fraction", "assumption", 0.45))
    assert rep["tokens_per_s"][0] == pytest.approx(r["tokens_per_s"], rel=1e-12)
    assert rep["train_time_days"][0] == pytest.approx(2 * r["train_time_days"], rel=1e-12)
    pue = rep["facility_energy_mwh"][0] / rep["it_energy_mwh"][0]
    assert pue == pytest.approx(2.12, rel=1e-12)
    per_mwh = rep["co2e_t"][0] / rep["facility_energy_mwh"][0]
    assert per_mwh == pytest.approx(0.5 * r["co2e_t"] / r["facility_energy_mwh"], rel=1e-12)


def test_one_uncertain_input_carries_the_whole_range(est, monkeypatch):
    # only goodput drawn (the model's error zero): time's range is all goodput's
    monkeypatch.setitem(calibration.ERROR_POOLS, "unspecified", [0.0])
    table = traincost.catalog.input_ranges()
    monkeypatch.setattr(traincost.catalog, "input_ranges",
                        lambda: table[table["id"] == "goodput-mature"])
    sens = uncertainty.sensitivity(est, base_samples=256, seed=3)
    assert sens["train_time_days"]["goodput-mature"] == pytest.approx(1.0)
    assert sens["train_time_days"]["model"] == pytest.approx(0.0, abs=1e-12)


def test_sensitivity_is_seeded_and_names_the_grid_only_when_it_is_drawn(est):
    a = uncertainty.sensitivity(est, base_samples=256, seed=4)
    assert a == uncertainty.sensitivity(est, base_samples=256, seed=4)
    assert sum(a["co2e_t"].values()) == pytest.approx(1.0)
    assert a["co2e_t"]["grid-year"] > 0
    known = traincost.estimate("h100-sxm5-80gb", 64, **KW, grid_intensity=300.0)
    assert "grid-year" not in uncertainty.sensitivity(known, base_samples=256)["co2e_t"]


def test_uncertainty_gives_the_drivers_in_json_and_words(capsys):
    e = traincost.estimate("h100-sxm5-80gb", 64, uncertainty=True, seed=2, **KW)
    d = e.to_dict()
    assert d["sensitivity"] == e.sensitivity and "co2e_t" in d["sensitivity"]
    assert d["intervals"]["inputs"][0] == "model" and len(d["intervals"]["inputs"]) > 1
    base = ["estimate", "--accelerator", "h100-sxm5-80gb", "--devices", "64", "--model",
            "llama3.1-8b", "--global-batch", "512", "--tokens", "1e11", "--uncertainty"]
    assert main(base) == 0
    out = capsys.readouterr().out
    assert "drivers     carbon's range: " in out and "% throughput model" in out


def test_compare_bands_hold_the_point_and_the_chart_draws_them(capsys):
    import matplotlib
    matplotlib.use("Agg")
    from traincost import plotting
    df = traincost.compare(["h100-sxm5-80gb", "b200"], 64, **KW, uncertainty=True, seed=1)
    from traincost.estimate import BAND_KEYS
    for key in BAND_KEYS:
        assert (df[f"{key}_p10"] <= df[key]).all() and (df[key] <= df[f"{key}_p90"]).all()
    assert "co2e_t_p10" not in traincost.compare(["b200"], 64, **KW).columns
    fig = plotting.compare_bars(df)
    gids = {c.get_gid() for ax in fig.axes for c in ax.get_children()}
    assert {"band:h100-sxm5-80gb", "band:b200"} <= gids
    base = ["compare", "--accelerators", "h100-sxm5-80gb,b200", "--devices", "64", "--model",
            "llama3.1-8b", "--global-batch", "512", "--tokens", "1e11", "--uncertainty",
            "--seed", "1", "--json"]
    assert main(base) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows[0]["co2e_t_p10"] == pytest.approx(df["co2e_t_p10"].iloc[0])
    with pytest.raises(ValueError, match="seed: -2"):
        traincost.compare(["b200"], 64, **KW, uncertainty=True, seed=-2)


def test_a_search_ranks_its_top_table_by_the_median_and_bands_it():
    kw = dict(KW, top=6, pareto=False)
    res = traincost.search(["h100-sxm5-80gb", "tpu-v5p"], 64, uncertainty=True, seed=3, **kw)
    top = res.top
    assert (top["step_time_s_p10"] <= top["step_time_s"]).all()
    assert (top["step_time_s"] <= top["step_time_s_p90"]).all()
    assert top["step_time_s_p50"].is_monotonic_increasing
    assert any(n.startswith("top: ranked by the median step_time_s") for n in res.notes)
    again = traincost.search(["h100-sxm5-80gb", "tpu-v5p"], 64, uncertainty=True, seed=3, **kw)
    assert again.top.equals(top)
    plain = traincost.search(["h100-sxm5-80gb", "tpu-v5p"], 64, **kw)
    assert "step_time_s_p50" not in plain.top.columns
    assert set(map(tuple, plain.top[["accelerator", "tp", "zero", "micro_batch",
                                      "recompute"]].values)) == \
        set(map(tuple, top[["accelerator", "tp", "zero", "micro_batch", "recompute"]].values))
    with pytest.raises(ValueError, match="seed: -1"):
        traincost.search("h100-sxm5-80gb", 64, uncertainty=True, seed=-1, **kw)


def test_measured_power_is_checked_against_its_interval(capsys):
    """Issue 22: coverage measured per family, power too. Every run whose power was
    metered gets the 80% interval of its average power per device; Patterson et al. 2021
    (Table 4) measured GPT-3 175B's V100s at 330 W average, which must lie inside its own."""
    from traincost import catalog, validate
    runs = catalog.published_runs()
    metered = runs[(runs["power_basis"] == "measured")
                   & runs["reported_avg_power_w_per_device"].notna()]
    t = validate.power_interval_coverage()
    assert list(t.index) == list(metered.index)
    assert (t["p10"] < t["p50"]).all() and (t["p50"] < t["p90"]).all()
    assert t["inside"].equals((t["p10"] <= t["reported"]) & (t["reported"] <= t["p90"]))
    gpt3 = t.loc["patterson-gpt3-175b"]
    assert gpt3["reported"] == 330.0 and gpt3["inside"]
    # the CLI reports it in its JSON and in words
    assert main(["validate", "--family", "power", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert [r["case"] for r in d["power_intervals"]] == list(metered.index)


def test_long_context_estimates_draw_from_the_long_context_runs():
    # issue 21: from long_context_rank_tokens tokens a rank the model runs published steps
    # too fast; such an estimate's interval draws from the errors of the measured runs at
    # that length: NeMo's long-sequence page from 16K tokens a rank (7 H100, 7 B200 rows),
    # torchtitan's four 32K/256K runs, llm-foundry's MPT-7B at 16K and the Trillium
    # recipes' three Gemma 3 12B runs at 32K (40 of its 48 layers windowed at 1,024)
    from traincost import catalog, validate
    from traincost.assumptions import DEFAULT
    runs = catalog.published_runs()
    long = uncertainty.long_context_ids(runs, DEFAULT)
    assert len(long) == 22
    pool = calibration.ERROR_POOLS["long-context"]
    assert len(pool) == 22 and calibration.ERROR_POOL_DOCUMENTS["long-context"] == 5
    # the model gaps are never fitted: their pooled errors are the validation's errors
    table = validate.compare_published()
    gaps = table[(table["family"] == "throughput") & table["case"].isin(long)
                 & (table["model_gap"] != "")]
    assert len(gaps) == 19                  # Gemma 3's two multi-slice runs among them
    want = sorted(np.round(np.log1p(gaps["error_pct"].to_numpy() / 100.0), 4))
    assert all(x in pool for x in want)
    kw = dict(model="llama3.1-8b", seq_len=65536, tp=2, global_batch=64, tokens=1e10)
    long_est = traincost.estimate("h100-sxm5-80gb", 64, cp=4, **kw)     # 16,384 a rank
    short_est = traincost.estimate("h100-sxm5-80gb", 64, cp=8, **kw)    # 8,192 a rank
    box = uncertainty.intervals(long_est, draws=2000, spread="model")
    assert box["class"] == "long-context"
    assert uncertainty.intervals(short_est, draws=2000)["class"] == "unspecified"
    # most of those runs took longer than predicted (their median error, about 5% since the
    # fused kernel runs at the GEMMs' in-model share; 25% before): the median step is the
    # point's times that error's factor, and the slower side of it
    assert float(np.median(pool)) > 0.0
    assert box["step_time_s"][1] == pytest.approx(
        long_est.report["step_time_s"] * math.exp(float(np.median(pool))), rel=0.02)


def test_a_step_time_miss_enters_the_pools_as_a_throughput_miss():
    # a pool's eps is log(predicted / measured) throughput, so a run the model runs too fast
    # is positive whether its source gave a rate or a step time: LUMI's MI250X step times
    # (Megatron-DeepSpeed, not fitted: the borrowed pool) were predicted about 25% short,
    # so they enter as log(measured step / predicted step) > 0, not with the sign turned
    from traincost import validate
    table = validate.compare_published()
    lumi = table[table["case"].str.startswith("lumi-mi250x-")
                 & (table["metric"] == "step_time_s")]
    assert len(lumi) == 5 and (lumi["error_pct"] < -20).all()
    want = np.round(np.log(lumi["reported"] / lumi["predicted"]).to_numpy(), 4)
    pool = calibration.ERROR_POOLS["borrowed"]
    assert all(x in pool for x in want) and (want > 0.2).all()
    assert not any(-x in pool for x in want)
