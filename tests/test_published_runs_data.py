"""Consistency checks for data/published_runs.csv (the validation set of published runs).

pandas only. Schema-level checks (types, ranges, allowed values, provenance) live in
tests/test_data_integrity.py once the table is listed in data/schema.csv; the checks here
are cross-table and arithmetic:

* every model_preset / accelerator id exists in models.csv / accelerators.csv;
* tp * pp * dp * cp == devices wherever all of them are given (cp blank = 1);
* reported_mfu is a fraction in (0, 1), never a percent;
* energies that are device-hours x power x PUE by construction reproduce that product
  within 2% (LLaMA Table 15 and its OPT/BLOOM normalisation, BLOOM's dynamic energy,
  Patterson et al. 2021 Table 4 with its measured power);
* Llama 2 emissions reproduce GPU-hours x power x 1.1 x 0.385 kg/kWh within 2% (the
  PUE and grid factor the model card implies but does not state);
* Megatron-LM SC21 Table 1: TFLOP/s per GPU x GPUs matches the paper's aggregate
  PFLOP/s (recorded in notes) within the rounding of the integer TFLOP/s column.
"""
import pathlib
import re

import pandas as pd
import pytest

import traincost

DATA = pathlib.Path(__file__).resolve().parents[1] / "data"

RUNS = pd.read_csv(DATA / "published_runs.csv", encoding="utf-8")
MODELS = pd.read_csv(DATA / "models.csv", encoding="utf-8")
ACCELERATORS = pd.read_csv(DATA / "accelerators.csv", encoding="utf-8")

BY_CONSTRUCTION = {"device_hours_x_power_x_pue", "dynamic_only"}


def test_columns_in_contract_order():
    assert list(RUNS.columns) == (
        "id name run_type model_preset accelerator devices tp pp dp cp ep vpp global_batch "
        "micro_batch seq_len recompute recompute_fraction precision attention_kernel parallel_block overlap "
        "balanced_pipeline fp8_activations optimizer_state lora fused_loss fp8_param_gather fp8_params "
        "fp8_activation_input elementwise zero shard_group expert_tp "
        "power_cap_w scaleout_gbps sites site_link_gbps cross_site tokens "
        "total_flop "
        "reported_hardware_tflops_per_device "
        "reported_model_tflops_per_device reported_mfu reported_step_time_s "
        "reported_tokens_per_s_per_device reported_peak_memory_gib_per_device reported_train_days "
        "reported_device_hours time_basis reported_avg_power_w_per_device power_basis reported_energy_mwh "
        "energy_basis reported_pue reported_grid_gco2e_per_kwh reported_co2e_t source "
        "source_locator source_date status model_gap notes framework prefit_error_pct "
        "prefit_basis").split()
    assert RUNS["id"].is_unique


def test_presets_and_accelerators_exist():
    missing_models = sorted(set(RUNS["model_preset"]) - set(MODELS["id"]))
    assert not missing_models, missing_models
    missing_acc = sorted(set(RUNS["accelerator"]) - set(ACCELERATORS["id"]))
    assert not missing_acc, missing_acc


def test_layout_product_equals_devices():
    cols = ["tp", "pp", "dp", "devices"]
    full = RUNS.dropna(subset=cols)
    assert len(full) >= 35                      # SC21, MegaScale, BLOOM, Llama 3 rows
    cp = full["cp"].fillna(1)
    prod = full["tp"] * full["pp"] * full["dp"] * cp
    bad = full.loc[prod != full["devices"], ["id", "tp", "pp", "dp", "cp", "devices"]]
    assert bad.empty, bad.to_string()


def test_batch_divisible_by_dp_and_micro_batch():
    rows = RUNS.dropna(subset=["global_batch", "dp", "micro_batch"])
    bad = rows[(rows["global_batch"] % (rows["dp"] * rows["micro_batch"])) != 0]
    assert bad.empty, list(bad["id"])


