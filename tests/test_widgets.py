"""Kernel-side tests of traincost.widgets: build each widget, drive its controls, check
what it shows. No browser: the callbacks run synchronously when a control's value changes.
"""
import html
import os
import math
import re

import numpy as np
import pandas as pd
import pytest

import traincost
from traincost import catalog, plotting, widgets
from traincost.model import STEP_PARTS

TWO = ("a100-sxm4-80gb", "h100-sxm5-80gb")
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture
def box():
    return widgets.compare_accelerators()


@pytest.fixture
def small():
    return widgets.compare_accelerators(accelerators=TWO)


def table_rows(box):
    """Accelerator ids shown in the HTML table's body, in order."""
    body = box.table.value.split("<tbody>")[1]
    return re.findall(r"<tr>\s*<th>([^<]+)</th>", body)


# --- compare_accelerators: defaults ---------------------------------------------------------
def test_default_shows_one_row_per_selected_accelerator(box):
    selected = box.controls["accelerators"].value
    assert set(widgets.DEFAULT_ACCELERATORS) == set(selected)
    assert {"a100-sxm4-80gb", "h100-sxm5-80gb"} <= set(selected)
    assert list(box.result.index) == list(selected)
    assert table_rows(box) == list(selected)
    assert all(math.isfinite(d) and d > 0 for d in box.result["train_time_days"])
    assert box.message.value == ""
    assert box.chart.value[:8] == PNG_MAGIC


def test_default_tokens_are_the_presets(box):
    preset = catalog.models().loc["llama2-7b", "tokens_reported"]
    assert box.controls["tokens"].value * 1e9 == pytest.approx(preset)


def test_table_has_units_in_headers(box):
    header = box.table.value.split("</thead>")[0]
    for unit in ("[days]", "[MWh]", "CO2e [t]", "[USD]"):
        assert unit in header


# --- compare_accelerators: controls change the result the right way -------------------------
def test_more_devices_fewer_days(small):
    before = small.result["train_time_days"].copy()
    small.controls["devices"].value = 512
    after = small.result["train_time_days"]
    assert (after < before).all()
    assert (small.result["devices"] == 512).all()


def test_added_accelerator_appears(small):
    small.controls["accelerators"].value = (*TWO, "mi300x")
    assert "mi300x" in small.result.index
    assert "mi300x" in table_rows(small)
    assert len(small.result) == 3


def test_more_tokens_proportionally_more_days(small):
    before = small.result["train_time_days"].copy()
    small.controls["tokens"].value *= 2
    assert small.result["train_time_days"].to_numpy() == pytest.approx(2 * before.to_numpy())


def test_facility_energy_scales_with_pue(small):
    small.controls["pue_auto"].value = False
    assert not small.controls["pue"].disabled
    small.controls["pue"].value = 1.2
    low = small.result["facility_energy_mwh"].copy()
    small.controls["pue"].value = 1.5
    high = small.result["facility_energy_mwh"]
    # facility energy = IT energy x PUE
    assert high.to_numpy() == pytest.approx(low.to_numpy() * 1.5 / 1.2)


def test_auto_pue_shows_the_default_used(small):
    assert small.controls["pue_auto"].value
    assert small.controls["pue"].disabled
    assert small.controls["pue"].value == pytest.approx(catalog.site("world").pue)


def test_carbon_scales_with_grid_intensity(small):
    small.controls["pue_auto"].value = False
    small.controls["pue"].value = 1.3
    world = small.result["co2e_t"].copy()
    small.controls["region"].value = "FRA"
    fra = small.result["co2e_t"]
    g = catalog.regions()["grid_gco2e_per_kwh"]
    assert fra.to_numpy() == pytest.approx(world.to_numpy() * g["FRA"] / g["world"])


def test_price_override_is_price_times_device_hours(small):
    small.controls["price"].value = "2.5"
    r = small.result
    assert r["cost_usd"].to_numpy() == pytest.approx(2.5 * r["device_hours"].to_numpy())
    small.controls["price"].value = ""            # back to the catalog price
    assert small.message.value == ""


def test_model_change_brings_its_tokens(small):
    small.controls["model"].value = "gpt3-175b"
    assert small.controls["tokens"].value * 1e9 == pytest.approx(
        catalog.models().loc["gpt3-175b", "tokens_reported"])
    assert set(small.result.index) == set(TWO)


def test_region_dropdown_is_short_and_starts_with_world(box):
    options = [rid for _, rid in box.controls["region"].options]
    assert options[0] == "world"
    assert 8 <= len(options) <= 20
    assert set(options) <= set(catalog.regions().index)


# --- compare_accelerators: invalid input shows a message, never raises ----------------------
@pytest.mark.parametrize("control, value, word", [
    ("devices", 0, "devices"),
    ("devices", -8, "devices"),
    ("devices", 100, "batch"),         # 100 devices cannot split a batch of 1024 evenly
    ("tokens", 0.0, "tokens"),
    ("global_batch", 0, "batch"),
    ("price", "abc", "price"),
    ("price", "-3", "price"),
])
def test_invalid_input_shows_message(small, control, value, word):
    small.controls[control].value = value           # must not raise
    assert word in small.message.value.lower()
    assert small.result is None
    assert small.table.value == ""
    assert "Traceback" not in small.message.value


def test_no_accelerator_selected_shows_message(small):
    small.controls["accelerators"].value = ()
    assert "accelerator" in small.message.value
    assert small.result is None


def test_recovers_after_invalid_input(small):
    before = small.result.copy()
    small.controls["devices"].value = 0
    assert small.result is None
    small.controls["devices"].value = 256
    assert small.message.value == ""
    pd.testing.assert_frame_equal(small.result, before)


def test_does_not_fit_is_a_message_with_a_row():
    box = widgets.compare_accelerators(model="llama2-70b", accelerators=("a100-sxm4-40gb",),
                                       devices=8)
    assert "does not fit" in box.message.value
    assert list(box.result.index) == ["a100-sxm4-40gb"]


def test_builder_rejects_unknown_ids():
    with pytest.raises(ValueError, match="model"):
        widgets.compare_accelerators(model="no-such-model")
    with pytest.raises(ValueError, match="accelerator"):
        widgets.compare_accelerators(accelerators=("no-such-chip",))
    with pytest.raises(ValueError, match="region"):
        widgets.compare_accelerators(region="ATLANTIS")


