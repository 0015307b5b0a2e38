"""Tests for traincost.plotting (matplotlib only, Agg-safe)."""
import io
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


def _pixels(png: bytes) -> np.ndarray:
    from PIL import Image
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGBA"))


def test_figure_png_on_a_kept_renderer_draws_what_savefig_draws():
    """figure_png keeps one Agg renderer per pixel size between figures (its text metrics
    cached, issue 26); the renderer is cleared, so each chart's pixels are savefig's own
    (each drawn once, on a fresh figure), whatever was drawn before it on that renderer or
    at another size."""
    def small():
        fig = Figure(figsize=(3.0, 2.0))
        fig.add_subplot().plot([0, 1], [1, 0])
        return fig

    charts = (lambda: plotting.compare_bars(hand_table()),
              lambda: plotting.compare_bars(hand_table().iloc[::-1]),   # same size, other text
              small)
    for make in (*charts, *charts):
        buf = io.BytesIO()
        make().savefig(buf, format="png", dpi=100)
        expected = _pixels(buf.getvalue())
        got = _pixels(plotting.figure_png(make()))
        assert got.shape == expected.shape
        assert (got == expected).all()


@pytest.mark.parametrize("value, unit, expected", [
    (704_284.0, "USD", "$704k"), (1_250_000.0, "USD", "$1.25M"), (33.41, "days", "33.4"),
    (0.0, "", "0"), (math.nan, "", "n/a"),
])
def test_short_number(value, unit, expected):
    assert plotting.base._short_number(value, unit) == expected


def test_importing_plotting_needs_neither_pyplot_nor_ipywidgets():
    code = ("import sys, traincost.plotting; "
            "assert 'matplotlib.pyplot' not in sys.modules, 'pyplot'; "
            "assert 'ipywidgets' not in sys.modules, 'ipywidgets'")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_axes_type_is_matplotlib_axes():
    fig = plotting.compare_bars(hand_table())
    assert all(isinstance(ax, Axes) for ax in fig.axes)


# ======================================================================================
# stacked bars, lines and scatter for notebooks 02-06
# ======================================================================================
from traincost import explore  # noqa: E402
from traincost.model import MEMORY_PARTS, STEP_PARTS  # noqa: E402

MEM_ROWS = {"small": {"weights": 10.0, "gradients": 10.0, "optimizer": 30.0,
                      "activations": 5.0, "gathered": 0.5, "reserved": 2.0},
            "big": {"weights": 40.0, "gradients": 40.0, "optimizer": 60.0,
                    "activations": 20.0, "gathered": 3.0, "reserved": 2.0}}


def segments(ax):
    """{(row, part): (left, width)} of a stacked-bar panel."""
    return {tuple(p.get_gid().split(":", 1)): (p.get_x(), p.get_width()) for p in ax.patches
            if p.get_gid() and ":" in p.get_gid()}


def test_stacked_segments_sum_to_each_total():
    fig = plotting.memory_bars(MEM_ROWS, hbm_gib=74.5)
    segs = segments(fig.axes[0])
    for row, parts in MEM_ROWS.items():
        widths = [segs[(row, p)][1] for p in MEMORY_PARTS]
        assert widths == pytest.approx([parts[p] for p in MEMORY_PARTS])
        # each segment starts where the previous one ends
        lefts = [segs[(row, p)][0] for p in MEMORY_PARTS]
        assert lefts == pytest.approx(np.concatenate([[0], np.cumsum(widths)[:-1]]))


def test_memory_bars_draw_the_hbm_line_and_flag_overflow():
    fig = plotting.memory_bars(MEM_ROWS, hbm_gib=74.5)
    ax = fig.axes[0]
    line = [ln for ln in ax.lines if ln.get_gid() == "limit"][0]
    assert line.get_xdata()[0] == pytest.approx(74.5)
    texts = [t.get_text() for t in ax.texts]
    assert sum("over the limit" in t for t in texts) == 1          # only "big" (162 GiB)
    assert "[GiB]" in ax.get_xlabel() and ax.get_title(loc="left")


