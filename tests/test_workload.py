"""Parameter and FLOP formulas against published counts and equations."""

import numpy as np
import pytest

from traincost import catalog
from traincost.workload import (RECOMPUTE_CODES, attention_core_flop_per_token, flop_per_token,
                                parameter_counts)


def counts(model_id):
    w = catalog.model(model_id)
    return parameter_counts(
        w.layers, w.hidden, w.heads, w.kv_heads_effective, w.head_dim_effective,
        w.ffn_hidden_effective, w.gated_mlp, w.vocab, catalog.job(model_id).seq_len,
        w.tied_embeddings,
        w.learned_positions, w.experts, w.top_k, w.shared_experts,
        w.moe_ffn_hidden or w.ffn_hidden_effective, w.dense_layers, w.attention == "mla",
        w.q_lora_rank, w.kv_lora_rank, w.qk_rope_head_dim, w.v_head_dim)


def megatron_eq2(L, h, V, s):
    """Narayanan et al. SC21 Eq. 2."""
    return 12 * L * h**2 * (1 + 13 / (12 * h) + (V + s) / (12 * L * h))


@pytest.mark.parametrize("model_id,published_billion", [
    ("megatron-1.7b", 1.7), ("megatron-3.6b", 3.6), ("megatron-7.5b", 7.5),
    ("megatron-18.4b", 18.4), ("megatron-39.1b", 39.1), ("megatron-76.1b", 76.1),
    ("megatron-145.6b", 145.6), ("megatron-310.1b", 310.1), ("megatron-529.6b", 529.6),
    ("megatron-1t", 1008.0)])
def test_megatron_sc21_table1_parameter_counts(model_id, published_billion):
    # SC21 Table 1 prints billions to one decimal: our count must round to the same figure
    total = float(counts(model_id)["total"])
    assert round(total / 1e9, 1) == pytest.approx(published_billion, abs=0.051), (
        f"{model_id}: {total / 1e9:.3f}B, SC21 Table 1 says {published_billion}B")


def test_megatron_eq2_matches_formula_exactly_up_to_final_norm():
    L, h, V, s = 80, 12288, 51200, 2048
    p = parameter_counts(L, h, 96, 96, 128, 4 * h, False, V, s, True, True)
    # our count adds the final LayerNorm (2h), which Eq. 2 leaves out
    assert float(p["total"]) == pytest.approx(megatron_eq2(L, h, V, s) + 2 * h, rel=1e-12)
    assert float(p["total"]) == pytest.approx(145.6e9, rel=0.005)


@pytest.mark.parametrize("model_id,exact", [
    # Hugging Face model cards / safetensors metadata (parameter totals of the checkpoints)
    ("llama2-7b", 6_738_415_616),      # meta-llama/Llama-2-7b-hf
    ("llama2-70b", 68_976_648_192),    # meta-llama/Llama-2-70b-hf
    ("llama3.1-8b", 8_030_261_248),    # meta-llama/Llama-3.1-8B
    ("mixtral-8x7b", 46_702_792_704),  # mistralai/Mixtral-8x7B-v0.1
    ("gpt2-small", 124_439_808),       # openai-community/gpt2
])
def test_checkpoint_parameter_counts_exact(model_id, exact):
    assert int(counts(model_id)["total"]) == exact


def test_bloom_count_differs_only_by_its_embedding_layernorm():
    # BLOOM-176B (BigScience 2022): 176,247,271,424 parameters; BLOOM adds a LayerNorm
    # (2h = 28,672) after the word embeddings that the generic decoder does not have.
    assert int(counts("bloom-176b")["total"]) + 2 * 14336 == 176_247_271_424


def test_moe_active_parameters_match_published():
    # Mixtral of Experts (Jiang et al. 2024, arXiv:2401.04088): 47B total, 13B active;
    # DeepSeek-V3 report (arXiv:2412.19437): 671B total, 37B activated per token.
    mix = counts("mixtral-8x7b")
    assert float(mix["active"]) == pytest.approx(12.9e9, rel=0.01)
    ds = counts("deepseek-v3")
    assert float(ds["total"]) == pytest.approx(671e9, rel=0.005)
    assert float(ds["active"]) == pytest.approx(37e9, rel=0.03)


def test_flop_per_token_is_megatron_eq3():
    # Eq. 3 (per step, full recompute) divided by the B*s tokens of a step:
    # 96*L*h^2*(1 + s/(6h) + V/(16*L*h)); without recompute 72*L*h^2*(1 + s/(6h) + V/(12*L*h))
    L, h, V, s, a = 80, 12288, 51200, 2048, 96
    p = parameter_counts(L, h, a, a, h // a, 4 * h, False, V, s, True, True)
    core = attention_core_flop_per_token(L, s, a, h // a)
    model, hw_full = flop_per_token(p["layer_matmul_active"], V, h, core, RECOMPUTE_CODES["full"])
    _, hw_none = flop_per_token(p["layer_matmul_active"], V, h, core, RECOMPUTE_CODES["none"])
    eq3_full = 96 * L * h**2 * (1 + s / (6 * h) + V / (16 * L * h))
    eq3_none = 72 * L * h**2 * (1 + s / (6 * h) + V / (12 * L * h))
    assert float(hw_full) == pytest.approx(eq3_full, rel=1e-12)
    assert float(hw_none) == pytest.approx(eq3_none, rel=1e-12)
    assert float(model) == pytest.approx(eq3_none, rel=1e-12)


def test_selective_recompute_adds_only_the_attention_core():
    # Korthikanti et al. 2022 Sec. 5: selective recompute repeats QK^T, softmax and AV
    L, h, s, a = 32, 4096, 4096, 32
    core = attention_core_flop_per_token(L, s, a, h // a)
    assert float(core) == 4 * L * s * h            # 4*s*h per layer and token (2 GEMMs)
    model, hw = flop_per_token(1e9, 32000, h, core, RECOMPUTE_CODES["selective"])
    assert float(hw - model) == float(core)


def test_six_n_rule_for_gpt3():
    # Kaplan et al. 2020: ~6N FLOP per token; with attention PaLM's 6N + 12*L*h*s
    p = counts("gpt3-175b")
    core = attention_core_flop_per_token(96, 2048, 96, 128)
    model, _ = flop_per_token(p["layer_matmul_active"], 50257, 12288, core, 0)
    n_nonembed = float(p["total"]) - float(p["embedding"])
    palm = 6 * n_nonembed + 12 * 96 * 12288 * 2048 + 6 * 50257 * 12288  # + output layer
    assert float(model) == pytest.approx(palm, rel=0.001)


def test_arrays_broadcast_like_scalars():
    layers = np.array([24, 80])
    p = parameter_counts(layers, 2304, 24, 24, 96, 4 * 2304, False, 51200, 2048, True, True)
    one = parameter_counts(80, 2304, 24, 24, 96, 4 * 2304, False, 51200, 2048, True, True)
    assert p["total"].shape == (2,)
    assert p["total"][1] == one["total"]
