"""Static charts of traincost results (matplotlib only).

Library code here builds :class:`matplotlib.figure.Figure` objects directly (no pyplot
state, no ``plt.show``), so it works under the Agg backend, in scripts, in CI and inside
widgets. Notebooks display the returned figure; :mod:`traincost.widgets` renders it to PNG.

Examples
--------
>>> import traincost
>>> from traincost import plotting
>>> df = traincost.compare(["a100-sxm4-80gb", "h100-sxm5-80gb"], 64, model="gpt2-small",
...                        global_batch=512, tokens=10e9)
>>> fig = plotting.compare_bars(df)
>>> len(fig.axes)
4
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

#: Okabe & Ito (2008) colour-blind-safe palette, black left out (used for text).
#: Ordered so the first few are also distinct in greyscale; yellow comes late.
OKABE_ITO = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#56B4E9", "#CC79A7", "#F0E442",
             "#999999")

#: axis label (with unit) and short title of each metric :func:`traincost.compare` returns
METRIC_LABELS = {
    "train_time_days": ("Training time [days]", "Wall-clock time"),
    "device_hours": ("Device-hours [h]", "Device-hours"),
    "facility_energy_mwh": ("Energy at the plug [MWh]", "Facility energy (incl. PUE)"),
    "co2e_t": ("Operational emissions [tCO2e]", "Operational carbon"),
    "embodied_co2e_t": ("Embodied emissions [tCO2e]", "Embodied carbon (amortised)"),
    "cost_usd": ("Cost [USD]", "Cost"),
    "mfu": ("Model FLOP utilisation [-]", "MFU (higher is better)"),
    "avg_power_w_per_device": ("Average power per device [W]", "Power per device"),
}

DEFAULT_METRICS = ("train_time_days", "facility_energy_mwh", "co2e_t", "cost_usd")

_GAP_COLOUR = "#BBBBBB"


def _short_number(value: float, unit: str = "") -> str:
    """``value`` to 3 significant figures with a k/M/G suffix, e.g. ``'$704k'``. [-]"""
    if not math.isfinite(value):
        return "n/a"
    prefix = "$" if unit == "USD" else ""
    for scale, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= scale:
            return f"{prefix}{value / scale:.3g}{suffix}"
    return f"{prefix}{value:.3g}"


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


def _unit_of(metric: str) -> str:
    label = METRIC_LABELS.get(metric, (metric, metric))[0]
    return label[label.rfind("[") + 1:label.rfind("]")] if "[" in label else ""


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
        ``fits_in_memory`` and ``note`` (as :func:`traincost.compare` returns).
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
    ids = [str(i) for i in df.index]
    y = np.arange(len(ids))
    colours = {acc: OKABE_ITO[i % len(OKABE_ITO)] for i, acc in enumerate(ids)}

    for axis, metric in zip(axes, metrics):
        label, short = METRIC_LABELS.get(metric, (metric, metric))
        unit = _unit_of(metric)
        values = pd.to_numeric(df[metric], errors="coerce").to_numpy(dtype=float)
        reasons = [gap_reason(df.iloc[i], metric) for i in range(len(ids))]
        drawn = [v for v, r in zip(values, reasons) if not r]
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
            axis.text(value + 0.02 * finite_max, yi, _short_number(value, unit),
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
    return fig


def figure_png(fig: Figure, dpi: int = 100) -> bytes:
    """The figure rendered as PNG bytes (Agg; no GUI backend needed). [bytes]"""
    from io import BytesIO

    from matplotlib.backends.backend_agg import FigureCanvasAgg

    if fig.canvas is None or type(fig.canvas).__name__ == "FigureCanvasBase":
        FigureCanvasAgg(fig)
    buf = BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    return buf.getvalue()
