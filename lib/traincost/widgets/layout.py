"""Notebook 04: search every parallel layout for the best one (:func:`traincost.search`):
Pareto fronts, the best layouts, and why the others lose.

The analysis is :func:`traincost.explore.why_others_lose`'s; this module adds its words
(:func:`why_others_lose` here puts a one-line ``reason`` on each row) and the widget.
"""

from __future__ import annotations

import html

import ipywidgets as widgets
import pandas as pd

from .. import catalog, explore, plotting
from ..assumptions import DEFAULT
from ..explore import OBJECTIVE_WORDS, SEARCH_ROW_KNOBS, layout_label
from ..search import search
from ..units import GIGA
from .kit import (STYLE, accelerator_select, cards, check_choice, message_html, model_dropdown,
                  parse_device_counts, parse_optional_number, png, preset_tokens, Refresher,
                  region_dropdown, sig, style_outputs, tokens_text, wide)

#: accelerators and device counts the search widget starts with
FIND_ACCELERATORS = ("a100-sxm4-80gb", "h100-sxm5-80gb", "tpu-v5p")

FIND_DEVICE_COUNTS = (256, 512, 1024)

#: (button label, traincost.search objective)
OBJECTIVE_CHOICES = (("time", "time"), ("dollars", "cost"), ("energy", "energy"),
                     ("carbon", "carbon"))

#: feasible layouts a search keeps, best first: the chart's cloud (every feasible layout
#: of the default search; bounded so a large search stays light)
SEARCH_TOP = 20_000

#: the title of the section that holds the why-the-others-lose chart
LOSERS_TITLE = "Chart: why the others lose (drawn when opened)"

#: layout knobs of a search row, in traincost.estimate's keywords
LAYOUT_KNOBS = SEARCH_ROW_KNOBS


def searched(params: dict, progress=None, top: int = SEARCH_TOP):
    """:func:`traincost.search` for the widget's parameters; raises in plain words.

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
    traincost.SearchResult

    Raises
    ------
    ValueError
        No accelerator selected, or the search's message without CLI dashes
        (:func:`traincost.explore.plain_reason`).
    """
    accelerators = list(params.get("accelerators") or ())
    if not accelerators:
        raise ValueError("accelerators: select at least one accelerator")
    try:
        return search(accelerators, list(params["device_counts"]), model=params["model"],
                      global_batch=params["global_batch"], tokens=params.get("tokens"),
                      region=params.get("region"), max_days=params.get("max_days"),
                      max_cost_usd=params.get("max_cost_usd"),
                      max_co2e_t=params.get("max_co2e_t"),
                      memory_headroom=params.get("memory_headroom"),
                      objective=params.get("objective", "time"), top=top, progress=progress)
    except ValueError as exc:
        raise ValueError(explore.plain_reason(exc)) from None


