"""Water (issue 24): on-site (the data centre's WUE per kWh of IT energy) and off-site (the
grid's generation per kWh of electricity drawn, PUE included), as Li, Yang, Islam & Ren,
"Making AI Less 'Thirsty'" (arXiv:2304.03271) account it:

    water = E_IT x WUE + E_IT x PUE x EWIF

The figures are data/water.csv's rows, read from that paper's Table 1 and WRI 2020.
"""

from __future__ import annotations

import json

import pandas as pd
import pytest

import traincost
from traincost import catalog, footprint

from clihelpers import run

RUN = dict(model="llama2-7b", global_batch=512, tokens=1e11, tp=1, pp=1, cp=1, ep=1, vpp=1,
           zero=1, micro_batch=1, recompute="selective")


def _json(**kw) -> dict:
    return traincost.estimate("h100-sxm5-80gb", 64, **{**RUN, **kw}).to_dict()


def test_water_by_hand():
    """AWS us-east-1: AWS's 2021 fleet WUE 0.25 L/kWh on site; Virginia's grid 2.385 L/kWh
    (Li et al. Table 1) for the energy at the plug."""
    d = _json(region="aws:us-east-1")
    it_kwh, fac_kwh = d["it_energy_mwh"] * 1e3, d["facility_energy_mwh"] * 1e3
    assert d["wue_l_per_kwh"] == 0.25 and d["grid_water_l_per_kwh"] == 2.385
    assert d["water_onsite_m3"] == pytest.approx(it_kwh * 0.25 / 1e3, rel=1e-12)
    assert d["water_offsite_m3"] == pytest.approx(fac_kwh * 2.385 / 1e3, rel=1e-12)
    assert d["water_m3"] == pytest.approx(d["water_onsite_m3"] + d["water_offsite_m3"])
    assert "USA:virginia" in d["sources"]["grid_water"]


def test_given_wue_replaces_the_operators():
    d = _json(region="aws:us-east-1", wue=1.8)
    assert d["wue_l_per_kwh"] == 1.8 and d["sources"]["wue"] == "given"
    assert d["water_onsite_m3"] == pytest.approx(d["it_energy_mwh"] * 1.8, rel=1e-12)


@pytest.mark.parametrize("region, used", [
    ("USA:virginia", "USA:virginia"),       # its own row
    ("USA:ohio", "USA"),                    # no row for Ohio: the country's
    ("aws:us-east-1", "USA:virginia"),      # a cloud region by data/cloud_regions.csv
    ("SWE", "SWE"),
    ("FRA", "world"),                       # WRI gives France no factor (Li et al.): world
])
def test_grid_water_falls_back_and_says_so(region, used):
    value, source = catalog.grid_water(region)
    row = catalog.water_table().query("kind == 'offsite' and key == @used").iloc[0]
    assert value == row["l_per_kwh"]
    if used == region:
        assert "figure for" not in source
    else:
        assert source.startswith(f"{used}'s figure for {region}: ")


def test_an_operator_without_a_figure_takes_the_industry_average():
    value, source = catalog.wue("enterprise-onprem")
    assert value == catalog.wue("industry-average")[0]
    assert source.startswith("no figure for enterprise-onprem")


def test_each_site_its_own_water():
    d = traincost.estimate("h100-sxm5-80gb", 64, **RUN, sites=2,
                           site_regions="aws:us-east-1,SWE").to_dict()
    east, swe = d["sites"]
    it_half = d["it_energy_mwh"] / 2 * 1e3                    # kWh per site
    want_east = it_half * 0.25 + it_half * 1.14 * 2.385       # AWS WUE and PUE, Virginia
    want_swe = it_half * 0.55 + it_half * 1.56 * 6.019        # industry average, Sweden
    assert east["water_m3"] == pytest.approx(want_east / 1e3, rel=1e-9)
    assert swe["water_m3"] == pytest.approx(want_swe / 1e3, rel=1e-9)
    assert d["water_m3"] == pytest.approx(east["water_m3"] + swe["water_m3"], rel=1e-12)


def test_footprint_water_functions():
    assert footprint.onsite_water_m3(3.6e12, 2.0) == pytest.approx(2000.0)    # 1 GWh
    assert footprint.offsite_water_m3(3.6e6, 1000.0) == pytest.approx(1.0)    # 1 kWh


def test_sweep_takes_a_wue_column():
    table = pd.DataFrame({"accelerator": "h100-sxm5-80gb", "devices": 64, "model": "llama2-7b",
                          "global_batch": 512, "tokens": 1e11, "wue_l_per_kwh": [0.0, 1.0]})
    out = traincost.sweep(table)
    assert out.loc[0, "water_onsite_m3"] == 0.0
    assert out.loc[1, "water_onsite_m3"] == pytest.approx(out.loc[1, "it_energy_mwh"])


def test_cli_water_and_bad_wue(capsys):
    base = ["estimate", "--accelerator", "h100-sxm5-80gb", "--devices", "64", "--model",
            "llama2-7b", "--global-batch", "512"]
    rc, out, _ = run(base + ["--json"], capsys)
    assert rc == 0
    assert {"water_m3", "water_onsite_m3", "water_offsite_m3"} <= set(json.loads(out))
    rc, out, err = run(base + ["--wue", "nan"], capsys)
    assert rc == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "wue" in lines[0]


def test_water_has_a_range_unless_the_wue_is_given():
    """data/input_ranges.csv's wue-site (a factor 0.27-3.27 on the site's WUE, Li et al.'s
    site spread around the U.S. average) is drawn for a WUE the catalog chose, not for
    one the user gave; the water interval holds the point estimate."""
    from traincost import uncertainty
    est = traincost.estimate("h100-sxm5-80gb", 64, **RUN, region="aws:us-east-1")
    assert "wue-site" in [i.id for i in uncertainty.uncertain_inputs(est)]
    given = traincost.estimate("h100-sxm5-80gb", 64, **RUN, region="aws:us-east-1", wue=0.3)
    assert "wue-site" not in [i.id for i in uncertainty.uncertain_inputs(given)]
    low, mid, high = uncertainty.intervals(est, draws=2000, seed=1)["water_m3"]
    assert low < est.water_m3 < high and low < mid < high
