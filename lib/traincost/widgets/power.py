"""Notebook 05: power against the busy share, a power cap's trade-off, the same run's
carbon in several grid regions, and its carbon by the month it starts.
"""

from __future__ import annotations

import ipywidgets as widgets
import pandas as pd

from .. import catalog, explore, plotting
from ..units import GIGA, SECONDS_PER_DAY, SECONDS_PER_MONTH
from .kit import (CURATED_REGIONS, STYLE, accelerator_dropdown, cards, clears, int_text,
                  message_html, model_dropdown, parse_optional_number, png, Refresher,
                  region_choices, region_options, sig, tokens_text, wide)

#: a short list of regions for the carbon-by-region widget: clean to coal-heavy
CARBON_REGIONS = ("SWE", "FRA", "gcp:europe-west1", "GBR", "USA:california", "world", "USA",
                  "DEU", "CHN", "IND", "POL")
#: months in a day (a month: a twelfth of a year) [months/day]
DAY_IN_MONTHS = SECONDS_PER_DAY / SECONDS_PER_MONTH
#: the start-month widget's regions at start: seasons of solar, wind, hydro and coal
SEASON_REGIONS = ("DEU", "FRA", "GBR", "IND")


def power_summary_html(curve_row: dict, pue: float) -> str:
    """Power of one device at one busy share, and at the plug with a PUE. [W]"""
    it_w = curve_row["total_w"]
    cells = [("Accelerator", f"{sig(curve_row['device_w'])} W"),
             ("+ host share", f"{sig(curve_row['host_w'])} W"),
             ("= IT power", f"{sig(it_w)} W"),
             (f"× PUE {sig(pue)} = at the plug", f"{sig(it_w * pue)} W")]
    return cards(cells)


def power_explorer(accelerator: str = "h100-sxm5-80gb", busy_fraction: float = 0.8,
                   pue: float = 1.56) -> widgets.VBox:
    """Power per device against the busy share of a step, and what PUE adds on top.

    Parameters
    ----------
    accelerator : str
        Accelerator id.
    busy_fraction : float
        Share of the step spent computing (the rest waits on communication or the
        pipeline bubble). [-]
    pue : float
        Power usage effectiveness. [-]

    Returns
    -------
    ipywidgets.VBox
        ``controls``, ``message``, ``summary`` (HTML: device, host, IT and facility
        power), ``chart`` (Image), ``result`` (dict of the marked point), ``refresh()``.
    """
    controls = {
        "accelerator": accelerator_dropdown(accelerator),
        "busy": widgets.FloatSlider(value=busy_fraction, min=0.0, max=1.0, step=0.05,
                                    description="busy share [-]", continuous_update=False,
                                    style=STYLE, layout=wide()),
        "pue": widgets.FloatSlider(value=pue, min=1.0, max=2.0, step=0.01,
                                   description="PUE [-]", continuous_update=False,
                                   style=STYLE, layout=wide()),
    }
    message, summary = widgets.HTML(), widgets.HTML()
    chart = widgets.Image(format="png", layout=widgets.Layout(max_width="800px"))
    box = widgets.VBox([widgets.VBox(list(controls.values())), message, summary, chart])
    box.controls, box.message, box.summary, box.chart, box.result = \
        controls, message, summary, chart, None

    def update():
        acc = catalog.accelerator(controls["accelerator"].value)
        u = controls["busy"].value
        curve = explore.power_curve(acc)
        point = explore.power_curve(acc, [u]).iloc[0].to_dict()
        box.result = {**point, "pue": controls["pue"].value,
                      "facility_w": point["total_w"] * controls["pue"].value}
        message.value = ""
        summary.value = power_summary_html(point, controls["pue"].value)
        chart.value = png(plotting.power_curve(
            curve, tdp_w=acc.tdp_w, idle_w=acc.idle_w, busy_fraction=u,
            title=f"{acc.name}: waiting still draws most of the power"))

    def on_error(text):
        box.result = None
        message.value = message_html(text)
        summary.value = ""

    return Refresher(update, on_error).attach(box, controls)


