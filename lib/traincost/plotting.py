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


# --------------------------------------------------------------------------------------
# stacked bars: memory per device, step time, FLOP per token, carbon by region
# --------------------------------------------------------------------------------------
#: colour of each memory part (same in every chart of the suite)
MEMORY_COLOURS = {"weights": OKABE_ITO[0], "gradients": OKABE_ITO[1],
                  "optimizer": OKABE_ITO[2], "activations": OKABE_ITO[3],
                  "reserved": OKABE_ITO[7]}
MEMORY_LABELS = {"weights": "weights", "gradients": "gradients",
                 "optimizer": "optimizer states", "activations": "activations",
                 "reserved": "reserved (framework)"}

#: colour of each step-time part; compute is blue, the waiting parts are the others
STEP_COLOURS = {"compute": OKABE_ITO[0], "tp_comm": OKABE_ITO[1], "cp_comm": OKABE_ITO[4],
                "ep_comm": OKABE_ITO[5], "pp_comm": OKABE_ITO[6], "bubble": OKABE_ITO[7],
                "dp_comm": OKABE_ITO[2], "optimizer": OKABE_ITO[3],
                "stragglers": "#882255"}          # Tol's 'wine', past Okabe-Ito's eight
STEP_LABELS = {"compute": "compute", "tp_comm": "exposed TP comm.",
               "cp_comm": "exposed CP comm.", "ep_comm": "exposed EP comm.",
               "pp_comm": "exposed PP sends", "stragglers": "waiting for stragglers",
               "bubble": "pipeline bubble",
               "dp_comm": "exposed DP comm.", "optimizer": "optimizer step"}

