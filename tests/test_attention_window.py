"""Sliding-window attention (``attention_window``, ``window_layers``): a windowed layer's
query attends to the w keys before it (Mistral 7B, Jiang et al. 2023, arXiv:2310.06825
Sec. 2; Gemma 3's local layers, 5 of every 6, window 1,024: Gemma Team 2025,
arXiv:2503.19786 Sec. 2). Values by hand: a causal window of w over s tokens does
w s - w (w - 1) / 2 query-key products against s (s + 1) / 2 for full causal attention,
so the model's full-square count (4 s a d a layer and token for Q K^T and the weighted sum)
takes 2 w - w^2 / s keys in place of s."""

import json

import pytest

import traincost

#: Llama 3.1 8B's shape (32 layers, 32 heads of 128) on 8 H100 at 8,192 tokens
KW = dict(model="llama3.1-8b", global_batch=64, seq_len=8192, tokens=1e11, tp=1, pp=1, cp=1,
          zero=1, micro_batch=1, recompute="none", precision="bf16")


def test_a_window_of_half_the_sequence_removes_its_share_of_the_core_flops():
    """w = 4096, s = 8192: 2 x 4096 - 4096^2 / 8192 = 6144 keys in place of 8192, so each
    layer's core drops 2 x 2048 x 32 x (128 + 128) FLOP a token in the forward (Q K^T and
    the weighted sum, each 2 s a d): 32 layers x 33,554,432 = 1,073,741,824, three times
    that forward and backward: 3,221,225,472 FLOP a token."""
    full = traincost.estimate("h100-sxm5-80gb", 8, **KW)
    win = traincost.estimate("h100-sxm5-80gb", 8, attention_window=4096, **KW)
    assert full.model_flop_per_token - win.model_flop_per_token == 3 * 1_073_741_824
    assert win.step_time_s < full.step_time_s


def test_a_share_of_the_layers_removes_that_share():
    """Gemma-3-style: 8 of the 32 layers windowed remove a quarter of the above."""
    full = traincost.estimate("h100-sxm5-80gb", 8, **KW)
    part = traincost.estimate("h100-sxm5-80gb", 8, attention_window=4096, window_layers=8, **KW)
    assert full.model_flop_per_token - part.model_flop_per_token == 3 * 1_073_741_824 // 4


def test_a_window_as_long_as_the_sequence_changes_nothing():
    full = traincost.estimate("h100-sxm5-80gb", 8, **KW)
    same = traincost.estimate("h100-sxm5-80gb", 8, attention_window=8192, **KW)
    every = traincost.estimate("h100-sxm5-80gb", 8, attention_window=4096, window_layers=32,
                               **KW)
    alln = traincost.estimate("h100-sxm5-80gb", 8, attention_window=4096, **KW)
    assert same.step_time_s == pytest.approx(full.step_time_s, rel=1e-12)
    assert same.model_flop_per_token == full.model_flop_per_token
    assert every.step_time_s == alln.step_time_s          # 0 layers given: all of them


def test_a_materialized_kernel_computes_the_masked_square():
    """Without a fused kernel the scores are computed over the whole square and masked: the
    step is as without the window, though the model's FLOPs (the work the model needs)
    drop as above."""
    kw = {**KW, "attention_kernel": "materialized"}
    full = traincost.estimate("h100-sxm5-80gb", 8, **kw)
    win = traincost.estimate("h100-sxm5-80gb", 8, attention_window=4096, **kw)
    assert win.step_time_s == pytest.approx(full.step_time_s, rel=1e-12)
    assert full.model_flop_per_token - win.model_flop_per_token == 3 * 1_073_741_824


@pytest.mark.parametrize("extra, words", [
    (dict(attention_window=4096, window_layers=33), "window-layers: 33 is more than"),
    (dict(window_layers=8), "window-layers: 8 given without --attention-window"),
    (dict(attention_window=-1), "attention-window: -1"),
])
def test_bad_windows_are_refused_naming_the_field(extra, words):
    with pytest.raises(ValueError, match=words):
        traincost.estimate("h100-sxm5-80gb", 8, **KW, **extra)


def test_cli_flags(capsys):
    """The flags reach the estimate (the FLOP drop above), and a bad count exits 2 with one
    line naming the flag."""
    from clihelpers import run, with_flags
    base = ["estimate", "--accelerator", "h100-sxm5-80gb", "--devices", "8", "--json"]
    for key, value in KW.items():
        if key != "tokens":
            base = with_flags(base, [f"--{key.replace('_', '-')}", str(value)])
    rc, out, err = run(with_flags(base, ["--attention-window", "4096"]), capsys)
    assert rc == 0, err
    full = traincost.estimate("h100-sxm5-80gb", 8, **KW)
    drop = full.model_flop_per_token - json.loads(out)["model_flop_per_token"]
    assert drop == 3 * 1_073_741_824
    rc, out, err = run(with_flags(base, ["--attention-window", "4096", "--window-layers", "40"]),
                       capsys)
    assert rc == 2 and err.strip().count("\n") == 0 and "window-layers: 40 is more than" in err
