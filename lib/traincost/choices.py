"""The vocabularies of the inputs (the values a choice may take) and the checks every
input dataclass of :mod:`traincost.inputs` runs on construction: a bad value raises
``ValueError`` naming the field, the value and what is allowed."""

from __future__ import annotations

import math

#: activation recomputation, or ``offload``: no recompute, the activations moved to host
#: memory in the forward and back in the backward (a recompute alternative)
RECOMPUTE_MODES = ("none", "selective", "full", "offload")
PRECISIONS = ("bf16", "fp16", "fp8", "tf32", "fp32")
PRICE_MODELS = ("rental", "ownership")
#: which parallel dimension crosses the sites of a multi-site run (None in a
#: :class:`traincost.ParallelConfig`: searched); :data:`traincost.comm.CROSS_SITE_CODES` codes them
CROSS_SITE_MODES = ("dp", "pp")

#: (reported column, predicted key, metric family) :mod:`traincost.validate` compares for
#: each published run
METRICS = (
    ("reported_hardware_tflops_per_device", "hardware_tflops_per_device", "throughput"),
    ("reported_model_tflops_per_device", "model_tflops_per_device", "throughput"),
    ("reported_mfu", "mfu", "throughput"),
    ("reported_step_time_s", "step_time_s", "throughput"),
    ("reported_tokens_per_s_per_device", "tokens_per_s_per_device", "throughput"),
    ("reported_peak_memory_gib_per_device", "memory_gib_per_device", "memory"),
    ("reported_device_hours", "device_hours", "device_hours"),
    ("reported_train_days", "train_time_days", "train_days"),
    ("reported_avg_power_w_per_device", "avg_power_w_per_device", "power"),
    ("reported_energy_mwh", "energy_mwh", "energy"),
    ("reported_co2e_t", "co2e_t", "emissions"),
)
#: predicted keys of :data:`METRICS` that grow as a run gets slower: a log error of one of
#: them is the negative of the same miss in a rate (throughput, MFU, TFLOP/s)
TIME_KEYS = ("step_time_s", "device_hours", "train_time_days")
#: the metric families, in the order of :data:`METRICS` (``traincost validate --family``)
FAMILIES = tuple(dict.fromkeys(family for _, _, family in METRICS))