def test_all_zero_parts_stay_out_of_the_legend():
    step = {"compute": 10.0, "tp_comm": 2.0, "bubble": 1.0, "cp_comm": 0.0}
    fig = plotting.step_bars({"layout": step})
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert labels == [plotting.STEP_LABELS[p] for p in ("compute", "tp_comm", "bubble")]
    assert "[s]" in fig.axes[0].get_xlabel()


def test_real_estimate_breakdowns_plot():
    e = traincost.estimate(accelerator="h100-sxm5-80gb", devices=64, model="llama2-70b",
                           global_batch=1024, tp=8, pp=4, vpp=1, zero=1, micro_batch=1,
                           recompute="selective")
    fig = plotting.layout_bars(e.step_breakdown_s(), e.memory_breakdown_gib(),
                               e.to_dict()["hbm_gib_per_device"])
    assert len(fig.axes) == 2
    step_widths = sum(w for (_, _), (_, w) in segments(fig.axes[0]).items())
    assert step_widths == pytest.approx(e.step_time_s)
    mem_widths = sum(w for (_, _), (_, w) in segments(fig.axes[1]).items())
    assert mem_widths == pytest.approx(e.to_dict()["memory_gib_per_device"])
    assert set(p for _, p in segments(fig.axes[0])) <= set(STEP_PARTS)


def test_flop_bars_one_row_per_recompute_mode():
    rows = {rc: explore.flop_per_token_parts("llama2-7b", rc)
            for rc in ("none", "selective", "full")}
    fig = plotting.flop_bars(rows)
    segs = segments(fig.axes[0])
    assert ("none", "recompute") not in segs                      # zero: not drawn
    assert segs[("full", "recompute")][1] > segs[("selective", "recompute")][1]
    assert "[FLOP]" in fig.axes[0].get_xlabel()


def test_carbon_bars_stack_operational_and_embodied():
    df = pd.DataFrame({"co2e_t": [5.0, 50.0], "embodied_co2e_t": [1.0, np.nan]},
                      index=["clean", "coal"])
    segs = segments(plotting.carbon_bars(df).axes[0])
    assert segs[("clean", "embodied")] == pytest.approx((5.0, 1.0))
    assert ("coal", "embodied") not in segs                        # unknown: not drawn
    with pytest.raises(ValueError, match="df"):
        plotting.carbon_bars(df.iloc[:0])


@pytest.mark.parametrize("rows, field", [
    ({}, "rows"), ({"x": {"nonsense": 1.0}}, "rows"), ({"x": {"weights": -1.0}}, "rows"),
    ({"x": {"weights": float("nan")}}, "rows"),
])
def test_stacked_bars_reject_bad_rows(rows, field):
    with pytest.raises(ValueError, match=field):
        plotting.memory_bars(rows, 80.0)


def test_stacked_bars_reject_a_bad_ax():
    with pytest.raises(ValueError, match="ax"):
        plotting.memory_bars(MEM_ROWS, 80.0, ax="left")


def test_power_curve_lines_are_the_table():
    df = explore.power_curve("h100-sxm5-80gb")
    fig = plotting.power_curve(df, tdp_w=700.0, idle_w=69.0, busy_fraction=0.5)
    ax = fig.axes[0]
    lines = {ln.get_gid(): ln for ln in ax.lines if ln.get_gid()}
    np.testing.assert_allclose(lines["total"].get_ydata(), df["total_w"])
    np.testing.assert_allclose(lines["device"].get_ydata(), df["device_w"])
    assert lines["tdp"].get_ydata()[0] == 700.0 and lines["idle"].get_ydata()[0] == 69.0
    assert "[W]" in ax.get_ylabel() and "[-]" in ax.get_xlabel()


