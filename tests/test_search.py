"""traincost.search: best layouts, constraints, Pareto fronts, chunking, progress, bands."""

import importlib
import itertools
import math

import numpy as np
import pandas as pd
import pytest

import traincost
from traincost import catalog, layout
from traincost.search import OBJECTIVES, mfu_band_note, mfu_bands, pareto_front, published_band

# a small workload: GPT-2 small (12 layers, 12 heads, s 1024) on 16 H100s, ZeRO-1 and no
# interleaving held fixed, so brute force over estimate() stays cheap
SMALL = dict(model="gpt2-small", global_batch=64, tokens=1e9, zero=1, vpp=1, region="FRA",
             price_per_hour=3.0)
LAYOUT = ("tp", "pp", "cp", "ep", "vpp", "zero", "micro_batch", "recompute")


def _layout(row) -> tuple:
    return tuple(row[k] for k in LAYOUT)


def _everything(**kw):
    """Every feasible layout, as the top table of a search with a huge K."""
    return traincost.search(top=10**6, **kw)


# ---- the enumeration --------------------------------------------------------------------
def test_candidate_chunk_walks_the_product_in_itertools_order():
    space = {"tp": [1, 2, 4], "pp": [1, 3], "micro_batch": [1, 2, 8], "recompute": [0, 2]}
    rows = list(itertools.product(*space.values()))
    whole = layout.candidate_chunk(space, 0, layout.space_size(space))
    assert list(zip(*whole.values())) == rows
    parts = [layout.candidate_chunk(space, i, min(i + 5, len(rows)))
             for i in range(0, len(rows), 5)]
    assert [tuple(int(p[k][j]) for k in space) for p in parts for j in range(len(p["tp"]))] == rows


def test_candidate_space_widening():
    # B = 64, s = 1024: micro-batches dividing 64 up to 32768 / 1024 = 32 tokens' worth
    sp = layout.candidate_space({}, heads=12, layers=12, experts=0, devices=16, domain=8,
                                global_batch=64, seq_len=1024)
    assert sp["micro_batch"] == [1, 2, 4, 8, 16, 32]
    assert sp["tp"] == [1, 2, 3, 4, 6, 8]          # powers of two and divisors of 12, <= 8
    assert sp["cp"] == [1]                           # 1024 tokens: no context parallelism
    long = layout.candidate_space({}, heads=32, layers=32, experts=0, devices=64, domain=8,
                                  global_batch=96, seq_len=16384)
    assert long["cp"] == [1, 2, 4]                   # 16384 / 4 = 4096 tokens per rank
    assert long["micro_batch"] == [1, 2, 4, 8]       # 32768 / 16384 = 2, plus the defaults
    fixed = layout.candidate_space({"tp": 2, "cp": 1}, heads=32, layers=32, experts=0,
                                   devices=64, domain=8, global_batch=96, seq_len=16384)
    assert fixed["tp"] == [2] and fixed["cp"] == [1]


# ---- the best layout, checked by brute force over estimate() ------------------------------
def test_best_per_objective_equals_brute_force_over_estimate():
    res = _everything(accelerators="h100-sxm5-80gb", devices=16, memory_headroom=0.0, **SMALL)
    lay = layout.candidates({"zero": 1, "vpp": 1}, heads=12, layers=12, experts=0, devices=16,
                            domain=8, global_batch=64, seq_len=catalog.job("gpt2-small").seq_len)
    results = []
    for i in range(len(lay["tp"])):
        knobs = {k: layout.knob_value(k, v[i]) for k, v in lay.items()}   # text knobs as text
        try:
            d = traincost.estimate(accelerator="h100-sxm5-80gb", devices=16,
                                   **{**SMALL, **knobs}).to_dict()
        except ValueError:
            continue
        if d["fits_in_memory"]:
            results.append((knobs, d))
    assert res.layouts_feasible == len(results) == len(res.top)
    for obj, col in OBJECTIVES.items():
        best = min(r[1][col] for r in results)
        assert res.best[obj][col] == pytest.approx(best, rel=1e-12), obj
    fastest = min(results, key=lambda r: (r[1]["step_time_s"], r[1]["memory_gib_per_device"]))
    assert _layout(res.best["time"]) == tuple(fastest[0][k] for k in LAYOUT)


