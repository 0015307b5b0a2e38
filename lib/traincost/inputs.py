"""The inputs, as the physics splits them, each a small frozen dataclass validated on
construction (Calculon's application / execution / system split is the model):

* :class:`Workload` - the transformer's architecture.
* :class:`Job` - the training job: sequence length, global batch, tokens.
* :class:`Stack` - the software stack: attention kernel, overlaps, recipes, framework.
* :class:`ParallelConfig` - the layout: tp, pp, dp (derived), cp, ep, vpp, ZeRO,
  micro-batch, activation recompute (None: searched).
* :class:`System` - the machine: an :class:`Accelerator` (one device's peak FLOP/s,
  memory, power, links), the device count, the power limit and the network tiers.
* :class:`Site` - where it runs: PUE, grid carbon intensity, prices.

They hold parameters and add no physics (pvlib's "three layers"): the formulas live in
:mod:`traincost.workload`, ``memory``, ``performance``, ``power`` and ``footprint``. A bad
value raises ``ValueError`` naming the field, the value and what is allowed.
"""

from __future__ import annotations

import calendar
import datetime
import math
from dataclasses import dataclass, fields

# the vocabularies live in traincost.choices; named here too, where the modules import them
from .choices import (ATTENTION_KERNELS, CROSS_SITE_MODES, ELEMENTWISE_MODES,  # noqa: F401
                      FUSED_ATTENTION_KERNELS, OPTIMIZER_STATES, OVERLAP_KINDS, PRECISIONS,
                      PRICE_MODELS, RECOMPUTE_MODES, SCALEUP_TOPOLOGIES, parse_overlap)
from .choices import check_number as _check_number
from .choices import check_workload