def test_builder_accepts_a_region_outside_the_short_list():
    box = widgets.compare_accelerators(accelerators=TWO, region="NOR")
    assert box.controls["region"].value == "NOR"
    assert box.message.value == ""


# --- pure helpers ---------------------------------------------------------------------------
def test_compare_table_pure_function():
    params = {"model": "llama2-7b", "accelerators": TWO, "devices": 256, "tokens": None,
              "global_batch": 1024, "region": "world", "pue": None, "price_per_hour": None}
    df = widgets.compare_table(params)
    assert isinstance(df, pd.DataFrame) and list(df.index) == list(TWO)
    assert isinstance(widgets.compare_table({**params, "accelerators": ()}), str)
    msg = widgets.compare_table({**params, "devices": 0})
    assert isinstance(msg, str) and "devices" in msg


@pytest.mark.parametrize("value, expected", [
    (704_284.08, "704,000"), (33.4109, "33.4"), (0.44417, "0.444"), (150.19, "150"),
    (1234.5, "1,230"), (float("nan"), "n/a"), (None, "n/a"),
])
def test_sig(value, expected):
    assert widgets.sig(value) == expected


@pytest.mark.parametrize("text, expected", [("", None), ("  ", None), (None, None),
                                             ("2.5", 2.5), ("$3", 3.0)])
def test_parse_price(text, expected):
    assert widgets.parse_price(text) == expected


def test_parse_price_rejects_text():
    with pytest.raises(ValueError, match="price-per-hour"):
        widgets.parse_price("cheap")


# --- run_cost ------------------------------------------------------------------------------
def test_run_cost_default_shows_headline_numbers():
    box = widgets.run_cost()
    r = box.result
    assert r["accelerator"] == "h100-sxm5-80gb" and r["devices"] == 256
    assert math.isfinite(r["train_time_days"]) and r["train_time_days"] > 0
    for word in ("days", "MWh", "tCO2e", "$", "MFU", "tp "):
        assert word in box.summary.value
    assert box.message.value == ""


def test_run_cost_reacts_to_controls():
    box = widgets.run_cost()
    days = box.result["train_time_days"]
    box.controls["devices"].value = 512
    assert box.result["train_time_days"] < days
    box.controls["accelerator"].value = "a100-sxm4-80gb"
    assert box.result["accelerator"] == "a100-sxm4-80gb"
    co2 = box.result["co2e_t"]
    box.controls["region"].value = "SWE"
    g = catalog.regions()["grid_gco2e_per_kwh"]
    assert box.result["co2e_t"] == pytest.approx(co2 * g["SWE"] / g["world"])


@pytest.mark.parametrize("control, value, word", [
    ("devices", -1, "devices"), ("devices", 100, "batch"), ("tokens", -5.0, "tokens")])
def test_run_cost_invalid_input_shows_message(control, value, word):
    box = widgets.run_cost()
    box.controls[control].value = value
    assert word in box.message.value.lower()
    assert box.result is None and box.summary.value == ""


def test_run_cost_without_price_says_so():
    box = widgets.run_cost(accelerator="mi325x")
    assert "no catalog price" in box.summary.value


# ======================================================================================
# notebooks 02-06
# ======================================================================================
def _total_memory(box):
    return sum(box.result.memory_breakdown_gib().values())


# --- 02: flops_and_memory ------------------------------------------------------------------
@pytest.fixture
def mem():
    return widgets.flops_and_memory()


def test_flops_and_memory_default_shows_a_result(mem):
    assert mem.message.value == ""
    assert mem.chart.value[:8] == PNG_MAGIC
    for word in ("GiB", "Fits?", "Fewest devices", "FLOP per token"):
        assert word in mem.summary.value
    assert isinstance(mem.smallest, int)


def test_zero3_lowers_memory(mem):
    zero0 = _total_memory(mem)
    mem.controls["zero"].value = 3
    assert _total_memory(mem) < zero0


def test_recompute_and_micro_batch_move_activations(mem):
    mem.controls["recompute"].value = "none"
    none = mem.result.memory_breakdown_gib()["activations"]
    mem.controls["recompute"].value = "full"
    assert mem.result.memory_breakdown_gib()["activations"] < none
    full = mem.result.memory_breakdown_gib()["activations"]
    mem.controls["micro_batch"].value = 4
    assert mem.result.memory_breakdown_gib()["activations"] > full


def test_offload_moves_activations_to_the_host_and_says_so(mem):
    """The memory widget's fourth recompute button: nothing recomputed, the activations
    (but two layers' a micro-batch in flight) in host memory, the summary naming them."""
    mem.controls["recompute"].value = "none"
    none = mem.result.memory_breakdown_gib()["activations"]
    mem.controls["recompute"].value = "offload"
    assert mem.result.memory_breakdown_gib()["activations"] < none
    assert "offloaded to host memory" in mem.summary.value
    assert "Recompute adds 0 %" in mem.summary.value


def test_offload_where_the_host_link_is_unpublished_is_a_message(mem):
    mem.controls["accelerator"].value = "tpu-v5p"
    mem.controls["recompute"].value = "offload"
    assert "host link" in mem.message.value and "Traceback" not in mem.message.value
    mem.controls["recompute"].value = "none"
    assert mem.message.value == "" and mem.result is not None


def test_smallest_device_count_fits_and_reacts_to_zero(mem):
    mem.controls["zero"].value = 0
    n0 = mem.smallest
    mem.controls["zero"].value = 3
    assert mem.smallest <= n0
    e = traincost.estimate(accelerator="a100-sxm4-80gb", devices=mem.smallest,
                           model="llama2-13b", global_batch=1024, zero=3, recompute="none",
                           micro_batch=1)
    assert e.fits_in_memory


def test_flops_and_memory_invalid_layout_is_a_message(mem):
    mem.controls["pp"].value = 5                      # 8 devices are no multiple of 5
    assert "devices" in mem.message.value and mem.result is None
    assert "Traceback" not in mem.message.value
    mem.controls["pp"].value = 1
    assert mem.message.value == "" and mem.result is not None


