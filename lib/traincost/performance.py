"""Compute time of matrix and element-wise work, pipeline schedule, step time.

All functions broadcast over numpy arrays.

The efficiency model, stated once:

* A matrix multiply (M x K) @ (K x N) runs at the slower of its compute time at the
  *achieved* matmul rate and its HBM time (a roofline):
  ``t = max(2*M*K*N / F_eff, e*(M*K + K*N + M*N) / BW)``, with
  ``F_eff = peak * mamf_fraction * in_model_matmul_fraction``: the device's measured
  maximum achievable matmul FLOP/s (MAMF) over peak, times the share of MAMF a whole
  layer's GEMMs reach. Small micro-batches and thin tensor-parallel shards fall onto the
  bandwidth roof by themselves.
* A fused attention kernel runs at its measured (isolated) rate, scaled to the keys each
  call spans, times the same in-model share: MAMF and the attention benchmarks are both
  kernels timed alone.
* Element-wise work (norms, activation functions, dropout, softmax, residuals) is
  HBM-bound: it moves ``elementwise_traffic_factor`` times the bytes the layer stores.

References
----------
.. [1] Williams, Waterman & Patterson, "Roofline", CACM 2009.
.. [2] Narayanan et al., SC21, arXiv:2104.04473, Sec. 2.2 (bubble (p-1)/(v*m)) and 3.4.
.. [3] stas00/ml-engineering, compute/accelerator: maximum achievable matmul FLOP/s.
.. [4] Dao 2023, FlashAttention-2 (arXiv:2307.08691) Sec. 4.1, Fig. 4 (A100, causal, forward
   and backward, sequence 512 to 16k at 16k tokens per batch); Shah et al. 2024,
   FlashAttention-3 (arXiv:2407.08608) Fig. 5d (H100, causal forward).
"""

from __future__ import annotations

import numpy as np


def gemm_time(m, k, n, flop_per_s, bytes_per_s, bytes_per_element=2.0):
    """Roofline time of one (m x k) @ (k x n) matrix multiply.

    Parameters
    ----------
    m, k, n : float or array
        GEMM dimensions. [-]
    flop_per_s : float or array
        Achieved compute-bound matmul rate. [FLOP/s]
    bytes_per_s : float or array
        Memory bandwidth. [bytes/s]
    bytes_per_element : float
        Bytes per operand element. [bytes]

    Returns
    -------
    Time. [s]

    Examples
    --------
    >>> round(float(gemm_time(4096, 4096, 4096, 1e14, 1e12)), 6)   # 2*4096^3/1e14, compute-bound
    0.001374
    """
    compute = 2.0 * m * k * n / flop_per_s
    memory = bytes_per_element * (m * k + k * n + m * n) / bytes_per_s
    return np.maximum(compute, memory)


def layer_forward_time(tokens, hidden, heads, kv_heads, head_dim, v_dim, qk_dim, attn_weights,
                       mlp_in, mlp_out, experts_local, expert_tokens, seq_keys, tp,
                       stored_full_bytes, flop_per_s, bytes_per_s, traffic_factor,
                       bytes_per_element=2.0):
    """Forward time of one transformer layer for one micro-batch on one device.

    Parameters
    ----------
    tokens : float or array
        Tokens of the micro-batch on this device, b*s/cp. [tokens]
    hidden, heads, kv_heads, head_dim, v_dim, qk_dim : int or array
        h, a, a_kv, d, value head size, query/key head size. [-]
    attn_weights : float or array
        Attention projection weights of the layer (all heads). [params]
    mlp_in, mlp_out : float or array
        Output width of the MLP's first GEMM(s) (f, or 2f gated) and input width of its
        last (f); for an MoE layer those of one expert. [-]
    experts_local : float or array
        GEMMs the MLP runs per device (1 for dense, routed experts on this device plus
        shared experts for MoE). [-]
    expert_tokens : float or array
        Tokens each of those GEMMs sees (tokens for dense; tokens*k*ep/E for experts). [tokens]
    seq_keys : float or array
        Keys each query attends to (the full sequence s). [tokens]
    tp : int or array
        Tensor-parallel size. [-]
    stored_full_bytes : float or array
        Bytes of activations the layer produces (full set, this device). [bytes]
    flop_per_s, bytes_per_s : float or array
        Achieved matmul rate and HBM bandwidth. [FLOP/s], [bytes/s]
    traffic_factor : float
        HBM traffic of element-wise work per stored byte. [-]

    Returns
    -------
    (attention_matmul_s, mlp_matmul_s, attention_core_s, elementwise_s) for the forward
    pass, the core over the full s x s square. [s]

    Notes
    -----
    Attention projections run as one GEMM of width W_attn/(h*t); the MLP as
    ``experts_local`` GEMM pairs of (expert_tokens x h x mlp_in/t) and
    (expert_tokens x mlp_out/t x h). The attention core (Q K^T and the weighted sum)
    does 2*tokens*s*a*(d_qk + d_v)/t FLOP at the matmul rate (fused flash-style kernels
    do not write the s x s scores to HBM).
    """
    attn = gemm_time(tokens, hidden, attn_weights / (hidden * tp), flop_per_s, bytes_per_s,
                     bytes_per_element)
    mlp = experts_local * (
        gemm_time(expert_tokens, hidden, mlp_in / tp, flop_per_s, bytes_per_s, bytes_per_element)
        + gemm_time(expert_tokens, mlp_out / tp, hidden, flop_per_s, bytes_per_s,
                    bytes_per_element))
    core = 2.0 * tokens * seq_keys * heads * (qk_dim + v_dim) / tp / flop_per_s
    elementwise = traffic_factor * stored_full_bytes / bytes_per_s
    return attn, mlp, core, elementwise


