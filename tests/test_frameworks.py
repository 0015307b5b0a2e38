"""The training framework as an input (issue 21): its data, its factor, its defaults, and
the bookkeeping of the runs that came with it.

Hand values: the toy of tests/test_model.py (2,496 FLOP per step at 1 FLOP/s of peak), the
framework rule (at least 3 runs in 2 documents, traincost.calibrate), the sources' own
numbers quoted in data/published_runs.csv.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import replace
from importlib import resources

import pandas as pd
import pytest

import traincost
from traincost import calibrate, calibration, catalog, model, validate
from traincost.assemble import build_stack
from traincost.inputs import Stack
from traincost.assumptions import DEFAULT
from traincost.cli import main

from test_model import toy

RUNS = catalog.published_runs()
#: id prefixes of the runs that joined with issue 21 (data/candidate_runs.csv before)
NEW = ("tt-", "mt-", "lf-", "ds-azure-", "gaudi2-", "mi300x-", "lumi-")


def test_every_framework_a_run_names_is_in_the_table():
    named = set(RUNS["framework"].dropna())
    assert named <= set(catalog.frameworks().index), named - set(catalog.frameworks().index)
    assert {"unspecified", "megatron", "torchtitan", "maxtext", "llm-foundry", "deepspeed",
            "optimum-habana"} <= set(catalog.frameworks().index)


def test_the_factor_scales_the_matmul_rate_up_to_the_ceiling():
    # the toy's step is 2,496 FLOP at peak 1 x MAMF 1 x in-model share x factor: half the
    # factor, twice the compute time
    rate = DEFAULT.in_model_matmul_fraction
    half = model.evaluate(toy(framework_matmul_factor=0.5))
    assert half["step_compute_s"] == pytest.approx(2496 / (0.5 * rate), rel=1e-12)
    # no layer beats the measured MAMF: factor 10 runs at MAMF itself (share 1)
    fast = model.evaluate(toy(framework_matmul_factor=10.0))
    assert fast["step_compute_s"] == pytest.approx(2496 / 1.0, rel=1e-12)
    # where MAMF is only assumed (0.5 of peak here), the ceiling is the peak: twice MAMF
    assumed = model.evaluate(toy(framework_matmul_factor=10.0, mamf_fraction=0.5,
                                 mamf_measured=False))
    assert assumed["step_compute_s"] == pytest.approx(2496 / 1.0, rel=1e-12)


def test_a_fixed_time_per_layer_per_microbatch_adds_on_every_microbatch_and_the_bubble():
    # the toy (one layer, one micro-batch, no pipeline): 0.5 s a layer adds 0.5 s to the
    # step, reported as its own part; the compute is what it was
    base = model.evaluate(toy())
    over = model.evaluate(toy(framework_layer_overhead_s=0.5))
    assert over["step_layer_overhead_s"] == pytest.approx(0.5, rel=1e-12)
    assert over["step_compute_s"] == pytest.approx(base["step_compute_s"], rel=1e-12)
    assert over["step_time_s"] - base["step_time_s"] == pytest.approx(0.5, rel=1e-9)
    # 4 layers on 2 stages (2 each) and a global batch of 8 on one replica: m = 8
    # micro-batches pay 2 x 0.5 s each (8 s), and the 1F1B bubble, (p - 1)/m of m t_mb,
    # pays one micro-batch's more (1 s): 9 s in all
    kw = dict(layers=4, pp=2, devices=2, global_batch=8)
    base = model.evaluate(toy(**kw))
    over = model.evaluate(toy(framework_layer_overhead_s=0.5, **kw))
    assert over["step_layer_overhead_s"] == pytest.approx(8.0, rel=1e-12)
    assert over["step_time_s"] - base["step_time_s"] == pytest.approx(9.0, rel=1e-9)
    # micro-batches of two sequences: half as many pay it (4 s), the bubble the same 1 s
    base = model.evaluate(toy(micro_batch=2, **kw))
    over = model.evaluate(toy(framework_layer_overhead_s=0.5, micro_batch=2, **kw))
    assert over["step_layer_overhead_s"] == pytest.approx(4.0, rel=1e-12)
    assert over["step_time_s"] - base["step_time_s"] == pytest.approx(5.0, rel=1e-9)


def test_the_fit_recovers_a_known_factor_and_fixed_time_per_layer():
    # the tr11 runs (Megatron-DeepSpeed: its fixed time is fitted, data/frameworks.csv)
    # with their reported step times replaced by the model's own at factor 1.05 and
    # 10 ms a layer: the fit must find both again
    runs = RUNS[RUNS.index.str.startswith("tr11-")]
    cases = calibrate.prepare_cases(runs)
    a = DEFAULT
    log_pred = calibrate.residuals(cases, a, 1.05, 0.010)
    i = 0
    synthetic = []
    for c in cases:
        n = len(c.targets)
        logs = log_pred[i:i + n] + [math.log(v) for _, v in c.targets]
        synthetic.append(replace(c, targets=[(k, math.exp(x)) for (k, _), x
                                              in zip(c.targets, logs)]))
        i += n
    key = synthetic[0].stack
    assert key == "megatron-deepspeed on NVIDIA"
    factors, overheads = calibrate.fit_frameworks(synthetic, a, {key})
    assert factors[key] == pytest.approx(1.05, rel=1e-3)
    assert overheads[key] == pytest.approx(0.010, rel=1e-3)
    # a stack that compiles its whole step (MaxText, XLA) keeps none, and the reference's
    # is in its shared constants
    assert not catalog.fits_layer_overhead("maxtext")
    assert not catalog.fits_layer_overhead("megatron")
    assert catalog.framework_layer_overhead("megatron", "h100-sxm5-80gb") == 0.0


def test_a_framework_implies_its_defaults_unless_given():
    tt = build_stack(framework="torchtitan")
    assert (tt.attention_kernel, tt.overlap) == ("flash", "dp")       # data/frameworks.csv
    own = build_stack(framework="torchtitan", attention_kernel="cudnn")
    assert own.attention_kernel == "cudnn"
    assert build_stack(framework="megatron") == Stack(framework="megatron")
    # FSDP frameworks shard as ZeRO-3 when the layout leaves it open
    est = traincost.estimate("h100-sxm5-80gb", 16, model="llama3.1-8b", global_batch=32,
                             tokens=1e9, framework="torchtitan", tp=1, pp=1, cp=1)
    assert est.parallel.zero == 3
    est = traincost.estimate("h100-sxm5-80gb", 16, model="llama3.1-8b", global_batch=32,
                             tokens=1e9, framework="torchtitan", tp=1, pp=1, cp=1, zero=1)
    assert est.parallel.zero == 1


def test_a_fitted_framework_is_slower_or_faster_by_its_factor_and_says_so():
    from traincost import calibration
    factor = calibration.FRAMEWORKS["torchtitan on NVIDIA"]["factor"]
    # every knob the framework implies stated, its eager element-wise passes among them, so
    # only the factor differs
    kw = dict(model="llama3.1-8b", global_batch=64, tokens=1e9, tp=1, pp=1, cp=1, zero=3,
              micro_batch=1, recompute="full", attention_kernel="flash", overlap="dp",
              elementwise="fused")
    ref = traincost.estimate("h100-sxm5-80gb", 8, **kw)
    tt = traincost.estimate("h100-sxm5-80gb", 8, framework="torchtitan", **kw)
    assert factor != 1
    # a factor below 1 slows the stack's matmuls, above 1 speeds them up
    assert (tt.report["step_compute_s"] > ref.report["step_compute_s"]) == (factor < 1)
    assert any(f"{factor:.2f}x" in c for c in tt.caveats)
    assert not any(c.startswith("framework") for c in ref.caveats)


def test_a_borrowed_framework_says_it_borrows():
    est = traincost.estimate("gaudi2", 8, model="llama2-7b", global_batch=64, tokens=1e9,
                             framework="optimum-habana")
    assert any("optimum-habana: too few published runs on Intel" in c for c in est.caveats)
    # on AMD torchtitan has too few runs (one document); Megatron has a factor of its own
    # (LUMI's Megatron-DeepSpeed and MLPerf's two LoRA logs), which an unstated framework
    # there gets, as on TPUs
    est = traincost.estimate("mi300x", 8, model="llama2-7b", global_batch=64, tokens=1e9,
                             framework="torchtitan")
    assert any("torchtitan: too few published runs on AMD" in c for c in est.caveats)
    est = traincost.estimate("mi300x", 8, model="llama2-7b", global_batch=64, tokens=1e9)
    assert any("an unstated framework on this family runs its GEMMs at" in c
               for c in est.caveats)
    # on Intel too (Megatron-DeepSpeed: Intel's page and MLPerf's logs)
    est = traincost.estimate("gaudi2", 8, model="llama2-7b", global_batch=64, tokens=1e9)
    assert any("an unstated framework on this family runs its GEMMs at" in c
               for c in est.caveats)


def test_cli_framework_and_head_dim(capsys):
    base = ["estimate", "--accelerator", "tpu-v5p", "--devices", "64", "--layers", "32",
            "--hidden", "10240", "--heads", "32", "--ffn-hidden", "32768", "--vocab", "32768",
            "--seq-len", "2048", "--global-batch", "512", "--tokens", "1e10", "--json"]
    assert main(base + ["--head-dim", "256", "--framework", "maxtext"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["stack"]["framework"] == "maxtext"
    # attention weights 4 x 10240 x (32 x 256) per layer instead of 4 x 10240^2, and the
    # Q, K, V biases 3 x 8192 instead of 3 x 10240 (a GPT-style, non-gated custom model):
    # the parameter count falls by 32 layers x (4 x 10240 + 3) x (10240 - 8192)
    assert main(base) == 0
    full = json.loads(capsys.readouterr().out)["params"]
    assert full - d["params"] == 32 * (4 * 10240 + 3) * (10240 - 8192)
    with pytest.raises(SystemExit) as e:
        main(base + ["--framework", "jax"])
    assert e.value.code == 2
    assert "--framework: invalid choice: 'jax'" in capsys.readouterr().err


def test_stated_layouts_are_read_as_the_source_states_them():
    # tp x pp x dp fill the devices: no context parallelism (cp 1), not a searched one;
    # only a local batch stated: the global batch is dp x micro-batch
    row = RUNS.loc["tt-h100-llama3.1-8b-8-fsdp"].copy()
    row["global_batch"] = float("nan")
    kwargs, filled = validate.case_inputs(row)
    assert kwargs["cp"] == 1
    assert kwargs["job"].global_batch == 8 * 2
    assert "global batch 16 (dp x micro-batch, no accumulation)" in filled


def test_tokens_per_second_is_the_one_figure_a_row_fits_with():
    # a row with tokens/s and MFU (the same measurement twice) fits with tokens/s alone
    row = RUNS.loc["tt-a100-llama3-8b-ac-op"].copy()
    assert row["reported_tokens_per_s_per_device"] == 2973        # torchtitan's WPS
    row["reported_mfu"] = 0.582
    case = calibrate._prepare(row, calibrate.PRIOR)
    assert case.targets == [("tokens_per_s_per_device", 2973.0)]


def test_new_runs_carry_their_pre_fit_error():
    # issue 21: every run that came with it was predicted before it joined the fit, and the
    # prediction's error and the model that made it are in its row
    new = RUNS[RUNS.index.str.startswith(NEW)]
    # 56, then Gaudi 2's Megatron-DeepSpeed, LUMI, Azure's 175B bars, torchtitan's two
    # torch.compile rows (predicted with the eager/fused input before they joined), and
    # MaxText's A3 README's 2-, 4- and 8-VM rows (2026-12-03)
    assert len(new) == 72
    predicted = new[new["prefit_error_pct"].notna()]
    assert len(predicted) >= 60
    assert predicted["prefit_basis"].str.contains("before the row joined the fit").all()
    assert new["status"].eq("measured").all()
    # the rows that were in the calibration before (SC21, NeMo, ...) joined without one;
    # the ones that joined later (issue 24's MLPerf power runs) carry their own
    later = ["mlperf40-smc-gpt3-512", "mlperf40-smc-lora70b-8", "mlperf40-smc-lora70b-64",
             "mlperf40-smc-lora70b-512", "mlperf41-dell-lora70b-64",
             "mlperf50-lenovo-lora70b-b200-8", "mlperf31-gaudi2-gpt3-384",
             "mlperf31-gaudi2-gpt3-256", "mlperf40-gaudi2-gpt3-1024",
             "intellect1-10b-8-h100-nocomm", "mlperf50-amd-lora70b-mi300x-8",
             "mlperf50-amd-lora70b-mi325x-8", "mlperf51-amd-lora70b-mi300x-8",
             "mlperf51-amd-lora70b-mi325x-8", "palm-540b-6144-2pods",
             *RUNS.index[RUNS.index.str.startswith(("ibm-fsdp-", "ds-deepcompile-",
                                                    "fsdp-deepcompile-", "tpurecipes-",
                                                    "nemo-longseq-", "nvidia-dgxc-grok1-",
                                                    "nvidia-dgxc-maxtext-", "nemo-perf2407-",
                                                    "mbridge-", "jaxtb-", "olmo-core-",
                                                    "tr11-", "olmo3-"))],
             *RUNS.index[RUNS.index.str.contains("-nemo25-") & RUNS.index.str.startswith(
                 "nvidia-dgxc-nemotron4-")]]
    # IBM's twelve fms-fsdp runs, DeepCompile's eight, the TPU MaxText recipes' twenty-two,
    # NeMo's long-sequence page's seventeen, NVIDIA's twelve Grok-1 benchmarks, its
    # twenty-two MaxText ones, its four NeMo 25.04 Nemotron-4 ones, NeMo 24.07's
    # performance summary's twelve, Megatron-Bridge's fourteen, JAX-Toolbox's MaxText one and
    # its Pax six, OLMo-core's README ten, BigScience's tr11 layout sweep thirty-five (three
    # days) and reshaping runs seven, PaLM's two pods one, the Olmo 3 report's two
    assert len(later) == 199
    old = RUNS.loc[~RUNS.index.str.startswith(NEW) & ~RUNS.index.isin(later)]
    assert old["prefit_error_pct"].isna().all()
    assert RUNS.loc[later, "prefit_basis"].str.contains("before the row joined the fit").all()


def test_maxtext_tokens_follow_from_its_own_flop_count():
    # MaxText prints TFLOP/s from its own count (before 2025-07: 6 x matmul weights incl.
    # the logits + 12 L s heads head_dim, attention not halved); 32B on v5p-128 printed 328
    m = catalog.model("maxtext-32b")
    # per token and layer: MLP 2 x 2 x mlp x emb (one relu activation, two matrices), Q K V
    # 2 x emb x 3 heads x head_dim, output projection 2 x emb x heads x head_dim; logits
    # 2 x emb x vocab; forward + backward x 3; attention 4 s heads head_dim, x 3
    per_token = 3 * (m.layers * (4 * m.ffn_hidden * m.hidden + 8 * m.hidden * m.heads * m.head_dim)
                     + 2 * m.hidden * m.vocab) + 12 * m.layers * 2048 * m.heads * m.head_dim
    tps = RUNS.loc["mt-v5p-32b-64", "reported_tokens_per_s_per_device"]
    assert tps == pytest.approx(328e12 / per_token, rel=1e-5)
    assert re.search(r"printed 328(\.0)? TFLOP/s", RUNS.loc["mt-v5p-32b-64", "notes"])


def test_framework_column_is_blank_or_a_known_id_in_candidates():
    left = pd.read_csv(resources.files("traincost.data").joinpath("candidate_runs.csv"))
    issue21 = {"ds-azure-2t-1024-s1024", "ds-zero3-offload-1t-512-v100", "olmocore-1b-h100",
               "olmocore-7b-h100"}
    assert issue21 <= set(left["id"])
    # issue 24's measured-power runs the model cannot describe yet (Morrison et al. 2025's
    # GPU-only figures; the MLPerf LoRA ones joined once LoRA could be described), each
    # saying why
    power = left[~left["id"].isin(issue21)]
    assert len(power) == 5 and power["power_basis"].eq("measured").all()
    assert power["notes"].str.startswith("Not representable yet").all()
    assert set(left["framework"].dropna()) <= set(catalog.frameworks().index)   # or blank


def test_measured_peak_memory_is_compared_not_fitted():
    # torchtitan's tables give each run's peak memory per device (its Memory(GiB) column),
    # MLPerf's B200 LoRA log its peak allocated memory: the validation compares the
    # predicted layout's memory with them, in their own family, which FIT_FAMILIES leaves
    # out of every fit
    measured = RUNS["reported_peak_memory_gib_per_device"].dropna()
    assert len(measured) == 17
    assert measured.index.str.startswith("tt-").sum() == 16
    assert measured["mlperf50-lenovo-lora70b-b200-8"] == 168.8
    assert RUNS.loc["tt-h100-llama3.1-8b-8-fsdp", "reported_peak_memory_gib_per_device"] == 82.4
    table = validate.compare_published(RUNS.loc[["tt-h100-llama3.1-70b-256-2d-fp8"]])
    row = table[table["family"] == "memory"].iloc[0]
    est = validate.predict_case(RUNS.loc["tt-h100-llama3.1-70b-256-2d-fp8"])
    assert row["predicted"] == pytest.approx(est.report["memory_gib_per_device"])
    assert row["reported"] == 71.9
    assert "memory" not in calibrate.FIT_FAMILIES


def test_an_accelerator_of_ones_own_has_a_family_and_borrows_the_reference_factor():
    # a device built by hand under a new id is not in the catalog: its family comes from its
    # own vendor field (none: unknown), and a framework on it borrows the reference factor
    h100 = catalog.accelerator("h100-sxm5-80gb")
    mine = replace(h100, id="my-h100")
    assert catalog.accelerator_family(mine) == "NVIDIA"
    assert catalog.framework_factor("torchtitan", mine) == \
        catalog.framework_factor("torchtitan", h100)
    est = traincost.estimate(mine, 8, model="llama2-7b", global_batch=64, tokens=1e9)
    ref = traincost.estimate(h100, 8, model="llama2-7b", global_batch=64, tokens=1e9)
    assert est.tokens_per_s == pytest.approx(ref.tokens_per_s, rel=1e-12)
    anon = replace(h100, id="anon", vendor="")
    assert catalog.framework_factor("torchtitan", anon) == (1.0, "borrowed")
    est = traincost.estimate(anon, 8, model="llama2-7b", global_batch=64, tokens=1e9,
                             framework="torchtitan")
    assert any("on this accelerator (no vendor named)" in c for c in est.caveats)


def test_the_reference_framework_on_another_family_is_its_own_stack():
    # Megatron-Core/NeMo on AMD's MI300X and MI325X (ROCm, RCCL: MLPerf's LoRA logs, v5.0 and
    # v5.1: 4 runs, 2 documents) and Megatron-DeepSpeed on Gaudi 2 (SynapseAI, HCCL: Intel's
    # two page snapshots and three MLPerf logs: 10 runs, 5 documents) do not move the shared
    # constants fitted on NVIDIA's Megatron stack: each is fitted on its own runs alone
    assert catalog.framework_factor("megatron", "h100-sxm5-80gb") == (1.0, "reference")
    for framework, family, accelerator, runs in (("megatron", "AMD", "mi300x", 4),
                                                 ("megatron-deepspeed", "Intel", "gaudi2", 10)):
        factor, status = catalog.framework_factor(framework, accelerator)
        fitted = calibration.FRAMEWORKS[f"{framework} on {family}"]
        assert status == "fitted" and factor == fitted["factor"]
        assert fitted["runs"] == runs
    assert calibration.REFERENCE_FAMILIES == ("NVIDIA",)
    # Megatron-DeepSpeed (DeepSpeed's pipeline engine) is not Megatron-Core: LUMI's five
    # MI250X runs, one document, borrow the reference factor
    lumi = RUNS[RUNS.index.str.startswith("lumi-mi250x-176b-")]
    assert len(lumi) == 5 and (lumi["framework"] == "megatron-deepspeed").all()
    assert catalog.framework_factor("megatron-deepspeed", "mi250x-gcd") == (1.0, "borrowed")
    assert set(lumi["prefit_error_pct"].round(1)) == {-24.3, -24.8, -25.4, -25.2, -30.3}


@pytest.mark.parametrize("vanilla,async_tp,measured", [
    # torchtitan's async-TP page (benchmarks/asyncTP_llama3_h100_2025-06_torchtitan.md):
    # tokens/s per GPU 4,378 -> 4,809.4 (8B, TP 8) and 597.3 -> 652.4 (70B, TP 8); its
    # 2024-12 Table 4: 829 -> 876 (70B Float8)
    ("tt-h100-llama3.1-8b-64-2d-bf16-tp", "tt-h100-llama3.1-8b-64-2d-bf16-asynctp", 4809.4 / 4378),
    ("tt-h100-llama3.1-70b-256-2d-bf16-tp", "tt-h100-llama3.1-70b-256-2d-bf16-asynctp",
     652.4 / 597.3),
    ("tt-h100-llama3.1-70b-256-2d-fp8", "tt-h100-llama3.1-70b-256-2d-fp8-asynctp", 876 / 829),
])
def test_async_tp_gains_what_was_measured(vanilla, async_tp, measured):
    # torchtitan's async TP hides a fitted share (0.32) of the tensor-parallel traffic, not
    # the whole MLP window: the model's gain from it lies within 4 points of each measured
    # gain (5.7-9.9%), where hiding everything gave 25-40%
    from traincost.validate import explain_case
    gain = (explain_case(async_tp)["estimate"].report["tokens_per_s"]
            / explain_case(vanilla)["estimate"].report["tokens_per_s"])
    assert gain == pytest.approx(measured, abs=0.04)
    assert catalog.framework("torchtitan")["tp_overlap_hidden_share"] == 0.32


def test_an_fp8_param_gather_halves_the_zero3_gathers():
    # torchtitan's enable_fsdp_float8_all_gather, Megatron-Core's --fp8-param-gather: the
    # all-gathers carry 1 byte a parameter, not 2
    from traincost.assemble import stack_memory
    from traincost.inputs import Stack
    assert stack_memory(Stack(framework="torchtitan"))["gather_bytes_per_param"] == 2.0
    assert stack_memory(Stack(framework="torchtitan", fp8_param_gather=True))[
        "gather_bytes_per_param"] == 1.0
    from traincost import comm
    assert comm.zero3_gather_time(8e9 * 1.0, 32, 8, 1e11, 0.0) == pytest.approx(
        comm.zero3_gather_time(8e9 * 2.0, 32, 8, 1e11, 0.0) / 2)
    # a run whose gathers are exposed (fp8 GEMMs, short micro-batches, 256 ranks) gets faster
    kw = dict(accelerator="h100-sxm5-80gb", devices=256, model="llama3.1-8b",
              global_batch=256, micro_batch=1, seq_len=2048, tp=1, pp=1, cp=1, zero=3,
              recompute="full", precision="fp8", framework="torchtitan")
    slow = traincost.estimate(**kw).step_breakdown_s()["dp_comm"]
    fast = traincost.estimate(**kw, fp8_param_gather=True).step_breakdown_s()["dp_comm"]
    assert 0 < fast < slow


def test_fp8_param_gather_needs_fp8():
    with pytest.raises(ValueError, match="fp8-param-gather: .* needs precision fp8, not bf16"):
        traincost.estimate("h100-sxm5-80gb", 8, model="llama3.1-8b", global_batch=16,
                           precision="bf16", fp8_param_gather=True)


def test_fp8_weights_and_an_fp8_activation_input_by_hand():
    """--fp8-params holds each weight in 1 byte instead of 2 (NeMo's fp8_params,
    TransformerEngine's fp8_model_init) and gathers it so; --fp8-activation-input keeps
    the MLP activation's input in FP8 (Megatron-Core's activation_func_fp8_input_store).
    Llama 2 7B in fp8 on 64 H100, TP 1, ZeRO-1, one 4,096-token sequence per micro-batch,
    no recompute: the weights' bytes halve, and each of the 32 layers keeps its two
    11,008-wide SwiGLU inputs in 1 byte instead of 2: 32 x 4,096 x 2 x 11,008 bytes less."""
    kw = dict(model="llama2-7b", global_batch=512, tokens=1e11, tp=1, pp=1, cp=1, ep=1,
              vpp=1, zero=1, micro_batch=1, recompute="none", precision="fp8")
    base = traincost.estimate("h100-sxm5-80gb", 64, **kw)
    weights = traincost.estimate("h100-sxm5-80gb", 64, fp8_params=True, **kw)
    assert weights.memory_weights_bytes == base.memory_weights_bytes / 2
    assert weights.memory_activations_bytes == base.memory_activations_bytes
    assert weights.stack.fp8_params and not base.stack.fp8_params
    act = traincost.estimate("h100-sxm5-80gb", 64, fp8_activation_input=True, **kw)
    assert base.memory_activations_bytes - act.memory_activations_bytes == \
        32 * 4096 * 2 * 11008
    assert act.memory_weights_bytes == base.memory_weights_bytes
    assert act.step_time_s == base.step_time_s            # memory only, not time
    for flag in ("fp8_params", "fp8_activation_input"):
        with pytest.raises(ValueError, match=f"{flag.replace('_', '-')}: .* needs precision "
                                             "fp8, not bf16"):
            traincost.estimate("h100-sxm5-80gb", 64, **{**kw, "precision": "bf16"},
                               **{flag: True})


def test_torchtitans_op_policy_gathers_the_sequence_parallel_inputs_again():
    # torchtitan's op-level selective AC saves mm, attention and reduce_scatter_tensor
    # outputs, not all_gather_into_tensor's (its _save_list): the recompute of the matmuls
    # it did not keep gathers their sequence-parallel input again, half an all-reduce per
    # pass, 2 x (2 + 1/2) = 5 all-reduce equivalents a layer against 4 without recompute
    kw = dict(accelerator="h100-sxm5-80gb", devices=8, model="llama3.1-8b", global_batch=8,
              micro_batch=1, seq_len=4096, tp=8, pp=1, cp=1, zero=1, framework="torchtitan",
              overlap="none")
    op = traincost.estimate(recompute="selective", **kw).values["step_tp_comm_s"]
    none = traincost.estimate(recompute="none", **kw).values["step_tp_comm_s"]
    assert op / none == pytest.approx(5 / 4, rel=1e-9)
    meg = dict(kw, framework="megatron")       # Megatron's selective keeps every tensor
    assert traincost.estimate(recompute="selective", **meg).values["step_tp_comm_s"] == \
        pytest.approx(traincost.estimate(recompute="none", **meg).values["step_tp_comm_s"])


def test_a_device_factor_says_it_carries_the_devices_ceiling():
    """TPU v6e has no measured matmul ceiling and fourteen MaxText runs from three
    campaigns: its factor is its own and says so; v5e (one campaign) keeps the TPU
    family's."""
    from traincost import calibration
    kw = dict(devices=256, model="llama3.1-70b", global_batch=1280, framework="maxtext")
    v6e = [c for c in traincost.estimate(accelerator="tpu-v6e", **kw).caveats
           if c.startswith("framework:")]
    assert len(v6e) == 1 and "fitted on its own published runs on tpu-v6e, which has no " \
        "measured matmul ceiling" in v6e[0]
    assert f"{calibration.FRAMEWORKS['maxtext on tpu-v6e']['factor']:.2f}x" in v6e[0]
    v5e = [c for c in traincost.estimate(accelerator="tpu-v5e", **kw).caveats
           if c.startswith("framework:")]
    assert "on tpu-v5e" not in v5e[0]
    assert f"{calibration.FRAMEWORKS['maxtext on Google']['factor']:.2f}x" in v5e[0]


