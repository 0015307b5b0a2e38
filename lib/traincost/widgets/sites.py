"""Notebook 09: one training run split over several sites, and what the link between them
costs in time, and each site in energy, carbon and dollars.
"""

from __future__ import annotations

import html

import ipywidgets as widgets
import pandas as pd

from .. import plotting
from ..estimate import estimate
from ..layout import LayoutError
from ..units import GIGA
from .kit import (CURATED_REGIONS, STYLE, accelerator_dropdown, cards, caveats_html, check_choice,
                  clears, int_text, model_dropdown, png, Refresher, region_options, sig,
                  tokens_text, wide)

#: the site counts the widget offers, and the most region pickers it shows
SITE_CHOICES = (1, 2, 3, 4)
#: relaxed-synchrony choices: exchange every step, or every H steps (DiLoCo ran H = 500,
#: INTELLECT-1 H = 100)
SYNC_CHOICES = (1, 10, 100, 500)
#: placements, as the widget labels them, and the knob each sets
PLACEMENTS = (("auto (searched)", None), ("data parallel", "dp"), ("pipeline", "pp"))
#: the bars of the step-time chart
_LABEL_ONE, _LABEL_SPLIT = "one site", "split over the sites"
#: a layout rule's fields in the widget's words (:meth:`traincost.layout.LayoutError.in_words`)
WORDS = {"devices": "devices", "global_batch": "global batch (sequences per step)",
         "sites": "sites", "cross_site": "what crosses:", "pp": "pipeline stages",
         "tp": "tensor parallel", "cp": "context parallel", "ep": "expert parallel",
         "vpp": "interleaving", "dp": "data parallel", "seq_len": "sequence length"}


def sites_estimate(params: dict) -> dict:
    """:func:`traincost.estimate` of one run over ``params["sites"]`` sites and of the same
    run on one site, as their JSON dicts; raises ValueError on bad input.

    Parameters
    ----------
    params : dict
        ``accelerator``, ``model``, ``devices`` [-], ``global_batch`` [sequences],
        ``tokens`` [tokens], ``sites`` [-], ``site_link_gbps`` [Gb/s],
        ``site_link_latency_ms`` [ms], ``cross_site`` (None: searched), ``sync_every``
        [steps] and ``regions`` (one region id per site).

    Returns
    -------
    dict with ``split`` and ``one`` (``Estimate.to_dict()``).
    """
    common = dict(accelerator=params["accelerator"], devices=params["devices"],
                  model=params["model"], global_batch=params["global_batch"],
                  tokens=params["tokens"])
    regions = list(params["regions"])[:params["sites"]]
    split = estimate(**common, sites=params["sites"], site_link_gbps=params["site_link_gbps"],
                     site_link_latency_ms=params["site_link_latency_ms"],
                     cross_site=params["cross_site"], sync_every=params["sync_every"],
                     site_regions=",".join(regions)).to_dict()
    one = estimate(**common, region=regions[0]).to_dict()
    return {"split": split, "one": one}


def sites_summary_html(result: dict) -> str:
    """Headline numbers: throughput against one site, the crossing's share of a step."""
    split, one = result["split"], result["one"]
    p, step = split["parallel"], split["breakdown"]["step_time_s"]
    slower = split["step_time_s"] / one["step_time_s"] - 1
    where = {"dp": "data-parallel replicas", "pp": "pipeline stages", None: "nothing"}
    cells = [("Step time", f"{sig(split['step_time_s'])} s ({slower:+.1%} vs one site)"),
             ("Crossing the sites", f"{sig(step['cross_site_comm'])} s "
                                    f"({step['cross_site_comm'] / split['step_time_s']:.0%} "
                                    "of a step)"),
             ("What crosses", where[p["cross_site"]]),
             ("Training time", f"{sig(split['train_time_days'])} days"),
             ("Operational carbon", f"{sig(split['co2e_t'])} tCO2e")]
    layout = (f"tp {p['tp']} × pp {p['pp']} × dp {p['dp']}, ZeRO-{p['zero']}, "
              f"micro-batch {p['micro_batch']}")
    return (cards(cells) + f"<p style='font-size:90%;color:#333'>Layout: "
            f"{html.escape(layout)}; the one-site run chooses its own.</p>"
            + caveats_html(split))


def sites_table(result: dict) -> pd.DataFrame:
    """Each site's share of the run (``Estimate.to_dict()["sites"]``), with units."""
    rows = result["split"]["sites"]
    return pd.DataFrame({
        "site": [f"{i + 1}: {r['region']}" for i, r in enumerate(rows)],
        "devices": [r["devices"] for r in rows],
        "PUE [-]": [sig(r["pue"]) for r in rows],
        "grid [gCO2e/kWh]": [sig(r["grid_gco2e_per_kwh"]) for r in rows],
        "energy at the plug [MWh]": [sig(r["facility_energy_mwh"]) for r in rows],
        "operational [tCO2e]": [sig(r["co2e_t"]) for r in rows],
        "cost [USD]": [sig(r["cost_usd"]) if r["cost_usd"] is not None else "no price"
                       for r in rows],
    }).set_index("site")


