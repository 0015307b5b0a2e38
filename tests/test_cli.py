"""The CLI contract of DESIGN.md: JSON keys, exit codes, one-line errors."""

import json
import re
import subprocess
import sys

import pytest

from clihelpers import run, with_flags
from traincost.cli import main

BASE = ["estimate", "--accelerator", "a100-sxm4-80gb", "--devices", "1536", "--layers", "80",
        "--hidden", "12288", "--heads", "96", "--vocab", "51200", "--seq-len", "2048",
        "--global-batch", "2304", "--micro-batch", "1", "--tp", "8", "--pp", "8",
        "--recompute", "full", "--tokens", "300e9"]
KEYS = ["parallel", "params", "model_flop_per_token", "hardware_flop_per_token", "step_time_s",
        "tokens_per_s", "mfu", "hfu", "model_tflops_per_device", "hardware_tflops_per_device",
        "memory_gib_per_device", "fits_in_memory", "train_time_days", "device_hours",
        "avg_power_w_per_device", "it_energy_mwh", "facility_energy_mwh", "co2e_t",
        "embodied_co2e_t", "cost_usd", "breakdown"]


def test_json_has_every_contract_key(capsys):
    rc, out, _ = run(BASE + ["--json"], capsys)
    assert rc == 0
    d = json.loads(out)
    assert [k for k in KEYS if k not in d] == []
    assert d["params"] == pytest.approx(145.6e9, rel=0.005)
    for part in ("compute", "tp_comm", "pp_comm", "dp_comm", "ep_comm", "cp_comm", "bubble",
                 "optimizer"):
        assert part in d["breakdown"]["step_time_s"]


def test_human_output(capsys):
    rc, out, _ = run(BASE, capsys)
    assert rc == 0 and "MFU" in out and "tCO2e" in out and "fits" in out


@pytest.mark.parametrize("flags,name", [
    (["--tp", "7"], "tp"), (["--devices", "1000", "--tp", "8", "--pp", "16"], "devices"),
    (["--accelerator", "nonesuch-9000"], "accelerator"), (["--tokens", "-5"], "tokens"),
    (["--pue", "0.5"], "pue"), (["--global-batch", "abc"], "global-batch"),
    (["--recompute", "maybe"], "recompute"), (["--region", "atlantis"], "region")])
def test_bad_input_exits_2_with_one_line(flags, name, capsys):
    with pytest.raises(SystemExit) as exc:
        sys.exit(main(with_flags(BASE, flags) + ["--json"]))
    out = capsys.readouterr()
    assert exc.value.code == 2
    assert out.out == ""
    assert len(out.err.strip().splitlines()) == 1 and name in out.err


def test_compare_json(capsys):
    rc, out, _ = run(["compare", "--accelerators", "a100-sxm4-80gb,h100-sxm5-80gb",
                      "--devices", "64", "--model", "llama2-7b", "--global-batch", "512",
                      "--tokens", "1e11", "--json"], capsys)
    assert rc == 0
    rows = json.loads(out)
    assert [r["accelerator"] for r in rows] == ["a100-sxm4-80gb", "h100-sxm5-80gb"]
    assert all(r["train_time_days"] > 0 for r in rows)


def test_compare_unknown_accelerator(capsys):
    with pytest.raises(SystemExit) as exc:
        sys.exit(main(["compare", "--accelerators", "a100-sxm4-80gb,warp-drive", "--devices",
                       "64", "--model", "llama2-7b", "--global-batch", "512"]))
    assert exc.value.code == 2 and "warp-drive" in capsys.readouterr().err


@pytest.mark.parametrize("table", ["accelerators", "models", "regions", "pue"])
def test_catalog_lists(table, capsys):
    rc, out, _ = run(["catalog", table, "--json"], capsys)
    rows = json.loads(out)
    assert rc == 0 and len(rows) >= 5


def test_console_script_runs():
    # the installed entry point, in a subprocess, as users call it
    p = subprocess.run([sys.executable, "-m", "traincost.cli", "catalog", "accelerators"],
                       capture_output=True, text=True, check=True)
    assert "a100-sxm4-80gb" in p.stdout


def test_estimate_says_how_far_published_runs_like_it_landed(capsys):
    # the calibration's leave-one-out errors on this device and precision (stored by
    # `python -m traincost.calibrate --write` in calibration.BY_ACCELERATOR)
    from traincost import calibration
    runs, _, mean, worst = calibration.BY_ACCELERATOR[("a100-sxm4-80gb", "16-bit")]
    rc, out, _ = run(BASE + ["--json"], capsys)
    d = json.loads(out)
    assert d["validation"]["accelerator_runs"] == runs > 0
    assert d["validation"]["accelerator_loo_worst_pct"] == worst
    assert f"{mean:.1f}% mean" in d["accuracy"]
    rc, out, _ = run(BASE, capsys)
    assert rc == 0 and f"accuracy    out of sample, {mean:.1f}% mean" in out
    # no published run on Gaudi 3: no error of its own, and the text says so
    other = list(BASE)
    other[other.index("a100-sxm4-80gb")] = "gaudi3"
    rc, out, _ = run(other + ["--json"], capsys)
    d = json.loads(out)
    assert d["validation"]["accelerator_runs"] == 0
    assert d["validation"]["accelerator_loo_mape_pct"] is None
    assert d["validation"]["runs"] == calibration.METRICS["cases"]
    assert "no published 16-bit run on gaudi3" in d["accuracy"]