#: FLOP-per-token parts (see :func:`traincost.widgets.flop_per_token_parts`)
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
                 limit_label: str | None = None, ax=None) -> Figure:
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
    top = max(totals + ([limit] if limit is not None else [])) or 1.0
    for y, total in enumerate(totals):
        text = _short_number(total, unit)
        if limit is not None and total > limit:
            text += "  over the limit"
        ax.text(total + 0.01 * top, y, text, va="center", ha="left", fontsize=8,
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
    from .model import MEMORY_PARTS

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
    from .model import STEP_PARTS

    return stacked_bars(rows, STEP_PARTS, colours=STEP_COLOURS, part_labels=STEP_LABELS,
                        xlabel="Time per optimizer step [s]",
                        title=title or "One training step: only the blue part is compute",
                        unit="s", ax=ax)


def flop_bars(rows, *, title: str | None = None, ax=None) -> Figure:
    """Training FLOP per token, stacked by where they are spent.

    Parameters
    ----------
    rows : mapping
        ``{label: traincost.widgets.flop_per_token_parts(...)}``. [FLOP]
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
        the catalog has no embodied figure: drawn as 0). [tCO2e]
    """
    if len(df) == 0:
        raise ValueError("df: the table has no rows (select at least one region)")
    rows = {str(label): {"operational": float(r["co2e_t"]),
                         "embodied": 0.0 if pd.isna(r["embodied_co2e_t"])
                         else float(r["embodied_co2e_t"])}
            for label, r in df.iterrows()}
    return stacked_bars(rows, ("operational", "embodied"), colours=CARBON_COLOURS,
                        part_labels=CARBON_LABELS, xlabel="Emissions [tCO2e]",
                        title=title or "Same run, same energy: the grid sets the carbon",
                        ax=ax)


# --------------------------------------------------------------------------------------
# lines and scatter: power vs utilisation, cost vs time, price sensitivity
# --------------------------------------------------------------------------------------
def power_cap_tradeoff(df: pd.DataFrame, *, mark_w: float | None = None,
                       title: str | None = None, ax=None) -> Figure:
    """Training time and energy at the plug against the power limit, as % changes.

    Parameters
    ----------
    df : pandas.DataFrame
        :func:`traincost.explore.power_cap_tradeoff`: indexed by ``power_cap_w`` [W], with
        ``time_change_pct``, ``energy_change_pct`` [%] and ``extrapolated`` [bool].
    mark_w : float, optional
        A cap to mark with a vertical line (gid ``mark``). [W]

    Returns
    -------
    matplotlib.figure.Figure
        Lines carry gids ``time`` and ``energy``; the extrapolated range is shaded
        (gid ``extrapolated``).
    """
    if ax is None:
        fig = Figure(figsize=(7.0, 4.0), layout="constrained")
        ax = fig.add_subplot()
    else:
        fig = ax.figure
    x = df.index.to_numpy(dtype=float)
    ax.plot(x, df["time_change_pct"], "o-", color=OKABE_ITO[4], linewidth=2, gid="time",
            label="training time")
    ax.plot(x, df["energy_change_pct"], "s-", color=OKABE_ITO[2], linewidth=2, gid="energy",
            label="energy at the plug")
    ax.axhline(0, color="#444444", linewidth=0.8)
    extra = df.index[df["extrapolated"].to_numpy(dtype=bool)]
    if len(extra):
        measured = df.index[~df["extrapolated"].to_numpy(dtype=bool)]
        right = float(measured.min()) if len(measured) else float(x.max())
        ax.axvspan(float(x.min()), right, color="#EEEEEE", zorder=0, gid="extrapolated")
        ax.text(float(x.min()), 0, " clock law extrapolated", va="bottom", ha="left",
                fontsize=8, color="#555555")
    if mark_w is not None:
        ax.axvline(mark_w, color="#444444", linestyle="--", linewidth=1, gid="mark")
    ax.set_xlabel("Power limit per device [W]")
    ax.set_ylabel("Change against the rated maximum [%]")
    ax.set_title(title or "A power cap trades time for energy", fontsize=11,
                 fontweight="bold", loc="left")
    ax.grid(color="#DDDDDD", linewidth=0.6)
    ax.legend(fontsize=8)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    return fig


def power_curve(df: pd.DataFrame, *, tdp_w: float, idle_w: float, busy_fraction=None,
                title: str | None = None, ax=None) -> Figure:
    """Average power per device against the share of the step spent computing.

    Parameters
    ----------
    df : pandas.DataFrame
        ``busy_fraction``, ``device_w``, ``host_w``, ``total_w`` columns
        (:func:`traincost.widgets.power_curve`). [-], [W]
    tdp_w, idle_w : float
        Drawn as reference lines. [W]
    busy_fraction : float, optional
        Marks one point on the curves. [-]

    Returns
    -------
    matplotlib.figure.Figure
        Lines carry gids ``device``, ``total``, ``tdp`` and ``idle``.
    """
    if ax is None:
        fig = Figure(figsize=(7.0, 4.0), layout="constrained")
        ax = fig.add_subplot()
    else:
        fig = ax.figure
    x = df["busy_fraction"].to_numpy(dtype=float)
    ax.plot(x, df["total_w"], color=OKABE_ITO[0], linewidth=2, gid="total",
            label="device + host share")
    ax.plot(x, df["device_w"], color=OKABE_ITO[1], linewidth=2, linestyle="-.", gid="device",
            label="accelerator alone")
    ax.axhline(tdp_w, color="#444444", linestyle="--", linewidth=1, gid="tdp")
    ax.text(0.99, tdp_w, "accelerator maximum (TDP) ", va="bottom", ha="right", fontsize=8)
    ax.axhline(idle_w, color="#444444", linestyle=":", linewidth=1, gid="idle")
    ax.text(0.99, idle_w, "accelerator idle ", va="bottom", ha="right", fontsize=8)
    if busy_fraction is not None:
        for col, colour in (("total_w", OKABE_ITO[0]), ("device_w", OKABE_ITO[1])):
            y = float(np.interp(busy_fraction, x, df[col].to_numpy(dtype=float)))
            ax.plot([busy_fraction], [y], "o", color=colour, markeredgecolor="black")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, max(tdp_w, float(df["total_w"].max())) * 1.12)
    ax.set_xlabel("Busy share of the step (computing, not waiting) [-]")
    ax.set_ylabel("Average power per device [W]")
    ax.set_title(title or "Waiting is not resting: power barely falls when the busy share does",
                 fontsize=11, fontweight="bold", loc="left")
    ax.grid(color="#DDDDDD", linewidth=0.6)
    ax.legend(fontsize=8, loc="center right")
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    return fig


