"""Assembling the model's input columns from what a user gives: below estimate and search.

:func:`job_inputs` turns the declared job inputs (:data:`traincost.options.JOB_INPUTS`)
into a :class:`~traincost.Workload` and a :class:`~traincost.Site`, :func:`fixed_knobs`
validates the layout knobs a user fixed, and :func:`columns` lays the dataclasses out as
the columns :func:`traincost.model.evaluate` reads. :func:`traincost.estimate`,
:func:`traincost.search`, :func:`traincost.sweep` and the calibration all build their
inputs here, so each is built, defaulted and validated the same way.
"""

from __future__ import annotations

import math
from dataclasses import replace

from . import catalog, options
from .assumptions import DEFAULT, Assumptions
from .inputs import FUSED_ATTENTION_KERNELS, Accelerator, Site, Workload
from .units import BYTES_PER_ELEMENT
from .workload import RECOMPUTE_CODES

#: the keywords of :func:`build_workload` and of its architecture part
WORKLOAD_INPUTS = tuple(n for n in options.names("Workload", "Job", "Stack")
                        if n not in ("model", "precision"))
ARCHITECTURE_INPUTS = tuple(n for n in options.names("Workload", "Job") if n != "model")
STACK_INPUTS = tuple(n for n in options.names("Stack") if n != "precision")


def as_accelerator(accelerator) -> Accelerator:
    """A catalog id or an :class:`~traincost.Accelerator`, as an Accelerator."""
    return accelerator if isinstance(accelerator, Accelerator) else catalog.accelerator(accelerator)


def power_cap_w(acc: Accelerator, site: Site) -> float:
    """The power limit ``site`` sets on ``acc``: its TDP when none is set. [W]

    Raises ValueError (naming ``power-cap``) for a limit at or below the device's idle
    draw or above its rated maximum: a firmware limit cannot raise the maximum, and this
    tool does not clamp it silently."""
    cap = site.power_cap_w
    if math.isnan(cap):
        return acc.tdp_w
    if not acc.idle_w < cap <= acc.tdp_w:
        raise ValueError(f"power-cap: {cap:g} W is outside what {acc.id} allows: above its "
                         f"idle draw {acc.idle_w:g} W and at most its rated maximum "
                         f"{acc.tdp_w:g} W")
    return float(cap)


def check_fp8_activations(wl: Workload, precision: str) -> None:
    """ValueError (naming ``fp8-activations``) for the FP8 activation recipe at another
    precision: it caches the inputs of FP8 GEMMs, which only fp8 runs have."""
    if wl.fp8_activations and precision != "fp8":
        raise ValueError(f"fp8-activations: DeepSeek-V3's recipe caches the inputs of FP8 "
                         f"GEMMs, so it needs precision fp8, not {precision}")