@dataclass(frozen=True)
class Accelerator:
    """One accelerator device (one row of ``data/accelerators.csv``).

    Parameters
    ----------
    id : str
        Catalog id, e.g. ``"a100-sxm4-80gb"``.
    name : str
        Human-readable name.
    peak_fp32_flop_per_s, peak_tf32_flop_per_s, peak_bf16_flop_per_s, peak_fp16_flop_per_s, peak_fp8_flop_per_s : float
        Dense peak throughput per precision, NaN where the precision is absent. [FLOP/s]
    mamf_bf16_flop_per_s : float
        Measured maximum achievable bf16 matmul throughput, NaN if unknown. [FLOP/s]
    mamf_fp8_flop_per_s : float
        Measured maximum achievable fp8 (e4m3) matmul throughput, NaN if unknown. [FLOP/s]
    attention_bf16_flop_per_s : float
        Measured fused-attention (FlashAttention-2) throughput, forward and backward, NaN
        if unknown (a fused attention core then runs at the matmul rate). [FLOP/s]
    attention_cudnn_bf16_flop_per_s : float
        Measured cuDNN fused-attention (TransformerEngine ``FusedAttention``) throughput,
        forward and backward, NaN if unknown (the flash rate is then used). [FLOP/s]
    attention_kv_tokens : float
        Keys per query row (s/2 causal) in the benchmark behind both attention rates; a
        workload's kernel runs at them scaled to its own keys per row
        (:func:`traincost.performance.attention_rate`). NaN: the rates are used as they
        are. [tokens]
    hbm_bytes : float
        Device memory. [bytes]
    hbm_bytes_per_s : float
        Device memory bandwidth. [bytes/s]
    tdp_w : float
        Maximum device power. [W]
    idle_w : float
        Power of an idle, powered device. [W]
    scaleup_domain_devices : int
        Devices in one fast (NVLink/xGMI/ICI) domain. [-]
    scaleup_bytes_per_s : float
        Per-device one-direction bandwidth inside the domain. [bytes/s]
    scaleout_bytes_per_s : float
        Per-device one-direction bandwidth across domains, NaN if unpublished. [bytes/s]
    scaleup_topology : str
        How the domain joins its devices (:data:`SCALEUP_TOPOLOGIES`): ``switch`` (every
        device its full scale-up rate to any group), ``mesh`` (one link to each other
        device of the domain, :func:`traincost.comm.link`), ``torus`` or ``mixed``
        (priced as a switch). [-]
    allreduce_busbw_fraction : float
        Measured all-reduce bus bandwidth over the whole scale-up domain (large messages)
        as a fraction of ``scaleup_bytes_per_s``, NaN where none was measured (the fitted
        ``assumptions.scaleup_comm_efficiency`` then applies as it is). [-]
    price_usd_per_h : float
        Rental price per device-hour, NaN if unknown. [USD/h]
    capex_usd : float
        Purchase price per device, NaN if unknown. [USD]
    embodied_kgco2e : float
        Embodied emissions per device, NaN if unknown. [kgCO2e]
    host_link_bytes_per_s : float
        The device's link to its host CPU (PCIe, NVLink-C2C), one direction, the line rate;
        NaN where unpublished (activation offload then cannot be priced). [bytes/s]
    host_memory_bytes : float
        Host memory per device in the reference system (the server's, over its devices),
        NaN where unpublished. [bytes]
    """

    id: str
    name: str
    peak_fp32_flop_per_s: float
    peak_tf32_flop_per_s: float
    peak_bf16_flop_per_s: float
    peak_fp16_flop_per_s: float
    peak_fp8_flop_per_s: float
    mamf_bf16_flop_per_s: float
    hbm_bytes: float
    hbm_bytes_per_s: float
    tdp_w: float
    idle_w: float
    scaleup_domain_devices: int
    scaleup_bytes_per_s: float
    scaleout_bytes_per_s: float
    price_usd_per_h: float = math.nan
    capex_usd: float = math.nan
    embodied_kgco2e: float = math.nan
    attention_bf16_flop_per_s: float = math.nan
    mamf_fp8_flop_per_s: float = math.nan
    attention_cudnn_bf16_flop_per_s: float = math.nan
    attention_kv_tokens: float = math.nan
    allreduce_busbw_fraction: float = math.nan
    host_link_bytes_per_s: float = math.nan
    host_memory_bytes: float = math.nan
    vendor: str = ""
    scaleup_topology: str = "switch"

    def __post_init__(self):
        for name in ("hbm_bytes", "hbm_bytes_per_s", "tdp_w", "scaleup_bytes_per_s"):
            _check_number(name, getattr(self, name), minimum=0)
        # NaN: no published scale-out figure (layouts that would need it are not evaluated)
        _check_number("scaleout_bytes_per_s", self.scaleout_bytes_per_s, minimum=0,
                      allow_nan=True)
        _check_number("idle_w", self.idle_w, minimum=0, exclusive=False)
        if self.idle_w >= self.tdp_w:
            raise ValueError(f"idle_w: {self.idle_w} must be below tdp_w {self.tdp_w}")
        _check_number("scaleup_domain_devices", self.scaleup_domain_devices, minimum=0,
                      integer=True)
        if self.scaleup_topology not in SCALEUP_TOPOLOGIES:
            raise ValueError(f"scaleup_topology: {self.scaleup_topology!r} is not one of "
                             f"{', '.join(SCALEUP_TOPOLOGIES)}")
        for name in ("peak_fp32_flop_per_s", "peak_tf32_flop_per_s", "peak_bf16_flop_per_s",
                     "peak_fp16_flop_per_s", "peak_fp8_flop_per_s", "mamf_bf16_flop_per_s",
                     "price_usd_per_h", "capex_usd", "embodied_kgco2e",
                     "attention_bf16_flop_per_s", "mamf_fp8_flop_per_s",
                     "attention_cudnn_bf16_flop_per_s", "attention_kv_tokens",
                     "host_link_bytes_per_s", "host_memory_bytes"):
            _check_number(name, getattr(self, name), minimum=0, allow_nan=True)
        if math.isnan(self.peak_bf16_flop_per_s) and math.isnan(self.peak_fp16_flop_per_s):
            raise ValueError(f"{self.id}: needs peak_bf16_flop_per_s or peak_fp16_flop_per_s")

    def peak_flop_per_s(self, precision: str) -> float:
        """Dense peak at ``precision`` [FLOP/s]; ValueError if the device lacks it."""
        if precision not in PRECISIONS:
            raise ValueError(f"precision: {precision!r} is not one of {', '.join(PRECISIONS)}")
        value = getattr(self, f"peak_{precision}_flop_per_s")
        if math.isnan(value):
            have = [p for p in PRECISIONS if not math.isnan(getattr(self, f"peak_{p}_flop_per_s"))]
            raise ValueError(f"precision: {self.id} has no {precision} peak; it has "
                             f"{', '.join(have)}")
        return value

    @property
    def fp8_units(self) -> bool:
        """Whether the device runs fp8 GEMMs at a higher peak than bf16 ones (H100's 2x);
        False where its fp8 peak is no higher (TPU v5p and v6e, Gaudi 3 in the catalog) or
        absent. [-]"""
        return bool(self.peak_fp8_flop_per_s > self.peak_bf16_flop_per_s)

    @property
    def default_precision(self) -> str:
        """The training precision when none is given: bf16, or fp16 where bf16 is absent."""
        return "bf16" if not math.isnan(self.peak_bf16_flop_per_s) else "fp16"

    def mamf_fraction(self, default: float, precision: str = "bf16") -> float:
        """Measured max achievable matmul FLOP/s over the dense peak at ``precision`` [-].

        fp8 uses the measured fp8 MAMF where there is one (H100 SXM reaches 70.9% of its
        fp8 peak but 80.3% of its bf16 peak, stas00/ml-engineering MAMF tables); every
        other precision, and fp8 without a measurement, the bf16 (or fp16) ratio, else
        ``default``.
        """
        if precision == "fp8" and not math.isnan(self.mamf_fp8_flop_per_s):
            return min(self.mamf_fp8_flop_per_s / self.peak_fp8_flop_per_s, 1.0)
        peak = self.peak_bf16_flop_per_s
        if math.isnan(peak):
            peak = self.peak_fp16_flop_per_s
        if math.isnan(self.mamf_bf16_flop_per_s):
            return default
        return min(self.mamf_bf16_flop_per_s / peak, 1.0)

    def attention_kernel_used(self, kernel: str) -> str:
        """The kernel that runs on this device when a workload asks for ``kernel`` [-].

        ``"auto"`` is the faster of the two measured fused kernels, as TransformerEngine
        chooses: cuDNN's where it was measured faster than FlashAttention-2 (H100, H800,
        H200, B200, GB200), else ``"flash"`` (A100, where TransformerEngine's docs find
        flash-attn the faster, and devices with no attention measurement). Every other
        kernel is itself.

        Examples
        --------
        >>> from traincost import catalog
        >>> catalog.accelerator("h100-sxm5-80gb").attention_kernel_used("auto")
        'cudnn'
        >>> catalog.accelerator("a100-sxm4-80gb").attention_kernel_used("auto")
        'flash'
        """
        if kernel != "auto":
            return kernel
        cudnn, flash = self.attention_cudnn_bf16_flop_per_s, self.attention_bf16_flop_per_s
        faster = not math.isnan(cudnn) and (math.isnan(flash) or cudnn > flash)
        return "cudnn" if faster else "flash"

    def attention_flop_per_s(self, kernel: str) -> float:
        """Measured throughput of a fused attention ``kernel`` on this device [FLOP/s].

        ``"flash"`` and ``"triton"``: FlashAttention-2's (the Triton kernel runs a share of
        it, ``traincost.model``); ``"cudnn"``: cuDNN's fused attention where it was
        measured (H100 SXM: 514 TFLOP/s, 1.59x flash-attn in the same TransformerEngine
        benchmark), else the flash figure (see :meth:`measured_attention`); ``"auto"``:
        the faster of the two (:meth:`attention_kernel_used`). NaN when the device has
        neither (a fused core then runs at the matmul rate) and for the
        ``"materialized"`` softmax, whose matmuls run at the matmul rate.
        """
        kernel = self.attention_kernel_used(kernel)
        if kernel == "cudnn" and not math.isnan(self.attention_cudnn_bf16_flop_per_s):
            return self.attention_cudnn_bf16_flop_per_s
        # triton: FlashAttention-2's, which the model scales by the Triton kernel's share
        return self.attention_bf16_flop_per_s if kernel in FUSED_ATTENTION_KERNELS else math.nan

    def measured_attention(self, kernel: str) -> bool:
        """Whether ``kernel``'s own throughput was measured on this device (never for the
        ``"materialized"`` softmax, which runs at the matmul rate). [-]"""
        kernel = self.attention_kernel_used(kernel)
        # the Triton kernel's rate is a measured share of FlashAttention-2's
        rate = {"flash": self.attention_bf16_flop_per_s, "triton": self.attention_bf16_flop_per_s,
                "cudnn": self.attention_cudnn_bf16_flop_per_s}.get(kernel, math.nan)
        return not math.isnan(rate)


