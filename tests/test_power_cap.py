"""A power limit below the rated maximum (``--power-cap``): the clock law, its sources,
where it acts (matmul and fused attention, the device's power range) and where it does
not (memory-bound work, communication, the host), and its errors."""

import json
import math
import sys
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

import traincost
from clihelpers import run
from traincost import catalog, widgets
from traincost.assumptions import DEFAULT
from traincost.cli import main
from traincost.power import capped_clock_fraction
from traincost.sweep import sweep

A100 = "a100-sxm4-80gb"
SMALL = dict(accelerator=A100, devices=8, model="llama2-7b", global_batch=64, tp=1, pp=1,
             micro_batch=1, zero=1, recompute="selective", tokens=1e9)


def test_clock_fraction_by_hand():
    # (350 / 400)^0.24 = exp(0.24 ln 0.875) = exp(-0.032048) = 0.96846
    assert capped_clock_fraction(350.0, 400.0, 0.24) == pytest.approx(0.96846, abs=1e-5)
    assert capped_clock_fraction(400.0, 400.0, 0.24) == 1.0
    caps = np.array([200.0, 300.0, 400.0])
    assert np.all(np.diff(capped_clock_fraction(caps, 400.0, 0.24)) > 0)


@pytest.mark.parametrize("low,high,low_mamf,high_mamf,low_w,high_w,exponent", [
    # stas00/ml-engineering MAMF table v2: the same GA100 die at 300 W (PCIe) and 400 W
    # (SXM): ln(252.9/271.2) / ln(300/400) = -0.069865 / -0.287682 = 0.2428
    ("a100-pcie-80gb", "a100-sxm4-80gb", 252.9e12, 271.2e12, 300, 400, 0.2428),
    # the same Blackwell die at 1000 W (B200) and 1200 W (GB200):
    # ln(1745/1822) / ln(1000/1200) = -0.043180 / -0.182322 = 0.2368
    ("b200", "gb200", 1745e12, 1822e12, 1000, 1200, 0.2368),
])
def test_exponent_is_what_the_catalogs_die_pairs_measured(low, high, low_mamf, high_mamf,
                                                          low_w, high_w, exponent):
    lo, hi = catalog.accelerator(low), catalog.accelerator(high)
    assert (lo.mamf_bf16_flop_per_s, hi.mamf_bf16_flop_per_s) == (low_mamf, high_mamf)
    assert (lo.tdp_w, hi.tdp_w) == (low_w, high_w)
    pair = math.log(lo.mamf_bf16_flop_per_s / hi.mamf_bf16_flop_per_s) / math.log(
        lo.tdp_w / hi.tdp_w)
    assert pair == pytest.approx(exponent, abs=1e-4)
    # the assumption is the two pairs' mean, (0.2428 + 0.2368) / 2 = 0.2398, to 2 decimals
    assert DEFAULT.power_cap_clock_exponent == pytest.approx(0.24, abs=0.005)
    assert abs(pair - DEFAULT.power_cap_clock_exponent) < 0.004
    # each pair's slower card is predicted from the faster one within 0.2%
    predicted = hi.mamf_bf16_flop_per_s * capped_clock_fraction(
        lo.tdp_w, hi.tdp_w, DEFAULT.power_cap_clock_exponent)
    assert predicted == pytest.approx(lo.mamf_bf16_flop_per_s, rel=0.002)
    # the lowest measured share of the rating, the edge of the law's measured range
    assert DEFAULT.power_cap_measured_min_fraction <= lo.tdp_w / hi.tdp_w


def _compute_bound_a100():
    """An A100 whose memory and links are effectively infinite: every step part left is
    matmul or fused attention (the optimizer, element-wise work and communication are 0)."""
    big = 1e30
    return replace(catalog.accelerator(A100), hbm_bytes_per_s=big, scaleup_bytes_per_s=big,
                   scaleout_bytes_per_s=big)


