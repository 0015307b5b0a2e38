"""traincost.sweep: one row per configuration, the same numbers as estimate()."""

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import traincost
from traincost import catalog, layout
from traincost.sweep import REPORT_COLUMNS

SETTINGS = settings(max_examples=40, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])
ACCELERATORS = ["a100-sxm4-80gb", "h100-sxm5-80gb", "mi300x", "tpu-v5p", "v100-sxm2-32gb",
                "b200"]
MODELS = ["gpt2-small", "llama2-7b", "llama3.1-8b", "megatron-18.4b", "mixtral-8x7b"]
COMPARED = ("step_time_s", "mfu", "hfu", "memory_gib_per_device", "train_time_days",
            "device_hours", "avg_power_w_per_device", "it_energy_mwh", "facility_energy_mwh",
            "co2e_t", "cost_usd", "params", "tokens_per_s")


def _row(**kw):
    base = dict(accelerator="h100-sxm5-80gb", devices=64, model="llama2-7b", global_batch=512,
                tp=2, pp=2, cp=1, ep=1, vpp=1, zero=1, micro_batch=1, recompute="selective",
                tokens=1e10)
    return {**base, **kw}


def _same(a, b):
    if a is None or (isinstance(a, float) and math.isnan(a)):
        return b is None or math.isnan(b)
    return b == pytest.approx(a, rel=1e-12)


# ---- the vectorised sweep equals the one-configuration estimate, row by row --------------
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(acc=st.sampled_from(ACCELERATORS), model=st.sampled_from(MODELS),
       log_devices=st.integers(4, 9), tp=st.sampled_from([1, 2, 4, 8, 1, 2, 4, 3]),
       pp=st.sampled_from([1, 2, 4, 1, 2, 3]), mb=st.sampled_from([1, 2, 4]),
       zero=st.integers(0, 3), rc=st.sampled_from(["none", "selective", "full"]),
       vpp=st.sampled_from([1, 1, 2]), region=st.sampled_from([None, "FRA", "gcp:europe-west1"]),
       data=st.data())
def test_each_sweep_row_equals_estimate(acc, model, log_devices, tp, pp, mb, zero, rc, vpp,
                                        region, data):
    # mostly valid layouts (ep only for the MoE model), some invalid ones on purpose
    ep = data.draw(st.sampled_from([1, 2, 8] if model == "mixtral-8x7b" else [1, 1, 1, 2]))
    kw = _row(accelerator=acc, devices=2**log_devices, model=model, tp=tp, pp=pp, ep=ep,
              vpp=vpp, zero=zero, micro_batch=mb, recompute=rc)
    if region:
        kw["region"] = region
    out = traincost.sweep(pd.DataFrame([kw])).iloc[0]
    event("valid" if out["valid"] else "invalid")
    try:
        d = traincost.estimate(**kw).to_dict()
    except ValueError as exc:
        # invalid for estimate: the sweep says so too, naming the same rule (or the missing
        # scale-out figure, which only shows as a NaN step time)
        if out["valid"]:
            assert "scale-out" in str(exc) and math.isnan(out["step_time_s"])
        else:
            assert str(exc) == out["problem"]
        return
    assert out["valid"] and out["problem"] == ""
    assert out["precision"] == d["precision"]
    for key in COMPARED:
        assert _same(d[key], out[key]), key
    assert bool(out["fits_in_memory"]) == d["fits_in_memory"]
    assert int(out["dp"]) == d["parallel"]["dp"]
    for part, value in d["breakdown"]["step_time_s"].items():
        assert _same(value, out[f"step_{part}_s"]), part


