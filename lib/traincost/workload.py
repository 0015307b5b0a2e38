"""Parameters and FLOP of a decoder-only transformer (dense or mixture-of-experts).

Every function takes numbers or numpy arrays and broadcasts. Notation follows
Narayanan et al. (SC21): L layers, h hidden, a heads, s sequence, V vocabulary;
a_kv key/value heads, d head size, f MLP inner size, E experts, k top-k.

References
----------
.. [1] Narayanan et al., "Efficient Large-Scale Language Model Training on GPU Clusters
   Using Megatron-LM", SC21, arXiv:2104.04473 (Eq. 2 and 3).
.. [2] Chowdhery et al., "PaLM", arXiv:2204.02311, App. B (6N + 12*L*h*s per token).
.. [3] Korthikanti et al., "Reducing Activation Recomputation in Large Transformer
   Models", arXiv:2205.05198, Sec. 5 (selective recompute).
.. [4] DeepSeek-AI, "DeepSeek-V3 Technical Report", arXiv:2412.19437, Sec. 2.1 (MLA).
"""

from __future__ import annotations

import numpy as np


def attention_weights(hidden, heads, kv_heads, head_dim, *, mla=False, q_lora_rank=0,
                      kv_lora_rank=0, qk_rope_head_dim=0, v_head_dim=0):
    """Matrix weights of one attention block (no biases, no norms).

    Parameters
    ----------
    hidden, heads, kv_heads, head_dim : int or array
        h, a, a_kv, d. [-]
    mla : bool or array
        Multi-head latent attention (DeepSeek-V2/V3) instead of MHA/GQA. [-]
    q_lora_rank, kv_lora_rank, qk_rope_head_dim, v_head_dim : int or array
        MLA ranks and head sizes; a q_lora_rank of 0 means a full-rank query. [-]

    Returns
    -------
    Weights per layer. [params]

    Notes
    -----
    MHA/GQA: h*a*d (Q) + 2*h*a_kv*d (K, V) + a*d*h (output).
    MLA [4]: query down/up h*r_q + r_q*a*(d + d_r) (or h*a*(d + d_r) at full rank),
    joint KV down h*(r_kv + d_r), KV up r_kv*a*(d + d_v), output a*d_v*h.
    """
    h, a, a_kv, d = hidden, heads, kv_heads, head_dim
    mha = h * a * d + 2 * h * a_kv * d + a * d * h
    q_full = h * a * (d + qk_rope_head_dim)
    q_lora = h * q_lora_rank + q_lora_rank * a * (d + qk_rope_head_dim)
    q = np.where(np.asarray(q_lora_rank) > 0, q_lora, q_full)
    kv = h * (kv_lora_rank + qk_rope_head_dim) + kv_lora_rank * a * (d + v_head_dim)
    out = a * v_head_dim * h
    return np.where(mla, q + kv + out, mha)


def mlp_weights(hidden, ffn_hidden, gated):
    """Matrix weights of one MLP (or one expert): 3*h*f if gated (SwiGLU), else 2*h*f. [params]"""
    return np.where(gated, 3, 2) * hidden * ffn_hidden