def test_mfu_is_a_fraction():
    mfu = RUNS["reported_mfu"].dropna()
    assert len(mfu) > 0
    assert ((mfu > 0) & (mfu < 1)).all(), list(RUNS.loc[mfu.index[(mfu <= 0) | (mfu >= 1)], "id"])


def test_mfu_not_above_hardware_utilisation():
    """Where both are given, model TFLOP/s cannot exceed hardware TFLOP/s."""
    both = RUNS.dropna(subset=["reported_model_tflops_per_device",
                               "reported_hardware_tflops_per_device"])
    assert (both["reported_model_tflops_per_device"]
            <= both["reported_hardware_tflops_per_device"]).all()


def _constructed_energy(r):
    """device-hours x power [x PUE] in MWh, from reported columns (devices x days x 24 if no hours)."""
    hours = r["reported_device_hours"]
    if pd.isna(hours) and not pd.isna(r["devices"]) and not pd.isna(r["reported_train_days"]):
        hours = r["devices"] * r["reported_train_days"] * 24
    if pd.isna(hours) or pd.isna(r["reported_avg_power_w_per_device"]):
        return None
    mwh = hours * r["reported_avg_power_w_per_device"] / 1e6
    if r["energy_basis"] == "device_hours_x_power_x_pue":
        if pd.isna(r["reported_pue"]):
            return None
        mwh *= r["reported_pue"]
    return mwh


def test_by_construction_energy_reproduces_product():
    """LLaMA Table 15 (and its OPT/BLOOM rows), BLOOM dynamic energy (Luccioni et al. 2023),
    Patterson et al. 2021 Table 4: energy = device-hours x power (x PUE) within 2%."""
    rows = RUNS[RUNS["energy_basis"].isin(BY_CONSTRUCTION) & RUNS["reported_energy_mwh"].notna()]
    checked = 0
    for _, r in rows.iterrows():
        mwh = _constructed_energy(r)
        if mwh is None:
            continue
        checked += 1
        assert mwh == pytest.approx(r["reported_energy_mwh"], rel=0.02), r["id"]
    assert checked >= 9


def test_by_construction_emissions_reproduce_energy_times_grid():
    rows = RUNS[RUNS["energy_basis"].isin(BY_CONSTRUCTION)].dropna(
        subset=["reported_energy_mwh", "reported_grid_gco2e_per_kwh", "reported_co2e_t"])
    assert len(rows) >= 9
    for _, r in rows.iterrows():
        t = r["reported_energy_mwh"] * r["reported_grid_gco2e_per_kwh"] / 1000
        assert t == pytest.approx(r["reported_co2e_t"], rel=0.02), r["id"]


def test_bloom_dynamic_energy_is_exactly_gpu_hours_times_tdp():
    r = RUNS.set_index("id").loc["bloom-176b"]
    assert r["energy_basis"] == "dynamic_only" and r["power_basis"] == "tdp_assumed"
    assert r["reported_device_hours"] * 400 / 1e6 == pytest.approx(r["reported_energy_mwh"], abs=1e-6)


def test_llama2_emissions_follow_implied_pue_and_grid():
    """Model card: GPU-h x W x 1.1 (PUE) x 0.385 kg/kWh (US average) gives every row."""
    rows = RUNS[RUNS["id"].str.startswith("llama2-")]
    assert len(rows) == 4
    for _, r in rows.iterrows():
        t = r["reported_device_hours"] * r["reported_avg_power_w_per_device"] * 1.1 * 0.385 / 1e6
        assert t == pytest.approx(r["reported_co2e_t"], rel=0.02), r["id"]