def test_every_contract_column_is_returned():
    out = traincost.sweep(pd.DataFrame([_row()]))
    d = traincost.estimate(**_row()).to_dict()
    for key in ("params", "model_flop_per_token", "hardware_flop_per_token", "step_time_s",
                "tokens_per_s", "mfu", "hfu", "model_tflops_per_device",
                "hardware_tflops_per_device", "memory_gib_per_device", "fits_in_memory",
                "train_time_days", "device_hours", "avg_power_w_per_device", "it_energy_mwh",
                "facility_energy_mwh", "co2e_t", "embodied_co2e_t", "cost_usd"):
        assert key in out.columns and key in d
    assert {"valid", "problem", "precision"} <= set(out.columns)
    assert list(out.columns[:len(_row())]) == list(_row())           # input first, kept


# ---- defaults (as in estimate) ----------------------------------------------------------
def test_defaults_match_estimate():
    table = pd.DataFrame([
        dict(accelerator="v100-sxm2-32gb", devices=64, model="gpt2-small", global_batch=512),
        dict(accelerator="h100-sxm5-80gb", devices=64, model="llama2-7b", global_batch=512,
             region="gcp:europe-west1"),
    ])
    out = traincost.sweep(table)
    assert out["precision"].tolist() == ["fp16", "bf16"]     # V100 has no bf16
    world = catalog.regions().loc["world", "grid_gco2e_per_kwh"]
    pue_industry = catalog.pue("industry-average")[0]
    pue_google = catalog.pue("google")[0]
    # co2e = facility MWh x 1000 kWh/MWh x g/kWh / 1e6 g/t; facility = IT x PUE
    assert out["co2e_t"][0] == pytest.approx(out["facility_energy_mwh"][0] * world / 1e3)
    assert out["facility_energy_mwh"][0] == pytest.approx(out["it_energy_mwh"][0] * pue_industry)
    assert out["facility_energy_mwh"][1] == pytest.approx(out["it_energy_mwh"][1] * pue_google)
    # tokens from the preset; the layout from ParallelConfig's defaults (all 1, ZeRO 1,
    # micro-batch 1, selective recompute)
    est = traincost.estimate(accelerator="h100-sxm5-80gb", devices=64, model="llama2-7b",
                             global_batch=512, region="gcp:europe-west1", tp=1, pp=1, cp=1,
                             ep=1, vpp=1, zero=1, micro_batch=1, recompute="selective")
    assert out["train_time_days"][1] == pytest.approx(est.train_time_days, rel=1e-12)
    h100_price = traincost.accelerator("h100-sxm5-80gb").price_usd_per_h
    assert out["cost_usd"][1] == pytest.approx(out["device_hours"][1] * h100_price, rel=1e-12)


def test_architecture_columns_override_the_preset_where_given():
    table = pd.DataFrame([_row(layers=np.nan), _row(layers=16.0),
                          dict(_row(), model=None, layers=24, hidden=2048, heads=16,
                               seq_len=2048)])
    out = traincost.sweep(table)
    assert out["valid"].all()
    # Llama 2 7B has 32 layers of ~0.2B parameters each: 16 layers is about half
    assert out["params"][1] < 0.6 * out["params"][0]
    custom = traincost.estimate(accelerator="h100-sxm5-80gb", devices=64, layers=24,
                                hidden=2048, heads=16, seq_len=2048, global_batch=512,
                                tokens=1e10, tp=2, pp=2, cp=1, ep=1, vpp=1, zero=1,
                                micro_batch=1, recompute="selective")
    assert out["params"][2] == custom.params


def test_stack_columns_match_estimate_row_by_row():
    stacks = [dict(), dict(attention_kernel="materialized"),
              dict(parallel_block=True, overlap="tp,pp,dp"), dict(balanced_pipeline=1.0)]
    table = pd.DataFrame([_row(pp=4, **kw) for kw in stacks])
    out = traincost.sweep(table)
    for i, kw in enumerate(stacks):
        one = traincost.estimate(accelerator="h100-sxm5-80gb", devices=64, model="llama2-7b",
                                 global_batch=512, tokens=1e10, tp=2, pp=4, cp=1, ep=1, vpp=1,
                                 zero=1, micro_batch=1, recompute="selective",
                                 **{k: (bool(v) if k == "balanced_pipeline" else v)
                                    for k, v in kw.items()})
        assert out["step_time_s"][i] == pytest.approx(one.step_time_s, rel=1e-12)
    assert len(set(out["step_time_s"])) == len(stacks)     # each stack changes the step


