"""Memory formulas against ZeRO (Rajbhandari et al. 2020) and Korthikanti et al. 2022."""

import numpy as np
import traincost
import pytest

from traincost.memory import activation_bytes_per_layer, microbatches_in_flight, model_state_bytes
from traincost.workload import RECOMPUTE_CODES

GB = 1e9


@pytest.mark.parametrize("stage,published_gb", [(0, 120.0), (1, 31.4), (2, 16.6), (3, 1.9)])
def test_zero_paper_figure1_7_5b_on_64_gpus(stage, published_gb):
    # ZeRO (arXiv:1910.02054) Fig. 1: Psi = 7.5B, N_d = 64, K = 12
    s = model_state_bytes(7.5e9, 64, stage, 2, 2, 12)
    assert float(sum(s.values())) / GB == pytest.approx(published_gb, abs=0.05)


def test_zero_stages_never_increase_memory():
    totals = [float(sum(model_state_bytes(1e9, 16, z, 2, 2, 12).values())) for z in range(4)]
    assert totals == sorted(totals, reverse=True)


# Korthikanti et al. (arXiv:2205.05198) Table 2, per layer, 16-bit, f = 4h, MHA
S, B, H, A = 2048, 1, 12288, 96


def korthikanti(t, mode, sp=True):
    if mode == "full":
        return 2 * S * B * H / (t if sp else 1)
    scores = 5 * A * S / H
    if sp:
        return S * B * H * ((34 + (scores if mode == "none" else 0)) / t)
    return S * B * H * (10 + 24 / t + (scores / t if mode == "none" else 0))


@pytest.mark.parametrize("mode", ["none", "selective", "full"])
@pytest.mark.parametrize("t", [1, 8])
def test_activation_bytes_reduce_to_korthikanti_table2(mode, t):
    stored, _ = activation_bytes_per_layer(S, B, H, A, A, H // A, 4 * H, t,
                                           RECOMPUTE_CODES[mode], sequence_parallel=True)
    assert float(stored) == pytest.approx(korthikanti(t, mode), rel=1e-12)


def test_activation_bytes_without_sequence_parallel():
    stored, _ = activation_bytes_per_layer(S, B, H, A, A, H // A, 4 * H, 8,
                                           RECOMPUTE_CODES["none"], sequence_parallel=False)
    assert float(stored) == pytest.approx(korthikanti(8, "none", sp=False), rel=1e-12)


def test_full_set_is_what_no_recompute_stores():
    none, full_none = activation_bytes_per_layer(S, B, H, A, A, 128, 4 * H, 8, 0)
    _, full_full = activation_bytes_per_layer(S, B, H, A, A, 128, 4 * H, 8, 2)
    assert float(none) == float(full_none) == float(full_full)


def test_gqa_stores_less_than_mha():
    mha, _ = activation_bytes_per_layer(S, B, H, A, A, 128, 4 * H, 1, 1)
    gqa, _ = activation_bytes_per_layer(S, B, H, A, 8, 128, 4 * H, 1, 1)
    # K and V are stored at 2 bytes each: GQA saves 4*(a - a_kv)*d bytes per token
    assert float(mha - gqa) == pytest.approx(S * B * 4 * (A - 8) * 128, rel=1e-12)


def test_moe_experts_keep_their_routed_copies_of_the_input():
    # each of the k experts a token is sent to keeps that copy (h wide, 2 bytes) for its
    # first GEMM's weight gradient: Mixtral's k = 2 adds 2 * 2h per token to the layer, a
    # tenth of its MLP's own 2h + h + 6f at f = 3.5h; with SP over t the copies shard too
    gated_mixtral_ffn = 1.5 * 2 * 3.5 * H                      # ffn_eff: (k + shared) * 1.5f
    for t in (1, 4):
        dense, _ = activation_bytes_per_layer(S, B, H, A, 8, 128, gated_mixtral_ffn, t, 1)
        moe, _ = activation_bytes_per_layer(S, B, H, A, 8, 128, gated_mixtral_ffn, t, 1,
                                            expert_inputs=2)
        assert float(moe - dense) == pytest.approx(S * B * 2 * 2 * H / t, rel=1e-12)