def test_validate_power_family_is_the_measured_power(capsys):
    # Patterson et al. 2021 Table 4 measured 330 W per V100 for GPT-3 and 310 W per TPU v3
    # for T5 (system power, host share included); MLPerf Training v4.0's SMC power logs
    # 6,849 W per 8-GPU node at AC, 856 W per H100, and its Llama 2 70B LoRA submissions
    # (v4.0-v5.0, node AC / 8): the only measured powers
    rc, out, _ = run(["validate", "--family", "power", "--json"], capsys)
    assert rc == 0
    d = json.loads(out)
    reported = {c["case"]: c["reported"] for c in d["cases"]}
    assert reported == {"patterson-gpt3-175b": 330.0, "patterson-t5-11b": 310.0,
                        "mlperf40-smc-gpt3-512": 856.0, "mlperf40-smc-lora70b-8": 869.0,
                        "mlperf40-smc-lora70b-64": 727.0, "mlperf40-smc-lora70b-512": 636.0,
                        "mlperf41-dell-lora70b-64": 878.0,
                        "mlperf50-lenovo-lora70b-b200-8": 1196.0}
    gpt3 = next(c for c in d["cases"] if c["case"] == "patterson-gpt3-175b")
    assert abs(gpt3["predicted"] / 330.0 - 1) <= 0.10           # the 10% target
    assert [s["family"] for s in d["summary"]] == ["power"]


def test_validate_case_shows_the_source_the_assumptions_and_the_comparison(capsys):
    # Llama 2 34B: 1,038,336 GPU-h (paper Table 2) at the production cluster's 350 W cap;
    # the source gives no GPU count, so the validation assumes LLaMA's 2048 (Sec. 2.4)
    rc, out, err = run(["validate", "--case", "llama2-34b"], capsys)
    assert rc == 0 and err == ""
    assert out.startswith("llama2-34b: Llama 2 34B pre-training")
    assert "arXiv:2307.09288" in out
    assert "power_cap_w 350" in out and "global_batch 1024" in out
    assert "assumed     not in source, assumed: devices 2048" in out
    assert "  layout      tp=" in out and "  step time   compute" in out
    assert "published   device_hours: reported 1,038,000" in out
    rc, out, _ = run(["validate", "--case", "llama2-34b", "--json"], capsys)
    d = json.loads(out)
    assert d["inputs"]["power_cap_w"] == 350 and d["estimate"]["devices"] == 2048
    assert d["estimate"]["power_cap_w"] == 350
    (c,) = d["comparisons"]
    assert c["reported"] == 1038336 and c["predicted"] == d["estimate"]["device_hours"]
    assert c["error_pct"] == pytest.approx(100 * (c["predicted"] / 1038336 - 1))


def test_validate_case_stated_in_full_assumes_nothing(capsys):
    # SC21 Table 1, first row: GPT 1.7B on 32 A100s (t 1, p 1, batch 512), 137 TFLOP/s
    rc, out, _ = run(["validate", "--case", "sc21-t1-1.7b", "--json"], capsys)
    d = json.loads(out)
    assert d["note"] == "" and d["model_gap"] == ""
    assert (d["estimate"]["parallel"]["tp"], d["estimate"]["parallel"]["pp"]) == (1, 1)
    (c,) = d["comparisons"]
    assert c["metric"] == "hardware_tflops_per_device" and c["reported"] == 137.0


def test_validate_case_unknown_names_the_flag_and_the_closest_ids(capsys):
    rc, out, err = run(["validate", "--case", "llama2-35b"], capsys)
    assert rc == 2 and out == ""
    assert err.startswith("traincost: error: case: unknown 'llama2-35b'; closest: llama2-34b")
    assert err.count("\n") == 1


def test_validate_table_marks_the_model_gaps(capsys):
    # OPT's re-priced GPU-hours are a model gap (its logbook's restarts), LLaMA-7B's are not
    rc, out, _ = run(["validate", "--family", "device_hours"], capsys)
    assert rc == 0
    rows = {line.split()[0]: line.split() for line in out.splitlines() if line.strip()}
    assert "gap" in rows["opt-175b-llama-normalized"]
    assert "gap" not in rows["llama1-7b"]
    assert "`traincost validate --case ID` says why" in out
    # the footer prints no NaN: Megatron on AMD, the reference framework on another family,
    # has no held-out-framework figure and says why
    assert "nan" not in out.lower()
    assert "not held out as a framework (the reference framework's own)" in " ".join(out.split())


