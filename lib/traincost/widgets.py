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

Builders, by notebook: :func:`run_cost` (00), :func:`compare_accelerators` (01),
:func:`flops_and_memory` (02), :func:`parallelism_explorer` (03), :func:`power_explorer`
and :func:`region_carbon` (05), :func:`rent_or_own` and :func:`cheapest_for_deadline` (06),
:func:`measured_vs_estimated` (08), :func:`find_best_layout` (04, on :func:`traincost.search`)
and :func:`validation_explorer` and :func:`case_explorer` (07, on :mod:`traincost.validate`).
The arithmetic of 02-06 lives in :mod:`traincost.explore`, that of 08 in
:mod:`traincost.measure`.
"""

from __future__ import annotations

import html
import math

import ipywidgets as widgets
import pandas as pd

from . import catalog, explore, plotting
from .assumptions import DEFAULT
from .estimate import attention_label, compare, estimate
from .inputs import ATTENTION_KERNELS, OPTIMIZER_STATES, OVERLAP_KINDS, parse_overlap
from .search import OBJECTIVES, search
from .units import GIB, GIGA

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
        preset's), ``global_batch`` [sequences], ``region``, optional ``power_cap`` [W]
        (None: the device's rated maximum).
    """
    try:
        return estimate(accelerator=params["accelerator"], devices=params["devices"],
                        model=params["model"], global_batch=params["global_batch"],
                        tokens=params.get("tokens"), region=params.get("region"),
                        power_cap=params.get("power_cap")).to_dict()
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
            + _caveats_html(result))


def _caveats_html(result: dict) -> str:
    """``Estimate.accuracy_note`` and ``Estimate.caveats`` as muted notes under a summary."""
    notes = [("Accuracy", result["accuracy"])] if result.get("accuracy") else []
    notes += [("Caveat", c) for c in result.get("caveats", [])]
    return "".join(f"<p style='font-size:90%;color:#555'><b>{label}:</b> {html.escape(c)}</p>"
                   for label, c in notes)


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
        "power_cap": widgets.Text(value="" if power_cap is None else f"{power_cap:g}",
                                  placeholder="blank = rated maximum (TDP)",
                                  description="power cap [W]", continuous_update=False,
                                  style=_STYLE, layout=_WIDE),
    }
    message = widgets.HTML()
    summary = widgets.HTML()
    box = widgets.VBox([widgets.HBox([widgets.VBox([controls["accelerator"], controls["model"],
                                                    controls["devices"]]),
                                      widgets.VBox([controls["tokens"], controls["region"],
                                                    controls["power_cap"]])]),
                        message, summary])
    box.controls, box.message, box.summary, box.result = controls, message, summary, None
    state = {"busy": False}

    def refresh(*_) -> None:
        if state["busy"]:
            return
        state["busy"] = True
        try:
            try:
                cap = parse_optional_number(controls["power_cap"].value, "power-cap",
                                            "W per device")
            except ValueError as exc:
                result = str(exc)
            else:
                result = run_cost_summary({
                    "accelerator": controls["accelerator"].value,
                    "model": controls["model"].value, "devices": controls["devices"].value,
                    "tokens": controls["tokens"].value * GIGA,
                    "global_batch": global_batch, "region": controls["region"].value,
                    "power_cap": cap})
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
    for key in ("accelerator", "devices", "tokens", "region", "power_cap"):
        controls[key].observe(refresh, names="value")
    box.refresh = refresh
    refresh()
    return box


# ======================================================================================
# Notebooks 02-06: FLOP and memory, parallelism, power and carbon, dollars
# The arithmetic lives in traincost.explore; these builders only read controls, call it
# and write HTML/PNG. Each returns a VBox with ``controls``, ``message`` (HTML, empty
# when fine), its outputs, ``result`` (None after an error) and ``refresh()``.
# ======================================================================================
TP_CHOICES = (1, 2, 4, 8, 16, 32, 64)
MICRO_BATCH_CHOICES = (1, 2, 4, 8, 16)
ZERO_CHOICES = (("0 (off)", 0), ("1 (optimizer)", 1), ("2 (+ gradients)", 2),
                ("3 (+ weights)", 3))
RECOMPUTE_CHOICES = ("none", "selective", "full")

#: a short list of regions for the carbon-by-region widget: clean to coal-heavy
CARBON_REGIONS = ("SWE", "FRA", "gcp:europe-west1", "GBR", "USA:california", "world", "USA",
                  "DEU", "CHN", "IND", "POL")

#: accelerators the deadline widget starts with
DEADLINE_ACCELERATORS = ("a100-sxm4-80gb", "h100-sxm5-80gb", "h200-sxm-141gb", "b200",
                         "tpu-v5p")
DEADLINE_DEVICE_COUNTS = (64, 128, 256, 512, 1024)


def parse_optional_number(text, flag: str, what: str, minimum: float = 0.0) -> float | None:
    """A number typed as text; blank means "use the default". [same unit as ``what``]

    Raises
    ------
    ValueError
        ``<flag>: ...`` when the text is not a number or is below ``minimum``.

    >>> parse_optional_number(" 25000 ", "capex", "USD per device"), parse_optional_number("", "capex", "USD")
    (25000.0, None)
    """
    if text is None:
        return None
    raw = str(text).strip().lstrip("$").replace(",", "")
    if not raw:
        return None
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(f"{flag}: {text!r} is not a number ({what}; leave blank for the "
                         "default)") from None
    if not math.isfinite(value) or value < minimum:
        raise ValueError(f"{flag}: {value:g} must be a number >= {minimum:g} ({what})")
    return value


def parse_device_counts(text) -> tuple[int, ...]:
    """Device counts typed as ``"64, 128, 256"``: whole numbers > 0, sorted, unique.

    >>> parse_device_counts("256, 64,128 64")
    (64, 128, 256)
    """
    parts = [p for p in str(text or "").replace(";", ",").replace(",", " ").split() if p]
    if not parts:
        raise ValueError("devices: give at least one device count, e.g. 64, 128, 256")
    counts = []
    for p in parts:
        try:
            n = int(p)
        except ValueError:
            raise ValueError(f"devices: {p!r} is not a whole number of devices") from None
        if n <= 0:
            raise ValueError(f"devices: {n} must be > 0")
        counts.append(n)
    return tuple(sorted(set(counts)))


def derived_dp(devices, tp, pp) -> str:
    """The data-parallel size a layout leaves, dp = devices / (tp x pp), as a sentence."""
    if not devices or devices <= 0:
        return "dp: devices must be > 0"
    group = tp * pp
    if devices % group:
        return (f"dp = devices / (tp × pp) = {devices} / ({tp} × {pp}) = "
                f"{devices / group:.3g}: not a whole number")
    return f"dp = devices / (tp × pp) = {devices} / ({tp} × {pp}) = {devices // group}"


def _accelerator_dropdown(accelerator: str, description: str = "accelerator") -> widgets.Dropdown:
    accs = catalog.accelerators()
    _check_choice("accelerator", accelerator, list(accs.index))
    return widgets.Dropdown(options=[(f"{row['name']} ({aid})", aid)
                                     for aid, row in accs.iterrows()],
                            value=accelerator, description=description, style=_STYLE,
                            layout=_WIDE)


def _int_text(value: int, description: str) -> widgets.IntText:
    return widgets.IntText(value=value, description=description, style=_STYLE, layout=_WIDE)


def _selection(options, value, description: str) -> widgets.SelectionSlider:
    options = list(options)
    if value not in options:
        options = sorted(set(options) | {value})
    return widgets.SelectionSlider(options=options, value=value, description=description,
                                   continuous_update=False, style=_STYLE, layout=_WIDE)


def _zero_buttons(zero: int) -> widgets.ToggleButtons:
    _check_choice("zero", zero, [v for _, v in ZERO_CHOICES])
    return widgets.ToggleButtons(options=ZERO_CHOICES, value=zero, description="ZeRO stage",
                                 style={**_STYLE, "button_width": "110px"})


def _recompute_buttons(recompute: str) -> widgets.ToggleButtons:
    _check_choice("recompute", recompute, RECOMPUTE_CHOICES)
    return widgets.ToggleButtons(options=RECOMPUTE_CHOICES, value=recompute,
                                 description="recompute", style={**_STYLE, "button_width": "90px"})


def _stack_controls(attention_kernel: str, parallel_block: bool, overlap: str,
                    balanced_pipeline: bool = False, optimizer_state: str = "fp32") -> dict:
    """Software-stack controls: attention kernel, parallel block, one box per overlap kind,
    balanced pipeline split, Adam state precision."""
    _check_choice("attention kernel", attention_kernel, ATTENTION_KERNELS)
    _check_choice("optimizer state", optimizer_state, OPTIMIZER_STATES)
    chosen = parse_overlap(overlap)
    out = {"attention_kernel": widgets.ToggleButtons(
               options=ATTENTION_KERNELS, value=attention_kernel, description="attention",
               style={**_STYLE, "button_width": "100px"}),
           "parallel_block": widgets.Checkbox(value=bool(parallel_block),
                                              description="parallel attention + MLP block",
                                              indent=False)}
    for kind in OVERLAP_KINDS:
        out[f"overlap_{kind}"] = widgets.Checkbox(value=kind in chosen, indent=False,
                                                  description=f"overlap {kind} comm.")
    out["balanced_pipeline"] = widgets.Checkbox(
        value=bool(balanced_pipeline), indent=False,
        description="embedding and loss count as pipeline layers")
    out["optimizer_state"] = widgets.ToggleButtons(
        options=OPTIMIZER_STATES, value=optimizer_state, description="Adam state",
        tooltips=["fp32 master weights, momentum and variance: "
                  f"{DEFAULT.optimizer_bytes_per_param:g} bytes per parameter",
                  "bf16 momentum and variance, no fp32 master: "
                  f"{DEFAULT.optimizer_bf16_bytes_per_param:g} bytes per parameter"],
        style={**_STYLE, "button_width": "70px"})
    return out


