"""Tests for traincost.plotting (matplotlib only, Agg-safe)."""
import math
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from matplotlib.axes import Axes
from matplotlib.figure import Figure

import traincost
from traincost import plotting

METRICS = ("train_time_days", "facility_energy_mwh", "co2e_t", "cost_usd")
UNITS = {"train_time_days": "[days]", "facility_energy_mwh": "[MWh]", "co2e_t": "[tCO2e]",
         "cost_usd": "[USD]"}


def hand_table():
    """A comparison table written by hand: two runnable rows and the three kinds of gap."""
    return pd.DataFrame(
        {"fits_in_memory": [True, True, False, np.nan, True],
         "train_time_days": [10.0, 25.0, 7.0, np.nan, 40.0],
         "facility_energy_mwh": [100.0, 50.0, 30.0, np.nan, 80.0],
         "co2e_t": [47.5, 23.75, 14.25, np.nan, 38.0],
         "cost_usd": [500_000.0, 250_000.0, 90_000.0, np.nan, np.nan],
         "note": ["", "", "does not fit in memory", "devices: no valid layout", ""]},
        index=pd.Index(["fast", "slow", "too-small", "broken", "unpriced"], name="accelerator"))


def bars_by_id(ax):
    """{accelerator id: bar length} of one panel (bars carry the id as gid)."""
    return {p.get_gid(): p.get_width() for p in ax.patches
            if p.get_gid() and not p.get_gid().startswith("gap:")}


def gaps_by_id(ax):
    return {p.get_gid()[len("gap:"):] for p in ax.patches
            if p.get_gid() and p.get_gid().startswith("gap:")}


@pytest.fixture(scope="module")
def real_table():
    return traincost.compare(["a100-sxm4-80gb", "h100-sxm5-80gb", "mi300x"], 64,
                             model="gpt2-small", global_batch=512, tokens=10e9)


def test_returns_figure_with_one_axes_per_metric():
    fig = plotting.compare_bars(hand_table())
    assert isinstance(fig, Figure)
    assert len(fig.axes) == len(METRICS)
    fig2 = plotting.compare_bars(hand_table(), metrics=("co2e_t", "cost_usd"))
    assert len(fig2.axes) == 2


def test_axis_labels_name_their_units():
    fig = plotting.compare_bars(hand_table())
    for ax, metric in zip(fig.axes, METRICS):
        assert UNITS[metric] in ax.get_xlabel()
    assert fig.get_suptitle()          # a title that says how to read the chart


def test_bar_lengths_equal_table_values():
    df = hand_table()
    fig = plotting.compare_bars(df)
    for ax, metric in zip(fig.axes, METRICS):
        drawn = bars_by_id(ax)
        for acc, value in drawn.items():
            assert value == pytest.approx(df.loc[acc, metric])
    # the hand table's runnable rows are drawn in every panel
    time_bars = bars_by_id(fig.axes[0])
    assert set(time_bars) == {"fast", "slow", "unpriced"}


def test_real_compare_table_bars_match(real_table):
    fig = plotting.compare_bars(real_table)
    for ax, metric in zip(fig.axes, METRICS):
        for acc, value in bars_by_id(ax).items():
            assert value == pytest.approx(float(real_table.loc[acc, metric]))


def test_rows_without_a_value_are_a_labelled_gap_not_dropped():
    df = hand_table()
    fig = plotting.compare_bars(df)
    time_ax, cost_ax = fig.axes[0], fig.axes[3]
    assert gaps_by_id(time_ax) == {"too-small", "broken"}
    assert gaps_by_id(cost_ax) == {"too-small", "broken", "unpriced"}
    texts = " ".join(t.get_text() for t in cost_ax.texts)
    assert "does not fit in memory" in texts
    assert "cannot run" in texts
    assert "no price" in texts
    # every accelerator keeps its row on the shared y axis
    assert [t.get_text() for t in time_ax.get_yticklabels()] == list(df.index)
    # a gap is not a zero-length bar (zero would read as "free")
    assert "too-small" not in bars_by_id(time_ax)


def test_same_accelerator_same_colour_in_every_panel():
    fig = plotting.compare_bars(hand_table())
    colours = [{p.get_gid(): p.get_facecolor() for p in ax.patches if p.get_gid()}
               for ax in fig.axes]
    assert colours[0]["fast"] == colours[1]["fast"] == colours[2]["fast"]
    assert colours[0]["fast"] != colours[0]["slow"]


def test_draws_into_a_given_figure_or_axes():
    fig = Figure()
    assert plotting.compare_bars(hand_table(), ax=fig) is fig
    assert len(fig.axes) == 4
    fig2 = Figure()
    axes = fig2.subplots(1, 2)
    out = plotting.compare_bars(hand_table(), metrics=("co2e_t", "cost_usd"), ax=axes)
    assert out is fig2
    assert bars_by_id(axes[0])["slow"] == pytest.approx(23.75)


@pytest.mark.parametrize("kwargs, field", [
    ({"metrics": ("not_a_column",)}, "metrics"),
    ({"metrics": ()}, "metrics"),
    ({"ax": "nonsense"}, "ax"),
])
def test_bad_arguments_raise_value_error_naming_the_field(kwargs, field):
    with pytest.raises(ValueError, match=field):
        plotting.compare_bars(hand_table(), **kwargs)


def test_empty_table_raises():
    with pytest.raises(ValueError, match="df"):
        plotting.compare_bars(hand_table().iloc[:0])


def test_all_rows_missing_still_draws():
    df = hand_table().loc[["too-small", "broken"]]
    fig = plotting.compare_bars(df)
    assert all(not bars_by_id(ax) for ax in fig.axes)
    assert all(gaps_by_id(ax) == {"too-small", "broken"} for ax in fig.axes)


def test_figure_png_is_png():
    png = plotting.figure_png(plotting.compare_bars(hand_table()))
    assert png[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("value, unit, expected", [
    (704_284.0, "USD", "$704k"), (1_250_000.0, "USD", "$1.25M"), (33.41, "days", "33.4"),
    (0.0, "", "0"), (math.nan, "", "n/a"),
])
def test_short_number(value, unit, expected):
    assert plotting._short_number(value, unit) == expected


def test_importing_plotting_needs_neither_pyplot_nor_ipywidgets():
    code = ("import sys, traincost.plotting; "
            "assert 'matplotlib.pyplot' not in sys.modules, 'pyplot'; "
            "assert 'ipywidgets' not in sys.modules, 'ipywidgets'")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_axes_type_is_matplotlib_axes():
    fig = plotting.compare_bars(hand_table())
    assert all(isinstance(ax, Axes) for ax in fig.axes)
