"""Interactive widgets for the notebooks (the only module that imports ipywidgets).

Builders *return* a widget (they never display it), so a notebook cell ends with the
call and tests can drive the controls kernel-side, without a browser:

>>> from traincost import widgets
>>> box = widgets.compare_accelerators(accelerators=("a100-sxm4-80gb", "h100-sxm5-80gb"))
>>> sorted(box.result.index)
['a100-sxm4-80gb', 'h100-sxm5-80gb']
>>> box.controls["devices"].value = 512     # recomputes at once (observe, no button)
>>> box.message.value
''

The arithmetic is in small pure functions (:func:`compare_table`,
:func:`run_cost_summary`, :func:`format_compare_table`), which only call the public
:func:`traincost.compare` / :func:`traincost.estimate`; the callbacks read the controls,
call them and write the result into HTML and Image widgets. Bad input never raises out
of a callback: its one-line ``ValueError`` message is shown in ``box.message``.
"""

from __future__ import annotations

import html
import math

import ipywidgets as widgets
import pandas as pd

from . import catalog, plotting
from .estimate import compare, estimate
from .units import GIGA

#: accelerators the comparison widget starts with: three GPU generations and a TPU
DEFAULT_ACCELERATORS = ("a100-sxm4-80gb", "h100-sxm5-80gb", "b200", "tpu-v5p")

#: a short, curated list of grid regions for the dropdowns (world first), spanning
#: low-carbon (hydro/nuclear) to coal-heavy grids and a few cloud regions
CURATED_REGIONS = ("world", "SWE", "FRA", "BRA", "GBR", "DEU", "USA", "USA:california",
                   "USA:virginia", "POL", "CHN", "IND", "JPN", "gcp:europe-west1",
                   "gcp:us-central1", "aws:us-east-1")

_STYLE = {"description_width": "170px"}
_WIDE = widgets.Layout(width="420px")


# --------------------------------------------------------------------------------------
# pure helpers (no widgets): tested directly
# --------------------------------------------------------------------------------------
def sig(value, digits: int = 3) -> str:
    """``value`` rounded to ``digits`` significant figures, with thousands separators.

    >>> sig(704284.08), sig(33.4109), sig(0.44417)
    ('704,000', '33.4', '0.444')
    """
    try:
        x = float(value)
    except (TypeError, ValueError):
        return "n/a"
    if not math.isfinite(x):
        return "n/a"
    rounded = float(f"{x:.{digits}g}")
    if abs(rounded) >= 10 ** (digits - 1):
        return f"{rounded:,.0f}"
    return f"{rounded:.{digits}g}"


def region_options(region_ids=CURATED_REGIONS) -> list[tuple[str, str]]:
    """(label, id) pairs for a region dropdown; ids the catalog lacks are left out.

    The label shows the grid intensity, the number that matters here. [gCO2e/kWh]
    """
    table = catalog.regions()
    options = []
    for rid in region_ids:
        if rid not in table.index:
            continue
        row = table.loc[rid]
        name = str(row["name"])
        label = rid if ("nan" in name or name == rid) else f"{rid}: {name}"
        options.append((f"{label} ({row['grid_gco2e_per_kwh']:.0f} gCO2e/kWh)", rid))
    return options


def preset_tokens(model: str) -> float:
    """Training tokens of a model preset (reported figure, else library default). [tokens]"""
    return float(catalog.model(model).tokens)


def parse_price(text) -> float | None:
    """A price override typed as text: blank means "use the catalog price". [USD/h]

    Raises
    ------
    ValueError
        ``price-per-hour: ...`` when the text is not a number.
    """
    if text is None:
        return None
    if isinstance(text, (int, float)):
        return float(text)
    text = str(text).strip().lstrip("$")
    if not text:
        return None
    try:
        return float(text)
    except ValueError:
        raise ValueError(f"price-per-hour: {text!r} is not a number (USD per device-hour; "
                         "leave blank for the catalog price)") from None


def compare_table(params: dict) -> pd.DataFrame | str:
    """:func:`traincost.compare` for the widget's parameters, or the error message.

    Parameters
    ----------
    params : dict
        ``model``, ``accelerators`` (sequence of ids), ``devices`` [-], ``tokens``
        [tokens] (None: the preset's), ``global_batch`` [sequences], ``region``,
        ``pue`` [-] (None: operator default), ``price_per_hour`` [USD/h] (None: catalog).

    Returns
    -------
    pandas.DataFrame or str
        The comparison table (one row per accelerator; rows that cannot run carry
        their reason in ``note``), or a one-line message when nothing can be computed.
    """
    accelerators = list(params.get("accelerators") or ())
    if not accelerators:
        return "accelerators: select at least one accelerator"
    try:
        df = compare(accelerators, params["devices"], model=params["model"],
                     global_batch=params["global_batch"], tokens=params.get("tokens"),
                     region=params.get("region"), pue=params.get("pue"),
                     price_per_hour=params.get("price_per_hour"))
    except ValueError as exc:
        return str(exc)
    failed = df["fits_in_memory"].isna()
    if failed.all():
        notes = list(dict.fromkeys(df["note"]))
        return notes[0] if len(notes) == 1 else "; ".join(
            f"{acc}: {note}" for acc, note in df["note"].items())
    return df