def test_power_caps_lie_between_idle_and_the_rating():
    capped = RUNS[RUNS["power_cap_w"].notna()].merge(
        ACCELERATORS[["id", "tdp_w", "idle_w"]], left_on="accelerator", right_on="id",
        suffixes=("", "_acc"))
    assert (capped["power_cap_w"] > capped["idle_w"]).all()
    assert (capped["power_cap_w"] <= capped["tdp_w"]).all()
    # Llama 2 paper Table 2 / s2.2.1: 350 W (production cluster) for 34B, 400 W (RSC) else;
    # the rows' assumed power is that cap
    llama2 = RUNS[RUNS["id"].str.startswith("llama2-")].set_index("id")
    assert llama2["power_cap_w"].to_dict() == {"llama2-7b": 400, "llama2-13b": 400,
                                               "llama2-34b": 350, "llama2-70b": 400}
    assert (llama2["power_cap_w"] == llama2["reported_avg_power_w_per_device"]).all()


def test_llama2_gpu_hours_are_whole_hours_on_2048_gpus():
    # Llama 2 paper Table 2: 184,320, 368,640, 1,038,336 and 1,720,320 GPU-hours are
    # 2048 x 90, 180, 507 and 840 hours. The paper gives no GPU count; these whole numbers
    # agree with the 2048 GPUs LLaMA 1 trained on (Sec. 2.4), the validation's default
    # (assumptions.validation_default_devices) for rows that state none
    llama2 = RUNS[RUNS["id"].str.startswith("llama2-")].set_index("id")
    hours = llama2["reported_device_hours"] / 2048
    assert hours.to_dict() == {"llama2-7b": 90, "llama2-13b": 180, "llama2-34b": 507,
                               "llama2-70b": 840}
    assert llama2["devices"].isna().all()
    assert traincost.DEFAULT_ASSUMPTIONS.validation_default_devices == 2048


def test_assumed_power_is_never_labelled_measured():
    assumed = RUNS["power_basis"].isin({"tdp_assumed", "cap_assumed"})
    assert not (assumed & (RUNS["energy_basis"] == "measured")).any()
    measured_power = RUNS[RUNS["power_basis"] == "measured"]
    # Patterson et al. 2021 Table 4; MLPerf Training v4.0-v5.0's power logs (node AC power
    # / 8): GPT-3 and five Llama 2 70B LoRA submissions
    assert set(measured_power["id"]) == {"patterson-gpt3-175b", "patterson-t5-11b",
                                         "mlperf40-smc-gpt3-512", "mlperf40-smc-lora70b-8",
                                         "mlperf40-smc-lora70b-64", "mlperf40-smc-lora70b-512",
                                         "mlperf41-dell-lora70b-64",
                                         "mlperf50-lenovo-lora70b-b200-8"}


def test_sc21_table1_aggregate_matches_per_gpu_throughput():
    rows = RUNS[RUNS["id"].str.startswith("sc21-t1-")]
    assert len(rows) == 10
    for _, r in rows.iterrows():
        m = re.search(r"aggregate ([\d.]+) PFLOP/s", r["notes"])
        assert m, r["id"]
        aggregate = float(m.group(1))
        per_gpu = r["reported_hardware_tflops_per_device"]
        # the per-GPU column is printed to integer TFLOP/s, the aggregate to 0.1 PFLOP/s
        tol = 0.5 * r["devices"] / 1000 + 0.05
        assert per_gpu * r["devices"] / 1000 == pytest.approx(aggregate, abs=tol), r["id"]


def test_sc21_table1_spot_values():
    """Hand-checked against two transcriptions of Narayanan et al. 2021, Table 1."""
    df = RUNS.set_index("id")
    assert df.loc["sc21-t1-1008b", ["tp", "pp", "devices", "global_batch"]].tolist() == \
        [8, 64, 3072, 3072]
    assert df.loc["sc21-t1-1008b", "reported_hardware_tflops_per_device"] == 163
    assert df.loc["sc21-t1-145.6b", "reported_hardware_tflops_per_device"] == 148
    assert (df.loc[df.index.str.startswith("sc21-t1-"), "recompute"] == "full").all()


def test_megascale_and_llama3_spot_values():
    df = RUNS.set_index("id")
    r = df.loc["megascale-175b-megascale-12288"]
    assert (r["tp"], r["pp"], r["dp"], r["global_batch"]) == (8, 8, 192, 6144)
    assert r["reported_mfu"] == pytest.approx(0.552)
    r = df.loc["llama3-405b-16384-cp16"]
    assert (r["tp"], r["cp"], r["pp"], r["dp"], r["seq_len"]) == (8, 16, 16, 8, 131072)
    assert r["reported_mfu"] == pytest.approx(0.38)


