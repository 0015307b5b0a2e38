"""The grid by month (issue 24): a run with a start date meets the months it spans.

Ember's monthly electricity data (CC BY 4.0, data/grid_monthly.csv) gives each country's
intensity month by month; the factors are each month's figure over its year's mean,
averaged over 2023 and 2024, applied to the region's own annual figure. The values by hand
below are read from the rows of the data file itself.
"""

from __future__ import annotations

import datetime
import json
from importlib import resources

import numpy as np
import pandas as pd
import pytest

import traincost
from traincost import catalog, explore, plotting, uncertainty
from traincost.footprint import window_mean_factor

from clihelpers import run

KW = dict(model="llama3.1-8b", seq_len=8192, global_batch=1024, tp=1, pp=1, cp=1,
          micro_batch=1, recompute="full", zero=3)
DATA = pd.read_csv(resources.files("traincost.data").joinpath("grid_monthly.csv"))


def _by_hand(country: str, month: int) -> float:
    rows = DATA[DATA["region"] == country]
    ratios = []
    for year in ("2023", "2024"):
        y = rows[rows["month"].str.startswith(year)]
        value = float(y.loc[y["month"] == f"{year}-{month:02d}", "gco2e_per_kwh"].iloc[0])
        ratios.append(value / y["gco2e_per_kwh"].mean())
    return float(np.mean(ratios))


def test_the_factors_are_the_countrys_months_over_its_year():
    f, source = catalog.grid_month_factors("DEU")
    assert len(f) == 12 and np.mean(f) == pytest.approx(1.0, rel=1e-12)
    raw = [_by_hand("DEU", m) for m in range(1, 13)]
    assert f == pytest.approx(np.array(raw) / np.mean(raw), rel=1e-12)
    assert f[0] > 1.0 > f[5]                 # German winter coal, summer solar
    assert "Ember" in source and "CC BY 4.0" in source
    # a cloud region takes its country's shape; a country without monthly figures none
    assert catalog.grid_month_factors("aws:eu-central-1")[0] == f
    assert catalog.grid_month_factors("ZAF") is None


def test_a_run_inside_one_month_meets_that_months_intensity():
    annual = traincost.estimate("h100-sxm5-80gb", 1024, region="DEU", tokens=1e11, **KW)
    assert annual.report["train_time_days"] < 20          # 10-30 January
    jan = traincost.estimate("h100-sxm5-80gb", 1024, region="DEU", tokens=1e11,
                             start="2025-01-10", **KW)
    f, _ = catalog.grid_month_factors("DEU")
    assert jan.report["co2e_t"] == pytest.approx(annual.report["co2e_t"] * f[0], rel=1e-9)
    assert jan.report["facility_energy_mwh"] == annual.report["facility_energy_mwh"]
    g = jan.to_dict()["grid_profile"]
    assert g["basis"] == "monthly" and g["start"] == "2025-01-10"
    assert g["gco2e_per_kwh"] == pytest.approx(annual.site.grid_gco2e_per_kwh * f[0])
    assert g["end"] < "2025-01-31"


def test_a_year_from_any_start_meets_the_annual_figure():
    f = catalog.grid_month_factors("FRA")[0]
    for x0 in (0.0, 3.5, 11.9):
        assert window_mean_factor(f, x0, 12.0) == pytest.approx(1.0, rel=1e-12)
    # two months from mid-February: half of February, all of March, half of April
    half = window_mean_factor(f, 1.5, 2.0)
    assert half == pytest.approx((0.5 * f[1] + f[2] + 0.5 * f[3]) / 2.0, rel=1e-12)


def test_no_monthly_figures_or_a_given_intensity_keep_the_annual_figure():
    for kw in (dict(region="ZAF"), dict(grid_intensity=300.0)):
        base = traincost.estimate("h100-sxm5-80gb", 64, **kw, **KW)
        dated = traincost.estimate("h100-sxm5-80gb", 64, start="2025-07-01", **kw, **KW)
        assert dated.report["co2e_t"] == base.report["co2e_t"]
        assert dated.to_dict()["grid_profile"]["basis"] == "annual"