def eager_elementwise_passes(hidden, rope_width, mlp_width, llama_block, rmsnorm_passes,
                             rope_passes, swiglu_passes):
    """What eager element-wise work moves beyond fused kernels, per token of one layer's
    forward. [16-bit elements / token]

    ``E = [llama_block] * (2 * n_norm * h + n_rope * w_rope + n_swiglu * w_mlp)``: a
    Llama-style block (RMSNorm, rotary embeddings, SwiGLU: every gated preset) run one
    PyTorch kernel an operator makes each of its two RMSNorms, its rotary embedding of the
    queries and keys (``rope_width`` elements a token) and its SwiGLU (``mlp_width``, the
    inner width f) read and write intermediates a fused kernel keeps in registers
    (``n_norm``, ``n_rope``, ``n_swiglu``: the eager kernels' reads and writes, counted op by
    op in ``traincost.assumptions``, less the fused kernel's). A GPT-style block's
    LayerNorm and GELU are one PyTorch kernel each, eager or not: 0. Left out: the
    key/value repeat of grouped-query attention and layout copies around the attention
    kernel (a few passes more), which make this a floor.

    Examples
    --------
    Llama 3.1 8B (h 4096, 32 query and 8 key/value heads of 128, f 14336): 2*16*4096 +
    8*(32+8)*128 + 2*14336 = 131072 + 40960 + 28672:

    >>> float(eager_elementwise_passes(4096, (32 + 8) * 128, 14336, True, 16, 8, 2))
    200704.0
    >>> float(eager_elementwise_passes(4096, 8192, 16384, False, 16, 8, 2))
    0.0
    """
    extra = 2 * rmsnorm_passes * hidden + rope_passes * rope_width + swiglu_passes * mlp_width
    return np.where(llama_block, extra, 0.0)


def attention_rate(measured_flop_per_s, kv_tokens, measured_kv_tokens, half_rate_kv_tokens):
    """Throughput of a fused attention kernel at the keys each query row attends to.

    A flash-style kernel pays a fixed cost per block of query rows (load Q, rescale and
    write O and its log-sum-exp, mask the diagonal block) and streams the keys past it, so
    its rate grows with the keys per query row ``L`` as ``L / (L + L0)`` (module reference [4]):

    ``rate(L) = rate_measured * [L / (L + L0)] / [L_measured / (L_measured + L0)]``

    Parameters
    ----------
    measured_flop_per_s : float or array
        The kernel's measured rate on the device (forward and backward). [FLOP/s]
    kv_tokens : float or array
        Mean keys per query row in one kernel call, ``L``: s/2 for a causal sequence of
        s (a context-parallel rank's call spans s/cp of it). [tokens]
    measured_kv_tokens : float or array
        ``L`` of the benchmark that measured the rate. [tokens]
    half_rate_kv_tokens : float
        ``L0``, the keys per row at which the kernel runs at half its long-sequence rate
        (:attr:`traincost.Assumptions.attention_half_rate_kv_tokens`). [tokens]

    Returns
    -------
    Rate. [FLOP/s]

    Examples
    --------
    >>> round(float(attention_rate(100.0, 1000.0, 1000.0, 250.0)), 9)   # at the measured size
    100.0
    >>> round(float(attention_rate(100.0, 250.0, 1e12, 250.0)), 6)     # L = L0: half of long L
    50.0
    """
    def share(kv):
        return kv / (kv + half_rate_kv_tokens)
    return measured_flop_per_s * share(kv_tokens) / share(measured_kv_tokens)


def pipeline_bubble_fraction(pp, vpp, num_microbatches):
    """Idle share of the pipeline relative to the ideal time: (p - 1)/(v * m) [2]. [-]

    Examples
    --------
    >>> float(pipeline_bubble_fraction(8, 1, 96))
    0.07291666666666667
    """
    return (pp - 1) / (vpp * num_microbatches)