def problems(df: pd.DataFrame) -> str:
    """One line per accelerator that cannot run or does not fit (empty when none)."""
    lines = []
    for acc, row in df.iterrows():
        if pd.isna(row["fits_in_memory"]):
            lines.append(f"{acc}: cannot run: {row['note']}")
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
    out["note"] = df["note"].fillna("")
    return out


def table_html(df: pd.DataFrame) -> str:
    """HTML of :func:`format_compare_table` (values escaped)."""
    return format_compare_table(df).to_html(escape=True, border=0, classes="traincost-table")


def run_cost_summary(params: dict) -> dict | str:
    """:func:`traincost.estimate` for one accelerator, as its JSON dict, or the error message.

    Parameters
    ----------
    params : dict
        ``accelerator``, ``model``, ``devices`` [-], ``tokens`` [tokens] (None: the
        preset's), ``global_batch`` [sequences], ``region``.
    """
    try:
        return estimate(accelerator=params["accelerator"], devices=params["devices"],
                        model=params["model"], global_batch=params["global_batch"],
                        tokens=params.get("tokens"), region=params.get("region")).to_dict()
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
    detail = (f"{html.escape(result['workload'])} on {result['devices']} × "
              f"{html.escape(result['accelerator'])}, {sig(result['tokens'] / GIGA)} B tokens; "
              f"chosen layout: {html.escape(layout)}; "
              f"{sig(result['device_hours'])} device-hours; PUE {sig(result['pue'])}, grid "
              f"{sig(result['grid_gco2e_per_kwh'])} gCO2e/kWh ({html.escape(result['region'])}).")
    warn = "" if result["fits_in_memory"] else (
        "<p style='color:#D55E00'><b>Does not fit in memory</b> "
        f"({sig(result['memory_gib_per_device'])} GiB needed per device of "
        f"{sig(result['hbm_gib_per_device'])} GiB): try more devices.</p>")
    return (f"<div style='display:flex;flex-wrap:wrap'>{boxes}</div>"
            f"<p style='font-size:90%;color:#333'>{detail}</p>{warn}")


def _message_html(text: str) -> str:
    if not text:
        return ""
    lines = "<br>".join(html.escape(line) for line in text.splitlines())
    return f"<div style='color:#D55E00'><b>⚠</b> {lines}</div>"


# --------------------------------------------------------------------------------------
# widget builders
# --------------------------------------------------------------------------------------
def _check_choice(kind: str, value, allowed) -> None:
    if value not in allowed:
        raise ValueError(f"{kind}: unknown {value!r}; allowed: {', '.join(map(str, allowed))}")


def _model_dropdown(model: str) -> widgets.Dropdown:
    models = catalog.models()
    _check_choice("model", model, list(models.index))
    return widgets.Dropdown(options=[(f"{row['name']} ({mid})", mid)
                                     for mid, row in models.iterrows()],
                            value=model, description="model preset", style=_STYLE, layout=_WIDE)


def _region_dropdown(region: str) -> widgets.Dropdown:
    options = region_options()
    ids = [rid for _, rid in options]
    if region not in ids:                      # a region outside the short list: add it
        options = region_options((region,)) + options
        _check_choice("region", region, [rid for _, rid in options])
    return widgets.Dropdown(options=options, value=region, description="grid region",
                            style=_STYLE, layout=_WIDE)


