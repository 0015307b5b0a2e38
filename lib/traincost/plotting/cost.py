"""Cost charts (notebook 06): cost against training time for a deadline, and price
sensitivity.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import FuncFormatter
from matplotlib.transforms import offset_copy

from .base import OKABE_ITO, _short_number, column_lines, finish_lines


#: the band columns a candidate's whiskers read (time across, cost up)
_BANDS = ("train_time_days_p10", "train_time_days_p90", "cost_usd_p10", "cost_usd_p90")


def cost_vs_time(df: pd.DataFrame, deadline_days: float, *, winner=None,
                 title: str | None = None, ax=None) -> Figure:
    """Cost against training time of every (accelerator, device count) candidate.

    Parameters
    ----------
    df : pandas.DataFrame
        One row per candidate with ``accelerator``, ``devices``, ``train_time_days``
        and ``cost_usd`` (rows without both are not drawn); where it has
        ``train_time_days_p10``/``_p90`` and ``cost_usd_p10``/``_p90``
        (``compare(..., uncertainty=True)``), each point carries their 80% ranges as
        whiskers.
    deadline_days : float
        Drawn as a dashed vertical line; the right of it is shaded. [days]
    winner : index label, optional
        Row to ring as the cheapest that meets the deadline.

    Returns
    -------
    matplotlib.figure.Figure
        Points carry gid ``"<accelerator>@<devices>"``, each accelerator's whiskers
        ``"band:<accelerator>"``; the winner's ring ``"winner"``.
    """
    if ax is None:
        fig = Figure(figsize=(9.0, 4.6), layout="constrained")
        ax = fig.add_subplot()
    else:
        fig = ax.figure
    # plain arrays, not a frame filtered per accelerator, and the artists ax.plot,
    # ax.errorbar and ax.annotate would add, added directly: the same pixels in a fraction
    # of the time (a widget redraws this chart on every change, issue 26)
    days = pd.to_numeric(df["train_time_days"], errors="coerce").to_numpy(float)
    cost = pd.to_numeric(df["cost_usd"], errors="coerce").to_numpy(float)
    drawn = ~np.isnan(days) & ~np.isnan(cost)
    banded = all(c in df.columns for c in _BANDS)
    band = df[list(_BANDS)].apply(pd.to_numeric, errors="coerce").to_numpy(float) \
        if banded else None
    accel, devices = df["accelerator"].to_numpy(object), df["devices"].to_numpy(object)
    markers = "osD^v<>p"
    # a device count's label 4 points up and right of its point, inside the axes: the layout
    # need not measure it
    label_at = offset_copy(ax.transData, fig=fig, x=4, y=4, units="points")
    for i, acc in enumerate(dict.fromkeys(accel)):
        rows = np.flatnonzero(drawn & (accel == acc))
        if not len(rows):
            continue
        rows = rows[np.argsort(devices[rows].astype(np.int64), kind="stable")]
        xs, ys = days[rows], cost[rows]
        colour = OKABE_ITO[i % len(OKABE_ITO)]
        ax.plot(xs, ys, color=colour, linewidth=0.8, alpha=0.6)
        if banded:                                   # one whisker set per accelerator
            b = band[rows]
            has = np.isfinite(b).all(axis=1)
            if has.any():
                whisker = {"color": colour, "linewidth": 0.8, "alpha": 0.6,
                           "gid": f"band:{acc}"}
                ax.hlines(ys[has], b[has, 0], b[has, 1], **whisker)
                ax.vlines(xs[has], b[has, 2], b[has, 3], **whisker)
        for n, x_, y_ in zip(devices[rows].astype(np.int64), xs, ys):
            ax.add_line(Line2D([x_], [y_], marker=markers[i % len(markers)], linestyle="none",
                               color=colour, markeredgecolor="black", markersize=6,
                               gid=f"{acc}@{n}", label=acc if x_ == xs[0] else None))
            ax.text(x_, y_, str(n), transform=label_at, fontsize=7,
                    color="#444444").set_in_layout(False)
    ax.axvline(deadline_days, color="black", linestyle="--", linewidth=1.2, gid="deadline")
    late = (pd.to_numeric(df[_BANDS[1]], errors="coerce").to_numpy(float)[drawn]
            if _BANDS[1] in df.columns else np.zeros(0))
    xmax = max([deadline_days * 1.5] + list(days[drawn]) + list(late[~np.isnan(late)]))
    ax.axvspan(deadline_days, xmax * 1.05, color="#DDDDDD", alpha=0.5, linewidth=0)
    ax.text(deadline_days, 1.0, f" deadline {deadline_days:.3g} days",
            transform=ax.get_xaxis_transform(), va="top", fontsize=8)
    if winner is not None and winner in df.index[drawn]:
        w = df.loc[winner]
        ax.plot([float(w["train_time_days"])], [float(w["cost_usd"])], marker="o",
                markersize=16, markerfacecolor="none", markeredgecolor="#D55E00",
                markeredgewidth=2, linestyle="none", gid="winner")
    ax.set_xlim(0, xmax * 1.05)
    ax.set_ylim(bottom=0)
    ax.set_xlabel("Training time [days]")
    ax.set_ylabel("Cost [USD]")
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _pos: _short_number(v, "USD")))
    ax.set_title(title or "Cheapest point left of the dashed line wins (numbers: devices"
                 + ("; whiskers: 80% ranges)" if banded else ")"),
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
    fig, ax = column_lines(df, ax, (7.0, 4.0), linestyles=("-", "--", "-.", ":"))
    ax.axvline(100, color="#888888", linewidth=0.8)
    ax.set_xlabel("Price as a share of today's catalog value [%]")
    ax.set_ylabel("Cost of the run [USD]")
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _pos: _short_number(v, "USD")))
    finish_lines(ax, title or "Which price matters: the steeper the line, the more it moves "
                              "the cost")
    return fig