def exposed(time_s, window_s, overlap_fraction):
    """Communication left on the critical path after overlapping it with a window.

    Parameters
    ----------
    time_s : float or array
        Communication time. [s]
    window_s : float or array
        Compute time it may overlap with. [s]
    overlap_fraction : float
        Share of that window usable for overlap. [-]

    Returns
    -------
    max(0, time - overlap_fraction * window). [s]
    """
    return np.maximum(0.0, time_s - overlap_fraction * window_s)


def stack_exposed(time_s, window_s, stack_overlaps, window_fraction, plain_fraction=0.0,
                  hidden_share=np.nan):
    """Communication left on the critical path, with or without a stack that overlaps it.

    Parameters
    ----------
    time_s, window_s : float or array
        Communication time and the compute it may hide behind. [s]
    stack_overlaps : bool or array
        The software stack overlaps this kind (``Workload.overlap``). [-]
    window_fraction : float
        Share of the window an overlapping stack can use. [-]
    plain_fraction : float
        Share of the communication hidden when the stack does not overlap it. [-]
    hidden_share : float or array
        Share of the communication an overlapping stack is measured to hide, where that is
        known (torchtitan's async TP: ``data/frameworks.csv`` ``tp_overlap_hidden_share``),
        at most what the window allows; NaN: the window alone decides. [-]

    Returns
    -------
    ``max(exposed(time, window, window_fraction), time * (1 - hidden_share))`` where the
    stack overlaps, else ``time * (1 - plain_fraction)``. [s]

    Examples
    --------
    >>> [float(x) for x in stack_exposed(3.0, 2.0, np.array([True, False]), 1.0, 0.5)]
    [1.0, 1.5]
    >>> float(stack_exposed(4.0, 10.0, True, 1.0, 0.0, 0.25))      # 75% of 4 s stays
    3.0
    """
    window = exposed(time_s, window_s, window_fraction)
    measured = np.where(np.isnan(hidden_share), 0.0,
                        time_s * (1 - np.nan_to_num(hidden_share)))
    return np.where(stack_overlaps, np.maximum(window, measured),
                    time_s * (1 - plain_fraction))


def overlap_contention(hidden_s, compute_slowdown):
    """Compute time lost to communication that runs beside it. [s]

    ``t_h s / (1 + s)``: while a collective runs beside the compute, the compute kernels run
    ``1 + s`` times slower than alone (the collective's kernels hold SMs and share the HBM),
    so of the ``t_h`` seconds the hidden communication lasts only ``t_h / (1 + s)`` seconds
    of the compute get done, and the rest runs after (Lee et al. 2025, arXiv:2507.03114:
    s = 18.9% on average over GPT and Llama layers on four A100, H100, MI250 and MI210).

    Parameters
    ----------
    hidden_s : float or array
        Communication hidden behind compute, ``t_h``. [s]
    compute_slowdown : float or array
        How much slower compute runs beside a collective, ``s``. [-]

    Examples
    --------
    One second of compute runs 1.25 s beside a collective that slows it by 25%; a collective
    of 1.25 s costs it the 0.25 s:

    >>> float(overlap_contention(1.25, 0.25))
    0.25
    """
    return hidden_s * compute_slowdown / (1.0 + compute_slowdown)


def framework_matmul_fraction(in_model_fraction, framework_factor, headroom=1.0):
    """The share of the device's maximum achievable matmul rate a framework's layers reach. [-]

    ``min(headroom, in_model_fraction * framework_factor)``: the reference framework's
    in-model fraction (fitted on Megatron-Core/NeMo runs) scaled by the framework's factor
    (fitted on its own published runs, :func:`traincost.catalog.framework_factor`), at most
    ``headroom``: 1 where the maximum achievable matmul rate was measured on the device (no
    layer's GEMMs beat it), peak / assumed MAMF where it was not (no GEMM beats the peak).

    >>> float(framework_matmul_fraction(0.72, 0.8))
    0.576
    >>> float(framework_matmul_fraction(0.72, 1.5))
    1.0
    >>> float(framework_matmul_fraction(0.72, 1.5, 1 / 0.8))
    1.08
    """
    return np.minimum(headroom, in_model_fraction * framework_factor)


def achieved_matmul_rate(peak_flop_per_s, mamf_fraction, in_model_fraction, fp8, fp8_fraction,
                         clock_fraction=1.0):
    """The rate a whole layer's GEMMs run at on one device. [FLOP/s]

    ``F_eff = peak * mamf_fraction * in_model_fraction * [fp8: fp8_fraction] * clock``: the
    measured maximum achievable matmul rate, the share of it a layer's GEMMs reach, fp8's own
    share where the run's GEMMs are fp8, and the clock a power limit leaves
    (:func:`traincost.power.capped_clock_fraction`).

    >>> float(achieved_matmul_rate(989e12, 0.8, 0.9, False, 0.7))
    712080000000000.0
    """
    return peak_flop_per_s * mamf_fraction * in_model_fraction \
        * np.where(fp8, fp8_fraction, 1.0) * clock_fraction