def test_balanced_pipeline_rows_allow_a_chunk_per_layer_plus_embedding_and_loss():
    # Llama 3 405B: 126 layers + embedding + loss = 128 units = pp 16 x vpp 8 (Sec. 3.3.2);
    # valid in a sweep exactly as in estimate, and invalid without the balanced split
    base = dict(accelerator="h100-sxm5-80gb", devices=128, model="llama3.1-405b",
                global_batch=16, seq_len=8192, tp=8, pp=16, cp=1, ep=1, vpp=8, zero=2,
                micro_batch=1, recompute="none", tokens=1e10)
    out = traincost.sweep(pd.DataFrame([dict(base, balanced_pipeline=True),
                                        dict(base, balanced_pipeline=False)]))
    assert out["valid"].tolist() == [True, False]
    assert "--vpp 8" in out.loc[1, "problem"]
    one = traincost.estimate(balanced_pipeline=True,
                             **{k: v for k, v in base.items() if k != "model"},
                             model="llama3.1-405b")
    assert out["step_time_s"][0] == pytest.approx(one.step_time_s, rel=1e-12)


def test_price_and_site_columns():
    table = pd.DataFrame([_row(price_usd_per_h=2.0, pue=1.2, grid_gco2e_per_kwh=100.0)])
    r = traincost.sweep(table).iloc[0]
    assert r["cost_usd"] == pytest.approx(r["device_hours"] * 2.0, rel=1e-12)
    assert r["facility_energy_mwh"] == pytest.approx(r["it_energy_mwh"] * 1.2, rel=1e-12)
    assert r["co2e_t"] == pytest.approx(r["facility_energy_mwh"] * 100.0 / 1e3, rel=1e-12)


# ---- validity ----------------------------------------------------------------------------
def test_invalid_rows_name_their_first_broken_rule():
    # llama2-7b has 32 layers: 64 pipeline stages cannot each hold one
    table = pd.DataFrame([_row(), _row(tp=7), _row(tp=1, pp=64), _row(global_batch=500),
                          _row(tp=7, pp=64), _row(dp=99), _row(dp=16)])
    out = traincost.sweep(table)
    assert out["valid"].tolist() == [True, False, False, False, False, False, True]
    assert out["problem"][1].startswith("--tp 7 must divide")
    assert out["problem"][2].startswith("--pp 64 must not exceed")
    assert out["problem"][3].startswith("--global-batch 500")
    assert out["problem"][4].startswith("--tp 7")                  # the first rule broken
    assert out["problem"][5].startswith("--dp 99 must equal")
    assert out["dp"][6] == 16                                        # 64 / (2 * 2 * 1)
    assert out.loc[~out["valid"], "step_time_s"].isna().all()
    assert not out.loc[~out["valid"], "fits_in_memory"].any()


def test_first_broken_agrees_with_check():
    arch = {"heads": 96, "kv_heads": 96, "layers": 80, "seq_len": 2048, "experts": 0,
            "devices": 1536, "global_batch": 2304, "balanced_pipeline": False}
    cands = layout.candidates({}, heads=96, layers=80, experts=0, devices=1536, domain=8,
                              global_batch=2304, seq_len=2048)
    first = layout.first_broken({**arch, **cands})
    msgs = layout.broken_messages({**arch, **cands}, first)
    assert np.array_equal(first < 0, layout.valid({**arch, **cands}))
    for i in np.random.default_rng(0).choice(len(first), 300, replace=False):
        row = {**arch, **{k: int(v[i]) for k, v in cands.items()}}
        try:
            layout.check(row)
            assert first[i] == -1 and msgs[i] == ""
        except ValueError as exc:
            assert str(exc) == msgs[i]