def test_the_season_range_is_not_drawn_for_a_dated_run():
    def ids(**kw):
        return [i.id for i in uncertainty.uncertain_inputs(traincost.estimate(
            "h100-sxm5-80gb", 64, region="DEU", **KW, **kw))]
    assert "grid-run-period" in ids() and "grid-year" in ids()
    dated = ids(start="2025-07-01")
    assert "grid-run-period" not in dated and "grid-year" in dated


def test_cli_start_flag_and_its_errors(capsys):
    base = ["estimate", "--accelerator", "h100-sxm5-80gb", "--devices", "64", "--model",
            "llama3.1-8b", "--seq-len", "8192", "--global-batch", "512", "--region", "DEU"]
    rc, out, _ = run(base + ["--start", "2025-06-01", "--json"], capsys)
    assert rc == 0 and json.loads(out)["grid_profile"]["basis"] == "monthly"
    rc, out, _ = run(base + ["--start", "2025-06-01"], capsys)
    assert rc == 0 and "g/kWh over 2025-06-01 to" in out
    # a run that would end past the calendar's last day has no end date, and no traceback
    rc, out, _ = run(base + ["--start", "9999-12-20", "--json"], capsys)
    late = json.loads(out)["grid_profile"]
    assert rc == 0 and late["end"] is None and late["start"] == "9999-12-20"
    rc, out, _ = run(base + ["--start", "9999-12-20"], capsys)
    assert rc == 0 and "g/kWh over the months from 9999-12-20" in out
    rc, out, err = run(base + ["--start", "2025-13-01"], capsys)
    assert rc == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and "start: '2025-13-01' is not a date" in err


SITES = dict(tp=1, pp=1, cp=1, micro_batch=1, recompute="full", zero=3, cross_site="dp")


def _two_sites(**kw):
    return traincost.estimate("h100-sxm5-80gb", 1024, model="llama3.1-8b", seq_len=8192,
                              global_batch=1024, tokens=1e11, sites=2, **SITES, **kw)


def test_each_site_meets_its_own_countrys_months():
    """Two sites in Germany and France, inside January: each site's carbon is its facility
    energy x its annual figure x its own country's January factor, and the parts sum to
    the total (the pooled factors weight each site by PUE_i g_i)."""
    annual = _two_sites(site_regions="DEU,FRA")
    jan = _two_sites(site_regions="DEU,FRA", start="2025-01-10")
    assert jan.report["train_time_days"] < 20                          # 10-30 January
    assert jan.report["facility_energy_mwh"] == annual.report["facility_energy_mwh"]
    parts, base = jan.to_dict()["sites"], annual.to_dict()["sites"]
    for p, b, country in zip(parts, base, ("DEU", "FRA")):
        f = _by_hand(country, 1) / np.mean([_by_hand(country, m) for m in range(1, 13)])
        assert p["co2e_t"] == pytest.approx(b["co2e_t"] * f, rel=1e-9)
        assert p["grid_run_gco2e_per_kwh"] == pytest.approx(p["grid_gco2e_per_kwh"] * f,
                                                            rel=1e-9)
        assert b["grid_run_gco2e_per_kwh"] == b["grid_gco2e_per_kwh"]      # undated
    assert sum(p["co2e_t"] for p in parts) == pytest.approx(jan.report["co2e_t"], rel=1e-9)
    g = jan.to_dict()["grid_profile"]
    assert g["basis"] == "monthly" and "Ember" in g["source"]
    total_mwh = jan.report["facility_energy_mwh"]
    assert g["gco2e_per_kwh"] == pytest.approx(jan.report["co2e_t"] * 1e3 / total_mwh,   # g/kWh
                                               rel=1e-9)


def test_sites_in_one_region_meet_its_months_and_a_site_without_any_its_year():
    one = _two_sites(region="DEU", start="2025-01-10")
    f = catalog.grid_month_factors("DEU")[0][0]
    assert one.report["co2e_t"] == pytest.approx(
        _two_sites(region="DEU").report["co2e_t"] * f, rel=1e-9)
    # South Africa has no monthly figures: its half keeps its annual figure
    mixed = _two_sites(site_regions="DEU,ZAF", start="2025-01-10").to_dict()["sites"]
    undated = _two_sites(site_regions="DEU,ZAF").to_dict()["sites"]
    assert mixed[1]["co2e_t"] == pytest.approx(undated[1]["co2e_t"], rel=1e-12)
    assert mixed[0]["co2e_t"] == pytest.approx(undated[0]["co2e_t"] * f, rel=1e-9)