def test_one_number_format(capsys):
    """Issue 26: every figure in significant figures with thousands separators, never
    ``3.756e+05`` beside ``2,877,873`` (tokens and FLOP per token stay scientific)."""
    import re
    rc, out, _ = run(["estimate", "--accelerator", "h100-sxm5-80gb", "--devices", "1024",
                      "--model", "llama3.1-70b", "--global-batch", "1024"], capsys)
    assert rc == 0
    for line in out.splitlines():
        if line.lstrip().startswith(("params", "time", "caveat", "accuracy")):
            continue                                 # FLOP/token and tokens: scientific
        assert not re.search(r"\d\.\d+e[+-]\d\d", line), line
    cost = next(x for x in out.splitlines() if x.lstrip().startswith("cost"))
    assert re.search(r"cost        \d{1,3}(,\d{3})+ USD", cost)


# --- tables that fit a terminal (issue 26: 100 columns; --wide or --json for the rest) ------
SMALL_COMPARE = ["compare", "--accelerators", "a100-sxm4-80gb,h100-sxm5-80gb", "--devices",
                 "64", "--model", "llama2-7b", "--global-batch", "512"]


@pytest.mark.parametrize("args", [
    ["catalog", "accelerators"], ["catalog", "models"], ["catalog", "regions"],
    ["catalog", "pue"], ["catalog", "frameworks"], SMALL_COMPARE,
    SMALL_COMPARE + ["--uncertainty"],
    ["search", "--accelerators", "h100-sxm5-80gb", "--devices", "64,128", "--model",
     "llama2-7b", "--global-batch", "512", "--uncertainty"],
    ["validate", "--family", "power"]])
def test_tables_fit_100_columns(args, capsys):
    rc, out, _ = run(args, capsys)
    assert rc == 0 and out.strip()
    widest = max(out.splitlines(), key=len)
    assert len(widest) <= 100, widest


def test_compare_table_reads_as_its_json_and_wide_shows_every_column(capsys):
    from traincost.formatting import sig
    rc, out, _ = run(SMALL_COMPARE + ["--json"], capsys)
    rows = {r["accelerator"]: r for r in json.loads(out)}
    rc, text, _ = run(SMALL_COMPARE, capsys)
    line = next(x for x in text.splitlines() if x.startswith("h100-sxm5-80gb"))
    h = rows["h100-sxm5-80gb"]
    # dollars to 4 significant figures with thousands separators, never 3.66e+05
    assert f" {sig(h['cost_usd'], 4)}" in line and "e+0" not in text
    assert f"tp{h['tp']} pp{h['pp']} dp{h['dp']} z{h['zero']} b{h['micro_batch']}" in line
    assert f"{100 * h['mfu']:.1f}%" in line and "(more columns: --wide or --json)" in text
    rc, wide, _ = run(SMALL_COMPARE + ["--wide"], capsys)
    assert rc == 0 and "avg_power_w_per_device" in wide and "embodied_co2e_t" in wide


def test_catalog_table_shows_units_people_read(capsys):
    rc, out, _ = run(["catalog", "accelerators"], capsys)
    line = next(x for x in out.splitlines() if x.startswith("h100-sxm5-80gb "))
    # 989 TFLOP/s dense bf16 (NVIDIA H100 datasheet) and the 81,559 MiB nvidia-smi reports
    # as GiB (81,559 / 1,024 = 79.6), not 85520809984 bytes
    assert " 989 " in line and " 79.6 " in line and "85520809984" not in out
    rc, wide, _ = run(["catalog", "accelerators", "--wide"], capsys)
    assert "hbm_bytes" in wide


def test_validate_offers_every_family_it_reports(capsys):
    # the memory family (torchtitan's measured peaks) is in validate's summary, so --family
    # must take it: its table lists memory figures only
    from traincost.validate import FAMILIES, compare_published
    assert set(FAMILIES) == set(compare_published()["family"])
    rc, out, _ = run(["validate", "--family", "memory"], capsys)
    rows = [x.split() for x in out.splitlines() if x.startswith("tt-")]
    assert rc == 0 and rows and all(r[1] == "memory_gib_per_device" for r in rows)


@pytest.mark.parametrize("args", [
    ["compare", "--accelerators", "h100-sxm5-80gb,tpu-v5p", "--devices", "64", "--model",
     "llama2-70b", "--global-batch", "256", "--tp", "8", "--pp", "1", "--zero", "3",
     "--micro-batch", "1", "--recompute", "offload", "--wide"],
    ["catalog", "accelerators", "--wide"],
])
def test_wide_tables_keep_the_number_format(args, capsys):
    """--wide prints every column in the main tables' format (issue 26: one number format):
    thousands separators, no exponent (969,000 USD, not 9.69e+05), yes/no, and n/a where a
    row has no value (the TPU that cannot offload), never pandas' NaN or <NA>."""
    rc, out, err = run(args, capsys)
    assert rc == 0, err
    assert not re.search(r"\de[+-]\d", out), out[:500]
    assert "NaN" not in out and "<NA>" not in out and "True" not in out