def _stack_values(controls: dict) -> dict:
    """The stack keywords of :func:`traincost.estimate` from :func:`_stack_controls`."""
    return {"attention_kernel": controls["attention_kernel"].value,
            "parallel_block": controls["parallel_block"].value,
            "overlap": ",".join(k for k in OVERLAP_KINDS if controls[f"overlap_{k}"].value),
            "balanced_pipeline": controls["balanced_pipeline"].value,
            "optimizer_state": controls["optimizer_state"].value}


def _png(fig) -> bytes:
    return plotting.figure_png(fig)


def _cards(cells) -> str:
    """Headline numbers as bordered boxes (label, value) in one row."""
    return "<div style='display:flex;flex-wrap:wrap'>" + "".join(
        f"<div style='padding:6px 14px;border-left:3px solid #0072B2;margin-right:8px'>"
        f"<div style='font-size:85%;color:#555'>{html.escape(k)}</div>"
        f"<div style='font-size:140%;font-weight:bold'>{html.escape(v)}</div></div>"
        for k, v in cells) + "</div>"


def _clears(box, message, texts=(), images=()):
    """An ``on_error`` for :class:`_Refresher`: no result, the message shown in place, the
    HTML ``texts`` emptied and the ``images`` emptied and hidden."""
    def on_error(text):
        box.result = None
        message.value = _message_html(text)
        for t in texts:
            t.value = ""
        for im in images:
            im.value = b""
            im.layout.display = "none"
    return on_error


class _Refresher:
    """Recompute on any watched control; never let an exception out of a callback.

    ``update()`` does the work and raises ``ValueError`` with a one-line message for
    input the library rejects; ``on_error(text)`` clears the outputs and shows it.
    """

    def __init__(self, update, on_error):
        self.update, self.on_error, self.busy = update, on_error, False

    def __call__(self, *_):
        if self.busy:
            return
        self.busy = True
        try:
            self.update()
        except ValueError as exc:            # input the library rejects: one line
            self.on_error(str(exc))
        except Exception as exc:             # noqa: BLE001 - a widget must not traceback
            self.on_error(f"unexpected error ({type(exc).__name__}): {exc}")
        finally:
            self.busy = False

    def watch(self, *controls):
        for c in controls:
            c.observe(self, names="value")

    def attach(self, box, controls: dict):
        """Watch every control, attach the refresher to ``box``, compute once, return box."""
        self.watch(*controls.values())
        box.refresh = self
        self()
        return box

    def start(self, box, controls: dict):
        """As :meth:`attach`, but a new model preset also resets ``tokens`` to its figure."""
        def on_model(change):
            self.set_quietly(controls["tokens"], preset_tokens(change["new"]) / GIGA)
            self()

        controls["model"].observe(on_model, names="value")
        return self.attach(box, {k: c for k, c in controls.items() if k != "model"})

    def set_quietly(self, control, value):
        """Change a control without triggering a recompute."""
        self.busy = True
        try:
            control.value = value
        finally:
            self.busy = False


def _ok(result):
    """A helper's result, or its message raised as ValueError (shown by _Refresher)."""
    if isinstance(result, str):
        raise ValueError(result)
    return result


# --------------------------------------------------------------------------------------
# 02: FLOP and memory
# --------------------------------------------------------------------------------------
def memory_summary_html(est, smallest: int | None, flop_parts: dict) -> str:
    """Headline numbers of the memory widget: total vs HBM, smallest fitting count, FLOP."""
    d = est.to_dict()
    total, hbm = d["memory_gib_per_device"], d["hbm_gib_per_device"]
    model_flop = sum(v for k, v in flop_parts.items() if k != "recompute")
    extra = flop_parts["recompute"] / model_flop if model_flop else 0.0
    cells = [("Memory per device", f"{sig(total)} GiB"),
             ("Device memory", f"{sig(hbm)} GiB"),
             ("Fits?", "yes" if d["fits_in_memory"] else "no"),
             ("Fewest devices that fit", "none scanned" if smallest is None else str(smallest)),
             ("FLOP per token", f"{sig(sum(flop_parts.values()) / GIGA)} G"),
             ]
    p = d["parallel"]
    return (_cards(cells) +
            f"<p style='font-size:90%;color:#333'>{html.escape(d['workload'])} on "
            f"{d['devices']} × {html.escape(d['accelerator'])}: tp {p['tp']} × pp {p['pp']} × "
            f"dp {p['dp']}, micro-batch {p['micro_batch']}, ZeRO-{p['zero']}, "
            f"{p['recompute']} recompute. Recompute adds {sig(100 * extra)} % to the model's "
            "FLOP per token. <i>Fewest devices that fit</i>: the same ZeRO stage, recompute "
            "and micro-batch, with tp and pp chosen for each count (powers of two up to "
            f"{explore.DEVICE_COUNTS[-1]}).</p>")


def flops_and_memory(model: str = "llama2-13b", accelerator: str = "a100-sxm4-80gb",
                     devices: int = 8, global_batch: int = 1024, tp: int = 1, pp: int = 1,
                     zero: int = 0, recompute: str = "none",
                     micro_batch: int = 1) -> widgets.VBox:
    """Memory per device, stacked by part, as ZeRO, recompute, tp/pp and micro-batch change.

    Parameters
    ----------
    model, accelerator : str
        Preset and accelerator ids.
    devices : int
        Devices. [-]
    global_batch : int
        Sequences per optimizer step. [sequences]
    tp, pp : int
        Tensor- and pipeline-parallel sizes. [-]
    zero : int
        ZeRO stage 0-3. [-]
    recompute : str
        ``none``, ``selective`` or ``full``. [-]
    micro_batch : int
        Sequences per micro-batch. [sequences]

    Returns
    -------
    ipywidgets.VBox
        ``controls``, ``message``, ``summary`` (HTML), ``chart`` (Image: the chosen
        layout beside the plain data-parallel one), ``result`` (the Estimate) and
        ``smallest`` (fewest scanned devices that fit with this ZeRO stage, recompute
        mode and micro-batch, or None), ``refresh()``.
    """
    controls = {
        "model": _model_dropdown(model),
        "accelerator": _accelerator_dropdown(accelerator),
        "devices": _int_text(devices, "devices"),
        "tp": _selection(TP_CHOICES, tp, "tensor parallel tp"),
        "pp": _selection((1, 2, 4, 5, 8, 10, 16, 20, 32), pp, "pipeline parallel pp"),
        "micro_batch": _selection(MICRO_BATCH_CHOICES, micro_batch, "micro-batch [seq]"),
        "zero": _zero_buttons(zero),
        "recompute": _recompute_buttons(recompute),
    }
    message, summary = widgets.HTML(), widgets.HTML()
    chart = widgets.Image(format="png", layout=widgets.Layout(max_width="900px"))
    left = widgets.VBox([controls[k] for k in ("model", "accelerator", "devices")])
    right = widgets.VBox([controls[k] for k in ("tp", "pp", "micro_batch")])
    box = widgets.VBox([widgets.HBox([left, right]), controls["zero"], controls["recompute"],
                        message, summary, chart])
    box.controls, box.message, box.summary, box.chart = controls, message, summary, chart
    box.result, box.smallest = None, None

    def params():
        return {"accelerator": controls["accelerator"].value, "model": controls["model"].value,
                "devices": controls["devices"].value, "global_batch": global_batch,
                "tp": controls["tp"].value, "pp": controls["pp"].value, "vpp": 1,
                "zero": controls["zero"].value, "recompute": controls["recompute"].value,
                "micro_batch": controls["micro_batch"].value}

    def update():
        p = params()
        est = _ok(explore.layout_estimate(p))
        rows = {}
        reference = explore.layout_estimate({**p, "tp": 1, "pp": 1, "zero": 0,
                                             "recompute": "none"})
        if not isinstance(reference, str) and (p["tp"], p["pp"], p["zero"], p["recompute"]) \
                != (1, 1, 0, "none"):
            rows["data parallel only\n(ZeRO-0, no recompute)"] = \
                reference.memory_breakdown_gib()
        rows[f"your layout\n(tp {p['tp']}, pp {p['pp']}, ZeRO-{p['zero']}, "
             f"{p['recompute']})"] = est.memory_breakdown_gib()
        scan = explore.device_scan({k: p[k] for k in ("accelerator", "model", "global_batch",
                                                      "zero", "recompute", "micro_batch")})
        box.result, box.smallest = est, explore.smallest_fitting_devices(scan)
        message.value = ""
        summary.value = memory_summary_html(est, box.smallest, explore.flop_per_token_parts(
            p["model"], p["recompute"]))
        chart.value = _png(plotting.memory_bars(rows, est.to_dict()["hbm_gib_per_device"]))
        chart.layout.display = None

    def on_error(text):
        box.result, box.smallest = None, None
        message.value = _message_html(text)
        summary.value = ""
        chart.value = b""
        chart.layout.display = "none"

    return _Refresher(update, on_error).attach(box, controls)


