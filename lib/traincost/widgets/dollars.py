"""Notebook 06: rent or own, and the cheapest accelerator and device count for a deadline.
"""

from __future__ import annotations

import html

import ipywidgets as widgets
import pandas as pd

from .. import catalog, explore, plotting
from ..units import GIGA, HOURS_PER_YEAR
from .kit import (STYLE, accelerator_dropdown, accelerator_select, cards, check_choice, int_text,
                  message_html, model_dropdown, parse_device_counts, parse_optional_number, png,
                  Refresher, region_dropdown, sig, tokens_text, wide)

#: accelerators the deadline widget starts with
DEADLINE_ACCELERATORS = ("a100-sxm4-80gb", "h100-sxm5-80gb", "h200-sxm-141gb", "b200",
                         "tpu-v5p")

DEADLINE_DEVICE_COUNTS = (64, 128, 256, 512, 1024)

#: candidate tables a deadline widget keeps, by their inputs (model, tokens, region,
#: accelerators, device counts): moving the deadline, or going back to a model compared
#: moments ago, re-picks from them instead of searching every candidate again (issue 26). [-]
DEADLINE_KEPT = 8


def rent_own_html(table: pd.DataFrame) -> str:
    """Headline numbers of :func:`traincost.explore.rent_vs_own`'s table."""
    rent, own = table.loc["rent"], table.loc["own"]

    def usd(v):
        return f"${sig(v)}" if pd.notna(v) else "no price"

    u = table.attrs.get("break_even_utilisation", float("nan"))
    cells = [("Rent", usd(rent["cost_usd"])), ("Own", usd(own["cost_usd"])),
             ("Own is cheaper if the devices are busy more than",
              f"{sig(100 * u)} % of their life" if pd.notna(u) and 0 < u else "n/a"),
             ("Break-even rental price",
              f"${sig(table.attrs['break_even_price_usd_per_h'])}/device-h"
              if pd.notna(table.attrs.get("break_even_price_usd_per_h")) else "n/a")]
    notes = [n for n in table["note"] if n]
    return cards(cells) + (
        f"<p style='font-size:90%;color:#333'>{sig(rent['device_hours'])} device-hours, "
        f"{sig(rent['train_time_days'])} days, {sig(own['facility_energy_mwh'])} MWh at the "
        "plug. Owning charges the run its share of the purchase price of the chips and of "
        "the servers and network around them (spread over "
        f"{sig(table.attrs['lifetime_h'] / HOURS_PER_YEAR)} years of round-the-clock use) "
        "plus its electricity.</p>") + (message_html("\n".join(notes)) if notes else "")