@dataclass(frozen=True)
class Workload:
    """A decoder-only transformer: its architecture only (the job that trains it is a
    :class:`Job`, the software that runs it a :class:`Stack`).

    Parameters
    ----------
    layers : int
        Transformer layers, L. [-]
    hidden : int
        Hidden size, h. [-]
    heads : int
        Attention heads, a. [-]
    vocab : int
        Vocabulary size, V. [-]
    kv_heads : int
        Key/value heads (GQA/MQA); 0 means equal to ``heads``. [-]
    ffn_hidden : int
        MLP inner size, f; 0 means 4h. [-]
    gated_mlp : bool
        SwiGLU-style MLP with three matrices (also implies bias-free linears and RMSNorm,
        true of every gated preset). [-]
    tied_embeddings : bool
        Output layer shares the input embedding. [-]
    learned_positions : bool
        Learned absolute position embeddings (s*h parameters). [-]
    experts, top_k, shared_experts : int
        Routed experts, experts per token, always-on shared experts (0 for dense). [-]
    moe_ffn_hidden : int
        Inner size of each expert's MLP; 0 means ``ffn_hidden``. [-]
    dense_layers : int
        Layers with a dense MLP in an MoE model: DeepSeek-V3's leading three, Llama 4
        Maverick's every second one (counted by their share of the layers). [-]
    route_nodes : int
        Node-limited routing: the most scale-up domains (nodes) one token's routed experts
        may span, M in DeepSeek-V3 (arXiv:2412.19437 Secs. 2.1.2 and 4.2, M = 4); a token
        then crosses the scale-out network once per target node and is forwarded to its
        experts there over the scale-up links (Sec. 3.2.2). 0 means unlimited. [-]
    mtp_depth : int
        Multi-token prediction modules trained beside the model, D in DeepSeek-V3
        (arXiv:2412.19437 Sec. 2.2; D = 1, Sec. 4.2): each is one more Transformer block
        (the model's last-layer kind), a d x 2d projection and another pass of the shared
        output head, on the pipeline's last stage (Sec. 3.2.3). Their work counts in the
        step time, not in the model FLOP. 0 means none. [-]
    attention : str
        ``"mha"`` (MHA/GQA/MQA) or ``"mla"`` (DeepSeek multi-head latent attention). [-]
    head_dim : int
        Per-head q/k size (for MLA its non-rotary part); 0 means h/a. [-]
    attention_window : int
        Sliding-window attention: the keys before it a query attends to in a windowed layer
        (Mistral 7B's 4,096; Gemma 3's local layers' 1,024); 0 means none. A fused kernel
        skips the blocks outside the window; a materialized one computes them masked. [tokens]
    window_layers : int
        How many of the layers attend within ``attention_window`` (Gemma 3: 5 of every 6);
        0 means all of them. [-]
    q_lora_rank, kv_lora_rank, qk_rope_head_dim, v_head_dim : int
        MLA dimensions (0 for mha). [-]
    name : str
        Label. [-]
    """

    layers: int
    hidden: int
    heads: int
    # a custom architecture's vocabulary when none is given: Megatron-LM's 51,200 (GPT-2's
    # 50,257 BPE tokens padded to a multiple of 1024); the presets carry their own
    vocab: int = 51200
    kv_heads: int = 0
    ffn_hidden: int = 0
    gated_mlp: bool = False
    tied_embeddings: bool = True
    learned_positions: bool = True
    experts: int = 0
    top_k: int = 0
    shared_experts: int = 0
    moe_ffn_hidden: int = 0
    dense_layers: int = 0
    route_nodes: int = 0
    mtp_depth: int = 0
    attention: str = "mha"
    head_dim: int = 0
    attention_window: int = 0
    window_layers: int = 0
    q_lora_rank: int = 0
    kv_lora_rank: int = 0
    qk_rope_head_dim: int = 0
    v_head_dim: int = 0
    name: str = "custom"

    def __post_init__(self):
        check_workload(self)

    @property
    def kv_heads_effective(self) -> int:
        return self.kv_heads or self.heads

    @property
    def ffn_hidden_effective(self) -> int:
        return self.ffn_hidden or 4 * self.hidden

    @property
    def head_dim_effective(self) -> int:
        return self.head_dim or self.hidden // self.heads

    @property
    def window_layers_effective(self) -> int:
        """Layers attending within the window: all where a window is given without a count."""
        return (self.window_layers or self.layers) if self.attention_window else 0


