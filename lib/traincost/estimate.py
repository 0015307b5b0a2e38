"""One configuration in, a full estimate out; and the same over many accelerators.

:func:`estimate` is the one-row case of :func:`traincost.model.evaluate`: it turns the
input dataclasses into columns (:func:`columns`), searches the layout knobs left open
(the same formulas, evaluated over all candidate layouts at once) and wraps the chosen
row in an :class:`Estimate` that can show its breakdown and its assumptions.

Examples
--------
>>> import traincost
>>> est = traincost.estimate(accelerator="a100-sxm4-80gb", devices=64, model="llama2-7b",
...                          global_batch=1024, tokens=2e12, tp=1, pp=1, zero=1,
...                          micro_batch=1, recompute="selective")
>>> 0.2 < est.mfu < 0.7
True
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from . import calibration, catalog, comm, layout
from .catalog import precision_group
from .assumptions import DEFAULT, Assumptions, describe
from .inputs import (FUSED_ATTENTION_KERNELS, OVERLAP_KINDS, RECOMPUTE_MODES, Accelerator,
                     ParallelConfig, Site, Workload, _check_number)
from .model import MEMORY_PARTS, STEP_PARTS, evaluate, report_units
from .units import BYTES_PER_ELEMENT, GIB
from .workload import RECOMPUTE_CODES, last_stage_excess

_CODE_TO_RECOMPUTE = {v: k for k, v in RECOMPUTE_CODES.items()}


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
        "fp8": precision == "fp8",
        "attention_flop_per_s": acc.attention_flop_per_s(wl.attention_kernel),
        "attention_kv_tokens": acc.attention_kv_tokens,
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


@dataclass(frozen=True)
class Estimate:
    """A full estimate for one configuration: inputs, outputs (SI) and breakdowns."""

    accelerator: Accelerator
    workload: Workload
    parallel: ParallelConfig
    site: Site
    devices: int
    precision: str
    values: dict
    assumptions: Assumptions = DEFAULT
    chosen_by_search: tuple = field(default=())
    layouts_evaluated: int = 1

    def __getattr__(self, name):
        values = object.__getattribute__(self, "values")
        if name in values:
            return values[name]
        raise AttributeError(name)

    # --- presentation at the edges (units converted in model.report_units only) --------
    @property
    def report(self) -> dict:
        """Scalar contract columns in edge units (days, MWh, tCO2e, GiB, TFLOP/s)."""
        return report_units(self.values)

    @property
    def train_time_days(self) -> float:
        return self.report["train_time_days"]

    def step_breakdown_s(self) -> dict:
        """Step-time parts [s]: compute, exposed communication per kind, the expected wait for
        stragglers, bubble, optimizer."""
        return {k: self.values[f"step_{k}_s"] for k in STEP_PARTS}

    def memory_breakdown_gib(self) -> dict:
        """Memory parts per device [GiB]."""
        r = self.report
        return {k: r[f"memory_{k}_gib"] for k in MEMORY_PARTS}

    @property
    def caveats(self) -> list:
        """Where this estimate leans on the least-tested parts of the model (plain text).

        ZeRO-3 / FSDP with its data-parallel group spread over several scale-up domains
        gathers the weights across nodes every pass. The model runs those gathers at one
        device's scale-out share, calibrated on one source only (DeepSpeed ZeRO-3 in
        Narayanan et al. SC21 Table 2; see ``traincost.calibrate.by_source``); MosaicML's
        PyTorch FSDP benchmarks on H100 (llm-foundry) ran about twice as fast as that.

        fp8: the share of the matmul efficiency fp8 GEMMs keep is fitted on NVIDIA's H100
        NeMo (TransformerEngine) FP8 benchmarks alone (``traincost.calibrate.fit_fp8``).

        A device without a measured matmul ceiling runs its GEMMs at
        ``default_mamf_fraction`` of its peak; measured devices spread widely around it.

        A fused attention kernel on a device with no attention measurement runs at the
        matmul rate, faster than any measured device's fused kernel runs relative to its
        matmul ceiling.

        cuDNN attention on a device without a measured cuDNN rate runs at the flash rate;
        flash attention on a device whose measured cuDNN rate is the faster says so
        (TransformerEngine runs cuDNN's kernel first on Hopper and Blackwell).

        An uneven pipeline split whose last stage carries the output layer whole, at least
        ``output_imbalance_caveat_fraction`` more work than the average stage
        (:func:`traincost.workload.last_stage_excess`): the model spreads that layer over
        the stages.

        DeepSeek-V3's FP8 activation recipe (``fp8_activations``): checked by one run, and
        the element-wise work of its recomputed norms and SwiGLU outputs is left out.

        A power limit below ``power_cap_measured_min_fraction`` of the device's TDP: the
        clock law behind it was measured between 75% and 100% of the rating.

        An MFU above the highest any measured published run of the same precision group
        reached (:func:`traincost.catalog.published_mfu_record`; model gaps left out).

        MoE with experts spread over devices: the all-to-all and the expert GEMMs assume
        every expert gets its even share of the tokens (k/E); routing imbalance is not
        modelled. The one MoE run checked end to end, DeepSeek-V3's pre-training (report
        Table 1), balances its experts by design (its error: ``traincost validate``); a run
        whose routing is less even takes longer.
        """
        p, r = self.parallel, self.report
        dp = int(r["dp"])
        out = []
        if p.zero == 3 and dp > 1 and comm.crosses_domain(
                dp, p.tp * p.cp, self.accelerator.scaleup_domain_devices):
            out.append(
                f"ZeRO-3 gathers the weights across nodes (dp={dp} spans more than one "
                f"{self.accelerator.scaleup_domain_devices}-device scale-up domain): the model "
                "runs them at one device's network share, as DeepSpeed ZeRO-3 measured in "
                "Megatron-LM SC21 Table 2; PyTorch FSDP runs (MosaicML llm-foundry) were about "
                "twice as fast. Treat this step time as the slow end.")
        if self.precision == "fp8":
            f = self.assumptions.fp8_matmul_fraction
            out.append(
                f"fp8: the GEMMs keep {f:.2f} of the bf16 matmul efficiency, a share fitted on "
                "NVIDIA's H100 NeMo (TransformerEngine) FP8 benchmarks only; other fp8 recipes "
                "and other devices are not checked against a measurement.")
        acc = self.accelerator
        if math.isnan(acc.mamf_bf16_flop_per_s):
            lo, hi = catalog.measured_mamf_span()
            out.append(
                f"no measured matmul ceiling (MAMF) for {acc.id}: "
                f"{self.assumptions.default_mamf_fraction:.0%} of its peak is assumed, where "
                f"the measured devices reach {lo:.0%}-{hi:.0%} (data/accelerators.csv), and "
                "a compute-bound step scales with that share.")
        kernel = acc.attention_kernel_used(self.workload.attention_kernel)
        if kernel in FUSED_ATTENTION_KERNELS and not acc.measured_attention(kernel):
            lo, hi = catalog.measured_attention_span()
            out.append(
                f"attention: no fused-attention measurement for {acc.id}, so its attention "
                f"core runs at the matmul rate; on the measured devices the faster fused "
                f"kernel reaches {lo:.0%}-{hi:.0%} of their matmul ceilings "
                "(data/accelerators.csv). Treat the attention share of this step as the fast "
                "end.")
        if kernel == "cudnn" and not acc.measured_attention("cudnn"):
            out.append(
                f"cudnn attention: no cuDNN fused-attention measurement for "
                f"{acc.id}; its flash-attention rate is used (TransformerEngine "
                "finds flash-attention the faster of the two on Ampere).")
        if kernel == "flash" and acc.measured_attention("flash") \
                and acc.attention_kernel_used("auto") == "cudnn":
            speedup = acc.attention_flop_per_s("cudnn") / acc.attention_flop_per_s("flash")
            out.append(
                f"flash attention: on {acc.id}, cuDNN's fused attention (TransformerEngine's "
                f"first choice on Hopper and Blackwell) was measured at {speedup:.1f}x "
                "FlashAttention-2's rate (data/accelerators.csv); if your stack runs it, "
                "estimate with the cudnn attention kernel.")
        if self.workload.fp8_activations:
            out.append(
                "fp8 activations: DeepSeek-V3's memory recipe, checked only by that run's "
                "published layout fitting in 80 GB; the element-wise work of recomputing its "
                "norms and SwiGLU outputs is left out of the step time (the recomputed MLA "
                "up-projections are in it).")
        cap = power_cap_w(acc, self.site)
        if cap / acc.tdp_w < self.assumptions.power_cap_measured_min_fraction:
            out.append(
                f"power cap: {cap:g} W is {cap / acc.tdp_w:.0%} of {acc.id}'s {acc.tdp_w:g} W "
                "rating; the law that slows its matmuls under a limit, "
                f"(cap/TDP)^{self.assumptions.power_cap_clock_exponent:g}, was measured "
                f"between {self.assumptions.power_cap_measured_min_fraction:.0%} and 100% of "
                "the rating (the same dies at two limits, data/accelerators.csv), so this "
                "speed and power are an extrapolation.")
        wl = self.workload
        excess = float(last_stage_excess(p.pp, wl.vocab, wl.hidden, r["model_flop_per_token"]))
        uneven = not wl.balanced_pipeline
        if uneven and excess >= self.assumptions.output_imbalance_caveat_fraction:
            out.append(
                f"pipeline: the last of the {p.pp} stages computes the output layer "
                f"({wl.vocab:,}-token vocabulary) whole, {excess:.0%} more work than the "
                "average stage, and a 1F1B pipeline runs at its slowest stage's pace. The "
                "model spreads the output layer over the stages, which fits Megatron-LM's "
                "SC21 runs, but it predicts NVIDIA's NeMo runs of Nemotron-4 340B and Llama "
                "3.1 70B faster than they ran (`traincost validate`). Treat this step time as "
                f"up to {excess:.0%} optimistic, or balance the split (--balanced-pipeline).")
        group = precision_group(self.precision)
        record, case = catalog.published_mfu_record(group)
        if float(r["mfu"]) > record:
            out.append(
                f"MFU {float(r['mfu']):.0%} is above the highest any measured published "
                f"{group} run reached, {record:.1%} ({case}, `traincost validate --case "
                f"{case}`). A result better than anything measured is suspect until "
                "explained: treat this step time as the fast end.")
        if self.workload.experts and p.ep > 1:
            out.append(
                f"MoE: the expert all-to-all and GEMMs assume each of the {self.workload.experts} "
                "experts gets an even share of the tokens; routing imbalance is not modelled. "
                "The one MoE run checked, DeepSeek-V3's pre-training, balances its experts by "
                "design (see `traincost validate` for its error); with less even routing, "
                "treat this step time as the fast end.")
        return out

    @property
    def validation(self) -> dict:
        """How far the model lands from published runs like this one, out of sample.

        The calibration's leave-one-out errors (each published run predicted by constants
        fitted without it; ``python -m traincost.calibrate``) over the runs on this
        accelerator in this precision group (:func:`precision_group`), beside the same over
        every run of the group. A device with no published run in the calibration has
        ``accelerator_runs = 0`` and no error of its own.

        Returns
        -------
        dict: ``group``, ``accelerator_runs``, ``accelerator_loo_mape_pct``,
        ``accelerator_loo_worst_pct`` (None without runs), ``runs``, ``loo_mape_pct``,
        ``loo_worst_pct``. [%]
        """
        group = precision_group(self.precision)
        m = calibration.METRICS
        every = (m["fp8_cases"], m["fp8_loo_mape_pct"], m["fp8_loo_worst_pct"]) \
            if group == "fp8" else (m["cases"], m["loo_mape_pct"], m["loo_worst_pct"])
        own = calibration.BY_ACCELERATOR.get((self.accelerator.id, group))
        return {"group": group,
                "accelerator_runs": own[0] if own else 0,
                "accelerator_loo_mape_pct": own[2] if own else None,
                "accelerator_loo_worst_pct": own[3] if own else None,
                "runs": every[0], "loo_mape_pct": every[1], "loo_worst_pct": every[2]}

    def accuracy_note(self) -> str:
        """:attr:`validation` in one sentence (plain text)."""
        v, acc = self.validation, self.accelerator.id
        if v["accelerator_runs"]:
            return (f"out of sample, {v['accelerator_loo_mape_pct']:.1f}% mean and "
                    f"{v['accelerator_loo_worst_pct']:.1f}% worst error on the "
                    f"{v['accelerator_runs']} published {v['group']} runs on {acc} "
                    f"(leave-one-out throughput; {v['loo_mape_pct']:.1f}% over all "
                    f"{v['runs']}; traincost validate)")
        return (f"no published {v['group']} run on {acc} checks this estimate; over the "
                f"{v['runs']} runs on other devices the out-of-sample error is "
                f"{v['loo_mape_pct']:.1f}% mean, {v['loo_worst_pct']:.1f}% worst "
                "(leave-one-out throughput; traincost validate), and this device's is unknown")

    def to_dict(self) -> dict:
        """The public JSON contract (see DESIGN.md)."""
        r = self.report
        p = self.parallel
        flat = ("params", "active_params", "model_flop_per_token", "hardware_flop_per_token",
                "step_time_s", "tokens_per_s", "mfu", "hfu", "model_tflops_per_device",
                "hardware_tflops_per_device", "memory_gib_per_device")
        after = ("train_time_days", "device_hours", "avg_power_w_per_device", "it_energy_mwh",
                 "facility_energy_mwh")
        return {
            "accelerator": self.accelerator.id,
            "devices": self.devices,
            "precision": self.precision,
            "workload": self.workload.name,
            "stack": {"attention_kernel": self.workload.attention_kernel,
                      "attention_kernel_used": self.accelerator.attention_kernel_used(
                          self.workload.attention_kernel),
                      "parallel_block": bool(self.workload.parallel_block),
                      "overlap": [k for k in OVERLAP_KINDS if k in self.workload.overlaps],
                      "balanced_pipeline": bool(self.workload.balanced_pipeline),
                      "fp8_activations": bool(self.workload.fp8_activations),
                      "optimizer_state": self.workload.optimizer_state},
            "parallel": {"tp": p.tp, "pp": p.pp, "dp": int(r["dp"]), "cp": p.cp, "ep": p.ep,
                         "vpp": p.vpp, "zero": p.zero, "micro_batch": p.micro_batch,
                         "recompute": p.recompute,
                         "num_microbatches": int(r["num_microbatches"]),
                         "chosen_by_search": list(self.chosen_by_search),
                         "layouts_evaluated": self.layouts_evaluated},
            **{k: r[k] for k in flat},
            "hbm_gib_per_device": self.accelerator.hbm_bytes / GIB,
            "fits_in_memory": bool(r["fits_in_memory"]),
            "tokens": self.workload.tokens,
            **{k: r[k] for k in after},
            "power_cap_w": _finite_or_none(self.site.power_cap_w),
            "pue": self.site.pue,
            "grid_gco2e_per_kwh": self.site.grid_gco2e_per_kwh,
            "region": self.site.region,
            "co2e_t": r["co2e_t"],
            "embodied_co2e_t": _finite_or_none(r["embodied_co2e_t"]),
            "cost_usd": _finite_or_none(r["cost_usd"]),
            "price_model": self.site.price_model,
            "breakdown": {
                "step_time_s": self.step_breakdown_s(),
                "memory_gib": self.memory_breakdown_gib(),
                "power_w": {"device": r["device_power_w"], "host": r["host_power_w"],
                            "busy_fraction": r["busy_fraction"]},
            },
            "sources": {"pue": self.site.pue_source, "grid": self.site.grid_source},
            "caveats": self.caveats,
            "validation": self.validation,
            "accuracy": self.accuracy_note(),
        }

    def assumptions_table(self) -> pd.DataFrame:
        """The modelling assumptions behind this estimate (value, unit, source, rationale)."""
        return describe(self.assumptions)


def attention_label(stack: dict) -> str:
    """The attention kernel an estimate ran (``to_dict()["stack"]``), marked when ``auto``
    chose it: ``"cudnn (auto)"``, ``"flash"``. [-]"""
    used = stack["attention_kernel_used"]
    return f"{used} (auto)" if stack["attention_kernel"] == "auto" else used


def _finite_or_none(x):
    x = float(x)
    return x if math.isfinite(x) else None


def _scalarise(values: dict, i: int) -> dict:
    """Row i of evaluate()'s outputs (which mix scalars and arrays) as Python scalars."""
    out = {}
    for k, v in values.items():
        arr = np.asarray(v).reshape(-1)
        x = arr[i if arr.size > 1 else 0]
        out[k] = bool(x) if arr.dtype == bool else float(x)
    return out


