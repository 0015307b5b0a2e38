"""Assembling the model's input columns from what a user gives: below estimate and search.

:func:`job_inputs` turns the declared job inputs (:data:`traincost.options.JOB_INPUTS`)
into an :class:`Inputs` (a :class:`~traincost.Workload`, :class:`~traincost.Job`,
:class:`~traincost.Stack` and :class:`~traincost.Site`), :func:`system` builds the
:class:`~traincost.System`, :func:`fixed_knobs` validates the layout knobs a user fixed,
and :func:`columns` lays the dataclasses out as the columns
:func:`traincost.model.evaluate` reads. :func:`traincost.estimate`,
:func:`traincost.search`, :func:`traincost.sweep` and the calibration all build their
inputs here, so each is built, defaulted and validated the same way.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from . import catalog, comm, footprint, layout, memory, options
from .assumptions import DEFAULT, Assumptions
from .inputs import (FUSED_ATTENTION_KERNELS, Accelerator, Job, ParallelConfig, Site, Stack,
                     System, Workload)
from .units import (BITS_PER_BYTE, BYTES_PER_ELEMENT, GIGA, MEGA, MILLI, SECONDS_PER_HOUR,
                    SECONDS_PER_MINUTE)

#: the keywords of each container's builder (:data:`traincost.options.INPUTS`)
ARCHITECTURE_INPUTS = tuple(n for n in options.names("Workload") if n != "model")
JOB_KEYWORDS = options.names("Job")
STACK_INPUTS = tuple(n for n in options.names("Stack") if n != "precision")
SITE_INPUTS = options.names("Site")
#: the inputs :func:`build_workload` takes: the preset, the architecture and the job
WORKLOAD_INPUTS = (*ARCHITECTURE_INPUTS, *JOB_KEYWORDS)


@dataclass(frozen=True)
class Inputs:
    """What one training run is, apart from the machine and the layout: the model, the
    job, the software stack and the site (each validated on construction)."""

    workload: Workload
    job: Job
    stack: Stack
    site: Site
    #: each site's own Site in a run over several regions (``site_regions``), whose pooled
    #: PUE and grid (:func:`traincost.footprint.pooled_site`) ``site`` holds; empty: every
    #: site is ``site``
    sites: tuple = ()

    def site_list(self, n: int) -> tuple:
        """The Site of each of ``n`` sites (ValueError naming ``site-regions`` when their
        count is not ``n``)."""
        if not self.sites:
            return (self.site,) * n
        if len(self.sites) != n:
            raise ValueError(f"site-regions: {len(self.sites)} regions given for {n} sites "
                             "(give one region per site, comma-separated)")
        return self.sites


def as_accelerator(accelerator) -> Accelerator:
    """A catalog id or an :class:`~traincost.Accelerator`, as an Accelerator."""
    return accelerator if isinstance(accelerator, Accelerator) else catalog.accelerator(accelerator)


def system(accelerator, devices: int, power_cap=None, scale_up_domain=None,
           scale_up_gbps=None, scale_out_gbps=None, oversubscription=None, sites=None,
           site_link_gbps=None, site_link_latency_ms=None, interruption_rate=None,
           interruption_minutes=None) -> System:
    """The :class:`~traincost.System` of ``devices`` x ``accelerator`` (id or object) with
    an optional power limit [W] (None: the devices' TDP), network tiers other than the
    catalog's: devices per scale-up domain, scale-up and scale-out bandwidth per device and
    direction [Gb/s] (None: the accelerator's), the scale-out fabric's oversubscription
    R:1 (None: 1, non-blocking), and the sites the devices are split over
    with the link between two of them [Gb/s each direction, ms one way] (None: one site,
    the assumptions' link), and the job's interruptions per million device-hours and
    minutes lost to each (None: the assumptions', Llama 3's). ValueError names
    ``power-cap`` for a limit the device cannot take, and the flag of a bandwidth that is
    not above zero.

    >>> system("h100-sxm5-80gb", 16, scale_out_gbps=400).scaleout_bw      # 400e9 / 8 B/s
    50000000000.0
    >>> system("h100-sxm5-80gb", 16, sites=2, site_link_latency_ms=10).site_link_latency_s
    0.01
    """
    for name, val in (("scale-up-gbps", scale_up_gbps), ("scale-out-gbps", scale_out_gbps),
                      ("site-link-gbps", site_link_gbps)):
        if val is not None and not val > 0:
            raise ValueError(f"{name}: {val!r} must be above 0 (Gb/s, each direction)")
    nan = math.nan
    return System(as_accelerator(accelerator), devices,
                  power_cap_w=nan if power_cap is None else float(power_cap),
                  scaleup_domain_devices=scale_up_domain or 0,
                  scaleup_bytes_per_s=_gbps(scale_up_gbps),
                  scaleout_bytes_per_s=_gbps(scale_out_gbps),
                  scaleout_oversubscription=1.0 if oversubscription is None
                  else float(oversubscription),
                  sites=sites or 1, site_link_bytes_per_s=_gbps(site_link_gbps),
                  site_link_latency_s=(nan if site_link_latency_ms is None
                                       else float(site_link_latency_ms) * MILLI),
                  interruption_rate_per_device_s=(
                      nan if interruption_rate is None
                      else float(interruption_rate) / (MEGA * SECONDS_PER_HOUR)),
                  interruption_lost_s=(nan if interruption_minutes is None
                                       else float(interruption_minutes) * SECONDS_PER_MINUTE))


def _gbps(value) -> float:
    """A bandwidth given in Gb/s, in B/s (None: NaN, not given)."""
    return math.nan if value is None else float(value) * GIGA / BITS_PER_BYTE


def site_link(sys_: System, assumptions: Assumptions = DEFAULT) -> tuple[float, float]:
    """The site-pair link a system's sites are joined by: (bandwidth each direction [B/s],
    one-way latency [s]). Where the system leaves them open, buildings of one campus: a
    site's devices x their scale-out bandwidth / ``assumptions.site_link_oversubscription``
    and ``assumptions.site_link_latency_s``.

    >>> site_link(system("h100-sxm5-80gb", 64, sites=2))[0] / 1e9      # 32 x 50 GB/s / 2.8
    571.4285714285714
    """
    bw, lat = sys_.site_link_bytes_per_s, sys_.site_link_latency_s
    if math.isnan(bw):
        bw = comm.campus_link_bytes_per_s(sys_.devices, sys_.sites, sys_.scaleout_bw,
                                          assumptions.site_link_oversubscription)
    return bw, assumptions.site_link_latency_s if math.isnan(lat) else lat


#: stack inputs only an fp8 run has, and why (the ValueError's words)
FP8_ONLY_INPUTS = {
    "fp8_activations": "DeepSeek-V3's recipe caches the inputs of FP8 GEMMs",
    "fp8_param_gather": "the weights are gathered in FP8 for FP8 GEMMs",
    "fp8_params": "the weights are held in FP8 for FP8 GEMMs",
    "fp8_activation_input": "the activation function's input is kept in FP8 in an FP8 recipe",
}


def check_fp8_activations(stack: Stack, precision: str) -> None:
    """ValueError (naming the flag, e.g. ``fp8-activations``) for an FP8 recipe at another
    precision (:data:`FP8_ONLY_INPUTS`): only fp8 runs have FP8 GEMMs whose inputs or
    weights are FP8."""
    for name, why in FP8_ONLY_INPUTS.items():
        if getattr(stack, name) and precision != "fp8":
            raise ValueError(f"{name.replace('_', '-')}: {why}, so it needs precision fp8, "
                             f"not {precision}")


def check_offload(acc, recompute) -> None:
    """ValueError naming ``recompute`` where a layout offloads activations (code or codes
    ``recompute``, :data:`traincost.workload.RECOMPUTE_CODES`; None: open) to the host of
    a device whose host link or host memory the catalog does not publish: the copies
    could be neither timed nor fitted.

    >>> check_offload(catalog.accelerator("tpu-v5p"), 3)
    Traceback (most recent call last):
    ValueError: recompute: offload needs tpu-v5p's host link and host memory, which data/accelerators.csv does not publish (host_link_bytes_per_s, host_memory_bytes); choose none, selective or full
    """
    if recompute is None:
        return
    code = layout.knob_code("recompute", "offload")
    if np.any(np.asarray(recompute) == code) and (
            math.isnan(acc.host_link_bytes_per_s) or math.isnan(acc.host_memory_bytes)):
        raise ValueError(f"recompute: offload needs {acc.id}'s host link and host memory, "
                         "which data/accelerators.csv does not publish (host_link_bytes_per_s, "
                         "host_memory_bytes); choose none, selective or full")


def core_precision(acc, precision: str) -> str:
    """The precision an attention core's matmuls (Q K^T, the weighted sum) run at: the
    run's, but the device's 16-bit one (:attr:`traincost.Accelerator.default_precision`)
    for an fp8 run, whose recipes cast the linear layers only (TransformerEngine's recipes
    leave fp8 attention off, ``fp8_dpa=False``, docs.nvidia.com/deeplearning/
    transformer-engine, Common API, release 2.15). [-]

    >>> from traincost import catalog
    >>> core_precision(catalog.accelerator("h100-sxm5-80gb"), "fp8")
    'bf16'
    >>> core_precision(catalog.accelerator("v100-sxm2-32gb"), "fp16")
    'fp16'
    """
    return acc.default_precision if precision == "fp8" else precision


def columns(sys_: System, inputs: Inputs, precision: str, layout_cols: dict,
            assumptions: Assumptions = DEFAULT) -> dict:
    """Input columns for :func:`traincost.model.evaluate` (scalars broadcast with layouts).

    ``assumptions`` supplies the matmul ceiling of a device without a measured one
    (``default_mamf_fraction``). Layout columns without ``cross_site`` place the data-parallel
    replicas across the sites (moot on one site)."""
    acc, wl, job, stack, site = (sys_.accelerator, inputs.workload, inputs.job, inputs.stack,
                                 inputs.site)
    peak = acc.peak_flop_per_s(precision)
    check_fp8_activations(stack, precision)
    check_offload(acc, layout_cols.get("recompute"))
    price = site.price_usd_per_h if not math.isnan(site.price_usd_per_h) else acc.price_usd_per_h
    return {
        "power_cap_w": sys_.power_limit_w,
        "peak_flop_per_s": peak,
        "mamf_fraction": acc.mamf_fraction(assumptions.default_mamf_fraction, precision),
        "core_peak_flop_per_s": acc.peak_flop_per_s(core_precision(acc, precision)),
        "core_mamf_fraction": acc.mamf_fraction(assumptions.default_mamf_fraction,
                                                core_precision(acc, precision)),
        "mamf_measured": not math.isnan(acc.mamf_bf16_flop_per_s),
        "model_error_factor": 1.0,
        "fp8": precision == "fp8",
        "fp8_units": acc.fp8_units,
        "attention_flop_per_s": acc.attention_flop_per_s(stack.attention_kernel),
        "attention_rate_share": assumptions.triton_attention_flash2_fraction
        if acc.attention_kernel_used(stack.attention_kernel) == "triton" else 1.0,
        "attention_kv_tokens": acc.attention_kv_tokens,
        "framework_matmul_factor": catalog.framework_factor(stack.framework, acc)[0],
        "framework_layer_overhead_s": catalog.framework_layer_overhead(stack.framework, acc),
        "eager_elementwise": eager_elementwise(stack),
        **stack_memory(stack, assumptions),
        "hbm_bytes": acc.hbm_bytes, "hbm_bytes_per_s": acc.hbm_bytes_per_s,
        # NaN where unpublished: an offloading layout then has no time and does not fit
        "host_link_bytes_per_s": acc.host_link_bytes_per_s,
        "host_memory_bytes": acc.host_memory_bytes,
        "tdp_w": acc.tdp_w, "idle_w": acc.idle_w,
        "scaleup_domain_devices": sys_.domain_devices,
        "scaleup_bytes_per_s": sys_.scaleup_bw,
        "scaleup_mesh": acc.scaleup_topology == "mesh",
        # a measured all-reduce fraction of the line rate, over the reference devices' (1:
        # none measured, the fitted efficiency as it is)
        "scaleup_efficiency_ratio": 1.0 if math.isnan(acc.allreduce_busbw_fraction)
        else acc.allreduce_busbw_fraction / assumptions.reference_allreduce_busbw_fraction,
        "scaleout_bytes_per_s": sys_.scaleout_bw,
        "scaleout_oversubscription": sys_.scaleout_oversubscription,
        "sites": sys_.sites,
        # NaN: buildings of one campus at each row's device count (model._site_link)
        "site_link_bytes_per_s": sys_.site_link_bytes_per_s,
        # NaN: the assumptions' (drawn in an interval), resolved in comm_stages
        "site_link_latency_s": sys_.site_link_latency_s,
        # NaN: the assumptions' (drawn in an interval), resolved in model.footprint_stage
        "interruption_rate_per_device_s": sys_.interruption_rate_per_device_s,
        "interruption_lost_s": sys_.interruption_lost_s,
        "price_usd_per_h": price, "capex_usd": acc.capex_usd,
        "embodied_kgco2e": acc.embodied_kgco2e,
        "bytes_per_element": BYTES_PER_ELEMENT[precision],
        # gradients reduce in fp16 for fp16 training, in fp32 for every other precision
        "grad_reduce_bytes_per_param": assumptions.grad_reduce_bytes_per_param
        if precision == "fp16" else assumptions.grad_reduce_fp32_bytes_per_param,
        "layers": wl.layers, "hidden": wl.hidden, "heads": wl.heads,
        "kv_heads": wl.kv_heads_effective, "head_dim": wl.head_dim_effective,
        "attention_window": wl.attention_window, "window_layers": wl.window_layers_effective,
        "ffn_hidden": wl.ffn_hidden_effective, "gated_mlp": wl.gated_mlp, "vocab": wl.vocab,
        "seq_len": job.seq_len, "tied_embeddings": wl.tied_embeddings,
        "learned_positions": wl.learned_positions, "experts": wl.experts, "top_k": wl.top_k,
        "shared_experts": wl.shared_experts,
        "moe_ffn_hidden": wl.moe_ffn_hidden or wl.ffn_hidden_effective,
        "dense_layers": wl.dense_layers, "route_nodes": wl.route_nodes,
        "mtp_depth": wl.mtp_depth,
        "mla": wl.attention == "mla",
        "q_lora_rank": wl.q_lora_rank, "kv_lora_rank": wl.kv_lora_rank,
        "qk_rope_head_dim": wl.qk_rope_head_dim, "v_head_dim": wl.v_head_dim,
        "global_batch": job.global_batch, "tokens": job.tokens,
        # the grid by calendar month (ones: the annual average) and where the run starts
        **dict(zip(GRID_MONTH_COLUMNS, grid_factors(job, site))),
        "start_month": job.start_month if job.start is not None else math.nan,
        "flash_attention": stack.attention_kernel in FUSED_ATTENTION_KERNELS,
        "parallel_block": stack.parallel_block,
        "tp_overlap": "tp" in stack.overlaps, "pp_overlap": "pp" in stack.overlaps,
        "dp_overlap": "dp" in stack.overlaps, "ep_overlap": "ep" in stack.overlaps,
        "balanced_pipeline": stack.balanced_pipeline,
        "fp8_activations": stack.fp8_activations,
        "optimizer_bf16": stack.optimizer_state == "bf16",
        "sync_every": stack.sync_every,
        "frozen_weights": stack.lora,
        "recompute_fraction": stack.recompute_fraction,
        "shard_group": stack.shard_group,
        "expert_tp": stack.expert_tp,
        "devices": sys_.devices,
        "cross_site": comm.CROSS_SITE_CODES["dp"],
        **layout_cols,
        "pue": site.pue, "grid_gco2e_per_kwh": site.grid_gco2e_per_kwh,
        "wue_l_per_kwh": site.wue_l_per_kwh, "grid_water_l_per_kwh": site.grid_water_l_per_kwh,
        "is_rental": site.price_model == "rental",
        "electricity_usd_per_kwh": site.electricity_usd_per_kwh,
    }


def build_workload(model=None, **inputs) -> Workload:
    """A Workload (the architecture) from a preset id and/or explicit architecture flags
    (flags override; a preset so changed is named "(modified)").

    Keywords: :data:`ARCHITECTURE_INPUTS`; None keeps the preset's value or the default.
    A custom architecture (no ``model``) needs ``layers``, ``hidden`` and ``heads``.
    """
    given = {k: v for k, v in options.bind("build_workload", inputs,
                                           ARCHITECTURE_INPUTS).items() if v is not None}
    if model is not None:
        base = catalog.model(model)
        return replace(base, **given, name=f"{base.name} (modified)") if given else base
    missing = [n for n in ("layers", "hidden", "heads") if n not in given]
    if missing:
        raise ValueError(f"{missing[0]}: required unless --model is given")
    gated = bool(given.get("gated_mlp"))
    return Workload(**given, tied_embeddings=not gated, learned_positions=not gated)


#: one column per calendar month of the grid's factor (scalars like every other column, so
#: that sweeps and searches carry them per row)
GRID_MONTH_COLUMNS = tuple(f"grid_month_{m:02d}" for m in range(1, 13))


def grid_months(job: Job, site: Site) -> tuple | None:
    """(twelve factors, source) of the site's grid by calendar month for a job with a start
    date (:func:`traincost.catalog.grid_month_factors`; a site pooled from several regions
    holds its own, :func:`pooled_grid_months`); None without one, for a grid intensity
    given as a number, or where no monthly figures apply. [-]"""
    if job.start is None or site.grid_source == "given" or site.region == "custom":
        return None
    if site.grid_months is not None:
        return site.grid_months or None
    return catalog.grid_month_factors(site.region)


def pooled_grid_months(sites) -> tuple:
    """(twelve factors, source) of the grid by calendar month of several sites, each in its
    own region, pooled as their annual figures are (:func:`traincost.footprint.pooled_site`):
    each site's factors weighted by its share of the emissions at its annual figure,
    ``w_i = PUE_i g_i / sum(PUE_j g_j)`` (each site draws the same IT energy). The mean
    over a window is linear in the factors, so the pooled annual figure times the pooled
    factors' mean over any window is the sum of each site's own. A site without monthly
    figures counts with its annual figure (factors of one); ``()`` where no site has
    any. [-]

    >>> import traincost
    >>> s = job_inputs(model="llama2-7b", global_batch=64, site_regions="DEU,FRA")
    >>> de, fr = (catalog.grid_month_factors(x.region)[0][0] for x in s.sites)   # January
    >>> w = [x.pue * x.grid_gco2e_per_kwh for x in s.sites]
    >>> pooled = pooled_grid_months(s.sites)[0][0]
    >>> round(pooled, 12) == round((w[0] * de + w[1] * fr) / sum(w), 12)
    True
    """
    found = [None if x.region == "custom" else catalog.grid_month_factors(x.region)
             for x in sites]
    if all(f is None for f in found):
        return ()
    factors = np.array([np.ones(12) if f is None else f[0] for f in found])
    w = np.array([x.pue * x.grid_gco2e_per_kwh for x in sites])
    w = w / w.sum() if w.sum() > 0 else np.full(len(sites), 1.0 / len(sites))
    source = "; ".join(dict.fromkeys(f[1] for f in found if f is not None))
    return tuple(float(v) for v in w @ factors), source


def grid_factors(job: Job, site: Site) -> np.ndarray:
    """:func:`grid_months`' factors, twelve ones where there are none (the annual
    figure). [-]"""
    found = grid_months(job, site)
    return np.ones(12) if found is None else np.asarray(found[0])


def build_job(model=None, *, seq_len=None, global_batch=None, tokens=None,
              start=None) -> Job:
    """A Job from the job keywords, ``seq_len`` and ``tokens`` defaulting to preset
    ``model``'s (:func:`traincost.catalog.job`). ``global_batch`` is required."""
    given = options.bind("build_job", dict(seq_len=seq_len, global_batch=global_batch,
                                           tokens=tokens, start=start), JOB_KEYWORDS)
    if given["global_batch"] is None:
        raise ValueError("global-batch: required (sequences per optimizer step)")
    return catalog.job(model, seq_len=given["seq_len"], global_batch=given["global_batch"],
                       tokens=given["tokens"], start=given["start"])


def stack_memory(stack: Stack, assumptions: Assumptions = DEFAULT) -> dict:
    """The memory and collective columns a stack and its framework set
    (``data/frameworks.csv``): its selective
    recompute policy (:data:`traincost.memory.SELECTIVE_POLICIES`; blank: Megatron's),
    the bytes per logit its loss holds (blank: ``assumptions.loss_bytes_per_logit``;
    ``fused_loss``: ``assumptions.fused_loss_bytes_per_logit``) and under tensor parallelism
    (blank: the same), what its final norm keeps per element (blank:
    ``assumptions.final_norm_bytes_per_element``) and whether its output layer keeps the
    all-gathered input (:func:`traincost.memory.head_bytes`), the units ZeRO-3 holds
    gathered (blank: 0, not modelled), whether it keeps a pipeline stage's weights
    gathered between micro-batches, the share of TP traffic its overlap hides, and the bytes
    a parameter ZeRO-3 gathers (``fp8_param_gather`` or ``fp8_params``: 1), the bytes a
    weight is held in (``fp8_params``: 1) and whether the activation function keeps an FP8
    input.

    >>> tt = stack_memory(Stack(framework="torchtitan"))
    >>> tt["selective_policy"], tt["loss_bytes_per_logit"], tt["loss_tp_bytes_per_logit"]
    (1, 12.0, 16.0)
    >>> tt["final_norm_bytes"], tt["output_gathered_input"]
    (6.0, True)
    >>> stack_memory(Stack(framework="torchtitan", fused_loss=True))["loss_bytes_per_logit"]
    4.0
    >>> meg = stack_memory(Stack(framework="megatron"))
    >>> meg["selective_policy"], meg["loss_bytes_per_logit"], meg["zero3_gathered_units"]
    (2, 4.0, 0.0)
    >>> meg["loss_tp_bytes_per_logit"], meg["final_norm_bytes"], meg["output_gathered_input"]
    (4.0, 2.0, False)
    >>> meg["gather_bytes_per_param"], stack_memory(Stack(fp8_param_gather=True))[
    ...     "gather_bytes_per_param"]
    (2.0, 1.0)
    """
    row = catalog.framework(stack.framework)
    policy = row["selective_recompute"]
    loss, units = row["loss_bytes_per_logit"], row["zero3_gathered_units"]
    loss = float(assumptions.loss_bytes_per_logit if math.isnan(loss) else loss)
    loss_tp = row["loss_tp_bytes_per_logit"]
    loss_tp = loss if math.isnan(loss_tp) else float(loss_tp)
    if stack.fused_loss:
        loss = loss_tp = assumptions.fused_loss_bytes_per_logit
    norm = row["final_norm_bytes"]
    return {"selective_policy": memory.SELECTIVE_POLICIES[policy if isinstance(policy, str)
                                                           and policy else "attention-core"],
            "loss_bytes_per_logit": loss,
            "loss_tp_bytes_per_logit": loss_tp,
            "final_norm_bytes": float(assumptions.final_norm_bytes_per_element
                                      if math.isnan(norm) else norm),
            "output_gathered_input": bool(row["output_gathered_input"] == 1),
            "zero3_gathered_units": 0.0 if math.isnan(units) else float(units),
            "pp_keeps_gathered": bool(row["pp_keeps_gathered"] == 1),
            # ZeRO-3 reduces every micro-batch's gradients, not once a step (blank: once)
            "grad_sync_every_microbatch": bool(row["grad_sync_every_microbatch"] == 1),
            "tp_overlap_hidden_share": float(row["tp_overlap_hidden_share"]),
            # the rows of its grouped GEMM's tiles (blank: experts priced as plain GEMMs)
            "grouped_gemm_tile_rows": 0.0 if math.isnan(row["grouped_gemm_tile_rows"])
            else float(row["grouped_gemm_tile_rows"]),
            # the bytes a parameter ZeRO-3 gathers, and a weight is held in
            "gather_bytes_per_param": BYTES_PER_ELEMENT["fp8"]
            if stack.fp8_param_gather or stack.fp8_params else assumptions.weight_bytes_per_param,
            "weight_bytes_per_param": BYTES_PER_ELEMENT["fp8"] if stack.fp8_params
            else assumptions.weight_bytes_per_param,
            "fp8_activation_input": bool(stack.fp8_activation_input)}


def eager_elementwise(stack: Stack) -> bool:
    """Whether the stack runs its element-wise work eager, one PyTorch kernel an operator:
    ``elementwise`` given, or (``auto``) its framework's (``data/frameworks.csv``
    ``elementwise``; blank: fused).

    >>> eager_elementwise(Stack(framework="torchtitan")), eager_elementwise(Stack())
    (True, False)
    >>> eager_elementwise(Stack(framework="torchtitan", elementwise="fused"))
    False
    """
    if stack.elementwise != "auto":
        return stack.elementwise == "eager"
    return catalog.framework(stack.framework)["elementwise"] == "eager"


def build_stack(**inputs) -> Stack:
    """A Stack from the software-stack keywords (:data:`STACK_INPUTS`; None: not given),
    and for those not given the defaults the stack's ``framework`` implies
    (``data/frameworks.csv``: attention kernel, overlaps, eager or fused element-wise work).
    ValueError names an unknown framework.

    >>> build_stack(framework="llm-foundry").overlap
    'dp'
    >>> build_stack(framework="llm-foundry", overlap="none").overlap
    'none'
    """
    given = {k: v for k, v in options.bind("build_stack", inputs, STACK_INPUTS).items()
             if v is not None}
    if "framework" in given:
        row = catalog.framework(given["framework"])
        for name in ("attention_kernel", "overlap", "elementwise"):
            if name not in given and isinstance(row[name], str) and row[name]:
                given[name] = row[name]
    return Stack(**given)


def framework_knobs(fixed: dict, stack: Stack) -> dict:
    """The layout knobs ``fixed`` (:func:`fixed_knobs`) with the sharding ``stack``'s
    framework implies where ZeRO is open (FSDP frameworks: 3), one chunk a pipeline stage
    where vpp is open and its schedule does not interleave (DeepSpeed's), full recompute where
    the stack recomputes a share of the layers (``recompute_fraction`` < 1: a share of
    full recompute, or of activation offload where that is asked for; ValueError naming
    ``recompute-fraction`` beside another mode); otherwise as given.

    >>> framework_knobs({"zero": None, "tp": 2}, Stack(framework="torchtitan"))
    {'zero': 3, 'tp': 2}
    >>> framework_knobs({"vpp": None}, Stack(framework="megatron-deepspeed"))
    {'vpp': 1}
    >>> framework_knobs({"recompute": None}, Stack(recompute_fraction=0.25))
    {'recompute': 2}
    """
    row = catalog.framework(stack.framework)
    for knob in ("zero", "vpp"):
        implied = row[knob]
        if fixed.get(knob) is None and not (isinstance(implied, float) and math.isnan(implied)):
            fixed = {**fixed, knob: int(implied)}
    if stack.recompute_fraction < 1:
        shares = (layout.knob_code("recompute", "full"), layout.knob_code("recompute", "offload"))
        if fixed.get("recompute") not in (None, *shares):
            mode = layout.knob_value("recompute", fixed["recompute"])
            raise ValueError(f"recompute-fraction: {stack.recompute_fraction:g} is a share of "
                             f"the layers under full recompute or offload, not {mode} (give "
                             "--recompute full or offload, or leave it open)")
        if fixed.get("recompute") is None:
            fixed = {**fixed, "recompute": shares[0]}
    return fixed


def site_knobs(fixed: dict, sites: int, spec: Inputs) -> dict:
    """The layout knobs ``fixed`` checked against a run's sites: one region per site
    (``site_list``), and relaxed synchrony (``sync_every`` > 1) only where the
    data-parallel replicas cross several sites, which it then fixes (ValueError naming
    ``sync-every`` otherwise).

    >>> site_knobs({"cross_site": None}, 2, Inputs(None, None, Stack(sync_every=50), None))
    {'cross_site': 0}
    """
    spec.site_list(sites)
    h = spec.stack.sync_every
    dp_code = layout.knob_code("cross_site", "dp")
    if sites == 1:                                   # nothing crosses: the placement is moot
        if fixed.get("cross_site") not in (None, dp_code):
            raise ValueError("cross-site: pp places the pipeline's stages across sites, and "
                             "this run has one (give --sites N)")
        fixed = {**fixed, "cross_site": dp_code}
    if h == 1:
        return fixed
    if sites == 1:
        raise ValueError(f"sync-every: {h} relaxes the exchange between sites, and this run "
                         "has one (give --sites N)")
    if fixed.get("cross_site") not in (None, dp_code):
        raise ValueError(f"sync-every: {h} relaxes the exchange of data-parallel replicas "
                         "across sites, which needs --cross-site dp (or auto), not pp")
    return {**fixed, "cross_site": dp_code}


def _refuse_both(obj_name: str, obj, names, given: dict) -> None:
    """ValueError when an input object and keywords of its own container are both given:
    one would silently override the other."""
    if obj is None:
        return
    clash = [n for n in names if given.get(n) is not None and given[n] != options.option(n).default]
    if clash:
        raise ValueError(f"{clash[0].replace('_', '-')}: given beside {obj_name}=, which "
                         f"already sets it (give the object or the keywords, not both)")


def job_inputs(workload=None, job=None, stack=None, site=None, *,
               assumptions: Assumptions = DEFAULT, **inputs) -> Inputs:
    """The Workload, Job, Stack and Site the job inputs describe, validated.

    An object given (``workload=``, ``job=``, ``stack=``, ``site=``) stands for its
    container's keywords; giving both is refused, naming the keyword.

    Keywords: :data:`traincost.options.JOB_INPUTS`.
    """
    given = options.bind("job_inputs", inputs, options.JOB_INPUTS)
    _refuse_both("workload", workload, ("model", *ARCHITECTURE_INPUTS), given)
    _refuse_both("job", job, JOB_KEYWORDS, given)
    _refuse_both("stack", stack, STACK_INPUTS, given)
    _refuse_both("site", site, SITE_INPUTS, given)
    for name, obj, cls in (("workload", workload, Workload), ("job", job, Job),
                           ("stack", stack, Stack), ("site", site, Site)):
        if obj is not None and not isinstance(obj, cls):
            raise ValueError(f"{name}: {obj!r} is not a {cls.__name__}")
    if workload is None:
        workload = build_workload(given["model"], **{k: given[k] for k in ARCHITECTURE_INPUTS})
    if job is None:
        job = build_job(given["model"], **{k: given[k] for k in JOB_KEYWORDS})
    if stack is None:
        stack = build_stack(**{k: given[k] for k in STACK_INPUTS})
    sites = ()
    if site is None:
        site, sites = _sites(given, assumptions)
    return Inputs(workload, job, stack, site, sites)


def _sites(given: dict, assumptions: Assumptions) -> tuple:
    """The Site of the site keywords and, for ``site_regions``, each site's own (the
    first then pools them, :func:`traincost.footprint.pooled_site`)."""
    price = given["price_per_hour"]
    if price is not None and given["price_model"] == "ownership":
        raise ValueError(f"price-per-hour: {price:g} USD/h is a rental price, and "
                         "price-model ownership costs the run by the devices' purchase "
                         "price and electricity instead (give one or the other)")
    kw = dict(pue_value=given["pue"], wue_value=given["wue"],
              price_usd_per_h=math.nan if price is None else price,
              price_model=given["price_model"], assumptions=assumptions)
    if given["site_regions"] is None:
        return catalog.site(given["region"], grid_intensity_g=given["grid_intensity"],
                            **kw), ()
    for name in ("region", "grid_intensity"):
        if given[name] is not None:
            raise ValueError(f"{name.replace('_', '-')}: give either it or --site-regions "
                             "(each site's grid region), not both")
    regions = [r.strip() for r in given["site_regions"].split(",")]
    if not all(regions):
        raise ValueError(f"site-regions: {given['site_regions']!r} has an empty region "
                         "(comma-separated region ids, one per site)")
    try:
        sites = tuple(catalog.site(r, **kw) for r in regions)
    except ValueError as exc:                        # name the flag the region came from
        raise ValueError(f"site-regions: {str(exc).removeprefix('region: ')}") from None
    pue, (grid, water), (wue,) = footprint.pooled_site(
        [x.pue for x in sites], [[x.grid_gco2e_per_kwh for x in sites],
                                 [x.grid_water_l_per_kwh for x in sites]],
        [[x.wue_l_per_kwh for x in sites]])
    # the pooled PUE is as uncertain as the least-known site's figure, the highest one (an
    # industry survey's default rather than an operator's fleet figure)
    pooled = replace(sites[0], pue=pue, grid_gco2e_per_kwh=grid, wue_l_per_kwh=wue,
                     grid_water_l_per_kwh=water, region="+".join(x.region for x in sites),
                     wue_source="; ".join(dict.fromkeys(x.wue_source for x in sites)),
                     water_source="; ".join(x.water_source for x in sites),
                     pue_source="; ".join(dict.fromkeys(x.pue_source for x in sites)),
                     grid_source="; ".join(x.grid_source for x in sites),
                     pue_scope=max(sites, key=lambda x: x.pue).pue_scope,
                     grid_months=pooled_grid_months(sites))
    return pooled, sites


def fixed_knobs(tp=None, pp=None, cp=None, ep=None, vpp=None, zero=None, micro_batch=None,
                recompute=None, cross_site=None,
                parallel: ParallelConfig | None = None) -> dict:
    """The layout knobs the user set, checked against their declarations
    (:func:`traincost.options.check`; None = open to search, as is ``cross_site="auto"``;
    recompute and cross_site as their codes, :func:`traincost.layout.knob_code`).

    ``parallel`` (a :class:`~traincost.ParallelConfig`) stands for the keywords; giving a
    knob both ways is refused."""
    given = dict(tp=tp, pp=pp, cp=cp, ep=ep, vpp=vpp, zero=zero, micro_batch=micro_batch,
                 recompute=recompute, cross_site=None if cross_site == "auto" else cross_site)
    if parallel is not None:
        if not isinstance(parallel, ParallelConfig):
            raise ValueError(f"parallel: {parallel!r} is not a ParallelConfig")
        for k, v in parallel.knobs().items():
            if v is not None:
                if given[k] is not None:
                    raise ValueError(f"{k.replace('_', '-')}: given beside parallel=, which "
                                     "already sets it (give one or the other)")
                given[k] = v
    fixed = {k: options.check(k, v) for k, v in given.items()}
    return {k: (None if v is None else layout.knob_code(k, v)) for k, v in fixed.items()}