def power_cap_summary_html(row: dict) -> str:
    """One row of :func:`traincost.explore.power_cap_tradeoff` as headline numbers."""
    cells = [("Power cap", f"{sig(row['power_cap_w'])} W ({sig(100 * row['fraction_of_tdp'])} "
                           "% of TDP)"),
             ("Training time", f"{row['time_change_pct']:+.1f} %"),
             ("Energy at the plug", f"{row['energy_change_pct']:+.1f} %"),
             ("Power per device", f"{sig(row['avg_power_w_per_device'])} W incl. host")]
    return cards(cells)


def power_cap_explorer(model: str = "llama2-7b", accelerator: str = "h100-sxm5-80gb",
                       devices: int = 256, tokens: float | None = None,
                       cap_fraction: float = 0.8, global_batch: int = 1024) -> widgets.VBox:
    """One run under a power limit: what the cap costs in time and saves in energy.

    Parameters
    ----------
    model, accelerator : str
        Preset and accelerator ids.
    devices : int
        Devices. [-]
    tokens : float, optional
        Training tokens; the preset's when None. [tokens]
    cap_fraction : float
        The power limit as a share of the accelerator's TDP, 0.5 to 1. [-]
    global_batch : int
        Sequences per optimizer step. [sequences]

    Returns
    -------
    ipywidgets.VBox
        ``controls``, ``message`` (HTML: the extrapolation note below the measured range,
        or an error), ``summary`` (HTML), ``chart`` (Image), ``result`` (the chosen cap's
        row of :func:`traincost.explore.power_cap_tradeoff`), ``refresh()``.
    """
    if not 0.5 <= cap_fraction <= 1.0:
        raise ValueError(f"cap_fraction: {cap_fraction!r} must lie between 0.5 and 1 (a share "
                         "of the accelerator's TDP)")
    controls = {
        "model": model_dropdown(model),
        "accelerator": accelerator_dropdown(accelerator),
        "devices": int_text(devices, "devices"),
        "tokens": tokens_text(model, tokens),
        "cap": widgets.FloatSlider(value=cap_fraction, min=0.5, max=1.0, step=0.025,
                                   description="cap [share of TDP]", readout_format=".0%",
                                   continuous_update=False, style=STYLE, layout=wide()),
    }
    message, summary = widgets.HTML(), widgets.HTML()
    chart = widgets.Image(format="png", layout=widgets.Layout(max_width="800px"))
    box = widgets.VBox([widgets.VBox(list(controls.values())), message, summary, chart])
    box.controls, box.message, box.summary, box.chart, box.result = \
        controls, message, summary, chart, None

    def update():
        f = float(controls["cap"].value)
        p = {"accelerator": controls["accelerator"].value, "model": controls["model"].value,
             "devices": controls["devices"].value, "global_batch": global_batch,
             "tokens": controls["tokens"].value * GIGA}
        df = explore.power_cap_tradeoff(p, sorted(set(explore.POWER_CAP_FRACTIONS) | {f}))
        row = {"power_cap_w": float(df.index[df["fraction_of_tdp"] == f][0]),
               **df[df["fraction_of_tdp"] == f].iloc[0].to_dict()}
        box.result = row
        message.value = message_html(
            f"{sig(100 * f)} % of TDP is below the lowest limit the clock law was measured "
            "at; this is an extrapolation") if row["extrapolated"] else ""
        summary.value = power_cap_summary_html(row)
        chart.value = png(plotting.power_cap_tradeoff(
            df, mark_w=row["power_cap_w"],
            title=f"{p['model']} on {p['devices']} x {p['accelerator']}: a cap trades time "
                  "for energy"))
        chart.layout.display = None

    on_error = clears(box, message, [summary], [chart])

    return Refresher(update, on_error).start(box, controls)


def carbon_table_html(df: pd.DataFrame) -> str:
    """:func:`traincost.explore.carbon_by_region`'s table, rounded, units in headers."""
    out = pd.DataFrame(index=df.index)
    out.index.name = "region"
    out["name"] = df["name"]
    out["grid [gCO2e/kWh]"] = [sig(v) for v in df["grid_gco2e_per_kwh"]]
    out["PUE [-]"] = [sig(v) for v in df["pue"]]
    out["energy at the plug [MWh]"] = [sig(v) for v in df["facility_energy_mwh"]]
    out["operational [tCO2e]"] = [sig(v) for v in df["co2e_t"]]
    out["embodied [tCO2e]"] = [sig(v) if pd.notna(v) else "no figure"
                               for v in df["embodied_co2e_t"]]
    out["water [m3]"] = [sig(v) for v in df["water_m3"]]
    return out.to_html(escape=True, border=0, classes="traincost-table")