def sites_explorer(model: str = "llama3.1-8b", accelerator: str = "h100-sxm5-80gb",
                   devices: int = 256, tokens: float | None = None, sites: int = 2,
                   site_link_gbps: float = 800.0, site_link_latency_ms: float = 5.0,
                   cross_site: str | None = None, sync_every: int = 1,
                   regions=("SWE", "POL", "FRA", "USA:virginia"),
                   global_batch: int = 1024) -> widgets.VBox:
    """One run over several sites: move the link, the placement and the regions.

    Parameters
    ----------
    model, accelerator : str
        Preset and accelerator ids.
    devices : int
        Devices, split evenly over the sites. [-]
    tokens : float, optional
        Training tokens; the preset's when None. [tokens]
    sites : int
        Sites, one of :data:`SITE_CHOICES`. [-]
    site_link_gbps : float
        Link between two sites, each direction. [Gb/s]
    site_link_latency_ms : float
        One-way latency between two sites. [ms]
    cross_site : str, optional
        ``dp`` or ``pp``; None lets the search choose. [-]
    sync_every : int
        Exchange every H steps (:data:`SYNC_CHOICES`). [steps]
    regions : sequence of str
        Grid region of each site, in order (at least the most sites offered). [-]
    global_batch : int
        Sequences per optimizer step. [sequences]

    Returns
    -------
    ipywidgets.VBox
        ``controls``, ``message``, ``summary`` (HTML), ``table`` (HTML, one row per site),
        ``chart`` (Image: a step's parts, one site against split), ``result``
        (:func:`sites_estimate`'s dict, None after an error), ``refresh()``.
    """
    check_choice("sites", sites, SITE_CHOICES)
    check_choice("sync_every", sync_every, SYNC_CHOICES)
    check_choice("cross_site", cross_site, [v for _, v in PLACEMENTS])
    if len(regions) < max(SITE_CHOICES):
        raise ValueError(f"regions: give {max(SITE_CHOICES)} region ids, one per site the "
                         f"widget can show (got {len(regions)})")
    choices = region_options(tuple(dict.fromkeys([*regions, *CURATED_REGIONS])))
    for r in regions:
        check_choice("region", r, [rid for _, rid in choices])
    controls = {
        "model": model_dropdown(model),
        "accelerator": accelerator_dropdown(accelerator),
        "devices": int_text(devices, "devices"),
        "tokens": tokens_text(model, tokens),
        "sites": widgets.ToggleButtons(options=SITE_CHOICES, value=sites,
                                       description="sites", style=STYLE),
        "link": widgets.FloatLogSlider(value=site_link_gbps, base=10, min=0, max=5, step=0.1,
                                       description="site link [Gb/s]", readout_format=",.3g",
                                       continuous_update=False, style=STYLE, layout=wide()),
        "latency": widgets.FloatSlider(value=site_link_latency_ms, min=0.0, max=100.0,
                                       step=0.5, description="latency [ms, one way]",
                                       continuous_update=False, style=STYLE, layout=wide()),
        "placement": widgets.ToggleButtons(options=PLACEMENTS, value=cross_site,
                                           description="what crosses", style=STYLE),
        "sync": widgets.ToggleButtons(options=[("every step", 1)] + [
            (f"every {h}", h) for h in SYNC_CHOICES[1:]], value=sync_every,
            description="exchange", style=STYLE),
        **{f"region{i}": widgets.Dropdown(options=choices, value=regions[i],
                                          description=f"site {i + 1} region", style=STYLE,
                                          layout=wide())
           for i in range(max(SITE_CHOICES))},
    }
    message, summary, table = widgets.HTML(), widgets.HTML(), widgets.HTML()
    chart = widgets.Image(format="png", layout=widgets.Layout(max_width="900px"))
    left = widgets.VBox([controls[k] for k in ("model", "accelerator", "devices", "tokens",
                                                "link", "latency")])
    right = widgets.VBox([controls[f"region{i}"] for i in range(max(SITE_CHOICES))])
    box = widgets.VBox([widgets.HBox([left, right]), controls["sites"], controls["placement"],
                        controls["sync"], message, summary, chart, table])
    box.controls, box.message, box.summary, box.table, box.chart, box.result = \
        controls, message, summary, table, chart, None

    def update():
        n = controls["sites"].value
        for i in range(max(SITE_CHOICES)):
            controls[f"region{i}"].layout.display = None if i < n else "none"
        # one site: nothing crosses, so what crosses and how often are not asked
        controls["placement"].disabled = controls["sync"].disabled = n == 1
        if n > 1 and controls["sync"].value > 1 and controls["placement"].value == "pp":
            raise ValueError(f"exchange every {controls['sync'].value} steps relaxes the "
                             "exchange of data-parallel replicas: choose data parallel or "
                             "auto for what crosses, or exchange every step")
        try:
            result = _estimate(n)
        except LayoutError as exc:
            raise ValueError(exc.in_words(WORDS)) from None
        box.result = result
        message.value = ""
        summary.value = sites_summary_html(result)
        table.value = sites_table(result).to_html(escape=True, border=0,
                                                  classes="traincost-table")
        chart.value = png(plotting.step_bars(
            {_LABEL_ONE: result["one"]["breakdown"]["step_time_s"],
             _LABEL_SPLIT: result["split"]["breakdown"]["step_time_s"]},
            title="One step, one site against split: the teal part is the link"))
        chart.layout.display = None

    def _estimate(n):
        return sites_estimate({
            "accelerator": controls["accelerator"].value, "model": controls["model"].value,
            "devices": controls["devices"].value, "global_batch": global_batch,
            "tokens": controls["tokens"].value * GIGA, "sites": n,
            "site_link_gbps": controls["link"].value,
            "site_link_latency_ms": controls["latency"].value,
            "cross_site": controls["placement"].value if n > 1 else None,
            "sync_every": controls["sync"].value if n > 1 else 1,
            "regions": [controls[f"region{i}"].value for i in range(n)]})

    on_error = clears(box, message, [summary, table], [chart])
    return Refresher(update, on_error).start(box, controls)