def test_rental_cost_and_carbon_follow_time_and_energy_on_one_device_count():
    # by hand: at one device count and a rental price, cost = devices x hours x price is
    # proportional to the time, and carbon = energy x intensity to the energy
    res = _everything(accelerators="h100-sxm5-80gb", devices=16, **SMALL)
    assert res.best["cost"]["step_time_s"] == res.best["time"]["step_time_s"]
    assert res.best["carbon"]["facility_energy_mwh"] == res.best["energy"]["facility_energy_mwh"]
    assert len(res.pareto["time_cost"]) == 1
    top = res.top
    assert np.allclose(top["cost_usd"], top["device_hours"] * 3.0, rtol=1e-12)


def test_top_table_is_sorted_and_feasible():
    res = traincost.search("a100-sxm4-80gb", [32, 64], model="llama2-7b", global_batch=512,
                           tokens=1e10, top=25)
    assert len(res.top) == 25
    assert res.top["step_time_s"].is_monotonic_increasing
    hbm = catalog.accelerator("a100-sxm4-80gb").hbm_bytes / 2**30
    assert (res.top["memory_gib_per_device"] <= 0.9 * hbm).all()     # default headroom 10%
    assert (res.top["tp"] * res.top["pp"] * res.top["dp"] * res.top["cp"]
            == res.top["devices"]).all()
    assert res.layouts_enumerated >= res.layouts_evaluated >= res.layouts_fit \
        >= res.layouts_feasible > 0


def test_estimate_uses_the_search():
    kw = dict(model="llama2-13b", global_batch=512, tokens=1e11)
    est = traincost.estimate(accelerator="h100-sxm5-80gb", devices=64, **kw)
    res = traincost.search("h100-sxm5-80gb", 64, memory_headroom=0.0, **kw)
    assert est.layouts_evaluated == res.layouts_evaluated
    p = est.to_dict()["parallel"]
    assert tuple(p[k] for k in LAYOUT) == _layout(res.best["time"])
    assert est.step_time_s == res.best["time"]["step_time_s"]


# ---- constraints ---------------------------------------------------------------------------
@pytest.mark.parametrize("flag,column", [("max_days", "train_time_days"),
                                         ("max_cost_usd", "cost_usd"),
                                         ("max_co2e_t", "co2e_t")])
def test_constraints_remove_exactly_the_rows_they_should(flag, column):
    kw = dict(accelerators="a100-sxm4-80gb", devices=[16, 64], **SMALL)
    free = _everything(**kw).top
    limit = float(free[column].median())
    capped = _everything(**kw, **{flag: limit})
    assert capped.layouts_feasible == int((free[column] <= limit).sum()) < len(free)
    assert (capped.top[column] <= limit).all()
    kept = set(map(_layout_with_devices, capped.top.to_dict("records")))
    assert kept == {_layout_with_devices(r) for r in free.to_dict("records") if r[column] <= limit}
    none = _everything(**kw, **{flag: float(free[column].min()) * 0.5})
    assert none.layouts_feasible == 0 and all(v is None for v in none.best.values())
    assert none.top.empty and any("deadline" in n for n in none.notes)
    # and it says how far the cap is from reach: the best any layout that fits reaches,
    # the minimum of the unconstrained table's column
    (note,) = [n for n in none.notes if "deadline" in n]
    best = float(free[column].min())
    shown = {"train_time_days": f"takes {best:.3g} days", "cost_usd": f"costs {best:,.0f} USD",
             "co2e_t": f"emits {best:.3g} tCO2e"}[column]
    assert shown in note, note


def _layout_with_devices(r):
    return (r["devices"], *(r[k] for k in LAYOUT))


def test_budget_excludes_unknown_prices():
    # MI325X has no catalog price: its cost is unknown, so no budget can be shown to hold
    res = traincost.search("mi325x", 16, model="gpt2-small", global_batch=64, tokens=1e9,
                           max_cost_usd=1e12)
    assert res.layouts_fit > 0 and res.layouts_feasible == 0


def test_memory_headroom_is_a_constraint():
    kw = dict(accelerators="a100-sxm4-80gb", devices=64, model="llama2-7b", global_batch=512,
              tokens=1e10)
    hbm = catalog.accelerator("a100-sxm4-80gb").hbm_bytes / 2**30
    loose, tight = _everything(memory_headroom=0.0, **kw), _everything(memory_headroom=0.5, **kw)
    assert (tight.top["memory_gib_per_device"] <= 0.5 * hbm).all()
    assert tight.layouts_fit == int((loose.top["memory_gib_per_device"] <= 0.5 * hbm).sum())
    assert tight.layouts_fit < loose.layouts_fit


