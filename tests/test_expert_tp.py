"""The routed experts' own tensor-parallel width (Megatron-Core's MoE parallel folding,
``--expert-tensor-parallel-size``; issue 21: NVIDIA's DeepSeek-V3 and Qwen3 recipes run
their expert group across the tensor-parallel ranks, EP 32 over dp 16 with TP 2)."""

import pytest

import traincost

# Qwen3-30B-A3B: 48 MoE layers of 128 experts, h 2048, expert width 768, gated (Qwen/
# Qwen3-30B-A3B config.json, data/models.csv)
KW = dict(model="qwen3-30b-a3b", global_batch=256, tokens=1e9, pp=1, cp=1, zero=1,
          micro_batch=1, recompute="none")


def _est(**kw):
    return traincost.estimate("h100-sxm5-80gb", 64, **{**KW, **kw})


def test_a_folded_expert_group_may_outgrow_the_data_parallel_ranks():
    # 64 GPUs at tp 2: dp 32. ep 64 needs the experts unsplit (expert_tp 1), folding the
    # group over both tensor-parallel ranks: 32 x 2 / 1 = 64
    with pytest.raises(ValueError, match=r"--ep 64 must divide the data-parallel size"):
        _est(tp=2, ep=64)
    assert _est(tp=2, ep=64, expert_tp=1).parallel.ep == 64
    with pytest.raises(ValueError, match=r"--expert-tp 3 must divide tp 2"):
        _est(tp=2, ep=32, expert_tp=3)
    with pytest.raises(ValueError, match=r"--ep 128 must divide devices/\(tp\*pp\*cp\) times "
                                         r"tp/expert-tp \(2/1\)"):
        _est(tp=2, ep=128, expert_tp=1)


def test_expert_tp_equal_to_tp_is_the_default():
    a, b = _est(tp=2, ep=32), _est(tp=2, ep=32, expert_tp=2)
    assert a.step_time_s == b.step_time_s
    assert a.to_dict()["memory_gib_per_device"] == b.to_dict()["memory_gib_per_device"]


def test_unsplit_experts_hold_each_expert_whole():
    # routed-expert weights a device holds: P_exp / (ep e); P_exp = 48 x 128 x 3 x 2048 x 768
    # = 2.899e10. Unsplit (e = 1) at ep 32 against split over tp 2: P_exp (1/32 - 1/64) more,
    # 2 bytes each (bf16 weights; ZeRO 1 does not shard them)
    p_exp = 48 * 128 * 3 * 2048 * 768
    more = p_exp * (1 / 32 - 1 / 64) * 2 / 2**30
    split = _est(tp=2, ep=32).to_dict()["breakdown"]["memory_gib"]["weights"]
    whole = _est(tp=2, ep=32, expert_tp=1).to_dict()["breakdown"]["memory_gib"]["weights"]
    assert whole - split == pytest.approx(more, rel=1e-9)


def test_unsplit_experts_leave_the_mlp_side_tensor_parallel_collectives_out():
    # every Qwen3 layer is MoE; a layer's TP collectives are half attention, half MLP, and
    # unsplit experts gather nothing over tp (their tokens stay sequence-parallel shards)
    split = _est(tp=2, ep=32).to_dict()["breakdown"]["step_time_s"]["tp_comm"]
    whole = _est(tp=2, ep=32, expert_tp=1).to_dict()["breakdown"]["step_time_s"]["tp_comm"]
    assert split > 0 and whole == pytest.approx(split / 2, rel=1e-9)


def test_the_cli_takes_and_shows_it(capsys):
    from traincost.cli import main
    args = ["estimate", "--accelerator", "h100-sxm5-80gb", "--devices", "64", "--model",
            "qwen3-30b-a3b", "--global-batch", "256", "--tp", "2", "--pp", "1", "--cp", "1",
            "--ep", "64"]
    assert main(args + ["--expert-tp", "1"]) == 0
    assert "expert tensor parallelism 1 (tp 2)" in capsys.readouterr().out
    assert main(args) == 2                           # ep 64 over dp 32 without folding
    assert "--ep 64 must divide the data-parallel size" in capsys.readouterr().err