@dataclass(frozen=True)
class Job:
    """The training job: how the model is fed and for how long.

    Parameters
    ----------
    seq_len : int
        Sequence length, s. [tokens]
    global_batch : int
        Sequences per optimizer step, B. [-]
    tokens : float
        Training tokens for the whole job, D. [tokens]
    start : str or None
        Date the training starts, ``YYYY-MM-DD``: the grid's carbon intensity then follows
        the months the run spans (:func:`traincost.catalog.grid_month_factors`); None: the
        annual average. [-]
    """

    seq_len: int
    global_batch: int
    # a custom architecture's job when none is given: GPT-3's 300e9 tokens (Brown et al.
    # 2020, Table D.1); the presets carry their own
    tokens: float = 300e9
    start: str | None = None

    @property
    def start_month(self) -> float:
        """Where in its calendar year the run starts, in months from 1 January (15 March
        is 2 + 14/31); NaN without a start date. [months]"""
        if self.start is None:
            return math.nan
        d = datetime.date.fromisoformat(self.start)
        days = calendar.monthrange(d.year, d.month)[1]
        return (d.month - 1) + (d.day - 1) / days

    def __post_init__(self):
        if self.start is not None:
            try:
                day = datetime.date.fromisoformat(str(self.start))
            except ValueError:
                raise ValueError(f"start: {self.start!r} is not a date YYYY-MM-DD") from None
            object.__setattr__(self, "start", day.isoformat())   # a date object, as text
        for n in ("seq_len", "global_batch"):
            _check_number(n.replace("_", "-"), getattr(self, n), minimum=0, integer=True)
        _check_number("tokens", self.tokens, minimum=0)
        step = self.global_batch * self.seq_len
        if self.tokens < step:
            raise ValueError(f"tokens: {self.tokens:g} is fewer than one optimizer step's "
                             f"{step:,} (global batch x sequence length)")