def test_pipeline_inflight_microbatches():
    # Korthikanti Sec. 4.2.3: p micro-batches in flight, times 1 + (p-1)/(p*v) interleaved
    assert float(microbatches_in_flight(8, 1, 96)) == 8
    assert float(microbatches_in_flight(8, 2, 96)) == pytest.approx(8 * (1 + 7 / 16))
    assert float(microbatches_in_flight(8, 1, 3)) == 3      # fewer micro-batches than stages
    # never more than the step has: at m = p the first rank runs all its chunks' forwards
    # before its first backward (Megatron-Core's interleaved warm-up is capped at m)
    assert float(microbatches_in_flight(8, 2, 8)) == 8
    assert float(microbatches_in_flight(8, 2, 10)) == 10
    arr = microbatches_in_flight(np.array([1, 4]), 1, 10)
    assert list(arr) == [1, 4]


def test_context_parallel_ranks_share_the_zero_shards():
    # Megatron-Core reduces gradients and shards its distributed optimizer over the data-
    # and context-parallel ranks together (intra_dp_cp_group, megatron/core/optimizer/
    # __init__.py). Llama 3.1 405B, NeMo 25.04's H100 layout: tp 8, pp 8, cp 2, dp 4, vpp 8.
    # The first stage holds ceil(126/64) = 2 layers per chunk, 16 layers, and the embedding:
    h, F, kv_dim, V = 16384, 53248, 8 * 128, 128256
    layer = h * (h + 2 * kv_dim) + h * h + 3 * h * F + 2 * h      # QKV, out, SwiGLU, 2 norms
    on_device = (16 * layer + V * h) / 8                            # over tp 8: 6.64e9
    est = traincost.estimate("h100-sxm5-80gb", 512, model="llama3.1-405b", global_batch=256,
                             seq_len=8192, tp=8, pp=8, cp=2, vpp=8, micro_batch=1, zero=1,
                             recompute="selective", attention_kernel="cudnn")
    gib = est.memory_breakdown_gib()
    assert gib["optimizer"] * 2**30 == pytest.approx(on_device * 12 / (4 * 2), rel=1e-3)
    assert gib["gradients"] * 2**30 == pytest.approx(on_device * 2, rel=1e-3)   # ZeRO-1
    # which makes the run's layout fit in an H100's 80 GB with selective recompute, as it ran
    assert est.to_dict()["fits_in_memory"]


# DeepSeek-V3's FP8 activation recipe, by hand on a toy layer: s 4, b 1, h 8, a = a_kv 2,
# d 4, gated f 12 (ffn_eff 1.5 x 12 = 18), k 2 routed copies, flash (4 B x a per token),
# no recompute, sequence parallel, 16-bit counts (bytes_per_element 2).
# Standard: attention 2h + 2ad + 4 a_kv d + 2ad + h = 16 + 16 + 32 + 16 + 8 = 88; MLP
# 3h + 6f + 2h k = 24 + 72 + 32 = 128; norms 4h = 32: 4 x 248 = 992, + scores 32 = 1024.
# Recipe: attention Q, K, V 48 + E5M6 context 1.5 x ad = 12 + mask 8 = 68; MLP mask 8 +
# FP8 SwiGLU input 2f = 24 + FP8 copies h k = 16 = 48; norms 32: 4 x 148 = 592, + 32 = 624.
TOY = dict(seq_len=4, micro_batch=1, hidden=8, heads=2, kv_heads=2, head_dim=4, ffn_eff=18,
           tp=1, recompute_code=RECOMPUTE_CODES["none"], flash=True, expert_inputs=2)