def test_nemo_attention_kernel_follows_the_recipes_nvte_fused_attn():
    # dgxc-benchmarking @ 143b90dd: the Llama 3.1 recipes export NVTE_FUSED_ATTN=1 (cuDNN
    # fused attention, TransformerEngine's choice on Hopper); nemo_megatron/configure.sh,
    # the GPT-3 175B recipe, exports NVTE_FUSED_ATTN=0 (flash-attn)
    # (the NeMo 25.04 release's rows, which set no override and so run TransformerEngine's
    # default, cuDNN first on Hopper and Blackwell, are checked below)
    later = RUNS["id"].str.startswith(("nvidia-dgxc-llama3.1-405b-gb200-",
                                       "nvidia-dgxc-llama3.1-405b-nemo25-"))
    nemo = RUNS[RUNS["id"].str.startswith(("nvidia-dgxc-llama3.1-", "nvidia-dgxc-gpt3-"))
                & ~later]
    llama = nemo["id"].str.startswith("nvidia-dgxc-llama3.1-")
    assert llama.sum() == 20 and (~llama).sum() == 7
    assert (nemo.loc[llama, "attention_kernel"] == "cudnn").all()
    assert nemo.loc[llama, "notes"].str.contains("NVTE_FUSED_ATTN=1").all()
    assert (nemo.loc[~llama, "attention_kernel"] == "flash").all()
    assert nemo.loc[~llama, "notes"].str.contains("NVTE_FUSED_ATTN=0").all()


#: NVIDIA dgxc-benchmarking llama3.1/README.md @ 1f6d9f40 (NeMo 25.04): MFU as printed per
#: (accelerator id prefix, precision, GPUs), with the README's peaks (GB200 2450/4900, H100
#: 989/1979 TFLOP/s) and 2.17e16 model FLOP per sequence
LLAMA405_NEMO25_MFU = {
    ("gb200", "bf16"): {128: 47.4, 256: 46.7, 512: 46.6},
    ("gb200", "fp8"): {128: 36.1, 256: 35.8, 512: 35.5},
    ("nemo25", "bf16"): {512: 55.34},
    ("nemo25", "fp8"): {512: 42.12},
}
README_PEAK = {("gb200", "bf16"): 2450e12, ("gb200", "fp8"): 4900e12,
               ("nemo25", "bf16"): 989e12, ("nemo25", "fp8"): 1979e12}


def test_llama405_nemo25_step_times_reproduce_the_printed_mfu():
    # MFU = GBS x 2.17e16 / step time / GPUs / peak (README 'Expected Performance');
    # GBS = GPUs / 2 in every recipe row; the rows run cuDNN attention (no override)
    df = RUNS.set_index("id")
    for (kind, precision), by_gpus in LLAMA405_NEMO25_MFU.items():
        for gpus, mfu in by_gpus.items():
            tag = "" if precision == "bf16" else "fp8-"
            r = df.loc[f"nvidia-dgxc-llama3.1-405b-{kind}-{tag}{gpus}"]
            assert r["global_batch"] == gpus // 2 and r["precision"] == precision
            assert r["attention_kernel"] == "cudnn"
            got = r["global_batch"] * 2.17e16 / r["reported_step_time_s"] / gpus \
                / README_PEAK[(kind, precision)]
            assert 100 * got == pytest.approx(mfu, abs=0.06)
    # the GB200 runs stay a labelled model gap: the catalog's Blackwell ceilings were
    # measured with software newer than the runs' NeMo 25.04 container
    gb200 = df[df.index.str.startswith("nvidia-dgxc-llama3.1-405b-gb200-")]
    assert len(gb200) == 6
    assert gb200["model_gap"].str.contains("newer than the runs' NeMo 25.04 container").all()


