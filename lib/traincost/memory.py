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

from .arrays import any_true
from .units import BYTES_PER_ELEMENT, E5M6_BYTES
from .workload import RECOMPUTE_CODES


#: what selective recompute keeps, by framework (``data/frameworks.csv``
#: ``selective_recompute``): Megatron's attention-core policy (blank), the same with the
#: attention call checkpointed whatever its kernel (attention-call: Megatron-Core, Habana's
#: Megatron-DeepSpeed; the same bytes kept) or torchtitan's per-op policy, the output of
#: every other matmul, or MaxText's 'minimal', the output of every weight matmul with the
#: attention call and every element-wise op recomputed (:func:`activation_bytes_per_layer`)
SELECTIVE_POLICIES = {"attention-core": 0, "odd-matmuls": 1, "attention-call": 2,
                      "matmul-outputs": 3}

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
                               gated=True, mla_cache=np.nan, selective_policy=0,
                               frozen=False, fp8_act_input=False):
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
        Fused attention kernel: ``flash_stats_bytes`` per query and head, not 5*a*s^2*b. [-]
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
    selective_policy : int or array
        What selective recompute keeps (:data:`SELECTIVE_POLICIES`): Megatron's all but the
        scores (Korthikanti et al. [2] Sec. 5), or :func:`_odd_matmul_kept`'s (torchtitan's
        'op' policy) or :func:`_matmul_outputs_kept`'s (MaxText's 'minimal'). [-]
    frozen, fp8_act_input : bool or array
        Frozen weights (LoRA), an FP8 activation input: the MLP keeps less (:func:`_mlp_not_kept`). [-]

    Returns
    -------
    (stored, full) [bytes]: what the layer keeps between forward and backward under the
    recompute mode, and what it holds while (re)computing its own backward.

    Notes
    -----
    Korthikanti et al. [2] Sec. 4.1 count, for 16-bit activations and f = 4h, s*b*h*(34 +
    5*a*s/h) bytes a layer (attention 11*s*b*h + 5*a*s^2*b, MLP 19*s*b*h, norms 4*s*b*h). We
    keep their terms but let the shapes vary (GQA, any f, gated MLPs):
    attention 2h (input) + 2ad (Q) + 4 a_kv d (K, V) + 2ad (context) + h (dropout mask),
    MLP 2h (input) + h (mask) + 4f (GPT: two f-wide tensors) or 6f (gated: three),
    and for an MoE layer 2h more per routed copy of the token (k), norms 4h; the softmax
    block stores 5*a*s per token. Under ``fp8_cache`` (DeepSeek-V3's recipe) the attention
    keeps Q, K, V (or, with ``mla_cache``, its latents) + 1.5ad + h, the MLP h + f_kept + h*k
    (f_kept: 2f gated, 3f GeLU), the norms their 4h inputs. With tensor and sequence
    parallelism everything is divided by t (Table 2); without sequence parallelism the
    10*s*b*h outside the tensor-parallel regions is not. Selective recompute drops the
    5*a*s^2*b term (a fused kernel never stores it: FlashAttention-2, Dao 2023,
    arXiv:2307.08691, keeps O and the log-sum-exp); full recompute keeps only the layer
    input, 2*s*b*h (/t with SP); torchtitan's 'op' policy also the kernel's statistics.
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
    frozen, own_input = np.logical_not(fp8_cache) & frozen, np.where(parallel_block, 0, 1)
    mlp = mlp - _mlp_not_kept(hidden, ffn_eff, gated, expert_inputs, own_input, frozen,
                              np.logical_not(fp8_cache) & fp8_act_input)
    linear = sb * (attn + mlp + norms - shared) * e
    scores = np.where(flash, flash_stats_bytes * heads * sb, 5 * heads * seq_len * sb * e)
    # not sharded without SP: norm inputs 4h, QKV and MLP inputs 2h each, two masks h each
    # (norm inputs and masks only when norm outputs are recomputed)
    outside = np.where(fp8_cache, np.where(parallel_block, 3, 6), np.where(parallel_block, 5, 10)) \
        - np.where(frozen, 2 * own_input, 0)
    outside_tp = outside * sb * hidden * e
    sharded = np.where(sequence_parallel, linear / tp,
                       outside_tp + (linear - outside_tp) / tp)
    full = sharded + scores / tp
    layer_input = 2 * sb * hidden * e / np.where(sequence_parallel, tp, 1)
    selective = sharded
    for name, kept in (("odd-matmuls", _odd_matmul_kept), ("matmul-outputs", _matmul_outputs_kept)):
        if any_true(selective_policy == SELECTIVE_POLICIES[name]):
            per_policy = kept(hidden, heads, kv_heads, head_dim, ffn_eff, gated, expert_inputs,
                              tp, sequence_parallel) * sb * e + np.where(
                flash & (name == "odd-matmuls"), flash_stats_bytes * heads * sb / tp, 0.0)
            selective = np.where(selective_policy == SELECTIVE_POLICIES[name], per_policy,
                                 selective)
    stored = np.where(recompute_code == RECOMPUTE_CODES["full"], layer_input,
                      np.where(recompute_code == RECOMPUTE_CODES["selective"], selective, full))
    return stored, full


def _mlp_not_kept(hidden, ffn_eff, gated, expert_inputs, own_input, frozen, fp8_act_input):
    """What an MLP keeps less per token (counted for 2-byte activations) with frozen weights
    or an FP8 activation-function input, neither under DeepSeek-V3's recipe. [bytes]

    ``frozen`` (LoRA, adapters on the attention projections): a linear layer whose weight
    takes no gradient keeps no input for it (TransformerEngine's Linear, LayerNormLinear and
    LayerNormMLP save their input only when ``weight.requires_grad``:
    ``backward_needs_input``), so the MLP keeps neither its input (2h, and 2h per routed
    copy; ``own_input`` 0 where a parallel block's MLP reads the attention's, which the
    adapters keep: Hu et al. 2021 adapt W_q and W_v, MLPerf's Llama 2 70B LoRA the
    attention) nor its second GEMM's (2f: a third of a gated MLP's 6f, half of a GeLU
    MLP's 4f), only what its activation function's backward reads.
    ``fp8_act_input`` (Megatron-Core's ``activation_func_fp8_input_store``): the
    activation's input, a gated MLP's two f-wide first-GEMM outputs (4f of its 6f) or a GeLU
    MLP's f-wide input (2f of its 4f), at 1 byte an element, half its 16-bit size.
    ``ffn_eff`` is 1.5f for a gated MLP (:func:`stored_ffn_width`).

    Llama 2 7B (h 4096, f 11008, gated: ffn_eff 16512): frozen 2h + 2f = 30,208; FP8 input
    2f = 22,016:

    >>> [float(_mlp_not_kept(4096, 16512, True, 0.0, 1, fz, f8))
    ...  for fz, f8 in ((True, False), (False, True))]
    [30208.0, 22016.0]
    """
    frozen_part = np.where(frozen, 2 * hidden * (own_input + expert_inputs)
                           + ffn_eff * 4 * np.where(gated, 1 / 3, 1 / 2), 0.0)
    fp8_part = np.where(fp8_act_input, ffn_eff * 4 * np.where(gated, 1 / 3, 1 / 4), 0.0)
    return frozen_part + fp8_part


def _odd_matmul_kept(hidden, heads, kv_heads, head_dim, ffn_eff, gated, expert_inputs, tp,
                     sequence_parallel):
    """Bytes a token keeps per layer (counted for 2-byte activations) under torchtitan's 'op'
    selective policy, one tensor-parallel rank. The policy saves the outputs of the attention
    kernel and of every other matmul in forward order (Q, K, V, O, then gate, up, down) and
    recomputes the rest: 2h (input) + 2ad (attention output) + 2ad (Q) + 2 a_kv d (V) + 2f
    (gate or GeLU up output) + 2h (a gated MLP's down output) + 2h per routed copy; without
    SP the input and the down output are not sharded. [bytes]

    Llama 3 8B (h 4096, 32 heads and 8 KV heads of 128, f 14336, stored width 1.5 f): 8.5h
    + 2f = 63,488 bytes a token, where Megatron's selective keeps 15h + 6f = 147,456:

    >>> float(_odd_matmul_kept(4096, 32, 8, 128, 21504, True, 0.0, 1, True))
    63488.0
    """
    f = ffn_eff / np.where(gated, GATED_MLP_STORE_FACTOR, 1.0)
    down = np.where(gated, 2 * hidden, 0.0)                           # the 7th matmul
    kept = 2 * hidden + 4 * heads * head_dim + 2 * kv_heads * head_dim + 2 * f + down \
        + 2 * hidden * expert_inputs
    outside = 2 * hidden + down                                       # input, row-parallel
    return np.where(sequence_parallel, kept / tp, outside + (kept - outside) / tp)


def _matmul_outputs_kept(hidden, heads, kv_heads, head_dim, ffn_eff, gated, expert_inputs,
                         tp, sequence_parallel):
    """Bytes a token keeps per layer (counted for 2-byte activations) under MaxText's
    'minimal' remat policy, one tensor-parallel rank: ``jax.checkpoint_policies.
    checkpoint_dots_with_no_batch_dims`` saves the output of every matmul without batch
    dimensions, the weight projections (Q, K, V, the attention output projection, the MLP's
    up (and gate) and down), beside the layer input the checkpoint keeps, and recomputes
    the rest: the norms, the activation function, the residual adds and the attention
    call (a kernel, not such a dot; its outputs and statistics are not kept). 2h (input) +
    2ad (Q) + 4 a_kv d (K, V) + 2h (output projection) + 2f, or 4f gated (up and gate) + 2h
    (down) + 2h per routed copy; without SP the input and the two row-parallel outputs
    are not sharded. [bytes]

    MaxText's 32B on TPU v5p (h 10,240, 32 heads of 256 with as many KV heads, a ReLU MLP
    of f 32,768): 6h + 6ad + 2f = 61,440 + 49,152 + 65,536 = 176,128 bytes a token, where
    Megatron's selective keeps 10h + 8ad + 4f = 299,008 (Korthikanti et al.'s count):

    >>> float(_matmul_outputs_kept(10240, 32, 32, 256, 32768, False, 0.0, 1, True))
    176128.0
    """
    f = ffn_eff / np.where(gated, GATED_MLP_STORE_FACTOR, 1.0)
    up = np.where(gated, 4 * f, 2 * f)
    kept = 2 * hidden + 2 * heads * head_dim + 4 * kv_heads * head_dim + 2 * hidden + up \
        + 2 * hidden + 2 * hidden * expert_inputs
    outside = 6 * hidden                                              # input, row-parallel
    return np.where(sequence_parallel, kept / tp, outside + (kept - outside) / tp)


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
    (fewer if m < p); interleaving (v > 1) multiplies this by 1 + (p - 1)/(p*v), but never
    past m: a stage cannot hold more micro-batches than the step has (at m = p every forward
    of the first rank's chunks runs before its first backward; Megatron-Core's interleaved
    schedule caps its warm-up at the step's micro-batches, pipeline_parallel/schedules.py,
    ``if num_warmup_microbatches >= total_num_microbatches``, Megatron-LM d98e8a6).

    >>> float(microbatches_in_flight(8, 2, 16)), float(microbatches_in_flight(8, 2, 8))
    (11.5, 8.0)
    """
    inflight = np.minimum(num_microbatches, pp)
    return np.minimum(inflight * np.where(vpp > 1, 1 + (pp - 1) / (pp * vpp), 1.0),
                      num_microbatches)


def first_stage_dense_params(layer_params, first_stage_layers, layers, embedding, output, pp,
                             tp, mtp_depth=0, hidden=0):
    """Dense (non-expert) parameters one device of the first pipeline stage holds. [params]

    Parameters
    ----------
    layer_params : float or array
        Dense parameters of all transformer layers (the experts' excluded). [params]
    first_stage_layers : float or array
        Transformer layers on the first stage (:func:`traincost.workload.stage_layers`). [-]
    layers : int or array
        L. [-]
    embedding, output : float or array
        Input embedding and output layer (0 when tied) parameters. [params]
    pp, tp : int or array
        Pipeline stages and tensor-parallel size. [-]
    mtp_depth, hidden : int or array
        D multi-token-prediction modules and h (DeepSeek-V3). [-]

    Returns
    -------
    ``(P_layers * L_1 / L + P_emb + [p = 1] (P_out + D (P_layers / L + 2 h^2))) / t``: the
    first stage holds the embedding; without a pipeline also the output layer and the MTP
    modules (an average layer's weights and a 2h x h projection each), which otherwise sit
    on the last stage (DeepSeek-V3, arXiv:2412.19437, Sec. 3.2.3). [params]

    Examples
    --------
    GPT-3 175B's layers (96 x 12 h^2, h = 12288: 173.95e9) on 8 stages of 12 layers, tp 8,
    with its embedding (51200 + 2048 positions, x h: 0.642e9): (173.95e9 / 8 + 0.642e9) / 8:

    >>> h = 12288
    >>> p = first_stage_dense_params(96 * 12 * h * h, 12, 96, 52224 * h, 0, 8, 8)
    >>> round(float(p) / 1e9, 3)
    2.798
    """
    single = pp == 1
    resident = embedding + np.where(single, output, 0)
    if any_true(mtp_depth):
        resident = resident + np.where(single, mtp_depth * (layer_params / layers
                                                            + 2 * hidden * hidden), 0)
    return (layer_params * first_stage_layers / layers + resident) / tp


def expert_params_on_device(expert_params, stage_share, ep, tp, pp, experts, moe_layers,
                            mtp_depth=0):
    """Routed-expert parameters one device holds. [params]

    ``P_exp * share / (ep * t)``: the stage's share of the MoE layers' experts, split over
    the expert- and tensor-parallel ranks; without a pipeline (p = 1) the D MTP modules'
    MoE blocks too, one MoE layer's experts each (DeepSeek-V3 Sec. 2.2).

    >>> float(expert_params_on_device(8e9, 0.25, 8, 1, 4, 64, 16))   # a quarter, 8 ways
    250000000.0
    >>> float(expert_params_on_device(8e9, 1.0, 8, 1, 1, 64, 16, mtp_depth=1))
    1062500000.0
    """
    on_device = expert_params * stage_share / (ep * tp)
    if any_true(mtp_depth):
        on_device = on_device + np.where(
            (pp == 1) & (experts > 0),
            mtp_depth * expert_params / np.maximum(moe_layers, 1), 0) / (ep * tp)
    return on_device


def stored_ffn_width(ffn_hidden, moe_ffn_hidden, gated, moe_share, top_k, shared_experts):
    """MLP width whose activations a layer stores per token, averaged over the layers. [-]

    ``g * ((1 - s_moe) f + s_moe (k + n_shared) f_moe)`` with g =
    :data:`GATED_MLP_STORE_FACTOR` for a gated MLP (else 1) and s_moe the MoE layers'
    share: each token passes k routed and the shared experts of an MoE layer.

    >>> float(stored_ffn_width(14336, 0, True, 0.0, 0, 0))         # Llama 3 8B: 1.5 x f
    21504.0
    >>> float(stored_ffn_width(0, 14336, True, 1.0, 2, 0))         # Mixtral: k = 2 experts
    43008.0
    """
    gate = np.where(gated, GATED_MLP_STORE_FACTOR, 1.0)
    return gate * ((1 - moe_share) * ffn_hidden
                   + moe_share * (top_k + shared_experts) * moe_ffn_hidden)


def mla_fp8_cache_bytes(kv_lora_rank, qk_rope_head_dim, q_lora_rank, heads, qk_dim,
                        bytes_per_element=2.0):
    """Bytes per token DeepSeek-V3's FP8 recipe keeps for an MLA layer's up-projections.

    The compressed key/value latent in FP8, the decoupled rotary key in 16 bits, and the
    query latent in FP8 at low rank (``q_lora_rank > 0``) or the full query in 16 bits;
    the up-projections are recomputed from them in the backward (arXiv:2412.19437 Sec.
    3.3.2). [bytes/token]

    >>> float(mla_fp8_cache_bytes(512, 64, 1536, 128, 192))   # 512 + 128 + 1536
    2176.0
    """
    fp8 = BYTES_PER_ELEMENT["fp8"]
    return kv_lora_rank * fp8 + qk_rope_head_dim * bytes_per_element + np.where(
        q_lora_rank > 0, q_lora_rank * fp8, heads * qk_dim * bytes_per_element)


def logits_bytes(seq_len, micro_batch, vocab, tp, bytes_per_element=2.0, bytes_per_logit=4.0):
    """What the loss holds at its peak for one micro-batch, one tensor-parallel shard. [bytes]

    ``B_l (e / 2) s b V / t``: B_l bytes per logit of 16-bit training (e = 2; fp32 training
    doubles it). B_l = 4 is one fp32 copy of the logits, as Megatron's vocabulary-parallel
    cross-entropy keeps it (its exponentials and gradient written in place); an eager
    ``F.cross_entropy`` on an fp32 copy holds more at the start of its backward (the saved
    log-softmax, the gradient arriving and the one it makes: 12 bytes). The framework
    sets B_l (``data/frameworks.csv``, ``loss_bytes_per_logit``).

    >>> float(logits_bytes(2048, 1, 51200, 8)) / 2**20      # 2048 x 6400 fp32 values
    50.0
    >>> float(logits_bytes(2048, 1, 51200, 8, bytes_per_logit=12.0)) / 2**20
    150.0
    """
    return bytes_per_logit * bytes_per_element / 2 * seq_len * micro_batch * vocab / tp


def head_bytes(seq_len, micro_batch, hidden, tp, sequence_parallel, bytes_per_element,
               norm_bytes, gathered_input):
    """What the final norm and the output layer keep for their backward, outside the
    transformer blocks (never checkpointed), one micro-batch on a device of the last stage.
    [bytes]

    ``(e / 2) s b h (N / t' + 2 [G] + 2 [not G] / t')``, t' = t with sequence parallelism
    (the norm runs on a sequence shard), else 1. N: the bytes per element the final norm
    keeps (Megatron's fused RMSNorm its 16-bit input, 2; torchtitan's eager RMSNorm, which
    upcasts, the fp32 copy and the 16-bit normalised value, 4 + 2); the output layer keeps
    its 16-bit input, all-gathered over the sequence where the framework keeps the gathered
    tensor (G: torchtitan's ColwiseParallel(input_layouts=Shard(1))), or its shard (Megatron
    re-gathers it in the backward).

    Parameters
    ----------
    seq_len, micro_batch, hidden : int or array
        s (on one context-parallel rank), b, h. [tokens, sequences, -]
    tp : int or array
        t. [-]
    sequence_parallel : bool or array
        Whether the norm runs on a sequence shard under tensor parallelism. [-]
    bytes_per_element : float or array
        e: 2 in 16-bit training. [bytes]
    norm_bytes : float or array
        N, at e = 2. [bytes]
    gathered_input : bool or array
        G. [-]

    Examples
    --------
    torchtitan's Llama 3.1 70B at TP 8, micro-batch 16 of 8,192 tokens:
    (6 / 8 + 2) x 16 x 8192 x 8192 B = 2.75 GiB; Megatron's (2 / 8 + 2 / 8): 0.5 GiB.

    >>> float(head_bytes(8192, 16, 8192, 8, True, 2.0, 6.0, True)) / 2**30
    2.75
    >>> float(head_bytes(8192, 16, 8192, 8, True, 2.0, 2.0, False)) / 2**30
    0.5
    """
    t_seq = np.where(sequence_parallel, tp, 1)
    norm = norm_bytes * bytes_per_element / 2 / t_seq          # N is given at e = 2
    kept_input = bytes_per_element * np.where(gathered_input, 1.0, 1.0 / t_seq)
    return seq_len * micro_batch * hidden * (norm + kept_input)


def zero3_gathered_bytes(layer_params, output_params, pp, tp, zero, dp, weight_bytes,
                         grad_bytes, units=2):
    """Unsharded weights and gradients ZeRO-3 (FSDP) holds beside its shards. [bytes]

    Parameters
    ----------
    layer_params : float or array
        Dense parameters of one transformer layer. [params]
    output_params : float or array
        The output layer's (a unit of its own where there is no pipeline). [params]
    pp, tp, zero, dp : int or array
        Pipeline stages, tensor-parallel size, ZeRO stage, ranks it shards over. [-]
    weight_bytes, grad_bytes : float
        Bytes per parameter of the gathered weights and of the unsharded gradient. [bytes]
    units : float or array
        Units whose weights are gathered at once, as the framework wraps and prefetches
        them (``data/frameworks.csv`` ``zero3_gathered_units``: FSDP's per-block units, the
        one running and the one prefetched, 2); 0: not modelled. [-]

    Returns
    -------
    ``u (n w + g)`` with u = max(layer, [p = 1] output) / t the largest unit's parameters
    on the device: the weights of n units and the gradient of one before its
    reduce-scatter; 0 below stage 3, on one rank or with n = 0. [bytes]

    Examples
    --------
    Llama 3 8B's output layer (128256 x 4096 = 525.3e6 parameters, larger than a layer's
    218.1e6) without a pipeline: 525.3e6 x (2 x 2 + 2) bytes:

    >>> round(float(zero3_gathered_bytes(218.1e6, 128256 * 4096, 1, 1, 3, 8, 2, 2)) / 1e9, 3)
    3.152
    >>> float(zero3_gathered_bytes(218.1e6, 525.3e6, 1, 1, 1, 8, 2, 2))   # ZeRO-1: none
    0.0
    >>> float(zero3_gathered_bytes(218.1e6, 525.3e6, 1, 1, 3, 8, 2, 2, units=0))
    0.0
    """
    unit = np.maximum(layer_params, np.where(pp == 1, output_params, 0.0)) / tp
    return np.where((np.asarray(zero) >= 3) & (dp > 1) & (np.asarray(units) > 0),
                    unit * (units * weight_bytes + grad_bytes), 0.0)


def stage_activation_bytes(stored, full, pp, vpp, num_microbatches, layers_per_stage,
                           first_stage_layers, balanced, full_recompute, logits, mtp_depth=0):
    """Activations the first pipeline stage holds at its peak. [bytes]

    Parameters
    ----------
    stored, full : float or array
        One layer's stored and full activations for one micro-batch
        (:func:`activation_bytes_per_layer`). [bytes]
    pp, vpp, num_microbatches : int or array
        p, v, m. [-]
    layers_per_stage, first_stage_layers : float or array
        :func:`traincost.workload.stage_layers`. [-]
    balanced, full_recompute : bool or array
        A balanced split (the first chunk has a layer fewer); full recomputation (one
        layer's full activations live while it recomputes). [-]
    logits : float or array
        :func:`logits_bytes`, held when there is no pipeline (the last stage is the first). [bytes]
    mtp_depth : int or array
        MTP modules, whose activations sit with the output layer. [-]

    Notes
    -----
    1F1B holds min(m, p) micro-batches over the stage's layers, and with interleaving
    (:func:`microbatches_in_flight`) the extra ones on its first chunk only
    (Korthikanti et al. [2] Sec. 4.2.3):
    ``L_1 min(m, p) + (inflight - min(m, p)) v (L_stage / v - [balanced])`` layer-micro-batches.

    Examples
    --------
    8 stages, v = 2, m = 16, 12 layers each: 8 x 12 + (8 x 1.4375 - 8) x 2 x 6 = 138
    layer-micro-batches of 1 byte:

    >>> float(stage_activation_bytes(1.0, 0.0, 8, 2, 16, 12, 12, False, False, 0.0))
    138.0
    """
    inflight = microbatches_in_flight(pp, vpp, num_microbatches)
    first_chunk_layers = layers_per_stage / vpp - balanced
    steady = np.minimum(num_microbatches, pp)
    layer_microbatches = first_stage_layers * steady \
        + (inflight - steady) * vpp * first_chunk_layers
    single = pp == 1
    activations = layer_microbatches * stored + np.where(full_recompute, full, 0.0) \
        + np.where(single, logits, 0.0)
    if any_true(mtp_depth):
        activations = activations + np.where(single, mtp_depth * stored, 0.0)
    return activations


def offload_resident_bytes(full, pp, vpp, num_microbatches, logits):
    """Activations a device still holds when it offloads the rest to host memory. [bytes]

    Layer-level offloading (Megatron-Core ``--cpu-offloading``, TransformerEngine's
    ``get_cpu_offload_context``) copies each layer's saved activations to the host after
    its forward and back before its backward, double-buffered: the last layer's, whose
    backward starts at once, are never offloaded ("we don't want to offload the final
    layer's activations", NeMo's ``cpu_offloading_num_layers`` note), and one more layer's
    are on their way. Each micro-batch in flight (:func:`microbatches_in_flight`) keeps its
    last layer, plus one layer in transit, plus the loss's logits where there is no
    pipeline: ``(inflight + 1) * full + [p = 1] * logits``.

    Parameters
    ----------
    full : float or array
        One layer's activations for one micro-batch, nothing recomputed
        (:func:`activation_bytes_per_layer`). [bytes]
    pp, vpp, num_microbatches : int or array
        p, v, m. [-]
    logits : float or array
        :func:`logits_bytes` and the output layer's, held by the last stage. [bytes]

    Examples
    --------
    One stage (one micro-batch in flight), 10 bytes a layer, 3 bytes of logits: 2 x 10 + 3:

    >>> float(offload_resident_bytes(10.0, 1, 1, 8, 3.0))
    23.0
    """
    inflight = microbatches_in_flight(pp, vpp, num_microbatches)
    return (inflight + 1) * full + np.where(pp == 1, logits, 0.0)


def optimizer_shard_params(dense_params, expert_params, zero, dp, expert_dp):
    """Parameters whose optimizer step one device runs. [params]

    ZeRO 1-3 shards the optimizer over the ranks holding the same weights: the dense ones
    over d (data- and context-parallel ranks), the experts over their own replicas.

    >>> float(optimizer_shard_params(8e9, 1e9, 1, 8, 2))
    1500000000.0
    >>> float(optimizer_shard_params(8e9, 0.0, 0, 8, 8))
    8000000000.0
    """
    sharded = zero >= 1
    return dense_params / np.where(sharded, dp, 1) + expert_params / np.where(sharded,
                                                                              expert_dp, 1)
