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


def stack_exposed(time_s, window_s, stack_overlaps, window_fraction, plain_fraction=0.0):
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

    Returns
    -------
    ``exposed(time, window, window_fraction)`` where the stack overlaps, else
    ``time * (1 - plain_fraction)``. [s]

    Examples
    --------
    >>> [float(x) for x in stack_exposed(3.0, 2.0, np.array([True, False]), 1.0, 0.5)]
    [1.0, 1.5]
    """
    return np.where(stack_overlaps, exposed(time_s, window_s, window_fraction),
                    time_s * (1 - plain_fraction))