def test_compute_bound_step_slows_by_the_clock_fraction():
    acc = _compute_bound_a100()
    free = traincost.estimate(**{**SMALL, "accelerator": acc})
    capped = traincost.estimate(**{**SMALL, "accelerator": acc, "power_cap": 350})
    # 1 / 0.96846 = 1.03257: the whole compute part runs at the lower clock
    assert capped.step_breakdown_s()["compute"] == pytest.approx(
        free.step_breakdown_s()["compute"] * 1.03257, rel=1e-4)


def test_memory_bound_work_is_not_clocked_down():
    free = traincost.estimate(**SMALL)
    capped = traincost.estimate(**{**SMALL, "power_cap": 350})
    ratio = capped.step_time_s / free.step_time_s
    # only the matmul and attention share slows: more than 1, less than 1 / 0.96846
    assert 1.0 < ratio < 1.03257
    # the optimizer step is HBM-bound: the same time
    assert capped.step_breakdown_s()["optimizer"] == pytest.approx(
        free.step_breakdown_s()["optimizer"], rel=1e-12)


def test_power_range_ends_at_the_cap_and_the_host_keeps_its_share():
    est = traincost.estimate(**{**SMALL, "power_cap": 350})
    r = est.report
    u = r["busy_fraction"]
    # idle 60 W + (350 - 60) W x (u x 0.85 + (1 - u) x 0.68); host 0.30 x 400 W (rating)
    device = 60 + (350 - 60) * (u * DEFAULT.compute_power_fraction
                                + (1 - u) * DEFAULT.wait_power_fraction)
    assert r["device_power_w"] == pytest.approx(device, rel=1e-9)
    assert r["host_power_w"] == pytest.approx(0.30 * 400, rel=1e-9)
    # while computing the device draws 60 + 290 x 0.85 = 306.5 W, under its cap
    assert device < 306.5 + 1e-9 and device <= 350


def test_cap_at_the_rating_is_no_cap():
    free = traincost.estimate(**SMALL).to_dict()
    at_tdp = traincost.estimate(**{**SMALL, "power_cap": 400}).to_dict()
    assert at_tdp["step_time_s"] == free["step_time_s"]
    assert at_tdp["avg_power_w_per_device"] == free["avg_power_w_per_device"]
    assert free["power_cap_w"] is None and at_tdp["power_cap_w"] == 400


def test_capping_trades_time_for_energy():
    free = traincost.estimate(**SMALL)
    capped = traincost.estimate(**{**SMALL, "power_cap": 300})
    assert capped.device_hours > free.device_hours
    assert capped.report["it_energy_mwh"] < free.report["it_energy_mwh"]


@pytest.mark.parametrize("cap", [401, 1000, 60, 10])
def test_cap_outside_idle_to_rating_is_an_error(cap):
    with pytest.raises(ValueError, match=r"power-cap: .* W is outside what a100-sxm4-80gb "
                                         r"allows: above its idle draw 60 W and at most its "
                                         r"rated maximum 400 W"):
        traincost.estimate(**{**SMALL, "power_cap": cap})


@pytest.mark.parametrize("cap", [-5, float("inf"), "abc"])
def test_cap_that_is_not_a_positive_number_is_an_error(cap):
    with pytest.raises(ValueError, match="power-cap"):
        traincost.estimate(**{**SMALL, "power_cap": cap})


def test_caveat_below_the_measured_range_only():
    # 300 W is 75% of the A100's 400 W, the PCIe card's measured limit: no caveat
    at_edge = traincost.estimate(**{**SMALL, "power_cap": 300}).caveats
    assert not any(c.startswith("power cap") for c in at_edge)
    below = traincost.estimate(**{**SMALL, "power_cap": 280}).caveats
    (note,) = [c for c in below if c.startswith("power cap")]
    assert "280 W is 70% of a100-sxm4-80gb's 400 W rating" in note
    assert "between 75% and 100%" in note and "extrapolation" in note


