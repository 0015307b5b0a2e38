"""The software stack of a run: fused (flash) attention, the parallel block, overlapped
communication. Expected values are derived by hand from the cited papers' accounting, not
read from the code's output.

References: Korthikanti et al. 2022 (arXiv:2205.05198) Sec. 4.1 (activation bytes);
Dao 2023, FlashAttention-2 (arXiv:2307.08691) Algorithm 1-2; Jiang et al. 2024, MegaScale
(arXiv:2402.15627) Sec. 3.1-3.2.
"""

import math
import sys
from dataclasses import replace

import pytest

import traincost
from traincost import catalog
from traincost.assumptions import DEFAULT
from traincost.cli import main
from traincost.inputs import Job, Stack, Workload, parse_overlap
from traincost.memory import activation_bytes_per_layer
from traincost.workload import RECOMPUTE_CODES

S, B, H, A, D, T = 2048, 1, 12288, 96, 128, 8          # GPT-3 175B shapes, tp 8
SBH = S * B * H


def _act(recompute="none", **kw):
    return activation_bytes_per_layer(S, B, H, A, A, D, 4 * H, T, RECOMPUTE_CODES[recompute],
                                      True, 2.0, **kw)


def test_flash_keeps_the_log_sum_exp_instead_of_the_scores():
    # Korthikanti Eq. 4: sbh(34 + 5as/h)/t with SP; a fused kernel keeps 4 bytes (fp32 LSE)
    # per query and head instead of the 5as^2b softmax block
    stored, _ = _act()
    assert float(stored) == SBH * (34 + 5 * A * S / H) / T                  # 358,612,992
    stored, full = _act(flash=True)
    assert float(stored) == float(full) == 34 * SBH / T + 4 * A * S * B / T   # 107,053,056


def test_flash_makes_selective_recompute_store_the_same_as_none():
    assert float(_act("selective", flash=True)[0]) == pytest.approx(34 * SBH / T)
    assert float(_act("none", flash=True)[0]) - float(_act("selective", flash=True)[0]) \
        == 4 * A * S * B / T


def test_parallel_block_shares_one_norm_input_and_mask():
    # one norm input (2sbh), one shared normalised input (2sbh), one output mask (sbh) fewer
    assert float(_act(flash=True)[0]) - float(_act(flash=True, parallel_block=True)[0]) \
        == 5 * SBH / T


def test_stack_rejects_unknown_values_naming_the_field():
    with pytest.raises(ValueError, match="attention-kernel: 'fast'"):
        Stack(attention_kernel="fast")
    with pytest.raises(ValueError, match="optimizer-state: 'fp64'"):
        Stack(optimizer_state="fp64")
    with pytest.raises(ValueError, match="overlap: 'tp,cp' names 'cp'"):
        parse_overlap("tp,cp")
    assert parse_overlap("ep,pp") == {"ep", "pp"}       # DeepSeek-V3's DualPipe overlaps both
    assert parse_overlap("none") == frozenset() and parse_overlap(" dp,tp ") == {"tp", "dp"}


# ---- step time --------------------------------------------------------------------------
A100 = catalog.accelerator("a100-sxm4-80gb")
GPT3 = catalog.model("gpt3-175b")
GPT3_JOB = catalog.job("gpt3-175b", global_batch=256)


def _est(stack=Stack(), acc=A100, assumptions=DEFAULT, **layout):
    knobs = dict(tp=8, pp=8, vpp=1, cp=1, ep=1, zero=1, micro_batch=1, recompute="none")
    knobs.update(layout)
    return traincost.estimate(acc, 256, workload=GPT3, job=GPT3_JOB, stack=stack,
                              assumptions=assumptions, **knobs)


def test_parallel_block_halves_tensor_parallel_communication():
    # MegaScale Sec. 3.1/Fig. 3a: attention and MLP outputs are summed before one all-reduce
    # per pass: 1 + 1 instead of 2 + 2 (and 1 instead of 2 for a full recompute)
    for rc in ("none", "full"):
        base = _est(recompute=rc).report["step_tp_comm_s"]
        ptb = _est(Stack(parallel_block=True), recompute=rc).report["step_tp_comm_s"]
        assert ptb == pytest.approx(base / 2, rel=1e-12)


