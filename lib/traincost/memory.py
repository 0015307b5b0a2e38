"""Memory per device: model states (ZeRO 0-3) and activations (recompute modes).

All functions broadcast over numpy arrays.

References
----------
.. [1] Rajbhandari et al., "ZeRO: Memory Optimizations Toward Training Trillion Parameter
   Models", SC20, arXiv:1910.02054, Sec. 3.1 and 5.
.. [2] Korthikanti et al., "Reducing Activation Recomputation in Large Transformer
   Models", MLSys 2023, arXiv:2205.05198, Sec. 4 (Table 2) and 4.2.3.
"""

from __future__ import annotations

import numpy as np

from .units import BYTES_PER_ELEMENT, E5M6_BYTES
from .workload import RECOMPUTE_CODES


#: f-wide tensors a gated (SwiGLU) MLP stores per token over a GeLU MLP's: three (gate and
#: up outputs, SwiGLU output) against two (GeLU input and output); callers pass
#: ``ffn_eff`` = this x f for gated MLPs (Korthikanti et al. [2] count 4f for GeLU)
GATED_MLP_STORE_FACTOR = 3 / 2


def model_state_bytes(params, dp, zero, weight_bytes, grad_bytes, optimizer_bytes):
    """Weights, gradients and optimizer states on one device.

    Parameters
    ----------
    params : float or array
        Parameters held by this device's model-parallel shard. [params]
    dp : int or array
        Ranks holding the same weights, over which ZeRO shards, d: data- and
        context-parallel ranks together (Megatron-Core's ``intra_dp_cp_group``). [-]
    zero : int or array
        ZeRO stage 0-3. [-]
    weight_bytes, grad_bytes, optimizer_bytes : float
        Bytes per parameter of each state (2, 2, 12 for mixed-precision Adam). [bytes]

    Returns
    -------
    dict with ``weights``, ``gradients``, ``optimizer`` [bytes].

    Notes
    -----
    With Psi parameters [1]: stage 0 keeps (2 + 2 + 12)*Psi; stage 1 shards the optimizer
    (12*Psi/d); stage 2 also the gradients; stage 3 also the weights.

    Examples
    --------
    >>> s = model_state_bytes(1e9, 8, 3, 2, 2, 12)
    >>> float(sum(s.values())) / 1e9
    2.0
    """
    zero = np.asarray(zero)
    weights = params * weight_bytes / np.where(zero >= 3, dp, 1)
    gradients = params * grad_bytes / np.where(zero >= 2, dp, 1)
    optimizer = params * optimizer_bytes / np.where(zero >= 1, dp, 1)
    return {"weights": weights, "gradients": gradients, "optimizer": optimizer}