def _as_accelerator(accelerator) -> Accelerator:
    return accelerator if isinstance(accelerator, Accelerator) else catalog.accelerator(accelerator)


def build_workload(model=None, *, layers=None, hidden=None, heads=None, kv_heads=None,
                   ffn_hidden=None, vocab=None, gated_mlp=None, experts=None, top_k=None,
                   seq_len=None, global_batch=None, tokens=None, attention_kernel=None,
                   parallel_block=None, overlap=None, balanced_pipeline=None,
                   fp8_activations=None, optimizer_state=None) -> Workload:
    """A Workload from a preset id and/or explicit architecture flags (flags override);
    ``attention_kernel``, ``parallel_block``, ``overlap``, ``balanced_pipeline``,
    ``fp8_activations`` and ``optimizer_state`` set its software stack."""
    stack = {k: v for k, v in dict(attention_kernel=attention_kernel,
                                   parallel_block=parallel_block, overlap=overlap,
                                   balanced_pipeline=balanced_pipeline,
                                   fp8_activations=fp8_activations,
                                   optimizer_state=optimizer_state).items()
             if v is not None}
    wl = _build_architecture(model, layers=layers, hidden=hidden, heads=heads,
                             kv_heads=kv_heads, ffn_hidden=ffn_hidden, vocab=vocab,
                             gated_mlp=gated_mlp, experts=experts, top_k=top_k,
                             seq_len=seq_len, global_batch=global_batch, tokens=tokens)
    if not stack:
        return wl
    from dataclasses import replace
    return replace(wl, **stack)


