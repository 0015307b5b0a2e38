"""Notebook 01: one training run compared across accelerators (table and bar charts).

:func:`compared` calls :func:`traincost.compare` for the widget's parameters and raises
when nothing can run (:func:`compare_table` returns that message instead);
:func:`compare_accelerators` builds the widget on it.
"""

from __future__ import annotations

import ipywidgets as widgets
import pandas as pd

from .. import catalog, explore, plotting
from ..estimate import compare
from ..units import GIGA
from .kit import (STYLE, accelerator_select, check_choice, clears, message_html, model_dropdown,
                  parse_price, Refresher, region_dropdown, sig, tokens_text, wide)

#: accelerators the comparison widget starts with: three GPU generations and a TPU
DEFAULT_ACCELERATORS = ("a100-sxm4-80gb", "h100-sxm5-80gb", "b200", "tpu-v5p")


def compared(params: dict) -> pd.DataFrame:
    """:func:`traincost.compare` for the widget's parameters; raises when nothing can run.

    Parameters
    ----------
    params : dict
        ``model``, ``accelerators`` (sequence of ids), ``devices`` [-], ``tokens``
        [tokens] (None: the preset's), ``global_batch`` [sequences], ``region``,
        ``pue`` [-] (None: operator default), ``price_per_hour`` [USD/h] (None: catalog).

    Returns
    -------
    pandas.DataFrame
        The comparison table (one row per accelerator; rows that cannot run carry
        their reason in ``note``), with the 80% bands of ``compare(uncertainty=True)``
        that the chart draws as whiskers.

    Raises
    ------
    ValueError
        One line: no accelerator selected, an input the library rejects, or the reason
        (once, or per accelerator) when no accelerator can run.
    """
    accelerators = list(params.get("accelerators") or ())
    if not accelerators:
        raise ValueError("accelerators: select at least one accelerator")
    df = compare(accelerators, params["devices"], model=params["model"],
                 global_batch=params["global_batch"], tokens=params.get("tokens"),
                 region=params.get("region"), pue=params.get("pue"),
                 price_per_hour=params.get("price_per_hour"), uncertainty=True)
    failed = df["fits_in_memory"].isna()
    if failed.all():
        notes = list(dict.fromkeys(df["note"]))
        raise ValueError(explore.plain_reason(notes[0]) if len(notes) == 1 else "; ".join(
            f"{acc}: {explore.plain_reason(note)}" for acc, note in df["note"].items()))
    return df


def compare_table(params: dict) -> pd.DataFrame | str:
    """:func:`compared`, or its error message as a string (for a caller that shows it).

    Parameters
    ----------
    params : dict
        As for :func:`compared`.

    Returns
    -------
    pandas.DataFrame or str
        The comparison table, or a one-line message when nothing can be computed.
    """
    try:
        return compared(params)
    except ValueError as exc:
        return str(exc)


def problems(df: pd.DataFrame) -> str:
    """One line per accelerator that cannot run or does not fit (empty when none)."""
    lines = []
    for acc, row in df.iterrows():
        if pd.isna(row["fits_in_memory"]):
            lines.append(f"{acc}: cannot run: {explore.plain_reason(row['note'])}")
        elif not bool(row["fits_in_memory"]):
            lines.append(f"{acc}: does not fit in memory at {row['devices']} devices "
                         "(try more devices)")
    return "\n".join(lines)


def format_compare_table(df: pd.DataFrame) -> pd.DataFrame:
    """The comparison table as rounded strings with units in the headers (for display)."""
    out = pd.DataFrame(index=df.index)
    out.index.name = "accelerator"

    def layout(row):
        if pd.isna(row["tp"]):
            return "-"
        return f"{row['tp']}×{row['pp']}×{row['dp']}"

    out["layout tp×pp×dp"] = [layout(r) for _, r in df.iterrows()]
    out["MFU [%]"] = [sig(m * 100) for m in df["mfu"]]
    out["time [days]"] = [sig(v) for v in df["train_time_days"]]
    out["device-hours [h]"] = [sig(v) for v in df["device_hours"]]
    out["energy [MWh]"] = [sig(v) for v in df["facility_energy_mwh"]]
    out["CO2e [t]"] = [sig(v) for v in df["co2e_t"]]
    out["cost [USD]"] = [("$" + sig(v)) if pd.notna(v) else "no price" for v in df["cost_usd"]]
    out["note"] = [explore.plain_reason(n) if isinstance(n, str) and n else ""
                   for n in df["note"]]
    return out


def table_html(df: pd.DataFrame) -> str:
    """HTML of :func:`format_compare_table` (values escaped)."""
    return format_compare_table(df).to_html(escape=True, border=0, classes="traincost-table")