#: NVIDIA dgxc-benchmarking nemotron/README_{15b,340b}.md @ 35a9aecc: MFU as printed, per
#: (model, precision, GPUs); the README's own FLOP per sequence (Notes) and peak
NEMOTRON_MFU = {
    ("15b", "bf16"): {16: 62.10, 2048: 59.37},
    ("15b", "fp8"): {16: 42.22, 32: 42.43, 64: 42.02, 128: 42.22, 256: 41.82, 512: 41.43,
                     1024: 41.43, 2048: 40.29},
    ("340b", "bf16"): {128: 55.38, 2048: 52.75},
    ("340b", "fp8"): {128: 40.38, 256: 39.75, 512: 39.14, 1024: 38.20, 2048: 36.56},
}


def test_nemotron_step_times_reproduce_the_printed_mfu():
    # MFU = GBS x model FLOP / step time / GPUs / peak (README); 434.5e12 and 1.01e16 FLOP
    # per sequence, 989 (bf16) and 1979 (fp8) TFLOP/s: the stored step times and batches
    # give back every printed MFU to its two decimals
    flop = {"15b": 434.5e12, "340b": 1.01e16}
    peak = {"bf16": 989e12, "fp8": 1979e12}
    rows = RUNS.set_index("id")
    seen = 0
    for (size, prec), table in NEMOTRON_MFU.items():
        for n, mfu in table.items():
            r = rows.loc[f"nvidia-dgxc-nemotron4-{size}-{'fp8-' if prec == 'fp8' else ''}{n}"]
            assert (r["devices"], r["precision"]) == (n, prec)
            got = r["global_batch"] * flop[size] / r["reported_step_time_s"] / n / peak[prec]
            assert 100 * got == pytest.approx(mfu, abs=0.006)
            seen += 1
    # the NeMo 25.04 rows (-nemo25-) store their step times only: not checked here
    mine = rows.filter(like="nvidia-dgxc-nemotron4-", axis=0)
    assert seen == len(mine[~mine.index.str.contains("-nemo25-")]) == 17


