"""The one orchestrator: columns of configurations in, every output column out.

:func:`evaluate` composes the formula modules in data-flow order
(workload -> memory -> communication -> performance -> power -> footprint). Every
input may be a scalar or a numpy array; arrays broadcast, so the one-configuration
:func:`traincost.estimate` and a million-row sweep run exactly this code.

Column names (inputs) are listed in :data:`INPUT_COLUMNS`; outputs are SI quantities
(s, W, J, bytes, FLOP, g, USD) plus ``breakdown_*`` parts of the step time and memory.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from . import comm, footprint, memory, performance, power, workload
from .arrays import any_true
from .assumptions import DEFAULT, Assumptions
from .comm_stages import data_parallel_stage, microbatch_comm_stage
from .units import (BYTES_PER_ELEMENT, GIB, GRAMS_PER_TONNE, HOURS_PER_YEAR, JOULES_PER_MWH,
                    SECONDS_PER_DAY, SECONDS_PER_MONTH, SECONDS_PER_YEAR, TERA)

INPUT_COLUMNS = (
    # accelerator (at the chosen precision)
    "peak_flop_per_s", "mamf_fraction", "fp8", "fp8_units", "attention_flop_per_s",
    "attention_rate_share",
    # the same at the precision of the attention core's matmuls (16 bits for an fp8 run)
    "core_peak_flop_per_s", "core_mamf_fraction",
    "attention_kv_tokens", "framework_matmul_factor", "mamf_measured",
    # the framework's fixed time per layer per micro-batch beyond the reference stack's
    "framework_layer_overhead_s",
    # the model's own error: 1 for an estimate, a Monte Carlo draw of the measured / predicted
    # step time for an interval (traincost.uncertainty)
    "model_error_factor",
    "hbm_bytes", "hbm_bytes_per_s", "tdp_w", "idle_w", "power_cap_w",
    # the device's link to its host, each direction, and its share of host memory (NaN:
    # unpublished; activation offload only)
    "host_link_bytes_per_s", "host_memory_bytes",
    "scaleup_domain_devices", "scaleup_bytes_per_s", "scaleup_mesh", "scaleout_bytes_per_s",
    "scaleout_oversubscription",
    # the device's measured all-reduce fraction of its scale-up line rate over the reference
    # devices' (1 where none was measured): scales the fitted scale-up efficiency
    "scaleup_efficiency_ratio",
    # the sites a run is split over and the link between two of them
    "sites", "site_link_bytes_per_s", "site_link_latency_s",
    # the job's interruptions per device-second and the wall clock each costs (NaN: the
    # assumptions')
    "interruption_rate_per_device_s", "interruption_lost_s",
    "price_usd_per_h", "capex_usd", "embodied_kgco2e", "bytes_per_element",
    # workload
    "layers", "hidden", "heads", "kv_heads", "head_dim", "attention_window", "window_layers",
    "ffn_hidden", "gated_mlp", "vocab",
    "seq_len", "tied_embeddings", "learned_positions", "experts", "top_k", "shared_experts",
    "moe_ffn_hidden", "dense_layers", "route_nodes", "mtp_depth", "mla", "q_lora_rank", "kv_lora_rank", "qk_rope_head_dim",
    "v_head_dim", "global_batch", "tokens",
    # the grid by calendar month (twelve ones: the annual average) and the start, months
    # from 1 January (NaN: no start date)
    *(f"grid_month_{m:02d}" for m in range(1, 13)), "start_month",
    # software stack
    "flash_attention", "parallel_block", "tp_overlap", "pp_overlap", "dp_overlap",
    "ep_overlap", "balanced_pipeline", "fp8_activations", "optimizer_bf16", "sync_every",
    "frozen_weights",
    # the share of a stage's layers full recompute covers (1: all; the rest recompute none)
    "recompute_fraction",
    # hybrid sharding: the data-parallel ranks sharding together (0: all of a site's)
    "shard_group",
    # the routed experts' tensor-parallel width (0: tp)
    "expert_tp",
    # the framework's memory habits (assemble.stack_memory): what selective recompute
    # keeps, the loss's bytes per logit, the units ZeRO-3 holds gathered, whether it keeps
    # a pipeline stage gathered, and whether ZeRO-3 reduces every micro-batch's gradients
    "selective_policy", "loss_bytes_per_logit", "zero3_gathered_units", "pp_keeps_gathered",
    "grad_sync_every_microbatch",
    # the loss's bytes per logit under tensor parallelism, and what the final norm and the
    # output layer keep (memory.head_bytes)
    "loss_tp_bytes_per_logit", "final_norm_bytes", "output_gathered_input",
    # the share of its tensor-parallel traffic a framework's TP overlap hides (NaN: the
    # window); the bytes a parameter ZeRO-3 gathers and the gradients are reduced in
    "tp_overlap_hidden_share", "gather_bytes_per_param", "grad_reduce_bytes_per_param",
    # the rows of a tile of the framework's grouped expert GEMM (0: plain GEMMs)
    "grouped_gemm_tile_rows",
    # the bytes a weight is held in, and whether the MLP's activation keeps an FP8 input
    "weight_bytes_per_param", "fp8_activation_input",
    # whether the element-wise work runs eager, one PyTorch kernel an operator (else fused)
    "eager_elementwise",
    # layout (cross_site: :data:`traincost.comm.CROSS_SITE_CODES`)
    "devices", "tp", "pp", "cp", "ep", "vpp", "zero", "micro_batch", "recompute", "cross_site",
    # site
    "pue", "grid_gco2e_per_kwh", "is_rental", "electricity_usd_per_kwh", "wue_l_per_kwh",
    "grid_water_l_per_kwh",
)

#: every output of :func:`evaluate` but the breakdown parts: (name, unit, meaning)
OUTPUTS = (
    ("params", "params", "all parameters"),
    ("active_params", "params", "parameters one token uses (top-k experts)"),
    ("model_flop_per_token", "FLOP", "model FLOP per token, forward and backward"),
    ("hardware_flop_per_token", "FLOP", "FLOP per token the devices run, recompute included"),
    ("dp", "-", "data-parallel replicas, devices / (tp pp cp)"),
    ("num_microbatches", "-", "micro-batches per step per replica"),
    ("step_time_s", "s", "time of one optimizer step"),
    ("tokens_per_s", "tokens/s", "training throughput of the whole job"),
    ("tokens_per_s_per_device", "tokens/s", "training throughput per device"),
    ("mfu", "-", "model FLOP utilisation of the dense peak at the precision"),
    ("hfu", "-", "hardware FLOP utilisation (recompute counted)"),
    ("model_flop_per_s_per_device", "FLOP/s", "model FLOP/s achieved per device"),
    ("hardware_flop_per_s_per_device", "FLOP/s", "hardware FLOP/s achieved per device"),
    ("memory_bytes_per_device", "bytes", "peak memory of a first-stage device"),
    ("fits_in_memory", "-", "whether that peak fits in the device's memory (and, under "
     "activation offload, what it offloads in the host memory of the device's share)"),
    ("offloaded_bytes_per_device", "bytes", "activations a first-stage device keeps in host "
     "memory under activation offload (0 otherwise)"),
    ("busy_fraction", "-", "share of the step spent computing or stepping the optimizer"),
    ("device_power_w", "W", "average power of one accelerator"),
    ("host_power_w", "W", "host share of power per device"),
    ("avg_power_w_per_device", "W", "device plus host power, PUE excluded"),
    ("goodput", "-", "share of the wall clock that trains, the rest lost to interruptions"),
    ("grid_factor", "-", "the run's months' grid intensity over the annual figure (1 "
     "without a start date)"),
    ("train_time_s", "s", "wall clock of the whole job, goodput included"),
    ("device_hours", "h", "devices x wall clock"),
    ("it_energy_j", "J", "IT energy of the job"),
    ("facility_energy_j", "J", "facility energy, IT x PUE"),
    ("co2e_g", "gCO2e", "operational emissions, location-based"),
    ("embodied_co2e_g", "gCO2e", "embodied emissions of the devices, amortised"),
    ("water_onsite_m3", "m3", "water the data centre consumes, IT energy x WUE"),
    ("water_offsite_m3", "m3", "water the grid's generation consumes for the energy at the plug"),
    ("water_m3", "m3", "on-site plus off-site water"),
    ("cost_usd", "USD", "cost at the price model"),
    ("depreciation_usd", "USD", "the ownership model's depreciation: devices, servers and "
     "network, and the building (0 when rented)"),
    ("electricity_usd", "USD", "the ownership model's electricity (0 when rented)"),
)

#: step-time parts, in the order they are reported
STEP_PARTS = ("compute", "layer_overhead", "tp_comm", "cp_comm", "ep_comm", "pp_comm",
              "stragglers", "bubble", "dp_comm", "cross_site_comm", "optimizer")
#: memory parts, in the order they are reported
MEMORY_PARTS = ("weights", "gradients", "optimizer", "activations", "gathered", "reserved")


def evaluate(c: dict, assumptions: Assumptions = DEFAULT) -> dict:
    """Evaluate configurations given as columns (scalars or equal-length arrays).

    Parameters
    ----------
    c : dict
        One entry per name in :data:`INPUT_COLUMNS`. ``recompute`` holds integer codes
        (:data:`traincost.workload.RECOMPUTE_CODES`); ``fp8`` (the run's GEMMs in fp8),
        ``fp8_units`` (the device's fp8 peak is above its bf16 peak, :attr:`Accelerator.fp8_units`),
        ``mla``, ``gated_mlp``,
        ``tied_embeddings``, ``learned_positions``, ``is_rental`` and the software-stack
        columns (``flash_attention``, ``parallel_block``, ``tp_overlap``, ``pp_overlap``,
        ``dp_overlap``, ``ep_overlap``, ``balanced_pipeline``, see
        :class:`traincost.Stack`) are booleans. ``flash_attention`` is true for every
        fused kernel (flash or cuDNN); ``attention_flop_per_s`` is the chosen kernel's
        measured rate on the device (:meth:`traincost.Accelerator.attention_flop_per_s`),
        measured at ``attention_kv_tokens`` keys per query row (NaN: used unscaled), and
        ``attention_rate_share`` the chosen kernel's share of it (1; the Triton kernel's
        :attr:`traincost.Assumptions.triton_attention_flash2_fraction`).
    assumptions : Assumptions
        Modelling defaults. [-]

    Returns
    -------
    dict of arrays (SI units), see :mod:`traincost.estimate` for their meaning.

    Notes
    -----
    The stages, in data-flow order (each a function of this module wiring named formulas):
    the layout's geometry (:func:`layout_stage`), the workload's parameters and FLOP
    (:func:`workload_stage`), memory per device (:func:`memory_stage`), compute per
    micro-batch (:func:`compute_stage`), the tensor-, context-, expert- and
    pipeline-parallel communication per micro-batch (:func:`microbatch_comm_stage`), the
    data-parallel exchange and the optimizer per step (:func:`data_parallel_stage`), the
    step's parts (:func:`step_stage`), then throughput, power, energy, carbon and cost
    (:func:`footprint_stage`).

    Step time (Narayanan et al. SC21 Sec. 3.4):
    ``T = m*t_mb + (p-1)/v * t_mb + T_dp,exposed + T_optimizer`` with m = B/(d*b)
    micro-batches and t_mb one micro-batch's time on one stage (compute plus exposed
    tensor-, context-, expert- and pipeline-parallel communication, each with what its
    hidden part slows the compute beside it by, ``t_hidden s/(1 + s)``
    (:func:`traincost.performance.overlap_contention`), plus the expected wait
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
    (DeepSeek-V3 Secs. 3.2.1-3.5.1). Full recompute, or activation offload, of a share f
    of each stage's layers (``recompute_fraction`` < 1, the others keeping their
    activations on the device: Megatron-Core's block method, its
    ``cpu_offloading_num_layers``) costs ``f`` of the whole mode's step and memory parts
    plus ``1 - f`` of no recompute's, each a sum over the layers; a recompute holds the
    one layer it rebuilds whole once, as full recompute does, and offload sends f of the
    whole mode's activations to host memory.
    """
    a = assumptions
    g, w, parts, mem, shard = _step_and_memory(c, a)
    host = shard.host
    partial = (g.full_rc | g.offload) & (c["recompute_fraction"] < 1)
    if any_true(partial):
        # full recompute (or offload) of a share f of the layers, none of the others: the
        # per-layer work, traffic and kept activations add up layer by layer, so the
        # step's and the memory's parts are f of the whole mode's plus (1 - f) of none's;
        # the one layer a recompute rebuilds is live whole once, as under full recompute
        plain = {**c, "recompute": np.where(partial, workload.RECOMPUTE_CODES["none"],
                                            c["recompute"])}
        _, w_none, parts_none, mem_none, _ = _step_and_memory(plain, a)
        f = np.where(partial, c["recompute_fraction"], 1.0)
        parts = {k_: f * v_ + (1 - f) * parts_none[k_] for k_, v_ in parts.items()}
        mem = {k_: f * v_ + (1 - f) * mem_none[k_] for k_, v_ in mem.items()}
        mem["activations"] = mem["activations"] + (1 - f) * shard.recomputing
        w = SimpleNamespace(**{**vars(w), "hw_fpt": f * w.hw_fpt + (1 - f) * w_none.hw_fpt})
        host = f * host
    out = footprint_stage(c, a, g, w, parts, sum(mem.values()))
    # activation offload: what sits in host memory, which must fit there too
    out["offloaded_bytes_per_device"] = host * np.ones_like(out["step_time_s"])
    if any_true(g.offload):
        out["fits_in_memory"] = out["fits_in_memory"] \
            & np.where(g.offload, host <= c["host_memory_bytes"], True)
    out.update({f"step_{k_}_s": v_ for k_, v_ in parts.items()})
    out.update({f"memory_{k_}_bytes": v_ for k_, v_ in mem.items()})
    return out


def _step_and_memory(c: dict, a: Assumptions) -> tuple:
    """The stages up to the step's parts: ``(g, w, parts, mem, shard)``, the layout's
    geometry, the workload, the step's parts (:data:`STEP_PARTS`, times
    ``model_error_factor``), the memory's (:data:`MEMORY_PARTS`) and :func:`memory_stage`'s
    namespace. [s, bytes]"""
    g = layout_stage(c)
    w = workload_stage(c)
    mem, shard = memory_stage(c, a, g, w)
    comp = compute_stage(c, a, g, w, shard.produced, shard.offloaded)
    mb = microbatch_comm_stage(c, a, g, w, comp)
    dp = data_parallel_stage(c, a, g, w, shard, comp)
    parts = {k_: v_ * c["model_error_factor"] for k_, v_ in step_stage(g, comp, mb, dp).items()}
    return g, w, parts, mem, shard


def layout_stage(c: dict) -> SimpleNamespace:
    """The layout's geometry: replicas, micro-batches, the pipeline's stages, flags.

    Returns a namespace with ``dp`` = n/(t p cp), ``m`` = B/(dp b) micro-batches per step,
    ``dp_cp`` (the ranks holding the same weights and reducing their gradients together
    inside a site: data- and context-parallel ones alike, and a distributed optimizer or
    ZeRO-3 shards over all of them, Megatron-Core's ``intra_dp_cp_group``; where the replicas
    cross sites, those of one site; under hybrid sharding, ``shard_group`` of them),
    ``replicas`` (the shard groups of a site, which all-reduce their gradient shards across)
    and the flag ``any_replicas``, ``etp`` (the routed experts' tensor-parallel width:
    ``expert_tp``, else tp) and ``fold`` (the tensor-parallel ranks an expert group folds
    over, tp / etp), ``dp_ep`` (each expert's data-parallel replicas, likewise:
    dp_cp fold / ep),
    ``sites``, ``dp_cross`` and ``pp_cross`` (the data-parallel replicas or the pipeline's
    stages cross the sites), ``relaxed`` (the sites exchange every ``sync_every`` steps), the
    flag ``multi_site``, ``layers_per_stage`` and ``first_stage_layers``
    (:func:`traincost.workload.stage_layers`), ``stage_share`` (the fullest stage's share of
    the layers), ``single_stage``, ``balanced``, ``full_rc``, ``offload`` (activation
    offload), ``s_local`` (tokens of a
    sequence on one context-parallel rank), ``tokens_mb`` (of a micro-batch), ``act_e``
    (activation bytes per element: 16-bit under fp8) and the flags ``moe``, ``any_cp``,
    ``any_zero3`` and ``mtp`` that let a stage skip a term zero on every row (speed only).
    """
    t, p, cp, ep, v = c["tp"], c["pp"], c["cp"], c["ep"], c["vpp"]
    dp = c["devices"] // (t * p * cp)
    sites = c["sites"]
    dp_cross = (sites > 1) & (c["cross_site"] == comm.CROSS_SITE_CODES["dp"])
    relaxed = dp_cross & (c["sync_every"] > 1)
    # replicas across sites shard and reduce inside each site (hybrid sharding: FSDP inside a
    # TPU pod, data parallel between pods, as PaLM ran, Chowdhery et al. 2022 Sec. 4), and
    # exchange across the sites on top (_replicas_across_sites)
    site_dp = dp // np.where(dp_cross, sites, 1)
    # hybrid sharding inside a site: groups of shard_group ranks shard and reduce together,
    # and the groups (replicas) all-reduce their shards across (data_parallel_stage)
    group = np.where(c["shard_group"] > 0, c["shard_group"], site_dp)
    dp_cp = group * cp
    single_stage = p == 1
    balanced = c["balanced_pipeline"] & np.logical_not(single_stage)
    layers_per_stage, first_stage_layers = workload.stage_layers(c["layers"], p, v, balanced)
    s_local = c["seq_len"] / cp
    etp = np.where(c["expert_tp"] > 0, c["expert_tp"], t)
    fold = t // etp
    return SimpleNamespace(
        pp=p, vpp=v, dp=dp, m=c["global_batch"] // (dp * c["micro_batch"]), dp_cp=dp_cp,
        etp=etp, fold=fold, dp_ep=dp_cp * fold // ep, sites=sites, dp_cross=dp_cross,
        replicas=site_dp // group, any_replicas=any_true(site_dp > group),
        pp_cross=(sites > 1) & (c["cross_site"] == comm.CROSS_SITE_CODES["pp"]),
        relaxed=relaxed, multi_site=any_true(sites > 1),
        single_stage=single_stage, balanced=balanced, layers_per_stage=layers_per_stage,
        first_stage_layers=first_stage_layers, stage_share=layers_per_stage / c["layers"],
        full_rc=c["recompute"] == workload.RECOMPUTE_CODES["full"],
        offload=c["recompute"] == workload.RECOMPUTE_CODES["offload"], s_local=s_local,
        tokens_mb=c["micro_batch"] * s_local, act_e=np.maximum(c["bytes_per_element"], 2.0),
        moe=any_true(c["experts"] > 0), any_cp=any_true(cp > 1),
        any_zero3=any_true(c["zero"] == 3), mtp=any_true(c["mtp_depth"] > 0))


def workload_stage(c: dict) -> SimpleNamespace:
    """Parameters, FLOP per token and the attention head sizes of the workload.

    Returns ``params`` (:func:`traincost.workload.parameter_counts`), ``model_fpt`` and
    ``hw_fpt`` (FLOP per token without / with recompute), ``qk_dim`` and ``v_dim``.
    """
    mla = c["mla"]
    params = workload.parameter_counts(
        c["layers"], c["hidden"], c["heads"], c["kv_heads"], c["head_dim"], c["ffn_hidden"],
        c["gated_mlp"], c["vocab"], c["seq_len"], c["tied_embeddings"], c["learned_positions"],
        c["experts"], c["top_k"], c["shared_experts"], c["moe_ffn_hidden"], c["dense_layers"],
        mla, c["q_lora_rank"], c["kv_lora_rank"], c["qk_rope_head_dim"], c["v_head_dim"])
    # sliding-window layers attend to fewer keys (their full-square equivalent)
    keys = workload.attention_keys(c["seq_len"], c["attention_window"], c["window_layers"],
                                   c["layers"])
    attn_core = workload.attention_core_flop_per_token(
        c["layers"], keys, c["heads"], c["head_dim"], mla=mla,
        qk_rope_head_dim=c["qk_rope_head_dim"], v_head_dim=c["v_head_dim"])
    # a per-operator selective policy recomputes a share of the matmuls, not the core
    rho = np.where(c["selective_policy"] == memory.SELECTIVE_POLICIES["odd-matmuls"],
                   workload.odd_matmul_recompute_share(c["hidden"], c["heads"], c["kv_heads"],
                                                       c["head_dim"], c["ffn_hidden"],
                                                       c["gated_mlp"]), np.nan)
    model_fpt, hw_fpt = workload.flop_per_token(params["layer_matmul_active"], c["vocab"],
                                                c["hidden"], attn_core, c["recompute"],
                                                c["frozen_weights"], rho)
    qk_dim, v_dim = workload.attention_head_dims(c["head_dim"], mla, c["qk_rope_head_dim"],
                                                 c["v_head_dim"])
    return SimpleNamespace(params=params, model_fpt=model_fpt, hw_fpt=hw_fpt, qk_dim=qk_dim,
                           v_dim=v_dim, recompute_share=rho, keys=keys)


def memory_stage(c: dict, a: Assumptions, g: SimpleNamespace, w: SimpleNamespace):
    """Memory of a device of the first pipeline stage, which holds the most.

    Returns ``(parts, shard)``: the bytes of each of :data:`MEMORY_PARTS`, and a namespace
    with the parameters on the device (``dense``, ``expert``), ``produced``, the bytes
    of activations a layer produces for one micro-batch (kept or not), which the
    element-wise traffic follows, and under activation offload ``host`` (the activations
    in host memory) and ``offloaded`` (one layer's for one micro-batch, each way over the
    host link; 0 without offload).
    """
    params, L, t = w.params, c["layers"], c["tp"]
    expert_params = params["experts"]
    dense = memory.first_stage_dense_params(
        params["layers"] - expert_params, g.first_stage_layers, L, params["embedding"],
        params["output"], c["pp"], t, c["mtp_depth"] if g.mtp else 0, c["hidden"])
    # Adam state per parameter: fp32 master, m and v, or bf16 m and v without a master copy
    # frozen weights (LoRA) keep no gradients and no optimizer state
    trained = np.logical_not(c["frozen_weights"])
    optimizer_bytes = np.where(c["optimizer_bf16"], a.optimizer_bf16_bytes_per_param,
                               a.optimizer_bytes_per_param) * trained
    grad_bytes = a.grad_bytes_per_param * trained
    states = memory.model_state_bytes(dense, g.dp_cp, c["zero"], c["weight_bytes_per_param"],
                                      grad_bytes, optimizer_bytes)
    if g.moe:
        expert = memory.expert_params_on_device(
            expert_params, g.stage_share, c["ep"], g.etp, c["pp"], c["experts"],
            params["moe_layers"], c["mtp_depth"] if g.mtp else 0)
        states_expert = memory.model_state_bytes(expert, g.dp_ep, c["zero"],
                                                 c["weight_bytes_per_param"], grad_bytes,
                                                 optimizer_bytes)
        states = {k_: states[k_] + states_expert[k_] for k_ in states}
    else:
        expert = 0.0                                 # dense: no expert weights
    stored, full, produced = _layer_activations(c, a, g, w)
    # the loss and what the final norm and output layer keep, held by the last stage
    logits = memory.logits_bytes(
        g.s_local, c["micro_batch"], c["vocab"], t, g.act_e,
        np.where(t > 1, c["loss_tp_bytes_per_logit"], c["loss_bytes_per_logit"])) \
        + memory.head_bytes(g.s_local, c["micro_batch"], c["hidden"], t, a.sequence_parallel,
                            g.act_e, c["final_norm_bytes"], c["output_gathered_input"])
    # ZeRO-3's unsharded working set: a unit or two, or (a framework that keeps them under a
    # pipeline) the whole stage's weights and its gradients, which FSDP2 accumulates across
    # micro-batches in the dtype it reduces them in (FSDPParam.to_accumulated_grad_if_needed);
    # the unsharded weights are what the all-gather delivered, 1 byte where it gathers fp8
    # (torchao's float8 all-gather hands the matmul the gathered fp8 tensor)
    gathered = np.where(
        c["pp_keeps_gathered"] & (c["pp"] > 1) & (c["zero"] >= 3) & (g.dp_cp > 1),
        dense * (c["gather_bytes_per_param"] + c["grad_reduce_bytes_per_param"] * trained),
        memory.zero3_gathered_bytes((params["layers"] - expert_params) / L, params["output"],
                                    c["pp"], t, c["zero"], g.dp_cp, c["gather_bytes_per_param"],
                                    grad_bytes, c["zero3_gathered_units"]))
    activations = memory.stage_activation_bytes(
        stored, full, c["pp"], c["vpp"], g.m, g.layers_per_stage, g.first_stage_layers,
        g.balanced, g.full_rc, logits, c["mtp_depth"] if g.mtp else 0)
    # activation offload: what the layers saved goes to host memory but the last layer of
    # each micro-batch in flight and one layer on its way
    host = 0.0
    if any_true(g.offload):
        resident = np.minimum(memory.offload_resident_bytes(full, c["pp"], c["vpp"], g.m,
                                                            logits), activations)
        host = np.where(g.offload, activations - resident, 0.0)
        activations = np.where(g.offload, resident, activations)
    parts = {
        "weights": states["weights"],
        "gradients": states["gradients"],
        "optimizer": states["optimizer"],
        "activations": activations,
        "gathered": gathered * np.ones_like(np.asarray(activations, dtype=float)),
        "reserved": np.full_like(np.asarray(activations, dtype=float),
                                 a.framework_reserved_bytes),
    }
    return parts, SimpleNamespace(dense=dense, expert=expert, produced=produced,
                                  recomputing=np.where(g.full_rc, full, 0.0), host=host,
                                  offloaded=np.where(g.offload, full, 0.0))


def _attention_rate(c: dict, a: Assumptions, g: SimpleNamespace, w: SimpleNamespace,
                    clock) -> np.ndarray:
    """The fused attention core's rate: the device's measured kernel (or a share of its
    16-bit matmul ceiling) at the keys a call spans (:func:`traincost.performance.
    fused_attention_rate`), in a training step at the share of an isolated kernel's rate
    the GEMMs keep (``in_model_matmul_fraction``: both ceilings are kernels timed alone);
    with windowed layers, whose calls span fewer keys a row, the FLOP-weighted harmonic
    mean of the two kinds of layer. [FLOP/s]"""
    def fused_rate(keys_per_call):
        return performance.fused_attention_rate(
            c["attention_flop_per_s"], clock, c["attention_kv_tokens"], keys_per_call,
            a.flash_causal_work_fraction, a.attention_half_rate_kv_tokens,
            c["core_peak_flop_per_s"] * c["core_mamf_fraction"] * clock,
            a.unmeasured_attention_matmul_fraction) * c["attention_rate_share"] \
            * a.in_model_matmul_fraction
    rate = fused_rate(g.s_local)
    if not any_true(c["attention_window"] > 0):
        return rate
    k_w = workload.window_keys(c["seq_len"], c["attention_window"])
    share = np.where(c["attention_window"] > 0, c["window_layers"], 0) / c["layers"] \
        * k_w / w.keys
    return performance.mixed_rate(rate, fused_rate(np.minimum(k_w, g.s_local)), share)


def _layer_activations(c: dict, a: Assumptions, g: SimpleNamespace, w: SimpleNamespace):
    """One layer's (stored, full, produced) activation bytes for one micro-batch.

    DeepSeek-V3's FP8 activation recipe (fp8 runs only) changes what is kept: with MLA the
    up-projections are recomputed from cached FP8 latents
    (:func:`traincost.memory.mla_fp8_cache_bytes`). The element-wise traffic follows the
    tensors a layer produces, kept or not (``produced``: the layer's full set without the
    recipe; its recomputed norms and SwiGLU outputs are left out, a small share).
    """
    heads, mla = c["heads"], c["mla"]
    moe_share = w.params["moe_layers"] / c["layers"]
    ffn_eff = memory.stored_ffn_width(c["ffn_hidden"], c["moe_ffn_hidden"], c["gated_mlp"],
                                      moe_share, c["top_k"], c["shared_experts"])
    fp8_act = c["fp8_activations"] & c["fp8"]
    any_fp8_act = any_true(fp8_act)
    mla_cache = np.where(mla, memory.mla_fp8_cache_bytes(
        c["kv_lora_rank"], c["qk_rope_head_dim"], c["q_lora_rank"], heads, w.qk_dim, g.act_e),
        np.nan) if any_fp8_act else np.nan
    args = (g.s_local, c["micro_batch"], c["hidden"], heads, c["kv_heads"],
            (w.qk_dim + w.v_dim) / 2, ffn_eff, c["tp"], c["recompute"], a.sequence_parallel,
            g.act_e, c["flash_attention"], c["parallel_block"], a.flash_stats_bytes_per_head,
            moe_share * c["top_k"])
    frozen = c["frozen_weights"]
    stored, full = memory.activation_bytes_per_layer(*args, fp8_act, c["gated_mlp"], mla_cache,
                                                     c["selective_policy"], frozen,
                                                     c["fp8_activation_input"] & c["fp8"])
    produced = memory.activation_bytes_per_layer(*args)[1] \
        if any_fp8_act or any_true(frozen) or any_true(c["fp8_activation_input"]) else full
    return stored, full, produced


def _eager_elementwise_time(c: dict, a: Assumptions, w: SimpleNamespace, tokens_mb):
    """What eager element-wise work (PyTorch without a compiler) adds to a layer's forward
    for one micro-batch beyond the fused traffic: a Llama-style block's norms, rotary
    embedding and SwiGLU, 16-bit, sequence-parallel
    (:func:`traincost.performance.eager_elementwise_passes`); 0 where fused. [s]"""
    eager = c["eager_elementwise"] & c["gated_mlp"]
    if not any_true(eager):
        return 0.0
    heads, kv, d = c["heads"], c["kv_heads"], c["head_dim"]
    mlp_width = memory.stored_ffn_width(c["ffn_hidden"], c["moe_ffn_hidden"], False,
                                        w.params["moe_layers"] / c["layers"], c["top_k"],
                                        c["shared_experts"])
    # rotary widths a token: every query and key head's (MLA: each query head's rotary part
    # and the one rotary key all heads share, DeepSeek-V3 Sec. 2.1.1)
    rope_width = np.where(c["mla"], c["qk_rope_head_dim"] * (heads + 1), (heads + kv) * d)
    passes = performance.eager_elementwise_passes(
        c["hidden"], rope_width, mlp_width, eager, a.eager_rmsnorm_passes, a.eager_rope_passes,
        a.eager_swiglu_passes)
    return passes * tokens_mb * BYTES_PER_ELEMENT["bf16"] / c["tp"] / c["hbm_bytes_per_s"]


def compute_stage(c: dict, a: Assumptions, g: SimpleNamespace, w: SimpleNamespace, produced,
                  offloaded=0.0):
    """Compute time of one micro-batch on the fullest stage, and its parts.

    Returns a namespace with ``flop_rate`` (:func:`traincost.performance.achieved_matmul_rate`
    under the power limit's clock), ``attn_mm`` and ``layer_mm`` (a layer's attention and
    all matmuls, MoE layers averaged in), ``core`` (the attention core's s x s square at
    the 16-bit matmul rate its matmuls run at, fp8 run or not),
    ``fwd_layer``, ``recompute_layer`` (under activation offload the copies' exposed time,
    ``offloaded`` bytes each way, :func:`traincost.performance.offload_exposed_time`) and
    ``compute_mb`` (the stage's compute per micro-batch,
    :func:`traincost.performance.stage_compute_time`) and ``overhead_mb`` (the framework's
    fixed time on them, :func:`traincost.performance.layer_overhead_time`).
    """
    h, t, e, bw = c["hidden"], c["tp"], c["bytes_per_element"], c["hbm_bytes_per_s"]
    heads, kv, d, mla, flash = c["heads"], c["kv_heads"], c["head_dim"], c["mla"], \
        c["flash_attention"]
    # a power limit below the rated maximum clocks the matmul and fused-attention rates down
    clock = power.capped_clock_fraction(c["power_cap_w"], c["tdp_w"], a.power_cap_clock_exponent)
    # the fitted fp8 share applies to fp8 GEMMs at their own, faster peak (H100's); where the
    # fp8 peak is no higher than bf16's the GEMMs run as bf16 ones do, on half the bytes
    flop_rate = performance.achieved_matmul_rate(
        c["peak_flop_per_s"], c["mamf_fraction"],
        performance.framework_matmul_fraction(
            a.in_model_matmul_fraction, c["framework_matmul_factor"],
            np.where(c["mamf_measured"], 1.0, 1.0 / c["mamf_fraction"])),
        c["fp8"] & c["fp8_units"], a.fp8_matmul_fraction, clock)
    # the attention core's own matmuls (Q K^T, the weighted sum) stay in 16 bits in an fp8
    # run (the fp8 recipes cast the linear layers only): the same stack at the 16-bit ceiling
    core_rate = performance.achieved_matmul_rate(
        c["core_peak_flop_per_s"], c["core_mamf_fraction"],
        performance.framework_matmul_fraction(
            a.in_model_matmul_fraction, c["framework_matmul_factor"],
            np.where(c["mamf_measured"], 1.0, 1.0 / c["core_mamf_fraction"])),
        False, 1.0, clock)
    tokens_mb = g.tokens_mb
    attn_w = workload.attention_weights(h, heads, kv, d, mla=mla, q_lora_rank=c["q_lora_rank"],
                                        kv_lora_rank=c["kv_lora_rank"],
                                        qk_rope_head_dim=c["qk_rope_head_dim"],
                                        v_head_dim=c["v_head_dim"])
    up = np.where(c["gated_mlp"], 2, 1)
    attn_mm, mlp_mm, core, elem = performance.layer_forward_time(
        tokens_mb, h, heads, kv, d, w.v_dim, w.qk_dim, attn_w, up * c["ffn_hidden"],
        c["ffn_hidden"], 1.0, tokens_mb, np.where(flash, w.keys, c["seq_len"]), t, produced,
        flop_rate, bw, a.elementwise_traffic_factor, e)       # a materialized core: masked
    core = core * flop_rate / core_rate              # the square's FLOPs at the 16-bit rate
    elem = elem + _eager_elementwise_time(c, a, w, tokens_mb)
    dense_mm = attn_mm + mlp_mm
    L, n_moe = c["layers"], w.params["moe_layers"]
    moe_layer_mm = performance.moe_layer_matmul_time(
        tokens_mb, h, heads, kv, d, w.v_dim, w.qk_dim, attn_w, c["moe_ffn_hidden"],
        c["gated_mlp"], c["experts"], c["ep"], c["top_k"], c["shared_experts"], c["seq_len"],
        t, produced, flop_rate, bw, a.elementwise_traffic_factor, e,
        expert_tp=g.etp, tile_rows=c["grouped_gemm_tile_rows"]) if g.moe else 0.0
    layer_mm = ((L - n_moe) * dense_mm + n_moe * moe_layer_mm) / L if g.moe \
        else (L - n_moe) * dense_mm / L             # the same sum without its zero MoE term
    # a fused kernel's measured rate is its own; where none was measured, a share of the
    # 16-bit matmul ceiling (MAMF, clocked), as the measured kernels' rates are of theirs
    attn_rate = _attention_rate(c, a, g, w, clock)
    core_fwd, core_bwd_extra = performance.attention_core_time(
        core, flash, core_rate, attn_rate, a.flash_causal_work_fraction,
        a.flash_backward_forward_ratio)
    fwd_layer = layer_mm + core_fwd + elem
    # Megatron's selective recomputes the core's scores, which a fused kernel never kept,
    # unless the stack checkpoints the attention call itself (Megatron-Core's Attention
    # wraps core_attention in a checkpoint whatever the kernel): then the fused forward runs
    # again; a per-operator policy (w.recompute_share) recomputes matmuls whatever the kernel
    # MaxText's 'minimal' keeps the weight matmuls' outputs: the call and the element-wise
    # ops run again
    dots = c["selective_policy"] == memory.SELECTIVE_POLICIES["matmul-outputs"]
    selective = (c["recompute"] == workload.RECOMPUTE_CODES["selective"]) \
        & (np.logical_not(flash) | np.isfinite(w.recompute_share) | dots
           | (c["selective_policy"] == memory.SELECTIVE_POLICIES["attention-call"]))
    up_recompute = 0.0       # the MLA up-projections the FP8 recipe recomputes (not under full)
    fp8_act = c["fp8_activations"] & c["fp8"]
    if any_true(fp8_act):
        up_proj = performance.mla_up_projection_time(
            tokens_mb, c["kv_lora_rank"], c["q_lora_rank"], heads, d, w.v_dim, w.qk_dim, t,
            flop_rate, bw, e)
        up_recompute = np.where(fp8_act & mla & np.logical_not(g.full_rc), up_proj, 0.0)
    recompute_layer = performance.recompute_time(fwd_layer, core_fwd, g.full_rc, selective,
                                                 layer_mm, elem, w.recompute_share, dots) \
        + up_recompute
    # frozen weights (LoRA): the matmuls' backward computes no weight gradients
    frozen = c["frozen_weights"]
    if any_true(g.offload):
        # the copies to host memory and back, under the next layer's forward and backward
        backward = 2 * fwd_layer + core_bwd_extra - np.where(frozen, layer_mm, 0.0)
        recompute_layer = np.where(g.offload, performance.offload_exposed_time(
            offloaded, c["host_link_bytes_per_s"] * a.host_copy_efficiency, fwd_layer,
            backward), recompute_layer)
    layer_work = performance.training_work(fwd_layer, core_bwd_extra, recompute_layer,
                                           np.where(frozen, layer_mm, 0.0))
    # the output layer stays in 16 bits in an fp8 run: the recipes cast the blocks' linear
    # layers, not the output projection (Megatron-Core's is a plain ColumnParallelLinear that
    # TransformerEngine's autocast never reaches; torchtitan filters "output" from float8)
    logits_fwd = performance.gemm_time(tokens_mb, h, c["vocab"] / t, core_rate, bw,
                                       np.maximum(e, BYTES_PER_ELEMENT["bf16"]))
    output_work = np.where(frozen, 2, 3) * logits_fwd
    if g.mtp:
        # D multi-token-prediction modules (DeepSeek-V3 Sec. 2.2), each one block of the
        # last layer's kind, a 2h -> h projection and another pass of the output head
        block_fwd = (np.where(c["experts"] > 0, moe_layer_mm, dense_mm) if g.moe
                     else dense_mm) + core_fwd + elem
        block_work = performance.training_work(
            block_fwd, core_bwd_extra,
            performance.recompute_time(block_fwd, core_fwd, g.full_rc, selective,
                                       block_fwd - core_fwd - elem, elem,
                                       w.recompute_share, dots) + up_recompute)
        proj_fwd = performance.gemm_time(tokens_mb, 2 * h, h / t, flop_rate, bw, e)
        output_work = output_work + c["mtp_depth"] * (block_work + 3 * (proj_fwd + logits_fwd))
    # a stack that runs the expert all-to-all beside the compute gives it a share of the SMs
    ep_beside = c["ep_overlap"] & (c["ep"] > 1) & (c["experts"] > 0)
    compute_mb = performance.stage_compute_time(
        g.layers_per_stage, layer_work, output_work, g.balanced, c["layers"], c["pp"],
        np.where(ep_beside, a.ep_overlap_comm_sm_fraction, 0.0))
    return SimpleNamespace(
        flop_rate=flop_rate, attn_mm=attn_mm, layer_mm=layer_mm, core=core, fwd_layer=fwd_layer,
        recompute_layer=recompute_layer, compute_mb=compute_mb, overhead_mb=performance.
        layer_overhead_time(g.layers_per_stage, c["framework_layer_overhead_s"]))


def step_stage(g: SimpleNamespace, comp: SimpleNamespace, mb: dict, dp: dict) -> dict:
    """The step's parts, :data:`STEP_PARTS` in order. [s]

    m micro-batches of ``t_mb`` = compute + the framework's fixed time on the stage's layers
    (``layer_overhead``) + stragglers + exposed tp, cp, ep and pp
    communication (and, where the stages cross sites, the boundary stage's extra), the
    pipeline bubble ``(p - 1)/(v m) * m * t_mb``
    (:func:`traincost.performance.pipeline_bubble_fraction`), the exposed data-parallel
    exchange, what crossing the sites adds (``cross_site_comm``: the boundary stage's
    extra per micro-batch, the fill's link latency and the replicas' exchange across
    sites) and the optimizer step.
    """
    t_mb = comp.compute_mb + comp.overhead_mb + mb["stragglers"] + mb["tp"] + mb["cp"] \
        + mb["ep"] + mb["pp"] + mb["cross_site"]
    m = g.m
    return {
        "compute": m * comp.compute_mb,
        "layer_overhead": m * comp.overhead_mb,
        "tp_comm": m * mb["tp"],
        "cp_comm": m * mb["cp"],
        "ep_comm": m * mb["ep"],
        "pp_comm": m * mb["pp"],
        "stragglers": m * mb["stragglers"],
        "bubble": performance.pipeline_bubble_fraction(g.pp, g.vpp, m) * m * t_mb,
        "dp_comm": dp["dp_comm"],
        "cross_site_comm": m * mb["cross_site"] + mb["cross_site_fill"] + dp["cross_site_comm"],
        "optimizer": dp["optimizer"],
    }


def footprint_stage(c: dict, a: Assumptions, g: SimpleNamespace, w: SimpleNamespace,
                    parts: dict, memory_bytes) -> dict:
    """Throughput, utilisation, power, energy, carbon and cost from the step's parts.

    The device draws its busy power while computing or stepping the optimizer and its
    waiting power otherwise (:func:`traincost.power.device_power_w`), up to its power limit;
    the host's share follows the rating. Wall clock is ``tokens / throughput / goodput``,
    the goodput from the job's interruptions (:func:`traincost.performance.goodput`);
    energy, carbon, water and cost follow from it (:mod:`traincost.footprint`). Returns every
    output of :func:`evaluate` but the breakdown parts.
    """
    n = c["devices"]
    step_time = sum(parts.values())
    tokens_per_s = c["global_batch"] * c["seq_len"] / step_time
    peak = c["peak_flop_per_s"]
    model_flop_s = w.model_fpt * tokens_per_s / n
    hw_flop_s = w.hw_fpt * tokens_per_s / n
    busy = (parts["compute"] + parts["optimizer"]) / step_time
    chip_w = power.device_power_w(c["power_cap_w"], c["idle_w"], busy, a.compute_power_fraction,
                                  a.wait_power_fraction)
    host_w = power.host_power_w(c["tdp_w"], a.host_power_fraction_of_tdp)
    avg_w = chip_w + host_w
    rate, lost = c["interruption_rate_per_device_s"], c["interruption_lost_s"]
    good = performance.goodput(n, np.where(np.isnan(rate), a.interruption_rate_per_device_s,
                                           rate),
                               np.where(np.isnan(lost), a.interruption_lost_s, lost),
                               a.operations_goodput_fraction)
    wall_s = c["tokens"] / tokens_per_s / good
    # the months the run spans (the annual figure without a start date)
    start = c["start_month"]
    grid_factor = 1.0
    if any_true(np.isfinite(start)):
        months = np.stack(np.broadcast_arrays(
            *(c[f"grid_month_{m:02d}"] for m in range(1, 13)), wall_s)[:12], axis=-1)
        grid_factor = np.where(np.isnan(start), 1.0, footprint.window_mean_factor(
            months, np.where(np.isnan(start), 0.0, start), wall_s / SECONDS_PER_MONTH))
    dev_h = footprint.device_hours(n, wall_s)
    it_j = footprint.it_energy_j(avg_w, n, wall_s)
    fac_j = footprint.facility_energy_j(it_j, c["pue"])
    water_on = footprint.onsite_water_m3(it_j, c["wue_l_per_kwh"])
    water_off = footprint.offsite_water_m3(fac_j, c["grid_water_l_per_kwh"])
    cost = footprint.rental_cost_usd(dev_h, c["price_usd_per_h"])
    depreciation = electricity = 0.0                 # the ownership model's parts (rental: 0)
    if any_true(np.logical_not(c["is_rental"])):    # some row needs the ownership model
        # the chips' price plus the servers and network around them (Cottier et al. 2024)
        dep, elec = footprint.ownership_cost_parts_usd(
            dev_h, c["capex_usd"] * (1 + a.ownership_system_overhead_fraction),
            a.ownership_lifetime_years * HOURS_PER_YEAR, fac_j,
            c["electricity_usd_per_kwh"])
        # and the building, for the IT power each device needs at its limit
        dep = dep + footprint.facility_depreciation_usd(
            dev_h, c["power_cap_w"] + host_w, a.facility_capex_usd_per_w,
            a.facility_lifetime_years * HOURS_PER_YEAR)
        cost = np.where(c["is_rental"], cost, dep + elec)
        depreciation = np.where(c["is_rental"], 0.0, dep)
        electricity = np.where(c["is_rental"], 0.0, elec)
    return {
        "params": w.params["total"],
        "active_params": w.params["active"],
        "model_flop_per_token": w.model_fpt,
        "hardware_flop_per_token": w.hw_fpt,
        "dp": g.dp,
        "num_microbatches": g.m,
        "step_time_s": step_time,
        "tokens_per_s": tokens_per_s,
        "tokens_per_s_per_device": tokens_per_s / n,
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
        "goodput": good,
        "grid_factor": grid_factor,
        "train_time_s": wall_s,
        "device_hours": dev_h,
        "it_energy_j": it_j,
        "facility_energy_j": fac_j,
        "co2e_g": footprint.operational_co2e_g(fac_j, c["grid_gco2e_per_kwh"] * grid_factor),
        "embodied_co2e_g": footprint.embodied_co2e_g(
            c["embodied_kgco2e"], n, wall_s,
            a.embodied_lifetime_years * SECONDS_PER_YEAR),
        "water_onsite_m3": water_on,
        "water_offsite_m3": water_off,
        "water_m3": water_on + water_off,
        "cost_usd": cost,
        "depreciation_usd": depreciation,
        "electricity_usd": electricity,
    }


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
        "tokens_per_s_per_device": out["tokens_per_s_per_device"],
        "mfu": out["mfu"],
        "hfu": out["hfu"],
        "model_tflops_per_device": out["model_flop_per_s_per_device"] / TERA,
        "hardware_tflops_per_device": out["hardware_flop_per_s_per_device"] / TERA,
        "memory_gib_per_device": out["memory_bytes_per_device"] / GIB,
        "fits_in_memory": out["fits_in_memory"],
        "offloaded_gib_per_device": out["offloaded_bytes_per_device"] / GIB,
        "goodput": out["goodput"],
        "grid_factor": out["grid_factor"],
        "train_time_days": out["train_time_s"] / SECONDS_PER_DAY,
        "device_hours": out["device_hours"],
        "avg_power_w_per_device": out["avg_power_w_per_device"],
        "it_energy_mwh": out["it_energy_j"] / JOULES_PER_MWH,
        "facility_energy_mwh": out["facility_energy_j"] / JOULES_PER_MWH,
        "co2e_t": out["co2e_g"] / GRAMS_PER_TONNE,
        "embodied_co2e_t": out["embodied_co2e_g"] / GRAMS_PER_TONNE,
        "water_m3": out["water_m3"],
        "water_onsite_m3": out["water_onsite_m3"],
        "water_offsite_m3": out["water_offsite_m3"],
        "cost_usd": out["cost_usd"],
        "busy_fraction": out["busy_fraction"],
        "device_power_w": out["device_power_w"],
        "host_power_w": out["host_power_w"],
    }
    rep.update({f"step_{k}_s": out[f"step_{k}_s"] for k in STEP_PARTS})
    rep.update({f"memory_{k}_gib": out[f"memory_{k}_bytes"] / GIB for k in MEMORY_PARTS})
    return rep