@dataclass(frozen=True)
class Stack:
    """The software stack: the kernels, overlaps, recipes and framework that run the model.

    Parameters
    ----------
    attention_kernel : str
        ``"auto"`` (default): the faster fused kernel measured on the device, as
        TransformerEngine picks it (:meth:`Accelerator.attention_kernel_used`: cuDNN's
        on Hopper and Blackwell, flash elsewhere); ``"flash"``: a fused
        (FlashAttention-style) kernel that never writes the s x s
        scores to memory, skips the causal upper triangle and recomputes the scores in
        its backward; ``"cudnn"``: the same algorithm in cuDNN's fused kernel
        (TransformerEngine ``FusedAttention``, its choice on Hopper when
        ``NVTE_FUSED_ATTN=1``), at the device's measured cuDNN rate; ``"materialized"``:
        the unfused softmax of 2019-2021 stacks (Megatron-LM SC21, GPT-3, BLOOM, OPT),
        which stores the scores. [-]
    parallel_block : bool
        Attention and MLP read the same normalised input, y = x + Attn(LN(x)) + MLP(LN(x))
        (GPT-J, PaLM, MegaScale): one norm and one tensor-parallel all-reduce per layer and
        pass instead of two. [-]
    overlap : str
        Communication the software stack overlaps with compute, a comma-separated subset
        of ``tp,pp,dp,ep`` (MegaScale Sec. 3.2; Megatron-Core ``--tp-comm-overlap``,
        ``--overlap-grad-reduce``, ``--overlap-param-gather``; ``ep``: the expert
        all-to-all run on a share of the SMs beside the compute, as DeepSeek-V3's DualPipe
        does, arXiv:2412.19437 Secs. 3.2.1-3.2.2); empty for none. [-]
    balanced_pipeline : bool
        The pipeline split counts the input embedding and the loss as one layer each (Llama
        3, Sec. 3.3.2; Megatron-Core ``--account-for-{embedding,loss}-in-pipeline-split``). [-]
    fp8_activations : bool
        DeepSeek-V3's activation recipe for FP8 training (arXiv:2412.19437 Secs. 3.2.3 and
        3.3.2), for precision fp8 only: norm outputs and MLA up-projections recomputed in the
        backward, the inputs FP8 GEMMs keep for their weight gradients cached in FP8 (the
        attention output in 12-bit E5M6), the MoE SwiGLU output recomputed from its FP8
        input (:func:`traincost.memory.activation_bytes_per_layer`). [-]
    optimizer_state : str
        Adam's state: ``"fp32"`` (default), fp32 master weights, momentum and variance, 12
        bytes per parameter (ZeRO's K = 12); ``"bf16"``, momentum and variance in bf16 and no
        fp32 master copy, 4 bytes, as NeMo's ``distributed_fused_adam`` with ``dtype: bf16``
        on bf16 weights (``store_params`` off). [-]
    framework : str
        Training framework, an id of ``data/frameworks.csv`` (``traincost catalog
        frameworks``): its fitted efficiency factor scales the in-model matmul efficiency
        (``unspecified``, the default: the reference framework's, Megatron-Core). [-]
    lora : bool
        LoRA fine-tuning (Hu et al. 2021, arXiv:2106.09685): the base weights are frozen
        and only low-rank adapters train, so the backward pass computes the gradients of
        the activations but not of the weights (the GEMMs' backward costs one forward, not
        two), and there are no weight gradients to exchange and no optimizer state or step
        for them, nor (:func:`traincost.memory.activation_bytes_per_layer`) MLP inputs for
        weight gradients. The adapters' own work and state (under 0.1% of a 70B model's at
        rank 16) are left out. [-]
    fused_loss : bool
        The loss as fused or compiled kernels (``assumptions.fused_loss_bytes_per_logit``). [-]
    elementwise : str
        How the element-wise work runs (:data:`ELEMENTWISE_MODES`): ``"auto"`` (default), the
        framework's way (``data/frameworks.csv`` ``elementwise``; blank: fused); ``"fused"``
        (torch.compile, XLA, Megatron's and TransformerEngine's fused kernels) or
        ``"eager"`` (PyTorch without a compiler, one kernel an operator: a Llama-style
        block's RMSNorm, rotary embedding and SwiGLU move several times the bytes,
        :func:`traincost.performance.eager_elementwise_passes`). [-]
    fp8_param_gather, fp8_params, fp8_activation_input : bool
        An fp8 run's FP8 habits (``traincost.options`` cites each): ZeRO-3 gathers weights in
        FP8; weights held in FP8, 1 byte a parameter; the MLP activation's input in FP8. [-]
    sync_every : int
        Relaxed synchrony across sites (DiLoCo, arXiv:2311.08105): the sites' replicas
        exchange their updates once every ``sync_every`` steps, each site otherwise its
        own data-parallel group; 1 (default): every step. [-]
    recompute_fraction : float
        The share of each pipeline stage's layers that full recomputation covers, the rest
        recomputing nothing (Megatron-Core ``--recompute-method block
        --recompute-num-layers k``: k of the stage's L/p layers; checkpointing every n-th
        block: 1/n), or, with ``recompute="offload"``, that activation offload covers, the
        rest keeping their activations on the device (Megatron-Core's
        ``cpu_offloading_num_layers`` k: k/L); 1 (default): every layer. [-]
    shard_group : int
        Hybrid sharding: the data-parallel ranks (of one site) that shard the weights,
        gradients and optimizer state together under ZeRO 1-3, the groups being replicas
        that all-reduce their gradient shards across (PyTorch FSDP's HYBRID_SHARD, a node
        by default; MaxText's FSDP inside a TPU slice and data parallelism across slices);
        0 (default): all of them, one flat group. [-]
    expert_tp : int
        The routed experts' tensor-parallel width (Megatron-Core's
        ``--expert-tensor-parallel-size``, "MoE parallel folding"): each expert's GEMMs are
        split over ``expert_tp`` ranks, and the expert-parallel group folds over the
        ``tp / expert_tp`` tensor-parallel ranks the experts are not split over, so ``ep``
        may be up to ``dp * tp / expert_tp``; 0 (default): ``tp``, the experts split as the
        dense layers are. [-]
    """

    attention_kernel: str = "auto"
    parallel_block: bool = False
    overlap: str = ""
    balanced_pipeline: bool = False
    fp8_activations: bool = False
    optimizer_state: str = "fp32"
    framework: str = "unspecified"
    lora: bool = False
    sync_every: int = 1
    fused_loss: bool = False
    elementwise: str = "auto"
    fp8_param_gather: bool = False
    fp8_params: bool = False
    fp8_activation_input: bool = False
    recompute_fraction: float = 1.0
    shard_group: int = 0
    expert_tp: int = 0

    def __post_init__(self):
        if self.attention_kernel not in ATTENTION_KERNELS:
            raise ValueError(f"attention-kernel: {self.attention_kernel!r} is not one of "
                             f"{', '.join(ATTENTION_KERNELS)}")
        parse_overlap(self.overlap)
        if self.elementwise not in ELEMENTWISE_MODES:
            raise ValueError(f"elementwise: {self.elementwise!r} is not one of "
                             f"{', '.join(ELEMENTWISE_MODES)}")
        if self.optimizer_state not in OPTIMIZER_STATES:
            raise ValueError(f"optimizer-state: {self.optimizer_state!r} is not one of "
                             f"{', '.join(OPTIMIZER_STATES)}")
        if not isinstance(self.framework, str) or not self.framework:
            raise ValueError(f"framework: {self.framework!r} is not a framework id")
        _check_number("sync-every", self.sync_every, minimum=0, integer=True)
        _check_number("recompute-fraction", self.recompute_fraction, minimum=0)
        _check_number("shard-group", self.shard_group, minimum=0, exclusive=False,
                      integer=True)
        _check_number("expert-tp", self.expert_tp, minimum=0, exclusive=False, integer=True)
        if self.recompute_fraction > 1:
            raise ValueError(f"recompute-fraction: {self.recompute_fraction!r} must be <= 1 "
                             f"(the share of a stage's layers that full recompute or offload covers)")

    @property
    def overlaps(self) -> frozenset:
        """The communication kinds the stack overlaps (subset of :data:`OVERLAP_KINDS`)."""
        return parse_overlap(self.overlap)