def region_carbon(model: str = "llama2-7b", accelerator: str = "h100-sxm5-80gb",
                  devices: int = 256, tokens: float | None = None, regions=CARBON_REGIONS,
                  pue: float | None = None, embodied_kgco2e: float | None = None,
                  global_batch: int = 1024) -> widgets.VBox:
    """The same training run in several grid regions: operational and embodied tCO2e.

    Parameters
    ----------
    model, accelerator : str
        Preset and accelerator ids.
    devices : int
        Devices. [-]
    tokens : float, optional
        Training tokens; the preset's when None. [tokens]
    regions : sequence of str
        Region ids selected at start.
    pue : float, optional
        One PUE for every region; each region's default when None. [-]
    embodied_kgco2e : float, optional
        Embodied emissions per device instead of the catalog's. [kgCO2e]
    global_batch : int
        Sequences per optimizer step. [sequences]

    Returns
    -------
    ipywidgets.VBox
        ``controls``, ``message``, ``table`` (HTML), ``chart`` (Image), ``result``
        (:func:`traincost.explore.carbon_by_region`'s table), ``refresh()``.
    """
    all_regions = region_choices(regions, CARBON_REGIONS + CURATED_REGIONS)
    controls = {
        "model": model_dropdown(model),
        "accelerator": accelerator_dropdown(accelerator),
        "devices": int_text(devices, "devices"),
        "tokens": tokens_text(model, tokens),
        "pue_auto": widgets.Checkbox(value=pue is None, description="PUE: each region's default",
                                     indent=False),
        "pue": widgets.FloatSlider(value=1.56 if pue is None else pue, min=1.0, max=2.0,
                                   step=0.01, description="PUE [-]", disabled=pue is None,
                                   continuous_update=False, style=STYLE, layout=wide()),
        "embodied": widgets.Text(value="" if embodied_kgco2e is None else str(embodied_kgco2e),
                                 placeholder="blank = catalog (die only)",
                                 description="embodied [kgCO2e/device]",
                                 continuous_update=False, style=STYLE, layout=wide()),
        "regions": widgets.SelectMultiple(options=[(lbl, rid) for lbl, rid in
                                                   region_options(tuple(all_regions))],
                                          value=tuple(regions), rows=12,
                                          description="regions",
                                          style={"description_width": "60px"},
                                          layout=widgets.Layout(width="460px")),
    }
    message, table = widgets.HTML(), widgets.HTML()
    chart = widgets.Image(format="png", layout=widgets.Layout(max_width="900px"))
    left = widgets.VBox([controls[k] for k in ("model", "accelerator", "devices", "tokens",
                                                "pue_auto", "pue", "embodied")])
    box = widgets.VBox([widgets.HBox([left, controls["regions"]]), message, chart, table])
    box.controls, box.message, box.table, box.chart, box.result = \
        controls, message, table, chart, None

    def update():
        auto = controls["pue_auto"].value
        controls["pue"].disabled = auto
        p = {"accelerator": controls["accelerator"].value, "model": controls["model"].value,
             "devices": controls["devices"].value, "global_batch": global_batch,
             "tokens": controls["tokens"].value * GIGA,
             "pue": None if auto else controls["pue"].value,
             "embodied_kgco2e": parse_optional_number(controls["embodied"].value, "embodied",
                                                      "kgCO2e per device")}
        df = explore.carbon_by_region(p, controls["regions"].value)
        box.result = df
        message.value = "" if df["embodied_co2e_t"].notna().all() else message_html(
            f"{p['accelerator']}: no embodied figure in the catalog; type one to add it")
        labels = df.sort_values("co2e_t")          # cleanest at the top
        labels.index = [f"{rid} ({sig(g)} g/kWh, PUE {sig(pp)})" for rid, g, pp in
                        zip(labels.index, labels["grid_gco2e_per_kwh"], labels["pue"])]
        chart.value = png(plotting.carbon_bars(labels))
        chart.layout.display = None
        table.value = carbon_table_html(df)

    on_error = clears(box, message, [table], [chart])

    refresh = Refresher(update, on_error)
    return refresh.start(box, controls)