def activation_bytes_per_layer(seq_len, micro_batch, hidden, heads, kv_heads, head_dim,
                               ffn_eff, tp, recompute_code, sequence_parallel=True,
                               bytes_per_element=2.0, flash=False, parallel_block=False,
                               flash_stats_bytes=4.0, expert_inputs=0.0, fp8_cache=False,
                               gated=True, mla_cache=np.nan):
    """Activations one layer stores for one micro-batch, and the full set it needs.

    Parameters
    ----------
    seq_len : int or array
        Tokens of a sequence on this device (s / cp). [tokens]
    micro_batch, hidden, heads, kv_heads, head_dim : int or array
        b, h, a, a_kv, d. [-]
    ffn_eff : float or array
        MLP inner width a token's activations span (f, or (k + shared) * f_expert). [-]
    tp : int or array
        Tensor-parallel size, t. [-]
    recompute_code : int or array
        0 none, 1 selective, 2 full. [-]
    sequence_parallel : bool
        Shard the non-tensor-parallel activations over t too. [-]
    bytes_per_element : float
        Bytes of a 16-bit activation. [bytes]
    flash : bool or array
        Fused attention kernel: instead of the 5*a*s^2*b softmax block it keeps only
        ``flash_stats_bytes`` per query and head (the fp32 log-sum-exp). [-]
    parallel_block : bool or array
        Parallel attention + MLP block: one norm, one shared input and one output mask
        per layer, 5*s*b*h fewer (the replicated part without SP drops from 10 to 5). [-]
    flash_stats_bytes : float
        Bytes per token and head a fused kernel keeps. [bytes]
    expert_inputs : float or array
        Routed copies of each token an MoE layer's experts keep, k (averaged over the
        layers when only some are MoE): each expert's first GEMM needs the tokens it was
        sent for its weight gradient, 2h per copy beside the MLP input the router and the
        shared experts read. [-]
    fp8_cache : bool or array
        DeepSeek-V3's activation recipe for FP8 training (arXiv:2412.19437 Secs. 3.2.3 and
        3.3.2): norm outputs are recomputed (the QKV and MLP inputs are not kept), the
        inputs FP8 GEMMs keep for their weight gradients are cached in FP8 (1 byte: the
        routed copies, the MLP's second GEMM input), the attention output in E5M6 (1.5
        bytes), and a gated MLP keeps its FP8 SwiGLU input and recomputes the output. [-]
    gated : bool or array
        Gated (SwiGLU) MLP: under ``fp8_cache`` it keeps 2f bytes (its FP8 input) of the
        6f; a GeLU MLP keeps its 16-bit GeLU input and its FP8 output, 3f of the 4f. [-]
    mla_cache : float or array
        Under ``fp8_cache`` with multi-head latent attention: bytes per token the layer
        keeps in place of Q, K and V, whose up-projections it recomputes (the FP8 latents
        the up-projections read and the 16-bit rotary key). NaN: Q, K and V are kept. [bytes]

    Returns
    -------
    (stored, full) [bytes]: what the layer keeps between forward and backward under the
    recompute mode, and what it holds while (re)computing its own backward.

    Notes
    -----
    Korthikanti et al. [2] Sec. 4.1 count, for 16-bit activations and f = 4h,
    s*b*h*(34 + 5*a*s/h) bytes per layer: attention 11*s*b*h + 5*a*s^2*b, MLP 19*s*b*h,
    norms 4*s*b*h. We keep their terms but let the shapes vary (GQA, any f, gated MLPs):
    attention 2h (input) + 2ad (Q) + 4 a_kv d (K, V) + 2ad (context) + h (dropout mask),
    MLP 2h (input) + h (mask) + 4f (GPT: two f-wide tensors) or 6f (gated: three),
    and for an MoE layer 2h more per routed copy of the token (k), norms 4h; the softmax
    block stores 5*a*s per token. Under ``fp8_cache`` (DeepSeek-V3's recipe) the
    attention keeps Q, K, V (or, with ``mla_cache``, its latents) + 1.5ad + h, the MLP
    h + f_kept + h*k (f_kept: 2f gated, 3f GeLU), the norms their 4h inputs. With tensor and sequence
    parallelism everything is divided by t (Table 2); without sequence parallelism the
    10*s*b*h outside the tensor-parallel regions is not. Selective recompute drops the
    5*a*s^2*b term (a fused kernel never stores it: FlashAttention-2, Dao 2023,
    arXiv:2307.08691, keeps O and the log-sum-exp); full recompute keeps only the layer
    input, 2*s*b*h (/t with SP).
    The factor 2 in these counts is bytes_per_element.
    """
    sb = seq_len * micro_batch
    e = bytes_per_element / 2.0                                       # counts are for 2 bytes
    qkv = 2 * heads * head_dim + 4 * kv_heads * head_dim
    attn = 2 * hidden + qkv + 2 * heads * head_dim + hidden
    mlp = 3 * hidden + ffn_eff * 4 + 2 * hidden * expert_inputs       # gated: caller passes 1.5f
    norms = 4 * hidden
    shared = np.where(parallel_block, 5 * hidden, 0)                  # one norm, input, mask
    if np.any(fp8_cache):                                             # DeepSeek-V3's recipe
        fp8 = BYTES_PER_ELEMENT["fp8"] / 2.0                          # of a 16-bit count
        kept_qkv = np.where(np.isfinite(mla_cache), np.asarray(mla_cache, dtype=float) / e, qkv)
        attn8 = kept_qkv + E5M6_BYTES / 2.0 * 2 * heads * head_dim + hidden
        f = ffn_eff / np.where(gated, GATED_MLP_STORE_FACTOR, 1.0)
        ffn8 = np.where(gated, 4 * f * fp8, 2 * f + 2 * f * fp8)      # SwiGLU in / GeLU in + out
        mlp8 = hidden + ffn8 + 2 * hidden * expert_inputs * fp8
        attn = np.where(fp8_cache, attn8, attn)
        mlp = np.where(fp8_cache, mlp8, mlp)
        shared = np.where(fp8_cache, np.where(parallel_block, 3 * hidden, 0), shared)
    linear = sb * (attn + mlp + norms - shared) * e
    scores = np.where(flash, flash_stats_bytes * heads * sb, 5 * heads * seq_len * sb * e)
    # not sharded without SP: norm inputs 4h, QKV and MLP inputs 2h each, two masks h each
    # (norm inputs and masks only when norm outputs are recomputed)
    outside = np.where(fp8_cache, np.where(parallel_block, 3, 6), np.where(parallel_block, 5, 10))
    outside_tp = outside * sb * hidden * e
    sharded = np.where(sequence_parallel, linear / tp,
                       outside_tp + (linear - outside_tp) / tp)
    full = sharded + scores / tp
    layer_input = 2 * sb * hidden * e / np.where(sequence_parallel, tp, 1)
    stored = np.where(recompute_code == RECOMPUTE_CODES["full"], layer_input,
                      np.where(recompute_code == RECOMPUTE_CODES["selective"], sharded, full))
    return stored, full


def microbatches_in_flight(pp, vpp, num_microbatches):
    """Micro-batches whose activations the first pipeline stage holds at once (1F1B).

    Parameters
    ----------
    pp, vpp, num_microbatches : int or array
        p, v, m. [-]

    Returns
    -------
    Equivalent micro-batches of a whole stage's layers. [-]

    Notes
    -----
    Korthikanti et al. [2] Sec. 4.2.3: with 1F1B the first stage holds p micro-batches
    (fewer if m < p); interleaving (v > 1) multiplies this by 1 + (p - 1)/(p*v).
    """
    inflight = np.minimum(num_microbatches, pp)
    return inflight * np.where(vpp > 1, 1 + (pp - 1) / (pp * vpp), 1.0)