def _build_architecture(model=None, *, layers=None, hidden=None, heads=None, kv_heads=None,
                        ffn_hidden=None, vocab=None, gated_mlp=None, experts=None, top_k=None,
                        seq_len=None, global_batch=None, tokens=None) -> Workload:
    if global_batch is None:
        raise ValueError("global-batch: required (sequences per optimizer step)")
    if model is not None:
        base = catalog.model(model, seq_len=seq_len, global_batch=global_batch, tokens=tokens)
        over = {k: v for k, v in dict(layers=layers, hidden=hidden, heads=heads,
                                      kv_heads=kv_heads, ffn_hidden=ffn_hidden, vocab=vocab,
                                      gated_mlp=gated_mlp, experts=experts,
                                      top_k=top_k).items() if v is not None}
        if not over:
            return base
        from dataclasses import replace
        return replace(base, **over, name=f"{base.name} (modified)")
    missing = [n for n, v in (("layers", layers), ("hidden", hidden), ("heads", heads),
                              ("seq-len", seq_len)) if v is None]
    if missing:
        raise ValueError(f"{missing[0]}: required unless --model is given")
    return Workload(layers=layers, hidden=hidden, heads=heads, seq_len=seq_len,
                    global_batch=global_batch, tokens=300e9 if tokens is None else tokens,
                    vocab=51200 if vocab is None else vocab, kv_heads=kv_heads or 0,
                    ffn_hidden=ffn_hidden or 0, gated_mlp=bool(gated_mlp),
                    tied_embeddings=not gated_mlp, learned_positions=not gated_mlp,
                    experts=experts or 0, top_k=top_k or 0)