def test_fp8_activation_recipe_by_hand():
    stored, full = activation_bytes_per_layer(**TOY)
    assert (float(stored), float(full)) == (1024.0, 1024.0)
    stored, _ = activation_bytes_per_layer(**TOY, fp8_cache=True, gated=True)
    assert float(stored) == 624.0
    # MLA: 10 cached bytes replace Q, K and V (48): 4 x (30 + 48 + 32) + 32 = 472
    stored, _ = activation_bytes_per_layer(**TOY, fp8_cache=True, gated=True, mla_cache=10.0)
    assert float(stored) == 472.0
    # a GeLU MLP (f = ffn_eff = 18) keeps its 16-bit GeLU input 2f and FP8 output f: 54;
    # MLP 8 + 54 + 16 = 78: 4 x (68 + 78 + 32) + 32 = 744
    stored, _ = activation_bytes_per_layer(**TOY, fp8_cache=True, gated=False)
    assert float(stored) == 744.0


def test_fp8_activation_recipe_fits_deepseek_v3_as_it_ran():
    # DeepSeek-V3 (arXiv:2412.19437 Secs. 3.2, 3.3.2) trained PP16 x EP64 x ZeRO-1 on 2048
    # H800 with 80 GB each; with its activation recipe the layout fits, without it not
    kw = dict(accelerator="h800-sxm5-80gb", devices=2048, model="deepseek-v3",
              global_batch=15360, seq_len=4096, tp=1, pp=16, ep=64, vpp=2, zero=1,
              micro_batch=1, recompute="selective", precision="fp8", overlap="pp,ep",
              attention_kernel="flash")
    without = traincost.estimate(**kw)
    with_recipe = traincost.estimate(**kw, fp8_activations=True)
    assert not without.report["fits_in_memory"] and with_recipe.report["fits_in_memory"]
    # the recipe changes what is kept, not the weights and optimizer states
    a, b = without.memory_breakdown_gib(), with_recipe.memory_breakdown_gib()
    assert a["weights"] == b["weights"] and a["optimizer"] == b["optimizer"]
    assert b["activations"] < 0.5 * a["activations"]
    # it recomputes the MLA up-projections: the step is not faster
    assert with_recipe.step_time_s > without.step_time_s
    # and it says what it rests on
    assert any(c.startswith("fp8 activations: DeepSeek-V3's memory recipe")
               for c in with_recipe.caveats)
    assert not any(c.startswith("fp8 activations") for c in without.caveats)


def test_fp8_activation_recipe_needs_fp8():
    with pytest.raises(ValueError, match="fp8-activations: .* needs precision fp8, not bf16"):
        traincost.estimate(accelerator="h100-sxm5-80gb", devices=64, model="llama2-7b",
                           global_batch=512, fp8_activations=True)


def test_sweep_takes_the_fp8_activation_recipe_as_a_column():
    import pandas as pd
    from traincost.sweep import sweep
    kw = dict(accelerator="h100-sxm5-80gb", devices=64, model="mixtral-8x7b", global_batch=256,
              tp=2, pp=4, ep=8, vpp=1, zero=1, micro_batch=1, recompute="selective",
              precision="fp8")
    rows = pd.DataFrame([{**kw, "fp8_activations": flag} for flag in (False, True)])
    out = sweep(rows)
    for i, flag in enumerate((False, True)):
        est = traincost.estimate(**kw, fp8_activations=flag)
        assert out["memory_gib_per_device"].iloc[i] == pytest.approx(
            est.report["memory_gib_per_device"], rel=1e-12)
    assert out["memory_gib_per_device"].iloc[1] < out["memory_gib_per_device"].iloc[0]
    with pytest.raises(ValueError, match=r"fp8-activations: .* \(row 1\)"):
        sweep(rows.assign(precision="bf16"))