def test_cli_start_with_sites(capsys):
    rc, out, _ = run(["estimate", "--accelerator", "h100-sxm5-80gb", "--devices", "1024",
                      "--model", "llama3.1-8b", "--seq-len", "8192", "--global-batch", "1024",
                      "--sites", "2", "--site-regions", "DEU,FRA", "--start", "2025-06-01",
                      "--json"], capsys)
    d = json.loads(out)
    assert rc == 0 and d["grid_profile"]["basis"] == "monthly"
    assert sum(x["co2e_t"] for x in d["sites"]) == pytest.approx(d["co2e_t"], rel=1e-9)


def test_carbon_by_start_month_by_hand():
    """A 9-day run started on the 1st lies inside its month: its carbon is the undated
    run's times that month's factor, read from the data rows; South Africa, without monthly
    figures, keeps its annual figure every month."""
    df = explore.carbon_by_start_month(dict(accelerator="h100-sxm5-80gb", model="llama2-7b",
                                            devices=256, global_batch=1024),
                                       ["FRA", "ZAF"], year=2025)
    assert len(df) == 24 and (df["train_time_days"] < 28).all()
    fra = df[df["region"] == "FRA"].set_index("month")
    raw = np.array([_by_hand("FRA", m) for m in range(1, 13)])
    f = raw / raw.mean()
    assert fra["change_pct"].to_numpy() == pytest.approx(100 * (f - 1), rel=1e-9, abs=1e-9)
    assert (fra["basis"] == "monthly").all() and fra.loc[3, "start"] == "2025-03-01"
    zaf = df[df["region"] == "ZAF"]
    assert (zaf["basis"] == "annual").all()
    assert zaf["co2e_t"].to_numpy() == pytest.approx(zaf["annual_co2e_t"].to_numpy(), rel=1e-12)
    fig = plotting.carbon_by_start_month(df)
    lines = {ln.get_gid(): ln for ln in fig.axes[0].get_lines()}
    assert list(lines["FRA"].get_ydata()) == pytest.approx(fra["change_pct"].to_list())
    assert lines["ZAF"].get_linestyle() == ":"
    for bad, said in ((dict(regions=[]), "regions: select at least one region"),
                      (dict(regions=["FRA"], year=2025.5), "year: 2025.5 must be a whole year")):
        with pytest.raises(ValueError, match=said):
            explore.carbon_by_start_month(dict(accelerator="h100-sxm5-80gb",
                                               model="llama2-7b", devices=256,
                                               global_batch=1024), **bad)


def test_cleanest_start_by_hand():
    """A 9-day run started on any day of 2025 in Germany: a run inside one calendar month
    meets that month's factor (read from the data rows), so the cleanest start lies in the
    month of the least factor (July: solar) at the undated run's carbon times it, the
    dirtiest in the month of the largest (November); each row is the single estimate's."""
    params = dict(accelerator="h100-sxm5-80gb", model="llama2-7b", devices=256,
                  global_batch=1024)
    df = explore.cleanest_start(params, "DEU", "2025-01-01", "2025-12-31")
    assert len(df) == 365 and (df["train_time_days"] < 28).all()
    raw = np.array([_by_hand("DEU", m) for m in range(1, 13)])
    f = raw / raw.mean()
    best, worst = df.iloc[df["co2e_t"].argmin()], df.iloc[df["co2e_t"].argmax()]
    assert int(best["start"][5:7]) == 1 + int(np.argmin(f)) == 7
    assert int(worst["start"][5:7]) == 1 + int(np.argmax(f)) == 11
    assert best["co2e_t"] == pytest.approx(best["annual_co2e_t"] * f.min(), rel=1e-9)
    assert worst["co2e_t"] == pytest.approx(worst["annual_co2e_t"] * f.max(), rel=1e-9)
    one = traincost.estimate(params["accelerator"], params["devices"], model="llama2-7b",
                             global_batch=1024, region="DEU", start=best["start"])
    assert one.report["co2e_t"] == pytest.approx(best["co2e_t"], rel=1e-9)
    assert one.to_dict()["grid_profile"]["end"] == best["end"]
    # South Africa has no monthly figures: every start is the annual figure
    zaf = explore.cleanest_start(params, "ZAF", datetime.date(2025, 3, 1), "2025-03-03")
    assert len(zaf) == 3 and (zaf["basis"] == "annual").all()
    assert zaf["change_pct"].to_numpy() == pytest.approx(0.0, abs=1e-9)
    for first, last, said in (("2025-13-01", "2025-12-31", "earliest: '2025-13-01' is not a"),
                              ("2025-02-01", "2025-01-31", "latest: 2025-01-31 is before"),
                              ("2020-01-01", "2030-12-31", "latest: a window of 4,018 days")):
        with pytest.raises(ValueError, match=said):
            explore.cleanest_start(params, "DEU", first, last)