@dataclass(frozen=True)
class ParallelConfig:
    """A parallel layout, or the part of one a user fixes. ``dp`` is derived:
    devices / (tp * pp * cp).

    As an input (``traincost.estimate(parallel=...)``) a knob left as None is searched;
    the layout an estimate reports (:attr:`traincost.Estimate.parallel`) has every knob
    set (:attr:`complete`).

    Parameters
    ----------
    tp, pp, cp, ep : int or None
        Tensor, pipeline, context and expert parallel sizes (ep is carved out of dp). [-]
    vpp : int or None
        Virtual pipeline stages (model chunks) per device, v. [-]
    zero : int or None
        ZeRO stage 0-3 over the data-parallel group. [-]
    micro_batch : int or None
        Sequences per micro-batch, b. [-]
    recompute : str or None
        Activation recomputation: ``none``, ``selective`` or ``full``, or ``offload``
        (nothing recomputed, the activations moved to host memory and back). [-]
    cross_site : str or None
        In a run over several sites (:attr:`System.sites`), the dimension that crosses
        them: ``dp`` (each site holds whole pipelines, the sites exchange gradients) or
        ``pp`` (each site holds some stages of every pipeline, activations cross between
        them). A one-site run ignores it. [-]

    >>> ParallelConfig(tp=8).knobs()["pp"] is None
    True
    """

    tp: int | None = None
    pp: int | None = None
    cp: int | None = None
    ep: int | None = None
    vpp: int | None = None
    zero: int | None = None
    micro_batch: int | None = None
    recompute: str | None = None
    cross_site: str | None = None

    def __post_init__(self):
        for n in ("tp", "pp", "cp", "ep", "vpp", "micro_batch"):
            if getattr(self, n) is not None:
                _check_number(n.replace("_", "-"), getattr(self, n), minimum=0, integer=True)
        if self.zero is not None and self.zero not in (0, 1, 2, 3):
            raise ValueError(f"zero: {self.zero!r} is not one of 0, 1, 2, 3")
        if self.recompute is not None and self.recompute not in RECOMPUTE_MODES:
            raise ValueError(f"recompute: {self.recompute!r} is not one of "
                             f"{', '.join(RECOMPUTE_MODES)}")
        if self.cross_site is not None and self.cross_site not in CROSS_SITE_MODES:
            raise ValueError(f"cross-site: {self.cross_site!r} is not one of "
                             f"{', '.join(CROSS_SITE_MODES)}")

    def knobs(self) -> dict:
        """Knob -> value (None: searched), in declaration order."""
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @property
    def complete(self) -> bool:
        """Every knob is set (nothing is left to search)."""
        return all(v is not None for v in self.knobs().values())


