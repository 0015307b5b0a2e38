"""Power and carbon charts (notebook 05): power per device against the busy share, a power
cap's trade-off between training time and energy, and a run's carbon by the month it starts.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from .base import OKABE_ITO


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
        (:func:`traincost.explore.power_curve`). [-], [W]
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


#: calendar months' initials for a month axis, January first
_MONTH_TICKS = ("J", "F", "M", "A", "M", "J", "J", "A", "S", "O", "N", "D")


def carbon_by_start_month(df: pd.DataFrame, *, title: str | None = None, ax=None) -> Figure:
    """A run's operational carbon by the month it starts, as the % change against its
    annual-average figure, one line per region.

    Parameters
    ----------
    df : pandas.DataFrame
        :func:`traincost.explore.carbon_by_start_month`: ``region``, ``month`` (1-12),
        ``change_pct`` [%] and ``basis`` per row.

    Returns
    -------
    matplotlib.figure.Figure
        One line per region, gid its region id; a region without monthly figures is drawn
        dotted on zero (labelled "annual only").
    """
    if ax is None:
        fig = Figure(figsize=(7.0, 4.0), layout="constrained")
        ax = fig.add_subplot()
    else:
        fig = ax.figure
    for i, (region, rows) in enumerate(df.groupby("region", sort=False)):
        rows = rows.sort_values("month")
        monthly = (rows["basis"] == "monthly").any()
        ax.plot(rows["month"], rows["change_pct"], color=OKABE_ITO[i % len(OKABE_ITO)],
                linewidth=2, marker="o" if monthly else None,
                linestyle="-" if monthly else ":", gid=str(region),
                label=str(region) if monthly else f"{region} (annual only)")
    ax.axhline(0, color="#444444", linewidth=0.8)
    ax.text(12.4, 0, " annual\n average", va="center", ha="left", fontsize=8,
            color="#444444")
    ax.set_xticks(range(1, 13), _MONTH_TICKS)
    ax.set_xlim(0.6, 13.4)
    ax.set_xlabel("Month the run starts (on the 1st)")
    ax.set_ylabel("Operational carbon against the annual figure [%]")
    ax.set_title(title or "When a run starts moves its carbon", fontsize=11,
                 fontweight="bold", loc="left")
    ax.grid(color="#DDDDDD", linewidth=0.6)
    ax.legend(fontsize=8, ncols=2)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    return fig