def test_bf16_adam_state_by_hand():
    # ZeRO (Rajbhandari et al. 2020, Sec. 3.1): fp32 master, momentum and variance are
    # 4 + 4 + 4 = 12 bytes per parameter. NeMo's distributed_fused_adam with dtype bf16 on
    # bf16 weights keeps bf16 momentum and variance and no master copy: 2 + 2 = 4 bytes.
    # The same layout's optimizer memory is therefore 4/12 of the fp32 one; weights,
    # gradients and activations do not change. Its update reads m, v, grad and weight
    # (2 B each) and writes m, v, weight: 14 B against fp32's 30 B (16 read + 14 written)
    kw = dict(accelerator="h100-sxm5-80gb", devices=128, model="nemotron4-340b",
              global_batch=32, tp=8, pp=8, vpp=12, zero=1, micro_batch=1,
              recompute="selective", attention_kernel="flash", overlap="tp,pp,dp")
    fp32 = traincost.estimate(**kw)
    bf16 = traincost.estimate(**kw, optimizer_state="bf16")
    a, b = fp32.memory_breakdown_gib(), bf16.memory_breakdown_gib()
    assert b["optimizer"] == pytest.approx(a["optimizer"] * 4 / 12, rel=1e-12)
    for part in ("weights", "gradients", "activations", "reserved"):
        assert b[part] == a[part]
    assert bf16.report["step_optimizer_s"] == pytest.approx(
        fp32.report["step_optimizer_s"] * 14 / 30, rel=1e-12)
    # ZeRO-1 over dp = 128 / 64 = 2: each device holds half the state of its 1/64 share
    # of the weights, so its bf16 state equals its bf16 weights (4 B / 2 = 2 B per param)
    assert b["optimizer"] == pytest.approx(b["weights"], rel=1e-12)
    # the run fit in 80 GB (dgxc-benchmarking 24.11 table, 4.61 s per step); only the
    # state it stated makes the model agree
    assert bf16.fits_in_memory and not fp32.fits_in_memory
    assert "bf16 Adam state" not in str(fp32.to_dict()["stack"])
    assert fp32.to_dict()["stack"]["optimizer_state"] == "fp32"
    assert bf16.to_dict()["stack"]["optimizer_state"] == "bf16"


def test_optimizer_state_is_checked():
    with pytest.raises(ValueError, match="optimizer-state: 'fp16' is not one of fp32, bf16"):
        traincost.estimate(accelerator="h100-sxm5-80gb", devices=64, model="llama2-7b",
                           global_batch=512, optimizer_state="fp16")


def test_sweep_takes_the_optimizer_state_as_a_column():
    import pandas as pd
    from traincost.sweep import sweep
    kw = dict(accelerator="h100-sxm5-80gb", devices=64, model="llama2-7b", global_batch=512,
              tp=1, pp=1, vpp=1, zero=0, micro_batch=1, recompute="selective")
    out = sweep(pd.DataFrame([{**kw, "optimizer_state": s} for s in ("fp32", "bf16")]))
    for i, state in enumerate(("fp32", "bf16")):
        est = traincost.estimate(**kw, optimizer_state=state)
        assert out["memory_gib_per_device"].iloc[i] == pytest.approx(
            est.report["memory_gib_per_device"], rel=1e-12)
    # no sharding (ZeRO 0): 8 of the 12 bytes of state per parameter are saved, and
    # nothing else moves
    saved = (out["memory_gib_per_device"].iloc[0] - out["memory_gib_per_device"].iloc[1])
    fp32_state = traincost.estimate(**kw).memory_breakdown_gib()["optimizer"]
    assert saved == pytest.approx(fp32_state * 8 / 12, rel=1e-9)


