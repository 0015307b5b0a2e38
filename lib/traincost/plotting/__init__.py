"""Static charts of traincost results (matplotlib only).

Library code here builds :class:`matplotlib.figure.Figure` objects directly (no pyplot
state, no ``plt.show``), so it works under the Agg backend, in scripts, in CI and inside
widgets. Notebooks display the returned figure; :mod:`traincost.widgets` renders it to PNG.
Plots take data (tables, mappings, fitted values) and draw it; they compute nothing the
reader is meant to learn from.

By topic: :mod:`~traincost.plotting.base` (palette, labels, PNG),
:mod:`~traincost.plotting.bars` (accelerators side by side; memory, step, FLOP and carbon
bars), :mod:`~traincost.plotting.power` (05: power, a power cap, carbon by start month), :mod:`~traincost.plotting.cost` (06),
:mod:`~traincost.plotting.layouts` (04), :mod:`~traincost.plotting.validation` (07) and
:mod:`~traincost.plotting.sites` (09).
Every public name is re-exported here.

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

from .bars import (CARBON_COLOURS, CARBON_LABELS, FLOP_COLOURS, FLOP_LABELS, MEMORY_COLOURS,
                   MEMORY_LABELS, STEP_COLOURS, STEP_LABELS, carbon_bars, compare_bars,
                   flop_bars, gap_reason, layout_bars, memory_bars, stacked_bars, step_bars)
from .base import DEFAULT_METRICS, METRIC_LABELS, OKABE_ITO, figure_png
from .cost import cost_vs_time, sensitivity_lines
from .layouts import OBJECTIVE_WORDS, PARETO_AXES, PARETO_TITLES, pareto_plot, why_lose_bars
from .power import carbon_by_start_month, power_cap_tradeoff, power_curve
from .sites import site_link_lines
from .validation import (FAMILY_LABELS, FAMILY_STYLES, model_gap_mask, step_time_trend_plot,
                         validation_scatter)

__all__ = [
    "CARBON_COLOURS", "CARBON_LABELS", "DEFAULT_METRICS", "FAMILY_LABELS", "FAMILY_STYLES",
    "FLOP_COLOURS", "FLOP_LABELS", "MEMORY_COLOURS", "MEMORY_LABELS", "METRIC_LABELS",
    "OBJECTIVE_WORDS", "OKABE_ITO", "PARETO_AXES", "PARETO_TITLES", "STEP_COLOURS",
    "STEP_LABELS", "carbon_bars", "carbon_by_start_month", "compare_bars", "cost_vs_time",
    "figure_png", "flop_bars", "gap_reason", "layout_bars", "memory_bars", "model_gap_mask",
    "pareto_plot", "power_cap_tradeoff", "power_curve", "sensitivity_lines",
    "site_link_lines", "stacked_bars", "step_bars", "step_time_trend_plot",
    "validation_scatter", "why_lose_bars",
]