def parameter_counts(layers, hidden, heads, kv_heads, head_dim, ffn_hidden, gated_mlp, vocab,
                     seq_len, tied_embeddings, learned_positions, experts=0, top_k=0,
                     shared_experts=0, moe_ffn_hidden=0, dense_layers=0, mla=False,
                     q_lora_rank=0, kv_lora_rank=0, qk_rope_head_dim=0, v_head_dim=0):
    """Exact parameter counts of a dense or MoE decoder.

    Parameters are those of :class:`traincost.inputs.Workload` (effective values: no
    zeros standing for defaults). [-]

    Returns
    -------
    dict of arrays [params]:
        ``total`` all parameters; ``active`` those one token uses (top-k experts);
        ``embedding`` input embedding + positions; ``output`` untied output layer;
        ``layers`` all transformer layers; ``experts`` routed-expert weights (all layers);
        ``layer_matmul_active`` matrix weights one token touches in the layers (incl. the
        router), used for FLOP; ``moe_layers`` number of MoE layers.

    Notes
    -----
    Per dense layer: attention weights + MLP weights + biases + norms. Gated (Llama-style)
    models have no biases and RMSNorm (h per norm); the others (GPT-style) have biases
    (a*d + 2*a_kv*d + h in attention, f + h in the MLP) and LayerNorm (2h per norm). For
    GPT with f = 4h this is 12*h^2 + 13*h per layer, and with V*h embeddings and s*h
    learned positions reproduces Megatron-LM Eq. 2 [1]: 145.6e9 for L=80, h=12288,
    V=51200, s=2048. An MoE layer replaces the MLP by E routed experts, the shared experts
    and a router (h*E).

    Examples
    --------
    >>> p = parameter_counts(80, 12288, 96, 96, 128, 49152, False, 51200, 2048, True, True)
    >>> round(float(p["total"]) / 1e9, 1)
    145.6
    """
    h, L = hidden, layers
    biases = ~np.asarray(gated_mlp, dtype=bool)
    v_dim = np.where(mla, v_head_dim, head_dim)
    attn = attention_weights(h, heads, kv_heads, head_dim, mla=mla, q_lora_rank=q_lora_rank,
                             kv_lora_rank=kv_lora_rank, qk_rope_head_dim=qk_rope_head_dim,
                             v_head_dim=v_head_dim)
    mla_norms = np.where(mla, q_lora_rank + kv_lora_rank, 0)          # MLA latent RMSNorms
    attn_bias = np.where(biases, heads * head_dim + 2 * kv_heads * v_dim + h, 0)
    norm_size = np.where(biases, 2 * h, h)                             # LayerNorm vs RMSNorm
    dense_mlp = mlp_weights(h, ffn_hidden, gated_mlp) + np.where(biases, ffn_hidden + h, 0)
    expert = mlp_weights(h, moe_ffn_hidden, gated_mlp)
    moe_layers = np.where(np.asarray(experts) > 0, L - dense_layers, 0)
    dense_count = L - moe_layers
    common = attn + attn_bias + 2 * norm_size + mla_norms             # attention + 2 norms
    routed = experts * expert
    moe_mlp = routed + shared_experts * expert + h * experts          # + router
    layer_total = dense_count * (common + dense_mlp) + moe_layers * (common + moe_mlp)
    embedding = vocab * h + np.where(learned_positions, seq_len * h, 0)
    output = np.where(tied_embeddings, 0, vocab * h)
    final_norm = norm_size
    total = layer_total + embedding + output + final_norm
    active_moe = (top_k + shared_experts) * expert + h * experts
    active = total - moe_layers * (moe_mlp - active_moe)
    matmul_dense = attn + mlp_weights(h, ffn_hidden, gated_mlp)
    matmul_moe = attn + active_moe
    return {
        "total": total,
        "active": active,
        "embedding": embedding,
        "output": output,
        "layers": layer_total,
        "experts": moe_layers * routed,
        "layer_matmul_active": dense_count * matmul_dense + moe_layers * matmul_moe,
        "moe_layers": moe_layers,
    }


def pipeline_units(layers, balanced):
    """Layer-sized units a pipeline split divides among the p*v model chunks. [-]

    The transformer layers, plus the input embedding and the loss counted as one layer each
    in a balanced split (Llama 3, arXiv:2407.21783, Sec. 3.3.2; Megatron-Core
    ``--account-for-embedding-in-pipeline-split`` / ``--account-for-loss-in-pipeline-split``).

    >>> int(pipeline_units(126, True)), int(pipeline_units(126, False))
    (128, 126)
    """
    return layers + 2 * np.asarray(balanced, dtype=int)


def stage_layers(layers, pp, vpp, balanced):
    """Transformer layers on the fullest pipeline stage and on the first stage.

    Parameters
    ----------
    layers, pp, vpp : int or array
        L, p (pipeline stages) and v (model chunks per stage). [-]
    balanced : bool or array
        Whether the split counts the embedding and the loss as a layer each
        (:func:`pipeline_units`); only meaningful for p > 1. [-]

    Returns
    -------
    (layers_per_stage, first_stage_layers): ``ceil(units / (p*v)) * v`` layer-sized units
    on the fullest stage, which sets the pipeline's pace, and the first stage's
    transformer layers, one fewer in a balanced split (the embedding takes that place). [-]

    Notes
    -----
    An uneven split loads one stage more (BLOOM's 70 layers on 12 stages: 6 on the fullest,
    BigScience's Megatron-DeepSpeed fork); a balanced one leaves the first and last stages a
    layer short (Llama 3, arXiv:2407.21783, Sec. 3.3.2).

    >>> [float(x) for x in stage_layers(70, 12, 1, False)]
    [6.0, 6.0]
    >>> [float(x) for x in stage_layers(126, 16, 1, True)]
    [8.0, 7.0]
    """
    per_stage = np.ceil(pipeline_units(layers, balanced) / (pp * vpp)) * vpp
    return per_stage, per_stage - balanced


