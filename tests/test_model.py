"""The orchestrator's wiring (traincost.model): stages in, contract columns out.

The formulas each stage calls are tested in their own modules (test_memory, test_comm,
test_performance, doctests); here a toy configuration small enough to add up by hand checks
that ``evaluate`` passes the right quantities between them, and identities check that the
outputs are assembled from the stages' parts.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from traincost import model
from traincost.assumptions import DEFAULT
from traincost.assemble import columns, job_inputs, system

A = DEFAULT


def toy(**over) -> dict:
    """One device, one layer: h 4, one head of 4, MLP 8 (not gated), vocabulary 16, two
    tokens, no pipeline; matmuls at 1 FLOP/s of peak and memory without a bandwidth limit,
    so every time is a FLOP count over the achieved rate."""
    c = {k: 0 for k in model.INPUT_COLUMNS}
    c.update(
        peak_flop_per_s=1.0, mamf_fraction=1.0, core_peak_flop_per_s=1.0, core_mamf_fraction=1.0,
        fp8=False, attention_flop_per_s=np.nan,
        attention_kv_tokens=np.nan, attention_rate_share=1.0, framework_matmul_factor=1.0, mamf_measured=True,
        model_error_factor=1.0,
        hbm_bytes=1e12, hbm_bytes_per_s=np.inf, tdp_w=400.0,
        idle_w=100.0, power_cap_w=400.0, scaleup_domain_devices=8, scaleup_bytes_per_s=1e11,
        scaleout_bytes_per_s=1e10, price_usd_per_h=2.0, capex_usd=np.nan, embodied_kgco2e=0.0,
        bytes_per_element=2.0, layers=1, hidden=4, heads=1, kv_heads=1, head_dim=4,
        ffn_hidden=8, gated_mlp=False, vocab=16, seq_len=2, tied_embeddings=False,
        learned_positions=False, moe_ffn_hidden=8, mla=False, global_batch=1, tokens=2e6,
        flash_attention=False, parallel_block=False, tp_overlap=False, pp_overlap=False,
        dp_overlap=False, ep_overlap=False, balanced_pipeline=False, fp8_activations=False,
        optimizer_bf16=False, devices=1, tp=1, pp=1, cp=1, ep=1, vpp=1, zero=0, micro_batch=1,
        recompute=0, pue=1.5, grid_gco2e_per_kwh=400.0, is_rental=True,
        electricity_usd_per_kwh=0.1, scaleout_oversubscription=1.0, scaleup_efficiency_ratio=1.0,
        sites=1,
        site_link_bytes_per_s=np.nan, site_link_latency_s=0.0, sync_every=1,
        selective_policy=0, loss_bytes_per_logit=4.0, zero3_gathered_units=0,
        pp_keeps_gathered=False, tp_overlap_hidden_share=np.nan, grouped_gemm_tile_rows=0.0,
        gather_bytes_per_param=2.0,
        grad_reduce_bytes_per_param=2.0, weight_bytes_per_param=A.weight_bytes_per_param,
        fp8_activation_input=False, recompute_fraction=1.0,
        # the assumptions' interruptions; no start date: the grid's annual figure
        interruption_rate_per_device_s=np.nan, interruption_lost_s=np.nan,
        start_month=np.nan, **{f"grid_month_{m:02d}": 1.0 for m in range(1, 13)})
    c.update(over)
    return c


def test_toy_step_by_hand():
    """Per micro-batch (FLOP): attention projections 2 x 2 tokens x 4 x 16 = 256 (Q, K, V,
    O: 64 weights), MLP 2 x (2 x 4 x 8) x 2 = 256, attention core 2 x 2 x 2 x (4 + 4) = 64;
    forward 576, training 3 x 576 = 1728; output layer 3 x (2 x 2 x 4 x 16) = 768. The step
    is 2496 FLOP at the achieved rate plus the expected straggler wait on the forward."""
    out = model.evaluate(toy())
    rate = A.in_model_matmul_fraction          # peak 1 x MAMF 1 x in-model share x clock 1
    assert out["step_compute_s"] == pytest.approx(2496 / rate, rel=1e-12)
    straggler = A.straggler_forward_slowdown * A.straggler_device_fraction * 576 / rate
    assert out["step_stragglers_s"] == pytest.approx(straggler, rel=1e-12)
    for part in ("tp_comm", "cp_comm", "ep_comm", "pp_comm", "bubble", "dp_comm", "optimizer"):
        assert out[f"step_{part}_s"] == 0.0, part    # one device, unbounded bandwidth
    assert out["step_time_s"] == pytest.approx(2496 / rate + straggler, rel=1e-12)
    # GPT-style parameters: the layer's attention 64 + biases 4 + 8 + 4, two LayerNorms
    # 2 x 8, MLP 64 + biases 8 + 4 (172); embedding 16 x 4, output 16 x 4, final norm 8
    assert out["params"] == 172 + 64 + 64 + 8
    # the first stage holds the layer, the embedding and (no pipeline) the output layer
    assert out["memory_weights_bytes"] == 300 * A.weight_bytes_per_param
    assert out["memory_optimizer_bytes"] == 300 * A.optimizer_bytes_per_param


def test_toy_footprint_by_hand():
    """Throughput, power and energy from the step: busy share compute / step (the
    optimizer step is free here), device draw idle + range x activity, host share of TDP,
    wall clock tokens / throughput / goodput."""
    out = model.evaluate(toy())
    step = out["step_time_s"]
    assert out["tokens_per_s"] == pytest.approx(2 / step)
    busy = out["step_compute_s"] / step
    chip = 100 + 300 * (busy * A.compute_power_fraction + (1 - busy) * A.wait_power_fraction)
    assert out["device_power_w"] == pytest.approx(chip)
    assert out["avg_power_w_per_device"] == pytest.approx(chip + 400 * A.host_power_fraction_of_tdp)
    goodput = min(A.operations_goodput_fraction,
                  1 / (1 + A.interruption_rate_per_device_s * A.interruption_lost_s))
    wall = 2e6 / (2 / step) / goodput
    assert out["train_time_s"] == pytest.approx(wall)
    assert out["it_energy_j"] == pytest.approx(out["avg_power_w_per_device"] * wall)
    assert out["facility_energy_j"] == pytest.approx(1.5 * out["it_energy_j"])
    assert out["co2e_g"] == pytest.approx(out["facility_energy_j"] / 3.6e6 * 400)
    assert out["cost_usd"] == pytest.approx(wall / 3600 * 2.0)


def test_fp8_attention_core_and_output_layer_stay_16_bit():
    """An fp8 run casts the blocks' linear layers only: on a device whose fp8 peak is twice
    its 16-bit one (peak 2 vs core peak 1), the toy's block matmuls (attention projections
    256, MLP 256: 3 x 512 FLOP over training) run at 2 x the fp8 share; the materialized core
    (64 FLOP forward, 3 x 64 over training) and the output layer (3 x 256) at the 16-bit
    rate. The output layer is a plain linear the recipes leave alone: Megatron-Core's
    ``tensor_parallel.ColumnParallelLinear`` (NVIDIA/Megatron-LM
    megatron/core/models/gpt/gpt_model.py, read at 007562f9), outside TransformerEngine's
    fp8 autocast, and torchtitan's float8 converter filters the module named "output"."""
    out = model.evaluate(toy(fp8=True, fp8_units=True, peak_flop_per_s=2.0))
    rate = A.in_model_matmul_fraction
    fp8_rate = 2.0 * rate * A.fp8_matmul_fraction
    expected = 3 * 512 / fp8_rate + (768 + 3 * 64) / rate
    assert out["step_compute_s"] == pytest.approx(expected, rel=1e-12)


