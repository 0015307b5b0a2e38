"""Full recompute of a share of the layers (``recompute_fraction``): Megatron-Core's block
method (``--recompute-method block --recompute-num-layers k``), checkpointing every n-th
block. Values by hand from the formulas of Narayanan et al. 2021 (SC21, Appendix: full
recompute adds one forward pass of the layers) and Korthikanti et al. 2022 (Sec. 4: a
fully recomputed layer keeps only its input, ``2 s b h`` bytes in 16 bits)."""

import json

import pytest

import traincost
from traincost.cli import main

#: Llama 2 7B (32 layers, h 4096, a 32, SwiGLU 11008) on 8 H100, one 4,096-token sequence
#: per micro-batch, no tensor or pipeline parallelism
KW = dict(model="llama2-7b", global_batch=64, seq_len=4096, tokens=1e11, tp=1, pp=1, cp=1,
          ep=1, vpp=1, zero=1, micro_batch=1, precision="bf16")


def test_a_share_of_full_recompute_adds_that_share_of_the_layers_forward():
    """Per token, full recompute repeats the layers' forward: 2 x the layer weights plus
    the attention core. A layer holds 4 h^2 + 3 h f = 67,108,864 + 135,266,304 =
    202,375,168 weights, so 32 layers' forward GEMMs are 2 x 32 x 202,375,168 =
    12,952,010,752 FLOP, and the core 32 x 4 s h = 2,147,483,648 (the full square, as the
    model FLOP count has it). A quarter of the layers: 15,099,494,400 / 4 = 3,774,873,600."""
    est = traincost.estimate("h100-sxm5-80gb", 8, recompute_fraction=0.25, **KW)
    assert est.parallel.recompute == "full"              # the share fixes the mode
    assert est.hardware_flop_per_token - est.model_flop_per_token == pytest.approx(
        3_774_873_600, rel=1e-12)


def test_one_recomputed_layer_of_32_keeps_its_input_beside_the_others():
    """No recompute keeps all 32 layers' activations; recomputing one of them in full
    keeps that layer's input (2 s b h = 2 x 4096 x 1 x 4096 = 33,554,432 bytes) instead of
    its activations, which come back whole while it recomputes: 33,554,432 bytes more."""
    none = traincost.estimate("h100-sxm5-80gb", 8, recompute="none", **KW)
    one = traincost.estimate("h100-sxm5-80gb", 8, recompute_fraction=1 / 32, **KW)
    assert one.memory_activations_bytes - none.memory_activations_bytes == 33_554_432


def test_the_step_moves_with_the_share_between_none_and_full():
    """The recomputed forward is per layer: a quarter of the layers add a quarter of what
    full recompute adds to the compute, and the step lies between none's and full's."""
    none = traincost.estimate("h100-sxm5-80gb", 8, recompute="none", **KW)
    full = traincost.estimate("h100-sxm5-80gb", 8, recompute="full", **KW)
    part = traincost.estimate("h100-sxm5-80gb", 8, recompute_fraction=0.25, **KW)
    assert (part.step_compute_s - none.step_compute_s) == pytest.approx(
        0.25 * (full.step_compute_s - none.step_compute_s), rel=1e-9)
    assert none.step_time_s < part.step_time_s < full.step_time_s
    whole = traincost.estimate("h100-sxm5-80gb", 8, recompute_fraction=1.0, recompute="full",
                               **KW)
    assert whole.step_time_s == full.step_time_s


@pytest.mark.parametrize("value, words", [
    (0.0, "recompute-fraction: 0.0 must be > 0"),
    (1.5, "recompute-fraction: 1.5 must be"),
])
def test_a_share_outside_0_1_is_refused(value, words):
    with pytest.raises(ValueError, match=words):
        traincost.estimate("h100-sxm5-80gb", 8, recompute_fraction=value, **KW)


def test_a_share_beside_another_recompute_mode_is_refused():
    with pytest.raises(ValueError, match="recompute-fraction: 0.25 is a share of the layers "
                                         "under full recompute or offload, not selective"):
        traincost.estimate("h100-sxm5-80gb", 8, recompute_fraction=0.25,
                           **{**KW, "recompute": "selective"})


def test_cli_flag(capsys):
    args = ("estimate --accelerator h100-sxm5-80gb --devices 8 --model llama2-7b "
            "--global-batch 64 --seq-len 4096 --tp 1 --pp 1 --zero 1 --micro-batch 1 "
            "--recompute-fraction 0.25 --json").split()
    assert main(args) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["parallel"]["recompute"] == "full"
    assert out["stack"]["recompute_fraction"] == 0.25
    assert main([*args[:-3], "--recompute-fraction", "2", "--json"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "recompute-fraction: 2.0 must be at most 1" in err