# --- 03: parallelism_explorer ---------------------------------------------------------------
@pytest.fixture
def par():
    return widgets.parallelism_explorer()


def test_parallelism_default_shows_breakdown(par):
    r = par.result
    assert r["fits_in_memory"] and 0 < r["mfu"] < 1
    assert "dp = devices / (tp × pp) = 64 / (8 × 4) = 2" in par.dp.value
    assert par.chart.value[:8] == PNG_MAGIC
    steps = r["breakdown"]["step_time_s"]
    assert sum(steps.values()) == pytest.approx(r["step_time_s"])
    for word in ("Step time", "MFU", "GiB"):
        assert word in par.summary.value


def test_more_pipeline_stages_more_bubble(par):
    par.controls["tp"].value = 2
    par.controls["pp"].value = 2
    small = par.result["breakdown"]["step_time_s"]["bubble"]
    par.controls["pp"].value = 8
    assert par.result["breakdown"]["step_time_s"]["bubble"] > small
    par.controls["vpp"].value = 2                     # interleaving shrinks it again
    assert par.result["parallel"]["vpp"] == 2


def test_stack_controls_change_the_step_as_the_model_says(par):
    # MegaScale Sec. 3.1: a parallel block sends one TP all-reduce per layer and pass, not two
    tp_comm = par.result["breakdown"]["step_time_s"]["tp_comm"]
    par.controls["parallel_block"].value = True
    assert par.result["stack"]["parallel_block"]
    assert par.result["breakdown"]["step_time_s"]["tp_comm"] == pytest.approx(tp_comm / 2)
    pp_comm = par.result["breakdown"]["step_time_s"]["pp_comm"]
    par.controls["overlap_pp"].value = True          # sends hidden behind compute
    assert par.result["stack"]["overlap"] == ["pp"]
    # what the hidden sends still cost: compute runs 1 + s times slower beside them
    # (assumptions.overlap_compute_slowdown, Lee et al. 2025), t s/(1 + s) of their t
    s = traincost.DEFAULT_ASSUMPTIONS.overlap_compute_slowdown
    assert par.result["breakdown"]["step_time_s"]["pp_comm"] == pytest.approx(
        pp_comm * s / (1 + s), rel=1e-9)
    par.controls["recompute"].value = "none"         # (selective drops the scores anyway)
    flash_memory = par.result["memory_gib_per_device"]
    par.controls["attention_kernel"].value = "materialized"   # stores the s x s scores
    assert par.result["memory_gib_per_device"] > flash_memory


def test_adam_state_control_cuts_the_optimizer_memory_to_a_third(par):
    # fp32 master, momentum and variance are 12 bytes per parameter (ZeRO Sec. 3.1); bf16
    # momentum and variance without a master copy are 4: a third, the rest unchanged
    before = par.result["breakdown"]["memory_gib"]
    assert par.result["stack"]["optimizer_state"] == "fp32"
    par.controls["optimizer_state"].value = "bf16"
    after = par.result["breakdown"]["memory_gib"]
    assert par.result["stack"]["optimizer_state"] == "bf16"
    assert after["optimizer"] == pytest.approx(before["optimizer"] / 3)
    assert after["weights"] == before["weights"]
    assert after["activations"] == before["activations"]


def test_the_element_wise_control_prices_eager_pytorch():
    # torchtitan runs eager by default (its train configs: compile = false): auto is eager,
    # and fused (torch.compile) is faster for a Llama block, by the passes counted in
    # traincost.assumptions; the summary's step follows
    par = widgets.parallelism_explorer(model="llama3.1-8b", devices=8, tp=1, pp=1,
                                       global_batch=16, micro_batch=2, zero=3,
                                       recompute="selective", framework="torchtitan")
    assert par.result["stack"]["elementwise"] == "eager"
    eager = par.result["step_time_s"]
    par.controls["elementwise"].value = "fused"
    assert par.result["stack"]["elementwise"] == "fused"
    assert par.result["step_time_s"] < eager
    assert par.result["breakdown"]["step_time_s"]["tp_comm"] == 0.0


@pytest.mark.parametrize("control, value, words", [
    ("pp", 3, ("cannot run", "devices 64")),
    ("devices", 60, ("cannot run", "devices 60")),
    ("devices", 0, ("devices",)),
])
def test_impossible_layout_says_why_in_plain_words(par, control, value, words):
    par.controls[control].value = value
    for w in words:
        assert w in par.message.value
    assert "--" not in par.message.value and "Traceback" not in par.message.value
    assert par.result is None and par.summary.value == ""


def test_interleaving_without_a_pipeline_says_why(par):
    par.controls["pp"].value = 1
    assert par.result is not None
    par.controls["vpp"].value = 2
    assert "cannot run" in par.message.value and "vpp 2" in par.message.value
    assert "pp &gt; 1" in par.message.value and par.result is None      # HTML-escaped


def test_not_fitting_is_a_result_over_the_hbm_line(par):
    for key, value in (("tp", 1), ("pp", 1), ("zero", 0), ("recompute", "none")):
        par.controls[key].value = value
    assert par.result is not None and not par.result["fits_in_memory"]
    assert "Does not fit" in par.summary.value
    assert par.result["memory_gib_per_device"] > par.result["hbm_gib_per_device"]
    assert par.message.value == ""


def test_dp_text_for_a_fractional_split():
    assert "not a whole number" in widgets.derived_dp(64, 8, 3)
    assert widgets.derived_dp(64, 8, 4).endswith("= 2")


# --- 05: power and carbon --------------------------------------------------------------------
def test_power_explorer_more_busy_more_power_pue_on_top():
    box = widgets.power_explorer(busy_fraction=0.5, pue=1.2)
    half = box.result["total_w"]
    assert box.result["facility_w"] == pytest.approx(half * 1.2)
    box.controls["busy"].value = 0.9
    assert box.result["total_w"] > half
    box.controls["pue"].value = 1.5
    assert box.result["facility_w"] == pytest.approx(box.result["total_w"] * 1.5)
    assert box.chart.value[:8] == PNG_MAGIC and "PUE" in box.summary.value


