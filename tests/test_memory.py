"""Memory formulas against ZeRO (Rajbhandari et al. 2020) and Korthikanti et al. 2022."""

import numpy as np
import traincost
import pytest

from traincost.memory import activation_bytes_per_layer, microbatches_in_flight, model_state_bytes
from traincost.workload import RECOMPUTE_CODES

GB = 1e9


@pytest.mark.parametrize("stage,published_gb", [(0, 120.0), (1, 31.4), (2, 16.6), (3, 1.9)])
def test_zero_paper_figure1_7_5b_on_64_gpus(stage, published_gb):
    # ZeRO (arXiv:1910.02054) Fig. 1: Psi = 7.5B, N_d = 64, K = 12
    s = model_state_bytes(7.5e9, 64, stage, 2, 2, 12)
    assert float(sum(s.values())) / GB == pytest.approx(published_gb, abs=0.05)


def test_zero_stages_never_increase_memory():
    totals = [float(sum(model_state_bytes(1e9, 16, z, 2, 2, 12).values())) for z in range(4)]
    assert totals == sorted(totals, reverse=True)


# Korthikanti et al. (arXiv:2205.05198) Table 2, per layer, 16-bit, f = 4h, MHA
S, B, H, A = 2048, 1, 12288, 96


def korthikanti(t, mode, sp=True):
    if mode == "full":
        return 2 * S * B * H / (t if sp else 1)
    scores = 5 * A * S / H
    if sp:
        return S * B * H * ((34 + (scores if mode == "none" else 0)) / t)
    return S * B * H * (10 + 24 / t + (scores / t if mode == "none" else 0))


@pytest.mark.parametrize("mode", ["none", "selective", "full"])
@pytest.mark.parametrize("t", [1, 8])
def test_activation_bytes_reduce_to_korthikanti_table2(mode, t):
    stored, _ = activation_bytes_per_layer(S, B, H, A, A, H // A, 4 * H, t,
                                           RECOMPUTE_CODES[mode], sequence_parallel=True)
    assert float(stored) == pytest.approx(korthikanti(t, mode), rel=1e-12)


def test_activation_bytes_without_sequence_parallel():
    stored, _ = activation_bytes_per_layer(S, B, H, A, A, H // A, 4 * H, 8,
                                           RECOMPUTE_CODES["none"], sequence_parallel=False)
    assert float(stored) == pytest.approx(korthikanti(8, "none", sp=False), rel=1e-12)


def test_full_set_is_what_no_recompute_stores():
    none, full_none = activation_bytes_per_layer(S, B, H, A, A, 128, 4 * H, 8, 0)
    _, full_full = activation_bytes_per_layer(S, B, H, A, A, 128, 4 * H, 8, 2)
    assert float(none) == float(full_none) == float(full_full)


def test_gqa_stores_less_than_mha():
    mha, _ = activation_bytes_per_layer(S, B, H, A, A, 128, 4 * H, 1, 1)
    gqa, _ = activation_bytes_per_layer(S, B, H, A, 8, 128, 4 * H, 1, 1)
    # K and V are stored at 2 bytes each: GQA saves 4*(a - a_kv)*d bytes per token
    assert float(mha - gqa) == pytest.approx(S * B * 4 * (A - 8) * 128, rel=1e-12)


def test_moe_experts_keep_their_routed_copies_of_the_input():
    # each of the k experts a token is sent to keeps that copy (h wide, 2 bytes) for its
    # first GEMM's weight gradient: Mixtral's k = 2 adds 2 * 2h per token to the layer, a
    # tenth of its MLP's own 2h + h + 6f at f = 3.5h; with SP over t the copies shard too
    gated_mixtral_ffn = 1.5 * 2 * 3.5 * H                      # ffn_eff: (k + shared) * 1.5f
    for t in (1, 4):
        dense, _ = activation_bytes_per_layer(S, B, H, A, 8, 128, gated_mixtral_ffn, t, 1)
        moe, _ = activation_bytes_per_layer(S, B, H, A, 8, 128, gated_mixtral_ffn, t, 1,
                                            expert_inputs=2)
        assert float(moe - dense) == pytest.approx(S * B * 2 * 2 * H / t, rel=1e-12)


def test_pipeline_inflight_microbatches():
    # Korthikanti Sec. 4.2.3: p micro-batches in flight, times 1 + (p-1)/(p*v) interleaved
    assert float(microbatches_in_flight(8, 1, 96)) == 8
    assert float(microbatches_in_flight(8, 2, 96)) == pytest.approx(8 * (1 + 7 / 16))
    assert float(microbatches_in_flight(8, 1, 3)) == 3      # fewer micro-batches than stages
    arr = microbatches_in_flight(np.array([1, 4]), 1, 10)
    assert list(arr) == [1, 4]


def test_context_parallel_ranks_share_the_zero_shards():
    # Megatron-Core reduces gradients and shards its distributed optimizer over the data-
    # and context-parallel ranks together (intra_dp_cp_group, megatron/core/optimizer/
    # __init__.py). Llama 3.1 405B, NeMo 25.04's H100 layout: tp 8, pp 8, cp 2, dp 4, vpp 8.
    # The first stage holds ceil(126/64) = 2 layers per chunk, 16 layers, and the embedding:
    h, F, kv_dim, V = 16384, 53248, 8 * 128, 128256
    layer = h * (h + 2 * kv_dim) + h * h + 3 * h * F + 2 * h      # QKV, out, SwiGLU, 2 norms
    on_device = (16 * layer + V * h) / 8                            # over tp 8: 6.64e9
    est = traincost.estimate("h100-sxm5-80gb", 512, model="llama3.1-405b", global_batch=256,
                             seq_len=8192, tp=8, pp=8, cp=2, vpp=8, micro_batch=1, zero=1,
                             recompute="selective", attention_kernel="cudnn")
    gib = est.memory_breakdown_gib()
    assert gib["optimizer"] * 2**30 == pytest.approx(on_device * 12 / (4 * 2), rel=1e-3)
    assert gib["gradients"] * 2**30 == pytest.approx(on_device * 2, rel=1e-3)   # ZeRO-1
    # which makes the run's layout fit in an H100's 80 GB with selective recompute, as it ran
    assert est.to_dict()["fits_in_memory"]