def cost_vs_time(df: pd.DataFrame, deadline_days: float, *, winner=None,
                 title: str | None = None, ax=None) -> Figure:
    """Cost against training time of every (accelerator, device count) candidate.

    Parameters
    ----------
    df : pandas.DataFrame
        One row per candidate with ``accelerator``, ``devices``, ``train_time_days``
        and ``cost_usd`` (rows without both are not drawn).
    deadline_days : float
        Drawn as a dashed vertical line; the right of it is shaded. [days]
    winner : index label, optional
        Row to ring as the cheapest that meets the deadline.

    Returns
    -------
    matplotlib.figure.Figure
        Points carry gid ``"<accelerator>@<devices>"``; the winner's ring ``"winner"``.
    """
    if ax is None:
        fig = Figure(figsize=(9.0, 4.6), layout="constrained")
        ax = fig.add_subplot()
    else:
        fig = ax.figure
    drawn = df[pd.to_numeric(df["train_time_days"], errors="coerce").notna()
               & pd.to_numeric(df["cost_usd"], errors="coerce").notna()]
    accs = list(dict.fromkeys(df["accelerator"]))
    markers = "osD^v<>p"
    for i, acc in enumerate(accs):
        sub = drawn[drawn["accelerator"] == acc].sort_values("devices")
        if sub.empty:
            continue
        xs = sub["train_time_days"].astype(float).to_numpy()
        ys = sub["cost_usd"].astype(float).to_numpy()
        ax.plot(xs, ys, color=OKABE_ITO[i % len(OKABE_ITO)], linewidth=0.8, alpha=0.6)
        for (_, r), x_, y_ in zip(sub.iterrows(), xs, ys):
            ax.plot([x_], [y_], marker=markers[i % len(markers)], linestyle="none",
                    color=OKABE_ITO[i % len(OKABE_ITO)], markeredgecolor="black",
                    markersize=6, gid=f"{acc}@{int(r['devices'])}",
                    label=acc if x_ == xs[0] else None)
            ax.annotate(str(int(r["devices"])), (x_, y_), textcoords="offset points",
                        xytext=(4, 4), fontsize=7, color="#444444")
    ax.axvline(deadline_days, color="black", linestyle="--", linewidth=1.2, gid="deadline")
    xmax = max([deadline_days * 1.5] + list(drawn["train_time_days"].astype(float)))
    ax.axvspan(deadline_days, xmax * 1.05, color="#DDDDDD", alpha=0.5, linewidth=0)
    ax.text(deadline_days, 1.0, f" deadline {deadline_days:.3g} days",
            transform=ax.get_xaxis_transform(), va="top", fontsize=8)
    if winner is not None and winner in drawn.index:
        w = drawn.loc[winner]
        ax.plot([float(w["train_time_days"])], [float(w["cost_usd"])], marker="o",
                markersize=16, markerfacecolor="none", markeredgecolor="#D55E00",
                markeredgewidth=2, linestyle="none", gid="winner")
    ax.set_xlim(0, xmax * 1.05)
    ax.set_ylim(bottom=0)
    ax.set_xlabel("Training time [days]")
    ax.set_ylabel("Cost [USD]")
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _pos: _short_number(v, "USD")))
    ax.set_title(title or "Cheapest point left of the dashed line wins (numbers: devices)",
                 fontsize=11, fontweight="bold", loc="left")
    ax.grid(color="#DDDDDD", linewidth=0.6)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False,
                  title="accelerator", title_fontsize=8)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    return fig


