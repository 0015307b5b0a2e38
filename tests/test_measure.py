"""Tests for traincost.measure, with small sizes (milliseconds, except one CodeCarbon run)."""
import math

import numpy as np
import pytest

from traincost import catalog, measure
from traincost.units import JOULES_PER_KWH

SMALL = {"batch": 8, "d_in": 16, "d_hidden": 32, "d_out": 4}


# --- FLOP counting ----------------------------------------------------------------------
def test_mlp_flop_by_hand():
    # forward 2*b*d*h + 2*b*h*o; backward dW2 + dH (2*b*h*o each) + dW1 (2*b*d*h)
    b, d, h, o = 8, 16, 32, 4
    assert measure.mlp_flop_per_step(b, d, h, o) == 4 * b * d * h + 6 * b * h * o == 22528


def test_mlp_flop_is_linear_in_batch_and_broadcasts():
    one = measure.mlp_flop_per_step(1, 16, 32, 4)
    many = measure.mlp_flop_per_step(np.array([1, 2, 10]), 16, 32, 4)
    assert many.tolist() == [one, 2 * one, 10 * one]


def test_mlp_flop_is_below_six_n_per_example_by_the_skipped_input_gradient():
    b, d, h, o = 4, 10, 20, 3
    n = d * h + h * o                                 # weights
    assert 6 * b * n - measure.mlp_flop_per_step(b, d, h, o) == 2 * b * d * h


# --- the training loop --------------------------------------------------------------------
def test_train_mlp_counts_flop_and_learns():
    run = measure.train_mlp(steps=60, **SMALL, learning_rate=0.05)
    assert run.steps == 60 and len(run.losses) == 60
    assert run.flop == 60 * measure.mlp_flop_per_step(**SMALL)
    assert run.seconds > 0 and run.achieved_flop_per_s == run.flop / run.seconds
    assert run.losses[-10:].mean() < run.losses[:10].mean()


def test_train_mlp_is_deterministic():
    a = measure.train_mlp(steps=5, **SMALL, seed=3)
    b = measure.train_mlp(steps=5, **SMALL, seed=3)
    np.testing.assert_array_equal(a.losses, b.losses)


def test_train_mlp_stops_at_the_time_budget():
    run = measure.train_mlp(steps=10_000, **SMALL, max_seconds=1e-9)
    assert run.steps == 1                            # the step that passed the budget
    assert run.flop == measure.mlp_flop_per_step(**SMALL)


@pytest.mark.parametrize("kwargs, field", [
    ({"steps": 0}, "steps"), ({"batch": -1}, "batch"), ({"d_hidden": 2.5}, "d_hidden"),
    ({"learning_rate": 0.0}, "learning_rate"), ({"max_seconds": 0}, "max_seconds"),
])
def test_train_mlp_rejects_bad_input(kwargs, field):
    with pytest.raises(ValueError, match=field):
        measure.train_mlp(**{"steps": 2, **SMALL, **kwargs})


def test_matmul_rate_is_a_positive_rate():
    rate = measure.matmul_flop_per_s(n=64, repeats=2)
    assert math.isfinite(rate) and rate > 0
    with pytest.raises(ValueError, match="n"):
        measure.matmul_flop_per_s(n=0)


# --- the estimate in miniature ---------------------------------------------------------------
def test_estimate_is_flop_over_rate_times_power():
    est = measure.estimate_run(2e9, flop_per_s=1e9, cpu_power_w=10.0, host_power_w=5.0,
                               grid_gco2e_per_kwh=500.0)
    assert est["time_s"] == pytest.approx(2.0)
    assert est["cpu_energy_j"] == pytest.approx(20.0)               # 10 W x 2 s
    assert est["energy_j"] == pytest.approx(30.0)                   # (10 + 5) W x 2 s
    assert est["co2e_g"] == pytest.approx(30.0 / JOULES_PER_KWH * 500.0)


def test_estimate_without_intensity_has_no_emissions():
    assert "co2e_g" not in measure.estimate_run(1.0, 1.0, 1.0)


@pytest.mark.parametrize("args, field", [
    ((0.0, 1.0, 1.0), "flop"), ((1.0, 0.0, 1.0), "flop_per_s"), ((1.0, 1.0, -1.0), "cpu_power"),
])
def test_estimate_rejects_bad_input(args, field):
    with pytest.raises(ValueError, match=field):
        measure.estimate_run(*args)


def test_side_by_side_ratios():
    df = measure.side_by_side({"time_s": 3.0, "cpu_energy_j": 6.0, "energy_j": 9.0},
                              {"time_s": 1.5, "cpu_energy_j": 2.0, "energy_j": 9.0})
    assert df["measured / estimated"].tolist() == [2.0, 3.0, 1.0]
    assert all("[" in label for label in df.index)                  # units in the labels


# --- CodeCarbon (offline; about 2 s) ------------------------------------------------------------
def test_codecarbon_measures_a_function_offline(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result, m = measure.track_with_codecarbon(lambda: measure.train_mlp(steps=3, **SMALL),
                                              country_iso_code="FRA")
    assert result.steps == 3
    assert m["duration_s"] > 0 and m["cpu_power_w"] >= 0 and m["ram_power_w"] >= 0
    assert m["energy_j"] == pytest.approx(m["cpu_energy_j"] + m["ram_energy_j"], rel=1e-6)
    # CodeCarbon's emissions are energy x the country's intensity: the same data traincost reads
    g = catalog.regions().loc["FRA", "grid_gco2e_per_kwh"]
    assert m["co2e_g"] == pytest.approx(m["energy_j"] / JOULES_PER_KWH * g, rel=1e-3)
    assert not list(tmp_path.iterdir())                              # no emissions.csv written
