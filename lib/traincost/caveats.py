"""Where an estimate leans on the least-tested parts of the model: a table of rules.

Each :class:`Rule` is a condition on an estimate, the plain-text caveat it then carries, and
the source that bounds it. :func:`caveats` applies :data:`RULES` in order;
:attr:`traincost.Estimate.caveats` is that list. A new caveat is one row here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

from . import catalog, comm, performance
from .assemble import eager_elementwise
from .inputs import FUSED_ATTENTION_KERNELS
from .uncertainty import is_long_context
from .units import GIB, GIGA
from .workload import last_stage_excess


@dataclass(frozen=True)
class Rule:
    """One caveat: ``when(est)`` says whether it applies, ``says(est)`` what it says."""

    name: str
    when: Callable
    says: Callable
    source: str


def _dp(est) -> int:
    return int(est.report["dp"])


def _zero3_group(est) -> int:
    """Data-parallel ranks ZeRO-3 shards the weights over: a shard group's where one is set
    (hybrid sharding), else a site's where the replicas cross the sites, else all. [-]"""
    dp, group = _dp(est), est.stack.shard_group or _dp(est)
    if est.system.sites > 1 and est.parallel.cross_site == "dp":
        group = min(group, dp // est.system.sites)
    return group


def _zero3_across_nodes(est) -> bool:
    p, group = est.parallel, _zero3_group(est)
    return p.zero == 3 and group > 1 and bool(comm.crosses_domain(
        group, p.tp * p.cp, est.accelerator.scaleup_domain_devices))


def _zero3_says(est) -> str:
    group = _zero3_group(est)
    who = f"dp={group}" if group == _dp(est) else \
        f"its sharding group of {group} of the dp={_dp(est)} ranks"
    return (f"ZeRO-3 gathers the weights across nodes ({who} spans more than one "
            f"{est.accelerator.scaleup_domain_devices}-device scale-up domain): the model "
            "runs them as NCCL's two-level rings do, each device of a node over its own NIC "
            "(traincost.comm.link), which matches PyTorch FSDP runs (torchtitan, MosaicML "
            "llm-foundry); DeepSpeed's 2021 ZeRO-3 ran 2-3x slower than that at 768-2,240 "
            "GPUs (Megatron-LM SC21 Table 2). With an older or less tuned stack, treat this "
            "step time as the fast end.")


def _fp8_says(est) -> str:
    return (f"fp8: the GEMMs keep {est.assumptions.fp8_matmul_fraction:.2f} of the bf16 matmul "
            "efficiency, a share fitted on NVIDIA's H100 NeMo (TransformerEngine) FP8 "
            "benchmarks only; other fp8 recipes and other devices are not checked against a "
            "measurement.")


def _no_mamf_says(est) -> str:
    lo, hi = catalog.measured_mamf_span()
    return (f"no measured matmul ceiling (MAMF) for {est.accelerator.id}: "
            f"{est.assumptions.default_mamf_fraction:.0%} of its peak is assumed, where the "
            f"measured devices reach {lo:.0%}-{hi:.0%} (data/accelerators.csv), and a "
            "compute-bound step scales with that share.")


def _kernel(est) -> str:
    return est.accelerator.attention_kernel_used(est.stack.attention_kernel)


def _unmeasured_fused(est) -> bool:
    kernel = _kernel(est)
    return kernel in FUSED_ATTENTION_KERNELS and not est.accelerator.measured_attention(kernel)


def _unmeasured_fused_says(est) -> str:
    lo, hi = catalog.measured_attention_span()
    share = est.assumptions.unmeasured_attention_matmul_fraction
    return (f"attention: no fused-attention measurement for {est.accelerator.id}, so its "
            f"attention core runs at {share:.0%} of its 16-bit matmul ceiling, the median of the "
            f"measured devices, whose faster fused kernels reach {lo:.0%}-{hi:.0%} of their "
            "matmul ceilings (data/accelerators.csv); borrowed, not measured on this device.")


def _triton_says(est) -> str:
    share = est.assumptions.triton_attention_flash2_fraction
    where = "as measured on A100" if est.accelerator.id.startswith("a100") else \
        "a share measured on A100 and borrowed here"
    return (f"triton attention: the 2022-2023 Triton FlashAttention runs at {share:.0%} of "
            f"FlashAttention-2's rate ({where}: Dao 2023, FlashAttention-2 Fig. 4d, causal, "
            "head dim 128); today's stacks run FlashAttention-2 or cuDNN.")


def _cudnn_unmeasured_says(est) -> str:
    return (f"cudnn attention: no cuDNN fused-attention measurement for {est.accelerator.id}; "
            "its flash-attention rate is used (TransformerEngine finds flash-attention the "
            "faster of the two on Ampere).")


def _flash_where_cudnn_is_faster(est) -> bool:
    acc = est.accelerator
    return _kernel(est) == "flash" and acc.measured_attention("flash") \
        and acc.attention_kernel_used("auto") == "cudnn"


def _flash_says(est) -> str:
    acc = est.accelerator
    speedup = acc.attention_flop_per_s("cudnn") / acc.attention_flop_per_s("flash")
    return (f"flash attention: on {acc.id}, cuDNN's fused attention (TransformerEngine's first "
            f"choice on Hopper and Blackwell) was measured at {speedup:.1f}x FlashAttention-2's "
            "rate (data/accelerators.csv); if your stack runs it, estimate with the cudnn "
            "attention kernel.")


def _cap_fraction(est) -> float:
    return est.system.power_limit_w / est.accelerator.tdp_w


def _low_cap_says(est) -> str:
    a, acc = est.assumptions, est.accelerator
    cap = est.system.power_limit_w
    return (f"power cap: {cap:g} W is {cap / acc.tdp_w:.0%} of {acc.id}'s {acc.tdp_w:g} W "
            "rating; the law that slows its matmuls under a limit, "
            f"(cap/TDP)^{a.power_cap_clock_exponent:g}, was measured between "
            f"{a.power_cap_measured_min_fraction:.0%} and 100% of the rating (the same dies at "
            "two limits, data/accelerators.csv), so this speed and power are an "
            "extrapolation.")


def _excess(est) -> float:
    wl = est.workload
    return float(last_stage_excess(est.parallel.pp, wl.vocab, wl.hidden,
                                   est.report["model_flop_per_token"]))


def _uneven_says(est) -> str:
    excess = _excess(est)
    return (f"pipeline: the last of the {est.parallel.pp} stages computes the output layer "
            f"({est.workload.vocab:,}-token vocabulary) whole, {excess:.0%} more work than the "
            "average stage, and a 1F1B pipeline runs at its slowest stage's pace: this step "
            "time pays it. A balanced split (--balanced-pipeline) moves layers off that "
            "stage to even the work out.")


def _record(est):
    # fp8 on a device whose fp8 peak is no higher than bf16's runs as bf16 does: its
    # utilisation compares with the 16-bit runs'
    group = catalog.precision_group(est.precision) if est.accelerator.fp8_units else "16-bit"
    return (group, *catalog.published_mfu_record(group))


def _record_says(est) -> str:
    group, record, case = _record(est)
    mfu = float(est.report["mfu"])
    return (f"MFU {mfu:.0%} is above the highest any measured published {group} run reached, "
            f"{record:.1%} ({case}, `traincost validate --case {case}`). A result better than "
            "anything measured is suspect until explained: treat this step time as the fast "
            "end.")


def _moe_says(est) -> str:
    return (f"MoE: the expert all-to-all and GEMMs assume each of the {est.workload.experts} "
            "experts gets an even share of the tokens; routing imbalance is not modelled, nor "
            "the token permutation around the all-to-all and the router's own work. The MoE "
            "runs checked: DeepSeek-V3's pre-training (device-hours; its experts balanced by "
            "design) and NVIDIA's Grok-1 314B benchmarks on 512-2,048 H100 (experts padded to "
            "an even share), whose steps took 5-17% longer than predicted (`traincost "
            "validate --case nvidia-dgxc-grok1-314b-gsw2502-fp8-512`). With many small "
            "experts the dispatcher and grouped-GEMM kernels, which the model does not see, "
            "can set the step: NVIDIA's Qwen3-30B-A3B (128 experts, 8 a token) on 16 H100 ran "
            "16% faster than predicted with EP 16 across two boxes (HybridEP) and at 1/3.5 of "
            "the predicted rate with EP 8 inside each (DeepEP; `traincost validate --case "
            "mbridge-2602-h100-qwen3-30b-a3b-16`), and its Qwen3-235B-A22B on 256 H100 (EP 32 "
            "folded over TP 2) took 6-14% longer than predicted; on TPU v5p, where "
            "MaxText's grouped GEMMs are priced with the whole 512-row tiles megablox visits "
            "(one more for each expert's group that starts inside a tile), its DeepSeek-V3 "
            "with every chip running all 256 experts (FSDP, no expert axis) ran at 1/1.14 of "
            "the predicted rate (`traincost validate --case tpurecipes-v5p-deepseek-v3-512`), "
            "its Llama 4 Scout (16 experts) at 1/0.97-0.98, its Llama 4 Maverick (128 experts in "
            "every second layer, TP 4) at 1/1.49. "
            "Treat this step time as the fast end.")


def _framework_status(est) -> str:
    return catalog.framework_factor(est.stack.framework, est.accelerator)[1]


def _borrowed_says(est) -> str:
    fw = est.stack.framework
    family = catalog.accelerator_family(est.accelerator)
    where = "this accelerator (no vendor named)" if family == "unknown" else \
        f"{family} accelerators"
    if fw == "unspecified":
        return (f"framework not given: on {where} no framework has enough "
                "published runs to fit its efficiency, so the Megatron-Core/NeMo "
                "calibration's is used; name the stack with --framework where it is known.")
    return (f"framework {fw}: too few published runs on {where} (at least 3 in "
            "2 documents) to fit its efficiency, so the Megatron-Core/NeMo calibration's is "
            "used; its implied defaults (data/frameworks.csv) still apply.")


def _fitted_says(est) -> str:
    fw = est.stack.framework
    factor = catalog.framework_factor(fw, est.accelerator)[0]
    who = "an unstated framework on this family" if fw == "unspecified" else fw
    acc = est.accelerator
    own = catalog.factor_name(fw, acc).split(" on ", 1)[-1] == acc.id   # the device's own
    fitted_on = (f"fitted on its own published runs on {acc.id}, which has no measured matmul "
                 "ceiling, so the factor carries that ceiling too" if own else
                 "fitted on its own published runs")
    # the model's own cap (performance.framework_matmul_fraction): the measured matmul
    # ceiling where there is one, else the peak over the assumed one
    share = est.assumptions.in_model_matmul_fraction
    measured = not math.isnan(acc.mamf_bf16_flop_per_s)
    headroom = 1.0 if measured else \
        1.0 / acc.mamf_fraction(est.assumptions.default_mamf_fraction)
    capped = float(performance.framework_matmul_fraction(share, factor, headroom)) \
        < share * factor
    ceiling = ((" (capped at the device's measured maximum achievable matmul rate, which no "
                "layer beats)" if measured else " (capped at the device's peak, which no layer "
                "beats)") if capped else "")
    overhead = catalog.framework_layer_overhead(fw, acc)
    fixed = (f", and spends a fixed {overhead * 1e3:.1f} ms per layer per micro-batch beyond "
             "that stack's, which a larger micro-batch pays less often "
             f"({est.step_breakdown_s()['layer_overhead']:.3g} s of this step), "
             "both" if overhead > 0 else "")
    return (f"framework: {who} runs its GEMMs at {factor:.2f}x the Megatron-Core/NeMo "
            f"calibration's efficiency{ceiling}{fixed}, {fitted_on} "
            "(data/calibration.json frameworks; `traincost validate` lists their errors).")


#: the caveats, in the order an estimate lists them
def _sites_says(est) -> str:
    return (f"{est.system.sites} sites: the exchange across them is priced from the link's "
            "bandwidth and latency alone (a hierarchical ring, the link shared by a site's "
            "devices; replicas across sites shard inside each site); one published multi-site "
            "run checks it, PaLM's two TPU v4 pods over a data-centre network (their 1.95x "
            "weak scaling, tests/test_sites.py; their throughput, `traincost validate --case "
            "palm-540b-6144-2pods`), and congestion from other traffic on the link is not "
            "modelled.")


def _relaxed_says(est) -> str:
    return (f"sync-every {est.stack.sync_every}: relaxed synchrony changes how many tokens "
            "reach a given quality (DiLoCo, arXiv:2311.08105), which is not modelled: the "
            "tokens are trained as given. The outer optimizer's state (a copy of the weights "
            "and its momentum) is taken to live in host memory, as INTELLECT-1 keeps it "
            "(arXiv:2412.01152).")


def _interruptions_dominate(est) -> bool:
    """Whether interruptions, not operations, set the goodput: it is below
    ``assumptions.operations_goodput_fraction``."""
    return float(est.report["goodput"]) < est.assumptions.operations_goodput_fraction


def _interruptions_says(est) -> str:
    sys_, a = est.system, est.assumptions
    given = not (math.isnan(sys_.interruption_rate_per_device_s)
                 and math.isnan(sys_.interruption_lost_s))
    kept = 100 * float(est.report["goodput"])
    return (f"goodput {kept:.3g}%: on {est.devices:,} devices interruptions take more than "
            f"operations do ({100 * a.operations_goodput_fraction:.3g}% kept)"
            + (" at the rate and cost given. " if given else
               ", at Llama 3's rate and cost per interruption (466 in 54 days on 16,384 "
               "H100s, arXiv:2407.21783 Sec. 3.3.4). No published run larger than that "
               "states its goodput. ")
            + "Recovery from in-memory checkpoints takes under a minute (DeadPool, "
            "arXiv:2607.01646), which --interruption-minutes can express.")


def _op_selective(est) -> bool:
    """torchtitan-style selective recompute (the framework's per-op policy) in use."""
    return est.parallel.recompute == "selective" and catalog.framework(
        est.stack.framework)["selective_recompute"] == "odd-matmuls"


def _op_selective_says(est) -> str:
    r = est.report
    extra = r["hardware_flop_per_token"] / r["model_flop_per_token"] - 1
    return (f"selective recompute in {est.stack.framework} is its per-operator policy, not "
            "Megatron's: it keeps the attention output and every other matmul's output and "
            f"recomputes the rest, {extra:.1%} more FLOP per token here against Megatron's "
            "few percent, for less memory (data/frameworks.csv selective_recompute; "
            "torchtitan's _get_custom_policy).")


def _eager(est) -> bool:
    """Eager element-wise work in a Llama-style block (the only block it costs more)."""
    return bool(est.workload.gated_mlp) and eager_elementwise(est.stack)


def _eager_says(est) -> str:
    a = est.assumptions
    return ("element-wise ops run eager (PyTorch without a compiler, "
            f"{est.stack.framework}'s way unless a run is compiled): each RMSNorm, the rotary "
            "embedding and the SwiGLU write their intermediates to memory, "
            f"{a.eager_rmsnorm_passes:g}, {a.eager_rope_passes:g} and "
            f"{a.eager_swiglu_passes:g} more 16-bit passes an element than fused kernels, "
            "counted op by op (traincost.assumptions); --elementwise fused prices "
            "torch.compile, which torchtitan measured faster on Llama 3.1 8B (its 2024-12 "
            "benchmark page's eager and compiled rows, `traincost validate`).")


def _offload_says(est) -> str:
    acc, a = est.accelerator, est.assumptions
    return (f"activations offloaded: {float(est.report['offloaded_gib_per_device']):.3g} GiB "
            "per device sit "
            f"in host memory ({acc.host_memory_bytes / GIB:.3g} GiB per device in the "
            f"reference system), copied out after each layer's forward and back before its "
            f"backward at {acc.host_link_bytes_per_s * a.host_copy_efficiency / GIGA:.3g} GB/s "
            "each way (the host link's line rate x the measured "
            f"{a.host_copy_efficiency:g} of pinned copies), where the copy outlasts the "
            "compute it hides behind, the step shows it. Each device is taken to have its "
            "link to itself (HLS-Gaudi2's four uplinks for eight cards are counted in its "
            "row); a board with two devices behind one PCIe uplink halves it. Megatron-Core's layer-level CPU offloading runs only "
            "without a pipeline and without recompute; its fine-grained offloading runs with "
            "both (Megatron-LM docs, fine_grained_activation_offloading.md). One published "
            "run checks it (Megatron-Bridge 26.04.01's GB200 Llama 3 70B, half its layers "
            "offloaded: 9.8% slow, `traincost validate`).")


def _rank_tokens(est) -> float:
    """Tokens of one sequence on a context-parallel rank, seq_len / cp. [tokens]"""
    return est.job.seq_len / est.parallel.cp


def _long_context_says(est) -> str:
    return (f"long context: {_rank_tokens(est):,.0f} tokens of each sequence on a rank "
            f"(seq {est.job.seq_len:,} / cp {est.parallel.cp}). The published H100 and B200 "
            f"runs with at least {est.assumptions.long_context_rank_tokens:,.0f} "
            "tokens a rank took 2-36% longer a step than this model predicts (NeMo's "
            "long-sequence page: H100 11-27%, B200 2-7%; torchtitan's 32K and 256K runs on "
            "H100: 8-36%; `traincost validate --case nemo-longseq-llama2-7b-h100-s256k`), with "
            "the fused attention kernel at the share of its isolated rate the GEMMs keep of "
            f"theirs ({est.assumptions.in_model_matmul_fraction:.2f}): on H100 the attention "
            "lost more than that, a loss the model does not have. Four such runs came out "
            "slower than predicted: NeMo's B200 at 512K and 1M tokens (-1%), torchtitan's 4D "
            "Llama 3.1 405B at 32K (-3%) and llm-foundry's MPT-7B at 16K on A100 (-17%). "
            "Treat this step time as the fast end.")


RULES = (
    Rule("framework-borrowed", lambda est: _framework_status(est) == "borrowed",
         _borrowed_says, "traincost.calibrate.own_frameworks (issue 21's evidence rule)"),
    Rule("framework-fitted", lambda est: _framework_status(est) == "fitted",
         _fitted_says, "traincost.calibrate.fit_frameworks (data/calibration.json)"),
    Rule("eager-elementwise", _eager, _eager_says,
         "torchtitan models/norms.py, models/llama/model.py and train_configs (compile = "
         "false); benchmarks/llama3_h100_202412_torchtitan.md Tables 1 and 3"),
    Rule("op-selective-recompute", _op_selective, _op_selective_says,
         "torchtitan parallelize_llama.py at 9dec370 (selective_ac_option 'op')"),
    Rule("activation-offload", lambda est: est.parallel.recompute == "offload",
         _offload_says, "data/accelerators.csv (host_link_bytes_per_s, host_memory_bytes, "
         "host_source); Assumptions.host_copy_efficiency; Megatron-Core "
         "TransformerConfig (cpu_offloading checks)"),
    Rule("long-context",
         lambda est: is_long_context(est.job.seq_len, est.parallel.cp, est.assumptions),
         _long_context_says, "data/published_runs.csv (nemo-longseq-*, tt-h100-llama3.1-*-cp*; "
         "their model_gap column); Assumptions.long_context_rank_tokens"),
    Rule("zero3-across-nodes", _zero3_across_nodes, _zero3_says,
         "AWS awsome-distributed-training nccl-tests (two-level all-reduce); torchtitan and "
         "llm-foundry FSDP runs; Narayanan et al. SC21 Table 2 (DeepSpeed ZeRO-3, a model "
         "gap)"),
    Rule("fp8", lambda est: est.precision == "fp8" and est.accelerator.fp8_units, _fp8_says,
         "NVIDIA NeMo H100 FP8 benchmarks (traincost.calibrate.fit_fp8)"),
    Rule("fp8-without-faster-units",
         lambda est: est.precision == "fp8" and not est.accelerator.fp8_units,
         lambda est: (f"fp8 on {est.accelerator.id}: its fp8 peak is no higher than its bf16 "
                      "peak (data/accelerators.csv), so its GEMMs are taken to run as bf16 "
                      "ones do, on half the bytes; no published fp8 run on it checks this."),
         "data/accelerators.csv (peak_fp8_flop_per_s, peak_bf16_flop_per_s)"),
    Rule("no-measured-mamf", lambda est: math.isnan(est.accelerator.mamf_bf16_flop_per_s),
         _no_mamf_says, "data/accelerators.csv (mamf_bf16_flop_per_s)"),
    Rule("unmeasured-fused-attention", _unmeasured_fused, _unmeasured_fused_says,
         "data/accelerators.csv (attention_*_flop_per_s)"),
    Rule("triton-attention", lambda est: _kernel(est) == "triton", _triton_says,
         "Dao 2023, FlashAttention-2 (arXiv:2307.08691) Fig. 4d "
         "(Assumptions.triton_attention_flash2_fraction)"),
    Rule("unmeasured-cudnn-attention",
         lambda est: _kernel(est) == "cudnn" and not est.accelerator.measured_attention("cudnn"),
         _cudnn_unmeasured_says, "data/accelerators.csv (attention_cudnn_bf16_flop_per_s)"),
    Rule("flash-where-cudnn-is-faster", _flash_where_cudnn_is_faster, _flash_says,
         "data/accelerators.csv; TransformerEngine's attention backend order"),
    Rule("fp8-activations", lambda est: bool(est.stack.fp8_activations),
         lambda est: ("fp8 activations: DeepSeek-V3's memory recipe, checked only by that "
                      "run's published layout fitting in 80 GB; the element-wise work of "
                      "recomputing its norms and SwiGLU outputs is left out of the step time "
                      "(the recomputed MLA up-projections are in it)."),
         "DeepSeek-V3 technical report, arXiv:2412.19437, Sec. 3.3"),
    Rule("power-cap-below-measured",
         lambda est: _cap_fraction(est) < est.assumptions.power_cap_measured_min_fraction,
         _low_cap_says, "assumptions.power_cap_clock_exponent (data/accelerators.csv)"),
    Rule("uneven-pipeline",
         lambda est: not est.stack.balanced_pipeline
         and _excess(est) >= est.assumptions.output_imbalance_caveat_fraction,
         _uneven_says, "traincost.workload.last_stage_excess; Megatron-Core's "
         "account_for_loss_in_pipeline_split"),
    Rule("beyond-measured-mfu", lambda est: float(est.report["mfu"]) > _record(est)[1],
         _record_says, "traincost.catalog.published_mfu_record (data/published_runs.csv)"),
    Rule("moe-even-routing", lambda est: bool(est.workload.experts) and est.parallel.ep > 1,
         _moe_says, "DeepSeek-V3 technical report, arXiv:2412.19437, Table 1"),
    Rule("lora", lambda est: bool(est.stack.lora),
         lambda est: ("lora: the base weights are frozen (no weight gradients, exchange or "
                      "optimizer step for them); the adapters' own work and state are left "
                      "out, and only measured power checks LoRA runs (MLPerf's Llama 2 70B "
                      "LoRA submissions, `traincost validate --family power`), not their "
                      "throughput."),
         "Hu et al. 2021, arXiv:2106.09685; MLPerf Training v4.0-v5.0 power logs"),
    Rule("interruptions-dominate", _interruptions_dominate, _interruptions_says,
         "traincost.performance.goodput; Dubey et al. 2024 Sec. 3.3.4; Lockwood's job "
         "reliability table (OPT-175B)"),
    Rule("sites-unvalidated", lambda est: est.system.sites > 1, _sites_says,
         "traincost.comm.cross_site_all_reduce_time; issue 23 (validation runs)"),
    Rule("relaxed-synchrony",
         lambda est: est.stack.sync_every > 1 and est.system.sites > 1
         and est.parallel.cross_site == "dp", _relaxed_says,
         "Douillard et al. 2023, DiLoCo; Jaghouar et al. 2024, INTELLECT-1"),
)


def caveats(est) -> list:
    """The caveats that apply to an estimate, in :data:`RULES` order (plain text)."""
    return [rule.says(est) for rule in RULES if rule.when(est)]