def rent_or_own(accelerator: str = "a100-sxm4-40gb", model: str = "llama2-7b",
                devices: int = 256, tokens: float | None = None, region: str = "world",
                price_per_hour: float | None = None, capex_usd: float | None = None,
                electricity_usd_per_kwh: float | None = None,
                global_batch: int = 1024) -> widgets.VBox:
    """Rent by the device-hour or buy the devices: cost parts and price sensitivity.

    Parameters
    ----------
    accelerator, model : str
        Accelerator and preset ids.
    devices : int
        Devices. [-]
    tokens : float, optional
        Training tokens; the preset's when None. [tokens]
    region : str
        Grid region id (sets the PUE, hence the electricity). [-]
    price_per_hour : float, optional
        Rental price instead of the catalog's. [USD/h]
    capex_usd : float, optional
        Purchase price per device instead of the catalog's. [USD]
    electricity_usd_per_kwh : float, optional
        Electricity price instead of the default assumption. [USD/kWh]
    global_batch : int
        Sequences per optimizer step. [sequences]

    Returns
    -------
    ipywidgets.VBox
        ``controls``, ``message``, ``summary`` (HTML), ``chart`` (Image: cost parts),
        ``sensitivity`` (Image), ``result`` (:func:`traincost.explore.rent_vs_own`'s
        table), ``refresh()``.
    """
    controls = {
        "accelerator": accelerator_dropdown(accelerator),
        "model": model_dropdown(model),
        "devices": int_text(devices, "devices"),
        "tokens": tokens_text(model, tokens),
        "region": region_dropdown(region),
        "price": widgets.Text(value="" if price_per_hour is None else str(price_per_hour),
                              placeholder="blank = catalog", description="rent [USD/device-h]",
                              continuous_update=False, style=STYLE, layout=wide()),
        "capex": widgets.Text(value="" if capex_usd is None else str(capex_usd),
                              placeholder="blank = catalog", description="purchase [USD/device]",
                              continuous_update=False, style=STYLE, layout=wide()),
        "electricity": widgets.Text(
            value="" if electricity_usd_per_kwh is None else str(electricity_usd_per_kwh),
            placeholder="blank = 0.08 (US industrial)", description="electricity [USD/kWh]",
            continuous_update=False, style=STYLE, layout=wide()),
    }
    message, summary = widgets.HTML(), widgets.HTML()
    chart = widgets.Image(format="png", layout=widgets.Layout(max_width="800px"))
    sensitivity = widgets.Image(format="png", layout=widgets.Layout(max_width="800px"))
    left = widgets.VBox([controls[k] for k in ("accelerator", "model", "devices", "tokens")])
    right = widgets.VBox([controls[k] for k in ("region", "price", "capex", "electricity")])
    box = widgets.VBox([widgets.HBox([left, right]), message, summary, chart, sensitivity])
    box.controls, box.message, box.summary, box.chart, box.sensitivity, box.result = \
        controls, message, summary, chart, sensitivity, None

    def update():
        p = {"accelerator": controls["accelerator"].value, "model": controls["model"].value,
             "devices": controls["devices"].value, "global_batch": global_batch,
             "tokens": controls["tokens"].value * GIGA, "region": controls["region"].value,
             "price_per_hour": parse_optional_number(controls["price"].value, "price-per-hour",
                                                     "USD per device-hour"),
             "capex_usd": parse_optional_number(controls["capex"].value, "capex",
                                                "USD per device"),
             "electricity_usd_per_kwh": parse_optional_number(
                 controls["electricity"].value, "electricity", "USD per kWh")}
        table = explore.rent_vs_own(p)
        box.result = table
        message.value = ""
        summary.value = rent_own_html(table)
        rows = {"rent": {"rent": table.loc["rent", "rent_usd"]},
                "own": {"depreciation": table.loc["own", "depreciation_usd"],
                        "electricity": table.loc["own", "electricity_usd"]}}
        rows = {k: {part: (0.0 if pd.isna(v) else v) for part, v in r.items()}
                for k, r in rows.items()}
        chart.value = png(plotting.stacked_bars(
            rows, ("rent", "depreciation", "electricity"),
            colours={"rent": plotting.OKABE_ITO[0], "depreciation": plotting.OKABE_ITO[1],
                     "electricity": plotting.OKABE_ITO[2]},
            part_labels={"rent": "rent (device-hours × price)",
                         "depreciation": "devices, servers and building, run's share",
                         "electricity": "electricity at the plug"},
            xlabel="Cost of the run [USD]", unit="USD",
            title="Rent or own: owning wins only if the devices stay busy"))
        sens = explore.price_sensitivity(p)
        sensitivity.value = png(plotting.sensitivity_lines(sens.dropna(axis=1, how="all")))

    def on_error(text):
        box.result = None
        message.value = message_html(text)
        summary.value = ""
        chart.value = b""
        sensitivity.value = b""

    refresh = Refresher(update, on_error)
    return refresh.start(box, controls)


def winner_html(table: pd.DataFrame, winner, deadline_days: float) -> str:
    """The cheapest candidate meeting the deadline, in a sentence (or why there is none)."""
    if winner is None:
        return message_html(
            f"No candidate finishes within {sig(deadline_days)} days: allow more devices, "
            "a faster accelerator or a later deadline.")
    w = table.loc[winner]
    cells = [("Cheapest within the deadline", f"{w['accelerator']} × {int(w['devices'])}"),
             ("Cost", f"${sig(w['cost_usd'])}"), ("Time", f"{sig(w['train_time_days'])} days"),
             ("Layout", f"tp {w['tp']} × pp {w['pp']} × dp {w['dp']}")]
    n_ok = int((table["status"] == "meets deadline").sum())
    risk = ""
    late = w.get("train_time_days_p90")
    if late is not None and pd.notna(late) and late > deadline_days:
        risk = (f" Its 80% range of time reaches {sig(late)} days: at the model's measured "
                "error and the input ranges, it may miss the deadline (more than one run in "
                "ten would).")
    return cards(cells) + (f"<p style='font-size:90%;color:#333'>{n_ok} of {len(table)} "
                            f"candidates finish within {sig(deadline_days)} days.{risk}</p>")


def candidates_html(table: pd.DataFrame, limit: int = 10) -> str:
    """The candidates meeting the deadline, cheapest first, then the others' status."""
    ok = table[table["status"] == "meets deadline"].sort_values(["cost_usd", "train_time_days"])
    out = pd.DataFrame(index=ok.index[:limit])
    out.index.name = "candidate"
    out["time [days]"] = [sig(v) for v in ok["train_time_days"][:limit]]
    out["cost [USD]"] = ["$" + sig(v) for v in ok["cost_usd"][:limit]]
    out["CO2e [t]"] = [sig(v) for v in ok["co2e_t"][:limit]]
    counts = table["status"].value_counts()
    others = ", ".join(f"{n} {s}" for s, n in counts.items() if s != "meets deadline")
    return (out.to_html(escape=True, border=0, classes="traincost-table") +
            (f"<p style='font-size:85%;color:#555'>Left out: {html.escape(others)}.</p>"
             if others else ""))