def test_cost_vs_time_points_deadline_and_winner():
    df = pd.DataFrame({"accelerator": ["a", "a", "b", "c"], "devices": [64, 128, 64, 64],
                       "train_time_days": [20.0, 10.0, 8.0, np.nan],
                       "cost_usd": [100.0, 110.0, 90.0, np.nan]},
                      index=["a@64", "a@128", "b@64", "c@64"])
    fig = plotting.cost_vs_time(df, 12.0, winner="b@64")
    ax = fig.axes[0]
    points = {ln.get_gid(): (ln.get_xdata()[0], ln.get_ydata()[0]) for ln in ax.lines
              if ln.get_gid() and "@" in ln.get_gid()}
    assert points == {"a@64": (20.0, 100.0), "a@128": (10.0, 110.0), "b@64": (8.0, 90.0)}
    deadline = [ln for ln in ax.lines if ln.get_gid() == "deadline"][0]
    assert deadline.get_xdata()[0] == 12.0
    winner = [ln for ln in ax.lines if ln.get_gid() == "winner"][0]
    assert (winner.get_xdata()[0], winner.get_ydata()[0]) == (8.0, 90.0)
    assert "[days]" in ax.get_xlabel() and "[USD]" in ax.get_ylabel()


def test_sensitivity_lines_one_per_scenario():
    df = pd.DataFrame({"rent": [50.0, 100.0, 200.0], "own": [80.0, 100.0, 140.0]},
                      index=pd.Index([50.0, 100.0, 200.0]))
    ax = plotting.sensitivity_lines(df).axes[0]
    lines = {ln.get_gid(): ln for ln in ax.lines if ln.get_gid()}
    np.testing.assert_allclose(lines["rent"].get_ydata(), [50, 100, 200])
    np.testing.assert_allclose(lines["own"].get_xdata(), [50, 100, 200])
    assert "[%]" in ax.get_xlabel() and "[USD]" in ax.get_ylabel()


def test_new_charts_use_the_okabe_ito_palette():
    from matplotlib.colors import to_hex
    fig = plotting.memory_bars(MEM_ROWS, 80.0)
    colours = {to_hex(p.get_facecolor()).upper() for p in fig.axes[0].patches if p.get_gid()}
    assert colours <= {c.upper() for c in plotting.OKABE_ITO}


# ======================================================================================
# notebook 04: Pareto fronts and why the others lose; notebook 07: predicted vs published
# ======================================================================================
from matplotlib.colors import to_hex, to_rgba  # noqa: E402


def offsets(ax, gid):
    """(x, y) of the points of the scatter with this gid, in drawing order."""
    found = [c for c in ax.collections if c.get_gid() == gid]
    assert found, f"no scatter with gid {gid!r}"
    return np.asarray(found[0].get_offsets(), dtype=float)


@pytest.fixture(scope="module")
def small_search():
    # every feasible layout is kept (top is larger than the layouts that fit)
    return traincost.search(["a100-sxm4-80gb", "h100-sxm5-80gb"], [64, 128], model="llama2-7b",
                            global_batch=512, tokens=1e11, objective="cost", top=100_000)


def test_pareto_front_points_are_non_dominated(small_search):
    res = small_search
    assert len(res.top) == res.layouts_feasible                 # the whole feasible set
    fig = plotting.pareto_plot(res)
    for ax, name in zip(fig.axes, ("time_cost", "time_carbon")):
        y_col = plotting.PARETO_AXES[name][0]
        front = offsets(ax, f"front:{name}")
        assert len(front) == len(res.pareto[name]) >= 1
        np.testing.assert_allclose(front[:, 0], res.pareto[name]["train_time_days"])
        np.testing.assert_allclose(front[:, 1], res.pareto[name][y_col])
        xs = res.top["train_time_days"].to_numpy(dtype=float)
        ys = res.top[y_col].to_numpy(dtype=float)
        for x, y in front:
            # no feasible layout is at least as good on both axes and better on one
            beats = (xs <= x * (1 + 1e-12)) & (ys <= y * (1 + 1e-12)) & \
                    ((xs < x * (1 - 1e-9)) | (ys < y * (1 - 1e-9)))
            assert not beats.any(), (name, x, y)
        # along a front, faster means dearer (or dirtier): y falls as x grows
        assert np.all(np.diff(front[:, 0]) > 0) and np.all(np.diff(front[:, 1]) < 0)
        cloud = [ln for ln in ax.lines if ln.get_gid() == f"others:{name}"]
        assert sum(len(ln.get_xdata()) for ln in cloud) == len(res.top)
        assert {to_hex(ln.get_color()) for ln in cloud} == \
            {to_hex(c) for c in plotting.OKABE_ITO[:2]}        # one line per accelerator
        assert "[days]" in ax.get_xlabel()
    assert "[USD]" in fig.axes[0].get_ylabel() and "[tCO2e]" in fig.axes[1].get_ylabel()
    assert fig._suptitle.get_text()