def test_region_carbon_default_and_fixed_pue():
    box = widgets.region_carbon()
    df = box.result
    assert list(df.index) == list(widgets.CARBON_REGIONS)
    assert box.chart.value[:8] == PNG_MAGIC and "tCO2e" in box.table.value
    box.controls["pue_auto"].value = False
    box.controls["pue"].value = 1.2
    df = box.result
    g = catalog.regions()["grid_gco2e_per_kwh"]
    ratio = df["co2e_t"] / g[df.index]
    assert ratio.to_numpy() == pytest.approx(ratio.iloc[0])      # carbon ∝ grid intensity


def test_region_carbon_embodied_override_and_messages():
    box = widgets.region_carbon(regions=("FRA", "POL"))
    die = box.result["embodied_co2e_t"].iloc[0]
    box.controls["embodied"].value = "463"
    assert box.result["embodied_co2e_t"].iloc[0] == pytest.approx(
        die * 463 / catalog.accelerator("h100-sxm5-80gb").embodied_kgco2e)
    box.controls["embodied"].value = "lots"
    assert "embodied" in box.message.value and box.result is None
    box.controls["embodied"].value = ""
    box.controls["regions"].value = ()
    assert "region" in box.message.value
    box.controls["regions"].value = ("SWE",)
    box.controls["accelerator"].value = "mi325x"      # no embodied figure
    assert "no embodied figure" in box.message.value and box.result is not None


def test_start_month_carbon_follows_the_months_and_the_runs_length():
    box = widgets.start_month_carbon(regions=("DEU", "FRA"))
    df = box.result
    assert set(df["region"]) == {"DEU", "FRA"} and len(df) == 24
    assert box.chart.value[:8] == PNG_MAGIC and "swing [% of annual]" in box.table.value
    days = float(df["train_time_days"].iloc[0])
    assert f"{days:.3g} days" in box.summary.value
    fra = df[df["region"] == "FRA"]
    swing = fra["change_pct"].max() - fra["change_pct"].min()
    assert f"<td>{widgets.sig(swing)}</td>" in box.table.value
    # a longer run (a quarter of the devices) averages more months: a smaller swing
    box.controls["devices"].value = 64
    longer = box.result[box.result["region"] == "FRA"]
    assert longer["train_time_days"].iloc[0] > 3.5 * days
    assert longer["change_pct"].max() - longer["change_pct"].min() < swing
    box.controls["regions"].value = ()
    assert "regions: select at least one region" in box.message.value and box.result is None
    assert box.chart.layout.display == "none"
    box.controls["regions"].value = ("GBR",)
    assert box.message.value == "" and box.chart.layout.display is None
    assert list(box.result["start"].str[:4].unique()) == ["2025"]
    box.controls["year"].value = 2024
    assert list(box.result["start"].str[:4].unique()) == ["2024"]
    box.controls["year"].value = 0                   # no year 0 in the calendar: said in place
    assert "year: 0 must be a whole year from 1 to 9999" in box.message.value


# --- 06: dollars -----------------------------------------------------------------------------
def test_rent_or_own_default_and_reactions():
    box = widgets.rent_or_own()
    t = box.result
    assert t.loc["own", "cost_usd"] < t.loc["rent", "cost_usd"]   # a catalog-priced default
    assert box.chart.value[:8] == PNG_MAGIC and box.sensitivity.value[:8] == PNG_MAGIC
    assert "busy more than" in box.summary.value
    box.controls["price"].value = "1.0"
    assert box.result.loc["rent", "cost_usd"] == pytest.approx(
        box.result.loc["rent", "device_hours"] * 1.0)
    box.controls["electricity"].value = "0.16"
    assert box.result.loc["own", "electricity_usd"] == pytest.approx(
        2 * t.loc["own", "electricity_usd"])


@pytest.mark.parametrize("control, value, word", [
    ("capex", "a lot", "capex"), ("electricity", "-1", "electricity"),
    ("price", "cheap", "price"), ("devices", 0, "devices"),
])
def test_rent_or_own_invalid_input(control, value, word):
    box = widgets.rent_or_own()
    box.controls[control].value = value
    assert word in box.message.value and box.result is None


def test_rent_or_own_without_capex_asks_for_one():
    box = widgets.rent_or_own(accelerator="h100-sxm5-80gb")
    assert "purchase price" in box.summary.value
    box.controls["capex"].value = "25,000"
    assert box.result.loc["own", "cost_usd"] > 0


def test_cheapest_for_deadline_winner_meets_the_deadline():
    box = widgets.cheapest_for_deadline()
    df, w = box.result, box.winner
    assert w is not None and df.loc[w, "train_time_days"] <= 14.0
    ok = df[df["status"] == "meets deadline"]
    assert (ok["cost_usd"] >= df.loc[w, "cost_usd"]).all()
    assert box.chart.value[:8] == PNG_MAGIC and "Cheapest" in box.summary.value
    candidates = box.result.drop(columns="status")
    box.controls["deadline"].value = 60.0                   # only re-picks
    pd.testing.assert_frame_equal(box.result.drop(columns="status"), candidates)
    assert box.result.loc[box.winner, "cost_usd"] <= df.loc[w, "cost_usd"]