#: the layout a fully specified configuration takes for a knob it leaves out
#: (:func:`traincost.sweep`): no model parallelism, ZeRO 1 (Megatron-Core's distributed
#: optimizer, ``--use-distributed-optimizer``), one sequence per micro-batch and selective
#: recomputation (Megatron-Core's default since Korthikanti et al. 2022, arXiv:2205.05198)
DEFAULT_LAYOUT = {"tp": 1, "pp": 1, "cp": 1, "ep": 1, "vpp": 1, "zero": 1, "micro_batch": 1,
                  "recompute": "selective", "cross_site": "dp"}


@dataclass(frozen=True)
class System:
    """The machine a run trains on: its devices, their power limit and the network tiers.

    The network tiers default to the accelerator's catalog row (its scale-up domain, the
    links inside it and the scale-out fabric per device); a what-if overrides them here.

    Parameters
    ----------
    accelerator : Accelerator
        The device. [-]
    devices : int
        Number of devices. [-]
    power_cap_w : float
        Power limit set on every device (``nvidia-smi -pl``); NaN means the device's rated
        maximum (TDP). It must lie above the device's idle draw and at most its TDP: a
        firmware limit cannot raise the maximum, and it is not clamped silently. [W]
    scaleup_domain_devices : int
        Devices joined by the scale-up links (an 8-GPU HGX board, an NVL72 rack, a TPU
        slice); 0 means the accelerator's. [-]
    scaleup_bytes_per_s : float
        Scale-up bandwidth per device, one direction; NaN means the accelerator's. [B/s]
    scaleout_bytes_per_s : float
        Scale-out (inter-node) bandwidth per device, one direction; NaN means the
        accelerator's. [B/s]
    scaleout_oversubscription : float
        Oversubscription of the scale-out fabric, R:1 (1: non-blocking, as rail-optimised
        AI fabrics are; Llama 3's pods of one building were joined at 1:7, arXiv:2407.21783
        Sec. 3.3.1): traffic between scale-up domains gets 1/R of a device's NIC rate. [-]
    sites : int
        Buildings or regions the devices are split over, evenly (1: one site). [-]
    site_link_bytes_per_s : float
        Bandwidth of the link between two sites, each direction, all the devices of a
        site sharing it; NaN means buildings of one campus
        (:func:`traincost.assemble.site_link`). [B/s]
    site_link_latency_s : float
        One-way latency between two sites; NaN means ``assumptions.site_link_latency_s``. [s]
    interruption_rate_per_device_s : float
        Job interruptions per device and second of training (a failed device, link or
        host stops a synchronous job); NaN means
        ``assumptions.interruption_rate_per_device_s``, Llama 3's. [1/s]
    interruption_lost_s : float
        Wall clock each interruption costs (restart, reload, the steps redone); NaN means
        ``assumptions.interruption_lost_s``. [s]
    """

    accelerator: Accelerator
    devices: int
    power_cap_w: float = math.nan
    scaleup_domain_devices: int = 0
    scaleup_bytes_per_s: float = math.nan
    scaleout_bytes_per_s: float = math.nan
    scaleout_oversubscription: float = 1.0
    sites: int = 1
    site_link_bytes_per_s: float = math.nan
    site_link_latency_s: float = math.nan
    interruption_rate_per_device_s: float = math.nan
    interruption_lost_s: float = math.nan

    def __post_init__(self):
        if not isinstance(self.accelerator, Accelerator):
            raise ValueError(f"accelerator: {self.accelerator!r} is not an Accelerator")
        _check_number("devices", self.devices, minimum=0, integer=True)
        _check_number("power-cap", self.power_cap_w, minimum=0, allow_nan=True)
        acc, cap = self.accelerator, self.power_cap_w
        if not math.isnan(cap) and not acc.idle_w < cap <= acc.tdp_w:
            raise ValueError(f"power-cap: {cap:g} W is outside what {acc.id} allows: above "
                             f"its idle draw {acc.idle_w:g} W and at most its rated maximum "
                             f"{acc.tdp_w:g} W")
        _check_number("scaleup_domain_devices", self.scaleup_domain_devices, minimum=0,
                      exclusive=False, integer=True)
        for n in ("scaleup_bytes_per_s", "scaleout_bytes_per_s"):
            _check_number(n, getattr(self, n), minimum=0, allow_nan=True)
        _check_number("oversubscription", self.scaleout_oversubscription, minimum=1.0,
                      exclusive=False)
        _check_number("sites", self.sites, minimum=0, integer=True)
        if self.devices % self.sites:
            raise ValueError(f"sites: {self.sites} does not divide the {self.devices} devices "
                             "(each site holds the same number)")
        _check_number("site-link-gbps", self.site_link_bytes_per_s, minimum=0, allow_nan=True)
        _check_number("site-link-latency-ms", self.site_link_latency_s, minimum=0,
                      exclusive=False, allow_nan=True)
        _check_number("interruption-rate", self.interruption_rate_per_device_s, minimum=0,
                      exclusive=False, allow_nan=True)
        _check_number("interruption-minutes", self.interruption_lost_s, minimum=0,
                      exclusive=False, allow_nan=True)

    @property
    def power_limit_w(self) -> float:
        """The power limit in force: the cap, else the device's TDP. [W]"""
        return self.accelerator.tdp_w if math.isnan(self.power_cap_w) else float(self.power_cap_w)

    @property
    def domain_devices(self) -> int:
        """Devices per scale-up domain. [-]"""
        return self.scaleup_domain_devices or self.accelerator.scaleup_domain_devices

    @property
    def scaleup_bw(self) -> float:
        """Scale-up bandwidth per device, one direction. [B/s]"""
        return (self.accelerator.scaleup_bytes_per_s if math.isnan(self.scaleup_bytes_per_s)
                else float(self.scaleup_bytes_per_s))

    @property
    def scaleout_bw(self) -> float:
        """Scale-out bandwidth per device, one direction (NaN: the catalog gives none). [B/s]"""
        return (self.accelerator.scaleout_bytes_per_s if math.isnan(self.scaleout_bytes_per_s)
                else float(self.scaleout_bytes_per_s))