# --------------------------------------------------------------------------------------
# 03: parallelism explorer
# --------------------------------------------------------------------------------------
def layout_summary_html(result: dict) -> str:
    """Headline numbers of one layout (``Estimate.to_dict()``): step, MFU, memory, bubble."""
    p = result["parallel"]
    steps = result["breakdown"]["step_time_s"]
    total = result["step_time_s"]
    waiting = 1 - steps["compute"] / total if total else float("nan")
    cells = [("Step time", f"{sig(total)} s"),
             ("MFU", f"{sig(result['mfu'] * 100)} %"),
             ("Memory per device", f"{sig(result['memory_gib_per_device'])} of "
                                   f"{sig(result['hbm_gib_per_device'])} GiB"),
             ("Waiting share of the step", f"{sig(waiting * 100)} %"),
             ("Training time", f"{sig(result['train_time_days'])} days")]
    warn = "" if result["fits_in_memory"] else (
        "<p style='color:#D55E00'><b>Does not fit in memory</b>: the memory bar passes the "
        "dashed line. Try a higher ZeRO stage, more recompute, a smaller micro-batch or "
        "more tp/pp.</p>")
    return (_cards(cells) +
            f"<p style='font-size:90%;color:#333'>tp {p['tp']} × pp {p['pp']} × dp {p['dp']} "
            f"(vpp {p['vpp']}), micro-batch {p['micro_batch']}, {p['num_microbatches']} "
            f"micro-batches per step, ZeRO-{p['zero']}, {p['recompute']} recompute, "
            f"{attention_label(result['stack'])} attention; "
            f"{sig(result['tokens_per_s'])} tokens/s.</p>" + warn + _caveats_html(result))


def parallelism_explorer(model: str = "llama2-70b", accelerator: str = "h100-sxm5-80gb",
                         devices: int = 64, global_batch: int = 1024, tp: int = 8,
                         pp: int = 4, vpp: int = 1, micro_batch: int = 1,
                         recompute: str = "selective", zero: int = 1,
                         attention_kernel: str = "auto", parallel_block: bool = False,
                         overlap: str = "", balanced_pipeline: bool = False,
                         optimizer_state: str = "fp32") -> widgets.VBox:
    """Sliders for a parallel layout; shows the step-time breakdown, MFU and memory.

    Parameters
    ----------
    model, accelerator : str
        Preset and accelerator ids.
    devices : int
        Devices; dp is derived as devices / (tp x pp). [-]
    global_batch : int
        Sequences per optimizer step. [sequences]
    tp, pp, vpp, micro_batch, zero : int
        Layout knobs. [-]
    recompute : str
        ``none``, ``selective`` or ``full``. [-]
    attention_kernel, parallel_block, overlap, balanced_pipeline : str, bool, str, bool
        The software stack (:class:`traincost.Workload`): ``auto`` (the device's faster
        measured fused kernel), ``flash``, ``cudnn`` or ``materialized``;
        a parallel attention + MLP block; overlapped communication, e.g. ``"tp,dp"``;
        embedding and loss counted as pipeline layers. [-]
    optimizer_state : str
        Adam state: ``fp32`` (master weights, momentum and variance, 12 bytes per
        parameter) or ``bf16`` (bf16 momentum and variance, no master copy, 4 bytes). [-]

    Returns
    -------
    ipywidgets.VBox
        ``controls``, ``dp`` (HTML: the derived data-parallel size), ``message`` (why a
        layout cannot run, in plain words), ``summary`` (HTML), ``chart`` (Image: step
        time and memory bars), ``result`` (``Estimate.to_dict()``), ``refresh()``.
        A layout that does not fit in memory is a result: its memory bar passes the
        HBM line and ``summary`` says so.
    """
    controls = {
        "model": _model_dropdown(model),
        "accelerator": _accelerator_dropdown(accelerator),
        "devices": _int_text(devices, "devices"),
        "tp": _selection(TP_CHOICES, tp, "tensor parallel tp"),
        "pp": widgets.IntSlider(value=pp, min=1, max=32, description="pipeline parallel pp",
                                continuous_update=False, style=_STYLE, layout=_WIDE),
        "vpp": widgets.IntSlider(value=vpp, min=1, max=8, description="interleaving vpp",
                                 continuous_update=False, style=_STYLE, layout=_WIDE),
        "micro_batch": _selection(MICRO_BATCH_CHOICES, micro_batch, "micro-batch [seq]"),
        "zero": _zero_buttons(zero),
        "recompute": _recompute_buttons(recompute),
        **_stack_controls(attention_kernel, parallel_block, overlap, balanced_pipeline,
                          optimizer_state),
    }
    dp, message, summary = widgets.HTML(), widgets.HTML(), widgets.HTML()
    chart = widgets.Image(format="png", layout=widgets.Layout(max_width="900px"))
    left = widgets.VBox([controls[k] for k in ("model", "accelerator", "devices")] + [dp])
    right = widgets.VBox([controls[k] for k in ("tp", "pp", "vpp", "micro_batch")])
    stack = widgets.HBox([controls["parallel_block"]]
                         + [controls[f"overlap_{k}"] for k in OVERLAP_KINDS]
                         + [controls["balanced_pipeline"]])
    box = widgets.VBox([widgets.HBox([left, right]), controls["zero"], controls["recompute"],
                        controls["attention_kernel"], stack, controls["optimizer_state"],
                        message, summary, chart])
    box.controls, box.dp, box.message, box.summary, box.chart, box.result = \
        controls, dp, message, summary, chart, None

    def update():
        p = {"accelerator": controls["accelerator"].value, "model": controls["model"].value,
             "devices": controls["devices"].value, "global_batch": global_batch,
             **{k: controls[k].value for k in ("tp", "pp", "vpp", "micro_batch", "zero",
                                               "recompute")},
             **_stack_values(controls)}
        dp.value = html.escape(derived_dp(p["devices"], p["tp"], p["pp"]))
        est = explore.layout_estimate(p)
        if isinstance(est, str):
            raise ValueError(f"This layout cannot run: {est}")
        result = est.to_dict()
        box.result = result
        message.value = ""
        summary.value = layout_summary_html(result)
        chart.value = _png(plotting.layout_bars(
            est.step_breakdown_s(), est.memory_breakdown_gib(), result["hbm_gib_per_device"],
            label=f"tp{p['tp']} pp{p['pp']} dp{result['parallel']['dp']}"))
        chart.layout.display = None

    on_error = _clears(box, message, [summary], [chart])

    return _Refresher(update, on_error).attach(box, controls)


# --------------------------------------------------------------------------------------
# 05: power, PUE and carbon
# --------------------------------------------------------------------------------------
def power_summary_html(curve_row: dict, pue: float) -> str:
    """Power of one device at one busy share, and at the plug with a PUE. [W]"""
    it_w = curve_row["total_w"]
    cells = [("Accelerator", f"{sig(curve_row['device_w'])} W"),
             ("+ host share", f"{sig(curve_row['host_w'])} W"),
             ("= IT power", f"{sig(it_w)} W"),
             (f"× PUE {sig(pue)} = at the plug", f"{sig(it_w * pue)} W")]
    return _cards(cells)


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
        "accelerator": _accelerator_dropdown(accelerator),
        "busy": widgets.FloatSlider(value=busy_fraction, min=0.0, max=1.0, step=0.05,
                                    description="busy share [-]", continuous_update=False,
                                    style=_STYLE, layout=_WIDE),
        "pue": widgets.FloatSlider(value=pue, min=1.0, max=2.0, step=0.01,
                                   description="PUE [-]", continuous_update=False,
                                   style=_STYLE, layout=_WIDE),
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
        chart.value = _png(plotting.power_curve(
            curve, tdp_w=acc.tdp_w, idle_w=acc.idle_w, busy_fraction=u,
            title=f"{acc.name}: waiting still draws most of the power"))

    def on_error(text):
        box.result = None
        message.value = _message_html(text)
        summary.value = ""

    return _Refresher(update, on_error).attach(box, controls)