def test_pareto_plot_rings_the_best_of_the_objective(small_search):
    res = small_search
    ax = plotting.pareto_plot(res, fronts=("time_cost",)).axes[0]
    ring = [ln for ln in ax.lines if ln.get_gid() == "best"][0]
    best = res.best["cost"]
    assert (ring.get_xdata()[0], ring.get_ydata()[0]) == pytest.approx(
        (best["train_time_days"], best["cost_usd"]))
    # the cheapest layout is the last (slowest) point of the time-cost front
    assert best["cost_usd"] == pytest.approx(res.pareto["time_cost"]["cost_usd"].iloc[-1])


def test_pareto_plot_from_hand_written_fronts():
    front = pd.DataFrame({"accelerator": ["a", "b", "a"], "devices": [512, 256, 128],
                          "train_time_days": [10.0, 20.0, 40.0],
                          "cost_usd": [3e6, 2e6, 1.5e6], "co2e_t": [30.0, 20.0, 15.0]})
    fig = plotting.pareto_plot({"time_cost": front, "time_carbon": front})
    ax = fig.axes[0]
    np.testing.assert_allclose(offsets(ax, "front:time_cost"),
                               [[10, 3e6], [20, 2e6], [40, 1.5e6]])
    colours = [to_rgba(c) for c in
               [c for c in ax.collections if c.get_gid() == "front:time_cost"][0].get_facecolor()]
    assert colours[0] == colours[2] != colours[1]               # one colour per accelerator
    assert ax.get_xscale() == "linear"                           # a 4x spread stays linear
    assert not [ln for ln in ax.lines if ln.get_gid() == "best"]
    with pytest.raises(ValueError, match="fronts"):
        plotting.pareto_plot({"time_cost": front}, fronts=("time_energy",))
    with pytest.raises(ValueError, match="fronts"):
        plotting.pareto_plot({"time_cost": front}, fronts=())


def test_why_lose_bars_steps_memory_and_limit():
    steps = {"best": {"compute": 10.0, "bubble": 1.0}, "loser": {"compute": 10.0, "bubble": 5.0}}
    memory = {"best": {"weights": 40.0, "activations": 20.0},
              "loser": {"weights": 40.0, "activations": 60.0}}
    fig = plotting.why_lose_bars(steps, memory, limit_fraction=0.9)
    top, bottom = fig.axes[:2]
    assert segments(top)[("loser", "bubble")] == pytest.approx((10.0, 5.0))
    line = [ln for ln in bottom.lines if ln.get_gid() == "limit"][0]
    assert line.get_xdata()[0] == pytest.approx(90.0)            # per cent of the device
    assert sum("over the limit" in t.get_text() for t in bottom.texts) == 1
    assert "[s]" in top.get_xlabel() and "[%" in bottom.get_xlabel()
    with pytest.raises(ValueError, match="memory_rows"):
        plotting.why_lose_bars(steps, {"best": memory["best"]})