def test_maxtexts_grouped_gemms_visit_whole_tiles():
    # MaxText's dropless MoE runs its experts as megablox gmm/tgmm in tiles of
    # tile_batch_seq = 512 rows (base.yml at 9ca35d7e6 and 3eb77db3c), visiting a tile once
    # per group that starts inside it; stacks that state no tile price plain GEMMs
    from traincost.assemble import stack_memory
    from traincost.inputs import Stack
    assert catalog.framework("maxtext")["grouped_gemm_tile_rows"] == 512
    assert stack_memory(Stack(framework="maxtext"))["grouped_gemm_tile_rows"] == 512.0
    for other in ("megatron", "torchtitan", "unspecified"):
        assert stack_memory(Stack(framework=other))["grouped_gemm_tile_rows"] == 0.0


def test_deepspeeds_pipeline_does_not_interleave():
    # DeepSpeed's PipelineEngine runs TrainSchedule (deepspeed/runtime/pipe/schedule.py):
    # one model chunk a stage, 2 x (micro_batches + stages - 1) steps. BLOOM-176B's layout
    # (tp 4 x pp 12, 8 replicas, 128 micro-batches of 2) left open, the search keeps vpp 1
    # under Megatron-DeepSpeed and may interleave under Megatron-Core; a stated vpp stands
    kw = dict(model="bloom-176b", global_batch=2048, tp=4, pp=12, micro_batch=2, zero=1,
              recompute="full", attention_kernel="materialized")
    ds = traincost.estimate("a100-sxm4-80gb", 384, framework="megatron-deepspeed", **kw)
    assert ds.parallel.vpp == 1
    assert traincost.estimate("a100-sxm4-80gb", 384, framework="megatron", **kw).parallel.vpp > 1
    assert traincost.estimate("a100-sxm4-80gb", 384, framework="megatron-deepspeed", vpp=2,
                              **kw).parallel.vpp == 2
    assert catalog.framework("deepspeed")["vpp"] == 1