def test_cheapest_for_deadline_kept_candidates_show_what_a_fresh_widget_shows(monkeypatch):
    """The widget keeps its last candidate tables by their inputs: after each change, and
    back at inputs it computed before, it shows what a widget built with those inputs
    shows (texts, chart, table). A change of the tokens, region, device counts or
    accelerators changes those outputs, so a table kept under too loose a key would show;
    only the deadline and a return to kept inputs search no candidates."""
    from traincost import explore
    from traincost.units import GIGA
    searched = []
    search = explore.deadline_candidates
    monkeypatch.setattr(explore, "deadline_candidates",
                        lambda *a: searched.append(a[0]["model"]) or search(*a))
    inputs = {"model": "llama2-7b", "tokens": None, "region": "world",
              "accelerators": ("h100-sxm5-80gb", "b200"), "device_counts": (64, 256),
              "deadline_days": 14.0}
    box = widgets.cheapest_for_deadline(**inputs)
    # (control, its new value, the builder's argument and value, searches it takes)
    steps = [("model", "llama2-13b", "model", "llama2-13b", 1),
             ("model", "llama2-7b", "model", "llama2-7b", 0),               # back: kept
             ("tokens", 300.0, "tokens", 300.0 * GIGA, 1),
             ("region", "FRA", "region", "FRA", 1),
             ("devices", "128", "device_counts", (128,), 1),
             ("accelerators", ("b200",), "accelerators", ("b200",), 1),
             ("deadline", 30.0, "deadline_days", 30.0, 0),                  # re-picks only
             ("model", "llama2-13b", "model", "llama2-13b", 1)]  # other region, devices: new
    for control, value, name, arg, searches in steps:
        before = len(searched)
        box.controls[control].value = value
        assert len(searched) - before == searches, (control, value)
        inputs[name] = arg
        if control == "model":
            inputs["tokens"] = None                   # the widget takes the preset's tokens
        fresh = widgets.cheapest_for_deadline(**inputs)
        for out in ("message", "summary", "table", "chart"):
            assert getattr(box, out).value == getattr(fresh, out).value, (control, value, out)
        pd.testing.assert_frame_equal(box.result, fresh.result)
        assert box.winner == fresh.winner
    assert box.result.index.tolist() == ["b200@128"]


def test_cheapest_for_deadline_messages():
    box = widgets.cheapest_for_deadline(accelerators=("h100-sxm5-80gb",))
    box.controls["deadline"].value = 1.0
    assert box.winner is None and "No candidate" in box.summary.value
    box.controls["devices"].value = "64, many"
    assert "devices" in box.message.value and box.result is None
    box.controls["devices"].value = "256"
    box.controls["accelerators"].value = ("mi325x",)
    assert "no catalog price" in box.message.value


@pytest.mark.parametrize("text, expected", [("", None), ("1,500", 1500.0), ("$2", 2.0)])
def test_parse_optional_number(text, expected):
    assert widgets.parse_optional_number(text, "x", "USD") == expected


@pytest.mark.parametrize("text", ["abc", "-1", "nan"])
def test_parse_optional_number_rejects(text):
    with pytest.raises(ValueError, match="capex"):
        widgets.parse_optional_number(text, "capex", "USD")


@pytest.mark.parametrize("text", ["", "x", "0", "-8", "1.5"])
def test_parse_device_counts_rejects(text):
    with pytest.raises(ValueError, match="devices"):
        widgets.parse_device_counts(text)


@pytest.mark.parametrize("builder, kwargs, field", [
    (widgets.flops_and_memory, {"zero": 5}, "zero"),
    (widgets.parallelism_explorer, {"recompute": "some"}, "recompute"),
    (widgets.parallelism_explorer, {"attention_kernel": "fast"}, "attention kernel"),
    (widgets.parallelism_explorer, {"overlap": "tp,cp"}, "overlap"),
    (widgets.parallelism_explorer, {"optimizer_state": "fp16"}, "optimizer state"),
    (widgets.power_explorer, {"accelerator": "nope"}, "accelerator"),
    (widgets.region_carbon, {"regions": ("ATLANTIS",)}, "region"),
    (widgets.cheapest_for_deadline, {"accelerators": ("nope",)}, "accelerator"),
])
def test_new_builders_reject_unknown_ids(builder, kwargs, field):
    with pytest.raises(ValueError, match=field):
        builder(**kwargs)


# --- 08: measured against estimated ------------------------------------------------------------
OBSERVED = {"time_s": 4.0, "cpu_energy_j": 30.0, "energy_j": 110.0}


def test_measured_vs_estimated_default_and_utilisation():
    # 4e9 FLOP at 4e9 FLOP/s: 1 s at full utilisation; the loop took 4 s, so 0.25 matches
    box = widgets.measured_vs_estimated(4e9, 4e9, OBSERVED, cpu_power_w=7.5, host_power_w=20.0)
    assert box.message.value == "" and "0.25" in box.summary.value
    assert box.result.loc["time [s]", "estimated"] == pytest.approx(1.0)
    box.controls["utilisation"].value = 0.25
    r = box.result
    assert r.loc["time [s]", "measured / estimated"] == pytest.approx(1.0)
    assert r.loc["CPU energy [J]", "estimated"] == pytest.approx(7.5 * 4.0)      # P x T
    assert r.loc["CPU + RAM energy [J]", "estimated"] == pytest.approx(27.5 * 4.0)
    assert "[J]" in box.table.value


def test_measured_vs_estimated_bad_power_is_a_message():
    box = widgets.measured_vs_estimated(4e9, 4e9, OBSERVED, cpu_power_w=7.5)
    box.controls["cpu_power"].value = -1.0
    assert "cpu_power_w" in box.message.value and box.result is None
    box.controls["cpu_power"].value = 5.0
    assert box.message.value == "" and box.result is not None


# --- 04: find the best layout ------------------------------------------------------------------
SMALL_SEARCH = dict(model="llama2-7b", accelerators=("a100-sxm4-80gb", "h100-sxm5-80gb"),
                    device_counts=(64, 128), tokens=1e11, global_batch=512)


@pytest.fixture
def finder():
    return widgets.find_best_layout(objective="cost", **SMALL_SEARCH)


def test_find_best_layout_default_renders_real_numbers():
    box = widgets.find_best_layout()
    res = box.result
    assert box.message.value == "" and res.layouts_feasible > 0
    assert box.chart.value[:8] == PNG_MAGIC
    assert "Best for dollars" in box.summary.value and "[days]" in box.table.value
    assert "MFU check" in box.notes.value
    # the progress bar was fed by the search's callback, up to every layout walked
    assert box.progress.max == box.progress.value == res.layouts_enumerated


def test_the_losers_chart_is_drawn_when_its_section_opens(finder):
    """Issue 26: the why-the-others-lose chart is the slowest part of a refresh; a closed
    section is not drawn, an open one is drawn at once and after every change."""
    assert finder.losers_box.selected_index is None and finder.losers.value == b""
    assert "others lose" in finder.why.value            # the table is there regardless
    finder.losers_box.selected_index = 0
    first = finder.losers.value
    assert first[:8] == PNG_MAGIC
    finder.controls["objective"].value = "time"        # another winner, redrawn while open
    assert finder.losers.value[:8] == PNG_MAGIC and finder.losers.value != first
    finder.losers_box.selected_index = None
    finder.controls["objective"].value = "energy"
    assert finder.losers.value == b""
    finder.controls["devices"].value = "7"             # no valid layout: the section hides
    assert finder.losers_box.layout.display == "none" and finder.losers_plot is None