def validation_table():
    """A comparison table written by hand: two families, one model gap, one missing value."""
    return pd.DataFrame({
        "case": ["a", "a", "b", "c", "d"],
        "family": ["throughput", "power", "throughput", "throughput", "energy"],
        "metric": ["mfu", "avg_power_w_per_device", "mfu", "mfu", "energy_mwh"],
        "predicted": [0.5, 330.0, 0.25, np.nan, 120.0],
        "reported": [0.4, 300.0, 0.5, 0.4, 100.0],
        "error_pct": [25.0, 10.0, -50.0, np.nan, 20.0],
        "model_gap": ["", "", "its own stack", "", ""]})


def test_validation_scatter_one_point_per_validated_metric():
    fig = plotting.validation_scatter(validation_table(), errors=False)
    ax = fig.axes[0]
    points = {tuple(p) for c in ax.collections if c.get_gid() not in (None, "band")
              for p in np.asarray(c.get_offsets())}
    # x = published, y = predicted; the row without a prediction is not drawn
    assert points == {(0.4, 0.5), (300.0, 330.0), (0.5, 0.25), (100.0, 120.0)}
    urls = sorted(u for c in ax.collections if c.get_gid() not in (None, "band")
                  for u in c.get_urls())
    assert urls == ["a|avg_power_w_per_device", "a|mfu", "b|mfu", "d|energy_mwh"]
    assert ax.get_xscale() == ax.get_yscale() == "log"
    assert "[" in ax.get_xlabel() and "[" in ax.get_ylabel()


def test_validation_scatter_ideal_line_is_y_equals_x_with_a_band():
    ax = plotting.validation_scatter(validation_table(), band_pct=10.0).axes[0]
    ideal = [ln for ln in ax.lines if ln.get_gid() == "ideal"][0]
    np.testing.assert_allclose(ideal.get_xdata(), ideal.get_ydata())   # through (x, x)
    band = [c for c in ax.collections if c.get_gid() == "band"][0]
    verts = band.get_paths()[0].vertices
    x = ideal.get_xdata()[0]
    ys = verts[np.isclose(verts[:, 0], x), 1]
    assert min(ys) == pytest.approx(0.9 * x) and max(ys) == pytest.approx(1.1 * x)


def test_validation_scatter_model_gap_is_hollow_and_labelled():
    ax = plotting.validation_scatter(validation_table()).axes[0]
    gap = [c for c in ax.collections if c.get_gid() == "throughput:model gap"][0]
    assert gap.get_urls() == ["b|mfu"]
    assert len(gap.get_facecolor()) == 0 or gap.get_facecolor()[0][3] == 0   # hollow
    assert to_rgba(gap.get_edgecolor()[0]) == to_rgba(plotting.FAMILY_STYLES["throughput"][0])
    solid = [c for c in ax.collections if c.get_gid() == "throughput"][0]
    assert to_rgba(solid.get_facecolor()[0]) == to_rgba(plotting.FAMILY_STYLES["throughput"][0])
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert any("model gap" in t for t in labels)
    # a measured power is not spoiled by its case's model gap
    table = validation_table().assign(model_gap=["x", "x", "", "", ""])
    assert plotting.model_gap_mask(table).tolist() == [True, False, False, False, False]


def test_validation_scatter_real_table_draws_every_compared_figure():
    from traincost import validate

    table = validate.compare_published()
    ax = plotting.validation_scatter(table).axes[0]
    drawn = sum(len(c.get_offsets()) for c in ax.collections if c.get_gid() not in (None, "band"))
    assert drawn == int(((table["predicted"] > 0) & (table["reported"] > 0)).sum())
    gaps = sum(len(c.get_offsets()) for c in ax.collections
               if c.get_gid() and c.get_gid().endswith(":model gap"))
    assert gaps == int(plotting.model_gap_mask(table).sum()) > 0


@pytest.mark.parametrize("kwargs, field", [({"band_pct": -1}, "band_pct"),
                                           ({"band_pct": 100}, "band_pct")])
