"""Notebook 09's chart: a step's time against the link between the sites."""

from __future__ import annotations

import pandas as pd
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter

from .base import _short_number, column_lines, finish_lines


def site_link_lines(df: pd.DataFrame, *, one_site_s: float | None = None,
                    title: str | None = None, ax=None) -> Figure:
    """Step time of one run over several sites as the site link's bandwidth moves.

    Parameters
    ----------
    df : pandas.DataFrame
        Indexed by the link's bandwidth, each direction [Gb/s], one column per placement
        (e.g. ``data parallel crosses``), values the step time [s]; NaN where a
        placement has no valid layout.
    one_site_s : float, optional
        The same run's step time on one site, drawn as a dashed line. [s]
    title : str, optional
    ax : matplotlib Axes, optional

    Returns
    -------
    matplotlib.figure.Figure
        One line per column (gid = the column name); the one-site line has gid ``one site``.
    """
    fig, ax = column_lines(df, ax, (7.5, 4.0), markers=("o", "s", "^", "D"))
    if one_site_s is not None:
        ax.axhline(one_site_s, color="black", linestyle="--", linewidth=1.2, gid="one site",
                   label="the same run on one site")
    ax.set_xscale("log")
    ax.set_xlabel("Link between two sites, each direction [Gb/s]")
    ax.set_ylabel("Time per optimizer step [s]")
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _pos: _short_number(v)))
    finish_lines(ax, title or "A slow link costs time; which dimension crosses it decides how "
                              "much")
    return fig
