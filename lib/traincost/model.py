"""The one orchestrator: columns of configurations in, every output column out.

:func:`evaluate` composes the formula modules in data-flow order
(workload -> memory -> communication -> performance -> power -> footprint). Every
input may be a scalar or a numpy array; arrays broadcast, so the one-configuration
:func:`traincost.estimate` and a million-row sweep run exactly this code.

Column names (inputs) are listed in :data:`INPUT_COLUMNS`; outputs are SI quantities
(s, W, J, bytes, FLOP, g, USD) plus ``breakdown_*`` parts of the step time and memory.
"""

from __future__ import annotations

import numpy as np

from . import comm, footprint, memory, performance, power, workload
from .assumptions import DEFAULT, Assumptions
from .units import (BYTES_PER_ELEMENT, GIB, GRAMS_PER_TONNE, HOURS_PER_YEAR, JOULES_PER_MWH,
                    SECONDS_PER_DAY, SECONDS_PER_HOUR, TERA)

INPUT_COLUMNS = (
    # accelerator (at the chosen precision)
    "peak_flop_per_s", "mamf_fraction", "fp8", "attention_flop_per_s", "attention_kv_tokens",
    "hbm_bytes", "hbm_bytes_per_s", "tdp_w", "idle_w", "power_cap_w",
    "scaleup_domain_devices", "scaleup_bytes_per_s", "scaleout_bytes_per_s",
    "price_usd_per_h", "capex_usd", "embodied_kgco2e", "bytes_per_element",
    # workload
    "layers", "hidden", "heads", "kv_heads", "head_dim", "ffn_hidden", "gated_mlp", "vocab",
    "seq_len", "tied_embeddings", "learned_positions", "experts", "top_k", "shared_experts",
    "moe_ffn_hidden", "dense_layers", "route_nodes", "mtp_depth", "mla", "q_lora_rank", "kv_lora_rank", "qk_rope_head_dim",
    "v_head_dim", "global_batch", "tokens",
    # software stack
    "flash_attention", "parallel_block", "tp_overlap", "pp_overlap", "dp_overlap",
    "ep_overlap", "balanced_pipeline", "fp8_activations", "optimizer_bf16",
    # layout
    "devices", "tp", "pp", "cp", "ep", "vpp", "zero", "micro_batch", "recompute",
    # site
    "pue", "grid_gco2e_per_kwh", "is_rental", "electricity_usd_per_kwh",
)

#: step-time parts, in the order they are reported
STEP_PARTS = ("compute", "tp_comm", "cp_comm", "ep_comm", "pp_comm", "stragglers", "bubble",
              "dp_comm", "optimizer")
#: memory parts, in the order they are reported
MEMORY_PARTS = ("weights", "gradients", "optimizer", "activations", "reserved")


def _any(x) -> bool:
    """Whether any element of a scalar or array is true (cheaper than np.any on scalars)."""
    return bool(x.any()) if isinstance(x, np.ndarray) else bool(x)