def start_month_table_html(df: pd.DataFrame) -> str:
    """:func:`traincost.explore.carbon_by_start_month`'s rows summed up per region: the
    undated run's tCO2e, the start months of the least and the most, and the swing
    between them [%], rounded, units in headers."""
    rows = []
    for region, r in df.groupby("region", sort=False):
        low, high = r.loc[r["co2e_t"].idxmin()], r.loc[r["co2e_t"].idxmax()]
        monthly = (r["basis"] == "monthly").any()
        rows.append({"region": region,
                     "annual average [tCO2e]": sig(r["annual_co2e_t"].iloc[0]),
                     "least: start": explore.MONTH_NAMES[low["month"] - 1] if monthly else "-",
                     "least [tCO2e]": sig(low["co2e_t"]),
                     "most: start": explore.MONTH_NAMES[high["month"] - 1] if monthly else "-",
                     "most [tCO2e]": sig(high["co2e_t"]),
                     "swing [% of annual]": (sig(high["change_pct"] - low["change_pct"])
                                             if monthly else "no monthly figures")})
    return pd.DataFrame(rows).set_index("region").to_html(escape=True, border=0,
                                                          classes="traincost-table")


def start_month_carbon(model: str = "llama2-7b", accelerator: str = "h100-sxm5-80gb",
                       devices: int = 256, tokens: float | None = None,
                       regions=SEASON_REGIONS, year: int = 2025,
                       global_batch: int = 1024) -> widgets.VBox:
    """The same training run started in each month of a year: its operational carbon over
    the months it spans, per region, against the annual average.

    Parameters
    ----------
    model, accelerator : str
        Preset and accelerator ids.
    devices : int
        Devices (fewer: a longer run, whose months average out more). [-]
    tokens : float, optional
        Training tokens; the preset's when None. [tokens]
    regions : sequence of str
        Region ids selected at start.
    year : int
        The year the runs start in. [-]
    global_batch : int
        Sequences per optimizer step. [sequences]

    Returns
    -------
    ipywidgets.VBox
        ``controls``, ``message``, ``summary`` (HTML: the run's length), ``table`` (HTML),
        ``chart`` (Image), ``result`` (:func:`traincost.explore.carbon_by_start_month`'s
        rows), ``refresh()``.
    """
    # the regions offered: those given, then the short lists' with monthly figures
    all_regions = region_choices(regions, [
        r for r in CARBON_REGIONS + CURATED_REGIONS
        if r in catalog.regions().index and catalog.grid_month_factors(r) is not None])
    controls = {
        "model": model_dropdown(model),
        "accelerator": accelerator_dropdown(accelerator),
        "devices": int_text(devices, "devices"),
        "tokens": tokens_text(model, tokens),
        "year": widgets.IntText(value=year, description="year the runs start in",
                                style=STYLE, layout=wide()),
        "regions": widgets.SelectMultiple(options=region_options(tuple(all_regions)),
                                          value=tuple(regions), rows=8, description="regions",
                                          style={"description_width": "60px"},
                                          layout=widgets.Layout(width="460px")),
    }
    message, summary, table = widgets.HTML(), widgets.HTML(), widgets.HTML()
    chart = widgets.Image(format="png", layout=widgets.Layout(max_width="900px"))
    left = widgets.VBox([controls[k] for k in ("model", "accelerator", "devices", "tokens",
                                                "year")])
    box = widgets.VBox([widgets.HBox([left, controls["regions"]]), message, summary, chart,
                        table])
    box.controls, box.message, box.summary, box.table, box.chart, box.result = \
        controls, message, summary, table, chart, None

    def update():
        p = {"accelerator": controls["accelerator"].value, "model": controls["model"].value,
             "devices": controls["devices"].value, "global_batch": global_batch,
             "tokens": controls["tokens"].value * GIGA}
        df = explore.carbon_by_start_month(p, controls["regions"].value,
                                           year=controls["year"].value)
        box.result = df
        message.value = ""
        days = float(df["train_time_days"].iloc[0])
        summary.value = cards([("The run lasts", f"{sig(days)} days"),
                               ("so it spans", f"{sig(days * DAY_IN_MONTHS)} months")])
        chart.value = png(plotting.carbon_by_start_month(
            df, title=f"{p['model']} on {p['devices']} x {p['accelerator']}: "
                      f"a {sig(days)}-day run by its start month"))
        chart.layout.display = None
        table.value = start_month_table_html(df)

    on_error = clears(box, message, [summary, table], [chart])

    refresh = Refresher(update, on_error)
    return refresh.start(box, controls)