def attention_head_dims(head_dim, mla, qk_rope_head_dim, v_head_dim):
    """Query/key and value head sizes of the attention core. [-]

    Standard attention uses d for both; MLA (DeepSeek-V3 [4]) adds the decoupled rotary
    part to each query/key head (d_nope + d_rope) and has its own value head size.

    Returns
    -------
    (qk_dim, v_dim). [-]

    >>> [int(x) for x in attention_head_dims(128, True, 64, 128)]
    [192, 128]
    >>> [int(x) for x in attention_head_dims(128, False, 64, 96)]
    [128, 128]
    """
    v_dim = np.where(mla, v_head_dim, head_dim)
    qk_dim = head_dim + np.where(mla, qk_rope_head_dim, 0)
    return qk_dim, v_dim


def last_stage_excess(pp, vocab, hidden, model_flop_per_token):
    """Extra work of the last pipeline stage, which computes the output layer whole. [-]

    With the layers split evenly, each of p stages does (F - F_out)/p of a token's model
    FLOP F, and the last one also the output layer's F_out = 6*V*h (forward and backward):
    (p - 1) * F_out / F more than the average stage. A 1F1B pipeline runs at its slowest
    stage's pace (:func:`traincost.performance.stage_compute_time` prices it); a caveat
    names the share where it is large.

    >>> round(float(last_stage_excess(8, 256000, 18432, 2.133e12)), 3)   # Nemotron-4 340B
    0.093
    """
    head = 3 * output_layer_forward_flop_per_token(vocab, hidden)     # forward + backward
    return (pp - 1) * head / model_flop_per_token


def output_layer_forward_flop_per_token(vocab, hidden):
    """Forward FLOP per token of the output layer (logits), 2*V*h. [FLOP]

    >>> output_layer_forward_flop_per_token(32000, 4096)
    262144000
    """
    return 2 * vocab * hidden


def window_keys(seq_len, window):
    """Keys a windowed causal layer's queries attend to, as the keys of a full square. [tokens]

    Under sliding-window attention (Mistral 7B, arXiv:2310.06825 Sec. 2; Gemma 2 and 3's
    local layers) query i attends to the min(i + 1, w) keys before it, so a sequence of s
    tokens does ``w s - w (w - 1) / 2`` query-key products where full causal attention does
    ``s (s + 1) / 2``. The model counts the core over the full s x s square and halves it
    for a causal kernel (:func:`attention_core_flop_per_token`,
    ``Assumptions.flash_causal_work_fraction``), so a windowed layer's equivalent square has
    ``2 w - w^2 / s`` keys a query (to O(1/s)): s where ``w >= s`` or ``w = 0`` (no window).

    >>> float(window_keys(8192, 4096)), float(window_keys(8192, 0)), float(window_keys(4096, 8192))
    (6144.0, 8192.0, 4096.0)
    """
    w = np.asarray(window, dtype=float)
    windowed = (w > 0) & (w < seq_len)
    w = np.where(windowed, w, seq_len)
    return np.where(windowed, 2.0 * w - w * w / seq_len, seq_len)


def attention_keys(seq_len, window, window_layers, layers):
    """Mean full-square keys a query attends to over the layers, where ``window_layers`` of
    the ``layers`` attend within a sliding window of ``window`` tokens (:func:`window_keys`)
    and the others to the whole sequence: ``((L - n) s + n k_w) / L``. [tokens]

    Gemma 3 12B at 32,768 tokens (40 of its 48 layers local, window 1,024):
    (8 x 32768 + 40 x (2048 - 32)) / 48 = 7,141.3.

    >>> round(float(attention_keys(32768, 1024, 40, 48)), 1)
    7141.3
    """
    local = np.where(np.asarray(window) > 0, window_layers, 0)
    return ((layers - local) * seq_len + local * window_keys(seq_len, window)) / layers


def attention_core_flop_per_token(layers, seq_len, heads, head_dim, *, mla=False,
                                  qk_rope_head_dim=0, v_head_dim=0):
    """Forward FLOP per token of the attention scores and their weighted sum, all layers.

    Parameters
    ----------
    layers, seq_len, heads, head_dim : int or array
        L, s, a, d. [-]

    Returns
    -------
    FLOP per token, forward only. [FLOP]

    Notes
    -----
    Q K^T costs 2*s*a*d_qk and (softmax) V costs 2*s*a*d_v per token and layer, counted
    over the full (non-causal) s x s square as PaLM [2] and Megatron-LM [1] do: 4*s*h per
    layer for MHA, which gives the 12*L*h*s term of 6N + 12*L*h*s.
    """
    d_qk = head_dim + np.where(mla, qk_rope_head_dim, 0)
    d_v = np.where(mla, v_head_dim, head_dim)
    return layers * 2 * seq_len * heads * (d_qk + d_v)