def test_selective_reruns_a_fused_core_only_where_the_stack_checkpoints_the_call():
    """A fused (flash) core keeps no scores, so Megatron's selective policy has nothing to
    recompute, unless the stack checkpoints the attention call itself (Megatron-Core's
    Attention; Habana's FusedSDPA in Megatron-DeepSpeed): then its forward runs again. The
    toy's fused forward: the causal share c of the 64-FLOP square at the unmeasured fused rate
    u of the 16-bit ceiling (peak 1, MAMF 1), in a step at the GEMMs' in-model share f:
    64 c / (u f)."""
    c = A.flash_causal_work_fraction
    u = A.unmeasured_attention_matmul_fraction * A.in_model_matmul_fraction
    none = model.evaluate(toy(flash_attention=True))["step_compute_s"]
    core = model.evaluate(toy(flash_attention=True, recompute=1))["step_compute_s"]
    call = model.evaluate(toy(flash_attention=True, recompute=1,
                              selective_policy=2))["step_compute_s"]
    assert core == none
    assert call - none == pytest.approx(64 * c / u, rel=1e-12)


def test_maxtexts_minimal_policy_reruns_the_call_and_the_element_wise_ops():
    """MaxText's 'minimal' remat (jax.checkpoint_policies.checkpoint_dots_with_no_batch_dims:
    selective_policy 3) keeps the weight matmuls' outputs, so its backward reruns the
    attention call, as a checkpointed call does (policy 2), and every element-wise op: the
    traffic of the tensors the toy's layer makes, by hand with the fused kernel, per token
    attention 2h + 2ad + 4 a_kv d + 2ad + h = 44, MLP 3h + 4f = 44, norms 4h = 16 bytes, two
    tokens, and the kernel's 4-byte statistic for each: 2 x 104 + 2 x 4 = 216 bytes, at the
    fitted traffic factor over a 1 kB/s memory (the matmuls stay compute-bound)."""
    slow = dict(flash_attention=True, recompute=1, hbm_bytes_per_s=1e3)
    call = model.evaluate(toy(selective_policy=2, **slow))["step_compute_s"]
    dots = model.evaluate(toy(selective_policy=3, **slow))["step_compute_s"]
    assert dots - call == pytest.approx(A.elementwise_traffic_factor * 216 / 1e3, rel=1e-12)
    # no hardware FLOP beyond Megatron's selective: the core's forward, nothing of a matmul
    meg = model.evaluate(toy(selective_policy=0, **slow))
    assert model.evaluate(toy(selective_policy=3, **slow))["hardware_flop_per_token"] == \
        meg["hardware_flop_per_token"]