def test_nemotron_layouts_follow_configure_sh():
    # nemotron/configure.sh @ 35a9aecc: 15b TP 4, PP 1, MBS 4, GBS = 4 x GPUs, NVTE_FUSED_ATTN=1;
    # 340b TP 8, PP 8, VP 12, MBS 1, GBS = GPUs / 4 (2 per node), NVTE_FUSED_ATTN=0
    # and nemotron/launch.sh @ 1f6d9f40 (NeMo 25.04, the -nemo25- rows): 15b TP 2, PP 1, MBS 2,
    # GBS = 4 x GPUs; 340b TP 8, PP 8, VP 12, MBS 1, GBS = GPUs / 4; no NVTE_FUSED_ATTN override
    rows = RUNS[RUNS["id"].str.startswith("nvidia-dgxc-nemotron4-")]
    for _, r in rows.iterrows():
        small = r["model_preset"] == "nemotron4-15b"
        if "-nemo25-" in r["id"]:
            tp, pp, vpp, mb, gbs, kernel = ((2, 1, 1, 2, 4 * r["devices"], "cudnn") if small else
                                            (8, 8, 12, 1, r["devices"] // 4, "cudnn"))
        else:
            tp, pp, vpp, mb, gbs, kernel = ((4, 1, 1, 4, 4 * r["devices"], "cudnn") if small else
                                            (8, 8, 12, 1, r["devices"] // 4, "flash"))
        assert (r["tp"], r["pp"], r["vpp"], r["micro_batch"], r["global_batch"]) == \
            (tp, pp, vpp, mb, gbs), r["id"]
        assert r["tp"] * r["pp"] * r["dp"] == r["devices"] and r["attention_kernel"] == kernel


def test_frontier_counts_gcds():
    rows = RUNS[RUNS["id"].str.startswith("frontier-")]
    assert set(rows["accelerator"]) == {"mi250x-gcd"}
    assert sorted(rows["devices"]) == [16, 1024, 3072]


def test_frontier_layouts_follow_the_authors_scripts():
    # sajal-vt/Megatron-DeepSpeed-ORNL launch scripts: 22B tp 1 x pp 8 on 2 nodes, batch 640;
    # 175B tp 4 x pp 16 on 16 nodes, batch 1280; 1T tp 4 x pp 128 on 128 nodes, batch 1024.
    # The paper's weak scaling keeps each replica's batch: 1280/2 = 640 and 1024/2 = 512.
    script = {"frontier-22b-16gcd": (1, 8, 16, 640), "frontier-175b-1024gcd": (4, 16, 128, 1280),
              "frontier-1t-3072gcd": (4, 128, 1024, 1024)}
    for case, (tp, pp, n, batch) in script.items():
        row = RUNS.set_index("id").loc[case]
        assert (row["tp"], row["pp"], row["micro_batch"], row["recompute"]) == (tp, pp, 1, "full")
        assert row["tp"] * row["pp"] * row["dp"] == row["devices"]
        per_replica = batch // (n // (tp * pp))
        assert row["global_batch"] == per_replica * row["dp"], case
        assert row["model_gap"], case           # FLOP convention unsettled: out of the fit


def test_mtnlg_iteration_times_match_the_printed_throughput():
    # Smith et al. 2022 s2.4: 60.1/50.2/44.4 s per iteration on 280/350/420 DGX A100 servers
    # are 126/121/113 TFLOP/s per GPU. Megatron's F = 96 B s l H^2 (1 + s/6H + V/16 l H),
    # with B 1920, s 2048, l 105, H 20480, V 50257 (GPT-2 BPE), gives 125.7/120.4/113.5.
    B, s, l, H, V = 1920, 2048, 105, 20480, 50257
    flop = 96 * B * s * l * H**2 * (1 + s / (6 * H) + V / (16 * l * H))
    for n in (2240, 2800, 3360):
        row = RUNS.set_index("id").loc[f"mtnlg-530b-{n}"]
        tflops = flop / (row["reported_step_time_s"] * n) / 1e12
        assert tflops == pytest.approx(row["reported_hardware_tflops_per_device"], rel=0.01)
        assert row["tp"] * row["pp"] * row["dp"] == n and row["vpp"] == 1


def test_data_readme_counts_the_rows():
    text = (DATA / "README.md").read_text(encoding="utf-8")
    stated = int(re.search(r"(\d+) rows:", text).group(1))
    assert stated == len(RUNS)


def test_megascale_530b_weak_scaling_rows():
    # MegaScale Figure 9: batch = number of GPUs on tp 8 x pp 35 (Table 1), so every
    # replica runs 280 sequences per step; s6.1: MegaScale's MFU is 'higher than
    # Megatron-LM by up to 6.1%' (54.3 - 48.2 at 11,200 GPUs)
    df = RUNS.set_index("id")
    for system in ("megatron", "megascale"):
        for n in (2240, 4480, 11200):
            r = df.loc[f"megascale-530b-{system}-{n}"]
            assert r["global_batch"] == n and r["global_batch"] / r["dp"] == 280
            assert (r["tp"], r["pp"], r["vpp"]) == (8, 35, 3)
    gap = [df.loc[f"megascale-530b-megascale-{n}", "reported_mfu"]
           - df.loc[f"megascale-530b-megatron-{n}", "reported_mfu"] for n in (2240, 4480, 11200)]
    assert max(gap) == pytest.approx(0.061)


def test_patterson_total_computation_is_rate_times_chips_times_days():
    # Patterson et al. 2021 Table 4: total FLOP = measured TFLOP/s x chips x training days
    # (T5: 45.6 x 512 x 20 d = 4.03e22 vs 4.05e22; GPT-3: 24.6 x 10,000 x 14.8 d = 3.15e23
    # vs 3.14e23), and GPT-3's 300B tokens x 6 x 175B parameters = 3.15e23 (Brown et al.)
    for case in ("patterson-t5-11b", "patterson-gpt3-175b"):
        row = RUNS.set_index("id").loc[case]
        rate = row["reported_hardware_tflops_per_device"]     # T5: Xprof, executed ops
        if pd.isna(rate):
            rate = row["reported_model_tflops_per_device"]        # GPT-3: OpenAI's count
        work = rate * 1e12 * row["devices"] * row["reported_train_days"] * 86400
        assert work == pytest.approx(row["total_flop"], rel=0.01), case
    gpt3 = RUNS.set_index("id").loc["patterson-gpt3-175b"]
    assert 6 * 175e9 * gpt3["tokens"] == pytest.approx(gpt3["total_flop"], rel=0.01)


def test_llama_normalised_rows_are_their_original_runs():
    # LLaMA Table 15 re-prices BLOOM's and OPT's GPU-hours (1,082,880 vs BLOOM's 1,082,990;
    # OPT's 992 GPUs x 34 days) and states no input of its own: the rows carry the runs'
    runs = RUNS.set_index("id")
    for norm, orig, cols in (
            ("bloom-176b-llama-normalized", "bloom-176b",
             ["devices", "tp", "pp", "dp", "global_batch", "micro_batch", "seq_len",
              "recompute", "precision", "zero", "tokens"]),
            ("opt-175b-llama-normalized", "opt-175b",
             ["devices", "global_batch", "seq_len", "precision", "zero", "tokens"])):
        assert runs.loc[norm, cols].equals(runs.loc[orig, cols]), norm
    assert runs.loc["opt-175b", "tokens"] == 180e9 and runs.loc["bloom-176b", "tokens"] == 366e9
    assert runs.loc["bloom-176b-llama-normalized", "reported_device_hours"] == \
        pytest.approx(runs.loc["bloom-176b", "reported_device_hours"], rel=1e-3)
    assert runs.loc["opt-175b-llama-normalized", "reported_device_hours"] == 992 * 34 * 24


def test_llama31_card_hours_imply_the_fractions_of_peak_their_gaps_state():
    # Llama 3.1 card: 1.46M / 7.0M / 30.84M H100 GPU-h for 8B / 70B / 405B on 15T / 15T /
    # 15.6T tokens; 6 x N x D over GPU-seconds x 989 TFLOP/s (H100 SXM dense bf16) gives
    # 13.9% / 25.3% / 34.5% with the cards' round parameter counts; the 405B's stays below
    # the Llama 3 paper's measured 38-43% MFU (Table 4) by about a goodput's share
    runs = RUNS.set_index("id")
    params = MODELS.set_index("id")["params_reported"]
    implied = {case: 6 * params[case] * runs.loc[case, "tokens"]
               / (runs.loc[case, "reported_device_hours"] * 3600 * 989e12)
               for case in ("llama3.1-8b", "llama3.1-70b", "llama3.1-405b")}
    assert implied["llama3.1-8b"] == pytest.approx(0.139, abs=0.002)
    assert implied["llama3.1-70b"] == pytest.approx(0.253, abs=0.002)
    assert 0.33 < implied["llama3.1-405b"] < 0.38
    assert runs.loc["llama3.1-8b", "model_gap"] and runs.loc["llama3.1-70b", "model_gap"]
    assert not isinstance(runs.loc["llama3.1-405b", "model_gap"], str)


def test_llama31_405b_hours_run_the_papers_main_stage_layout():
    # Llama 3 paper Table 4: 16,384 H100, TP 8, CP 1, PP 16, DP 128, 8K sequences, 16M-token
    # batches; the card's GPU-hours row carries that stage's configuration
    runs = RUNS.set_index("id")
    cols = ["devices", "tp", "pp", "dp", "cp", "global_batch", "seq_len", "recompute"]
    assert runs.loc["llama3.1-405b", cols].equals(runs.loc["llama3-405b-16384-cp1", cols])
    assert runs.loc["llama3.1-405b", "global_batch"] * 8192 == 16 * 2**20