def test_sweep_runs_the_same_formula():
    rows = pd.DataFrame({"accelerator": [A100] * 2, "devices": [8, 8], "model": ["llama2-7b"] * 2,
                         "global_batch": [64, 64], "tp": [1, 1], "pp": [1, 1],
                         "micro_batch": [1, 1], "zero": [1, 1],
                         "recompute": ["selective"] * 2, "tokens": [1e9, 1e9],
                         "power_cap_w": [np.nan, 320.0]})
    out = sweep(rows)
    for i, cap in enumerate((None, 320.0)):
        est = traincost.estimate(**{**SMALL, "power_cap": cap})
        assert out["step_time_s"].iloc[i] == pytest.approx(est.step_time_s, rel=1e-12)
        assert out["avg_power_w_per_device"].iloc[i] == pytest.approx(
            est.report["avg_power_w_per_device"], rel=1e-12)
    rows.loc[1, "power_cap_w"] = 450.0
    with pytest.raises(ValueError, match=r"power-cap: 450 W .* \(row 1\)"):
        sweep(rows)


CLI = ["estimate", "--accelerator", A100, "--devices", "8", "--model", "llama2-7b",
       "--global-batch", "64", "--tp", "1", "--pp", "1", "--tokens", "1e9"]


def test_cli_flag_json_and_text(capsys):
    rc, out, _ = run(CLI + ["--power-cap", "350", "--json"], capsys)
    assert rc == 0 and json.loads(out)["power_cap_w"] == 350
    rc, out, _ = run(CLI + ["--power-cap", "350"], capsys)
    assert rc == 0 and "devices capped at 350 W" in out
    rc, out, _ = run(CLI + ["--json"], capsys)
    assert json.loads(out)["power_cap_w"] is None


def test_cli_cap_above_rating_exits_2_with_one_line(capsys):
    with pytest.raises(SystemExit) as exc:
        sys.exit(main(CLI + ["--power-cap", "500", "--json"]))
    out = capsys.readouterr()
    assert exc.value.code == 2 and out.out == ""
    assert len(out.err.strip().splitlines()) == 1
    assert "power-cap: 500 W" in out.err and "at most its rated maximum 400 W" in out.err


def test_run_cost_widget_takes_a_cap_and_shows_errors_in_place():
    box = widgets.run_cost(accelerator=A100, devices=64)
    free_w = box.result["avg_power_w_per_device"]
    box.controls["power_cap"].value = "300"
    assert box.result["power_cap_w"] == 300
    assert box.result["avg_power_w_per_device"] < free_w
    assert "capped at 300 W each" in box.summary.value and box.message.value == ""
    box.controls["power_cap"].value = "lots"
    assert box.result is None and "power-cap" in box.message.value
    box.controls["power_cap"].value = "900"
    assert box.result is None and "at most its rated maximum 400 W" in box.message.value
    box.controls["power_cap"].value = ""
    assert box.result["power_cap_w"] is None


def test_llama2_34b_row_runs_at_its_production_cluster_cap():
    # Llama 2 paper s2.2.1 and Table 2: the production cluster capped its A100s at 350 W
    from traincost import validate
    runs = catalog.read_table("published_runs").set_index("id")
    kwargs, _ = validate.case_inputs(runs.loc["llama2-34b"].rename("llama2-34b"))
    assert kwargs["power_cap"] == 350


TRADE_JOB = {"accelerator": "h100-sxm5-80gb", "model": "llama2-7b", "devices": 64,
             "global_batch": 256, "tokens": 1e10}


def test_tradeoff_holds_the_layout_and_matches_single_estimates():
    from traincost import explore
    table = explore.power_cap_tradeoff(TRADE_JOB, [0.7, 0.875, 1.0])
    # caps are shares of the H100's 700 W: 490, 612.5 and 700 W
    np.testing.assert_allclose(table.index, [490.0, 612.5, 700.0], rtol=1e-12)
    assert list(table["extrapolated"]) == [True, False, False]   # below 75% of TDP
    assert table.loc[700.0, "time_change_pct"] == 0 and table.loc[700.0, "energy_change_pct"] == 0
    # time rises and energy falls as the cap comes down
    assert np.all(np.diff(table["time_change_pct"]) < 0)
    assert np.all(np.diff(table["energy_change_pct"]) > 0)
    base = traincost.estimate(**TRADE_JOB)
    pinned = traincost.estimate(**TRADE_JOB, power_cap=612.5, **explore.fixed_layout(base))
    assert table.loc[612.5, "train_time_days"] == pytest.approx(pinned.train_time_days, rel=1e-12)
    # no step can slow by more than its clock: 1 / (612.5/700)^0.24 - 1 = +3.26%
    assert 0 < table.loc[612.5, "time_change_pct"] < 3.26