def test_headroom_flag_warns_about_nearly_full_memory():
    # headroom 0 lets layouts use up to all of HBM; those above 1 - 0.10 get flagged
    res = traincost.search("a100-sxm4-80gb", 64, model="llama2-7b", global_batch=512,
                           tokens=1e10, memory_headroom=0.0, top=5)
    limit = 1 - traincost.DEFAULT_ASSUMPTIONS.memory_headroom_fraction
    full = res.top[res.top["memory_fraction_of_hbm"] > limit]
    assert len(full) >= 1
    assert full["memory_warning"].all() and not res.top.loc[~res.top.index.isin(full.index),
                                                            "memory_warning"].any()
    assert len(res.warnings) >= 1 and "of HBM" in res.warnings[0]
    default = traincost.search("a100-sxm4-80gb", 64, model="llama2-7b", global_batch=512,
                               tokens=1e10, top=5)
    assert not default.top["memory_warning"].any() and default.warnings == []


def test_when_nothing_fits_the_least_memory_layout_is_reported():
    res = traincost.search("a100-sxm4-80gb", 8, model="llama2-70b", global_batch=512,
                           tokens=1e10)
    assert res.layouts_fit == 0 and res.best["time"] is None
    assert res.least_memory["memory_gib_per_device"] > 80
    assert "fits" in res.notes[0]


# ---- Pareto fronts -------------------------------------------------------------------------
def test_pareto_front_small_example():
    # by hand: (1,5) and (2,3) are non-dominated; (3,4) is beaten by (2,3); the repeat of
    # (2,3) is represented once
    x, y = np.array([1.0, 2.0, 3.0, 2.0]), np.array([5.0, 3.0, 4.0, 3.0])
    assert pareto_front(x, y).tolist() == [0, 1]
    assert pareto_front(x, y, tiebreak=np.array([0, 9, 2, 1])).tolist() == [0, 3]


@pytest.mark.parametrize("front,ycol", [("time_cost", "cost_usd"),
                                        ("time_energy", "facility_energy_mwh"),
                                        ("time_carbon", "co2e_t")])
def test_pareto_fronts_are_non_dominated_and_cover_every_point(front, ycol):
    res = _everything(accelerators=["a100-sxm4-80gb", "h100-sxm5-80gb"], devices=[16, 32, 64],
                      **SMALL)
    pts = res.top[["step_time_s", ycol]].to_numpy()
    fr = res.pareto[front][["step_time_s", ycol]].to_numpy()
    assert len(fr) >= 2
    for i, p in enumerate(fr):                  # nobody beats a front point on both axes
        others = np.delete(fr, i, axis=0)
        assert not np.any(np.all(others <= p, axis=1) & np.any(others < p, axis=1))
        assert not np.any(np.all(pts <= p, axis=1) & np.any(pts < p, axis=1))
    for p in pts:                               # and some front point is at least as good
        assert np.any(np.all(fr <= p, axis=1))


# ---- chunking, progress -----------------------------------------------------------------
def test_chunked_and_unchunked_searches_agree():
    kw = dict(accelerators=["a100-sxm4-80gb", "h100-sxm5-80gb"], devices=[16, 32], top=7,
              **SMALL)
    whole = traincost.search(chunk_size=10**7, **kw)
    small = traincost.search(chunk_size=97, **kw)
    assert whole.layouts_evaluated == small.layouts_evaluated
    pd.testing.assert_frame_equal(whole.top, small.top)
    for obj in OBJECTIVES:
        pd.testing.assert_series_equal(whole.best[obj], small.best[obj])
    for name in whole.pareto:
        pd.testing.assert_frame_equal(whole.pareto[name], small.pareto[name])