def power_cap_summary_html(row: dict) -> str:
    """One row of :func:`traincost.explore.power_cap_tradeoff` as headline numbers."""
    cells = [("Power cap", f"{sig(row['power_cap_w'])} W ({sig(100 * row['fraction_of_tdp'])} "
                           "% of TDP)"),
             ("Training time", f"{row['time_change_pct']:+.1f} %"),
             ("Energy at the plug", f"{row['energy_change_pct']:+.1f} %"),
             ("Power per device", f"{sig(row['avg_power_w_per_device'])} W incl. host")]
    return _cards(cells)


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
        "model": _model_dropdown(model),
        "accelerator": _accelerator_dropdown(accelerator),
        "devices": _int_text(devices, "devices"),
        "tokens": _tokens_text(model, tokens),
        "cap": widgets.FloatSlider(value=cap_fraction, min=0.5, max=1.0, step=0.025,
                                   description="cap [share of TDP]", readout_format=".0%",
                                   continuous_update=False, style=_STYLE, layout=_WIDE),
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
        df = _ok(explore.power_cap_tradeoff(p, sorted(set(explore.POWER_CAP_FRACTIONS) | {f})))
        row = {"power_cap_w": float(df.index[df["fraction_of_tdp"] == f][0]),
               **df[df["fraction_of_tdp"] == f].iloc[0].to_dict()}
        box.result = row
        message.value = _message_html(
            f"{sig(100 * f)} % of TDP is below the lowest limit the clock law was measured "
            "at; this is an extrapolation") if row["extrapolated"] else ""
        summary.value = power_cap_summary_html(row)
        chart.value = _png(plotting.power_cap_tradeoff(
            df, mark_w=row["power_cap_w"],
            title=f"{p['model']} on {p['devices']} x {p['accelerator']}: a cap trades time "
                  "for energy"))
        chart.layout.display = None

    on_error = _clears(box, message, [summary], [chart])

    return _Refresher(update, on_error).start(box, controls)


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
    all_regions = [rid for _, rid in region_options(tuple(dict.fromkeys(
        list(regions) + list(CARBON_REGIONS) + list(CURATED_REGIONS))))]
    for r in regions:
        _check_choice("region", r, all_regions)
    controls = {
        "model": _model_dropdown(model),
        "accelerator": _accelerator_dropdown(accelerator),
        "devices": _int_text(devices, "devices"),
        "tokens": _tokens_text(model, tokens),
        "pue_auto": widgets.Checkbox(value=pue is None, description="PUE: each region's default",
                                     indent=False),
        "pue": widgets.FloatSlider(value=1.56 if pue is None else pue, min=1.0, max=2.0,
                                   step=0.01, description="PUE [-]", disabled=pue is None,
                                   continuous_update=False, style=_STYLE, layout=_WIDE),
        "embodied": widgets.Text(value="" if embodied_kgco2e is None else str(embodied_kgco2e),
                                 placeholder="blank = catalog (die only)",
                                 description="embodied [kgCO2e/device]",
                                 continuous_update=False, style=_STYLE, layout=_WIDE),
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
        df = _ok(explore.carbon_by_region(p, controls["regions"].value))
        box.result = df
        message.value = "" if df["embodied_co2e_t"].notna().all() else _message_html(
            f"{p['accelerator']}: no embodied figure in the catalog; type one to add it")
        labels = df.sort_values("co2e_t")          # cleanest at the top
        labels.index = [f"{rid} ({sig(g)} g/kWh, PUE {sig(pp)})" for rid, g, pp in
                        zip(labels.index, labels["grid_gco2e_per_kwh"], labels["pue"])]
        chart.value = _png(plotting.carbon_bars(labels))
        chart.layout.display = None
        table.value = carbon_table_html(df)

    on_error = _clears(box, message, [table], [chart])

    refresh = _Refresher(update, on_error)
    return refresh.start(box, controls)


# --------------------------------------------------------------------------------------
# 06: dollars
# --------------------------------------------------------------------------------------
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
    return _cards(cells) + (
        f"<p style='font-size:90%;color:#333'>{sig(rent['device_hours'])} device-hours, "
        f"{sig(rent['train_time_days'])} days, {sig(own['facility_energy_mwh'])} MWh at the "
        "plug. Owning charges the run its share of the purchase price (spread over "
        f"{sig(table.attrs['lifetime_h'] / 8766)} years of round-the-clock use) plus its "
        "electricity.</p>") + (_message_html("\n".join(notes)) if notes else "")


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
        "accelerator": _accelerator_dropdown(accelerator),
        "model": _model_dropdown(model),
        "devices": _int_text(devices, "devices"),
        "tokens": _tokens_text(model, tokens),
        "region": _region_dropdown(region),
        "price": widgets.Text(value="" if price_per_hour is None else str(price_per_hour),
                              placeholder="blank = catalog", description="rent [USD/device-h]",
                              continuous_update=False, style=_STYLE, layout=_WIDE),
        "capex": widgets.Text(value="" if capex_usd is None else str(capex_usd),
                              placeholder="blank = catalog", description="purchase [USD/device]",
                              continuous_update=False, style=_STYLE, layout=_WIDE),
        "electricity": widgets.Text(
            value="" if electricity_usd_per_kwh is None else str(electricity_usd_per_kwh),
            placeholder="blank = 0.08 (US industrial)", description="electricity [USD/kWh]",
            continuous_update=False, style=_STYLE, layout=_WIDE),
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
        table = _ok(explore.rent_vs_own(p))
        box.result = table
        message.value = ""
        summary.value = rent_own_html(table)
        rows = {"rent": {"rent": table.loc["rent", "rent_usd"]},
                "own": {"depreciation": table.loc["own", "depreciation_usd"],
                        "electricity": table.loc["own", "electricity_usd"]}}
        rows = {k: {part: (0.0 if pd.isna(v) else v) for part, v in r.items()}
                for k, r in rows.items()}
        chart.value = _png(plotting.stacked_bars(
            rows, ("rent", "depreciation", "electricity"),
            colours={"rent": plotting.OKABE_ITO[0], "depreciation": plotting.OKABE_ITO[1],
                     "electricity": plotting.OKABE_ITO[2]},
            part_labels={"rent": "rent (device-hours × price)",
                         "depreciation": "purchase price, run's share",
                         "electricity": "electricity at the plug"},
            xlabel="Cost of the run [USD]", unit="USD",
            title="Rent or own: owning wins only if the devices stay busy"))
        sens = _ok(explore.price_sensitivity(p))
        sensitivity.value = _png(plotting.sensitivity_lines(sens.dropna(axis=1, how="all")))

    def on_error(text):
        box.result = None
        message.value = _message_html(text)
        summary.value = ""
        chart.value = b""
        sensitivity.value = b""

    refresh = _Refresher(update, on_error)
    return refresh.start(box, controls)


def winner_html(table: pd.DataFrame, winner, deadline_days: float) -> str:
    """The cheapest candidate meeting the deadline, in a sentence (or why there is none)."""
    if winner is None:
        return _message_html(
            f"No candidate finishes within {sig(deadline_days)} days: allow more devices, "
            "a faster accelerator or a later deadline.")
    w = table.loc[winner]
    cells = [("Cheapest within the deadline", f"{w['accelerator']} × {int(w['devices'])}"),
             ("Cost", f"${sig(w['cost_usd'])}"), ("Time", f"{sig(w['train_time_days'])} days"),
             ("Layout", f"tp {w['tp']} × pp {w['pp']} × dp {w['dp']}")]
    n_ok = int((table["status"] == "meets deadline").sum())
    return _cards(cells) + (f"<p style='font-size:90%;color:#333'>{n_ok} of {len(table)} "
                            f"candidates finish within {sig(deadline_days)} days.</p>")


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
        other controls recompute the candidates.
    """
    acc_ids = list(catalog.accelerators().index)
    for acc in accelerators:
        _check_choice("accelerator", acc, acc_ids)
    controls = {
        "model": _model_dropdown(model),
        "tokens": _tokens_text(model, tokens),
        "region": _region_dropdown(region),
        "devices": widgets.Text(value=", ".join(str(n) for n in device_counts),
                                description="device counts", continuous_update=False,
                                style=_STYLE, layout=_WIDE),
        "deadline": widgets.FloatSlider(value=deadline_days, min=1.0, max=90.0, step=0.5,
                                        description="deadline [days]", continuous_update=False,
                                        style=_STYLE, layout=_WIDE),
        "accelerators": widgets.SelectMultiple(options=acc_ids, value=tuple(accelerators),
                                               rows=10, description="accelerators",
                                               style={"description_width": "90px"},
                                               layout=widgets.Layout(width="300px")),
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
    cache = {"key": None, "candidates": None}

    def update():
        p = {"model": controls["model"].value, "global_batch": global_batch,
             "tokens": controls["tokens"].value * GIGA, "region": controls["region"].value}
        accs = tuple(controls["accelerators"].value)
        counts = parse_device_counts(controls["devices"].value)
        key = (tuple(sorted(p.items())), accs, counts)
        if cache["key"] != key:
            cache["candidates"], cache["key"] = None, None
            cache["candidates"] = _ok(explore.deadline_candidates(p, accs, counts))
            cache["key"] = key
        deadline = controls["deadline"].value
        df, winner = explore.pick_cheapest(cache["candidates"], deadline)
        box.result, box.winner = df, winner
        unpriced = sorted({a for a, s in zip(df["accelerator"], df["status"]) if s == "no price"})
        message.value = _message_html(
            f"no catalog price (left out): {', '.join(unpriced)}") if unpriced else ""
        summary.value = winner_html(df, winner, deadline)
        chart.value = _png(plotting.cost_vs_time(df, deadline, winner=winner))
        chart.layout.display = None
        table.value = candidates_html(df)

    def on_error(text):
        box.result, box.winner = None, None
        message.value = _message_html(text)
        summary.value = table.value = ""
        chart.value = b""
        chart.layout.display = "none"

    refresh = _Refresher(update, on_error)
    return refresh.start(box, controls)


# --------------------------------------------------------------------------------------
# 08: measured against estimated
# --------------------------------------------------------------------------------------
def measured_vs_estimated(flop: float, flop_per_s: float, observed: dict, cpu_power_w: float,
                          host_power_w: float = 0.0, utilisation: float = 1.0) -> widgets.VBox:
    """Estimate a measured run at an assumed utilisation and power, beside the measurement.

    Parameters
    ----------
    flop : float
        Work of the run. [FLOP]
    flop_per_s : float
        Best achievable rate (the timed matmul). [FLOP/s]
    observed : dict
        Measured ``time_s`` [s], ``cpu_energy_j`` and ``energy_j`` [J].
    cpu_power_w, host_power_w : float
        Starting power figures (CodeCarbon's CPU and RAM power). [W]
    utilisation : float
        Starting share of ``flop_per_s`` the run is assumed to reach. [-]

    Returns
    -------
    ipywidgets.VBox
        ``controls`` (utilisation slider, CPU and host power), ``message``, ``summary``
        (HTML), ``table`` (HTML: :func:`traincost.measure.side_by_side`), ``result`` (that
        table), ``refresh()``.
    """
    from . import measure

    controls = {
        "utilisation": widgets.FloatSlider(value=utilisation, min=0.02, max=1.0, step=0.01,
                                           description="utilisation [-]",
                                           continuous_update=False, style=_STYLE,
                                           layout=_WIDE),
        "cpu_power": widgets.FloatText(value=round(cpu_power_w, 2), description="CPU power [W]",
                                       style=_STYLE, layout=_WIDE),
        "host_power": widgets.FloatText(value=round(host_power_w, 2),
                                        description="host (RAM) power [W]", style=_STYLE,
                                        layout=_WIDE),
    }
    message, summary, table = widgets.HTML(), widgets.HTML(), widgets.HTML()
    box = widgets.VBox([widgets.VBox(list(controls.values())), message, summary, table])
    box.controls, box.message, box.summary, box.table, box.result = \
        controls, message, summary, table, None
    matching = flop / observed["time_s"] / flop_per_s     # the run's own utilisation

    def update():
        u = controls["utilisation"].value
        est = measure.estimate_run(flop, flop_per_s * u, controls["cpu_power"].value,
                                   controls["host_power"].value)
        df = measure.side_by_side(observed, est)
        box.result = df
        message.value = ""
        summary.value = _cards([
            ("Assumed utilisation", f"{sig(u)}"),
            ("Estimated time", f"{sig(est['time_s'])} s"),
            ("Measured time", f"{sig(observed['time_s'])} s"),
            ("Utilisation that matches", f"{sig(matching)}")])
        out = df.copy()
        for col in out.columns:
            out[col] = [sig(v) for v in out[col]]
        table.value = out.to_html(escape=True, border=0, classes="traincost-table")

    def on_error(text):
        box.result = None
        message.value = _message_html(text)
        summary.value = table.value = ""

    return _Refresher(update, on_error).attach(box, controls)


# ======================================================================================
# 04: find the best layout (traincost.search)
# ======================================================================================
#: accelerators and device counts the search widget starts with
FIND_ACCELERATORS = ("a100-sxm4-80gb", "h100-sxm5-80gb", "tpu-v5p")
FIND_DEVICE_COUNTS = (256, 512, 1024)
#: (button label, traincost.search objective)
OBJECTIVE_CHOICES = (("time", "time"), ("dollars", "cost"), ("energy", "energy"),
                     ("carbon", "carbon"))
#: feasible layouts a search keeps, best first: the chart's cloud (every feasible layout
#: of the default search; bounded so a large search stays light)
SEARCH_TOP = 20_000
#: layout knobs of a search row, in traincost.estimate's keywords
LAYOUT_KNOBS = ("tp", "pp", "cp", "ep", "vpp", "zero", "micro_batch", "recompute")
#: the step-time parts that are communication the step waits for
EXPOSED_COMM_PARTS = ("tp_comm", "cp_comm", "ep_comm", "pp_comm", "dp_comm")
_OBJECTIVE_WORDS = plotting.OBJECTIVE_WORDS


def run_search(params: dict, progress=None, top: int = SEARCH_TOP):
    """:func:`traincost.search` for the widget's parameters, or the error message.

    Parameters
    ----------
    params : dict
        ``model``, ``accelerators`` (sequence of ids), ``device_counts`` (sequence of
        int) [-], ``global_batch`` [sequences], ``tokens`` [tokens] (None: the preset's),
        ``region``, ``objective`` (``time``, ``cost``, ``energy``, ``carbon``), and the
        optional constraints ``max_days`` [days], ``max_cost_usd`` [USD], ``max_co2e_t``
        [tCO2e] and ``memory_headroom`` [-] (None: none / the default).
    progress : callable, optional
        ``progress(done, total)``, passed to the search. [-]
    top : int
        Rows of the result's top table. [-]

    Returns
    -------
    traincost.SearchResult or str
    """
    accelerators = list(params.get("accelerators") or ())
    if not accelerators:
        return "accelerators: select at least one accelerator"
    try:
        return search(accelerators, list(params["device_counts"]), model=params["model"],
                      global_batch=params["global_batch"], tokens=params.get("tokens"),
                      region=params.get("region"), max_days=params.get("max_days"),
                      max_cost_usd=params.get("max_cost_usd"),
                      max_co2e_t=params.get("max_co2e_t"),
                      memory_headroom=params.get("memory_headroom"),
                      objective=params.get("objective", "time"), top=top, progress=progress)
    except ValueError as exc:
        return explore.plain_reason(str(exc))


def layout_of(row) -> dict:
    """The layout knobs of a search row, as :func:`traincost.estimate` keywords."""
    return {k: (str(row[k]) if k == "recompute" else int(row[k])) for k in LAYOUT_KNOBS}


def layout_label(row) -> str:
    """A layout in one short line, e.g. ``'tp4 pp4 dp16 vpp4 mb1 ZeRO-1 selective'``."""
    text = f"tp{int(row['tp'])} pp{int(row['pp'])} dp{int(row['dp'])}"
    for k in ("cp", "ep"):
        if int(row.get(k, 1)) > 1:
            text += f" {k}{int(row[k])}"
    return (text + f" vpp{int(row['vpp'])} mb{int(row['micro_batch'])} ZeRO-{int(row['zero'])} "
            f"{row['recompute']}")


def _objective_text(row, objective: str) -> str:
    if objective == "time":
        return f"{sig(row['train_time_days'])} days"
    if objective == "cost":
        return f"${sig(row['cost_usd'])}" if pd.notna(row["cost_usd"]) else "no price"
    if objective == "energy":
        return f"{sig(row['facility_energy_mwh'])} MWh"
    return f"{sig(row['co2e_t'])} tCO2e"


def best_summary_html(result) -> str:
    """The best layout of a search for its objective, in cards, and what was searched."""
    obj = result.objective
    best = result.best.get(obj)
    counts = (f"{result.layouts_enumerated:,} layouts enumerated, {result.layouts_evaluated:,} "
              f"valid, {result.layouts_fit:,} fit within {sig(100 * (1 - result.memory_headroom))}"
              f" % of device memory, {result.layouts_feasible:,} also meet the constraints.")
    if best is None:
        return f"<p style='font-size:90%;color:#333'>{html.escape(counts)}</p>"
    cost = f"${sig(best['cost_usd'])}" if pd.notna(best["cost_usd"]) else "no price"
    cells = [(f"Best for {_OBJECTIVE_WORDS[obj]}", f"{best['accelerator']} × {best['devices']}"),
             ("Time", f"{sig(best['train_time_days'])} days"), ("Cost", cost),
             ("Carbon", f"{sig(best['co2e_t'])} tCO2e"),
             ("MFU", f"{sig(100 * best['mfu'])} %")]
    return _cards(cells) + (
        f"<p style='font-size:90%;color:#333'>Layout: {html.escape(layout_label(best))}; "
        f"memory {sig(best['memory_gib_per_device'])} of {sig(best['hbm_gib_per_device'])} "
        f"GiB per device. {html.escape(counts)}</p>")


def top_table(result, limit: int = 10) -> pd.DataFrame:
    """The search's best layouts, rounded, with units in the headers (for display)."""
    df = result.top.iloc[:limit]
    out = pd.DataFrame(index=pd.RangeIndex(1, len(df) + 1, name="rank"))
    out["accelerator × devices"] = [f"{a} × {n}" for a, n in zip(df["accelerator"], df["devices"])]
    out["layout"] = [layout_label(r) for _, r in df.iterrows()]
    out["time [days]"] = [sig(v) for v in df["train_time_days"]]
    out["cost [USD]"] = [("$" + sig(v)) if pd.notna(v) else "no price" for v in df["cost_usd"]]
    out["energy [MWh]"] = [sig(v) for v in df["facility_energy_mwh"]]
    out["CO2e [t]"] = [sig(v) for v in df["co2e_t"]]
    out["MFU [%]"] = [sig(100 * v) for v in df["mfu"]]
    out["memory [% of device]"] = [sig(100 * v) for v in df["memory_fraction_of_hbm"]]
    return out


def search_notes_html(result) -> str:
    """The best layout's MFU against published runs, memory warnings and search notes."""
    lines = [f"<b>MFU check:</b> {html.escape(result.mfu_note())}"]
    lines += [f"<b>Memory warning:</b> {html.escape(w)}" for w in result.warnings]
    lines += [f"<b>Note:</b> {html.escape(n)}" for n in result.notes]
    return "<div style='font-size:90%;color:#333'>" + "<br>".join(lines) + "</div>"


def _pinned(params: dict, accelerator: str, devices: int, lay: dict):
    """:func:`traincost.estimate` with every knob pinned, or None when the layout is invalid."""
    try:
        return estimate(accelerator=accelerator, devices=int(devices), model=params["model"],
                        global_batch=params["global_batch"], tokens=params.get("tokens"),
                        region=params.get("region"), **lay)
    except ValueError:
        return None


def one_knob_variants(lay: dict) -> list[tuple[str, dict]]:
    """The layout with one knob changed: (what changed, new layout), a dozen or so.

    Variants may be invalid for the job (tp must divide the heads, pp x vpp the layers,
    ...); :func:`why_others_lose` drops those.
    """
    out = []

    def add(what, **change):
        new = {**lay, **change}
        if new != lay and all(new[k] >= 1 for k in ("tp", "pp", "vpp", "micro_batch")):
            out.append((what, new))

    tp, pp, mb = lay["tp"], lay["pp"], lay["micro_batch"]
    add("tp × 2", tp=tp * 2)
    add("tp × 4", tp=tp * 4)
    add("tp ÷ 2", tp=tp // 2)
    add("pp × 2", pp=pp * 2)
    add("pp × 4, no interleaving", pp=pp * 4, vpp=1)
    add("pp ÷ 2", pp=pp // 2)
    add("no interleaving", vpp=1)
    add("micro-batch × 2", micro_batch=mb * 2)
    add("micro-batch × 4", micro_batch=mb * 4)
    add("micro-batch ÷ 2", micro_batch=mb // 2)
    for z in range(4):
        add(f"ZeRO-{z}", zero=z)
    for rc in RECOMPUTE_CHOICES:
        add(f"{rc} recompute", recompute=rc)
    return out


def _why_row(role: str, what: str, est, limit_fraction: float, objective: str) -> dict:
    r = est.report
    hbm = est.accelerator.hbm_bytes / GIB
    row = {"role": role, "change": what, "accelerator": est.accelerator.id,
           "devices": est.devices, "layout": "", "step_time_s": r["step_time_s"],
           "train_time_days": r["train_time_days"], "cost_usd": r["cost_usd"],
           "facility_energy_mwh": r["facility_energy_mwh"], "co2e_t": r["co2e_t"],
           "objective_value": r[OBJECTIVES[objective]],
           "bubble_s": r["step_bubble_s"],
           "exposed_comm_s": sum(r[f"step_{k}_s"] for k in EXPOSED_COMM_PARTS),
           "memory_gib_per_device": r["memory_gib_per_device"], "hbm_gib_per_device": hbm,
           "memory_limit_gib": limit_fraction * hbm,
           "within_limit": bool(r["memory_gib_per_device"] <= limit_fraction * hbm)}
    p = est.parallel
    row["layout"] = layout_label({"tp": p.tp, "pp": p.pp, "dp": r["dp"], "cp": p.cp,
                                  "ep": p.ep, "vpp": p.vpp, "micro_batch": p.micro_batch,
                                  "zero": p.zero, "recompute": p.recompute})
    row.update({f"step_{k}_s": v for k, v in est.step_breakdown_s().items()})
    row.update({f"memory_{k}_gib": v for k, v in est.memory_breakdown_gib().items()})
    return row


def why_others_lose(result, params: dict, objective: str | None = None) -> pd.DataFrame:
    """The best layout beside the runner-up and a few typical losers, each re-estimated.

    The rows are :func:`traincost.estimate` with every knob pinned, on the best layout's
    accelerator and device count:

    * ``best``: the search's best layout for ``objective``;
    * ``runner-up``: the next layout of the ranking on the same accelerator and device
      count that differs in more than the ZeRO stage (those tie on time);
    * ``over memory``: of the best layout with one knob changed, the fastest that needs
      more than the search's memory limit;
    * ``bubble`` and ``communication``: of those one-knob variants that fit, the one that
      adds the most pipeline bubble, and the one that adds the most exposed
      communication, per step.

    Parameters
    ----------
    result : traincost.SearchResult
        With at least one feasible layout.
    params : dict
        ``model``, ``global_batch`` [sequences], ``tokens`` [tokens], ``region``: the job
        the search was run for.
    objective : str, optional
        Ranking to explain; the search's own by default.

    Returns
    -------
    pandas.DataFrame
        Indexed by a label ``"<role>: <change>"``; columns ``role``, ``change``,
        ``layout``, ``step_time_s`` [s], ``train_time_days`` [days], ``objective_value``
        (the objective's column), ``bubble_s`` and ``exposed_comm_s`` [s per step],
        ``memory_gib_per_device``, ``memory_limit_gib`` [GiB], ``within_limit``, each
        ``step_<part>_s`` [s] and ``memory_<part>_gib`` [GiB], and ``reason`` (one line).
    """
    objective = objective or result.objective
    best = result.best.get(objective)
    if best is None:
        raise ValueError(f"objective: no feasible layout for {objective!r}; nothing to explain")
    limit = 1.0 - result.memory_headroom
    acc, n = str(best["accelerator"]), int(best["devices"])
    best_est = _pinned(params, acc, n, layout_of(best))
    if best_est is None:
        raise ValueError("params: the best layout cannot be re-estimated for this job "
                         "(give the model, batch, tokens and region the search used)")
    rows = [_why_row("best", f"best for {_OBJECTIVE_WORDS[objective]}", best_est, limit,
                     objective)]
    b = rows[0]
    # the runner-up: same hardware, next in the ranking, not a ZeRO-only twin of the best
    ranking = result.top if result.objective == objective else None
    if ranking is not None:
        key = [k for k in LAYOUT_KNOBS if k != "zero"]
        same = ranking[(ranking["accelerator"] == acc) & (ranking["devices"] == n)]
        for _, r in same.iterrows():
            if any(layout_of(r)[k] != layout_of(best)[k] for k in key):
                est = _pinned(params, acc, n, layout_of(r))
                if est is not None:
                    rows.append(_why_row("runner-up", "next in the ranking", est, limit,
                                         objective))
                break
    variants = []
    for what, lay in one_knob_variants(layout_of(best)):
        est = _pinned(params, acc, n, lay)
        if est is not None:
            variants.append(_why_row("", what, est, limit, objective))
    over = [v for v in variants if not v["within_limit"]]
    fits = [v for v in variants if v["within_limit"]]
    chosen = []
    if over:
        chosen.append({**min(over, key=lambda v: v["step_time_s"]), "role": "over memory"})
    for role, col in (("bubble", "bubble_s"), ("communication", "exposed_comm_s")):
        worse = [v for v in fits if v[col] > b[col] * 1.05 + 1e-9
                 and v["change"] not in {c["change"] for c in chosen}]
        if worse:
            chosen.append({**max(worse, key=lambda v: v[col] - b[col]), "role": role})
    rows += chosen
    for r in rows:
        r["reason"] = _why_reason(r, b, objective)
    df = pd.DataFrame(rows)
    df.index = [f"{r['role']}: {r['change']}" if r["role"] not in ("best", "runner-up")
                else r["role"] for r in rows]
    return df


def _why_reason(r: dict, b: dict, objective: str) -> str:
    """One line: why row ``r`` loses to the best row ``b`` (or what the best is)."""
    step = r["step_time_s"]
    if r["role"] == "best":
        return (f"{sig(step)} s per step, {sig(r['bubble_s'])} s bubble, "
                f"{sig(r['exposed_comm_s'])} s exposed communication; "
                f"{sig(r['memory_gib_per_device'])} GiB of {sig(r['memory_limit_gib'])} allowed")
    if r["role"] == "over memory":
        faster = (f"; its step would be {sig(100 * (1 - step / b['step_time_s']))} % faster"
                  if step < b["step_time_s"] else "")
        return (f"needs {sig(r['memory_gib_per_device'])} GiB per device, over the "
                f"{sig(r['memory_limit_gib'])} GiB limit{faster}")
    if r["role"] == "bubble":
        return (f"pipeline bubble {sig(r['bubble_s'])} s per step "
                f"({sig(100 * r['bubble_s'] / step)} % of it) vs {sig(b['bubble_s'])} s")
    if r["role"] == "communication":
        return (f"exposed communication {sig(r['exposed_comm_s'])} s per step "
                f"({sig(100 * r['exposed_comm_s'] / step)} % of it) vs "
                f"{sig(b['exposed_comm_s'])} s")
    # runner-up: how much worse on the objective, and the part that grew the most
    worse = 100 * (r["objective_value"] / b["objective_value"] - 1) if b["objective_value"] \
        else float("nan")
    parts = {k: r[f"step_{k}_s"] - b[f"step_{k}_s"] for k in plotting.STEP_LABELS}
    up, down = max(parts, key=parts.get), min(parts, key=parts.get)
    moved = [f"{plotting.STEP_LABELS[k]} {'+' if parts[k] > 0 else '-'}{sig(abs(parts[k]))} s"
             for k in (up, down) if abs(parts[k]) > 1e-9 * max(step, 1e-30)]
    return (f"{sig(worse)} % worse on {_OBJECTIVE_WORDS[objective]}"
            + (f" (per step: {', '.join(moved)})" if moved else ""))


def why_lose_rows(df: pd.DataFrame) -> tuple[dict, dict]:
    """:func:`why_others_lose`'s table as the two row mappings of
    :func:`traincost.plotting.why_lose_bars`: step parts [s] and memory parts [% of HBM]."""
    from .model import MEMORY_PARTS, STEP_PARTS

    steps, memory = {}, {}
    for label, r in df.iterrows():
        name = f"{label}\n{r['layout']}"
        steps[name] = {k: float(r[f"step_{k}_s"]) for k in STEP_PARTS}
        memory[name] = {k: 100.0 * float(r[f"memory_{k}_gib"]) / float(r["hbm_gib_per_device"])
                        for k in MEMORY_PARTS}
    return steps, memory


def why_lose_html(df: pd.DataFrame) -> str:
    """:func:`why_others_lose`'s table: layout, step time, memory and the reason."""
    out = pd.DataFrame(index=df.index)
    out.index.name = "layout"
    out["knobs"] = df["layout"]
    out["step [s]"] = [sig(v) for v in df["step_time_s"]]
    out["memory [GiB]"] = [sig(v) for v in df["memory_gib_per_device"]]
    out["why"] = df["reason"]
    return out.to_html(escape=True, border=0, classes="traincost-table")


def find_best_layout(model: str = "llama2-70b", accelerators=FIND_ACCELERATORS,
                     device_counts=FIND_DEVICE_COUNTS, objective: str = "cost",
                     max_days: float | None = None, max_cost_usd: float | None = None,
                     max_co2e_t: float | None = None, memory_headroom: float | None = None,
                     tokens: float | None = None, region: str = "world",
                     global_batch: int = 1024, auto: bool = True) -> widgets.VBox:
    """Search every parallel layout for the best one: Pareto fronts, top table, why others lose.

    Parameters
    ----------
    model : str
        Model preset id.
    accelerators : sequence of str
        Accelerator ids selected at start.
    device_counts : sequence of int
        Device counts tried for each accelerator. [-]
    objective : str
        ``time``, ``cost``, ``energy`` or ``carbon``. [-]
    max_days : float, optional
        Deadline. [days]
    max_cost_usd : float, optional
        Budget. [USD]
    max_co2e_t : float, optional
        Carbon cap. [tCO2e]
    memory_headroom : float, optional
        Share of device memory kept free; the assumptions' default when None. [-]
    tokens : float, optional
        Training tokens; the preset's when None. [tokens]
    region : str
        Grid region id. [-]
    global_batch : int
        Sequences per optimizer step. [sequences]
    auto : bool
        Recompute as soon as a control changes (else only on the Search button). [-]

    Returns
    -------
    ipywidgets.VBox
        ``controls`` (inputs, including ``auto``), ``button`` (Search), ``progress``
        (IntProgress fed by the search's progress callback), ``message`` (HTML: one line
        when the input is invalid or nothing is feasible), ``summary`` (HTML), ``chart``
        (Image: Pareto fronts), ``table`` (HTML: best layouts), ``notes`` (HTML: MFU
        against published runs, memory warnings), ``losers`` (Image) and ``why`` (HTML)
        for :func:`why_others_lose`; ``result`` (the SearchResult, None after an error),
        ``best`` (the best row for the objective, or None), ``why_table`` and
        ``refresh()``.
    """
    from .assumptions import DEFAULT as _DEFAULT_ASSUMPTIONS

    acc_ids = list(catalog.accelerators().index)
    for acc in accelerators:
        _check_choice("accelerator", acc, acc_ids)
    _check_choice("objective", objective, [v for _, v in OBJECTIVE_CHOICES])
    headroom = (_DEFAULT_ASSUMPTIONS.memory_headroom_fraction if memory_headroom is None
                else memory_headroom)

    def optional(value, description, placeholder):
        return widgets.Text(value="" if value is None else str(value), description=description,
                            placeholder=placeholder, continuous_update=False, style=_STYLE,
                            layout=_WIDE)

    controls = {
        "model": _model_dropdown(model),
        "tokens": _tokens_text(model, tokens),
        "region": _region_dropdown(region),
        "devices": widgets.Text(value=", ".join(str(n) for n in device_counts),
                                description="device counts", continuous_update=False,
                                style=_STYLE, layout=_WIDE),
        "objective": widgets.ToggleButtons(options=OBJECTIVE_CHOICES, value=objective,
                                           description="best for",
                                           style={**_STYLE, "button_width": "80px"}),
        "max_days": optional(max_days, "deadline [days]", "blank = none"),
        "max_cost": optional(max_cost_usd, "budget [USD]", "blank = none"),
        "max_co2e": optional(max_co2e_t, "carbon cap [tCO2e]", "blank = none"),
        "headroom": widgets.FloatSlider(value=headroom, min=0.0, max=0.5, step=0.01,
                                        description="memory headroom [-]",
                                        continuous_update=False, style=_STYLE, layout=_WIDE),
        "accelerators": widgets.SelectMultiple(options=acc_ids, value=tuple(accelerators),
                                               rows=10, description="accelerators",
                                               style={"description_width": "90px"},
                                               layout=widgets.Layout(width="300px")),
        "auto": widgets.Checkbox(value=auto, description="recompute on every change",
                                 indent=False),
    }
    button = widgets.Button(description="Search", button_style="primary", icon="search")
    progress = widgets.IntProgress(value=0, min=0, max=1, description="layouts",
                                   style={"description_width": "60px"},
                                   layout=widgets.Layout(width="420px"))
    message, summary, table, notes, why = (widgets.HTML() for _ in range(5))
    chart = widgets.Image(format="png", layout=widgets.Layout(max_width="1000px"))
    losers = widgets.Image(format="png", layout=widgets.Layout(max_width="1000px"))
    left = widgets.VBox([controls[k] for k in ("model", "tokens", "region", "devices",
                                                "max_days", "max_cost", "max_co2e",
                                                "headroom")])
    box = widgets.VBox([widgets.HBox([left, controls["accelerators"]]), controls["objective"],
                        widgets.HBox([button, controls["auto"], progress]), message, summary,
                        chart, notes, table, losers, why])
    box.controls, box.button, box.progress, box.message, box.summary = \
        controls, button, progress, message, summary
    box.chart, box.table, box.notes, box.losers, box.why = chart, table, notes, losers, why
    box.result, box.best, box.why_table = None, None, None

    def on_progress(done, total):
        progress.max = max(int(total), 1)
        progress.value = min(int(done), progress.max)

    def clear():
        for w in (summary, table, notes, why):
            w.value = ""
        for img in (chart, losers):
            img.value = b""
            img.layout.display = "none"

    def update():
        p = {"model": controls["model"].value, "accelerators": controls["accelerators"].value,
             "device_counts": parse_device_counts(controls["devices"].value),
             "global_batch": global_batch, "tokens": controls["tokens"].value * GIGA,
             "region": controls["region"].value, "objective": controls["objective"].value,
             "max_days": parse_optional_number(controls["max_days"].value, "deadline",
                                               "days"),
             "max_cost_usd": parse_optional_number(controls["max_cost"].value, "budget",
                                                   "USD"),
             "max_co2e_t": parse_optional_number(controls["max_co2e"].value, "carbon cap",
                                                 "tCO2e"),
             "memory_headroom": controls["headroom"].value}
        progress.value, progress.bar_style = 0, ""
        res = _ok(run_search(p, progress=on_progress))
        box.result = res
        best = res.best.get(p["objective"])
        box.best = best
        progress.bar_style = "success"
        summary.value = best_summary_html(res)
        if best is None:
            text = "; ".join(res.notes) or "no layout meets the constraints"
            if p["objective"] == "cost" and res.layouts_feasible:
                text = ("cost: none of the selected accelerators has a catalog price; "
                        "choose time, energy or carbon, or add a priced accelerator")
            message.value = _message_html(explore.plain_reason(text))
            for w in (table, notes, why):
                w.value = ""
            for img in (chart, losers):
                img.value = b""
                img.layout.display = "none"
            box.why_table = None
            return
        message.value = ""
        chart.value = _png(plotting.pareto_plot(res))
        chart.layout.display = None
        notes.value = search_notes_html(res)
        table.value = top_table(res).to_html(escape=True, border=0, classes="traincost-table")
        lose = why_others_lose(res, p)
        box.why_table = lose
        steps, memory = why_lose_rows(lose)
        losers.value = _png(plotting.why_lose_bars(
            steps, memory, limit_fraction=1 - res.memory_headroom,
            title=f"Why the others lose, on {best['accelerator']} × {best['devices']}"))
        losers.layout.display = None
        why.value = why_lose_html(lose)

    def on_error(text):
        box.result, box.best, box.why_table = None, None, None
        progress.value, progress.bar_style = 0, "danger"
        message.value = _message_html(text)
        clear()

    refresh = _Refresher(update, on_error)

    def on_change(_change=None):
        if controls["auto"].value:
            refresh()

    def on_model(change):
        refresh.set_quietly(controls["tokens"], preset_tokens(change["new"]) / GIGA)
        on_change()

    controls["model"].observe(on_model, names="value")
    for key, control in controls.items():
        if key not in ("model", "auto"):
            control.observe(on_change, names="value")
    button.on_click(lambda _button: refresh())
    box.refresh = refresh
    refresh()
    return box


# ======================================================================================
# 07: validation against published runs
# ======================================================================================
def filter_validation(table: pd.DataFrame, families=None,
                      model_gaps: bool = True) -> pd.DataFrame:
    """Rows of :func:`traincost.validate.compare_published`'s table for some families.

    Parameters
    ----------
    table : pandas.DataFrame
        The comparison table.
    families : sequence of str, optional
        Metric families to keep (``throughput``, ``device_hours``, ...); all when None.
    model_gaps : bool
        Keep the rows a model gap spoils (:func:`traincost.plotting.model_gap_mask`). [-]
    """
    keep = pd.Series(True, index=table.index)
    if families is not None:
        families = list(families)
        if not families:
            raise ValueError("families: select at least one metric family")
        unknown = sorted(set(families) - set(table["family"]))
        if unknown:
            raise ValueError(f"families: unknown {unknown[0]!r}; allowed: "
                             f"{', '.join(dict.fromkeys(table['family']))}")
        keep &= table["family"].isin(families)
    if not model_gaps:
        keep &= ~plotting.model_gap_mask(table)
    return table[keep]


def validation_summary_table(table: pd.DataFrame) -> pd.DataFrame:
    """:func:`traincost.validate.summary` of a table, rounded, units in the headers."""
    from .validate import summary

    s = summary(table)
    out = pd.DataFrame(index=s.index)
    out.index.name = "metric family"
    out["figures"] = s["cases"]
    out["mean abs. error [%]"] = [sig(v) for v in s["mape_pct"]]
    out["mean signed error [%]"] = [sig(v) for v in s["mean_signed_pct"]]
    out["worst case"] = s["worst_case"]
    out["worst error [%]"] = [sig(v) for v in s["worst_pct"]]
    return out


def validation_cases_html(table: pd.DataFrame, limit: int = 200) -> str:
    """The compared figures, worst first: case, metric, predicted, published, error, gap."""
    t = table.dropna(subset=["error_pct"])
    t = t.reindex(t["error_pct"].abs().sort_values(ascending=False).index)[:limit]
    gap = plotting.model_gap_mask(t)
    out = pd.DataFrame({"case": t["case"], "metric": t["metric"],
                        "predicted": [sig(v) for v in t["predicted"]],
                        "published": [sig(v) for v in t["reported"]],
                        "error [%]": [sig(v) for v in t["error_pct"]],
                        "model gap": [g if is_gap else "" for g, is_gap
                                      in zip(t["model_gap"], gap)]})
    return out.to_html(index=False, escape=True, border=0, classes="traincost-table")


def validation_explorer(table: pd.DataFrame | None = None, families=None,
                        model_gaps: bool = True, band_pct: float = 10.0) -> widgets.VBox:
    """Predicted vs published runs, filtered by metric family: summary, scatter, cases.

    Parameters
    ----------
    table : pandas.DataFrame, optional
        :func:`traincost.validate.compare_published`'s table (computed when None: about
        a second).
    families : sequence of str, optional
        Families selected at start; all when None.
    model_gaps : bool
        Show the model-gap cases (hollow in the chart). [-]
    band_pct : float
        Half-width of the band around predicted = published. [%]

    Returns
    -------
    ipywidgets.VBox
        ``controls`` (``families``, ``model_gaps``, ``band``), ``message``, ``summary``
        (HTML: :func:`validation_summary_table`), ``chart`` (Image), ``table`` (HTML: the
        figures, worst first), ``result`` (the filtered table, None after an error),
        ``refresh()``.
    """
    if table is None:
        from .validate import compare_published

        table = compare_published()
    all_families = list(dict.fromkeys(table["family"]))
    selected = all_families if families is None else list(families)
    for f in selected:
        _check_choice("family", f, all_families)
    controls = {
        "families": widgets.SelectMultiple(options=all_families, value=tuple(selected),
                                           rows=len(all_families), description="families",
                                           style={"description_width": "70px"},
                                           layout=widgets.Layout(width="300px")),
        "model_gaps": widgets.Checkbox(value=model_gaps, indent=False,
                                       description="show model-gap cases (hollow)"),
        "band": widgets.FloatSlider(value=band_pct, min=1.0, max=50.0, step=1.0,
                                    description="band ± [%]", continuous_update=False,
                                    style={"description_width": "80px"}),
    }
    message, summary, cases = widgets.HTML(), widgets.HTML(), widgets.HTML()
    chart = widgets.Image(format="png", layout=widgets.Layout(max_width="1000px"))
    box = widgets.VBox([widgets.HBox([controls["families"],
                                      widgets.VBox([controls["model_gaps"], controls["band"]])]),
                        message, summary, chart, cases])
    box.controls, box.message, box.summary, box.chart, box.table, box.result = \
        controls, message, summary, chart, cases, None

    def update():
        t = filter_validation(table, controls["families"].value, controls["model_gaps"].value)
        if t.dropna(subset=["error_pct"]).empty:
            raise ValueError("families: no compared figure left; select more families or "
                             "show the model-gap cases")
        box.result = t
        message.value = ""
        summary.value = validation_summary_table(t).to_html(escape=True, border=0,
                                                            classes="traincost-table")
        chart.value = _png(plotting.validation_scatter(t, band_pct=controls["band"].value))
        chart.layout.display = None
        cases.value = validation_cases_html(t)

    on_error = _clears(box, message, [summary, cases], [chart])

    return _Refresher(update, on_error).attach(box, controls)


def case_html(case: dict) -> str:
    """One published case in full (:func:`traincost.validate.explain_case`) as HTML: its
    source, what it states and what the validation assumed, the predicted layout and step,
    predicted against published, and the estimate's caveats."""
    est = case["estimate"].to_dict()
    p = est["parallel"]
    esc = html.escape
    gap = (f"<div style='border-left:3px solid #D55E00;padding:4px 10px;margin:6px 0'>"
           f"<b>Model gap</b> (out of the fit): {esc(case['model_gap'])}</div>"
           if case["model_gap"] else "")
    stated = ", ".join(f"{k} {sig(v) if isinstance(v, float) else v}"
                       for k, v in case["inputs"].items())
    cells = [("Layout", f"tp{p['tp']} pp{p['pp']} dp{p['dp']} vpp{p['vpp']} "
                        f"b{p['micro_batch']} {p['recompute']} z{p['zero']}"),
             ("Step", f"{sig(est['step_time_s'])} s"),
             ("MFU", f"{sig(100 * est['mfu'])} %"),
             ("Memory", f"{sig(est['memory_gib_per_device'])} of "
                        f"{sig(est['hbm_gib_per_device'])} GiB")]
    t = case["comparisons"]
    compared = pd.DataFrame({"metric": t["metric"], "predicted": [sig(v) for v in t["predicted"]],
                             "published": [sig(v) for v in t["reported"]],
                             "error [%]": [sig(v) for v in t["error_pct"]]})
    caveats = "".join(f"<li>{esc(c)}</li>" for c in est.get("caveats", []))
    return (f"<h4>{esc(case['case'])}: {esc(case['name'])}</h4>"
            f"<div><b>Source</b> ({esc(case['status'])}): {esc(case['source'])}; "
            f"{esc(case['source_locator'])} ({esc(str(case['source_date']))})</div>{gap}"
            f"<div><b>Stated</b>: {esc(stated)}</div>"
            f"<div><b>Assumed</b>: {esc(case['note'] or 'nothing beyond the model')}</div>"
            + _cards(cells)
            + compared.to_html(index=False, escape=True, border=0, classes="traincost-table")
            + (f"<details><summary>caveats of the estimate</summary><ul>{caveats}</ul>"
               "</details>" if caveats else ""))


def case_explorer(case: str = "llama2-34b") -> widgets.VBox:
    """One published run in full: pick a case, see its source, what the validation had to
    assume, the predicted layout, where its step time and memory go, and the comparison.

    Parameters
    ----------
    case : str
        Case id of ``data/published_runs.csv`` selected at start.

    Returns
    -------
    ipywidgets.VBox
        ``controls`` (``case``), ``message``, ``summary`` (HTML: :func:`case_html`),
        ``chart`` (Image: :func:`traincost.plotting.layout_bars`), ``result`` (the dict
        of :func:`traincost.validate.explain_case`, None after an error), ``refresh()``.
    """
    from . import validate

    ids = sorted(catalog.published_runs().index)
    _check_choice("case", case, ids)
    controls = {"case": widgets.Dropdown(options=ids, value=case, description="case",
                                         style=_STYLE, layout=_WIDE)}
    message, summary = widgets.HTML(), widgets.HTML()
    chart = widgets.Image(format="png", layout=widgets.Layout(max_width="900px"))
    box = widgets.VBox([controls["case"], message, summary, chart])
    box.controls, box.message, box.summary, box.chart, box.result = \
        controls, message, summary, chart, None

    def update():
        d = validate.explain_case(controls["case"].value)
        est = d["estimate"]
        box.result = d
        message.value = ""
        summary.value = case_html(d)
        chart.value = _png(plotting.layout_bars(
            est.step_breakdown_s(), est.memory_breakdown_gib(),
            est.accelerator.hbm_bytes / GIB, label=d["case"]))
        chart.layout.display = None

    on_error = _clears(box, message, [summary], [chart])

    return _Refresher(update, on_error).attach(box, controls)