def moe_layer_matmul_time(tokens, hidden, heads, kv_heads, head_dim, v_dim, qk_dim,
                          attn_weights, moe_ffn_hidden, gated, experts, ep, top_k,
                          shared_experts, seq_keys, tp, stored_full_bytes, flop_per_s,
                          bytes_per_s, traffic_factor, bytes_per_element=2.0, expert_tp=None,
                          tile_rows=0.0):
    """Forward matmul time of one mixture-of-experts layer for one micro-batch. [s]

    The attention projections (split over ``tp``), the E/ep experts on this device, each
    GEMM pair split over the experts' own tensor-parallel width ``e`` (``expert_tp``,
    default tp) and seeing ``tokens * k * ep * (e/t) / E`` tokens, the shared experts (every
    token, one GEMM pair each, split over tp) and the router (``tokens x h x E``). Zero
    where E = 0.

    The experts' tokens keep a device's share of the layer's expert work whatever the
    folding: the E/ep experts' FLOPs, ``(E/ep) T_e 2 g h f/e``, equal the micro-batch's
    ``tokens k 2 g h f / t``, as for an expert group split like the dense layers (Megatron-
    Core's MoE parallel folding re-partitions the same ranks, it does not add any).

    Examples
    --------
    On a device that only computes (unbounded bandwidth), 1 token, h = 2, f = 3, not gated,
    8 experts over ep 8, top-1: the attention (2 x 1 x 2 x 4 FLOP), the device's one expert
    seeing 1 x 1 x 8 / 8 = 1 token (2 x 1 x 2 x 3, twice) and the router (2 x 1 x 2 x 8):
    16 + 24 + 32 = 72 FLOP.

    >>> float(moe_layer_matmul_time(1, 2, 1, 1, 2, 2, 2, 8, 3, False, 8, 8, 1, 0, 1, 1, 0.0,
    ...                              1.0, np.inf, 0.0))
    72.0

    Folded, the same device's work in other shapes: tp 2 with the experts unsplit (e = 1)
    sees half the tokens per expert at the whole width, so the same expert FLOPs.

    >>> [float(moe_layer_matmul_time(4, 2, 1, 1, 2, 2, 2, 8, 4, False, 8, 8, 1, 0, 1, 2,
    ...                               0.0, 1.0, np.inf, 0.0, expert_tp=e)) for e in (2, 1)]
    [224.0, 224.0]

    A grouped GEMM that tiles its sorted rows (``tile_rows`` t_m > 0: MaxText's megablox
    ``gmm``/``tgmm``, ``make_group_metadata``) computes a whole t_m-row tile once per group
    that starts inside it: ``m/t_m + G - 1`` tile visits for m rows in G groups (group
    boundaries fall mid-tile), so each of the G local experts runs
    ``T_e + t_m (G - 1)/G`` rows (m padded to whole tiles, as MaxText pads it; routed
    counts vary, so a boundary lands on a tile's first row only by chance). The device above
    with 8 tokens and 2 experts (ep 4), 4 each on average, in 4-row tiles with the boundary
    between them mid-tile: 3 visits, 6 rows an expert, so the experts' 8 x 24 = 192 FLOP
    become 12 x 24 = 288, with the attention 8 x 16 and the router 8 x 32: 672 (576 plain).

    >>> [float(moe_layer_matmul_time(8, 2, 1, 1, 2, 2, 2, 8, 3, False, 8, 4, 1, 0, 1, 1,
    ...                               0.0, 1.0, np.inf, 0.0, tile_rows=t)) for t in (0.0, 4.0)]
    [576.0, 672.0]
    """
    up = np.where(gated, 2, 1)
    etp = tp if expert_tp is None else expert_tp
    experts_per_device = np.where(experts > 0, experts / ep, 0)
    tokens_per_expert = np.where(experts > 0, tokens * top_k * ep * etp / tp
                                 / np.maximum(experts, 1), 0)
    # each local group after the first starts inside a tile: one more whole tile visited
    tokens_per_expert = tokens_per_expert + tile_rows * np.maximum(
        experts_per_device - 1, 0) / np.maximum(experts_per_device, 1)
    # one layer's formula twice: the attention split over tp, the experts over their own e
    attn, _, _, _ = layer_forward_time(
        tokens, hidden, heads, kv_heads, head_dim, v_dim, qk_dim, attn_weights,
        up * moe_ffn_hidden, moe_ffn_hidden, 0.0, 0.0, seq_keys,
        tp, stored_full_bytes, flop_per_s, bytes_per_s, traffic_factor, bytes_per_element)
    _, mlp, _, _ = layer_forward_time(
        tokens, hidden, heads, kv_heads, head_dim, v_dim, qk_dim, attn_weights,
        up * moe_ffn_hidden, moe_ffn_hidden, experts_per_device, tokens_per_expert, seq_keys,
        etp, stored_full_bytes, flop_per_s, bytes_per_s, traffic_factor, bytes_per_element)
    shared = shared_experts * (
        gemm_time(tokens, hidden, up * moe_ffn_hidden / tp, flop_per_s, bytes_per_s,
                  bytes_per_element)
        + gemm_time(tokens, moe_ffn_hidden / tp, hidden, flop_per_s, bytes_per_s,
                    bytes_per_element))
    router = gemm_time(tokens, hidden, experts, flop_per_s, bytes_per_s,
                       bytes_per_element) * (experts > 0)
    return attn + mlp + shared + router