@pytest.mark.parametrize("slack", [4096, 0])
def test_a_short_top_is_the_head_of_the_whole_ranking(slack, monkeypatch):
    """A top of every feasible layout (kept unsorted until the end, over many small
    chunks) is the whole feasible set ordered by the objective, then memory; a top of 5
    is its first five rows; a Pareto front point is never beaten on both axes by any row
    of the whole table. Slack 0 compacts the stash of candidate rows after every chunk."""
    monkeypatch.setattr(importlib.import_module("traincost.search"), "STASH_SLACK_ROWS", slack)
    kw = dict(accelerators=["a100-sxm4-80gb", "h100-sxm5-80gb"], devices=[16, 32], **SMALL)
    every = traincost.search(top=10**6, chunk_size=61, objective="energy", **kw)
    assert len(every.top) == every.layouts_feasible
    e = every.top["facility_energy_mwh"].to_numpy()
    m = every.top["memory_gib_per_device"].to_numpy()
    assert np.all((e[1:] > e[:-1]) | ((e[1:] == e[:-1]) & (m[1:] >= m[:-1])))
    five = traincost.search(top=5, chunk_size=61, objective="energy", **kw)
    pd.testing.assert_frame_equal(five.top, every.top.iloc[:5])
    pts = every.top[["step_time_s", "co2e_t"]].to_numpy()
    for p in every.pareto["time_carbon"][["step_time_s", "co2e_t"]].to_numpy():
        assert not np.any(np.all(pts <= p, axis=1) & np.any(pts < p, axis=1))


def test_progress_callback_reaches_total():
    calls = []
    res = traincost.search("h100-sxm5-80gb", [16, 32], chunk_size=500,
                           progress=lambda done, total: calls.append((done, total)), **SMALL)
    assert len(calls) > 2
    assert calls[-1] == (res.layouts_enumerated, res.layouts_enumerated)
    assert all(b[0] > a[0] for a, b in zip(calls, calls[1:]))


# ---- bad input -----------------------------------------------------------------------------
@pytest.mark.parametrize("kwargs,flag", [
    (dict(objective="speed"), "objective"), (dict(top=0), "top"),
    (dict(devices=0), "devices"), (dict(max_days=-1), "max-days"),
    (dict(memory_headroom=1.0), "memory-headroom"), (dict(accelerators="nonesuch"), "accelerator"),
    (dict(tp=7), "tp"), (dict(devices=7, tp=2), "tp"),
])
def test_bad_input_names_the_flag(kwargs, flag):
    kw = {"accelerators": "h100-sxm5-80gb", "devices": 16, **SMALL, **kwargs}
    with pytest.raises(ValueError, match=flag):
        traincost.search(**kw)


def test_missing_precision_leaves_an_accelerator_out():
    res = traincost.search(["a100-sxm4-80gb", "h100-sxm5-80gb"], 16, precision="fp8", **SMALL)
    assert set(res.top["accelerator"]) == {"h100-sxm5-80gb"}
    assert any("a100-sxm4-80gb has no fp8" in n for n in res.notes)


# ---- published MFU bands -------------------------------------------------------------------
def test_mfu_band_rows_are_consistent():
    df = mfu_bands()
    ids = set(catalog.accelerators().index)
    for rid, row in df.iterrows():
        assert set(row["accelerators"].split("|")) <= ids, rid
        assert 0 < row["low_fraction"] <= row["high_fraction"] < 1, rid


def test_published_bands_by_hand():
    # Ampere MFU: BLOOM 48% (BigScience 2022) to MegaScale 55.2% (Jiang et al. NSDI'24);
    # hardware utilisation: Megatron-LM SC21 Table 1, 43% to 52%; Hopper: Llama 3 38% to
    # NVIDIA's NeMo Llama 3.1 8B benchmark 59.37% (dgxc-benchmarking README_8b.md)
    a100 = published_band("a100-sxm4-80gb")
    assert a100["mfu"][:2] == (0.48, 0.552) and a100["hfu"][:2] == (0.43, 0.52)
    assert published_band("h100-sxm5-80gb")["mfu"][:2] == (0.38, 0.5937)
    assert published_band("l4") == {}
    row = {"accelerator": "h100-sxm5-80gb", "mfu": 0.62, "hfu": 0.63}
    assert "ABOVE" in mfu_band_note(row)
    assert "within" in mfu_band_note({**row, "mfu": 0.40})
    assert "below" in mfu_band_note({**row, "mfu": 0.30})
    assert "no published band" in mfu_band_note({**row, "accelerator": "l4"})


def test_result_reports_the_band_next_to_the_best():
    res = traincost.search("a100-sxm4-80gb", 64, model="llama2-7b", global_batch=512,
                           tokens=1e10)
    note = res.mfu_note()
    assert f"MFU {res.best['time']['mfu']:.0%}" in note and "nvidia-ampere" in note
    d = res.to_dict()
    assert d["mfu_band"] == note and math.isfinite(d["elapsed_s"])