def cheapest_for_deadline(model: str = "llama2-7b", accelerators=DEADLINE_ACCELERATORS,
                          device_counts=DEADLINE_DEVICE_COUNTS, deadline_days: float = 14.0,
                          tokens: float | None = None, region: str = "world",
                          global_batch: int = 1024) -> widgets.VBox:
    """The cheapest (accelerator, device count) that finishes training by a deadline.

    Parameters
    ----------
    model : str
        Preset id.
    accelerators : sequence of str
        Accelerator ids selected at start.
    device_counts : sequence of int
        Device counts tried for each accelerator. [-]
    deadline_days : float
        Latest acceptable training time. [days]
    tokens : float, optional
        Training tokens; the preset's when None. [tokens]
    region : str
        Grid region id. [-]
    global_batch : int
        Sequences per optimizer step. [sequences]

    Returns
    -------
    ipywidgets.VBox
        ``controls``, ``message``, ``summary`` (HTML: the winner), ``chart`` (Image: cost
        against time), ``table`` (HTML), ``result`` (the candidates with ``status``),
        ``winner`` (index label or None), ``refresh()``. Moving the deadline only re-picks;
        other controls recompute the candidates, unless the widget computed them for the same
        inputs among its last :data:`DEADLINE_KEPT`.
    """
    acc_ids = list(catalog.accelerators().index)
    for acc in accelerators:
        check_choice("accelerator", acc, acc_ids)
    controls = {
        "model": model_dropdown(model),
        "tokens": tokens_text(model, tokens),
        "region": region_dropdown(region),
        "devices": widgets.Text(value=", ".join(str(n) for n in device_counts),
                                description="device counts", continuous_update=False,
                                style=STYLE, layout=wide()),
        "deadline": widgets.FloatSlider(value=deadline_days, min=1.0, max=90.0, step=0.5,
                                        description="deadline [days]", continuous_update=False,
                                        style=STYLE, layout=wide()),
        "accelerators": accelerator_select(acc_ids, accelerators),
    }
    message, summary, table = widgets.HTML(), widgets.HTML(), widgets.HTML()
    chart = widgets.Image(format="png", layout=widgets.Layout(max_width="850px"))
    left = widgets.VBox([controls[k] for k in ("model", "tokens", "region", "devices",
                                                "deadline")])
    box = widgets.VBox([widgets.HBox([left, controls["accelerators"]]), message, summary,
                        chart, table])
    box.controls, box.message, box.summary, box.chart, box.table = \
        controls, message, summary, chart, table
    box.result, box.winner = None, None
    kept = {}          # (inputs) -> candidates, least recently used first

    def candidates(p: dict, accs: tuple, counts: tuple) -> pd.DataFrame:
        """:func:`traincost.explore.deadline_candidates`, kept by every input it reads."""
        key = (tuple(sorted(p.items())), accs, counts)
        if key in kept:
            kept[key] = kept.pop(key)                     # now the most recently used
        else:
            found = explore.deadline_candidates(p, accs, counts)     # may raise: not kept
            if len(kept) >= DEADLINE_KEPT:
                kept.pop(next(iter(kept)))                    # the least recently used
            kept[key] = found
        return kept[key]

    def update():
        p = {"model": controls["model"].value, "global_batch": global_batch,
             "tokens": controls["tokens"].value * GIGA, "region": controls["region"].value}
        counts = parse_device_counts(controls["devices"].value)
        deadline = controls["deadline"].value
        df, winner = explore.pick_cheapest(
            candidates(p, tuple(controls["accelerators"].value), counts), deadline)
        box.result, box.winner = df, winner
        unpriced = sorted({a for a, s in zip(df["accelerator"], df["status"]) if s == "no price"})
        message.value = message_html(
            f"no catalog price (left out): {', '.join(unpriced)}") if unpriced else ""
        summary.value = winner_html(df, winner, deadline)
        table.value = candidates_html(df)          # the texts first, then the chart
        chart.value = png(plotting.cost_vs_time(df, deadline, winner=winner))
        chart.layout.display = None

    def on_error(text):
        box.result, box.winner = None, None
        message.value = message_html(text)
        summary.value = table.value = ""
        chart.value = b""
        chart.layout.display = "none"

    refresh = Refresher(update, on_error)
    return refresh.start(box, controls)