def job_inputs(workload=None, site=None, *, model=None, layers=None, hidden=None, heads=None,
               kv_heads=None, ffn_hidden=None, vocab=None, gated_mlp=None, experts=None,
               top_k=None, seq_len=None, global_batch=None, tokens=None, attention_kernel=None,
               parallel_block=None, overlap=None, balanced_pipeline=None,
               fp8_activations=None, optimizer_state=None, region=None, grid_intensity=None,
               pue=None,
               price_per_hour=None, price_model="rental", power_cap=None,
               assumptions: Assumptions = DEFAULT) -> tuple[Workload, Site]:
    """The Workload and Site that the flags describe (objects given win), validated."""
    if workload is None:
        workload = build_workload(model, layers=layers, hidden=hidden, heads=heads,
                                  kv_heads=kv_heads, ffn_hidden=ffn_hidden, vocab=vocab,
                                  gated_mlp=gated_mlp, experts=experts, top_k=top_k,
                                  seq_len=seq_len, global_batch=global_batch, tokens=tokens,
                                  attention_kernel=attention_kernel,
                                  parallel_block=parallel_block, overlap=overlap,
                                  balanced_pipeline=balanced_pipeline,
                                  fp8_activations=fp8_activations, optimizer_state=optimizer_state)
    if tokens is not None:
        _check_number("tokens", tokens, minimum=0)
    if site is None:
        site = catalog.site(region, grid_intensity_g=grid_intensity, pue_value=pue,
                            price_usd_per_h=math.nan if price_per_hour is None else price_per_hour,
                            price_model=price_model,
                            power_cap_w=math.nan if power_cap is None else power_cap,
                            assumptions=assumptions)
    return workload, site