def sensitivity_lines(df: pd.DataFrame, *, title: str | None = None, ax=None) -> Figure:
    """Cost of one run as one price moves from its catalog value.

    Parameters
    ----------
    df : pandas.DataFrame
        Indexed by the price as a percentage of its catalog value, one column per
        scenario (e.g. ``rent: price per device-hour``), values in USD. [%], [USD]

    Returns
    -------
    matplotlib.figure.Figure
        One line per column, gid = the column name.
    """
    if ax is None:
        fig = Figure(figsize=(7.0, 4.0), layout="constrained")
        ax = fig.add_subplot()
    else:
        fig = ax.figure
    styles = ("-", "--", "-.", ":")
    for i, col in enumerate(df.columns):
        ax.plot(df.index.to_numpy(dtype=float), df[col].to_numpy(dtype=float),
                color=OKABE_ITO[i % len(OKABE_ITO)], linestyle=styles[i % len(styles)],
                linewidth=2, label=str(col), gid=str(col))
    ax.axvline(100, color="#888888", linewidth=0.8)
    ax.set_xlabel("Price as a share of today's catalog value [%]")
    ax.set_ylabel("Cost of the run [USD]")
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _pos: _short_number(v, "USD")))
    ax.set_ylim(bottom=0)
    ax.set_title(title or "Which price matters: the steeper the line, the more it moves the cost",
                 fontsize=11, fontweight="bold", loc="left")
    ax.grid(color="#DDDDDD", linewidth=0.6)
    ax.legend(fontsize=8)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
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


# --------------------------------------------------------------------------------------
# notebook 04: Pareto fronts of a layout search, and why the other layouts lose
# --------------------------------------------------------------------------------------
#: the y axis of each front :func:`traincost.search` keeps: (column, label with unit, unit)
PARETO_AXES = {"time_cost": ("cost_usd", "Cost [USD]", "USD"),
               "time_energy": ("facility_energy_mwh", "Energy at the plug [MWh]", ""),
               "time_carbon": ("co2e_t", "Operational emissions [tCO2e]", "")}
PARETO_TITLES = {"time_cost": "Time vs dollars", "time_energy": "Time vs energy",
                 "time_carbon": "Time vs carbon"}
#: what each objective of traincost.search minimises, in words
OBJECTIVE_WORDS = {"time": "time", "cost": "dollars", "energy": "energy", "carbon": "carbon"}


def _accelerator_colours(frames) -> dict:
    """One Okabe-Ito colour per accelerator id, in order of first appearance."""
    ids = []
    for df in frames:
        if df is not None and "accelerator" in df:
            ids.extend(str(a) for a in df["accelerator"])
    return {acc: OKABE_ITO[i % len(OKABE_ITO)] for i, acc in enumerate(dict.fromkeys(ids))}


def _spread_scale(values) -> str:
    """``log`` when the positive values span more than 20 x, else ``linear``."""
    v = np.asarray([x for x in values if np.isfinite(x) and x > 0], dtype=float)
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
        order, by time), the cloud ``"others:<name>"``, the staircase line ``"staircase"``
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
    if ax is None or isinstance(ax, Figure):
        fig = ax if ax is not None else Figure(figsize=(5.0 * len(fronts) + 1.8, 4.6),
                                               layout="constrained")
        axes = list(fig.subplots(1, len(fronts), squeeze=False)[0])
    else:
        axes = list(ax) if isinstance(ax, (Sequence, np.ndarray)) else [ax]
        if len(axes) != len(fronts) or not all(isinstance(a, Axes) for a in axes):
            raise ValueError(f"ax: expected None, a Figure or {len(fronts)} Axes (one per "
                             f"front), got {ax!r}")
        fig = axes[0].figure
    colours = _accelerator_colours([frames[f] for f in fronts] + [others])
    x_col = "train_time_days"
    for axis, name in zip(axes, fronts):
        y_col, y_label, unit = PARETO_AXES[name]
        front = frames[name]
        xs_all = list(front[x_col]) if len(front) else []
        ys_all = list(front[y_col]) if len(front) else []
        if others is not None and len(others):
            cloud = others[np.isfinite(others[x_col].astype(float))
                           & np.isfinite(others[y_col].astype(float))]
            axis.scatter(cloud[x_col].astype(float), cloud[y_col].astype(float), s=7,
                         c=[colours[str(a)] for a in cloud["accelerator"]], alpha=0.25,
                         linewidths=0, gid=f"others:{name}", zorder=1)
            xs_all += list(cloud[x_col].astype(float))
            ys_all += list(cloud[y_col].astype(float))
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
        axis.set_xscale(_spread_scale(xs_all))
        axis.set_yscale(_spread_scale(ys_all))
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
    axes[-1].legend(handles=handles, fontsize=8, loc="center left", bbox_to_anchor=(1.02, 0.5),
                    frameon=False)
    fig.suptitle(title or "Lower left is better: on the front, going faster costs more",
                 fontsize=11, fontweight="bold")
    return fig


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
    from .model import MEMORY_PARTS

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