def flop_per_token(layer_matmul_active, vocab, hidden, attention_core_flop, recompute_code,
                   frozen_weights=False, recompute_matmul_share=np.nan):
    """Model and hardware FLOP per training token.

    Parameters
    ----------
    layer_matmul_active : float or array
        Matrix weights a token touches in all layers. [params]
    vocab, hidden : int or array
        V, h (the output layer adds 2*V*h forward FLOP per token). [-]
    attention_core_flop : float or array
        Forward attention-core FLOP per token, all layers. [FLOP]
    recompute_code : int or array
        0 none, 1 selective, 2 full, 3 offload (recomputes nothing; see
        ``RECOMPUTE_CODES``). [-]
    frozen_weights : bool or array
        The weights are frozen (LoRA): the backward computes no weight gradients. [-]
    recompute_matmul_share : float or array
        Under a per-operator selective policy, the share of the layers' matmul FLOP its
        backward recomputes (:func:`odd_matmul_recompute_share`); NaN: Megatron's
        selective, which recomputes the attention core only. [-]

    Returns
    -------
    (model_flop, hardware_flop) per token. [FLOP]

    Notes
    -----
    Forward F = 2*W_layers + 2*V*h + A (A: attention core). Training is forward plus a
    backward of twice the forward: model FLOP = 3F. Full recompute repeats the layers'
    forward (2*W_layers + A); selective recompute repeats only the attention core A [3],
    or, under a per-operator policy that recomputes a share rho of the matmuls (and keeps
    the attention kernel's output), rho*2*W_layers. For GPT this is Megatron-LM Eq. 3 [1]: 96*B*s*L*h^2*(1 + s/(6h) + V/(16*L*h)) per step
    with full recompute and 72*(...)(1 + s/(6h) + V/(12*L*h)) without. With frozen
    weights the matmuls' backward computes the input gradients only, one forward's worth:
    model FLOP = 3F - (2*W_layers + 2*V*h) (the attention core's backward is unchanged).

    >>> [float(x) for x in flop_per_token(1.0, 1, 1, 0.0, 0)]          # F = 2 + 2 = 4
    [12.0, 12.0]
    >>> [float(x) for x in flop_per_token(1.0, 1, 1, 0.0, 0, True)]    # 12 - (2 + 2)
    [8.0, 8.0]
    >>> [float(x) for x in flop_per_token(1.0, 1, 1, 1.0, 1, False, 0.5)]   # + 0.5 x 2 x 1
    [15.0, 16.0]
    """
    layer_fwd = 2 * layer_matmul_active + attention_core_flop
    matmul_fwd = 2 * layer_matmul_active + output_layer_forward_flop_per_token(vocab, hidden)
    forward = layer_fwd + output_layer_forward_flop_per_token(vocab, hidden)
    model = 3 * forward - np.where(frozen_weights, matmul_fwd, 0.0)
    selective = np.where(np.isnan(recompute_matmul_share), attention_core_flop,
                         np.nan_to_num(recompute_matmul_share) * 2 * layer_matmul_active)
    extra = np.where(recompute_code == RECOMPUTE_CODES["full"], layer_fwd,
                     np.where(recompute_code == RECOMPUTE_CODES["selective"], selective, 0.0))
    return model, model + extra


def odd_matmul_recompute_share(hidden, heads, kv_heads, head_dim, ffn_hidden, gated):
    """Share of a layer's matmul FLOP torchtitan's per-operator ('op') selective
    checkpointing recomputes in the backward. [-]

    The policy saves the output of every other matmul of a layer in forward order (Q, K,
    V, O, then a gated MLP's gate, up and down, or a GeLU MLP's up and down) and
    recomputes the others, K, O and the MLP's second projection (torchtitan's
    ``_get_custom_policy``, a fresh counter per layer call):
    ``rho = (h a_kv d + a d h + h f) / (2 a d h + 2 h a_kv d + n h f)``, n = 3 gated, 2 not.
    Dense shapes: an MoE layer is taken as a dense one of the same expert width.

    Llama 3 8B (h 4096, 32 heads and 8 KV heads of 128, f 14336): 4.75 h^2 of 13 h^2:

    >>> round(float(odd_matmul_recompute_share(4096, 32, 8, 128, 14336, True)), 4)
    0.3654
    """
    attn = 2 * heads * head_dim * hidden + 2 * hidden * kv_heads * head_dim
    mlp = np.where(gated, 3, 2) * hidden * ffn_hidden
    again = hidden * kv_heads * head_dim + heads * head_dim * hidden + hidden * ffn_hidden
    return again / (attn + mlp)


#: integer codes of the recompute modes, so that arrays of layouts can hold them
RECOMPUTE_CODES = {"none": 0, "selective": 1, "full": 2, "offload": 3}
#: the recompute mode each code stands for (the inverse of :data:`RECOMPUTE_CODES`)
CODE_TO_RECOMPUTE = {v: k for k, v in RECOMPUTE_CODES.items()}