def columns(acc: Accelerator, wl: Workload, site: Site, precision: str, devices,
            layout_cols: dict, assumptions: Assumptions = DEFAULT) -> dict:
    """Input columns for :func:`traincost.model.evaluate` (scalars broadcast with layouts).

    ``assumptions`` supplies the matmul ceiling of a device without a measured one
    (``default_mamf_fraction``)."""
    peak = acc.peak_flop_per_s(precision)
    check_fp8_activations(wl, precision)
    price = site.price_usd_per_h if not math.isnan(site.price_usd_per_h) else acc.price_usd_per_h
    return {
        "power_cap_w": power_cap_w(acc, site),
        "peak_flop_per_s": peak,
        "mamf_fraction": acc.mamf_fraction(assumptions.default_mamf_fraction, precision),
        "mamf_measured": not math.isnan(acc.mamf_bf16_flop_per_s),
        "model_error_factor": 1.0,
        "fp8": precision == "fp8",
        "fp8_units": acc.fp8_units,
        "attention_flop_per_s": acc.attention_flop_per_s(wl.attention_kernel),
        "attention_kv_tokens": acc.attention_kv_tokens,
        "framework_matmul_factor": catalog.framework_factor(wl.framework, acc)[0],
        "hbm_bytes": acc.hbm_bytes, "hbm_bytes_per_s": acc.hbm_bytes_per_s,
        "tdp_w": acc.tdp_w, "idle_w": acc.idle_w,
        "scaleup_domain_devices": acc.scaleup_domain_devices,
        "scaleup_bytes_per_s": acc.scaleup_bytes_per_s,
        "scaleout_bytes_per_s": acc.scaleout_bytes_per_s,
        "price_usd_per_h": price, "capex_usd": acc.capex_usd,
        "embodied_kgco2e": acc.embodied_kgco2e,
        "bytes_per_element": BYTES_PER_ELEMENT[precision],
        "layers": wl.layers, "hidden": wl.hidden, "heads": wl.heads,
        "kv_heads": wl.kv_heads_effective, "head_dim": wl.head_dim_effective,
        "ffn_hidden": wl.ffn_hidden_effective, "gated_mlp": wl.gated_mlp, "vocab": wl.vocab,
        "seq_len": wl.seq_len, "tied_embeddings": wl.tied_embeddings,
        "learned_positions": wl.learned_positions, "experts": wl.experts, "top_k": wl.top_k,
        "shared_experts": wl.shared_experts,
        "moe_ffn_hidden": wl.moe_ffn_hidden or wl.ffn_hidden_effective,
        "dense_layers": wl.dense_layers, "route_nodes": wl.route_nodes,
        "mtp_depth": wl.mtp_depth,
        "mla": wl.attention == "mla",
        "q_lora_rank": wl.q_lora_rank, "kv_lora_rank": wl.kv_lora_rank,
        "qk_rope_head_dim": wl.qk_rope_head_dim, "v_head_dim": wl.v_head_dim,
        "global_batch": wl.global_batch, "tokens": wl.tokens,
        "flash_attention": wl.attention_kernel in FUSED_ATTENTION_KERNELS,
        "parallel_block": wl.parallel_block,
        "tp_overlap": "tp" in wl.overlaps, "pp_overlap": "pp" in wl.overlaps,
        "dp_overlap": "dp" in wl.overlaps, "ep_overlap": "ep" in wl.overlaps,
        "balanced_pipeline": wl.balanced_pipeline,
        "fp8_activations": wl.fp8_activations,
        "optimizer_bf16": wl.optimizer_state == "bf16",
        "devices": devices,
        **layout_cols,
        "pue": site.pue, "grid_gco2e_per_kwh": site.grid_gco2e_per_kwh,
        "is_rental": site.price_model == "rental",
        "electricity_usd_per_kwh": site.electricity_usd_per_kwh,
    }


def build_workload(model=None, **inputs) -> Workload:
    """A Workload from a preset id and/or explicit architecture flags (flags override).

    Keywords: :data:`WORKLOAD_INPUTS` (the architecture, the job and the software stack
    of :data:`traincost.options.INPUTS`); None keeps the preset's value or the default.
    """
    given = options.bind("build_workload", inputs, WORKLOAD_INPUTS)
    stack = {k: given[k] for k in STACK_INPUTS if given[k] is not None}
    wl = _build_architecture(model, **{k: given[k] for k in ARCHITECTURE_INPUTS})
    return with_stack(wl, stack)


def with_stack(wl: Workload, stack: dict) -> Workload:
    """``wl`` with the software-stack inputs ``stack`` (name -> value, the ones given), and
    for those not given the defaults the stack's ``framework`` implies
    (``data/frameworks.csv``: attention kernel, overlaps). ValueError names an unknown
    framework.

    >>> from traincost import catalog
    >>> with_stack(catalog.model("llama2-7b"), {"framework": "llm-foundry"}).overlap
    'dp'
    >>> with_stack(catalog.model("llama2-7b"), {"framework": "llm-foundry", "overlap": "none"}).overlap
    'none'
    """
    stack = dict(stack)
    if "framework" in stack:
        row = catalog.framework(stack["framework"])
        for name in ("attention_kernel", "overlap"):
            if name not in stack and isinstance(row[name], str) and row[name]:
                stack[name] = row[name]
    return replace(wl, **stack) if stack else wl