def fused_attention_rate(measured_flop_per_s, clock_fraction, measured_kv_tokens, seq_len,
                         causal_fraction, half_rate_kv_tokens, matmul_flop_per_s,
                         unmeasured_fraction=1.0):
    """The rate a fused (flash) attention core runs at in this configuration. [FLOP/s]

    The device's measured fused-attention rate, clocked down under a power limit, scaled
    from the benchmark's keys per query row to this call's (``causal_fraction * seq_len``,
    seq_len the tokens on this context-parallel rank) by :func:`attention_rate`; unscaled
    where the benchmark's keys are unknown (NaN). Where no rate was measured,
    ``unmeasured_fraction`` of ``matmul_flop_per_s``, the device's 16-bit matmul ceiling
    (MAMF, clocked): the share of theirs the measured devices' fused kernels reach
    (:attr:`traincost.Assumptions.unmeasured_attention_matmul_fraction`).

    >>> [float(fused_attention_rate(r, 1.0, np.nan, 4096, 0.5, 2048, 5e14, 0.5))
    ...  for r in (3e14, np.nan)]
    [300000000000000.0, 250000000000000.0]
    """
    rate = measured_flop_per_s * clock_fraction
    rate = np.where(np.isfinite(measured_kv_tokens), attention_rate(
        rate, causal_fraction * seq_len, measured_kv_tokens, half_rate_kv_tokens), rate)
    return np.where(np.isfinite(rate), rate, matmul_flop_per_s * unmeasured_fraction)


def mixed_rate(rate_a, rate_b, share_b):
    """The rate of work done a share ``share_b`` of its FLOPs at ``rate_b`` and the rest at
    ``rate_a``: the FLOP-weighted harmonic mean ``1 / ((1 - x) / r_a + x / r_b)``, as the
    attention core of a model whose windowed layers' kernel calls span fewer keys a row
    runs (:func:`traincost.workload.window_keys`). [FLOP/s]

    >>> float(mixed_rate(400.0, 100.0, 0.5))    # 0.5/400 + 0.5/100 = 1/160
    160.0
    """
    return 1.0 / ((1.0 - share_b) / rate_a + share_b / rate_b)


def attention_core_time(core_s, fused, matmul_flop_per_s, fused_flop_per_s, causal_fraction,
                        backward_forward_ratio):
    """Forward time of the attention core, and what its backward adds beyond twice it. [s]

    ``core_s`` is the full s x s square at the matmul rate (:func:`layer_forward_time`). A
    fused kernel skips the causal upper triangle (``causal_fraction`` of the work) at its own
    rate, and recomputes the scores in its backward (FlashAttention-2, Dao 2023, Sec. 3.1:
    ``backward_forward_ratio`` = 2.5 forwards instead of 2).

    Returns
    -------
    (forward_s, backward_extra_s). [s]

    >>> [float(x) for x in attention_core_time(4.0, True, 2.0, 1.0, 0.5, 2.5)]
    [4.0, 2.0]
    >>> [float(x) for x in attention_core_time(4.0, False, 2.0, 1.0, 0.5, 2.5)]
    [4.0, 0.0]
    """
    forward = core_s * np.where(fused, causal_fraction * matmul_flop_per_s / fused_flop_per_s,
                                1.0)
    backward_extra = np.where(fused, (backward_forward_ratio - 2.0) * forward, 0.0)
    return forward, backward_extra