def compare_accelerators(model: str = "llama2-7b", accelerators=DEFAULT_ACCELERATORS,
                         devices: int = 256, tokens: float | None = None,
                         region: str = "world", pue: float | None = None,
                         price_per_hour: float | None = None,
                         global_batch: int = 1024) -> widgets.VBox:
    """A widget comparing one training run across accelerators: table and bar charts.

    Parameters
    ----------
    model : str
        Model preset id (``traincost.catalog.models()``).
    accelerators : sequence of str
        Accelerator ids selected at start.
    devices : int
        Devices per accelerator type. [-]
    tokens : float, optional
        Training tokens; the preset's reported figure when None. [tokens]
    region : str
        Grid region id. [-]
    pue : float, optional
        Power usage effectiveness; the operator default when None. [-]
    price_per_hour : float, optional
        One price for every accelerator instead of the catalog's. [USD/h]
    global_batch : int
        Sequences per optimizer step. [sequences]

    Returns
    -------
    ipywidgets.VBox
        With attributes ``controls`` (dict of the input widgets), ``result`` (the latest
        :func:`traincost.compare` DataFrame, or None after an error), ``message``
        (HTML: problems, empty when none), ``table`` (HTML) and ``chart`` (Image, PNG),
        and ``refresh()`` to recompute.

    Notes
    -----
    Choosing another model preset resets the tokens box to that preset's reported
    training tokens. Controls recompute on change (no button); text boxes on Enter.
    """
    acc_ids = list(catalog.accelerators().index)
    for acc in accelerators:
        check_choice("accelerator", acc, acc_ids)
    controls = _compare_controls(model, acc_ids, accelerators, devices, tokens, region, pue,
                                 price_per_hour, global_batch)
    message = widgets.HTML()
    table = widgets.HTML()
    chart = widgets.Image(format="png", layout=widgets.Layout(max_width="1100px"))
    help_text = widgets.HTML(
        "<span style='font-size:85%;color:#555'>Ctrl/Cmd-click to select several. "
        "Devices: powers of two divide the batch most easily.</span>")
    left = widgets.VBox([controls[k] for k in ("model", "tokens", "global_batch", "devices",
                                                "region", "pue_auto", "pue", "price")])
    right = widgets.VBox([controls["accelerators"], help_text])
    box = widgets.VBox([widgets.HBox([left, right]), message, table, chart])
    box.controls, box.message, box.table, box.chart, box.result = \
        controls, message, table, chart, None

    def update() -> None:
        p = _compare_params(controls)
        controls["pue"].disabled = p["pue"] is None
        if p["pue"] is None:   # show the default that is used
            controls["pue"].value = catalog.site(p["region"]).pue
        result = compared(p)
        box.result = result
        message.value = message_html(problems(result))
        table.value = table_html(result)
        name = catalog.models().loc[p["model"], "name"]
        fig = plotting.compare_bars(
            result, title=f"{name}, {sig(p['tokens'] / GIGA)} B tokens, "
                          f"{p['devices']} devices each: shorter bars are better")
        chart.value = plotting.figure_png(fig)
        chart.layout.display = None

    # a new preset brings its own training-token count and recomputes once
    return Refresher(update, clears(box, message, [table], [chart])).start(box, controls)


def _compare_controls(model, acc_ids, accelerators, devices, tokens, region, pue,
                      price_per_hour, global_batch) -> dict:
    """The input widgets of :func:`compare_accelerators`, by name."""
    return {
        "model": model_dropdown(model),
        "tokens": tokens_text(model, tokens),
        "global_batch": widgets.IntText(value=global_batch, description="global batch [seq]",
                                        style=STYLE, layout=wide()),
        "devices": widgets.IntText(value=devices, description="devices (each type)",
                                   style=STYLE, layout=wide()),
        "region": region_dropdown(region),
        "pue_auto": widgets.Checkbox(value=pue is None, description="PUE: operator default",
                                     style=STYLE, indent=False),
        "pue": widgets.FloatSlider(value=1.1 if pue is None else pue, min=1.0, max=2.0,
                                   step=0.01, description="PUE [-]", disabled=pue is None,
                                   continuous_update=False, style=STYLE, layout=wide()),
        "price": widgets.Text(value="" if price_per_hour is None else str(price_per_hour),
                              placeholder="blank = catalog price",
                              description="price [USD/device-h]", continuous_update=False,
                              style=STYLE, layout=wide()),
        "accelerators": accelerator_select(acc_ids, accelerators),
    }


def _compare_params(controls: dict) -> dict:
    """:func:`compared`'s parameters from the controls (tokens [tokens], PUE None: auto)."""
    auto = controls["pue_auto"].value
    return {"model": controls["model"].value,
            "accelerators": tuple(controls["accelerators"].value),
            "devices": controls["devices"].value,
            "tokens": controls["tokens"].value * GIGA,
            "global_batch": controls["global_batch"].value,
            "region": controls["region"].value,
            "pue": None if auto else controls["pue"].value,
            "price_per_hour": parse_price(controls["price"].value)}
