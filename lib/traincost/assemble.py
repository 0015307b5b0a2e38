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

from . import catalog, options
from .assumptions import DEFAULT, Assumptions
from .inputs import (FUSED_ATTENTION_KERNELS, Accelerator, Job, ParallelConfig, Site, Stack,
                     System, Workload)
from .units import BITS_PER_BYTE, BYTES_PER_ELEMENT, GIGA
from .workload import RECOMPUTE_CODES

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


def as_accelerator(accelerator) -> Accelerator:
    """A catalog id or an :class:`~traincost.Accelerator`, as an Accelerator."""
    return accelerator if isinstance(accelerator, Accelerator) else catalog.accelerator(accelerator)


def system(accelerator, devices: int, power_cap=None, scale_up_domain=None,
           scale_up_gbps=None, scale_out_gbps=None) -> System:
    """The :class:`~traincost.System` of ``devices`` x ``accelerator`` (id or object) with
    an optional power limit [W] (None: the devices' TDP) and network tiers other than the
    catalog's: devices per scale-up domain, scale-up and scale-out bandwidth per device and
    direction [Gb/s] (None: the accelerator's). ValueError names ``power-cap`` for a limit
    the device cannot take.

    >>> system("h100-sxm5-80gb", 16, scale_out_gbps=400).scaleout_bw      # 400e9 / 8 B/s
    50000000000.0
    """
    for name, val in (("scale-up-gbps", scale_up_gbps), ("scale-out-gbps", scale_out_gbps)):
        if val is not None and not val > 0:
            raise ValueError(f"{name}: {val!r} must be above 0 (Gb/s per device, each "
                             "direction)")
    nan = math.nan
    return System(as_accelerator(accelerator), devices,
                  power_cap_w=nan if power_cap is None else float(power_cap),
                  scaleup_domain_devices=scale_up_domain or 0,
                  scaleup_bytes_per_s=(nan if scale_up_gbps is None
                                       else float(scale_up_gbps) * GIGA / BITS_PER_BYTE),
                  scaleout_bytes_per_s=(nan if scale_out_gbps is None
                                        else float(scale_out_gbps) * GIGA / BITS_PER_BYTE))


def check_fp8_activations(stack: Stack, precision: str) -> None:
    """ValueError (naming ``fp8-activations``) for the FP8 activation recipe at another
    precision: it caches the inputs of FP8 GEMMs, which only fp8 runs have."""
    if stack.fp8_activations and precision != "fp8":
        raise ValueError(f"fp8-activations: DeepSeek-V3's recipe caches the inputs of FP8 "
                         f"GEMMs, so it needs precision fp8, not {precision}")