def mla_up_projection_time(tokens, kv_lora_rank, q_lora_rank, heads, head_dim, v_dim, qk_dim,
                           tp, flop_per_s, bytes_per_s, bytes_per_element=2.0):
    """Forward time of an MLA layer's key/value (and low-rank query) up-projections. [s]

    ``tokens x r_kv x a (d + d_v) / t``, plus ``tokens x r_q x a d_qk / t`` where the query
    is low-rank (DeepSeek-V3, arXiv:2412.19437, Sec. 2.1.1): what its FP8 recipe recomputes.

    >>> float(mla_up_projection_time(1, 2, 0, 1, 1, 1, 2, 1, 1.0, np.inf, 0.0))   # 2*1*2*2
    8.0
    """
    kv_up = gemm_time(tokens, kv_lora_rank, heads * (head_dim + v_dim) / tp, flop_per_s,
                      bytes_per_s, bytes_per_element)
    q_up = gemm_time(tokens, q_lora_rank, heads * qk_dim / tp, flop_per_s, bytes_per_s,
                     bytes_per_element)
    return kv_up + np.where(q_lora_rank > 0, q_up, 0.0)


def recompute_time(forward_s, core_s, full, selective, matmul_s=0.0, elementwise_s=0.0,
                   recompute_matmul_share=np.nan, core_and_elementwise=False):
    """What activation recomputation adds to a layer's backward. [s]

    Full recomputation reruns the whole forward; selective only the attention core's
    forward ``core_s`` (Korthikanti et al. Sec. 5): the materialized scores, or a fused
    kernel's call where the stack checkpoints it (the caller decides ``selective``).
    A per-operator selective policy that recomputes a share rho of the matmuls
    (``recompute_matmul_share``, :func:`traincost.workload.odd_matmul_recompute_share`;
    NaN: Megatron's) reruns them and every element-wise op, ``rho * matmul_s +
    elementwise_s``, whatever the attention kernel. A policy that keeps every weight
    matmul's output (``core_and_elementwise``: MaxText's 'minimal') reruns the core and
    every element-wise op, ``core_s + elementwise_s``.

    >>> [float(recompute_time(3.0, 1.0, f, s)) for f, s in ((True, False), (False, True), (False, False))]
    [3.0, 1.0, 0.0]
    >>> float(recompute_time(3.0, 0.0, False, True, 2.0, 0.25, 0.5))     # 0.5 x 2 + 0.25
    1.25
    >>> float(recompute_time(3.0, 1.0, False, True, 1.5, 0.5, np.nan, True))   # 1 + 0.5
    1.5
    """
    op = np.nan_to_num(recompute_matmul_share) * matmul_s + elementwise_s
    core = core_s + np.where(core_and_elementwise, elementwise_s, 0.0)
    return np.where(full, forward_s, np.where(
        selective, np.where(np.isnan(recompute_matmul_share), core, op), 0.0))


def offload_exposed_time(layer_bytes, host_bytes_per_s, forward_s, backward_s):
    """What moving a layer's activations to host memory and back adds to its work. [s]

    Under activation offload (recompute code ``offload``) each layer's saved activations go
    to the host after its forward and come back before its backward, on the copy engines
    beside the compute and double-buffered (Megatron-Core / TransformerEngine CPU
    offloading): the copy out of layer i runs under layer i+1's forward, the copy back
    under layer i+1's backward. Each copy takes ``c = bytes / host rate`` and shows where
    it outlasts the compute it hides behind:
    ``max(0, c - t_fwd) + max(0, c - t_bwd)``.

    Parameters
    ----------
    layer_bytes : float or array
        One layer's activations for one micro-batch on one device. [bytes]
    host_bytes_per_s : float or array
        The device's achieved copy rate to host memory, each direction. [bytes/s]
    forward_s, backward_s : float or array
        The layer's forward and backward time for that micro-batch. [s]

    Examples
    --------
    3 GB at 50 GB/s takes 60 ms each way; behind a 40 ms forward 20 ms shows, behind an
    80 ms backward nothing:

    >>> round(float(offload_exposed_time(3e9, 50e9, 0.040, 0.080)), 6)
    0.02
    """
    copy = layer_bytes / host_bytes_per_s
    return np.maximum(copy - forward_s, 0.0) + np.maximum(copy - backward_s, 0.0)


def training_work(forward_s, backward_extra_s, recompute_s, frozen_matmul_s=0.0):
    """Forward, backward and recompute time of one layer for one micro-batch. [s]

    ``3 t_fwd + t_bwd,extra + t_recompute - t_frozen``: a backward costs two forwards (the
    gradients of the inputs and of the weights, Narayanan et al. SC21 Sec. 5.1), plus what
    a fused attention core's backward adds beyond that and the recomputation; with frozen
    weights (LoRA) the matmuls' weight gradients, ``t_frozen`` = one forward of the
    matmuls, are not computed.

    >>> float(training_work(2.0, 0.5, 2.0)), float(training_work(2.0, 0.5, 2.0, 1.5))
    (8.5, 7.0)
    """
    return 3 * forward_s + backward_extra_s + recompute_s - frozen_matmul_s