def test_find_best_layout_objective_changes_the_best(finder):
    res = finder.result
    bests = {}
    for objective, column in widgets.OBJECTIVES.items():
        finder.controls["objective"].value = objective
        best = finder.best
        bests[objective] = best
        assert finder.result.objective == objective
        # the reported best minimises its own objective over every feasible layout kept
        top = finder.result.top
        assert len(top) == finder.result.layouts_feasible
        assert best[column] == pytest.approx(top[column].min())
        assert best[column] == pytest.approx(res.best[objective][column])
    # each best beats the others' bests on its own objective
    assert bests["time"]["step_time_s"] <= bests["cost"]["step_time_s"]
    assert bests["cost"]["cost_usd"] <= bests["time"]["cost_usd"]
    assert bests["carbon"]["co2e_t"] <= bests["time"]["co2e_t"]
    assert "Best for carbon" in widgets.best_summary_html(
        traincost.search(SMALL_SEARCH["accelerators"], [64], model="llama2-7b",
                         global_batch=512, tokens=1e11, objective="carbon"))


@pytest.mark.parametrize("text, word", [("100", "batch"), ("64, lots", "devices"),
                                        ("0", "devices"), ("", "devices")])
def test_find_best_layout_invalid_device_count_shows_a_message(finder, text, word):
    finder.controls["devices"].value = text                     # must not raise
    assert word in finder.message.value
    assert "Traceback" not in finder.message.value
    assert finder.result is None and finder.best is None
    assert finder.chart.value == b"" and finder.table.value == ""
    assert finder.progress.bar_style == "danger"
    finder.controls["devices"].value = "64"                     # back to valid: cleared
    assert finder.message.value == "" and finder.result is not None


@pytest.mark.parametrize("control, value, word", [("max_days", "soon", "deadline"),
                                                  ("max_cost", "-5", "budget"),
                                                  ("max_co2e", "x", "carbon cap")])
def test_find_best_layout_invalid_constraints_show_a_message(finder, control, value, word):
    finder.controls[control].value = value
    assert word in finder.message.value and finder.result is None


def test_find_best_layout_no_accelerator_is_a_message(finder):
    finder.controls["accelerators"].value = ()
    assert "accelerator" in finder.message.value and finder.result is None
    finder.controls["accelerators"].value = ("mi325x",)           # no catalog price
    assert "catalog price" in finder.message.value and finder.best is None
    finder.controls["objective"].value = "carbon"
    assert finder.message.value == "" and finder.best["accelerator"] == "mi325x"


def test_find_best_layout_deadline_and_headroom_constrain(finder):
    fastest = finder.result.best["time"]["train_time_days"]
    deadline = round(fastest * 1.2, 3)
    finder.controls["max_days"].value = str(deadline)
    top = finder.result.top
    assert (top["train_time_days"] <= deadline).all()
    assert finder.best["train_time_days"] <= deadline
    finder.controls["max_days"].value = str(round(fastest / 2, 3))   # nobody is that fast
    assert finder.best is None and "deadline" in finder.message.value
    assert finder.chart.value == b""
    finder.controls["max_days"].value = ""
    fit_default = finder.result.layouts_fit
    finder.controls["headroom"].value = 0.4
    assert finder.result.layouts_fit < fit_default
    assert (finder.result.top["memory_fraction_of_hbm"] <= 0.6 + 1e-12).all()


def test_find_best_layout_button_when_auto_is_off():
    box = widgets.find_best_layout(objective="cost", auto=False, **SMALL_SEARCH)
    assert box.result.objective == "cost"                       # the first search still runs
    box.controls["objective"].value = "time"
    assert box.result.objective == "cost"                       # waits for the button
    box.button.click()
    assert box.result.objective == "time"


def test_find_best_layout_model_change_brings_its_tokens(finder):
    finder.controls["model"].value = "llama2-13b"
    assert finder.controls["tokens"].value * 1e9 == pytest.approx(
        catalog.models().loc["llama2-13b", "tokens_reported"])
    assert finder.result is not None and finder.message.value == ""


def test_why_others_lose_relations():
    params = {"model": "llama2-70b", "global_batch": 1024, "tokens": None, "region": "world"}
    res = traincost.search(["h100-sxm5-80gb"], [256], objective="time", top=500, **{
        k: v for k, v in params.items() if k != "tokens"})
    df = widgets.why_others_lose(res, params)
    best = df.loc["best"]
    # traincost.estimate on the search's layout reproduces the search's numbers
    assert best["step_time_s"] == pytest.approx(res.best["time"]["step_time_s"], rel=1e-9)
    assert best["memory_gib_per_device"] == pytest.approx(
        res.best["time"]["memory_gib_per_device"], rel=1e-9)
    limit = (1 - res.memory_headroom) * best["hbm_gib_per_device"]
    assert best["memory_limit_gib"] == pytest.approx(limit) and best["within_limit"]
    roles = list(df["role"])
    assert roles[0] == "best" and {"runner-up", "over memory", "bubble",
                                   "communication"} <= set(roles)
    row = df[df["role"] == "runner-up"].iloc[0]
    assert row["step_time_s"] >= best["step_time_s"]
    assert row["layout"] != best["layout"]
    row = df[df["role"] == "over memory"].iloc[0]
    assert row["memory_gib_per_device"] > limit and not row["within_limit"]
    row = df[df["role"] == "bubble"].iloc[0]
    assert row["bubble_s"] > best["bubble_s"] and row["within_limit"]
    row = df[df["role"] == "communication"].iloc[0]
    assert row["exposed_comm_s"] > best["exposed_comm_s"] and row["within_limit"]
    # each step is the sum of its parts
    parts = df[[f"step_{k}_s" for k in STEP_PARTS]].sum(axis=1)
    np.testing.assert_allclose(parts, df["step_time_s"], rtol=1e-9)
    steps, memory = widgets.why_lose_rows(df)
    assert list(steps) == list(memory) and len(steps) == len(df)
    assert all(r for r in df["reason"])