def cleanest_start_window(model: str = "llama2-7b", accelerator: str = "h100-sxm5-80gb",
                          devices: int = 256, tokens: float | None = None, region: str = "DEU",
                          earliest: str = "2025-01-01", latest: str = "2025-12-31",
                          global_batch: int = 1024) -> widgets.VBox:
    """The carbon-aware what-if: the start day of least operational carbon within a window
    (:func:`traincost.explore.cleanest_start`), against the window's dirtiest start and
    the undated run.

    Parameters
    ----------
    model, accelerator : str
        Preset and accelerator ids.
    devices : int
        Devices. [-]
    tokens : float, optional
        Training tokens; the preset's when None. [tokens]
    region : str
        Grid region id.
    earliest, latest : str
        The window's first and last start day, YYYY-MM-DD. [-]
    global_batch : int
        Sequences per optimizer step. [sequences]

    Returns
    -------
    ipywidgets.VBox
        ``controls``, ``message``, ``summary`` (HTML cards: the cleanest start, its tCO2e,
        the dirtiest start, the saving), ``table`` (HTML: the five cleanest starts),
        ``result`` (:func:`traincost.explore.cleanest_start`'s rows), ``refresh()``.
    """
    def day(value, description):
        return widgets.Text(value=value, description=description, placeholder="YYYY-MM-DD",
                            continuous_update=False, style=STYLE, layout=wide())

    controls = {"model": model_dropdown(model), "accelerator": accelerator_dropdown(accelerator),
                "devices": int_text(devices, "devices"), "tokens": tokens_text(model, tokens),
                "region": widgets.Dropdown(options=region_options((region,)), value=region,
                                           description="grid region", style=STYLE,
                                           layout=wide()),
                "earliest": day(earliest, "earliest start"), "latest": day(latest, "latest start")}
    message, summary, table = widgets.HTML(), widgets.HTML(), widgets.HTML()
    box = widgets.VBox([widgets.VBox(list(controls.values())), message, summary, table])
    box.controls, box.message, box.summary, box.table, box.result = \
        controls, message, summary, table, None

    def update():
        p = {"accelerator": controls["accelerator"].value, "model": controls["model"].value,
             "devices": controls["devices"].value, "global_batch": global_batch,
             "tokens": controls["tokens"].value * GIGA}
        df = explore.cleanest_start(p, controls["region"].value,
                                    controls["earliest"].value.strip(),
                                    controls["latest"].value.strip())
        box.result = df
        message.value = ""
        best, worst = explore.extreme_starts(df)
        saving = 100.0 * (1.0 - best["co2e_t"] / worst["co2e_t"]) if worst["co2e_t"] else 0.0
        summary.value = cards([("Cleanest start", f"{best['start']} ({sig(best['co2e_t'])} t)"),
                               ("Dirtiest start", f"{worst['start']} ({sig(worst['co2e_t'])} t)"),
                               ("Choosing saves", f"{sig(saving)} %"),
                               ("Undated run", f"{sig(best['annual_co2e_t'])} tCO2e")])
        top = df.sort_values(["co2e_t", "start"]).head(5)
        table.value = pd.DataFrame({
            "start": top["start"], "end": top["end"],
            "grid [gCO2e/kWh]": [sig(v) for v in top["grid_gco2e_per_kwh"]],
            "operational [tCO2e]": [sig(v) for v in top["co2e_t"]],
            "vs undated [%]": [sig(v) for v in top["change_pct"]]}).to_html(
                index=False, escape=True, border=0, classes="traincost-table")

    on_error = clears(box, message, [summary, table])
    refresh = Refresher(update, on_error)
    return refresh.start(box, controls)