def columns(sys_: System, inputs: Inputs, precision: str, layout_cols: dict,
            assumptions: Assumptions = DEFAULT) -> dict:
    """Input columns for :func:`traincost.model.evaluate` (scalars broadcast with layouts).

    ``assumptions`` supplies the matmul ceiling of a device without a measured one
    (``default_mamf_fraction``)."""
    acc, wl, job, stack, site = (sys_.accelerator, inputs.workload, inputs.job, inputs.stack,
                                 inputs.site)
    peak = acc.peak_flop_per_s(precision)
    check_fp8_activations(stack, precision)
    price = site.price_usd_per_h if not math.isnan(site.price_usd_per_h) else acc.price_usd_per_h
    return {
        "power_cap_w": sys_.power_limit_w,
        "peak_flop_per_s": peak,
        "mamf_fraction": acc.mamf_fraction(assumptions.default_mamf_fraction, precision),
        "mamf_measured": not math.isnan(acc.mamf_bf16_flop_per_s),
        "model_error_factor": 1.0,
        "fp8": precision == "fp8",
        "fp8_units": acc.fp8_units,
        "attention_flop_per_s": acc.attention_flop_per_s(stack.attention_kernel),
        "attention_kv_tokens": acc.attention_kv_tokens,
        "framework_matmul_factor": catalog.framework_factor(stack.framework, acc)[0],
        "hbm_bytes": acc.hbm_bytes, "hbm_bytes_per_s": acc.hbm_bytes_per_s,
        "tdp_w": acc.tdp_w, "idle_w": acc.idle_w,
        "scaleup_domain_devices": sys_.domain_devices,
        "scaleup_bytes_per_s": sys_.scaleup_bw,
        "scaleout_bytes_per_s": sys_.scaleout_bw,
        "price_usd_per_h": price, "capex_usd": acc.capex_usd,
        "embodied_kgco2e": acc.embodied_kgco2e,
        "bytes_per_element": BYTES_PER_ELEMENT[precision],
        "layers": wl.layers, "hidden": wl.hidden, "heads": wl.heads,
        "kv_heads": wl.kv_heads_effective, "head_dim": wl.head_dim_effective,
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
        "flash_attention": stack.attention_kernel in FUSED_ATTENTION_KERNELS,
        "parallel_block": stack.parallel_block,
        "tp_overlap": "tp" in stack.overlaps, "pp_overlap": "pp" in stack.overlaps,
        "dp_overlap": "dp" in stack.overlaps, "ep_overlap": "ep" in stack.overlaps,
        "balanced_pipeline": stack.balanced_pipeline,
        "fp8_activations": stack.fp8_activations,
        "optimizer_bf16": stack.optimizer_state == "bf16",
        "devices": sys_.devices,
        **layout_cols,
        "pue": site.pue, "grid_gco2e_per_kwh": site.grid_gco2e_per_kwh,
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


def build_job(model=None, *, seq_len=None, global_batch=None, tokens=None) -> Job:
    """A Job from the job keywords, ``seq_len`` and ``tokens`` defaulting to preset
    ``model``'s (:func:`traincost.catalog.job`). ``global_batch`` is required."""
    given = options.bind("build_job", dict(seq_len=seq_len, global_batch=global_batch,
                                           tokens=tokens), JOB_KEYWORDS)
    if given["global_batch"] is None:
        raise ValueError("global-batch: required (sequences per optimizer step)")
    return catalog.job(model, seq_len=given["seq_len"], global_batch=given["global_batch"],
                       tokens=given["tokens"])


def build_stack(**inputs) -> Stack:
    """A Stack from the software-stack keywords (:data:`STACK_INPUTS`; None: not given),
    and for those not given the defaults the stack's ``framework`` implies
    (``data/frameworks.csv``: attention kernel, overlaps). ValueError names an unknown
    framework.

    >>> build_stack(framework="llm-foundry").overlap
    'dp'
    >>> build_stack(framework="llm-foundry", overlap="none").overlap
    'none'
    """
    given = {k: v for k, v in options.bind("build_stack", inputs, STACK_INPUTS).items()
             if v is not None}
    if "framework" in given:
        row = catalog.framework(given["framework"])
        for name in ("attention_kernel", "overlap"):
            if name not in given and isinstance(row[name], str) and row[name]:
                given[name] = row[name]
    return Stack(**given)


def framework_knobs(fixed: dict, stack: Stack) -> dict:
    """The layout knobs ``fixed`` (:func:`fixed_knobs`) with the sharding ``stack``'s
    framework implies where ZeRO is open (FSDP frameworks: 3); otherwise as given.

    >>> framework_knobs({"zero": None, "tp": 2}, Stack(framework="torchtitan"))
    {'zero': 3, 'tp': 2}
    """
    zero = catalog.framework(stack.framework)["zero"]
    if fixed.get("zero") is None and not (isinstance(zero, float) and math.isnan(zero)):
        return {**fixed, "zero": int(zero)}
    return fixed


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
    if site is None:
        price = given["price_per_hour"]
        if price is not None and given["price_model"] == "ownership":
            raise ValueError(f"price-per-hour: {price:g} USD/h is a rental price, and "
                             "price-model ownership costs the run by the devices' purchase "
                             "price and electricity instead (give one or the other)")
        site = catalog.site(given["region"], grid_intensity_g=given["grid_intensity"],
                            pue_value=given["pue"],
                            price_usd_per_h=math.nan if price is None else price,
                            price_model=given["price_model"], assumptions=assumptions)
    return Inputs(workload, job, stack, site)


def fixed_knobs(tp=None, pp=None, cp=None, ep=None, vpp=None, zero=None, micro_batch=None,
                recompute=None, parallel: ParallelConfig | None = None) -> dict:
    """The layout knobs the user set, checked against their declarations
    (:func:`traincost.options.check`; None = open to search; recompute as its code).

    ``parallel`` (a :class:`~traincost.ParallelConfig`) stands for the keywords; giving a
    knob both ways is refused."""
    given = dict(tp=tp, pp=pp, cp=cp, ep=ep, vpp=vpp, zero=zero, micro_batch=micro_batch,
                 recompute=recompute)
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
    if fixed["recompute"] is not None:
        fixed["recompute"] = RECOMPUTE_CODES[fixed["recompute"]]
    return fixed