def test_one_knob_variants_change_one_thing():
    lay = {"tp": 4, "pp": 4, "cp": 1, "ep": 1, "vpp": 2, "zero": 1, "micro_batch": 2,
           "recompute": "selective"}
    variants = widgets.one_knob_variants(lay)
    assert ("tp × 2", {**lay, "tp": 8}) in variants
    assert ("ZeRO-3", {**lay, "zero": 3}) in variants
    assert all(v != lay for _, v in variants)
    assert not any(k == "ZeRO-1" for k, _ in variants)          # the current stage is no change


# --- 07: validation explorer ---------------------------------------------------------------------
@pytest.fixture(scope="module")
def published():
    from traincost import validate
    return validate.compare_published()


def test_validation_explorer_default_shows_every_family(published):
    box = widgets.validation_explorer(published)
    assert box.message.value == "" and len(box.result) == len(published)
    assert box.chart.value[:8] == PNG_MAGIC
    for family in ("throughput", "power", "energy (by construction)"):
        assert family in box.summary.value
    assert "mean abs. error [%]" in box.summary.value and "model gap" in box.table.value


def test_validation_explorer_filters_by_family(published):
    box = widgets.validation_explorer(published)
    box.controls["families"].value = ("power",)
    assert set(box.result["family"]) == {"power"}
    assert len(box.result) == int((published["family"] == "power").sum())
    box.controls["families"].value = ("throughput",)
    n_gap = int(plotting.model_gap_mask(box.result).sum())
    assert n_gap > 0
    box.controls["model_gaps"].value = False
    assert not plotting.model_gap_mask(box.result).any()
    assert len(box.result) == int((published["family"] == "throughput").sum()) - n_gap


def test_case_explorer_shows_one_run_in_full():
    # Llama 2 34B: the paper states batch (4M tokens), tokens (2T) and the 350 W cap but no
    # GPU count, so the validation assumes LLaMA's 2048 (Touvron et al. 2023, Sec. 2.4)
    box = widgets.case_explorer()
    assert box.message.value == "" and box.result["case"] == "llama2-34b"
    assert "<b>Assumed</b>: not in source, assumed: devices 2048" in box.summary.value
    assert "power_cap_w 350" in box.summary.value and "Model gap" not in box.summary.value
    assert "1,040,000" in box.summary.value                   # 1,038,336 GPU-h, 3 digits
    assert box.chart.value[:8] == PNG_MAGIC
    # Frontier's FLOP convention is unsettled: a model gap, shown as such
    box.controls["case"].value = "frontier-1t-3072gcd"
    assert box.result["case"] == "frontier-1t-3072gcd" and "Model gap" in box.summary.value
    assert "tp4 pp128 dp6" in box.summary.value                # the authors' script, 3072 GCDs


def test_case_explorer_errors_are_shown_in_place(monkeypatch):
    with pytest.raises(ValueError, match="case: unknown 'llama2-35b'"):
        widgets.case_explorer("llama2-35b")
    box = widgets.case_explorer("sc21-t1-1.7b")
    from traincost import validate

    def no_layout(case):
        raise ValueError("devices: no layout of the batch")
    monkeypatch.setattr(validate, "explain_case", no_layout)
    box.controls["case"].value = "sc21-t1-3.6b"
    assert "devices: no layout" in box.message.value and box.result is None
    assert box.summary.value == "" and box.chart.value == b""


def test_validation_explorer_empty_selection_is_a_message(published):
    box = widgets.validation_explorer(published)
    box.controls["families"].value = ()
    assert "famil" in box.message.value and box.result is None and box.chart.value == b""
    box.controls["families"].value = ("energy",)
    assert box.message.value == "" and box.result is not None


def test_filter_validation_rejects_unknown_family(published):
    with pytest.raises(ValueError, match="families"):
        widgets.filter_validation(published, ["speed"])
    with pytest.raises(ValueError, match="family"):
        widgets.validation_explorer(published, families=("speed",))


def test_parallelism_explorer_runs_cudnn_attention_and_flags_an_unmeasured_device():
    # the attention toggle offers the cuDNN kernel; on an A100 (no cuDNN measurement) the
    # summary says the flash rate stands in for it, in place, as the estimate's caveat does
    box = widgets.parallelism_explorer(attention_kernel="cudnn")
    assert "cudnn" in box.controls["attention_kernel"].options
    assert "no cuDNN fused-attention measurement" not in box.summary.value   # H100: measured
    box.controls["accelerator"].value = "a100-sxm4-80gb"
    assert "no cuDNN fused-attention measurement for a100-sxm4-80gb" in box.summary.value


def test_parallelism_explorer_states_the_published_error_of_the_device_in_place():
    # the summary carries the estimate's accuracy note: the H100's own leave-one-out errors,
    # and for Gaudi 3 (no published run in the calibration) that it has none
    from traincost import calibration
    _, _, mean, worst = calibration.BY_ACCELERATOR[("h100-sxm5-80gb", "16-bit")]
    box = widgets.parallelism_explorer()
    assert f"<b>Accuracy:</b> out of sample, {mean:.1f}% mean and {worst:.1f}% worst" \
        in box.summary.value
    box.controls["accelerator"].value = "gaudi3"
    assert "no published 16-bit run on gaudi3" in box.summary.value


def test_parallelism_explorer_says_which_kernel_auto_runs():
    # auto takes the device's faster measured fused kernel (TransformerEngine's choice):
    # cuDNN on H100 (514.0 vs 323.7 TFLOP/s), FlashAttention-2 on A100 (nothing else
    # measured); pinning flash on the H100 brings the caveat naming what it gives up
    box = widgets.parallelism_explorer()
    assert box.controls["attention_kernel"].value == "auto"
    assert "cudnn (auto) attention" in box.summary.value
    box.controls["accelerator"].value = "a100-sxm4-80gb"
    assert "flash (auto) attention" in box.summary.value
    box.controls["accelerator"].value = "h100-sxm5-80gb"
    box.controls["attention_kernel"].value = "flash"
    assert ", flash attention;" in box.summary.value and "1.6x" in box.summary.value