def check_number(name, value, *, minimum=None, exclusive=True, integer=False, allow_nan=False):
    """Raise ValueError unless value is a (finite) number in the allowed range."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        try:
            value = float(value)
        except (TypeError, ValueError):
            raise ValueError(f"{name}: {value!r} is not a number") from None
    if isinstance(value, float) and math.isnan(value):
        if allow_nan:
            return
        raise ValueError(f"{name}: NaN is not allowed")
    if not math.isfinite(value):
        raise ValueError(f"{name}: {value!r} is not finite")
    if integer and value != int(value):
        raise ValueError(f"{name}: {value!r} must be a whole number")
    if minimum is not None:
        if exclusive and value <= minimum:
            raise ValueError(f"{name}: {value!r} must be > {minimum}")
        if not exclusive and value < minimum:
            raise ValueError(f"{name}: {value!r} must be >= {minimum}")


#: how a scale-up domain joins its devices (data/schema.csv, accelerators.scaleup_topology)
SCALEUP_TOPOLOGIES = ("switch", "mesh", "torus", "mixed")


#: attention kernels a workload may run (see :class:`traincost.Stack`); ``auto`` is the faster
#: measured fused kernel on the device (:meth:`traincost.Accelerator.attention_kernel_used`)
ATTENTION_KERNELS = ("auto", "flash", "cudnn", "triton", "materialized")
#: the fused ones: the flash algorithm (tiled, causal blocks skipped, scores recomputed);
#: ``triton`` is the 2022-2023 Triton FlashAttention (Tri Dao's flash_attn_triton, as
#: llm-foundry's attn_impl triton ran it), priced as a share of FlashAttention-2's rate
#: (:attr:`traincost.Assumptions.triton_attention_flash2_fraction`)
FUSED_ATTENTION_KERNELS = ("auto", "flash", "cudnn", "triton")
#: communication a software stack may overlap with compute (see :class:`traincost.Stack`)
OVERLAP_KINDS = ("tp", "pp", "dp", "ep")
#: precision of the Adam state (:attr:`traincost.Stack.optimizer_state`)
OPTIMIZER_STATES = ("fp32", "bf16")
#: how the element-wise work runs (:attr:`traincost.Stack.elementwise`): ``auto``, the
#: framework's way (data/frameworks.csv ``elementwise``); ``fused`` kernels (torch.compile,
#: XLA, Megatron's and TransformerEngine's hand-fused ones) or ``eager`` PyTorch, one kernel
#: an operator
ELEMENTWISE_MODES = ("auto", "fused", "eager")


def parse_overlap(text) -> frozenset:
    """The set named by an ``overlap`` string such as ``"tp,dp"`` (``""``/``none``: empty).

    >>> sorted(parse_overlap("dp, tp"))
    ['dp', 'tp']
    """
    if not isinstance(text, str):
        raise ValueError(f"overlap: {text!r} is not a comma-separated subset of "
                         f"{','.join(OVERLAP_KINDS)}")
    parts = [t.strip().lower() for t in text.split(",") if t.strip()]
    if parts == ["none"]:
        return frozenset()
    bad = [t for t in parts if t not in OVERLAP_KINDS]
    if bad:
        raise ValueError(f"overlap: {text!r} names {bad[0]!r}, which is not one of "
                         f"{', '.join(OVERLAP_KINDS)} (give a comma-separated subset, or none)")
    return frozenset(parts)


def check_workload(w) -> None:
    """The checks a :class:`traincost.Workload` runs on construction: ValueError naming the
    field, the value and what is allowed."""
    for n in ("layers", "hidden", "heads", "vocab"):
        check_number(n, getattr(w, n), minimum=0, integer=True)
    for n in ("kv_heads", "ffn_hidden", "experts", "top_k", "shared_experts",
              "moe_ffn_hidden", "dense_layers", "route_nodes", "mtp_depth", "head_dim",
              "attention_window", "window_layers", "q_lora_rank",
              "kv_lora_rank", "qk_rope_head_dim", "v_head_dim"):
        check_number(n, getattr(w, n), minimum=0, exclusive=False, integer=True)
    if w.attention not in ("mha", "mla"):
        raise ValueError(f"attention: {w.attention!r} is not one of mha, mla")
    kv = w.kv_heads or w.heads
    if kv > w.heads or w.heads % kv:
        raise ValueError(f"kv-heads: {w.kv_heads} must divide heads {w.heads}")
    if w.head_dim == 0 and w.hidden % w.heads:
        raise ValueError(f"heads: {w.heads} must divide hidden {w.hidden}")
    if w.window_layers > w.layers:
        raise ValueError(f"window-layers: {w.window_layers} is more than the model's "
                         f"{w.layers} layers")
    if w.window_layers and not w.attention_window:
        raise ValueError(f"window-layers: {w.window_layers} given without "
                         "--attention-window (the window's size in tokens)")
    if w.experts:
        if not 1 <= w.top_k <= w.experts:
            raise ValueError(f"top-k: {w.top_k} must be between 1 and experts "
                             f"{w.experts}")
        if w.dense_layers >= w.layers:
            raise ValueError(f"dense_layers: {w.dense_layers} must be below layers "
                             f"{w.layers}")
    elif w.top_k or w.shared_experts:
        raise ValueError(f"top-k: {w.top_k} given for a dense model (experts 0)")
    elif w.route_nodes:
        raise ValueError(f"route_nodes: {w.route_nodes} given for a dense model "
                         "(experts 0); it limits where routed experts sit")