def fixed_knobs(tp=None, pp=None, cp=None, ep=None, vpp=None, zero=None, micro_batch=None,
                recompute=None) -> dict:
    """The layout knobs the user set, validated (None = open to search; recompute as code)."""
    fixed = {"tp": tp, "pp": pp, "cp": cp, "ep": ep, "vpp": vpp, "zero": zero,
             "micro_batch": micro_batch}
    for k, val in fixed.items():
        if val is not None:
            _check_number(k.replace("_", "-"), val, minimum=0 if k != "zero" else -1,
                          integer=True)
    if zero is not None and zero not in (0, 1, 2, 3):
        raise ValueError(f"zero: {zero!r} is not one of 0, 1, 2, 3")
    if recompute is not None and recompute not in RECOMPUTE_MODES:
        raise ValueError(f"recompute: {recompute!r} is not one of {', '.join(RECOMPUTE_MODES)}")
    fixed["recompute"] = None if recompute is None else RECOMPUTE_CODES[recompute]
    return {k: (None if v is None else int(v)) for k, v in fixed.items()}


def estimate(accelerator=None, devices=None, *, workload: Workload | None = None,
             model: str | None = None, layers=None, hidden=None, heads=None, kv_heads=None,
             ffn_hidden=None, vocab=None, gated_mlp=None, experts=None, top_k=None,
             seq_len=None, global_batch=None, micro_batch=None, tp=None, pp=None, cp=None,
             ep=None, vpp=None, zero=None, recompute=None, precision=None, tokens=None,
             attention_kernel=None, parallel_block=None, overlap=None, balanced_pipeline=None,
             fp8_activations=None, optimizer_state=None, region=None, grid_intensity=None,
             pue=None,
             price_per_hour=None,
             price_model="rental", power_cap=None, site: Site | None = None,
             assumptions: Assumptions = DEFAULT) -> Estimate:
    """Estimate time, energy, carbon and cost of one training run.

    Every ``traincost estimate`` flag is a keyword here (dashes become underscores).
    Layout knobs left as ``None`` are chosen by evaluating every valid candidate layout
    with the same formulas and keeping the fastest that fits in memory (if none fits,
    the one needing the least memory, reported with ``fits_in_memory=False``).

    Parameters
    ----------
    accelerator : str or Accelerator
        Catalog id or object.
    devices : int
        Number of devices. [-]
    workload : Workload, optional
        Instead of ``model``/architecture flags.
    model : str, optional
        Preset id; architecture flags given too override it.
    precision : str, optional
        bf16, fp16, fp8 or tf32: the peak FLOP/s MFU is measured against; by default
        bf16, or fp16 on devices without bf16 (V100). [-]
    tokens : float
        Training tokens. [tokens]
    attention_kernel, parallel_block, overlap, balanced_pipeline, fp8_activations : optional
        The software stack (``auto``/``flash``/``cudnn``/``materialized``; parallel
        attention + MLP block; overlapped communication, a subset of ``tp,pp,dp,ep``;
        embedding and loss counted as layers in the pipeline split; DeepSeek-V3's FP8
        activation recipe, precision fp8 only), see :class:`Workload`.
    optimizer_state : str, optional
        Adam state: ``fp32`` (default; master weights, momentum and variance, 12 bytes per
        parameter) or ``bf16`` (momentum and variance, no master copy: 4 bytes), see
        :class:`Workload`. [-]
    region : str, optional
        Grid region id (``traincost catalog regions``); world average if omitted.
    grid_intensity : float, optional
        Grid intensity instead of a region. [gCO2e/kWh]
    pue : float, optional
        Power usage effectiveness; by default the cloud provider's or the industry's. [-]
    price_per_hour : float, optional
        Price per device-hour instead of the catalog's. [USD/h]
    price_model : str
        ``rental`` or ``ownership``.
    power_cap : float, optional
        Power limit on every device (``nvidia-smi -pl``), above its idle draw and at most
        its TDP; the rated maximum if omitted. Matmul and fused attention then run at
        (cap / TDP)^``power_cap_clock_exponent`` of their rate and the device's power range
        ends at the cap (:func:`traincost.power.capped_clock_fraction`). [W]

    Returns
    -------
    Estimate
    """
    acc = _as_accelerator(accelerator)
    _check_number("devices", devices, minimum=0, integer=True)
    devices = int(devices)
    workload, site = job_inputs(
        workload, site, model=model, layers=layers, hidden=hidden, heads=heads,
        kv_heads=kv_heads, ffn_hidden=ffn_hidden, vocab=vocab, gated_mlp=gated_mlp,
        experts=experts, top_k=top_k, seq_len=seq_len, global_batch=global_batch, tokens=tokens,
        attention_kernel=attention_kernel, parallel_block=parallel_block, overlap=overlap,
        balanced_pipeline=balanced_pipeline, fp8_activations=fp8_activations,
        optimizer_state=optimizer_state, region=region,
        grid_intensity=grid_intensity, pue=pue, price_per_hour=price_per_hour,
        price_model=price_model, power_cap=power_cap, assumptions=assumptions)
    if precision is None:
        precision = acc.default_precision
    acc.peak_flop_per_s(precision)                      # raises for a missing precision
    fixed = fixed_knobs(tp, pp, cp, ep, vpp, zero, micro_batch, recompute)
    wl = workload
    arch = layout.arch_columns(wl, devices)
    open_knobs = tuple(k for k, val in fixed.items() if val is None)
    if not open_knobs:
        lay = {k: np.asarray([v]) for k, v in fixed.items()}
        layout.check({**arch, **{k: int(v[0]) for k, v in lay.items()}})
        evaluated = 1
    else:
        # the fastest layout that fits (headroom 0: fits_in_memory's own test), else the one
        # needing the least memory; search raises for no valid layout or no known bandwidth
        from .search import search          # search builds on this module
        found = search(acc, devices, workload=wl, site=site, precision=precision, tp=tp, pp=pp,
                       cp=cp, ep=ep, vpp=vpp, zero=zero, micro_batch=micro_batch,
                       recompute=recompute, memory_headroom=0.0, top=1, pareto=False,
                       assumptions=assumptions)
        row = found.best["time"] if found.best["time"] is not None else found.least_memory
        lay = {k: np.asarray([RECOMPUTE_CODES[row[k]] if k == "recompute" else int(row[k])])
               for k in fixed}
        evaluated = found.layouts_evaluated
    cols = columns(acc, wl, site, precision, devices, lay, assumptions)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = evaluate(cols, assumptions)
    n = len(lay["tp"])
    step = np.broadcast_to(out["step_time_s"], (n,))
    mem = np.broadcast_to(out["memory_bytes_per_device"], (n,))
    known = np.isfinite(step)      # NaN: the layout needs a link the catalog has no figure for
    if not known.any():
        raise ValueError(f"devices: {devices} x {acc.id} needs scale-out bandwidth beyond "
                         f"its {acc.scaleup_domain_devices}-device domain, which the catalog "
                         "does not give")
    fits = np.broadcast_to(out["fits_in_memory"], (n,)) & known
    if fits.any():
        i = int(np.flatnonzero(fits)[np.lexsort((mem[fits], step[fits]))[0]])
    else:
        i = int(np.flatnonzero(known)[np.argmin(mem[known])])
    values = _scalarise(out, i)
    chosen = {k: int(v[i]) for k, v in lay.items()}
    par = ParallelConfig(tp=chosen["tp"], pp=chosen["pp"], cp=chosen["cp"], ep=chosen["ep"],
                         vpp=chosen["vpp"], zero=chosen["zero"],
                         micro_batch=chosen["micro_batch"],
                         recompute=_CODE_TO_RECOMPUTE[chosen["recompute"]])
    return Estimate(accelerator=acc, workload=wl, parallel=par, site=site, devices=devices,
                    precision=precision, values=values, assumptions=assumptions,
                    chosen_by_search=open_knobs, layouts_evaluated=evaluated)