@dataclass(frozen=True)
class Site:
    """Where the run happens and how it is paid for (the devices' power limit is the
    :class:`System`'s).

    Parameters
    ----------
    pue : float
        Power usage effectiveness, facility / IT energy (>= 1). [-]
    grid_gco2e_per_kwh : float
        Location-based grid carbon intensity. [gCO2e/kWh]
    price_usd_per_h : float
        Price per device-hour; NaN means the accelerator's catalog price. [USD/h]
    price_model : str
        ``rental`` (device-hours x price) or ``ownership`` (amortised purchase +
        electricity). [-]
    electricity_usd_per_kwh : float
        Electricity price for the ownership model; NaN means the assumption default. [USD/kWh]
    region : str
        Label of the grid region. [-]
    pue_source, grid_source : str
        Where the PUE and the grid intensity come from (``given`` when the user set them). [-]
    pue_scope : str
        What the PUE figure describes (``data/pue.csv`` scope: an operator's fleet, a
        survey average, ...; ``given``): how far one site may lie from it
        (:mod:`traincost.uncertainty`). [-]
    wue_l_per_kwh : float
        On-site water usage effectiveness: water the data centre consumes (evaporates) per
        kWh of IT energy, The Green Grid's WUE; NaN: unknown. [L/kWh]
    grid_water_l_per_kwh : float
        Water the grid's generation consumes per kWh of electricity (off-site); NaN:
        unknown. [L/kWh]
    wue_source, water_source : str
        Where the two water figures come from (``given`` when the user set them). [-]
    grid_months : tuple or None
        A site pooled from several regions: its grid's twelve factors by calendar month
        and their source (:func:`traincost.assemble.pooled_grid_months`), ``()`` where
        none of the regions has monthly figures; None: looked up by ``region``. [-]
    """

    pue: float
    grid_gco2e_per_kwh: float
    price_usd_per_h: float = math.nan
    price_model: str = "rental"
    electricity_usd_per_kwh: float = math.nan
    region: str = "custom"
    pue_source: str = ""
    grid_source: str = ""
    pue_scope: str = ""
    wue_l_per_kwh: float = math.nan
    grid_water_l_per_kwh: float = math.nan
    wue_source: str = ""
    water_source: str = ""
    grid_months: tuple | None = None

    def __post_init__(self):
        _check_number("pue", self.pue, minimum=1.0, exclusive=False)
        if self.pue > 3.0:
            raise ValueError(f"pue: {self.pue} is above 3, beyond any surveyed data centre")
        _check_number("grid-intensity", self.grid_gco2e_per_kwh, minimum=0, exclusive=False)
        _check_number("price-per-hour", self.price_usd_per_h, minimum=0, allow_nan=True)
        _check_number("electricity_usd_per_kwh", self.electricity_usd_per_kwh, minimum=0,
                      exclusive=False, allow_nan=True)
        _check_number("wue", self.wue_l_per_kwh, minimum=0, exclusive=False, allow_nan=True)
        _check_number("grid_water_l_per_kwh", self.grid_water_l_per_kwh, minimum=0,
                      exclusive=False, allow_nan=True)
        if self.price_model not in PRICE_MODELS:
            raise ValueError(f"price_model: {self.price_model!r} is not one of "
                             f"{', '.join(PRICE_MODELS)}")


def as_dict(obj) -> dict:
    """Fields of a dataclass instance as a plain dict."""
    return {f.name: getattr(obj, f.name) for f in fields(obj)}