# torchtitan's memory habits (data/frameworks.csv, read in its code at 9dec370): the 'op'
# selective policy, the eager fp32 loss, FSDP2's gathered units. Llama 3.1 8B (h 4096, 32
# layers, 32 heads and 8 KV heads of 128, SwiGLU f 14336, vocabulary 128256) on 8 H100 in
# FSDP, local batch 2 x 8192 tokens: torchtitan's Table 1 run (benchmarks/
# llama3_h100_202412_torchtitan.md), measured at 82.4 GiB reserved
TT = dict(accelerator="h100-sxm5-80gb", devices=8, model="llama3.1-8b", global_batch=16,
          micro_batch=2, seq_len=8192, tp=1, pp=1, cp=1, zero=3, recompute="selective",
          framework="torchtitan")
HID, FFN, VOCAB, TOKENS = 4096, 14336, 128256, 2 * 8192


def test_torchtitan_op_policy_activations_by_hand():
    b = traincost.estimate(**TT).memory_breakdown_gib()
    # per token and layer: input 2h, attention output 2h, Q 2h, V 2 x 1024, gate output
    # 2f, down output 2h (8.5h + 2f = 63,488 B) and the kernel's fp32 log-sum-exp per head
    layer = (8.5 * HID + 2 * FFN + 32 * 4) * TOKENS
    loss = 12 * TOKENS * VOCAB          # eager F.cross_entropy on an fp32 copy
    # outside the blocks (torchtitan 9dec370 models/llama/model.py, RMSNorm upcasts): the
    # final norm keeps its fp32 input copy (4 B) and the 16-bit normalised value its weight
    # multiplies (2 B); the output layer keeps its 16-bit input (2 B)
    head = (4 + 2 + 2) * TOKENS * HID
    assert b["activations"] * 2**30 == pytest.approx(32 * layer + loss + head, rel=1e-12)
    # FSDP's gathered units: the output layer (128256 x 4096, larger than a layer) gathered
    # with the prefetched unit (2 x 2 B) and its 16-bit gradient (2 B)
    assert b["gathered"] * 2**30 == pytest.approx(VOCAB * HID * 6, rel=1e-12)
    # within 15% of the measured reserved peak, below it (the allocator's fragmentation
    # comes on top of what is allocated: GMLake, arXiv:2401.08156)
    total = sum(b.values())
    assert 0.85 * 82.4 < total < 82.4


def test_torchtitan_op_policy_recomputes_k_o_and_up():
    # hardware - model FLOP per token = the recomputed matmuls' forward, 2 x 32 layers x
    # (K: h x 1024 + O: h x h + up: h x f)
    d = traincost.estimate(**TT).to_dict()
    extra = d["hardware_flop_per_token"] - d["model_flop_per_token"]
    assert extra == pytest.approx(2 * 32 * (HID * 1024 + HID * HID + HID * FFN), rel=1e-12)
    # Megatron's selective recomputes only the attention core, which a fused kernel never
    # stored: nothing under flash, and it keeps more activations than the op policy
    meg = traincost.estimate(**{**TT, "framework": "megatron", "attention_kernel": "flash"})
    md = meg.to_dict()
    assert md["hardware_flop_per_token"] - md["model_flop_per_token"] == pytest.approx(
        2 * 32 * 2 * 8192 * 32 * 128, rel=1e-12)      # the core: 2 x L x s x a x (d + d)
    assert meg.memory_breakdown_gib()["activations"] > \
        traincost.estimate(**TT).memory_breakdown_gib()["activations"]
    assert meg.memory_breakdown_gib()["gathered"] == 0.0        # not modelled for Megatron