#: columns of :func:`compare`'s table, with their units
COMPARE_COLUMNS = ("accelerator", "devices", "tp", "pp", "dp", "cp", "ep", "vpp", "micro_batch",
                   "recompute", "zero", "attention", "fits_in_memory", "mfu", "train_time_days",
                   "device_hours", "avg_power_w_per_device", "facility_energy_mwh", "co2e_t",
                   "embodied_co2e_t", "cost_usd")


def compare(accelerators, devices, **kwargs) -> pd.DataFrame:
    """Estimate one workload on several accelerators; one row each (see COMPARE_COLUMNS).

    ``devices`` is one count for all or a dict {accelerator id: count}. An accelerator
    that cannot run the workload (no layout, missing precision) gets a row with its
    reason in ``note`` instead of numbers.
    """
    rows = []
    for acc_id in accelerators:
        n = devices[acc_id] if isinstance(devices, dict) else devices
        try:
            d = estimate(accelerator=acc_id, devices=n, **kwargs).to_dict()
        except ValueError as exc:
            rows.append({"accelerator": acc_id, "devices": n, "note": str(exc)})
            continue
        row = {k: d.get(k) for k in COMPARE_COLUMNS}
        row.update({k: d["parallel"][k] for k in ("tp", "pp", "dp", "cp", "ep", "vpp",
                                                   "micro_batch", "recompute", "zero")})
        row["attention"] = d["stack"]["attention_kernel_used"]   # auto resolves per device
        row["note"] = "" if d["fits_in_memory"] else "does not fit in memory"
        rows.append(row)
    df = pd.DataFrame(rows, columns=[*COMPARE_COLUMNS, "note"]).set_index("accelerator")
    for col in ("devices", "tp", "pp", "dp", "cp", "ep", "vpp", "micro_batch", "zero"):
        df[col] = df[col].astype("Int64")
    return df