def test_validation_scatter_rejects_bad_input(kwargs, field):
    with pytest.raises(ValueError, match=field):
        plotting.validation_scatter(validation_table(), **kwargs)
    with pytest.raises(ValueError, match="table"):
        plotting.validation_scatter(validation_table().drop(columns="model_gap"))
    with pytest.raises(ValueError, match="table"):
        plotting.validation_scatter(validation_table().iloc[3:4])


def trend_table():
    """Two series written by hand: published T = 0.2 m + 2, predicted T = 0.25 m + 0.5 [s]."""
    m = np.array([32.0, 64.0, 128.0, 48.0, 96.0])
    return pd.DataFrame({"case": ["s1", "s2", "s3", "t1", "t2"], "metric": "step_time_s",
                         "microbatches": m, "reported": 0.2 * m + 2.0,
                         "predicted": 0.25 * m + 0.5})


def trend_series(series):
    """The points and the fitted lines of each series, as the caller passes them."""
    from traincost import validate

    table = trend_table()
    return ({name: validate.step_time_points(table, cases) for name, cases in series.items()},
            {name: validate.step_time_trend(table, cases) for name, cases in series.items()})


def test_step_time_trend_plot_lines_meet_the_axis_at_the_per_step_time():
    fig = plotting.step_time_trend_plot(*trend_series({"one": ["s1", "s2", "s3"],
                                                       "two": ["t1", "t2"]}))
    first, second = fig.axes[:2]
    assert first.get_title(loc="left") == "one" and second.get_title(loc="left") == "two"
    lines = {ln.get_gid(): ln for ln in first.lines}
    pub, pred = lines["one:published fit"], lines["one:predicted fit"]
    assert pub.get_xdata()[0] == 0.0
    assert pub.get_ydata()[0] == pytest.approx(2.0)         # c of the published times
    assert pred.get_ydata()[0] == pytest.approx(0.5)        # c of the predicted ones
    x1, y1 = pub.get_xdata()[1], pub.get_ydata()[1]
    assert (y1 - 2.0) / x1 == pytest.approx(0.2)            # a, per micro-batch [s]
    points = lines["one:published"]
    assert sorted(points.get_xdata()) == [32.0, 64.0, 128.0]
    assert sorted(lines["one:predicted"].get_ydata()) == pytest.approx([8.5, 16.5, 32.5])
    assert "[s]" in first.get_ylabel()


def test_step_time_trend_plot_draws_the_lines_it_is_given():
    """The plot fits nothing: hand-written lines T = 0.5 m + 3 and T = 0.1 m + 1 [s] are
    drawn as given, though the points lie on neither."""
    points = {"one": trend_table().iloc[:3]}
    lines = pd.DataFrame({"per_microbatch_s": [0.5, 0.1], "per_step_s": [3.0, 1.0]},
                         index=["published", "predicted"])
    ax = plotting.step_time_trend_plot(points, {"one": lines}).axes[0]
    drawn = {ln.get_gid(): ln for ln in ax.lines}
    pub, pred = drawn["one:published fit"], drawn["one:predicted fit"]
    # drawn from m = 0 to 1.05 x the largest m (128): 134.4 micro-batches
    np.testing.assert_allclose(pub.get_xdata(), [0.0, 134.4])
    np.testing.assert_allclose(pub.get_ydata(), [3.0, 0.5 * 134.4 + 3.0])     # 70.2 s
    np.testing.assert_allclose(pred.get_ydata(), [1.0, 0.1 * 134.4 + 1.0])    # 14.44 s


def test_step_time_trend_plot_rejects_bad_series():
    with pytest.raises(ValueError, match="series"):
        plotting.step_time_trend_plot({}, {})
    points, trends = trend_series({"one": ["s1", "s2", "s3"], "two": ["t1", "t2"]})
    with pytest.raises(ValueError, match="trends"):
        plotting.step_time_trend_plot(points, {"one": trends["one"]})
    with pytest.raises(ValueError, match="at least two"):           # the fit needs two m
        trend_series({"one": ["s1"]})