def stage_compute_time(layers_per_stage, layer_work_s, output_work_s, balanced, layers, pp,
                       comm_sm_fraction=0.0):
    """Compute time of one micro-batch on the fullest pipeline stage. [s]

    A 1F1B pipeline runs at its slowest stage's pace. In an even split (Megatron-Core's
    default: it counts the loss as a layer only with ``account_for_loss_in_pipeline_split``)
    the last stage computes the output layer (and MTP modules) whole beside its
    ``L_stage`` layers: ``L_stage * t_layer + t_out``; without a pipeline the one stage is
    the last. A balanced split moves layers off the stages that hold the embedding and the
    output layer (Llama 3, arXiv:2407.21783, Sec. 3.3.2; DeepSeek-V3's DualPipe, arXiv:
    2412.19437, Sec. 3.2.3): the pace is the fullest stage's layers or an even share of the work,
    ``max(L_stage * t_layer, (L * t_layer + t_out) / p)``, whichever is more. A stack that
    runs communication beside the compute leaves it ``1 - comm_sm_fraction`` of the SMs
    (DeepSeek-V3: 20 of 132 for the expert all-to-all, Secs. 3.2.2, 3.5.1).

    >>> float(stage_compute_time(12, 1.0, 8.0, False, 96, 8))
    20.0
    >>> float(stage_compute_time(12, 1.0, 8.0, True, 96, 8, 0.5))      # max(12, 104 / 8)
    26.0
    """
    work = np.where(balanced,
                    np.maximum(layers_per_stage * layer_work_s,
                               (layers * layer_work_s + output_work_s) / pp),
                    layers_per_stage * layer_work_s + output_work_s)
    return work / (1.0 - comm_sm_fraction)


def layer_overhead_time(layers_per_stage, overhead_per_layer_s):
    """A framework's fixed time on one pipeline stage for one micro-batch. [s]

    ``L_stage * t_layer``: each layer on the stage (the fullest stage's, which sets the
    pipeline's pace, :func:`traincost.workload.stage_layers`) costs its framework a fixed
    ``t_layer`` per micro-batch, whatever the micro-batch's size, tensor-parallel degree or
    precision (:func:`traincost.catalog.framework_layer_overhead`: fitted with the
    framework's factor on its own published runs, beyond the reference stack's own, which
    its shared constants hold).

    Why such a term: where a framework's host issues each layer's kernels, hooks and
    collectives for every micro-batch, part of that work does not shrink with the
    micro-batch. BigScience's tr11 sweep (Megatron-DeepSpeed, 2022) times the same
    model at TP 4 x PP 12 with micro-batches of 2 and 4 sequences at 102.03 and 102.27 s,
    where the bubble alone makes the second 8% slower; its TP 8 layouts, with twice the
    micro-batches a replica of their TP 4 twins, ran 5-19% slower. OLMo-core's 1B model
    gained 25-27% in throughput from micro-batch 4 to 8, and its FP8 runs gained 1.16-1.32x
    over BF16 where the GEMMs alone would give 1.31-1.46x (data/README.md, frameworks).

    >>> round(float(layer_overhead_time(6, 0.018)), 6)
    0.108
    >>> float(layer_overhead_time(6, 0.0))
    0.0
    """
    return layers_per_stage * overhead_per_layer_s


def tp_overlap_window(layer_matmul_s, attention_matmul_s, full_recompute):
    """Compute an overlapping stack hides a layer's tensor-parallel all-reduces behind. [s]

    The MLP path's GEMMs of every pass: forward, the backward's two, and the recompute
    forward under full recomputation (MegaScale, Jiang et al. NSDI'24, Sec. 3.2).

    >>> float(tp_overlap_window(5.0, 2.0, True))
    12.0
    """
    return (layer_matmul_s - attention_matmul_s) * (3 + full_recompute)


def straggler_time(slowdown, device_fraction, devices, layers_per_stage, forward_s):
    """Expected wait per micro-batch for a slow machine among ``devices``. [s]

    ``s_f * (1 - (1 - f)^n) * L_stage * t_fwd``: a straggler stretches its stage's forward
    work (with recompute) by s_f, and the job waits for its replica; f is the share of
    devices in slow machines (MegaScale Secs. 5.1, 6.3).

    >>> round(float(straggler_time(0.1, 0.5, 2, 10, 1.0)), 6)        # 0.1 x 0.75 x 10
    0.75
    """
    has_straggler = 1.0 - (1.0 - device_fraction) ** devices
    return slowdown * has_straggler * layers_per_stage * forward_s