def _tokens_text(model: str, tokens) -> widgets.FloatText:
    value = preset_tokens(model) if tokens is None else float(tokens)
    return widgets.FloatText(value=value / GIGA, description="tokens [billions]",
                             style=_STYLE, layout=_WIDE)


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
        _check_choice("accelerator", acc, acc_ids)
    controls = {
        "model": _model_dropdown(model),
        "tokens": _tokens_text(model, tokens),
        "global_batch": widgets.IntText(value=global_batch, description="global batch [seq]",
                                        style=_STYLE, layout=_WIDE),
        "devices": widgets.IntText(value=devices, description="devices (each type)",
                                   style=_STYLE, layout=_WIDE),
        "region": _region_dropdown(region),
        "pue_auto": widgets.Checkbox(value=pue is None, description="PUE: operator default",
                                     style=_STYLE, indent=False),
        "pue": widgets.FloatSlider(value=1.1 if pue is None else pue, min=1.0, max=2.0,
                                   step=0.01, description="PUE [-]", disabled=pue is None,
                                   continuous_update=False, style=_STYLE, layout=_WIDE),
        "price": widgets.Text(value="" if price_per_hour is None else str(price_per_hour),
                              placeholder="blank = catalog price",
                              description="price [USD/device-h]", continuous_update=False,
                              style=_STYLE, layout=_WIDE),
        "accelerators": widgets.SelectMultiple(options=acc_ids, value=tuple(accelerators),
                                               rows=10, description="accelerators",
                                               style={"description_width": "90px"},
                                               layout=widgets.Layout(width="300px")),
    }
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
    state = {"busy": False}

    def params() -> dict:
        auto = controls["pue_auto"].value
        return {"model": controls["model"].value,
                "accelerators": tuple(controls["accelerators"].value),
                "devices": controls["devices"].value,
                "tokens": controls["tokens"].value * GIGA,
                "global_batch": controls["global_batch"].value,
                "region": controls["region"].value,
                "pue": None if auto else controls["pue"].value,
                "price_per_hour": parse_price(controls["price"].value)}

    def show_error(text: str) -> None:
        box.result = None
        message.value = _message_html(text)
        table.value = ""
        chart.value = b""
        chart.layout.display = "none"

    def refresh(*_) -> None:
        if state["busy"]:
            return
        state["busy"] = True
        try:
            p = params()
            controls["pue"].disabled = p["pue"] is None
            if p["pue"] is None:   # show the default that is used
                controls["pue"].value = catalog.site(p["region"]).pue
            result = compare_table(p)
            if isinstance(result, str):
                show_error(result)
                return
            box.result = result
            message.value = _message_html(problems(result))
            table.value = table_html(result)
            name = catalog.models().loc[p["model"], "name"]
            fig = plotting.compare_bars(
                result, title=f"{name}, {sig(p['tokens'] / GIGA)} B tokens, "
                              f"{p['devices']} devices each: shorter bars are better")
            chart.value = plotting.figure_png(fig)
            chart.layout.display = None
        except ValueError as exc:            # input the library rejects: one line
            show_error(str(exc))
        except Exception as exc:             # noqa: BLE001 - a widget must not traceback
            show_error(f"unexpected error ({type(exc).__name__}): {exc}")
        finally:
            state["busy"] = False

    def on_model(change) -> None:
        # a new preset brings its own training-token count; recompute once
        state["busy"] = True
        try:
            controls["tokens"].value = preset_tokens(change["new"]) / GIGA
        finally:
            state["busy"] = False
        refresh()

    controls["model"].observe(on_model, names="value")
    for key in ("tokens", "global_batch", "devices", "region", "pue_auto", "pue", "price",
                "accelerators"):
        controls[key].observe(refresh, names="value")
    box.refresh = refresh
    refresh()
    return box


def run_cost(accelerator: str = "h100-sxm5-80gb", model: str = "llama2-7b",
             devices: int = 256, tokens: float | None = None, region: str = "world",
             global_batch: int = 1024) -> widgets.VBox:
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

    Returns
    -------
    ipywidgets.VBox
        With attributes ``controls``, ``result`` (``Estimate.to_dict()`` or None after an
        error), ``message`` (HTML, empty when fine), ``summary`` (HTML) and ``refresh()``.
    """
    accs = catalog.accelerators()
    _check_choice("accelerator", accelerator, list(accs.index))
    controls = {
        "accelerator": widgets.Dropdown(options=[(f"{row['name']} ({aid})", aid)
                                                 for aid, row in accs.iterrows()],
                                        value=accelerator, description="accelerator",
                                        style=_STYLE, layout=_WIDE),
        "model": _model_dropdown(model),
        "devices": widgets.IntText(value=devices, description="devices", style=_STYLE,
                                   layout=_WIDE),
        "tokens": _tokens_text(model, tokens),
        "region": _region_dropdown(region),
    }
    message = widgets.HTML()
    summary = widgets.HTML()
    box = widgets.VBox([widgets.HBox([widgets.VBox([controls["accelerator"], controls["model"],
                                                    controls["devices"]]),
                                      widgets.VBox([controls["tokens"], controls["region"]])]),
                        message, summary])
    box.controls, box.message, box.summary, box.result = controls, message, summary, None
    state = {"busy": False}

    def refresh(*_) -> None:
        if state["busy"]:
            return
        state["busy"] = True
        try:
            result = run_cost_summary({
                "accelerator": controls["accelerator"].value, "model": controls["model"].value,
                "devices": controls["devices"].value,
                "tokens": controls["tokens"].value * GIGA,
                "global_batch": global_batch, "region": controls["region"].value})
            if isinstance(result, str):
                box.result = None
                message.value = _message_html(result)
                summary.value = ""
            else:
                box.result = result
                message.value = ""
                summary.value = run_cost_html(result)
        except Exception as exc:             # noqa: BLE001 - a widget must not traceback
            box.result = None
            message.value = _message_html(f"unexpected error ({type(exc).__name__}): {exc}")
            summary.value = ""
        finally:
            state["busy"] = False

    def on_model(change) -> None:
        state["busy"] = True
        try:
            controls["tokens"].value = preset_tokens(change["new"]) / GIGA
        finally:
            state["busy"] = False
        refresh()

    controls["model"].observe(on_model, names="value")
    for key in ("accelerator", "devices", "tokens", "region"):
        controls[key].observe(refresh, names="value")
    box.refresh = refresh
    refresh()
    return box