def evaluate(c: dict, assumptions: Assumptions = DEFAULT) -> dict:
    """Evaluate configurations given as columns (scalars or equal-length arrays).

    Parameters
    ----------
    c : dict
        One entry per name in :data:`INPUT_COLUMNS`. ``recompute`` holds integer codes
        (:data:`traincost.workload.RECOMPUTE_CODES`); ``fp8`` (the run's GEMMs in fp8),
        ``mla``, ``gated_mlp``,
        ``tied_embeddings``, ``learned_positions``, ``is_rental`` and the software-stack
        columns (``flash_attention``, ``parallel_block``, ``tp_overlap``, ``pp_overlap``,
        ``dp_overlap``, ``ep_overlap``, ``balanced_pipeline``, see
        :class:`traincost.Workload`) are booleans. ``flash_attention`` is true for every
        fused kernel (flash or cuDNN); ``attention_flop_per_s`` is the chosen kernel's
        measured rate on the device (:meth:`traincost.Accelerator.attention_flop_per_s`),
        measured at ``attention_kv_tokens`` keys per query row (NaN: used unscaled).
    assumptions : Assumptions
        Modelling defaults. [-]

    Returns
    -------
    dict of arrays (SI units), see :mod:`traincost.estimate` for their meaning.

    Notes
    -----
    Step time (Narayanan et al. SC21 Sec. 3.4):
    ``T = m*t_mb + (p-1)/v * t_mb + T_dp,exposed + T_optimizer`` with m = B/(d*b)
    micro-batches and t_mb one micro-batch's time on one stage (compute plus exposed
    tensor-, context-, expert- and pipeline-parallel communication, plus the expected wait
    for a straggler: ``s_f * (1 - (1 - f)^n) * forward work``, f the share of devices in
    slow machines and s_f their extra forward time, MegaScale Secs. 5.1 and 6.3). The step
    runs at the pace of the fullest stage, ceil(L/(p*v))*v layers (L/p when p divides L); each stage
    does 1/p of the output layer's work, and of the D multi-token-prediction modules'
    (``mtp_depth``: a Transformer block, a 2h -> h projection and the output head again
    each). GEMMs run at ``peak * mamf_fraction * in_model_matmul_fraction`` (times
    ``fp8_matmul_fraction`` for fp8), and they and the fused attention core at
    ``(power_cap_w / tdp_w)^power_cap_clock_exponent`` of that under a power limit
    (``power_cap_w`` = ``tdp_w`` without one), which also ends the device's power range
    (:func:`traincost.power.device_power_w`). The expert all-to-all carries min(k, route_nodes)
    copies of a token when the expert group spans nodes under node-limited routing; a
    stack overlapping it (``ep_overlap``) hides it behind the micro-batch's compute, which
    then runs on the SMs it leaves, ``t_compute / (1 - ep_overlap_comm_sm_fraction)``
    (DeepSeek-V3 Secs. 3.2.1-3.5.1).
    """
    a = assumptions
    L, h, s, V = c["layers"], c["hidden"], c["seq_len"], c["vocab"]
    heads, kv, d = c["heads"], c["kv_heads"], c["head_dim"]
    t, p, cp, ep, v = c["tp"], c["pp"], c["cp"], c["ep"], c["vpp"]
    b, B, n = c["micro_batch"], c["global_batch"], c["devices"]
    zero, rc, mla = c["zero"], c["recompute"], c["mla"]
    E, k, shared = c["experts"], c["top_k"], c["shared_experts"]
    e = c["bytes_per_element"]
    act_e = np.maximum(e, 2.0)                       # activations stay 16-bit under fp8
    dp = n // (t * p * cp)
    m = B // (dp * b)                                # micro-batches per step
    # the ranks holding the same weights: data- and context-parallel ones alike reduce
    # their gradients together, and a distributed optimizer shards over all of them
    # (Megatron-Core's intra_dp_cp_group, megatron/core/optimizer/__init__.py)
    dp_cp = dp * cp
    # the slowest stage holds ceil(L/(p*v)) layers per model chunk (uneven splits, e.g.
    # BLOOM's 70 layers on 12 stages, load one stage more). A balanced split counts the
    # embedding and the loss as a layer each (Llama 3 Sec. 3.3.2): L + 2 units, and the
    # first and last stages hold one transformer layer fewer.
    single_stage = p == 1
    balanced = c["balanced_pipeline"] & np.logical_not(single_stage)
    layers_per_stage = np.ceil(workload.pipeline_units(L, balanced) / (p * v)) * v
    stage_share = layers_per_stage / L               # the peak stage's share of the layers
    first_stage_layers = layers_per_stage - balanced  # the first stage's transformer layers
    full_rc = rc == workload.RECOMPUTE_CODES["full"]
    # Terms that are zero for every row are skipped, not computed as arrays of zeros
    # (speed only: the formulas below are the same either way).
    moe = _any(E > 0)                                # expert terms vanish for dense models
    any_cp = _any(cp > 1)                            # context-parallel traffic needs cp > 1
    any_zero3 = _any(zero == 3)                      # weight gathers only under ZeRO-3
    mtp_d = c["mtp_depth"]
    mtp = _any(mtp_d > 0)                            # multi-token-prediction modules

    # ---- workload ------------------------------------------------------------------
    params = workload.parameter_counts(
        L, h, heads, kv, d, c["ffn_hidden"], c["gated_mlp"], V, s, c["tied_embeddings"],
        c["learned_positions"], E, k, shared, c["moe_ffn_hidden"], c["dense_layers"], mla,
        c["q_lora_rank"], c["kv_lora_rank"], c["qk_rope_head_dim"], c["v_head_dim"])
    attn_core = workload.attention_core_flop_per_token(
        L, s, heads, d, mla=mla, qk_rope_head_dim=c["qk_rope_head_dim"],
        v_head_dim=c["v_head_dim"])
    model_fpt, hw_fpt = workload.flop_per_token(params["layer_matmul_active"], V, h, attn_core, rc)

    # ---- memory (the first pipeline stage, which holds the most) -------------------------
    expert_params = params["experts"]
    dense_layer_params = params["layers"] - expert_params
    first_stage_embed = params["embedding"] + np.where(single_stage, params["output"], 0)
    if mtp:
        # the MTP modules sit with the output head on the last stage (DeepSeek-V3 Sec.
        # 3.2.3): on the first only without a pipeline. Each holds an average layer's
        # weights and a 2h x h projection
        first_stage_embed = first_stage_embed + np.where(
            single_stage, mtp_d * (dense_layer_params / L + 2 * h * h), 0)
    dense_on_device = (dense_layer_params * first_stage_layers / L + first_stage_embed) / t
    # Adam state per parameter: fp32 master, m and v, or bf16 m and v without a master copy
    optimizer_bytes = np.where(c["optimizer_bf16"], a.optimizer_bf16_bytes_per_param,
                               a.optimizer_bytes_per_param)
    states = memory.model_state_bytes(dense_on_device, dp_cp, zero, a.weight_bytes_per_param,
                                      a.grad_bytes_per_param, optimizer_bytes)
    dp_ep = dp_cp // ep                              # data-parallel replicas of each expert
    if moe:
        expert_on_device = expert_params * stage_share / (ep * t)
        if mtp:                                      # an MTP block's experts, p = 1 only
            expert_on_device = expert_on_device + np.where(
                single_stage & (E > 0),
                mtp_d * expert_params / np.maximum(params["moe_layers"], 1), 0) / (ep * t)
        states_expert = memory.model_state_bytes(expert_on_device, dp_ep, zero,
                                                 a.weight_bytes_per_param,
                                                 a.grad_bytes_per_param,
                                                 optimizer_bytes)
        states = {k_: states[k_] + states_expert[k_] for k_ in states}
    else:
        expert_on_device = 0.0                       # dense: no expert weights
    moe_share = params["moe_layers"] / L
    gate = np.where(c["gated_mlp"], memory.GATED_MLP_STORE_FACTOR, 1.0)
    ffn_eff = gate * ((1 - moe_share) * c["ffn_hidden"]
                      + moe_share * (k + shared) * c["moe_ffn_hidden"])
    v_dim = np.where(mla, c["v_head_dim"], d)
    qk_dim = d + np.where(mla, c["qk_rope_head_dim"], 0)
    s_local = s / cp
    flash, ptb = c["flash_attention"], c["parallel_block"]
    # DeepSeek-V3's FP8 activation recipe (fp8 runs only): with MLA, the up-projections are
    # recomputed from their cached FP8 latents (kv and, at low rank, q) beside the 16-bit
    # rotary key; a full-rank query is kept
    fp8_act = c["fp8_activations"] & c["fp8"]
    any_fp8_act = _any(fp8_act)
    fp8_b, q_rank = BYTES_PER_ELEMENT["fp8"], c["q_lora_rank"]
    mla_cache = np.where(mla, c["kv_lora_rank"] * fp8_b + c["qk_rope_head_dim"] * act_e
                         + np.where(q_rank > 0, q_rank * fp8_b, heads * qk_dim * act_e),
                         np.nan) if any_fp8_act else np.nan
    stored, full = memory.activation_bytes_per_layer(
        s_local, b, h, heads, kv, (qk_dim + v_dim) / 2, ffn_eff, t, rc, a.sequence_parallel, act_e,
        flash, ptb, a.flash_stats_bytes_per_head, moe_share * k, fp8_act, c["gated_mlp"],
        mla_cache)
    # the element-wise traffic follows the tensors a layer produces, kept or not: the FP8
    # recipe changes what is kept, not what is computed (its recomputed norms and SwiGLU
    # outputs are left out of the traffic, a small share)
    produced = full if not any_fp8_act else memory.activation_bytes_per_layer(
        s_local, b, h, heads, kv, (qk_dim + v_dim) / 2, ffn_eff, t, rc, a.sequence_parallel, act_e,
        flash, ptb, a.flash_stats_bytes_per_head, moe_share * k)[1]
    # 1F1B: min(m, p) micro-batches over the stage's layers, and with interleaving
    # (p - 1)/p of them more on its first chunk (Korthikanti Sec. 4.2.3), whose layers a
    # balanced split has one fewer of (the embedding takes that place)
    inflight = memory.microbatches_in_flight(p, v, m)
    first_chunk_layers = layers_per_stage / v - balanced
    layer_microbatches = first_stage_layers * np.minimum(m, p) \
        + (inflight - np.minimum(m, p)) * v * first_chunk_layers
    activations = layer_microbatches * stored \
        + np.where(full_rc, full, 0.0) \
        + np.where(single_stage, 2 * act_e * s_local * b * V / t, 0.0)   # fp32 logits, last stage
    if mtp:                                          # the MTP blocks' activations, p = 1 only
        activations = activations + np.where(single_stage, mtp_d * stored, 0.0)
    mem = {
        "weights": states["weights"],
        "gradients": states["gradients"],
        "optimizer": states["optimizer"],
        "activations": activations,
        "reserved": np.full_like(np.asarray(activations, dtype=float),
                                 a.framework_reserved_bytes),
    }
    memory_bytes = sum(mem.values())

    # ---- compute per micro-batch per stage --------------------------------------------
    # a power limit below the rated maximum clocks the matmul and fused-attention rates down
    clock = power.capped_clock_fraction(c["power_cap_w"], c["tdp_w"], a.power_cap_clock_exponent)
    flop_rate = c["peak_flop_per_s"] * c["mamf_fraction"] * a.in_model_matmul_fraction \
        * np.where(c["fp8"], a.fp8_matmul_fraction, 1.0) * clock
    bw = c["hbm_bytes_per_s"]
    tokens_mb = b * s_local
    attn_w = workload.attention_weights(h, heads, kv, d, mla=mla, q_lora_rank=c["q_lora_rank"],
                                        kv_lora_rank=c["kv_lora_rank"],
                                        qk_rope_head_dim=c["qk_rope_head_dim"],
                                        v_head_dim=c["v_head_dim"])
    up = np.where(c["gated_mlp"], 2, 1)
    attn_mm, mlp_mm, core, elem = performance.layer_forward_time(
        tokens_mb, h, heads, kv, d, v_dim, qk_dim, attn_w, up * c["ffn_hidden"], c["ffn_hidden"],
        1.0, tokens_mb, s, t, produced, flop_rate, bw, a.elementwise_traffic_factor, e)
    dense_mm = attn_mm + mlp_mm
    n_moe = params["moe_layers"]
    if moe:
        experts_per_device = np.where(E > 0, E / ep, 0)
        tokens_per_expert = np.where(E > 0, tokens_mb * k * ep / np.maximum(E, 1), 0)
        moe_attn, moe_mlp, _, _ = performance.layer_forward_time(
            tokens_mb, h, heads, kv, d, v_dim, qk_dim, attn_w, up * c["moe_ffn_hidden"],
            c["moe_ffn_hidden"], experts_per_device, tokens_per_expert, s, t, produced, flop_rate,
            bw, a.elementwise_traffic_factor, e)
        shared_mm = shared * (performance.gemm_time(tokens_mb, h, up * c["moe_ffn_hidden"] / t,
                                                    flop_rate, bw, e)
                              + performance.gemm_time(tokens_mb, c["moe_ffn_hidden"] / t, h,
                                                      flop_rate, bw, e))
        router = performance.gemm_time(tokens_mb, h, E, flop_rate, bw, e) * (E > 0)
        moe_layer_mm = moe_attn + moe_mlp + shared_mm + router
        layer_mm = ((L - n_moe) * dense_mm + n_moe * moe_layer_mm) / L
    else:
        layer_mm = (L - n_moe) * dense_mm / L       # the same sum without its zero MoE term
    # a fused (flash) core runs at the device's measured fused-attention rate where known,
    # scaled from the benchmark's keys per query row to this call's (s/2 causal, s/cp of it
    # per context-parallel rank), else at the matmul rate; it skips the causal upper
    # triangle and recomputes the scores in its backward (2.5x its forward, not 2x);
    # selective recompute then adds nothing
    attn_rate, attn_ref = c["attention_flop_per_s"] * clock, c["attention_kv_tokens"]
    attn_rate = np.where(np.isfinite(attn_ref), performance.attention_rate(
        attn_rate, a.flash_causal_work_fraction * s_local, attn_ref,
        a.attention_half_rate_kv_tokens), attn_rate)
    attn_rate = np.where(np.isfinite(attn_rate), attn_rate, flop_rate)
    core_fwd = core * np.where(flash, a.flash_causal_work_fraction * flop_rate / attn_rate, 1.0)
    core_bwd_extra = np.where(flash, (a.flash_backward_forward_ratio - 2.0) * core_fwd, 0.0)
    fwd_layer = layer_mm + core_fwd + elem
    selective = (rc == workload.RECOMPUTE_CODES["selective"]) & np.logical_not(flash)
    up_recompute = 0.0       # the MLA up-projections the FP8 recipe recomputes (not under full)
    if any_fp8_act:
        kv_up = performance.gemm_time(tokens_mb, c["kv_lora_rank"], heads * (d + v_dim) / t,
                                      flop_rate, bw, e)
        q_up = performance.gemm_time(tokens_mb, q_rank, heads * qk_dim / t, flop_rate, bw, e)
        up_proj = kv_up + np.where(q_rank > 0, q_up, 0.0)
        up_recompute = np.where(fp8_act & mla & np.logical_not(full_rc), up_proj, 0.0)
    recompute_layer = np.where(full_rc, fwd_layer, np.where(selective, core, 0.0)) + up_recompute
    logits_fwd = performance.gemm_time(tokens_mb, h, V / t, flop_rate, bw, e)
    layer_work = 3 * fwd_layer + core_bwd_extra + recompute_layer
    output_work = 3 * logits_fwd
    if mtp:
        # D multi-token-prediction modules (DeepSeek-V3 Sec. 2.2), each one block of the
        # last layer's kind, a 2h -> h projection and another pass of the output head
        block_mm = np.where(E > 0, moe_layer_mm, dense_mm) if moe else dense_mm
        block_fwd = block_mm + core_fwd + elem
        block_work = 3 * block_fwd + core_bwd_extra + np.where(
            full_rc, block_fwd, np.where(selective, core, 0.0)) + up_recompute
        proj_fwd = performance.gemm_time(tokens_mb, 2 * h, h / t, flop_rate, bw, e)
        output_work = output_work + mtp_d * (block_work + 3 * (proj_fwd + logits_fwd))
    # the output layer (and MTP modules): spread over the stages (1/p each), or, in a
    # balanced split, in the place of the last stage's missing layer (only its excess over
    # a layer is extra)
    compute_mb = layers_per_stage * layer_work + np.where(
        balanced, np.maximum(0.0, output_work - layer_work), output_work / p)
    # a stack that runs the expert all-to-all beside the compute gives it a share of the
    # SMs, and the compute runs on the rest (DeepSeek-V3: 20 of 132, Secs. 3.2.2, 3.5.1)
    ep_beside = c["ep_overlap"] & (ep > 1) & (E > 0)
    compute_mb = compute_mb / np.where(ep_beside, 1.0 - a.ep_overlap_comm_sm_fraction, 1.0)

    # ---- communication per micro-batch -----------------------------------------------
    net = (c["scaleup_domain_devices"], c["scaleup_bytes_per_s"], c["scaleout_bytes_per_s"],
           a.scaleup_comm_efficiency, a.scaleout_comm_efficiency, a.scaleup_latency_s,
           a.scaleout_latency_s)
    bw_tp, lat_tp = comm.link(t, 1, *net)
    act_bytes = tokens_mb * h * act_e
    # 2 fwd + 2 bwd (+2 recompute) all-reduces per layer; a parallel block sums attention
    # and MLP outputs before its one all-reduce per pass (MegaScale Sec. 3.1, Fig. 3a)
    n_tp = np.where(ptb, 1, 2) * (2 + full_rc)
    tp_layer = n_tp * comm.collective_time("all_reduce", act_bytes, t, bw_tp, lat_tp)
    # an overlapping stack hides it behind the MLP path's GEMMs of every pass (Sec. 3.2)
    tp_window = (layer_mm - attn_mm) * (3 + full_rc)
    tp_mb = layers_per_stage * performance.stack_exposed(
        tp_layer, tp_window, c["tp_overlap"], a.stack_overlap_window_fraction,
        a.tp_overlap_fraction)
    # a slow machine (straggler) stretches its stage's forward work, and its replica's every
    # micro-batch with it; the job waits for that replica. Expected over which devices a job
    # draws: the chance of at least one straggler among n devices times the slowdown
    # (MegaScale Secs. 5.1, 6.3)
    has_straggler = 1.0 - (1.0 - a.straggler_device_fraction) ** n
    straggler_mb = a.straggler_forward_slowdown * has_straggler * layers_per_stage \
        * (fwd_layer + recompute_layer)
    t_mb = compute_mb + straggler_mb + tp_mb
    if any_cp:
        bw_cp, lat_cp = comm.link(cp, t, *net)
        kv_bytes = 2 * b * s * kv * d * act_e / t    # K and V of the whole sequence
        n_cp = 3 + full_rc                           # gather fwd, gather + reduce-scatter bwd
        cp_mb = layers_per_stage * n_cp \
            * comm.collective_time("all_gather", kv_bytes, cp, bw_cp, lat_cp) \
            * (1 - a.cp_overlap_fraction)
        t_mb = t_mb + cp_mb
    else:
        cp_mb = 0.0                                  # a group of one sends nothing
    if moe:
        bw_ep, lat_ep = comm.link(ep, t * cp, *net)
        # each token goes to its k experts; under node-limited routing it crosses the
        # scale-out network once per target node, at most route_nodes times, and is
        # forwarded to the experts there over the scale-up links, which DeepSeek-V3
        # overlaps with the network leg (Sec. 3.2.2)
        node_limited = (c["route_nodes"] > 0) & comm.crosses_domain(
            ep, t * cp, c["scaleup_domain_devices"])
        copies = np.where(node_limited, np.minimum(k, c["route_nodes"]), k)
        a2a_bytes = tokens_mb * copies * h * act_e / t
        n_ep = 4 + 2 * full_rc                       # dispatch + combine, fwd and bwd
        # an MTP module's MoE block, like its compute, spread over the stages
        moe_units = n_moe * stage_share + np.where(E > 0, mtp_d, 0) / p
        ep_raw = moe_units * n_ep * comm.collective_time("all_to_all", a2a_bytes, ep,
                                                         bw_ep, lat_ep)
        ep_mb = performance.stack_exposed(ep_raw, compute_mb, c["ep_overlap"],
                                          a.stack_overlap_window_fraction,
                                          a.ep_overlap_fraction)
        t_mb = t_mb + ep_mb
    else:
        ep_mb = 0.0                                  # no MoE layers
    bw_pp, lat_pp = comm.link(p, t * cp * dp, *net)
    p2p_bytes = act_bytes / np.where(a.sequence_parallel, t, 1)
    pp_mb = np.where(p > 1, 2 * v * comm.p2p_time(p2p_bytes, bw_pp, lat_pp), 0.0)
    # an overlapping stack sends and receives asynchronously (MegaScale Sec. 3.2)
    pp_mb = performance.stack_exposed(pp_mb, compute_mb, c["pp_overlap"],
                                      a.stack_overlap_window_fraction)
    t_mb = t_mb + pp_mb

    # ---- data parallel and optimizer, per step ----------------------------------------
    bw_dp, lat_dp = comm.link(dp_cp, t, *net)
    if _any(ep != 1):
        bw_edp, lat_edp = comm.link(dp_ep, t * ep, *net)
    else:
        bw_edp, lat_edp = bw_dp, lat_dp              # ep = 1: the expert group is the dp group
    grad_dense = dense_on_device * a.grad_reduce_bytes_per_param
    grad_expert = expert_on_device * a.grad_reduce_bytes_per_param
    dp_reduce = comm.collective_time("all_reduce", grad_dense, dp_cp, bw_dp, lat_dp)
    if moe:                                          # a dense model has no expert gradients
        dp_reduce = dp_reduce + np.where(
            grad_expert > 0, comm.collective_time("all_reduce", grad_expert, dp_ep, bw_edp,
                                                  lat_edp), 0.0)
    # a micro-batch's passes in units of one forward: forward 1, backward 2, and with full
    # recomputation one more forward inside the backward
    forward_mb = compute_mb / (3 + full_rc)
    backward_mb = 2 * forward_mb
    if any_zero3:
        # ZeRO-3 / FSDP regathers the weights for every micro-batch's forward and backward
        # (and recompute forward), one all-gather per layer: the latency term counts once
        # per layer. The gathers are prefetched, layer i+1's during layer i's compute, so
        # only each pass's first gather is always exposed (PyTorch FSDP notes, "FSDP
        # Prefetch Nuances"; DeepSpeed ZeRO-3 stage3_prefetch_bucket_size)
        zero3 = zero == 3
        w_dense = dense_on_device * a.weight_bytes_per_param
        w_expert = expert_on_device * a.weight_bytes_per_param
        units = layers_per_stage                     # all-gathers per pass
        gather = units * comm.collective_time("all_gather", w_dense / units, dp_cp, bw_dp,
                                              lat_dp)
        if moe:
            gather = gather + units * np.where(
                w_expert > 0, comm.collective_time("all_gather", w_expert / units, dp_ep,
                                                   bw_edp, lat_edp), 0.0)
        dp_step = np.where(zero3, dp_reduce / 2, dp_reduce)   # ZeRO-3: reduce-scatter only
        # each pass hides its gathers behind its own compute (forward_mb, backward_mb)
        first = gather / units
        f = a.zero3_prefetch_overlap_fraction
        gathers_exposed = np.where(zero3, (1 + full_rc) * np.maximum(
            first, performance.exposed(gather, forward_mb, f)) + np.maximum(
            first, performance.exposed(gather, backward_mb, f)), 0.0)
    else:
        dp_step, gathers_exposed = dp_reduce, 0.0
    dp_exposed = performance.exposed(dp_step, backward_mb, a.dp_overlap_fraction) \
        + m * gathers_exposed
    # an overlapping stack launches each model chunk's gradient reduction after its
    # backward: only the last chunk's, 1/(2v) of the step's data-parallel traffic, stays
    # exposed (MegaScale Sec. 3.2)
    dp_overlapped = dp_step / (2 * v) + m * gathers_exposed
    dp_exposed = np.where(c["dp_overlap"], np.minimum(dp_overlapped, dp_exposed), dp_exposed)
    sharded_optimizer = zero >= 1
    optimizer_params = dense_on_device / np.where(sharded_optimizer, dp_cp, 1)
    if moe:
        optimizer_params = optimizer_params \
            + expert_on_device / np.where(sharded_optimizer, dp_ep, 1)
    step_bytes = np.where(c["optimizer_bf16"], a.optimizer_step_bf16_bytes_per_param,
                          a.optimizer_step_bytes_per_param)
    optimizer_s = optimizer_params * step_bytes / bw

    bubble = performance.pipeline_bubble_fraction(p, v, m) * m * t_mb
    parts = {
        "compute": m * compute_mb,
        "tp_comm": m * tp_mb,
        "cp_comm": m * cp_mb,
        "ep_comm": m * ep_mb,
        "pp_comm": m * pp_mb,
        "stragglers": m * straggler_mb,
        "bubble": bubble,
        "dp_comm": dp_exposed,
        "optimizer": optimizer_s,
    }
    step_time = sum(parts.values())

    # ---- throughput, utilisation --------------------------------------------------------
    tokens_per_step = B * s
    tokens_per_s = tokens_per_step / step_time
    peak = c["peak_flop_per_s"]
    model_flop_s = model_fpt * tokens_per_s / n
    hw_flop_s = hw_fpt * tokens_per_s / n

    # ---- power, energy, carbon, cost ---------------------------------------------------
    busy = (parts["compute"] + parts["optimizer"]) / step_time
    # the device's power range ends at its limit; the host's share follows the rating
    chip_w = power.device_power_w(c["power_cap_w"], c["idle_w"], busy, a.compute_power_fraction,
                                  a.wait_power_fraction)
    host_w = power.host_power_w(c["tdp_w"], a.host_power_fraction_of_tdp)
    avg_w = chip_w + host_w
    wall_s = c["tokens"] / tokens_per_s / a.goodput_fraction
    dev_h = footprint.device_hours(n, wall_s)
    it_j = footprint.it_energy_j(avg_w, n, wall_s)
    fac_j = footprint.facility_energy_j(it_j, c["pue"])
    co2e_g = footprint.operational_co2e_g(fac_j, c["grid_gco2e_per_kwh"])
    embodied_g = footprint.embodied_co2e_g(c["embodied_kgco2e"], n, wall_s,
                                           a.embodied_lifetime_years * HOURS_PER_YEAR
                                           * SECONDS_PER_HOUR)
    rental = footprint.rental_cost_usd(dev_h, c["price_usd_per_h"])
    if not _any(np.logical_not(c["is_rental"])):
        cost = rental                                # no row needs the ownership model
    else:
        own = footprint.ownership_cost_usd(dev_h, c["capex_usd"],
                                           a.ownership_lifetime_years * HOURS_PER_YEAR, fac_j,
                                           c["electricity_usd_per_kwh"])
        cost = np.where(c["is_rental"], rental, own)

    out = {
        "params": params["total"],
        "active_params": params["active"],
        "model_flop_per_token": model_fpt,
        "hardware_flop_per_token": hw_fpt,
        "dp": dp,
        "num_microbatches": m,
        "step_time_s": step_time,
        "tokens_per_s": tokens_per_s,
        "mfu": model_flop_s / peak,
        "hfu": hw_flop_s / peak,
        "model_flop_per_s_per_device": model_flop_s,
        "hardware_flop_per_s_per_device": hw_flop_s,
        "memory_bytes_per_device": memory_bytes,
        "fits_in_memory": memory_bytes <= c["hbm_bytes"],
        "busy_fraction": busy,
        "device_power_w": chip_w,
        "host_power_w": host_w,
        "avg_power_w_per_device": avg_w,
        "train_time_s": wall_s,
        "device_hours": dev_h,
        "it_energy_j": it_j,
        "facility_energy_j": fac_j,
        "co2e_g": co2e_g,
        "embodied_co2e_g": embodied_g,
        "cost_usd": cost,
    }
    out.update({f"step_{k_}_s": v_ for k_, v_ in parts.items()})
    out.update({f"memory_{k_}_bytes": v_ for k_, v_ in mem.items()})
    return out