# --- the package keeps every public name of the old single module ---------------------------
OLD_PUBLIC_NAMES = """
DEFAULT_ACCELERATORS CURATED_REGIONS sig region_options preset_tokens parse_price compare_table
problems format_compare_table table_html run_cost_summary run_cost_html compare_accelerators
run_cost TP_CHOICES MICRO_BATCH_CHOICES ZERO_CHOICES RECOMPUTE_CHOICES CARBON_REGIONS
DEADLINE_ACCELERATORS DEADLINE_DEVICE_COUNTS parse_optional_number parse_device_counts
derived_dp memory_summary_html flops_and_memory layout_summary_html parallelism_explorer
power_summary_html power_explorer power_cap_summary_html power_cap_explorer carbon_table_html
region_carbon rent_own_html rent_or_own winner_html candidates_html cheapest_for_deadline
measured_vs_estimated FIND_ACCELERATORS FIND_DEVICE_COUNTS OBJECTIVE_CHOICES SEARCH_TOP
LAYOUT_KNOBS EXPOSED_COMM_PARTS run_search layout_of layout_label best_summary_html top_table
search_notes_html one_knob_variants why_others_lose why_lose_rows why_lose_html
find_best_layout filter_validation validation_summary_table validation_cases_html
validation_explorer case_html case_explorer OBJECTIVES
""".split()


@pytest.mark.parametrize("name", OLD_PUBLIC_NAMES)
def test_old_public_names_are_importable(name):
    import importlib

    module = importlib.import_module("traincost.widgets")
    assert hasattr(module, name) and name in module.__all__
    exec(f"from traincost.widgets import {name}", {})


def test_parallelism_explorer_framework_dropdown_applies_its_factor_in_place():
    # a fitted framework slows (factor < 1) the step's compute and the summary says which
    # factor it used; an unknown framework is refused in the widget's own words
    from traincost import calibration
    box = widgets.parallelism_explorer()
    before = box.result["breakdown"]["step_time_s"]["compute"]
    box.controls["framework"].value = "torchtitan"
    factor = calibration.FRAMEWORKS["torchtitan on NVIDIA"]["factor"]
    assert box.result["stack"]["framework"] == "torchtitan"
    assert box.result["breakdown"]["step_time_s"]["compute"] > before
    assert f"{factor:.2f}x the Megatron-Core/NeMo calibration" in box.summary.value
    with pytest.raises(ValueError, match="framework"):
        widgets.parallelism_explorer(framework="jax")


def test_cleanest_start_window_names_the_start_and_says_bad_dates_in_place():
    """The widget shows explore.cleanest_start's least and most carbon over the window: a
    9-day German run over June to August is cleanest when it runs inside July (the least of
    the three months' factors, from the catalog)."""
    box = widgets.cleanest_start_window(region="DEU", earliest="2025-06-01",
                                        latest="2025-08-31")
    df = box.result
    assert len(df) == 92 and box.message.value == ""
    # every start whose 9 days lie inside July has July's carbon: the earliest of those
    # equals, 2025-07-01, is the one named
    best = df[df["co2e_t"] <= df["co2e_t"].min() * (1 + 1e-9)].iloc[0]
    f = catalog.grid_month_factors("DEU")[0]
    assert best["start"] == "2025-07-01" and min(f[5:8]) == f[6]
    assert f"{best['start']} ({widgets.sig(best['co2e_t'])} t)" in box.summary.value
    box.controls["latest"].value = "2025-05-01"
    assert "latest: 2025-05-01 is before earliest 2025-06-01" in box.message.value
    assert box.result is None and box.summary.value == "" and box.table.value == ""
    box.controls["latest"].value = "someday"
    assert "latest: 'someday' is not a date YYYY-MM-DD" in html.unescape(box.message.value)


def test_hiding_a_control_hides_no_other():
    """A Layout is one model in the browser: controls that shared one all vanished when the
    sites widget hid its unused region dropdowns (found in the 2026-12-02 browser
    walk-through of notebook 09). No two controls of any widget share a Layout."""
    box = widgets.sites_explorer()
    hidden = [k for k, c in box.controls.items() if c.layout.display == "none"]
    assert hidden == ["region2", "region3"]         # two sites: the third and fourth hidden
    for build in (widgets.sites_explorer, widgets.run_cost, widgets.compare_accelerators,
                  widgets.cheapest_for_deadline):
        layouts = [c.layout for c in build().controls.values()]
        assert len({id(lay) for lay in layouts}) == len(layouts), build.__name__


@pytest.mark.parametrize("build", ["compare_accelerators", "run_cost"])
def test_a_broken_layout_rule_reads_in_the_widgets_words(build):
    """100 devices cannot split a global batch of 1,024 sequences evenly: the widget says so
    in words ('global batch'), never the CLI's flag ('--global-batch'), as the 2026-12-02
    browser walk-through found it did in notebooks 00 and 01."""
    box = getattr(widgets, build)()
    box.controls["devices"].value = 100
    text = box.message.value
    assert "global batch 1024 must be a multiple of dp*micro-batch" in text
    assert "--" not in text


def test_a_code_cells_chart_shows_once_in_voila(monkeypatch):
    """Voila hides the code, so a chart a code cell draws beside a widget drawing the same
    one would show twice (2026-12-02 walk-through): widgets.lab_only keeps it where the code
    shows and drops it in a Voila kernel, which Voila marks with VOILA_* variables."""
    for key in [k for k in os.environ if k.startswith("VOILA_")]:
        monkeypatch.delenv(key)
    assert not widgets.in_voila() and widgets.lab_only("chart") == "chart"
    monkeypatch.setenv("VOILA_REQUEST_URL", "http://127.0.0.1:8866/voila/render/01.ipynb")
    assert widgets.in_voila() and widgets.lab_only("chart") is None


def test_the_accelerator_list_shows_every_choice_and_so_every_selected_one():
    # a selected id below the list's visible rows looked unselected in the walk-through
    from traincost.widgets.kit import accelerator_select
    ids = list(catalog.accelerators().index)
    box = accelerator_select(ids, ("h100-sxm5-80gb", "tpu-v5p"))
    assert box.rows == len(ids) == len(box.options)
    assert set(box.value) == {"h100-sxm5-80gb", "tpu-v5p"}
