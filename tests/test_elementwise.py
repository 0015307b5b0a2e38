"""Eager versus fused element-wise work (issue 21: "nothing can say 'this stack, eager or
compiled'").

A Llama-style block run eager (one PyTorch kernel an operator, no torch.compile) makes its
two RMSNorms, its rotary embedding and its SwiGLU move intermediates through HBM that a
fused kernel keeps in registers. The passes are counted op by op in
``traincost.assumptions`` (eager_rmsnorm_passes 16, eager_rope_passes 8,
eager_swiglu_passes 2); nothing here is fitted.
"""

from __future__ import annotations

import pytest

import traincost as tc
from traincost import catalog
from traincost.assemble import eager_elementwise
from traincost.inputs import Stack

from clihelpers import run

# one H100 (3.35 TB/s HBM, data/accelerators.csv), Llama 3.1 8B: 32 layers of h 4096, 32
# query and 8 key/value heads of 128, f 14336; one micro-batch of 2,048 tokens
ONE = dict(model="llama3.1-8b", accelerator="h100-sxm5-80gb", devices=1, global_batch=1,
           micro_batch=1, seq_len=2048, zero=0, tp=1, pp=1)
HBM = 3.35e12
# 16-bit elements an eager block moves beyond a fused one, per token of a layer's forward:
# 2 RMSNorms x 16 x h + 8 x (32 + 8) x 128 rotary + 2 x f SwiGLU
EXTRA = 2 * 16 * 4096 + 8 * (32 + 8) * 128 + 2 * 14336          # 200,704
FORWARD_S = EXTRA * 2048 * 2 / HBM          # one layer's forward: elements x 2 B / HBM


def _pair(**kw):
    return (tc.estimate(elementwise="eager", **ONE, **kw),
            tc.estimate(elementwise="fused", **ONE, **kw))


def test_eager_adds_the_counted_bytes_to_forward_and_backward():
    # no recompute: each layer's forward and its backward (two forwards' worth, Narayanan et
    # al. SC21 Sec. 5.1) move the extra bytes, 3 x 32 layers x 0.245 ms = 23.56 ms
    eager, fused = _pair(recompute="none")
    added = eager.values["step_compute_s"] - fused.values["step_compute_s"]
    assert added == pytest.approx(3 * 32 * FORWARD_S, rel=1e-9)
    assert added == pytest.approx(0.023558, rel=1e-4)


def test_full_recompute_pays_the_extra_a_fourth_time():
    eager, fused = _pair(recompute="full")
    added = eager.values["step_compute_s"] - fused.values["step_compute_s"]
    assert added == pytest.approx(4 * 32 * FORWARD_S, rel=1e-9)


def test_a_gpt_style_block_is_the_same_eager_or_fused():
    # LayerNorm and GELU are one PyTorch kernel each: eager costs nothing more
    kw = dict(model="gpt3-175b", accelerator="h100-sxm5-80gb", devices=64, global_batch=64,
              tp=8, pp=8, micro_batch=1, recompute="full")
    assert tc.estimate(elementwise="eager", **kw).step_time_s == \
        tc.estimate(elementwise="fused", **kw).step_time_s


def test_the_framework_sets_the_default_and_a_stated_mode_wins():
    assert catalog.framework("torchtitan")["elementwise"] == "eager"
    assert not eager_elementwise(Stack(framework="megatron"))
    assert eager_elementwise(Stack(framework="pytorch-fsdp"))
    assert not eager_elementwise(Stack(framework="torchtitan", elementwise="fused"))
    assert eager_elementwise(Stack(framework="megatron", elementwise="eager"))
    kw = dict(ONE, recompute="none")
    assert tc.estimate(framework="torchtitan", **kw).step_time_s == \
        tc.estimate(framework="torchtitan", elementwise="eager", **kw).step_time_s


def test_torchtitans_torch_compile_pair_is_predicted_in_its_direction_and_size():
    # torchtitan benchmarks/llama3_h100_202412_torchtitan.md Tables 1 and 3: FSDP 5,762 and
    # 5,605 TPS/GPU, FSDP + torch.compile 6,667 and 6,514 (8 and 128 H100): compiling gains
    # 15.7% and 16.2%, on Meta's Grand Teton H100s (96GB HBM2e at 2.4 TB/s, the rows'
    # accelerator). The counted passes, fitted to nothing, predict 15.4%: within 3 points
    # (with no eager term it would be 0; on the 3.35 TB/s H100, 11.2%)
    runs = catalog.published_runs()
    for eager_id in ("tt-h100-llama3.1-8b-8-fsdp", "tt-h100-llama3.1-8b-128-fsdp"):
        measured = runs.loc[eager_id + "-compile", "reported_tokens_per_s_per_device"] \
            / runs.loc[eager_id, "reported_tokens_per_s_per_device"] - 1
        assert 0.15 < measured < 0.17
        kw = dict(model="llama3.1-8b", accelerator=runs.loc[eager_id, "accelerator"],
                  devices=int(runs.loc[eager_id, "devices"]),
                  global_batch=int(runs.loc[eager_id, "global_batch"]), micro_batch=2, tp=1,
                  pp=1, zero=3, recompute="selective", framework="torchtitan", power_cap=500)
        gain = tc.estimate(**kw).step_time_s / tc.estimate(elementwise="fused", **kw).step_time_s \
            - 1
        assert gain == pytest.approx(measured, abs=0.03)


def test_an_unknown_mode_is_named(capsys):
    with pytest.raises(ValueError, match="elementwise: 'compiled' is not one of auto, fused, eager"):
        Stack(elementwise="compiled")
    with pytest.raises(SystemExit) as exit_:
        run(["estimate", "--model", "llama3.1-8b", "--accelerator", "h100-sxm5-80gb",
             "--devices", "8", "--global-batch", "16", "--elementwise", "compiled"], capsys)
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert "--elementwise" in err and "compiled" in err


def test_an_eager_llama_block_says_so_and_how_to_price_torch_compile():
    kw = dict(ONE, recompute="none")
    said = [c for c in tc.estimate(framework="torchtitan", **kw).caveats
            if c.startswith("element-wise ops run eager")]
    assert len(said) == 1 and "--elementwise fused" in said[0] and "16, 8 and 2" in said[0]
    for quiet in (tc.estimate(framework="torchtitan", elementwise="fused", **kw),
                  tc.estimate(model="gpt3-175b", accelerator="h100-sxm5-80gb", devices=64,
                              global_batch=64, tp=8, pp=8, micro_batch=1,
                              framework="torchtitan")):
        assert not [c for c in quiet.caveats if c.startswith("element-wise ops run eager")]