# ---- bad input raises, naming the column ---------------------------------------------------
@pytest.mark.parametrize("change,column,allowed", [
    (dict(accelerator="warp-drive"), "accelerator", "a100-sxm4-80gb"),
    (dict(model="gpt-99"), "model", "llama2-7b"),
    (dict(precision="fp4"), "precision", "bf16"),
    (dict(region="atlantis"), "region", "ISO-3"),
    (dict(recompute="sometimes"), "recompute", "selective"),
    (dict(tp=0), "tp", "from 1 to"), (dict(zero=4), "zero", "0, 1, 2, 3"),
    (dict(attention_kernel="fast"), "attention-kernel", "materialized"),
    (dict(overlap="tp,cp"), "overlap", "tp, pp, dp, ep"),
    (dict(devices=2.5), "devices", "whole"), (dict(price_model="lease"), "price_model", "rental"),
])
def test_bad_input_raises_naming_the_column(change, column, allowed):
    table = pd.DataFrame([_row(), _row(**change)])
    with pytest.raises(ValueError) as exc:
        traincost.sweep(table)
    msg = str(exc.value)
    assert msg.startswith(column) and allowed in msg
    value = str(list(change.values())[0])
    assert value in msg


@pytest.mark.parametrize("keyword,column", [("grid_intensity", "grid_gco2e_per_kwh"),
                                            ("power_cap", "power_cap_w"),
                                            ("price_per_hour", "price_usd_per_h")])
def test_an_estimate_keyword_of_another_column_name_is_refused(keyword, column):
    """The sweep reads grid_gco2e_per_kwh, not grid_intensity: a column under the estimate's
    keyword would otherwise pass through unread (a given intensity silently lost)."""
    with pytest.raises(ValueError, match=f"{keyword.replace('_', '-')}: the sweep's column "
                                         f"is {column}"):
        traincost.sweep(pd.DataFrame([_row(**{keyword: 300.0})]))
    other = pd.DataFrame([_row(**{column: 300.0, "run_name": "kept"})])  # any other: passed
    assert traincost.sweep(other)["valid"].all()


def test_missing_precision_raises():
    with pytest.raises(ValueError, match="precision: a100-sxm4-80gb has no fp8"):
        traincost.sweep(pd.DataFrame([_row(accelerator="a100-sxm4-80gb", precision="fp8")]))


# ---- chunks, progress, empty --------------------------------------------------------------
def test_chunks_do_not_change_results():
    rows = [_row(accelerator=a, tp=t, pp=p, micro_batch=b)
            for a in ("a100-sxm4-80gb", "h100-sxm5-80gb") for t in (1, 2, 4, 7)
            for p in (1, 2, 4) for b in (1, 2)]
    table = pd.DataFrame(rows)
    calls = []
    small = traincost.sweep(table, chunk_size=5, progress=lambda d, t: calls.append((d, t)))
    whole = traincost.sweep(table)
    pd.testing.assert_frame_equal(small, whole)
    n_valid = int(whole["valid"].sum())
    assert calls[-1] == (n_valid, n_valid) and len(calls) == math.ceil(n_valid / 5)


def test_empty_table():
    out = traincost.sweep(pd.DataFrame([_row()]).iloc[:0])
    assert len(out) == 0 and set(REPORT_COLUMNS) <= set(out.columns)


# ---- dask ---------------------------------------------------------------------------------
def test_dask_dataframe_on_a_local_cluster():
    dd = pytest.importorskip("dask.dataframe")
    distributed = pytest.importorskip("dask.distributed")
    rows = [_row(accelerator=a, tp=t, pp=p) for a in ("a100-sxm4-80gb", "h100-sxm5-80gb")
            for t in (1, 2, 4, 7) for p in (1, 2, 4)]
    table = pd.DataFrame(rows)
    expected = traincost.sweep(table)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster):
        lazy = traincost.sweep(dd.from_pandas(table, npartitions=3))
        assert list(lazy.columns) == list(expected.columns)
        got = lazy.compute()
    pd.testing.assert_frame_equal(got.sort_index(), expected, check_dtype=False)
