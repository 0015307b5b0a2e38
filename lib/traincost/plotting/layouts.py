"""Layout-search charts (notebook 04): Pareto fronts of a search, and why the other layouts
lose to its best.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter

from ..explain import OBJECTIVE_WORDS
from .bars import MEMORY_COLOURS, MEMORY_LABELS, stacked_bars, step_bars
from .base import OKABE_ITO, _short_number


#: the y axis of each front :func:`traincost.search` keeps: (column, label with unit, unit)
PARETO_AXES = {"time_cost": ("cost_usd", "Cost [USD]", "USD"),
               "time_energy": ("facility_energy_mwh", "Energy at the plug [MWh]", ""),
               "time_carbon": ("co2e_t", "Operational emissions [tCO2e]", "")}

#: diameter of a faint cloud point [pt] (a scatter's s=7 pt^2 of marker area)
CLOUD_MARKER_PT = 7 ** 0.5

PARETO_TITLES = {"time_cost": "Time vs dollars", "time_energy": "Time vs energy",
                 "time_carbon": "Time vs carbon"}


def _accelerator_colours(frames) -> dict:
    """One Okabe-Ito colour per accelerator id, in order of first appearance."""
    ids = []
    for df in frames:
        if df is not None and "accelerator" in df:
            accs = df["accelerator"].astype(str).to_numpy()
            _, first = np.unique(accs, return_index=True)
            ids.extend(accs[np.sort(first)])
    return {acc: OKABE_ITO[i % len(OKABE_ITO)] for i, acc in enumerate(dict.fromkeys(ids))}


def _spread_scale(values) -> str:
    """``log`` when the positive values span more than 20 x, else ``linear``."""
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v) & (v > 0)]
    return "log" if len(v) and v.max() / v.min() > 20 else "linear"


def _number_ticks(axis, unit: str) -> None:
    """Tick labels as short numbers (k/M suffix); on a log axis also at 2 and 5 x 10^k."""
    axis.set_major_formatter(FuncFormatter(lambda v, _pos: _short_number(v, unit)))
    if axis.get_scale() == "log":
        def minor(v, _pos):
            lead = v / 10 ** math.floor(math.log10(v) + 1e-9) if v > 0 else 0
            return _short_number(v, unit) if round(lead, 6) in (2.0, 5.0) else ""
        axis.set_minor_formatter(FuncFormatter(minor))


def pareto_plot(result, fronts: Sequence[str] = ("time_cost", "time_carbon"), *, others=None,
                best=None, title: str | None = None, ax=None) -> Figure:
    """Pareto fronts of a layout search: training time against dollars (and carbon).

    One panel per front. Every feasible layout given in ``others`` is a small, faint dot in
    its accelerator's colour; the layouts on the front (no other feasible layout is both
    faster and cheaper) are large dots joined by a staircase, labelled with their device
    count; the best layout of the search's objective is ringed.

    Parameters
    ----------
    result : traincost.SearchResult or mapping of str to pandas.DataFrame
        A search result (its ``pareto`` fronts, ``top`` table and best layout are used),
        or the fronts themselves: ``{front name: rows with accelerator, devices,
        train_time_days and the front's y column}``.
    fronts : sequence of str
        Fronts to draw, each its own panel: ``time_cost``, ``time_energy``, ``time_carbon``
        (:data:`PARETO_AXES`).
    others : pandas.DataFrame, optional
        Feasible layouts drawn behind the fronts; a search result's ``top`` table by default.
    best : pandas.Series, optional
        Layout to ring; a search result's best layout for its objective by default.
    title : str, optional
        Figure title; by default one that says how to read the chart.
    ax : None, Figure or sequence of Axes
        Where to draw (one Axes per front).

    Returns
    -------
    matplotlib.figure.Figure
        Per panel: front points are one scatter with gid ``"front:<name>"`` (in front
        order, by time), the cloud lines of markers ``"others:<name>"`` (one per
        accelerator), the staircase line ``"staircase"``
        and the ring ``"best"``.
    """
    objective = None
    if hasattr(result, "pareto"):
        frames = dict(result.pareto)
        objective = result.objective
        if others is None:
            others = result.top
        if best is None:
            best = result.best.get(result.objective)
    else:
        frames = dict(result)
    fronts = list(fronts)
    if not fronts:
        raise ValueError("fronts: give at least one front to draw")
    unknown = [f for f in fronts if f not in PARETO_AXES or f not in frames]
    if unknown:
        raise ValueError(f"fronts: {unknown[0]!r} is not among the fronts given "
                         f"({', '.join(frames) or 'none'}); known: {', '.join(PARETO_AXES)}")
    fig, axes = _front_axes(ax, len(fronts))
    colours = _accelerator_colours([frames[f] for f in fronts] + [others])
    for axis, name in zip(axes, fronts):
        _front_panel(axis, name, frames[name], others, best, colours)
    axes[-1].legend(handles=_front_legend(colours, others, best, objective), fontsize=8,
                    loc="center left", bbox_to_anchor=(1.02, 0.5), frameon=False)
    fig.suptitle(title or "Lower left is better: on the front, going faster costs more",
                 fontsize=11, fontweight="bold")
    return fig


def _front_axes(ax, n: int) -> tuple[Figure, list]:
    """A figure and ``n`` side-by-side axes (or the ``n`` Axes given)."""
    if ax is None or isinstance(ax, Figure):
        fig = ax if ax is not None else Figure(figsize=(5.0 * n + 1.8, 4.6),
                                               layout="constrained")
        return fig, list(fig.subplots(1, n, squeeze=False)[0])
    axes = list(ax) if isinstance(ax, (Sequence, np.ndarray)) else [ax]
    if len(axes) != n or not all(isinstance(a, Axes) for a in axes):
        raise ValueError(f"ax: expected None, a Figure or {n} Axes (one per "
                         f"front), got {ax!r}")
    return axes[0].figure, axes


def _front_panel(axis, name: str, front, others, best, colours: dict) -> None:
    """One front of :func:`pareto_plot`: the faint cloud, the staircase, the ring."""
    x_col = "train_time_days"
    y_col, y_label, unit = PARETO_AXES[name]
    xs_all = [front[x_col].to_numpy(dtype=float)] if len(front) else []
    ys_all = [front[y_col].to_numpy(dtype=float)] if len(front) else []
    if others is not None and len(others):
        cloud = others[np.isfinite(others[x_col].astype(float))
                       & np.isfinite(others[y_col].astype(float))]
        # one marker line per accelerator: Agg stamps a line's markers from one cached
        # raster, where a scatter draws each point's path (about 10 x slower at 20,000)
        accs = cloud["accelerator"].astype(str).to_numpy()
        for acc in dict.fromkeys(accs):
            mine = cloud[accs == acc]
            axis.plot(mine[x_col].astype(float), mine[y_col].astype(float), marker="o",
                      markersize=CLOUD_MARKER_PT, markeredgewidth=0, linestyle="none",
                      color=colours[acc], alpha=0.25, gid=f"others:{name}", zorder=1)
        xs_all.append(cloud[x_col].to_numpy(dtype=float))
        ys_all.append(cloud[y_col].to_numpy(dtype=float))
    if len(front):
        fx = front[x_col].to_numpy(dtype=float)
        fy = front[y_col].to_numpy(dtype=float)
        axis.plot(fx, fy, drawstyle="steps-post", color="black", linewidth=1.0,
                  gid="staircase", zorder=2)
        axis.scatter(fx, fy, s=60, c=[colours[str(a)] for a in front["accelerator"]],
                     edgecolors="black", linewidths=0.8, gid=f"front:{name}", zorder=3)
        for i, (x_, y_, n) in enumerate(zip(fx, fy, front["devices"])):
            axis.annotate(f"{int(n)}", (x_, y_), textcoords="offset points",
                          xytext=(4, 6) if i % 2 == 0 else (4, -12), fontsize=8,
                          color="#333333", zorder=4)
    if best is not None and np.isfinite(float(best[y_col])):
        axis.plot([float(best[x_col])], [float(best[y_col])], marker="o", markersize=15,
                  markerfacecolor="none", markeredgecolor="#D55E00", markeredgewidth=2,
                  linestyle="none", gid="best", zorder=5)
    axis.set_xscale(_spread_scale(np.concatenate(xs_all) if xs_all else []))
    axis.set_yscale(_spread_scale(np.concatenate(ys_all) if ys_all else []))
    axis.set_xlabel("Training time [days]")
    axis.set_ylabel(y_label)
    _number_ticks(axis.xaxis, "")
    _number_ticks(axis.yaxis, unit)
    axis.set_title(f"{PARETO_TITLES[name]}: {len(front)} layouts on the front",
                   fontsize=10)
    axis.grid(color="#DDDDDD", linewidth=0.6)
    axis.set_axisbelow(True)
    for side in ("top", "right"):
        axis.spines[side].set_visible(False)


def _front_legend(colours: dict, others, best, objective) -> list:
    """Legend handles of :func:`pareto_plot`: accelerators, front, cloud, best."""
    from matplotlib.lines import Line2D

    handles = [Line2D([], [], marker="o", linestyle="none", markersize=7, color=c,
                      markeredgecolor="black", label=acc) for acc, c in colours.items()]
    handles += [Line2D([], [], color="black", linewidth=1.0,
                       label="Pareto front\n(numbers: devices)")]
    if others is not None and len(others):
        handles += [Line2D([], [], marker="o", linestyle="none", markersize=4, color="#999999",
                           alpha=0.5, label="faint: other feasible\nlayouts (same colours)")]
    if best is not None:
        handles += [Line2D([], [], marker="o", linestyle="none", markersize=11,
                           markerfacecolor="none", markeredgecolor="#D55E00",
                           markeredgewidth=2,
                           label=f"best for {OBJECTIVE_WORDS.get(objective, 'the objective')}")]
    return handles


def why_lose_bars(step_rows, memory_rows, *, limit_fraction: float = 0.9,
                  title: str | None = None) -> Figure:
    """Several layouts of one job: where each step's time goes, and memory against the limit.

    Parameters
    ----------
    step_rows : mapping
        ``{label: Estimate.step_breakdown_s()}`` in drawing order. [s]
    memory_rows : mapping
        ``{label: memory parts as a share of the device's memory}``, same labels. [%]
    limit_fraction : float
        Share of device memory a layout may use (1 - the search's headroom), drawn as a
        dashed line. [-]
    title : str, optional
        Figure title.

    Returns
    -------
    matplotlib.figure.Figure
        Two axes: step time (top), memory share (bottom); segments carry gid
        ``"<label>:<part>"``, the limit line ``"limit"``.
    """
    from ..model import MEMORY_PARTS

    if list(step_rows) != list(memory_rows):
        raise ValueError("memory_rows: give the same labels, in the same order, as step_rows")
    if not 0 < limit_fraction <= 1:
        raise ValueError(f"limit_fraction: {limit_fraction!r} must be in (0, 1]")
    n = len(step_rows)
    fig = Figure(figsize=(10.0, 0.8 * n + 3.6), layout="constrained")
    top, bottom = fig.subplots(2, 1)
    step_bars(step_rows, ax=top, title="Time per step: only the blue part computes")
    stacked_bars(memory_rows, MEMORY_PARTS, colours=MEMORY_COLOURS, part_labels=MEMORY_LABELS,
                 xlabel="Memory per device [% of the device's memory]",
                 title="Memory per device: past the dashed line the search rejects it",
                 limit=100.0 * limit_fraction,
                 limit_label=f"limit {100 * limit_fraction:.3g} % "
                             f"(headroom {100 * (1 - limit_fraction):.3g} %)", ax=bottom)
    fig.suptitle(title or "Why the others lose: the same job, layouts side by side",
                 fontsize=11, fontweight="bold")
    return fig
