"""Validation charts (notebook 07): predicted against published figures, and step times
against the micro-batches per step with their fitted lines.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from .base import OKABE_ITO


#: colour and marker of each metric family of traincost.validate (fixed, so a filtered
#: chart keeps its colours)
FAMILY_STYLES = {"throughput": (OKABE_ITO[0], "o"), "device_hours": (OKABE_ITO[1], "s"),
                 "train_days": (OKABE_ITO[2], "^"), "power": (OKABE_ITO[3], "D"),
                 "energy": (OKABE_ITO[4], "v"), "emissions": (OKABE_ITO[5], "P")}

FAMILY_LABELS = {"throughput": "throughput (TFLOP/s, MFU, step s)",
                 "device_hours": "device-hours [h]", "train_days": "training time [days]",
                 "power": "measured power [W]", "energy": "energy [MWh]",
                 "emissions": "emissions [tCO2e]"}


def model_gap_mask(table: pd.DataFrame) -> pd.Series:
    """Rows whose figure a ``model_gap`` spoils (as :func:`traincost.validate.summary`).

    A model gap (a run the model cannot represent) spoils the time-derived figures of a
    case, not a power the source measured directly, so ``power`` rows stay solid.
    """
    gap = table["model_gap"].fillna("").astype(str).str.len() > 0
    return gap & (table["family"] != "power")


def validation_scatter(table: pd.DataFrame, *, band_pct: float = 10.0, errors: bool = True,
                       title: str | None = None) -> Figure:
    """Predicted against published figures on log-log axes, with the ideal line y = x.

    Parameters
    ----------
    table : pandas.DataFrame
        :func:`traincost.validate.compare_published`'s table (``case``, ``family``,
        ``metric``, ``predicted``, ``reported``, ``error_pct``, ``model_gap``). Rows
        without both a positive prediction and a positive report are not drawn.
    band_pct : float
        Half-width of the shaded band around y = x. [%]
    errors : bool
        Add a second panel: the signed error of each figure, by family. [-]
    title : str, optional
        Figure title; by default one that says how to read the chart.

    Returns
    -------
    matplotlib.figure.Figure
        First axes: one scatter per family and kind (gid ``"<family>"`` for solid points,
        ``"<family>:model gap"`` for hollow ones; each point's ``url`` is
        ``"<case>|<metric>"``), the ideal line (gid ``"ideal"``) and band (``"band"``).

    Notes
    -----
    Families have different units, so the axes span several decades; a point's distance
    from the diagonal is its relative error whatever its unit. Model-gap cases (runs the
    model cannot represent, see the table's ``model_gap``) are hollow.
    """
    t = _drawn_rows(table, band_pct)
    if errors:
        fig = Figure(figsize=(12.5, 5.6), layout="constrained")
        ax, ax_err = fig.subplots(1, 2, width_ratios=(1.15, 1.0))
    else:
        fig = Figure(figsize=(7.5, 5.6), layout="constrained")
        ax, ax_err = fig.add_subplot(), None
    families = list(dict.fromkeys(list(FAMILY_STYLES) + list(t["family"])))
    families = [f for f in families if f in set(t["family"])]
    extra = iter(OKABE_ITO[6:] + OKABE_ITO)
    styles = {f: FAMILY_STYLES.get(f) or (next(extra), "o") for f in families}
    handles = _diagonal_panel(ax, t, families, styles, band_pct)
    if ax_err is None:
        ax.legend(handles=handles, fontsize=8, loc="upper left", frameon=True)
    else:
        ax.legend(handles=handles, fontsize=7.5, loc="upper left", frameon=True,
                  framealpha=0.9)
        _error_panel(ax_err, t, families, styles, band_pct)
    fig.suptitle(title or "Predicted vs published: on the diagonal is right, in the grey band "
                          f"within ±{band_pct:g} %", fontsize=11, fontweight="bold")
    return fig


def _drawn_rows(table: pd.DataFrame, band_pct: float) -> pd.DataFrame:
    """The rows :func:`validation_scatter` draws (positive prediction and report, as floats),
    with ``gap`` (hollow) and ``error``, the signed error of the prediction. [%]"""
    if not 0 <= band_pct < 100:
        raise ValueError(f"band_pct: {band_pct!r} must be in [0, 100)")
    missing = [c for c in ("case", "family", "metric", "predicted", "reported", "model_gap")
               if c not in table.columns]
    if missing:
        raise ValueError(f"table: missing column {missing[0]!r} "
                         "(expected traincost.validate.compare_published()'s table)")
    pred = pd.to_numeric(table["predicted"], errors="coerce")
    rep = pd.to_numeric(table["reported"], errors="coerce")
    t = table[(pred > 0) & (rep > 0)].copy()
    if t.empty:
        raise ValueError("table: no row has both a positive prediction and a positive report")
    t["predicted"], t["reported"] = pred[t.index].astype(float), rep[t.index].astype(float)
    t["gap"] = model_gap_mask(t)
    t["error"] = 100.0 * (t["predicted"] - t["reported"]) / t["reported"]
    return t


def _diagonal_panel(ax, t: pd.DataFrame, families, styles: dict, band_pct: float) -> list:
    """Predicted against published on log-log axes, the line y = x and its band; returns
    the legend handles."""
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    lo = min(t["predicted"].min(), t["reported"].min()) / 2.0
    hi = max(t["predicted"].max(), t["reported"].max()) * 2.0
    line = np.array([lo, hi])
    b = band_pct / 100.0
    ax.fill_between(line, line * (1 - b), line * (1 + b), color="#BBBBBB", alpha=0.6,
                    linewidth=0, gid="band", zorder=1)
    ax.plot(line, line, color="black", linewidth=1.0, gid="ideal", zorder=2)
    for f in families:
        colour, marker = styles[f]
        for gap in (False, True):
            sub = t[(t["family"] == f) & (t["gap"] == gap)]
            if sub.empty:
                continue
            sc = ax.scatter(sub["reported"], sub["predicted"], s=34, marker=marker,
                            facecolors="none" if gap else colour, edgecolors=colour,
                            linewidths=1.4 if gap else 0.6, gid=f"{f}:model gap" if gap else f,
                            zorder=3 if gap else 4)
            if not gap:
                sc.set_edgecolor("black")
            sc.set_urls([f"{c}|{m}" for c, m in zip(sub["case"], sub["metric"])])
    ax.set_xscale("log")
    ax.set_yscale("log")
    # the axes span many decades (units differ by family): minor ticks there are unlabelled
    # clutter that took most of the chart's rendering time
    ax.minorticks_off()
    ax.set_xlim(lo, hi)
    ax.set_ylim(lo, hi)
    ax.set_aspect("equal", adjustable="box")
    ax.set_xlabel("Published (reported) value [its own unit]")
    ax.set_ylabel("Predicted by traincost [same unit]")
    ax.set_title("Each point: one published figure; units differ by family", fontsize=10)
    ax.grid(color="#EEEEEE", linewidth=0.6, which="major")
    ax.set_axisbelow(True)
    handles = [Line2D([], [], marker=styles[f][1], linestyle="none", markersize=7,
                      color=styles[f][0], markeredgecolor="black",
                      label=FAMILY_LABELS.get(f, f)) for f in families]
    if t["gap"].any():
        handles.append(Line2D([], [], marker="o", linestyle="none", markersize=7,
                              markerfacecolor="none", markeredgecolor="#444444",
                              markeredgewidth=1.4, label="hollow: model gap (a run the\n"
                                                         "model cannot represent)"))
    handles += [Line2D([], [], color="black", linewidth=1.0, label="predicted = published"),
                Patch(facecolor="#BBBBBB", alpha=0.6, label=f"within ±{band_pct:g} %")]
    return handles


def _error_panel(ax_err, t: pd.DataFrame, families, styles: dict, band_pct: float) -> None:
    """The signed error of each figure [%], one row per family, the band shaded."""
    y = {f: i for i, f in enumerate(families)}
    ax_err.axvspan(-band_pct, band_pct, color="#BBBBBB", alpha=0.6, linewidth=0,
                   gid="band")
    ax_err.axvline(0.0, color="black", linewidth=1.0)
    # each row's vertical jitter drawn in the table's order, then one scatter per family
    # and kind (one collection each: a collection per point took seconds to render)
    jitter = np.random.default_rng(0).uniform(-0.18, 0.18, len(t))
    row_y = t["family"].map(y).to_numpy(float) + jitter
    for f in families:
        colour, marker = styles[f]
        for gap in (False, True):
            sel = ((t["family"] == f) & (t["gap"] == gap)).to_numpy()
            if not sel.any():
                continue
            ax_err.scatter(t["error"].to_numpy(float)[sel], row_y[sel], s=28, marker=marker,
                           facecolors="none" if gap else colour,
                           edgecolors=colour if gap else "black",
                           linewidths=1.4 if gap else 0.6,
                           gid=f"error:{f}:model gap" if gap else f"error:{f}")
    ax_err.set_yticks(range(len(families)), [f.replace("_", " ") for f in families])
    ax_err.set_ylim(len(families) - 0.5, -0.5)
    ax_err.set_xlabel("Error of the prediction, (predicted - published) / published [%]")
    ax_err.set_title("Signed error by family (grey: within the band)", fontsize=10)
    ax_err.grid(axis="x", color="#EEEEEE", linewidth=0.6)
    for side in ("top", "right"):
        ax_err.spines[side].set_visible(False)


def step_time_trend_plot(points: dict, trends: dict, *, title: str | None = None) -> Figure:
    """Published and predicted step times against the micro-batches per step, with their lines.

    One panel per strong-scaling series. Each panel draws the step times ``T`` [s] against
    the micro-batches per step and data-parallel replica ``m``, published as filled points,
    predicted as hollow ones, and each set's line ``T = a*m + c`` as given in ``trends``,
    drawn down to ``m = 0`` so that where it meets the axis is ``c``, the time each step
    pays once. Parallel lines with different intercepts mean the model misses a per-step
    cost; different slopes, a per-micro-batch one. The plot fits nothing: the lines are the
    caller's (:func:`traincost.validate.step_time_trend` fits them by least squares).

    Parameters
    ----------
    points : dict
        Panel title -> that series' step times: a table with ``microbatches`` [-],
        ``reported`` and ``predicted`` [s] (:func:`traincost.validate.step_time_points`).
    trends : dict
        Panel title -> its lines: a table indexed ``published`` and ``predicted`` with
        ``per_microbatch_s`` (a) and ``per_step_s`` (c) [s]
        (:func:`traincost.validate.step_time_trend`); the same titles as ``points``.
    title : str, optional
        Figure title; by default one that says how to read the chart.

    Returns
    -------
    matplotlib.figure.Figure
        Per panel: points with gids ``"<series>:published"`` and ``"<series>:predicted"``,
        lines with gids ``"<series>:published fit"`` and ``"<series>:predicted fit"``.

    Raises
    ------
    ValueError
        When ``points`` is empty or ``trends`` does not give a line for each series.
    """
    if not points:
        raise ValueError("series: empty; give at least one {title: step times}")
    if list(trends) != list(points):
        raise ValueError("trends: give one fitted table per series of points, in the same "
                         f"order ({', '.join(map(str, points))})")
    n = len(points)
    cols = min(n, 3)
    rows = math.ceil(n / cols)
    fig = Figure(figsize=(4.2 * cols, 3.6 * rows + 0.5), layout="constrained")
    axes = np.atleast_1d(fig.subplots(rows, cols, squeeze=False)).ravel()
    for ax, (name, t) in zip(axes, points.items()):
        _trend_panel(ax, name, t, trends[name])
    for ax in axes[n:]:
        ax.set_visible(False)
    fig.suptitle(title or "Step time = a·m + c: where the lines meet the axis is the time each "
                 "step pays once", fontsize=11, fontweight="bold")
    return fig


def _trend_panel(ax, name: str, t: pd.DataFrame, trend: pd.DataFrame) -> None:
    """One series of :func:`step_time_trend_plot`: its points [s] and its two lines."""
    m = t["microbatches"].to_numpy(float)
    line = np.array([0.0, m.max() * 1.05])
    for kind, col, colour, face in (("published", "reported", OKABE_ITO[0], OKABE_ITO[0]),
                                    ("predicted", "predicted", OKABE_ITO[3], "none")):
        a, c = trend.loc[kind, "per_microbatch_s"], trend.loc[kind, "per_step_s"]
        ax.plot(m, t[col].to_numpy(float), linestyle="none", marker="o", markersize=7,
                markerfacecolor=face, markeredgecolor=colour, markeredgewidth=1.5,
                gid=f"{name}:{kind}", label=f"{kind}: c = {c:.2g} s")
        ax.plot(line, a * line + c, color=colour, linewidth=1.2,
                linestyle="-" if kind == "published" else "--", gid=f"{name}:{kind} fit")
    ax.set_xlim(left=0)
    ax.set_ylim(bottom=0)
    ax.set_title(name, fontsize=10, loc="left")
    ax.set_xlabel("Micro-batches per step and replica, m")
    ax.set_ylabel("Step time [s]")
    ax.grid(color="#DDDDDD", linewidth=0.6)
    ax.legend(fontsize=8, loc="upper left")
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