def test_tp_overlap_hides_exactly_the_mlp_gemm_window_when_comm_bound():
    # with a slow scale-up link the all-reduces outlast the GEMMs they overlap, so the
    # saving is the whole window: the MLP's two GEMMs, forward and backward (3x forward)
    slow = replace(A100, scaleup_bytes_per_s=1e9)
    a = replace(DEFAULT, overlap_compute_slowdown=0.0)     # test_hidden_comm_... prices it
    plain = _est(acc=slow, assumptions=a).report
    overlapped = _est(Stack(overlap="tp"), acc=slow, assumptions=a).report
    rate = A100.mamf_bf16_flop_per_s * DEFAULT.in_model_matmul_fraction
    mlp_fwd = 2 * (2.0 * S * B * H * (4 * H / T)) / rate                   # up and down GEMMs
    layers_per_stage, microbatches = 96 / 8, 256 / (256 // 64)
    saved = plain["step_tp_comm_s"] - overlapped["step_tp_comm_s"]
    assert saved == pytest.approx(microbatches * layers_per_stage * 3 * mlp_fwd, rel=1e-9)
    assert overlapped["step_tp_comm_s"] > 0


def test_dp_overlap_leaves_one_chunk_of_gradient_traffic():
    # MegaScale Sec. 3.2: reduce-scatter per model chunk after its backward; 1/(2v) exposed.
    # With no overlap credited to the plain stack, its exposed traffic is the whole step's.
    a = replace(DEFAULT, dp_overlap_fraction=0.0, overlap_compute_slowdown=0.0)
    plain = _est(assumptions=a, vpp=2).report["step_dp_comm_s"]
    overlapped = _est(Stack(overlap="dp"), assumptions=a, vpp=2).report["step_dp_comm_s"]
    assert overlapped == pytest.approx(plain / (2 * 2), rel=1e-12)


def test_pp_overlap_hides_sends_behind_compute():
    a = replace(DEFAULT, overlap_compute_slowdown=0.0)
    assert _est(assumptions=a).report["step_pp_comm_s"] > 0
    assert _est(Stack(overlap="pp"), assumptions=a).report["step_pp_comm_s"] == 0.0


@pytest.mark.parametrize("overlap,part", [("pp", "step_pp_comm_s"), ("dp", "step_dp_comm_s")])
def test_hidden_comm_costs_what_it_slows_the_compute_by(overlap, part):
    # compute runs 1 + s times slower beside a collective (Lee et al. 2025, arXiv:2507.03114:
    # 18.9% on average): a fully hidden exchange of t costs t s/(1 + s). s = 0.25 gives
    # 0.2 t. Pipeline sends hide whole behind a micro-batch's compute; the gradient
    # reduction of an overlapping stack leaves 1/(2v) of itself exposed (MegaScale Sec. 3.2)
    # and hides the rest.
    none = replace(DEFAULT, overlap_compute_slowdown=0.0, dp_overlap_fraction=0.0)
    raw = _est(assumptions=none, vpp=2).report[part]              # nothing hidden
    hidden = replace(none, overlap_compute_slowdown=0.25)
    got = _est(Stack(overlap=overlap), assumptions=hidden, vpp=2).report[part]
    exposed = 0.0 if overlap == "pp" else raw / 4
    assert got == pytest.approx(exposed + 0.2 * (raw - exposed), rel=1e-9)
    assert _est(assumptions=hidden, vpp=2).report[part] == pytest.approx(raw, rel=1e-12)


@pytest.mark.parametrize("measured", [True, False])
def test_flash_core_does_seven_quarters_of_the_unfused_work(measured):
    # unfused core: forward 1 + backward 2 = 3 units at the matmul rate; fused causal: half
    # the square, and a backward of 2.5x its forward: 0.5 * (1 + 2.5) = 1.75 units
    # (FlashAttention-2 Alg. 2) at the device's measured FlashAttention-2 rate, or where
    # none is known at the measured devices' median share of the matmul ceiling, MAMF
    # (assumptions.unmeasured_attention_matmul_fraction). Element-wise traffic off: the
    # difference is exact.
    # The A100 rate, 189 TFLOP/s, is FlashAttention-2's at 16k causal (Dao 2023 Fig. 4d),
    # 8192 keys per query row; at s = 4096 a row sees 2048: x (L/(L+L0)) / (8192/(8192+L0)).
    a = replace(DEFAULT, elementwise_traffic_factor=0.0)
    acc = A100 if measured else replace(A100, attention_bf16_flop_per_s=float("nan"))
    wl = Workload(layers=4, hidden=1024, heads=16, vocab=32000)
    kw = dict(tp=1, pp=1, vpp=1, cp=1, ep=1, zero=1, micro_batch=1, recompute="none")
    run = {k: traincost.estimate(acc, 8, workload=wl, job=Job(4096, 8), attention_kernel=k,
                                 assumptions=a, **kw).report["step_compute_s"]
           for k in ("materialized", "flash")}
    matmul_rate = A100.mamf_bf16_flop_per_s * a.in_model_matmul_fraction
    L0 = a.attention_half_rate_kv_tokens
    flash_rate = 189e12 * (2048 / (2048 + L0)) / (8192 / (8192 + L0)) if measured \
        else A100.mamf_bf16_flop_per_s * a.unmeasured_attention_matmul_fraction
    # an isolated kernel's rate, in a training step at the share the GEMMs keep of theirs
    flash_rate *= a.in_model_matmul_fraction
    flop = 2.0 * 4096 * 4096 * 16 * (64 + 64)                    # Q K^T and P V, 1 layer
    expected = 4 * (3 * flop / matmul_rate - 1.75 * flop / flash_rate)
    assert run["materialized"] - run["flash"] == pytest.approx(expected, rel=1e-9)


def test_cudnn_core_runs_at_transformer_engines_measured_rate():
    # NVIDIA TransformerEngine docs/examples/attention/attention.ipynb (commit 0f60e599),
    # H100 80GB HBM3, test_3 = b 2, 32 heads, d 128, s 8192, causal, bf16: cuDNN forward +
    # backward 7.4875 ms. A fused causal kernel executes half the square, forward (QK^T, PV)
    # and a backward of 2.5x: 0.5 * 4*b*h*s^2*d * 3.5 FLOP in that time; flash-attn took
    # 11.8879 ms. Same layers, same work, and the benchmark's own s (4096 keys per query
    # row), so no size scaling: the compute gap is 1.75 units of the full-square forward
    # at each rate, per layer.
    cudnn_rate = 0.5 * 4 * 2 * 32 * 8192**2 * 128 * 3.5 / 7.4875e-3       # 514.0 TFLOP/s
    flash_rate = 0.5 * 4 * 2 * 32 * 8192**2 * 128 * 3.5 / 11.8879e-3      # 323.7 TFLOP/s
    h100 = catalog.accelerator("h100-sxm5-80gb")
    assert h100.attention_flop_per_s("cudnn") == pytest.approx(cudnn_rate, rel=1e-4)
    assert h100.attention_flop_per_s("flash") == pytest.approx(flash_rate, rel=1e-4)
    a = replace(DEFAULT, elementwise_traffic_factor=0.0)
    wl = Workload(layers=4, hidden=4096, heads=32, kv_heads=8, vocab=32000)
    kw = dict(tp=1, pp=1, vpp=1, cp=1, ep=1, zero=1, micro_batch=1, recompute="none")
    est = {k: traincost.estimate(h100, 8, workload=wl, job=Job(8192, 8), attention_kernel=k,
                                 assumptions=a, **kw) for k in ("flash", "cudnn")}
    flop = 2.0 * 8192 * 8192 * 32 * (128 + 128)                  # Q K^T and P V, 1 layer
    # both isolated rates, in a training step at the in-model share the GEMMs keep
    expected = 4 * 1.75 * flop * (1 / flash_rate - 1 / cudnn_rate) / a.in_model_matmul_fraction
    gap = est["flash"].report["step_compute_s"] - est["cudnn"].report["step_compute_s"]
    assert gap == pytest.approx(expected, rel=2e-4)
    # the same algorithm: the same stored activations, and a measured rate, so no caveat
    assert est["flash"].report["memory_gib_per_device"] == \
        est["cudnn"].report["memory_gib_per_device"]
    assert not any("cudnn" in c for c in est["cudnn"].caveats)


@pytest.mark.parametrize("seq, cp", [(8192, 1), (2048, 1), (16384, 1), (16384, 2)])
def test_fused_attention_rate_scales_with_the_keys_each_call_sees(seq, cp):
    # both H100 rates were measured at s 8192 causal, 4096 keys per query row
    # (TransformerEngine attention.ipynb test_3); a call over L keys per row runs at
    # x (L/(L+L0)) / (4096/(4096+L0)) (FlashAttention-2 Fig. 4, see test_performance).
    # A context-parallel rank's call spans s/cp of the sequence: s 16384 on cp 2 is the
    # benchmark's size again. The flash - cuDNN compute gap is 4 layers x 1.75 x this
    # rank's full-square forward FLOP x (1/r_flash - 1/r_cudnn) per micro-batch, both rates
    # scaled alike.
    L0 = DEFAULT.attention_half_rate_kv_tokens
    L = seq / 2 / cp
    scale = (L / (L + L0)) / (4096 / (4096 + L0))
    benchmark_flop = 0.5 * 4 * 2 * 32 * 8192**2 * 128 * 3.5
    cudnn_rate, flash_rate = (scale * benchmark_flop / ms for ms in (7.4875e-3, 11.8879e-3))
    h100 = catalog.accelerator("h100-sxm5-80gb")
    a = replace(DEFAULT, elementwise_traffic_factor=0.0)
    wl = Workload(layers=4, hidden=4096, heads=32, kv_heads=8, vocab=32000)
    kw = dict(tp=1, pp=1, vpp=1, cp=cp, ep=1, zero=1, micro_batch=1, recompute="none")
    est = {k: traincost.estimate(h100, 8, workload=wl, job=Job(seq, 8), attention_kernel=k,
                                 assumptions=a, **kw).report for k in ("flash", "cudnn")}
    flop = 2.0 * (seq / cp) * seq * 32 * (128 + 128)              # this rank's queries
    microbatches = 8 / (8 / cp)                                    # batch 8 over dp = 8/cp
    expected = microbatches * 4 * 1.75 * flop * (1 / flash_rate - 1 / cudnn_rate) \
        / a.in_model_matmul_fraction                               # in a step, as the GEMMs
    assert est["flash"]["step_compute_s"] - est["cudnn"]["step_compute_s"] == \
        pytest.approx(expected, rel=2e-4)


def test_cudnn_without_a_measurement_uses_the_flash_rate_and_says_so():
    # no cuDNN measurement for the A100 (TransformerEngine finds flash-attn faster on Ampere)
    assert A100.attention_flop_per_s("cudnn") == A100.attention_flop_per_s("flash") \
        == pytest.approx(189e12)                    # FlashAttention-2 Fig. 4d, 16k causal
    assert A100.measured_attention("flash") and not A100.measured_attention("cudnn")
    assert not A100.measured_attention("materialized")
    assert math.isnan(A100.attention_flop_per_s("materialized"))
    est = {k: _est(Stack(attention_kernel=k)) for k in ("flash", "cudnn")}
    assert est["cudnn"].report["step_time_s"] == est["flash"].report["step_time_s"]
    assert any("no cuDNN fused-attention measurement for a100-sxm4-80gb" in c
               for c in est["cudnn"].caveats)
    assert not any("cudnn" in c for c in est["flash"].caveats)


def test_unmeasured_matmul_ceiling_comes_from_the_assumptions_and_is_flagged():
    # H100 PCIe has no measured MAMF: its GEMMs run at default_mamf_fraction x peak, so halving
    # that share doubles a compute-bound step's GEMM time (element-wise traffic off, the
    # materialized softmax at the matmul rate: every compute term is a GEMM); the A100,
    # measured (stas00 MAMF 271.2 TFLOP/s), ignores the default
    wl = Workload(layers=4, hidden=8192, heads=64, vocab=32000)
    kw = dict(tp=1, pp=1, vpp=1, cp=1, ep=1, zero=1, micro_batch=1, recompute="none",
              job=Job(4096, 8), attention_kernel="materialized")
    base = replace(DEFAULT, elementwise_traffic_factor=0.0)
    half = replace(base, default_mamf_fraction=base.default_mamf_fraction / 2)
    pcie = [traincost.estimate("h100-pcie-80gb", 8, workload=wl, assumptions=a, **kw)
            for a in (base, half)]
    assert pcie[1].report["step_compute_s"] == pytest.approx(
        2 * pcie[0].report["step_compute_s"], rel=1e-9)
    a100 = [traincost.estimate("a100-sxm4-80gb", 8, workload=wl, assumptions=a, **kw)
            for a in (base, half)]
    assert a100[1].report["step_compute_s"] == a100[0].report["step_compute_s"]
    # the caveat gives the catalog's measured span: MI300X 668.4/1307.4 (51%) to Gaudi 2
    # 418.7/432 (97%), stas00/ml-engineering MAMF v2 tables
    assert catalog.measured_mamf_span() == pytest.approx((668.4 / 1307.4, 418.7 / 432))
    assert any("no measured matmul ceiling (MAMF) for h100-pcie-80gb: 80% of its peak is "
               "assumed" in c and "51%-97%" in c for c in pcie[0].caveats)
    assert not any("MAMF" in c for c in a100[0].caveats)


def test_flash_makes_selective_recompute_free():
    st = Stack(attention_kernel="flash")
    assert _est(st, recompute="selective").report["step_time_s"] == \
        _est(st, recompute="none").report["step_time_s"]


def test_balanced_pipeline_split_frees_the_first_stage():
    # Korthikanti Sec. 4.2.3: with 1F1B the first stage holds m' = min(m, p) micro-batches
    # of its layers and, interleaved, m'(p-1)/p more of its first chunk's. L = 126, p = 16,
    # v = 2, m = 32: plain, 8 layers/stage, 4/chunk: 8*16 + 15*4 = 188 layer-micro-batches;
    # balanced (embedding and loss count as layers: 128 units), the first stage has 7 layers
    # and its first chunk 3: 7*16 + 15*3 = 157
    knobs = dict(tp=8, pp=16, vpp=2, cp=1, ep=1, zero=2, micro_batch=1, recompute="none",
                 model="llama3.1-405b", seq_len=8192, global_batch=2048)
    est = {b: traincost.estimate("h100-sxm5-80gb", 8192, **knobs, attention_kernel="flash",
                                 balanced_pipeline=b).report
           for b in (False, True)}
    assert est[True]["memory_activations_gib"] / est[False]["memory_activations_gib"] \
        == pytest.approx(157 / 188, rel=1e-12)


def test_balanced_pipeline_allows_a_chunk_per_layer_plus_embedding_and_loss():
    knobs = dict(tp=8, pp=16, cp=1, ep=1, zero=2, micro_batch=1, recompute="none",
                 model="llama3.1-405b", seq_len=8192, global_batch=2048)
    traincost.estimate("h100-sxm5-80gb", 8192, vpp=8, balanced_pipeline=True,
                       **knobs)                                          # 128 <= 128
    with pytest.raises(ValueError, match="--vpp 8"):
        traincost.estimate("h100-sxm5-80gb", 8192, vpp=8, **knobs)      # 128 > 126


# ---- CLI ----------------------------------------------------------------------------------
BASE = ["estimate", "--accelerator", "a100-sxm4-80gb", "--devices", "256", "--model",
        "megascale-175b", "--global-batch", "768", "--tp", "8", "--pp", "8", "--vpp", "6"]


def test_cli_stack_flags_reach_the_estimate(capsys):
    import json
    assert main(BASE + ["--parallel-block", "--overlap", "dp,tp", "--attention-kernel",
                        "materialized", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["stack"] == {"attention_kernel": "materialized", "parallel_block": True,
                          "overlap": ["tp", "dp"], "balanced_pipeline": False,
                          "fp8_activations": False, "optimizer_state": "fp32",
                          "framework": "unspecified", "lora": False, "sync_every": 1,
                          "fused_loss": False, "elementwise": "fused",
                          "fp8_param_gather": False,
                          "fp8_params": False, "fp8_activation_input": False,
                          "recompute_fraction": 1.0, "shard_group": 0, "expert_tp": 0,
                          "attention_kernel_used": "materialized"}


def test_cli_optimizer_state_flag(capsys):
    import json
    assert main(BASE + ["--optimizer-state", "bf16", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["stack"]["optimizer_state"] == "bf16"
    assert main(BASE + ["--optimizer-state", "bf16"]) == 0
    assert ", bf16 Adam state" in capsys.readouterr().out


def test_cli_fp8_activations_flag(capsys):
    import json
    h100 = [*BASE[:2], "h100-sxm5-80gb", *BASE[3:]]
    assert main(h100 + ["--precision", "fp8", "--fp8-activations", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["stack"]["fp8_activations"] is True
    assert main(h100 + ["--precision", "fp8", "--fp8-activations"]) == 0
    assert ", FP8 activation cache" in capsys.readouterr().out
    with pytest.raises(SystemExit) as exc:                  # bf16: the recipe does not apply
        sys.exit(main(h100 + ["--fp8-activations"]))
    err = capsys.readouterr().err.strip()
    assert exc.value.code == 2 and err.count("\n") == 0 and "fp8-activations" in err


def test_cli_auto_kernel_names_the_one_it_runs(capsys):
    # auto: the faster measured fused kernel, as TransformerEngine picks it. A100 has only
    # FlashAttention-2 measured (189 TFLOP/s); H100 cuDNN's 514.0 beside flash's 323.7
    import json
    for accelerator, used in (("a100-sxm4-80gb", "flash"), ("h100-sxm5-80gb", "cudnn")):
        argv = [*BASE[:2], accelerator, *BASE[3:]]
        assert main(argv + ["--json"]) == 0
        stack = json.loads(capsys.readouterr().out)["stack"]
        assert stack["attention_kernel"] == "auto" and stack["attention_kernel_used"] == used
        assert main(argv) == 0
        assert f"stack       {used} (auto) attention" in capsys.readouterr().out


def test_cli_takes_the_cudnn_kernel(capsys):
    import json
    assert main(BASE + ["--attention-kernel", "cudnn", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["stack"]["attention_kernel"] == "cudnn"
    assert any("no cuDNN fused-attention measurement" in c for c in d["caveats"])


@pytest.mark.parametrize("flags,field", [(["--overlap", "tp,cp"], "overlap"),
                                         (["--attention-kernel", "fast"], "attention-kernel"),
                                         (["--optimizer-state", "fp16"], "optimizer-state")])
def test_cli_bad_stack_value_exits_2_naming_the_flag(flags, field, capsys):
    with pytest.raises(SystemExit) as exc:
        sys.exit(main(BASE + flags))
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip()
    assert field in err and len(err.splitlines()) == 1


@pytest.mark.parametrize("recompute,units", [("none", 3), ("full", 4)])
def test_gradient_reduction_hides_behind_the_backward_passes_share(recompute, units):
    # a micro-batch is 1 forward + 2 backward units (+1 recomputed forward): the gradient
    # reduction overlaps the last micro-batch's backward, 2/units of its compute, times
    # dp_overlap_fraction (small here, so the reduction stays longer than the window)
    f = 1e-3
    a = replace(DEFAULT, overlap_compute_slowdown=0.0)
    base = _est(assumptions=replace(a, dp_overlap_fraction=0.0), recompute=recompute).report
    hidden = _est(assumptions=replace(a, dp_overlap_fraction=f), recompute=recompute).report
    microbatches = 256 / (256 // 64)
    window = 2 / units * base["step_compute_s"] / microbatches
    assert base["step_dp_comm_s"] - hidden["step_dp_comm_s"] == pytest.approx(f * window, rel=1e-9)


@pytest.mark.parametrize("acc_id", [a for a in traincost.catalog.accelerators().index
                                    if traincost.catalog.accelerator(a).peak_fp8_flop_per_s
                                    == traincost.catalog.accelerator(a).peak_fp8_flop_per_s])
def test_fp8_is_never_slower_than_bf16(acc_id):
    """Every device with an fp8 peak: the same layout in fp8 takes no longer than in bf16.
    Where the fp8 peak equals the bf16 peak (TPU v5p and v6e, Gaudi 3) the fitted fp8 share
    of H100's faster units no longer slows the GEMMs down (issue 25), the estimate says so,
    and its utilisation is compared with the 16-bit record."""
    kw = dict(accelerator=acc_id, devices=64, model="llama2-7b", global_batch=512, tp=1, pp=1,
              zero=1, micro_batch=1, recompute="selective")
    bf16, fp8 = (traincost.estimate(**kw, precision=p) for p in ("bf16", "fp8"))
    assert fp8.step_time_s <= bf16.step_time_s
    acc = traincost.catalog.accelerator(acc_id)
    if not acc.fp8_units:
        assert any(c.startswith(f"fp8 on {acc_id}: its fp8 peak is no higher") for c in
                   fp8.caveats)
        assert not any("fitted on NVIDIA's H100 NeMo" in c for c in fp8.caveats)
        assert not any("highest any measured published fp8 run" in c for c in fp8.caveats)