def run_search(params: dict, progress=None, top: int = SEARCH_TOP):
    """:func:`searched`, or its one-line message as a string.

    Returns
    -------
    traincost.SearchResult or str
    """
    try:
        return searched(params, progress=progress, top=top)
    except ValueError as exc:
        return str(exc)


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
    cells = [(f"Best for {OBJECTIVE_WORDS[obj]}", f"{best['accelerator']} × {best['devices']}"),
             ("Time", f"{sig(best['train_time_days'])} days"), ("Cost", cost),
             ("Carbon", f"{sig(best['co2e_t'])} tCO2e"),
             ("MFU", f"{sig(100 * best['mfu'])} %")]
    return cards(cells) + (
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


def why_others_lose(result, params: dict, objective: str | None = None) -> pd.DataFrame:
    """:func:`traincost.explore.why_others_lose`'s table with a ``reason`` per row.

    The parameters are those of :func:`traincost.explore.why_others_lose` (the search
    result, the job it was run for [model, sequences, tokens, region], and the objective
    to explain, the search's own by default).

    Returns
    -------
    pandas.DataFrame
        Its columns and ``reason``: one line on why the row loses to the best (for the
        best, what its step is made of) [s, GiB and % in the text].
    """
    objective = objective or result.objective
    df = explore.why_others_lose(result, params, objective)
    rows = df.to_dict("records")
    df["reason"] = [_why_reason(r, rows[0], objective) for r in rows]
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
    return (f"{sig(worse)} % worse on {OBJECTIVE_WORDS[objective]}"
            + (f" (per step: {', '.join(moved)})" if moved else ""))


def why_lose_rows(df: pd.DataFrame) -> tuple[dict, dict]:
    """:func:`why_others_lose`'s table as the two row mappings of
    :func:`traincost.plotting.why_lose_bars`: step parts [s] and memory parts [% of HBM]."""
    from ..model import MEMORY_PARTS, STEP_PARTS

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
        against published runs, memory warnings), ``why`` (HTML) and ``losers`` (Image,
        drawn only while its section ``losers_box``, an Accordion, is open) for
        :func:`why_others_lose`; ``result`` (the SearchResult, None after an error),
        ``best`` (the best row for the objective, or None), ``why_table`` and
        ``refresh()``.
    """
    acc_ids = list(catalog.accelerators().index)
    for acc in accelerators:
        check_choice("accelerator", acc, acc_ids)
    check_choice("objective", objective, [v for _, v in OBJECTIVE_CHOICES])
    headroom = (DEFAULT.memory_headroom_fraction if memory_headroom is None
                else memory_headroom)
    controls = _find_controls(model, tokens, region, acc_ids, accelerators, device_counts,
                              objective, max_days, max_cost_usd, max_co2e_t, headroom, auto)
    button = widgets.Button(description="Search", button_style="primary", icon="search")
    progress = widgets.IntProgress(value=0, min=0, max=1, description="layouts",
                                   style={"description_width": "60px"},
                                   layout=widgets.Layout(width="420px"))
    message, summary, table, notes, why = (widgets.HTML() for _ in range(5))
    chart = widgets.Image(format="png", layout=widgets.Layout(max_width="1000px"))
    losers = widgets.Image(format="png", layout=widgets.Layout(max_width="1000px"))
    # the slowest chart to draw: drawn when its section is open (issue 26: 0.5 s a change)
    losers_box = widgets.Accordion(children=[losers], titles=(LOSERS_TITLE,),
                                   selected_index=None)
    left = widgets.VBox([controls[k] for k in ("model", "tokens", "region", "devices",
                                                "max_days", "max_cost", "max_co2e",
                                                "headroom")])
    box = widgets.VBox([widgets.HBox([left, controls["accelerators"]]), controls["objective"],
                        widgets.HBox([button, controls["auto"], progress]), message, summary,
                        chart, notes, table, why, losers_box])
    box.controls, box.button, box.progress, box.message, box.summary = \
        controls, button, progress, message, summary
    box.chart, box.table, box.notes, box.losers, box.why = chart, table, notes, losers, why
    box.losers_box, box.losers_plot = losers_box, None
    box.result, box.best, box.why_table = None, None, None
    losers_box.observe(lambda _change: _draw_losers(box), names="selected_index")

    def on_progress(done, total):
        progress.max = max(int(total), 1)
        progress.value = min(int(done), progress.max)

    def update():
        p = _find_params(controls, global_batch)
        progress.value, progress.bar_style = 0, ""
        _show_search(box, searched(p, progress=on_progress), p)

    def on_error(text):
        box.result, box.best, box.why_table = None, None, None
        progress.value, progress.bar_style = 0, "danger"
        message.value = message_html(text)
        _clear_outputs(box)

    refresh = Refresher(update, on_error)
    _watch(box, controls, button, refresh)
    style_outputs(box)
    refresh()
    return box


def _find_controls(model, tokens, region, acc_ids, accelerators, device_counts, objective,
                   max_days, max_cost_usd, max_co2e_t, headroom, auto) -> dict:
    """The input widgets of :func:`find_best_layout`, by name."""
    def optional(value, description, placeholder):
        return widgets.Text(value="" if value is None else str(value), description=description,
                            placeholder=placeholder, continuous_update=False, style=STYLE,
                            layout=wide())

    return {
        "model": model_dropdown(model),
        "tokens": tokens_text(model, tokens),
        "region": region_dropdown(region),
        "devices": widgets.Text(value=", ".join(str(n) for n in device_counts),
                                description="device counts", continuous_update=False,
                                style=STYLE, layout=wide()),
        "objective": widgets.ToggleButtons(options=OBJECTIVE_CHOICES, value=objective,
                                           description="best for",
                                           style={**STYLE, "button_width": "80px"}),
        "max_days": optional(max_days, "deadline [days]", "blank = none"),
        "max_cost": optional(max_cost_usd, "budget [USD]", "blank = none"),
        "max_co2e": optional(max_co2e_t, "carbon cap [tCO2e]", "blank = none"),
        "headroom": widgets.FloatSlider(value=headroom, min=0.0, max=0.5, step=0.01,
                                        description="memory headroom [-]",
                                        continuous_update=False, style=STYLE, layout=wide()),
        "accelerators": accelerator_select(acc_ids, accelerators),
        "auto": widgets.Checkbox(value=auto, description="recompute on every change",
                                 indent=False),
    }


def _find_params(controls: dict, global_batch: int) -> dict:
    """:func:`searched`'s parameters from the controls (tokens [tokens], caps None: none)."""
    return {"model": controls["model"].value, "accelerators": controls["accelerators"].value,
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


def _clear_outputs(box, texts=("summary", "table", "notes", "why")) -> None:
    """Empty the search widget's HTML ``texts`` and hide its two charts."""
    for name in texts:
        getattr(box, name).value = ""
    box.chart.value, box.losers.value, box.losers_plot = b"", b"", None
    box.chart.layout.display = box.losers_box.layout.display = "none"


def _draw_losers(box) -> None:
    """Draw the why-the-others-lose chart of the last search if its section is open and
    it is not drawn yet; a closed section waits until it is opened."""
    if box.losers_box.selected_index is None or box.losers_plot is None or box.losers.value:
        return
    steps, memory, limit, title = box.losers_plot
    box.losers.value = png(plotting.why_lose_bars(steps, memory, limit_fraction=limit,
                                                  title=title))


def _show_search(box, res, p: dict) -> None:
    """Write a search result into the widget: summary, fronts, notes, table, why others lose."""
    box.result = res
    best = res.best.get(p["objective"])
    box.best = best
    box.progress.bar_style = "success"
    box.summary.value = best_summary_html(res)
    if best is None:
        text = "; ".join(res.notes) or "no layout meets the constraints"
        if p["objective"] == "cost" and res.layouts_feasible:
            text = ("cost: none of the selected accelerators has a catalog price; "
                    "choose time, energy or carbon, or add a priced accelerator")
        box.message.value = message_html(explore.plain_reason(text))
        _clear_outputs(box, ("table", "notes", "why"))
        box.why_table = None
        return
    box.message.value = ""
    # the answer's texts first (each value reaches the browser as it is set), then the
    # charts, which take most of the refresh (issue 26)
    box.notes.value = search_notes_html(res)
    box.table.value = top_table(res).to_html(escape=True, border=0, classes="traincost-table")
    lose = why_others_lose(res, p)
    box.why_table = lose
    title = f"Why the others lose, on {best['accelerator']} × {best['devices']}"
    box.why.value = f"<b>{html.escape(title)}</b>" + why_lose_html(lose)
    box.chart.value = png(plotting.pareto_plot(res))
    box.chart.layout.display = None
    steps, memory = why_lose_rows(lose)
    box.losers.value = b""
    box.losers_plot = (steps, memory, 1 - res.memory_headroom, title)
    box.losers_box.layout.display = None
    _draw_losers(box)


def _watch(box, controls: dict, button, refresh) -> None:
    """Recompute on a change when ``auto`` is on, and on the button; a new preset resets
    the tokens first."""
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
