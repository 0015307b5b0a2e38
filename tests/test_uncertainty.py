"""Intervals from the model's held-out errors (issue 22, first part: the model's own error).

Hand values: a pool of one error eps = log 2 makes every draw's step twice the predicted
one, so throughput halves and time, device-hours, energy, carbon and cost double (the
busy share, and so the power, is unchanged when every part of the step scales alike).
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

import traincost
from traincost import calibration, uncertainty
from traincost.cli import main

KW = dict(model="llama3.1-8b", global_batch=512, tokens=1e11)


@pytest.fixture(scope="module")
def est():
    return traincost.estimate("h100-sxm5-80gb", 64, **KW)


def test_one_error_of_log_2_halves_throughput_and_doubles_time_and_energy(est, monkeypatch):
    monkeypatch.setitem(calibration.ERROR_POOLS, "unspecified", [math.log(2.0)])
    box = uncertainty.intervals(est, draws=50, seed=0)
    r = est.report
    for key in ("tokens_per_s", "mfu"):
        assert box[key] == pytest.approx([r[key] / 2] * 3, rel=1e-12)
    for key in ("step_time_s", "train_time_days", "device_hours", "facility_energy_mwh",
                "co2e_t", "cost_usd"):
        assert box[key] == pytest.approx([r[key] * 2] * 3, rel=1e-12)


def test_no_error_gives_the_point_itself(est, monkeypatch):
    monkeypatch.setitem(calibration.ERROR_POOLS, "unspecified", [0.0, 0.0])
    box = uncertainty.intervals(est, draws=10, seed=5)
    assert box["tokens_per_s"] == pytest.approx([est.report["tokens_per_s"]] * 3, rel=1e-12)


def test_quantiles_are_the_pools_as_drawn(est, monkeypatch):
    # errors -log 2, 0, +log 2 in equal shares: p10 of throughput is the point / 2, p90 twice
    # it (draws from the three, so p10 and p90 land on the outer two), the median the point
    monkeypatch.setitem(calibration.ERROR_POOLS, "unspecified",
                        [-math.log(2.0), 0.0, math.log(2.0)])
    box = uncertainty.intervals(est, draws=3000, seed=0)
    t = est.report["tokens_per_s"]
    assert box["tokens_per_s"] == pytest.approx([t / 2, t, 2 * t], rel=1e-12)


def test_same_seed_same_interval_and_the_point_inside(est):
    a = uncertainty.intervals(est, draws=2000, seed=7)
    assert a == uncertainty.intervals(est, draws=2000, seed=7)
    assert a != uncertainty.intervals(est, draws=2000, seed=8)
    for key in uncertainty.INTERVAL_KEYS:
        lo, mid, hi = a[key]
        assert lo <= est.report[key] <= hi and lo <= mid <= hi, key
    # every stored pool has errors of both signs around zero: a point inside its interval
    for cls, pool in calibration.ERROR_POOLS.items():
        q10, q90 = np.quantile(pool, [0.1, 0.9])
        assert q10 < 0 < q90, cls


def test_the_class_follows_the_framework_factor():
    assert uncertainty.error_class("megatron", "a100-sxm4-80gb") == "reference"
    assert uncertainty.error_class("unspecified", "a100-sxm4-80gb") == "unspecified"
    assert uncertainty.error_class("torchtitan", "h100-sxm5-80gb") == "fitted"
    assert uncertainty.error_class("unspecified", "tpu-v5p") == "fitted"      # MaxText's
    assert uncertainty.error_class("torchtitan", "tpu-v5p") == "borrowed"
    # wider where no fit checks the framework: the stored pools' spreads are ordered
    width = {c: np.subtract(*np.quantile(p, [0.9, 0.1])) for c, p in
             calibration.ERROR_POOLS.items()}
    assert width["reference"] < width["fitted"] < width["borrowed"]


def test_estimate_keyword_and_cli_flag(capsys):
    e = traincost.estimate("h100-sxm5-80gb", 64, uncertainty=True, seed=2, **KW)
    assert e.intervals["class"] == "unspecified" and e.intervals["draws"] == 10_000
    assert e.to_dict()["intervals"] == e.intervals
    assert "intervals" not in traincost.estimate("h100-sxm5-80gb", 64, **KW).to_dict()
    base = ["estimate", "--accelerator", "h100-sxm5-80gb", "--devices", "64", "--model",
            "llama3.1-8b", "--global-batch", "512", "--tokens", "1e11"]
    assert main(base + ["--uncertainty", "--seed", "2", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["intervals"]["tokens_per_s"] == pytest.approx(e.intervals["tokens_per_s"])
    assert main(base + ["--uncertainty"]) == 0
    assert "range       p10-p90 under the model's error" in capsys.readouterr().out
    with pytest.raises(ValueError, match="seed: -1 must be a whole number of at least 0"):
        traincost.estimate("h100-sxm5-80gb", 64, uncertainty=True, seed=-1, **KW)
    with pytest.raises(ValueError, match="draws: 0 must be"):
        uncertainty.draw_error_factors("reference", 0, 0)


def test_stored_coverage_is_near_eighty_percent_where_the_model_is_calibrated():
    # issue 22's target: 80% intervals cover 75-85% of runs held out by source; met for the
    # reference framework and for an unstated one; the fitted and borrowed classes (31 and
    # 60 figures) fall a few points short, which the closing note reports
    m = calibration.METRICS
    assert 75.0 <= m["interval_reference_coverage_pct"] <= 85.0
    assert 75.0 <= m["interval_unspecified_coverage_pct"] <= 85.0
    assert m["interval_reference_median_width"] <= 1.6