def zero3_gathers_exposed(gather_s, units, forward_s, backward_s, full_recompute,
                          prefetch_fraction, backward_reduce_s=0.0):
    """ZeRO-3 weight gathers left exposed in one micro-batch's passes. [s]

    One all-gather per layer (``units`` of them, ``gather_s`` in all) for the forward, the
    backward and, under full recomputation, the recompute forward. They are prefetched,
    layer i+1's during layer i's compute, so each pass's first gather is always exposed:
    ``(1 + [full]) max(g_1, exposed(g, t_fwd)) + max(g_1, exposed(g + r, t_bwd))`` with
    g_1 = g / units (PyTorch FSDP notes, "FSDP Prefetch Nuances"; DeepSpeed ZeRO-3
    ``stage3_prefetch_bucket_size``). ``r``: a gradient reduction that runs in this
    backward pass too, layer by layer beside the gathers on the same links (FSDP's
    post-backward reduce-scatter in a micro-batch that does not skip the sync); 0 where
    the micro-batch's gradients wait for the step's one reduction.

    >>> float(zero3_gathers_exposed(4.0, 4, 1.0, 2.0, False, 1.0))   # max(1, 3) + max(1, 2)
    5.0
    >>> float(zero3_gathers_exposed(4.0, 4, 1.0, 2.0, False, 1.0, 3.0))   # 3 + (4 + 3 - 2)
    8.0
    """
    first = gather_s / units
    return (1 + full_recompute) * np.maximum(first, exposed(gather_s, forward_s,
                                                            prefetch_fraction)) \
        + np.maximum(first, exposed(gather_s + backward_reduce_s, backward_s,
                                    prefetch_fraction))


def dp_exposed_time(dp_step_s, backward_s, gathers_exposed_s, num_microbatches, vpp,
                    stack_overlaps, overlap_fraction):
    """Data-parallel communication of one step left on the critical path. [s]

    Without an overlapping stack the gradient reduction hides behind ``overlap_fraction``
    of the last micro-batch's backward; with one, each model chunk's reduction starts after
    its backward, leaving only the last chunk's, ``1/(2v)`` of it (MegaScale Sec. 3.2),
    when that is less. Each micro-batch's exposed ZeRO-3 gathers add to both.

    >>> [float(x) for x in dp_exposed_time(4.0, 1.0, 0.5, 2, 2, np.array([False, True]), 1.0)]
    [4.0, 2.0]
    """
    gathers = num_microbatches * gathers_exposed_s
    plain = exposed(dp_step_s, backward_s, overlap_fraction) + gathers
    overlapped = dp_step_s / (2 * vpp) + gathers
    return np.where(stack_overlaps, np.minimum(overlapped, plain), plain)


def optimizer_step_time(params, step_bytes_per_param, hbm_bytes_per_s):
    """Time of the optimizer step, HBM-bound: it reads and writes every state once. [s]

    >>> float(optimizer_step_time(1e9, 30, 3e12))     # 30 GB at 3 TB/s
    0.01
    """
    return params * step_bytes_per_param / hbm_bytes_per_s


def goodput(devices, interruptions_per_device_s, lost_s_per_interruption,
            operations_fraction=1.0):
    """Share of a job's wall clock that trains. [-]

    ``g = min(g_ops, 1 / (1 + N r T))``: the lower of what a run's operations keep at any
    scale (evaluation pauses, checkpoint saves, loss-spike rollbacks, maintenance: BLOOM's
    384 A100s and Llama 3's 16,384 H100s both kept about 90%) and what interruptions leave.
    A job on ``N`` devices is interrupted ``N r`` times per second it trains (``r`` per
    device: any device's failure stops a synchronous job, Dubey et al. 2024 Sec. 3.3.4), and
    each interruption costs ``T`` of wall clock: finding the fault, restarting, reloading the
    checkpoint and redoing the steps since it (Young 1974's checkpoint trade-off folded into
    one cost). Interruptions take over past the scale where ``1 / (1 + N r T)`` falls below
    ``g_ops``, or sooner on a less reliable cluster.

    Parameters
    ----------
    devices : int or array
        Devices of the job, ``N``. [-]
    interruptions_per_device_s : float or array
        Job interruptions per device and second of training, ``r``. [1/s]
    lost_s_per_interruption : float or array
        Wall clock each interruption costs, ``T``. [s]
    operations_fraction : float or array
        Share of the wall clock a run's operations leave to training, ``g_ops``. [-]

    Examples
    --------
    Llama 3 405B: 466 interruptions in 54 days on 16,384 GPUs, 18.5 minutes each, gives
    its 90% (Dubey et al. 2024 Sec. 3.3.4); twice the devices keep 82%:

    >>> r = 466 / (16384 * 54 * 86400)
    >>> [round(float(goodput(n, r, 1112.4, 0.9)), 3) for n in (1024, 16384, 32768)]
    [0.9, 0.9, 0.818]
    >>> round(float(goodput(992, 1 / (7.5 * 3600 * 992), (1 / 0.59 - 1) * 7.5 * 3600, 0.9)), 9)
    0.59
    """
    return np.minimum(operations_fraction, 1.0 / (
        1.0 + devices * interruptions_per_device_s * lost_s_per_interruption))
