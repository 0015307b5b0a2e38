"""Notebook 07: predicted against published runs, filtered by metric family, and one
published case in full (:mod:`traincost.validate`).
"""

from __future__ import annotations

import html

import ipywidgets as widgets
import pandas as pd

from .. import catalog, plotting
from ..units import GIB
from .kit import STYLE, wide, Refresher, cards, check_choice, clears, png, sig


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
    from ..validate import summary

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
        from ..validate import compare_published

        table = compare_published()
    all_families = list(dict.fromkeys(table["family"]))
    selected = all_families if families is None else list(families)
    for f in selected:
        check_choice("family", f, all_families)
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
        cases.value = validation_cases_html(t)     # the texts first, then the chart
        chart.value = png(plotting.validation_scatter(t, band_pct=controls["band"].value))
        chart.layout.display = None

    on_error = clears(box, message, [summary, cases], [chart])

    return Refresher(update, on_error).attach(box, controls)


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
            + cards(cells)
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
    from .. import validate

    ids = sorted(catalog.published_runs().index)
    check_choice("case", case, ids)
    controls = {"case": widgets.Dropdown(options=ids, value=case, description="case",
                                         style=STYLE, layout=wide())}
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
        chart.value = png(plotting.layout_bars(
            est.step_breakdown_s(), est.memory_breakdown_gib(),
            est.accelerator.hbm_bytes / GIB, label=d["case"]))
        chart.layout.display = None

    on_error = clears(box, message, [summary], [chart])

    return Refresher(update, on_error).attach(box, controls)