def test_grouped_gemm_tiles_are_wired_to_the_expert_gemms():
    """The toy's layer as a mixture of 2 experts of 8, top-1, both on the device: each sees
    1 of the 2 tokens, 2 x (2 x 1 x 4 x 8) x 2 = 256 FLOP forward. In 2-row tiles (megablox)
    the second group starts mid-tile, so each expert runs 1 + 2 x 1/2 = 2 rows: 512 FLOP,
    and training (3 x the forward) adds 3 x 256 = 768 FLOP."""
    moe = dict(experts=2, top_k=1, moe_ffn_hidden=8)
    plain = model.evaluate(toy(**moe))["step_compute_s"]
    tiled = model.evaluate(toy(grouped_gemm_tile_rows=2.0, **moe))["step_compute_s"]
    assert tiled - plain == pytest.approx(768 / A.in_model_matmul_fraction, rel=1e-12)
    # a dense layer has no groups: the tiles change nothing
    assert model.evaluate(toy(grouped_gemm_tile_rows=2.0))["step_compute_s"] == \
        model.evaluate(toy())["step_compute_s"]


def test_full_recompute_adds_one_forward():
    """Full recomputation reruns each layer's forward (576 FLOP) inside the backward; the
    output layer is not recomputed."""
    base, full = model.evaluate(toy()), model.evaluate(toy(recompute=2))
    rate = A.in_model_matmul_fraction
    assert full["step_compute_s"] - base["step_compute_s"] == pytest.approx(576 / rate)


def test_the_last_stage_computes_the_output_layer_whole():
    """Two stages of one toy layer each, one micro-batch: a 1F1B pipeline runs at its slowest
    stage's pace, and in an even split (Megatron-Core's default) that is the last, with its
    layer (3 x 576 FLOP) and the whole output layer (3 x 256): 2496 FLOP, as on one device."""
    out = model.evaluate(toy(layers=2, devices=2, pp=2))
    assert out["step_compute_s"] == pytest.approx(2496 / A.in_model_matmul_fraction,
                                                  rel=1e-12)


def test_pipeline_bubble_is_wired_to_the_microbatch_time():
    """Two stages, two layers, four micro-batches: the bubble is (p - 1)/(v m) of the m
    micro-batches' time on a stage, compute and exposed communication included."""
    out = model.evaluate(toy(layers=2, devices=2, pp=2, global_batch=4))
    per_mb = sum(out[f"step_{k}_s"] for k in ("compute", "tp_comm", "cp_comm", "ep_comm",
                                                 "pp_comm", "stragglers"))
    assert out["num_microbatches"] == 4
    assert out["step_pp_comm_s"] > 0
    assert out["step_bubble_s"] == pytest.approx(1 / 4 * per_mb)


@pytest.fixture(scope="module")
def llama():
    spec = job_inputs(model="llama2-70b", global_batch=1024)
    lay = {"tp": np.array([8, 4, 8, 2]), "pp": np.array([4, 8, 2, 8]),
           "cp": np.array([1, 1, 2, 1]), "ep": 1, "vpp": np.array([1, 2, 1, 1]),
           "zero": np.array([1, 3, 0, 2]), "micro_batch": np.array([1, 1, 2, 1]),
           "recompute": np.array([0, 2, 1, 0])}
    return columns(system("h100-sxm5-80gb", 512), spec, "bf16", lay)


