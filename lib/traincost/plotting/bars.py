"""Bar charts: one run across accelerators (small multiples), and stacked bars of memory per
device, step time, FLOP per token and carbon by region.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle
from matplotlib.ticker import FuncFormatter

from .base import _GAP_COLOUR, DEFAULT_METRICS, METRIC_LABELS, OKABE_ITO, _short_number, _unit_of


def gap_reason(row: pd.Series, metric: str) -> str:
    """Why ``row`` has no bar for ``metric`` (empty string when it has one).

    Parameters
    ----------
    row : pandas.Series
        One row of :func:`traincost.compare`'s table.
    metric : str
        Column name.

    Returns
    -------
    str
        ``'does not fit in memory'``, ``'cannot run (see note)'``, ``'no price in catalog'``
        or ``'n/a'``; ``''`` when the value can be drawn.
    """
    value = pd.to_numeric(pd.Series([row.get(metric)]), errors="coerce").iloc[0]
    if "fits_in_memory" in row.index:
        fits = row["fits_in_memory"]
        if pd.isna(fits):
            return "cannot run (see note)"
        if not bool(fits):
            return "does not fit in memory"
    if pd.isna(value):
        return "no price in catalog" if metric == "cost_usd" else "n/a"
    return ""


def _axes_for(target, n: int, n_rows: int) -> tuple[Figure, list[Axes]]:
    """A figure and ``n`` side-by-side axes sharing the y axis (accelerators)."""
    if target is None or isinstance(target, Figure):
        fig = Figure(figsize=(3.1 * n + 1.6, 0.42 * n_rows + 1.9), layout="constrained") \
            if target is None else target
        axes = fig.subplots(1, n, sharey=True, squeeze=False)[0]
        return fig, list(axes)
    axes = list(target) if isinstance(target, Sequence) or isinstance(target, np.ndarray) \
        else [target]
    if len(axes) != n or not all(isinstance(a, Axes) for a in axes):
        raise ValueError(f"ax: expected None, a Figure or {n} Axes (one per metric), "
                         f"got {target!r}")
    return axes[0].figure, axes


def compare_bars(df: pd.DataFrame, metrics: Sequence[str] = DEFAULT_METRICS, ax=None, *,
                 title: str | None = None) -> Figure:
    """Small-multiple horizontal bar charts of :func:`traincost.compare`'s table.

    One panel per metric, one bar per accelerator (same colour in every panel, so a
    reader can follow one accelerator across panels). An accelerator without a value
    (does not fit in memory, no valid layout, no catalog price) gets a hatched grey
    band with the reason written in it instead of being dropped.

    Parameters
    ----------
    df : pandas.DataFrame
        Indexed by accelerator id, with the columns in ``metrics`` and ideally
        ``fits_in_memory`` and ``note`` (as :func:`traincost.compare` returns). Where it
        has ``<metric>_p10`` and ``<metric>_p90`` (``compare(..., uncertainty=True)``),
        each bar carries a whisker over that 80% range.
    metrics : sequence of str
        Columns to draw, each its own panel. Defaults to training time [days],
        facility energy [MWh], operational emissions [tCO2e] and cost [USD].
    ax : None, matplotlib.figure.Figure or sequence of Axes
        Where to draw: a new figure (None), subplots added to a given figure, or one
        existing Axes per metric.
    title : str, optional
        Figure title; by default one that says how to read the chart.

    Returns
    -------
    matplotlib.figure.Figure
        The figure; bar rectangles carry the accelerator id as their ``gid``.

    Notes
    -----
    Values are drawn as they are in ``df`` (no rescaling); tick labels use k/M
    suffixes. Gaps are not zero-length bars: zero would read as "free".
    """
    metrics = list(metrics)
    if not metrics:
        raise ValueError("metrics: give at least one column to plot")
    missing = [m for m in metrics if m not in df.columns]
    if missing:
        raise ValueError(f"metrics: {missing[0]!r} is not a column of the table; "
                         f"columns: {', '.join(map(str, df.columns))}")
    if len(df) == 0:
        raise ValueError("df: the table has no rows (select at least one accelerator)")
    fig, axes = _axes_for(ax, len(metrics), len(df))
    banded = False
    ids = [str(i) for i in df.index]
    y = np.arange(len(ids))
    colours = {acc: OKABE_ITO[i % len(OKABE_ITO)] for i, acc in enumerate(ids)}

    for axis, metric in zip(axes, metrics):
        label, short = METRIC_LABELS.get(metric, (metric, metric))
        unit = _unit_of(metric)
        values = pd.to_numeric(df[metric], errors="coerce").to_numpy(dtype=float)
        band = [f"{metric}_p10", f"{metric}_p90"]
        lo, hi = (pd.to_numeric(df[c], errors="coerce").to_numpy(dtype=float)
                  if c in df.columns else np.full(len(ids), np.nan) for c in band)
        reasons = [gap_reason(df.iloc[i], metric) for i in range(len(ids))]
        drawn = [v for v, r in zip(np.fmax(values, hi), reasons) if not r]
        finite_max = max(drawn) if drawn and max(drawn) > 0 else 1.0
        for yi, acc, value, reason in zip(y, ids, values, reasons):
            if reason:
                # a band across the whole panel (x in axes coordinates, y in data)
                axis.add_patch(Rectangle((0.0, yi - 0.4), 1.0, 0.8,
                                         transform=axis.get_yaxis_transform(),
                                         facecolor="none", edgecolor=_GAP_COLOUR,
                                         hatch="///", linewidth=0.0, gid=f"gap:{acc}"))
                axis.text(0.02, yi, reason, transform=axis.get_yaxis_transform(),
                          va="center", ha="left", fontsize=8, color="#444444",
                          bbox={"facecolor": "white", "edgecolor": "none", "pad": 1.0})
                continue
            bars = axis.barh(yi, value, height=0.7, color=colours[acc], edgecolor="black",
                             linewidth=0.5)
            bars.patches[0].set_gid(acc)
            end = value
            i = ids.index(acc)
            if np.isfinite(lo[i]) and np.isfinite(hi[i]):
                axis.errorbar([value], [yi], xerr=[[value - lo[i]], [hi[i] - value]],
                              fmt="none", ecolor="black", elinewidth=1.0, capsize=3,
                              gid=f"band:{acc}")
                end, banded = max(value, hi[i]), True
            axis.text(end + 0.02 * finite_max, yi, _short_number(value, unit),
                      va="center", ha="left", fontsize=8)
        axis.set_xlim(0.0, 1.3 * finite_max)
        axis.set_xlabel(label)
        axis.set_title(short, fontsize=10)
        axis.xaxis.set_major_formatter(FuncFormatter(lambda v, _pos, u=unit: _short_number(v, u)))
        axis.locator_params(axis="x", nbins=4)
        if not drawn:
            axis.set_xticks([])
        axis.grid(axis="x", color="#DDDDDD", linewidth=0.6)
        axis.set_axisbelow(True)
        for side in ("top", "right"):
            axis.spines[side].set_visible(False)
    axes[0].set_yticks(y, ids)
    axes[0].set_ylim(len(ids) - 0.5, -0.5)          # first accelerator at the top
    axes[0].set_ylabel("Accelerator")
    fig.suptitle(title or "Same training run on each accelerator: shorter bars are better",
                 fontsize=11, fontweight="bold")
    if banded:
        # supxlabel: the constrained layout keeps room for it below the axis labels
        fig.supxlabel("whiskers: 80% range (p10-p90) from the model's error on published "
                      "runs it was not fitted on and the sourced input ranges",
                      fontsize=8, color="#444444")
    return fig


# --------------------------------------------------------------------------------------
# stacked bars: memory per device, step time, FLOP per token, carbon by region
# --------------------------------------------------------------------------------------
#: colour of each memory part (same in every chart of the suite)
MEMORY_COLOURS = {"weights": OKABE_ITO[0], "gradients": OKABE_ITO[1],
                  "optimizer": OKABE_ITO[2], "activations": OKABE_ITO[3],
                  "gathered": OKABE_ITO[5], "reserved": OKABE_ITO[7]}

MEMORY_LABELS = {"weights": "weights", "gradients": "gradients",
                 "optimizer": "optimizer states", "activations": "activations",
                 "gathered": "gathered (ZeRO-3)", "reserved": "reserved (framework)"}

#: colour of each step-time part; compute is blue, the waiting parts are the others
STEP_COLOURS = {"compute": OKABE_ITO[0], "tp_comm": OKABE_ITO[1], "cp_comm": OKABE_ITO[4],
                "ep_comm": OKABE_ITO[5], "pp_comm": OKABE_ITO[6], "bubble": OKABE_ITO[7],
                "dp_comm": OKABE_ITO[2], "optimizer": OKABE_ITO[3],
                "stragglers": "#882255",          # Tol's 'wine', past Okabe-Ito's eight
                "cross_site_comm": "#44AA99",     # Tol's 'teal'
                "layer_overhead": "#DDCC77"}      # Tol's 'sand'

STEP_LABELS = {"compute": "compute", "layer_overhead": "framework's fixed time a layer",
               "tp_comm": "exposed TP comm.",
               "cp_comm": "exposed CP comm.", "ep_comm": "exposed EP comm.",
               "pp_comm": "exposed PP sends", "stragglers": "waiting for stragglers",
               "bubble": "pipeline bubble",
               "dp_comm": "exposed DP comm.", "cross_site_comm": "crossing the sites",
               "optimizer": "optimizer step"}

#: FLOP-per-token parts (see :func:`traincost.explore.flop_per_token_parts`)
FLOP_COLOURS = {"layer_matmuls": OKABE_ITO[0], "attention_core": OKABE_ITO[1],
                "output_layer": OKABE_ITO[2], "recompute": OKABE_ITO[7]}

FLOP_LABELS = {"layer_matmuls": "layer matmuls (6 x weights)",
               "attention_core": "attention scores (QK^T, softmax x V)",
               "output_layer": "output layer (logits)", "recompute": "recomputed forward"}

CARBON_COLOURS = {"operational": OKABE_ITO[3], "embodied": OKABE_ITO[4]}

CARBON_LABELS = {"operational": "operational (grid x energy at the plug)",
                 "embodied": "embodied (manufacturing, amortised)"}


def stacked_bars(rows, parts: Sequence[str], *, colours: dict, part_labels: dict,
                 xlabel: str, title: str, unit: str = "", limit: float | None = None,
                 limit_label: str | None = None, label_at=None, ax=None) -> Figure:
    """Horizontal stacked bars: one bar per row, one coloured segment per part.

    Parameters
    ----------
    rows : mapping of str to mapping of str to float
        ``{row label: {part: value}}`` in drawing order (first at the top). A part a
        row lacks counts as 0.
    parts : sequence of str
        Parts in stacking order (left to right). Parts that are zero in every row are
        left out of the legend.
    colours, part_labels : dict
        Colour and legend label of each part.
    xlabel, title : str
        Axis label (with unit) and a title that says what to look at.
    unit : str
        Unit for the total written at each bar's end (``"USD"`` gives ``$``). [-]
    limit : float, optional
        A capacity drawn as a dashed vertical line (e.g. HBM); bars past it are marked
        "over the limit". [same unit as the values]
    limit_label : str, optional
        Text beside the line.
    label_at : sequence of float, optional
        Where each row's total is written (default: at the total), e.g. past a whisker.
    ax : matplotlib Axes, optional
        Draw into it instead of a new figure.

    Returns
    -------
    matplotlib.figure.Figure
        Segments carry ``gid`` ``"<row>:<part>"``; the limit line has gid ``"limit"``.
    """
    rows = {str(k): dict(v) for k, v in dict(rows).items()}
    if not rows:
        raise ValueError("rows: give at least one bar")
    parts = list(parts)
    unknown = sorted({p for r in rows.values() for p in r} - set(parts))
    if unknown:
        raise ValueError(f"rows: unknown part {unknown[0]!r}; parts: {', '.join(parts)}")
    values = {label: [float(r.get(p, 0.0) or 0.0) for p in parts] for label, r in rows.items()}
    bad = [(label, v) for label, vs in values.items() for v in vs if not math.isfinite(v) or v < 0]
    if bad:
        raise ValueError(f"rows: {bad[0][0]!r} has a negative or non-finite part ({bad[0][1]})")
    if ax is None:
        fig = Figure(figsize=(9.0, 0.4 * len(rows) + 1.9), layout="constrained")
        ax = fig.add_subplot()
    elif isinstance(ax, Axes):
        fig = ax.figure
    else:
        raise ValueError(f"ax: expected None or a matplotlib Axes, got {ax!r}")
    labels = list(values)
    totals = [sum(v) for v in values.values()]
    in_legend = set()               # one legend entry per part that appears somewhere
    for y, label in enumerate(labels):
        left = 0.0
        for part, value in zip(parts, values[label]):
            if value <= 0:
                continue
            bar = ax.barh(y, value, left=left, height=0.6, color=colours[part],
                          edgecolor="black", linewidth=0.5,
                          label=None if part in in_legend else part_labels.get(part, part))
            bar.patches[0].set_gid(f"{label}:{part}")
            in_legend.add(part)
            left += value
    at = totals if label_at is None else [max(t, float(x)) for t, x in zip(totals, label_at)]
    top = max(totals + ([limit] if limit is not None else [])) or 1.0
    top = max(top, max(at) / 1.15)                # room for a label past a whisker
    for y, total in enumerate(totals):
        text = _short_number(total, unit)
        if limit is not None and total > limit:
            text += "  over the limit"
        ax.text(at[y] + 0.01 * top, y, text, va="center", ha="left", fontsize=8,
                color="#D55E00" if limit is not None and total > limit else "black",
                bbox={"facecolor": "white", "edgecolor": "none", "pad": 1.0})
    if limit is not None:
        line = ax.axvline(limit, color="black", linestyle="--", linewidth=1.2)
        line.set_gid("limit")
        if limit_label:
            ax.text(limit, -0.75, f" {limit_label}", ha="left", va="bottom", fontsize=8)
    ax.set_xlim(0.0, 1.3 * top)
    ax.set_yticks(range(len(labels)), labels)
    ax.set_ylim(len(labels) - 0.4, -0.9)
    ax.set_xlabel(xlabel)
    ax.set_title(title, fontsize=11, fontweight="bold", loc="left")
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _pos: _short_number(v, unit)))
    ax.grid(axis="x", color="#DDDDDD", linewidth=0.6)
    ax.set_axisbelow(True)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    handles, names = ax.get_legend_handles_labels()
    if handles:
        order = [names.index(part_labels.get(p, p)) for p in parts
                 if part_labels.get(p, p) in names]
        ax.legend([handles[i] for i in order], [names[i] for i in order], fontsize=8,
                  loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)
    return fig


def memory_bars(rows, hbm_gib: float, *, title: str | None = None, ax=None) -> Figure:
    """Memory per device, stacked by part, against the device's memory (dashed line).

    Parameters
    ----------
    rows : mapping
        ``{label: Estimate.memory_breakdown_gib()}``. [GiB]
    hbm_gib : float
        Device memory. [GiB]
    title : str, optional
        By default says how to read the chart.
    ax : matplotlib Axes, optional

    Returns
    -------
    matplotlib.figure.Figure
    """
    from ..model import MEMORY_PARTS

    return stacked_bars(rows, MEMORY_PARTS, colours=MEMORY_COLOURS, part_labels=MEMORY_LABELS,
                        xlabel="Memory per device [GiB]",
                        title=title or "Memory per device: a bar past the dashed line does not fit",
                        limit=hbm_gib, limit_label=f"device memory {hbm_gib:.3g} GiB", ax=ax)


def step_bars(rows, *, title: str | None = None, ax=None) -> Figure:
    """Where the time of one optimizer step goes, stacked by part.

    Parameters
    ----------
    rows : mapping
        ``{label: Estimate.step_breakdown_s()}``. [s]
    title : str, optional
    ax : matplotlib Axes, optional

    Returns
    -------
    matplotlib.figure.Figure
    """
    from ..model import STEP_PARTS

    return stacked_bars(rows, STEP_PARTS, colours=STEP_COLOURS, part_labels=STEP_LABELS,
                        xlabel="Time per optimizer step [s]",
                        title=title or "One training step: only the blue part is compute",
                        unit="s", ax=ax)


def flop_bars(rows, *, title: str | None = None, ax=None) -> Figure:
    """Training FLOP per token, stacked by where they are spent.

    Parameters
    ----------
    rows : mapping
        ``{label: traincost.explore.flop_per_token_parts(...)}``. [FLOP]
    """
    return stacked_bars(rows, tuple(FLOP_COLOURS), colours=FLOP_COLOURS,
                        part_labels=FLOP_LABELS, xlabel="Training FLOP per token [FLOP]",
                        title=title or "Where the FLOP go: matmuls dominate, recompute adds",
                        ax=ax)


def carbon_bars(df: pd.DataFrame, *, title: str | None = None, ax=None) -> Figure:
    """Operational and embodied emissions of the same run in several regions.

    Parameters
    ----------
    df : pandas.DataFrame
        Indexed by a region label, with ``co2e_t`` and ``embodied_co2e_t`` (NaN when
        the catalog has no embodied figure: drawn as 0), and optionally ``co2e_t_p10``
        and ``co2e_t_p90``: a whisker over the operational part's 80% range. [tCO2e]
    """
    if len(df) == 0:
        raise ValueError("df: the table has no rows (select at least one region)")
    rows = {str(label): {"operational": float(r["co2e_t"]),
                         "embodied": 0.0 if pd.isna(r["embodied_co2e_t"])
                         else float(r["embodied_co2e_t"])}
            for label, r in df.iterrows()}
    banded = {"co2e_t_p10", "co2e_t_p90"} <= set(df.columns)
    fig = stacked_bars(rows, ("operational", "embodied"), colours=CARBON_COLOURS,
                       part_labels=CARBON_LABELS, xlabel="Emissions [tCO2e]",
                       title=title or "Same run, same energy: the grid sets the carbon",
                       label_at=df["co2e_t_p90"].to_numpy(dtype=float) if banded else None,
                       ax=ax)
    if banded:
        axis = ax if ax is not None else fig.axes[0]
        mid = df["co2e_t"].to_numpy(dtype=float)
        lo, hi = (df[c].to_numpy(dtype=float) for c in ("co2e_t_p10", "co2e_t_p90"))
        axis.errorbar(mid, np.arange(len(df)), xerr=[mid - lo, hi - mid], fmt="none",
                      ecolor="black", elinewidth=1.0, capsize=3, gid="band",
                      label="operational, 80% range (p10-p90)")
        axis.legend(loc="lower right", fontsize=8, frameon=False)
    return fig


def layout_bars(step_s: dict, memory_gib: dict, hbm_gib: float, *, label: str = "this layout",
                title: str | None = None) -> Figure:
    """Two panels for one layout: where the step time goes, and memory against HBM.

    Parameters
    ----------
    step_s : dict
        ``Estimate.step_breakdown_s()``. [s]
    memory_gib : dict
        ``Estimate.memory_breakdown_gib()``. [GiB]
    hbm_gib : float
        Device memory. [GiB]
    label : str
        Bar label (y tick). [-]
    title : str, optional
        Figure title.

    Returns
    -------
    matplotlib.figure.Figure
        Two axes: step time (top), memory (bottom).
    """
    fig = Figure(figsize=(9.0, 4.6), layout="constrained")
    top, bottom = fig.subplots(2, 1)
    step_bars({label: step_s}, ax=top, title="Time per step: blue computes, the rest waits")
    memory_bars({label: memory_gib}, hbm_gib, ax=bottom,
                title="Memory per device: past the dashed line it does not fit")
    if title:
        fig.suptitle(title, fontsize=11, fontweight="bold")
    return fig