def test_torchtitan_keeps_a_pipeline_stage_gathered():
    # under a pipeline FSDP2 reshards nothing: the stage's 16-bit weights stay whole and its
    # gradients accumulate unsharded in fp32 (FSDP2's reduce dtype in torchtitan:
    # FSDPParam.to_accumulated_grad_if_needed), 2 + 4 B a parameter of the stage's shard
    # (the sharded weights are 2 B / dp of them)
    kw = dict(TT, devices=16, global_batch=32, pp=2, recompute="full")
    b = traincost.estimate(**kw).memory_breakdown_gib()
    assert b["gathered"] == pytest.approx(b["weights"] * 8 * 3, rel=1e-12)   # dp 8, 2+4 B
    one = traincost.estimate(**{**kw, "pp": 1, "devices": 8, "global_batch": 16})
    assert one.memory_breakdown_gib()["gathered"] * 2**30 == pytest.approx(
        VOCAB * HID * 6, rel=1e-12)
    # with the weights all-gathered in fp8 (torchao's float8 all-gather: the matmul takes
    # the gathered fp8 tensor), the stage's whole weights are 1 B a parameter: 1 + 4 B
    fp8 = traincost.estimate(**kw, precision="fp8", fp8_param_gather=True)
    b8 = fp8.memory_breakdown_gib()
    assert b8["gathered"] == pytest.approx(b8["weights"] * 8 * 5 / 2, rel=1e-12)
    # and without a pipeline, the two units gathered and the gradient: 2 x 1 + 2 B
    one8 = traincost.estimate(**{**kw, "pp": 1, "devices": 8, "global_batch": 16},
                              precision="fp8", fp8_param_gather=True)
    assert one8.memory_breakdown_gib()["gathered"] * 2**30 == pytest.approx(
        VOCAB * HID * 4, rel=1e-12)


def test_a_fused_loss_holds_the_16_bit_logits_and_their_gradient():
    # --fused-loss: 2 + 2 bytes a logit (assumptions.fused_loss_bytes_per_logit) instead of
    # torchtitan's eager 12, 8 bytes x 16,384 tokens x 128,256 logits less; nothing else moves
    eager = traincost.estimate(**TT).memory_breakdown_gib()
    fused = traincost.estimate(**TT, fused_loss=True)
    b = fused.memory_breakdown_gib()
    assert (eager["activations"] - b["activations"]) * 2**30 == pytest.approx(
        8 * TOKENS * VOCAB, rel=1e-12)
    assert {k: v for k, v in b.items() if k != "activations"} == \
        {k: v for k, v in eager.items() if k != "activations"}
    assert fused.to_dict()["stack"]["fused_loss"] is True
    # Megatron's loss already works in place on one fp32 copy (4 B): fusing it moves nothing
    meg = dict(TT, framework="megatron")
    assert traincost.estimate(**meg, fused_loss=True).memory_breakdown_gib() == \
        traincost.estimate(**meg).memory_breakdown_gib()


def test_the_sweep_and_the_cli_take_the_fused_loss(capsys):
    import json
    import pandas as pd
    from traincost import cli
    row = {k: v for k, v in TT.items()}
    out = traincost.sweep(pd.DataFrame([{**row, "fused_loss": f} for f in (False, True)]))
    for i, f in enumerate((False, True)):
        assert out["memory_gib_per_device"].iloc[i] == pytest.approx(
            traincost.estimate(**TT, fused_loss=f).report["memory_gib_per_device"], rel=1e-12)
    args = ["estimate", "--accelerator", "h100-sxm5-80gb", "--devices", "8", "--model",
            "llama3.1-8b", "--global-batch", "16", "--micro-batch", "2", "--tp", "1", "--pp",
            "1", "--zero", "3", "--recompute", "selective", "--framework", "torchtitan",
            "--fused-loss", "--json"]
    assert cli.main(args) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["stack"]["fused_loss"] is True
    assert d["memory_gib_per_device"] == pytest.approx(
        traincost.estimate(**TT, fused_loss=True).report["memory_gib_per_device"], rel=1e-9)
    assert cli.main(args[:-1]) == 0
    assert ", fused loss" in capsys.readouterr().out


