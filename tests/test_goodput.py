"""Goodput from interruptions (issue 21): a job of N devices interrupted N r times per hour
of training, each costing T of wall clock, keeps 1 / (1 + N r T) of its wall clock, and
its operations (evaluation, checkpoints, rollbacks, maintenance) keep 90% at any scale; the
goodput is the lower of the two.

The figures by hand come from the literature:

* Dubey et al. 2024, The Llama 3 Herd of Models (arXiv:2407.21783) Sec. 3.3.4: 466 job
  interruptions in a 54-day snapshot on 16,384 H100s, "higher than 90% effective training
  time".
* OPT-175B's first run, as tabulated by G. Lockwood (glennklockwood.com/garden/
  job-reliability): one interruption per 7.5 h on 992 A100s, 59% job uptime.
* ByteRobust (Wan et al. 2025, arXiv:2509.16293): 97% on 9,600 GPUs; Gemini (arXiv:
  2312.11805 Sec. 3): 85-97%.
* BLOOM (data/published_runs.csv bloom-176b): 118.24 days on 384 A100s for 366B tokens at a
  measured 104.7 s per 2048 x 2048-token step, 105.7 days of steps: about 90% kept.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import traincost
from traincost import uncertainty
from traincost.performance import goodput

from clihelpers import run

LLAMA3_PER_JOB_S = 466 / (54 * 86400)            # interruptions per second of the whole job
LLAMA3_RATE = LLAMA3_PER_JOB_S / 16384           # per device and second
LLAMA3_LOST_S = (1 / 0.9 - 1) / LLAMA3_PER_JOB_S  # the cost that gives its 90%
KW = dict(model="llama3.1-8b", seq_len=8192, global_batch=1024, tp=1, pp=1, cp=1,
          micro_batch=1, recompute="full", zero=3)


def test_the_defaults_are_llama_3s_interruptions():
    a = traincost.DEFAULT_ASSUMPTIONS
    assert a.interruption_rate_per_device_s == pytest.approx(LLAMA3_RATE, rel=1e-12)
    # 21.9 per million device-hours; 18.5 minutes each
    assert a.interruption_rate_per_device_s * 3600e6 == pytest.approx(21.95, abs=0.01)
    assert a.interruption_lost_s / 60 == pytest.approx(18.54, abs=0.01)


def test_bloom_and_llama_3_keep_90_percent_at_25_times_apart():
    # BLOOM's steps alone take 366e9 / (2048 * 2048 / 104.7 s) = 105.7 days of its 118.24
    steps_days = 366e9 / (2048 * 2048 / 104.7) / 86400
    assert steps_days / 118.24 == pytest.approx(0.894, abs=0.002)
    assert traincost.DEFAULT_ASSUMPTIONS.operations_goodput_fraction == 0.9
    for n in (384, 1024, 16384):
        assert goodput(n, LLAMA3_RATE, LLAMA3_LOST_S, 0.9) == pytest.approx(0.9, rel=1e-9)
    est = traincost.estimate("h100-sxm5-80gb", 16384, tp=8, pp=16, cp=1, model="llama3.1-405b",
                             seq_len=8192, global_batch=2048, micro_batch=1,
                             recompute="selective")
    assert est.report["goodput"] == pytest.approx(0.9, rel=1e-9)


def test_past_llama_3s_scale_interruptions_take_over():
    # 32,768 devices: 1 / (1 + 2 x 0.111) = 0.818; 131,072: 1 / (1 + 8 x 0.111) = 0.53
    n = np.array([16384, 32768, 65536, 131072])
    g = goodput(n, LLAMA3_RATE, LLAMA3_LOST_S, 0.9)
    assert g == pytest.approx(1 / (1 + n / 16384 * (1 / 0.9 - 1)), rel=1e-9)
    assert np.all(np.diff(g) < 0)
    est = traincost.estimate("h100-sxm5-80gb", 32768, tp=8, pp=16, cp=1, model="llama3.1-405b",
                             seq_len=8192, global_batch=4096, micro_batch=1,
                             recompute="selective")
    assert est.report["goodput"] == pytest.approx(1 / (1 + 2 * (1 / 0.9 - 1)), rel=1e-9)
    said = [c for c in est.caveats if c.startswith("goodput")]
    assert said and "Llama 3's rate" in said[0] and "--interruption-minutes" in said[0]


def test_a_first_run_at_opts_rate_and_cost_keeps_its_59_percent():
    # one interruption per 7.5 h on 992 devices, each costing (1/0.59 - 1) x 7.5 h
    rate = 1 / (7.5 * 992) * 1e6                        # per million device-hours
    minutes = (1 / 0.59 - 1) * 7.5 * 60
    kw = dict(model="gpt3-175b", seq_len=2048, global_batch=992, tp=8, pp=1, cp=1,
              micro_batch=1, recompute="full", zero=1)
    est = traincost.estimate("a100-sxm4-80gb", 992, interruption_rate=rate,
                             interruption_minutes=minutes, **kw)
    assert est.report["goodput"] == pytest.approx(0.59, rel=1e-9)
    base = traincost.estimate("a100-sxm4-80gb", 992, **kw)
    assert base.report["goodput"] == 0.9
    # the same step; only the calendar stretches
    assert est.step_time_s == pytest.approx(base.step_time_s, rel=1e-12)
    ratio = est.report["train_time_days"] / base.report["train_time_days"]
    assert ratio == pytest.approx(0.9 / 0.59, rel=1e-9)
    assert [c for c in est.caveats if c.startswith("goodput")]
    assert not [c for c in base.caveats if c.startswith("goodput")]


def test_no_interruptions_leave_the_operations_share():
    est = traincost.estimate("h100-sxm5-80gb", 1024, interruption_rate=0.0, **KW)
    assert est.report["goodput"] == 0.9
    d = est.to_dict()
    ideal_days = d["tokens"] / d["tokens_per_s"] / 86400
    assert d["train_time_days"] == pytest.approx(ideal_days / 0.9, rel=1e-12)


def test_a_given_rate_or_cost_is_not_drawn_in_the_interval():
    # the drawn cost per interruption (100 times Llama 3's: 1 / (1 + 100 x 0.111 / 16) on
    # 1,024 devices, below the operations' 90%) moves the time of a run that left it to the
    # assumptions, and not of one that gave its own
    design = np.full((2, 1), 0.5)
    drawn = [uncertainty.Uncertain("q", "interruption_lost_s", "assumption", "q",
                                   lambda u: np.full(len(u), 100 * LLAMA3_LOST_S))]
    left = traincost.estimate("h100-sxm5-80gb", 1024, **KW)
    given = traincost.estimate("h100-sxm5-80gb", 1024, interruption_minutes=LLAMA3_LOST_S / 60,
                               **KW)
    assert given.report["train_time_days"] == pytest.approx(left.report["train_time_days"])
    moved = uncertainty.evaluate_design(left, design, drawn)["train_time_days"][0]
    kept = uncertainty.evaluate_design(given, design, drawn)["train_time_days"][0]
    assert moved > 1.05 * left.report["train_time_days"]
    assert kept == pytest.approx(given.report["train_time_days"], rel=1e-12)


def test_the_mature_range_spans_byterobust_to_gemini():
    table = traincost.catalog.input_ranges().set_index("id")
    row = table.loc["interruption-lost-mature"]
    assert row["input"] == "interruption_lost_s" and row["use"] == "assumption"
    # at Llama 3's rate: ByteRobust's 97% on 9,600 GPUs; Gemini's 85% at Llama 3's scale
    assert row["low"] == pytest.approx((1 / 0.97 - 1) / (9600 * LLAMA3_RATE), rel=1e-3)
    assert row["mode"] == pytest.approx(LLAMA3_LOST_S, rel=1e-3)
    assert row["high"] == pytest.approx((1 / 0.85 - 1) / LLAMA3_PER_JOB_S, rel=1e-3)


def test_cli_prints_the_goodput_and_refuses_a_negative_rate(capsys):
    base = ["estimate", "--accelerator", "h100-sxm5-80gb", "--devices", "1024", "--model",
            "llama3.1-8b", "--seq-len", "8192", "--global-batch", "1024"]
    rc, out, _ = run(base + ["--interruption-rate", "134", "--interruption-minutes", "313",
                             "--json"], capsys)
    assert rc == 0
    g = json.loads(out)["goodput"]
    assert g == pytest.approx(1 / (1 + 1024 * 134e-6 * 313 / 60), rel=1e-9)
    rc, out, _ = run(base, capsys)
    assert rc == 0 and "goodput 90%" in out
    rc, out, err = run(base + ["--interruption-minutes", "-5"], capsys)
    assert rc == 2 and out == ""
    assert err.strip().splitlines() == [
        "traincost: error: interruption-minutes: -5.0 must be at least 0"]