# --------------------------------------------------------------------------------------
# notebook 07: predicted against published
# --------------------------------------------------------------------------------------
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
    ax.set_xlim(lo, hi)
    ax.set_ylim(lo, hi)
    ax.set_aspect("equal", adjustable="box")
    ax.set_xlabel("Published (reported) value [its own unit]")
    ax.set_ylabel("Predicted by traincost [same unit]")
    ax.set_title("Each point: one published figure; units differ by family", fontsize=10)
    ax.grid(color="#EEEEEE", linewidth=0.6, which="major")
    ax.set_axisbelow(True)
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

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
    if ax_err is None:
        ax.legend(handles=handles, fontsize=8, loc="upper left", frameon=True)
    else:
        ax.legend(handles=handles, fontsize=7.5, loc="upper left", frameon=True,
                  framealpha=0.9)
        y = {f: i for i, f in enumerate(families)}
        ax_err.axvspan(-band_pct, band_pct, color="#BBBBBB", alpha=0.6, linewidth=0,
                       gid="band")
        ax_err.axvline(0.0, color="black", linewidth=1.0)
        jitter = np.random.default_rng(0).uniform(-0.18, 0.18, len(t))
        for (_, r), j in zip(t.iterrows(), jitter):
            colour, marker = styles[r["family"]]
            ax_err.scatter([r["error"]], [y[r["family"]] + j], s=28, marker=marker,
                           facecolors="none" if r["gap"] else colour,
                           edgecolors=colour if r["gap"] else "black",
                           linewidths=1.4 if r["gap"] else 0.6)
        ax_err.set_yticks(range(len(families)), [f.replace("_", " ") for f in families])
        ax_err.set_ylim(len(families) - 0.5, -0.5)
        ax_err.set_xlabel("Error of the prediction, (predicted - published) / published [%]")
        ax_err.set_title("Signed error by family (grey: within the band)", fontsize=10)
        ax_err.grid(axis="x", color="#EEEEEE", linewidth=0.6)
        for side in ("top", "right"):
            ax_err.spines[side].set_visible(False)
    fig.suptitle(title or "Predicted vs published: on the diagonal is right, in the grey band "
                          f"within ±{band_pct:g} %", fontsize=11, fontweight="bold")
    return fig


def step_time_trend_plot(table: pd.DataFrame, series: dict, *, title: str | None = None) -> Figure:
    """Published and predicted step times against the micro-batches per step, with their lines.

    One panel per strong-scaling series. Each panel draws the step times ``T`` [s] against
    the micro-batches per step and data-parallel replica ``m``, published as filled points,
    predicted as hollow ones, and each set's least-squares line ``T = a*m + c`` from
    :func:`traincost.validate.step_time_trend`, drawn down to ``m = 0`` so that where it
    meets the axis is ``c``, the time each step pays once. Parallel lines with different
    intercepts mean the model misses a per-step cost; different slopes, a per-micro-batch one.

    Parameters
    ----------
    table : pandas.DataFrame
        :func:`traincost.validate.compare_published`'s table (with ``microbatches``).
    series : dict
        Panel title -> case ids of one series (each with a published step time).
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
        When ``series`` is empty or a series has fewer than two micro-batch counts.
    """
    from .validate import step_time_points, step_time_trend

    if not series:
        raise ValueError("series: empty; give at least one {title: [case ids]}")
    n = len(series)
    cols = min(n, 3)
    rows = math.ceil(n / cols)
    fig = Figure(figsize=(4.2 * cols, 3.6 * rows + 0.5), layout="constrained")
    axes = np.atleast_1d(fig.subplots(rows, cols, squeeze=False)).ravel()
    for ax, (name, cases) in zip(axes, series.items()):
        trend = step_time_trend(table, cases)
        t = step_time_points(table, cases)
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
    for ax in axes[n:]:
        ax.set_visible(False)
    fig.suptitle(title or "Step time = a·m + c: where the lines meet the axis is the time each "
                 "step pays once", fontsize=11, fontweight="bold")
    return fig
