"""Layout rules: written once, checked on scalars (with messages) and arrays."""

import numpy as np
import pytest

from traincost import layout

ARCH = {"heads": 96, "kv_heads": 96, "layers": 80, "seq_len": 2048, "experts": 0,
        "devices": 1536, "global_batch": 2304, "balanced_pipeline": False}


def lay(**kw):
    base = {"tp": 8, "pp": 8, "cp": 1, "ep": 1, "vpp": 1, "zero": 0, "micro_batch": 1,
            "recompute": 2}
    return {**ARCH, **base, **kw}


def test_sc21_layout_is_valid():
    layout.check(lay())


def test_uneven_pipeline_stages_are_allowed():
    # BLOOM-176B ran 70 layers on 12 stages (BigScience training README); Megatron-DeepSpeed
    # splits unevenly, and the model charges the fullest stage, ceil(L/p) layers
    layout.check({**lay(pp=12, devices=1536 * 12 // 8 // 8), "layers": 70, "global_batch": 2304})


def test_a_balanced_split_takes_two_more_stages_than_layers():
    # BLOOM-176B reshaped to PP 72 over its 70 blocks (BigScience reshaping-log.md, July
    # 2022): --pp-partition-method 'type:transformer|embedding' counts the embedding and the
    # tied output as a layer each, 70 + 2 = 72 stages of one unit; a plain split cannot
    bloom = {"layers": 70, "heads": 112, "kv_heads": 112, "devices": 288, "global_batch": 2048}
    layout.check(lay(**bloom, tp=1, pp=72, balanced_pipeline=True))
    with pytest.raises(ValueError, match="--pp 72 must not exceed the number of layers 70 "
                                         r"\(layers \+ 2 in a balanced split"):
        layout.check(lay(**bloom, tp=1, pp=72))
    with pytest.raises(ValueError, match="--pp 73"):
        layout.check(lay(**{**bloom, "devices": 292}, tp=1, pp=73, balanced_pipeline=True))


@pytest.mark.parametrize("kw,flag", [
    (dict(tp=7), "--tp 7"), (dict(devices=1000, pp=16), "--devices 1000"),
    (dict(pp=96, devices=768), "--pp 96"), (dict(cp=3), "--cp 3"), (dict(vpp=11), "--vpp 11"),
    (dict(ep=2), "--ep 2"), (dict(global_batch=100), "--global-batch 100")])
def test_broken_rules_name_the_flag(kw, flag):
    with pytest.raises(ValueError, match=flag):
        layout.check(lay(**kw))


def test_an_interleaved_pipeline_needs_pp_micro_batches_a_replica():
    # Megatron-Core's interleaved schedule runs micro-batches in groups of
    # microbatch_group_size_per_vp_stage, which must lie in [PP, M] (schedules.py; pp by
    # default), and Megatron-LM's older one needed M divisible by pp: one micro-batch a
    # replica cannot be interleaved. SC21's layout, dp 1536/64 = 24, micro-batch 1:
    # 24 x 8 = 192 sequences give 8 micro-batches a replica, 168 give 7, fewer than pp
    layout.check(lay(vpp=2, global_batch=192))
    with pytest.raises(ValueError, match="--vpp 2 interleaves the pipeline, which needs at "
                                         "least --pp 8 micro-batches a replica"):
        layout.check(lay(vpp=2, global_batch=168))
    layout.check(lay(vpp=1, global_batch=24))          # plain 1F1B: one micro-batch is fine


def test_array_mask_matches_scalar_checks():
    cands = layout.candidates({}, heads=96, layers=80, experts=0, devices=1536, domain=8)
    mask = layout.valid({**ARCH, **cands})
    for i in np.random.default_rng(0).choice(len(mask), 200, replace=False):
        row = {**ARCH, **{k: int(v[i]) for k, v in cands.items()}}
        try:
            layout.check(row)
            ok = True
        except ValueError:
            ok = False
        assert ok == bool(mask[i])


def test_kept_valid_chunks_are_those_of_their_own_space_chunk_and_architecture():
    """valid_chunk keeps its last chunks: each call, repeated or after another space, chunk
    or architecture, returns the valid rows of its own arguments (candidate_chunk filtered by
    valid, computed here afresh), read-only."""
    space = layout.candidate_space({}, heads=96, layers=80, experts=0, devices=1536, domain=8)
    size = layout.space_size(space)
    calls = [(space, 0, size, ARCH), (space, 0, size, {**ARCH, "devices": 768}),
             (space, 0, size, {**ARCH, "global_batch": 1536}),
             ({**space, "tp": space["tp"][::-1]}, 0, size, ARCH),     # same size, other order
             ({**space, "tp": [1, 2]}, 0, layout.space_size({**space, "tp": [1, 2]}), ARCH),
             (space, 5, 900, ARCH), (space, 0, size, ARCH)]           # the first again
    for sp, start, stop, arch in calls:
        pos, lay = layout.valid_chunk(sp, start, stop, arch)
        every = layout.candidate_chunk(sp, start, stop)
        want = np.flatnonzero(layout.valid({**arch, **every}))
        assert len(want) and np.array_equal(pos, want)
        assert list(lay) == list(every)
        for k, v in lay.items():
            assert np.array_equal(v, every[k][want]) and not v.flags.writeable
    kept = layout._VALID_CHUNKS.values()                     # and what is kept is bounded
    assert 0 < len(kept) <= layout._VALID_KEPT_CHUNKS
    assert sum(len(pos) for pos, _ in kept) <= layout._VALID_KEPT_LAYOUTS


def test_candidates_respect_fixed_knobs_and_bounds():
    c = layout.candidates({"tp": 4, "recompute": 2}, heads=32, layers=32, experts=8,
                          devices=64, domain=8)
    assert set(c["tp"]) == {4} and set(c["recompute"]) == {2}
    assert set(c["ep"]) == {1, 2, 4, 8}
    free = layout.candidates({}, heads=32, layers=32, experts=0, devices=64, domain=8)
    assert set(free["tp"]) == {1, 2, 4, 8}          # within the NVLink domain
    assert set(free["pp"]) <= set(layout.divisors(32))


def test_search_tries_a_chunk_per_layer_on_short_stages():
    # SC21's 529.6B model: 105 layers on 35 stages leaves 3 per stage, interleavable as
    # v = 3 (Megatron-LM needs the layers per stage divisible by v). Besides 1, 2, 4 the
    # search tries the divisors of the layer count up to max_vpp = 8: 3, 5, 7 for 105
    # (not 6 or 8, which divide no stage of 105 layers evenly), 8 for Llama 3's 128 units
    space = layout.candidate_space({}, heads=160, layers=105, experts=0, devices=2520, domain=8)
    assert space["vpp"] == [1, 2, 3, 4, 5, 7]
    assert layout.candidate_space({}, heads=32, layers=32, experts=0, devices=64,
                                  domain=8)["vpp"] == [1, 2, 4, 8]
    assert layout.candidate_space({"vpp": 1}, heads=160, layers=105, experts=0, devices=2520,
                                  domain=8)["vpp"] == [1]


def test_divisors_match_the_definition():
    """The O(sqrt n) walk finds exactly the d in 1..n with n % d == 0, in order; a
    13-digit count, which the old walk over every integer took hours for, has its 41
    divisors (2**0 .. 2**40) after a million steps."""
    for n in range(1, 600):
        assert layout.divisors(n) == [d for d in range(1, n + 1) if n % d == 0], n
    assert len(layout.divisors(2**40)) == 41