def test_torchtitan_loss_parallel_and_head_under_tp_by_hand():
    """torchtitan at TP 8 (Llama 3.1 70B, micro-batch 16 of 8,192 tokens, full recompute):
    its loss_parallel holds 16 B per logit of the vocabulary shard (torch's
    distributed/tensor/parallel/loss.py works on a decomposed fp32 log-softmax: the saved
    log-softmax, the zeros-like gradient, exp(x) and their sum), Megatron's in-place loss 4;
    its final norm keeps 6 B per element of the sequence shard and its output layer the
    all-gathered 16-bit input (2 B per element of the whole b s h), where Megatron keeps 2 B
    per element of the shard for each. Everything else in the activations is the same."""
    common = dict(accelerator="h100-sxm5-80gb", devices=256, model="llama3.1-70b",
                  global_batch=512, micro_batch=16, seq_len=8192, tp=8, pp=1, cp=1, zero=3,
                  recompute="full", attention_kernel="flash")
    tt = traincost.estimate(**common, framework="torchtitan").memory_breakdown_gib()
    meg = traincost.estimate(**common, framework="megatron").memory_breakdown_gib()
    tokens, hidden, t = 16 * 8192, 8192, 8
    loss = (16 - 4) * tokens * VOCAB / t
    head = (6 / t + 2 - (2 / t + 2 / t)) * tokens * hidden
    assert (tt["activations"] - meg["activations"]) * 2**30 == pytest.approx(
        loss + head, rel=1e-12)
    # the reported peak of this run (torchtitan Table 4, 2D, Float8: 71.9 GiB reserved) is
    # above the total: the allocator's reserve comes on top (GMLake, arXiv:2401.08156)
    assert sum(tt.values()) < 71.9


def test_op_selective_recompute_says_what_it_costs():
    # the caveat names the policy and its FLOP by hand: 2 x 32 x (h x 1024 + h x h + h x f)
    # over the model FLOP per token
    est = traincost.estimate(**TT)
    d = est.to_dict()
    extra = 2 * 32 * (HID * 1024 + HID * HID + HID * FFN) / d["model_flop_per_token"]
    note = [c for c in est.caveats if c.startswith("selective recompute in torchtitan")]
    assert len(note) == 1 and f"{extra:.1%} more FLOP" in note[0]
    assert not any(c.startswith("selective recompute in") for c in
                   traincost.estimate(**{**TT, "framework": "megatron"}).caveats)
    assert not any(c.startswith("selective recompute in") for c in
                   traincost.estimate(**{**TT, "recompute": "full"}).caveats)


def test_maxtexts_minimal_policy_keeps_the_weight_matmuls_outputs():
    # Llama 2 7B's layer (h 4096, 32 heads of 128 with as many KV heads, SwiGLU f 11,008),
    # one token, no tensor parallelism, 16-bit: MaxText's 'minimal' keeps the layer input
    # 2h, Q 2ad, K and V 4 a_kv d, the attention output projection 2h, the gate and up 4f
    # and the down projection 2h: 93,184 bytes; Megatron's selective (Korthikanti et al.
    # Sec. 4.1 with a gated MLP's three f-wide tensors) 10h + 8ad + 6f = 139,776
    from traincost import memory
    h, a, d, f = 4096, 32, 128, 11008
    args = (1, 1, h, a, a, d, 1.5 * f, 1, 1, True, 2.0, True, False, 4.0, 0.0, False, True,
            np.nan)
    dots = memory.activation_bytes_per_layer(*args, memory.SELECTIVE_POLICIES["matmul-outputs"])
    meg = memory.activation_bytes_per_layer(*args, memory.SELECTIVE_POLICIES["attention-core"])
    assert dots[0] == 2 * h + 2 * a * d + 4 * a * d + 2 * h + 4 * f + 2 * h == 93184
    assert meg[0] == 10 * h + 8 * a * d + 6 * f == 139776
    assert dots[1] == meg[1]                       # the backward's full set is the same
    # the framework that runs it: MaxText's selective recompute is this policy
    from traincost.assemble import build_stack, stack_memory
    assert stack_memory(build_stack(framework="maxtext"))["selective_policy"] == \
        memory.SELECTIVE_POLICIES["matmul-outputs"]