def test_outputs_are_sums_of_their_parts(llama):
    out = model.evaluate(llama)
    steps = sum(out[f"step_{k}_s"] for k in model.STEP_PARTS)
    mem = sum(out[f"memory_{k}_bytes"] for k in model.MEMORY_PARTS)
    np.testing.assert_allclose(out["step_time_s"], steps, rtol=1e-12)
    np.testing.assert_array_equal(out["memory_bytes_per_device"], mem)
    np.testing.assert_array_equal(out["fits_in_memory"], mem <= llama["hbm_bytes"])
    np.testing.assert_allclose(out["dp"], 512 // (llama["tp"] * llama["pp"] * llama["cp"]))
    np.testing.assert_allclose(out["mfu"], out["model_flop_per_token"] * out["tokens_per_s"]
                               / 512 / llama["peak_flop_per_s"], rtol=1e-12)


def test_rows_evaluate_as_they_would_alone(llama):
    """Columns broadcast: each row of a four-row evaluation equals that row on its own."""
    out = model.evaluate(llama)
    for i in range(4):
        one = {k: (v[i] if isinstance(v, np.ndarray) else v) for k, v in llama.items()}
        alone = model.evaluate(one)
        for k in ("step_time_s", "memory_bytes_per_device", "cost_usd", "co2e_g"):
            assert float(alone[k]) == pytest.approx(float(out[k][i]), rel=1e-12), (k, i)


def test_layout_stage_geometry():
    """64 devices as tp 2 x pp 4 x cp 2: dp 4, 8 ranks share the weights; a batch of 32 at
    micro-batch 2 is 4 micro-batches; 70 layers on 4 stages put 18 on the fullest."""
    g = model.layout_stage(toy(devices=64, tp=2, pp=4, cp=2, ep=2, layers=70, global_batch=32,
                               micro_batch=2, seq_len=4096))
    assert (g.dp, g.dp_cp, g.dp_ep, g.m) == (4, 8, 4, 4)
    assert (float(g.layers_per_stage), float(g.first_stage_layers)) == (18.0, 18.0)
    assert g.stage_share == pytest.approx(18 / 70)
    assert (g.s_local, g.tokens_mb) == (2048.0, 4096.0)
    assert not (g.moe or g.mtp or g.any_zero3) and g.any_cp


def test_ownership_rows_beside_rental_rows():
    """A row priced as owned uses the ownership model, its neighbour the rental price."""
    out = model.evaluate(toy(is_rental=np.array([True, False]), capex_usd=30000.0))
    wall_h = out["train_time_s"] / 3600
    system = 30000.0 * (1 + A.ownership_system_overhead_fraction)    # chips + servers, network
    # the building: its cost per watt of the 400 W device plus its host's share, over its life
    building = (A.facility_capex_usd_per_w * 400.0 * (1 + A.host_power_fraction_of_tdp)
                * wall_h / (A.facility_lifetime_years * 8766))
    own = (system * wall_h / (A.ownership_lifetime_years * 8766) + building
           + out["facility_energy_j"] / 3.6e6 * 0.1)
    assert out["cost_usd"][0] == pytest.approx(wall_h * 2.0)
    assert out["cost_usd"][1] == pytest.approx(own)
    assert math.isfinite(out["cost_usd"][1])
    # its parts come out of evaluate: depreciation and electricity, zero for the rented row
    assert out["depreciation_usd"][1] == pytest.approx(
        system * wall_h / (A.ownership_lifetime_years * 8766) + building)
    assert out["electricity_usd"][1] == pytest.approx(out["facility_energy_j"] / 3.6e6 * 0.1)
    assert (out["depreciation_usd"][0], out["electricity_usd"][0]) == (0.0, 0.0)


def test_triton_attention_runs_its_share_of_the_fused_rate():
    """A fused core executes the causal half of its square, 64 x 0.5 = 32 FLOP forward and
    2.5 x 32 = 80 backward (FlashAttention-2's Algorithm 2), 112 FLOP at the kernel's rate
    in a step, its isolated 100 FLOP/s at the GEMMs' in-model share f: 112 / (100 f) s; the
    Triton kernel at 0.43 of it (Dao 2023, FlashAttention-2 Fig. 4d), 112 / (43 f) s.
    Nothing else moves."""
    fused = dict(flash_attention=True, attention_flop_per_s=100.0)
    flash = model.evaluate(toy(**fused))
    triton = model.evaluate(toy(**fused, attention_rate_share=A.triton_attention_flash2_fraction))
    assert A.triton_attention_flash2_fraction == 0.43
    f = A.in_model_matmul_fraction
    assert triton["step_compute_s"] - flash["step_compute_s"] == pytest.approx(
        112 / (43 * f) - 112 / (100 * f), rel=1e-9)