def test_cli_start_window(capsys):
    """--start-window: the run is dated at the cleanest start day of the window, the one
    explore.cleanest_start finds for the same flags (here the whole of July, where a 9-day
    German run meets July's factor, the year's least), and JSON start_window says so."""
    base = ["estimate", "--accelerator", "h100-sxm5-80gb", "--devices", "256", "--model",
            "llama2-7b", "--global-batch", "1024", "--region", "DEU"]
    rc, out, _ = run(base + ["--start-window", "2025-06-20:2025-08-10", "--json"], capsys)
    d = json.loads(out)
    w = d["start_window"]
    assert rc == 0 and w["days"] == 52 and w["earliest"] == "2025-06-20"
    assert w["cleanest_start"][:7] == "2025-07" and d["grid_profile"]["start"] == w["cleanest_start"]
    f = catalog.grid_month_factors("DEU")[0]
    assert w["cleanest_co2e_t"] == pytest.approx(d["co2e_t"], rel=1e-12)
    assert w["cleanest_co2e_t"] == pytest.approx(w["annual_co2e_t"] * f[6], rel=1e-9)
    assert w["worst_co2e_t"] > w["cleanest_co2e_t"]
    rc, out, _ = run(base + ["--start-window", "2025-06-20:2025-08-10"], capsys)
    assert rc == 0 and "the cleanest of 52 start days from 2025-06-20 to 2025-08-10" in out
    assert "location-based" in out
    for bad, said in ((["--start-window", "2025-07-01"], "start-window: '2025-07-01' must be"),
                      (["--start-window", "2025-07-01:2025-06-01"], "start-window: 2025-06-01 "
                       "is before"),
                      (["--start-window", "2025-07-01:2025-07-05", "--start", "2025-07-01"],
                       "start-window: give --start or --start-window, not both")):
        rc, out, err = run(base + bad, capsys)
        assert rc == 2 and out == "" and len(err.strip().splitlines()) == 1 and said in err


def test_cleanest_start_keeps_every_input_it_is_given():
    """Each row is the estimate of the same inputs at that start: a PUE, a power cap and a
    price (whose sweep columns are named pue, power_cap_w, price_usd_per_h) change every row
    as they change the estimate; a given grid intensity has no months (every start the
    undated run); several sites' regions are refused in the what-if's words."""
    params = dict(accelerator="h100-sxm5-80gb", model="llama2-7b", devices=256,
                  global_batch=1024, pue=1.2, power_cap=600.0, price_per_hour=2.0)
    df = explore.cleanest_start(params, "DEU", "2025-03-01", "2025-03-05")
    for _, row in df.iterrows():
        one = traincost.estimate(region="DEU", start=row["start"], **params)
        assert row["co2e_t"] == pytest.approx(one.report["co2e_t"], rel=1e-9)
        assert row["train_time_days"] == pytest.approx(one.report["train_time_days"], rel=1e-12)
    flat = explore.cleanest_start({**params, "grid_intensity": 300.0}, None, "2025-03-01",
                                  "2025-03-03")
    assert (flat["basis"] == "annual").all()
    assert flat["co2e_t"].to_numpy() == pytest.approx(flat["annual_co2e_t"].to_numpy(), rel=1e-9)
    with pytest.raises(ValueError, match="site-regions: the cleanest-start what-if"):
        explore.cleanest_start({**params, "sites": 2, "site_regions": "DEU,FRA"}, None,
                               "2025-03-01", "2025-03-03")