def report_units(out: dict) -> dict:
    """Convert :func:`evaluate` outputs (SI) to the contract's edge units; broadcasts.

    Returns the flat contract columns (days, MWh, tCO2e, GiB, TFLOP/s) plus
    ``step_<part>_s`` and ``memory_<part>_gib`` breakdown columns.
    """
    rep = {
        "params": out["params"],
        "active_params": out["active_params"],
        "model_flop_per_token": out["model_flop_per_token"],
        "hardware_flop_per_token": out["hardware_flop_per_token"],
        "dp": out["dp"],
        "num_microbatches": out["num_microbatches"],
        "step_time_s": out["step_time_s"],
        "tokens_per_s": out["tokens_per_s"],
        "mfu": out["mfu"],
        "hfu": out["hfu"],
        "model_tflops_per_device": out["model_flop_per_s_per_device"] / TERA,
        "hardware_tflops_per_device": out["hardware_flop_per_s_per_device"] / TERA,
        "memory_gib_per_device": out["memory_bytes_per_device"] / GIB,
        "fits_in_memory": out["fits_in_memory"],
        "train_time_days": out["train_time_s"] / SECONDS_PER_DAY,
        "device_hours": out["device_hours"],
        "avg_power_w_per_device": out["avg_power_w_per_device"],
        "it_energy_mwh": out["it_energy_j"] / JOULES_PER_MWH,
        "facility_energy_mwh": out["facility_energy_j"] / JOULES_PER_MWH,
        "co2e_t": out["co2e_g"] / GRAMS_PER_TONNE,
        "embodied_co2e_t": out["embodied_co2e_g"] / GRAMS_PER_TONNE,
        "cost_usd": out["cost_usd"],
        "busy_fraction": out["busy_fraction"],
        "device_power_w": out["device_power_w"],
        "host_power_w": out["host_power_w"],
    }
    rep.update({f"step_{k}_s": out[f"step_{k}_s"] for k in STEP_PARTS})
    rep.update({f"memory_{k}_gib": out[f"memory_{k}_bytes"] / GIB for k in MEMORY_PARTS})
    return rep
