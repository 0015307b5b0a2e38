"""Notebook 00: "what does my run cost?" on one screen, a few headline numbers.
"""

from __future__ import annotations

import html

import ipywidgets as widgets

from .. import catalog
from ..estimate import estimate
from ..units import GIGA
from .kit import (STYLE, caveats_html, check_choice, clears, model_dropdown,
                  parse_optional_number, Refresher, region_dropdown, sig, tokens_text, wide)


def run_cost_estimate(params: dict) -> dict:
    """:func:`traincost.estimate` for one accelerator, as its JSON dict; raises on bad input.

    Parameters
    ----------
    params : dict
        ``accelerator``, ``model``, ``devices`` [-], ``tokens`` [tokens] (None: the
        preset's), ``global_batch`` [sequences], ``region``, optional ``power_cap`` [W]
        (None: the device's rated maximum).
    """
    return estimate(accelerator=params["accelerator"], devices=params["devices"],
                    model=params["model"], global_batch=params["global_batch"],
                    tokens=params.get("tokens"), region=params.get("region"),
                    power_cap=params.get("power_cap")).to_dict()


def run_cost_summary(params: dict) -> dict | str:
    """:func:`run_cost_estimate`, or its one-line error message as a string."""
    try:
        return run_cost_estimate(params)
    except ValueError as exc:
        return str(exc)


def run_cost_html(result: dict) -> str:
    """Headline numbers of one estimate (``Estimate.to_dict()``) as an HTML snippet."""
    p = result["parallel"]
    cost = result["cost_usd"]
    cost_text = f"${sig(cost)}" if cost is not None else "no catalog price"
    cells = [
        ("Training time", f"{sig(result['train_time_days'])} days"),
        ("Energy at the plug", f"{sig(result['facility_energy_mwh'])} MWh"),
        ("Operational carbon", f"{sig(result['co2e_t'])} tCO2e"),
        ("Cost (rental)", cost_text),
        ("MFU", f"{sig(result['mfu'] * 100)} %"),
    ]
    boxes = "".join(
        f"<div style='padding:6px 14px;border-left:3px solid #0072B2;margin-right:8px'>"
        f"<div style='font-size:85%;color:#555'>{html.escape(k)}</div>"
        f"<div style='font-size:140%;font-weight:bold'>{html.escape(v)}</div></div>"
        for k, v in cells)
    layout = (f"tp {p['tp']} × pp {p['pp']} × dp {p['dp']}, micro-batch {p['micro_batch']}, "
              f"ZeRO-{p['zero']}, {p['recompute']} recompute")
    cap = (f", capped at {sig(result['power_cap_w'])} W each" if result.get("power_cap_w")
           else "")
    detail = (f"{html.escape(result['workload'])} on {result['devices']} × "
              f"{html.escape(result['accelerator'])}{cap}, {sig(result['tokens'] / GIGA)} B "
              "tokens; "
              f"chosen layout: {html.escape(layout)}; "
              f"{sig(result['device_hours'])} device-hours; PUE {sig(result['pue'])}, grid "
              f"{sig(result['grid_gco2e_per_kwh'])} gCO2e/kWh ({html.escape(result['region'])}).")
    warn = "" if result["fits_in_memory"] else (
        "<p style='color:#D55E00'><b>Does not fit in memory</b> "
        f"({sig(result['memory_gib_per_device'])} GiB needed per device of "
        f"{sig(result['hbm_gib_per_device'])} GiB): try more devices.</p>")
    return (f"<div style='display:flex;flex-wrap:wrap'>{boxes}</div>"
            f"<p style='font-size:90%;color:#333'>{detail}</p>{warn}"
            + caveats_html(result))


def run_cost(accelerator: str = "h100-sxm5-80gb", model: str = "llama2-7b",
             devices: int = 256, tokens: float | None = None, region: str = "world",
             global_batch: int = 1024, power_cap: float | None = None) -> widgets.VBox:
    """A one-screen "what does my run cost?" widget: a few headline numbers.

    Parameters
    ----------
    accelerator : str
        Accelerator id.
    model : str
        Model preset id.
    devices : int
        Number of devices. [-]
    tokens : float, optional
        Training tokens; the preset's reported figure when None. [tokens]
    region : str
        Grid region id. [-]
    global_batch : int
        Sequences per optimizer step. [sequences]
    power_cap : float, optional
        Power limit on every device; blank (None) for its rated maximum. [W]

    Returns
    -------
    ipywidgets.VBox
        With attributes ``controls``, ``result`` (``Estimate.to_dict()`` or None after an
        error), ``message`` (HTML, empty when fine), ``summary`` (HTML) and ``refresh()``.
    """
    accs = catalog.accelerators()
    check_choice("accelerator", accelerator, list(accs.index))
    controls = {
        "accelerator": widgets.Dropdown(options=[(f"{row['name']} ({aid})", aid)
                                                 for aid, row in accs.iterrows()],
                                        value=accelerator, description="accelerator",
                                        style=STYLE, layout=wide()),
        "model": model_dropdown(model),
        "devices": widgets.IntText(value=devices, description="devices", style=STYLE,
                                   layout=wide()),
        "tokens": tokens_text(model, tokens),
        "region": region_dropdown(region),
        "power_cap": widgets.Text(value="" if power_cap is None else f"{power_cap:g}",
                                  placeholder="blank = rated maximum (TDP)",
                                  description="power cap [W]", continuous_update=False,
                                  style=STYLE, layout=wide()),
    }
    message = widgets.HTML()
    summary = widgets.HTML()
    box = widgets.VBox([widgets.HBox([widgets.VBox([controls["accelerator"], controls["model"],
                                                    controls["devices"]]),
                                      widgets.VBox([controls["tokens"], controls["region"],
                                                    controls["power_cap"]])]),
                        message, summary])
    box.controls, box.message, box.summary, box.result = controls, message, summary, None

    def update() -> None:
        cap = parse_optional_number(controls["power_cap"].value, "power-cap", "W per device")
        result = run_cost_estimate({
            "accelerator": controls["accelerator"].value,
            "model": controls["model"].value, "devices": controls["devices"].value,
            "tokens": controls["tokens"].value * GIGA,
            "global_batch": global_batch, "region": controls["region"].value,
            "power_cap": cap})
        box.result = result
        message.value = ""
        summary.value = run_cost_html(result)

    # a new preset brings its own training-token count and recomputes once
    return Refresher(update, clears(box, message, [summary])).start(box, controls)