def framework_knobs(fixed: dict, wl: Workload) -> dict:
    """The layout knobs ``fixed`` (:func:`fixed_knobs`) with the sharding ``wl``'s framework
    implies where ZeRO is open (FSDP frameworks: 3); otherwise as given.

    >>> from dataclasses import replace
    >>> from traincost import catalog
    >>> wl = replace(catalog.model("llama2-7b"), framework="torchtitan")
    >>> framework_knobs({"zero": None, "tp": 2}, wl)
    {'zero': 3, 'tp': 2}
    """
    zero = catalog.framework(wl.framework)["zero"]
    if fixed.get("zero") is None and not (isinstance(zero, float) and math.isnan(zero)):
        return {**fixed, "zero": int(zero)}
    return fixed


def _build_architecture(model=None, *, layers=None, hidden=None, heads=None, kv_heads=None,
                        head_dim=None, ffn_hidden=None, vocab=None, gated_mlp=None,
                        experts=None, top_k=None, seq_len=None, global_batch=None,
                        tokens=None) -> Workload:
    if global_batch is None:
        raise ValueError("global-batch: required (sequences per optimizer step)")
    if model is not None:
        base = catalog.model(model, seq_len=seq_len, global_batch=global_batch, tokens=tokens)
        over = {k: v for k, v in dict(layers=layers, hidden=hidden, heads=heads,
                                      kv_heads=kv_heads, head_dim=head_dim,
                                      ffn_hidden=ffn_hidden, vocab=vocab,
                                      gated_mlp=gated_mlp, experts=experts,
                                      top_k=top_k).items() if v is not None}
        if not over:
            return base
        return replace(base, **over, name=f"{base.name} (modified)")
    missing = [n for n, v in (("layers", layers), ("hidden", hidden), ("heads", heads),
                              ("seq-len", seq_len)) if v is None]
    if missing:
        raise ValueError(f"{missing[0]}: required unless --model is given")
    given = {k: v for k, v in dict(tokens=tokens, vocab=vocab).items() if v is not None}
    return Workload(layers=layers, hidden=hidden, heads=heads, seq_len=seq_len,
                    global_batch=global_batch, kv_heads=kv_heads or 0, head_dim=head_dim or 0,
                    ffn_hidden=ffn_hidden or 0, gated_mlp=bool(gated_mlp),
                    tied_embeddings=not gated_mlp, learned_positions=not gated_mlp,
                    experts=experts or 0, top_k=top_k or 0, **given)


def job_inputs(workload=None, site=None, *, assumptions: Assumptions = DEFAULT,
               **inputs) -> tuple[Workload, Site]:
    """The Workload and Site that the job inputs describe (objects given win), validated.

    Keywords: :data:`traincost.options.JOB_INPUTS`.
    """
    given = options.bind("job_inputs", inputs, options.JOB_INPUTS)
    if workload is None:
        workload = build_workload(given["model"], **{k: given[k] for k in WORKLOAD_INPUTS})
    step_tokens = workload.global_batch * workload.seq_len
    if given["tokens"] is not None and given["tokens"] < step_tokens:
        raise ValueError(f"tokens: {given['tokens']:g} is fewer than one optimizer step's "
                         f"{step_tokens:,} (global batch x sequence length)")
    if site is None:
        price, cap = given["price_per_hour"], given["power_cap"]
        if price is not None and given["price_model"] == "ownership":
            raise ValueError(f"price-per-hour: {price:g} USD/h is a rental price, and "
                             "price-model ownership costs the run by the devices' purchase "
                             "price and electricity instead (give one or the other)")
        site = catalog.site(given["region"], grid_intensity_g=given["grid_intensity"],
                            pue_value=given["pue"],
                            price_usd_per_h=math.nan if price is None else price,
                            price_model=given["price_model"],
                            power_cap_w=math.nan if cap is None else cap,
                            assumptions=assumptions)
    return workload, site


def fixed_knobs(tp=None, pp=None, cp=None, ep=None, vpp=None, zero=None, micro_batch=None,
                recompute=None) -> dict:
    """The layout knobs the user set, checked against their declarations
    (:func:`traincost.options.check`; None = open to search; recompute as its code)."""
    given = dict(tp=tp, pp=pp, cp=cp, ep=ep, vpp=vpp, zero=zero, micro_batch=micro_batch,
                 recompute=recompute)
    fixed = {k: options.check(k, v) for k, v in given.items()}
    if fixed["recompute"] is not None:
        fixed["recompute"] = RECOMPUTE_CODES[fixed["recompute"]]
    return fixed