def test_tradeoff_raises_the_message_for_a_bad_cap():
    from traincost import explore
    with pytest.raises(ValueError, match=r"^power-cap: 35 W"):
        explore.power_cap_tradeoff(TRADE_JOB, [0.05])


def test_tradeoff_plot_lines_are_the_table():
    from traincost import explore, plotting
    table = explore.power_cap_tradeoff(TRADE_JOB, [0.6, 0.8, 1.0])
    ax = plotting.power_cap_tradeoff(table).axes[0]
    lines = {ln.get_gid(): ln for ln in ax.lines if ln.get_gid()}
    np.testing.assert_allclose(lines["time"].get_ydata(), table["time_change_pct"])
    np.testing.assert_allclose(lines["energy"].get_ydata(), table["energy_change_pct"])
    assert [p.get_gid() for p in ax.patches] == ["extrapolated"]
    assert "[W]" in ax.get_xlabel() and "[%]" in ax.get_ylabel()


def test_search_leaves_out_a_device_the_cap_does_not_fit(capsys):
    from traincost.search import search
    res = search(["a100-sxm4-80gb", "h100-sxm5-80gb"], 64, model="llama2-7b", global_batch=512,
                 power_cap=500, top=1)
    assert res.best["time"]["accelerator"] == "h100-sxm5-80gb"
    assert any("left out: power-cap: 500 W is outside what a100-sxm4-80gb allows" in n
               for n in res.notes)
    with pytest.raises(ValueError, match="power-cap: 500 W"):
        search("a100-sxm4-80gb", 64, model="llama2-7b", global_batch=512, power_cap=500)
    rc, out, _ = run(["search", "--accelerators", "h100-sxm5-80gb", "--devices", "64",
                      "--model", "llama2-7b", "--global-batch", "512", "--power-cap", "500",
                      "--top", "1"], capsys)
    assert rc == 0 and "devices capped at 500 W" in out.splitlines()[0]


def test_power_cap_explorer_shows_the_chosen_cap_and_errors_in_place():
    box = widgets.power_cap_explorer(model="llama2-7b", accelerator="h100-sxm5-80gb",
                                     devices=64, global_batch=256, cap_fraction=0.8)
    # 80% of the H100's 700 W
    assert box.result["power_cap_w"] == pytest.approx(560.0)
    assert box.result["time_change_pct"] > 0 > box.result["energy_change_pct"]
    assert "560 W" in box.summary.value and box.message.value == ""
    assert bytes(box.chart.value[:8]) == b"\x89PNG\r\n\x1a\n"
    box.controls["cap"].value = 0.6                   # below the measured 75%
    assert box.result["extrapolated"] and "extrapolation" in box.message.value
    box.controls["devices"].value = 7                 # no layout of the batch
    assert box.result is None and "global batch 256 must be" in box.message.value
    assert "--" not in box.message.value                 # in words, not the CLI's flags
    with pytest.raises(ValueError, match="cap_fraction"):
        widgets.power_cap_explorer(cap_fraction=0.2)


def test_tradeoff_plot_marks_the_chosen_cap():
    from traincost import explore, plotting
    table = explore.power_cap_tradeoff(TRADE_JOB, [0.8, 1.0])
    ax = plotting.power_cap_tradeoff(table, mark_w=560.0).axes[0]
    (mark,) = [ln for ln in ax.lines if ln.get_gid() == "mark"]
    assert list(mark.get_xdata()) == [560.0, 560.0]
